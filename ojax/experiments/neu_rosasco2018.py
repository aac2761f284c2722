"""Neu & Rosasco (2018): iterate averaging as regularization for SGD (`ojax run neu-rosasco2018`).

Three experiments:

1. `identity`: the expectation identity `E[v_n] = (1 - rho^{n+1}) E[w_tilde_n] + rho^{n+1}
   E[w_n]` and the ridge limit on the spec's ill-conditioned `d = 5` problem (eigenvalues
   `1, .5, .2, .05, .01` under a random rotation, `eta = 0.05`, several lambdas): exact means
   by the deterministic recursions (in float64), and Monte Carlo over many runs in one vmap.
   Rows (metric `identity_error`, relative max-norm errors, worst over lambdas):
   `geometric` the identity with exact means; `ridge-sgd-last` the identity with Monte
   Carlo means of the last regularized iterate `v_n` (sampling noise; the largest z-score is
   in `config.json`); `ridge` the distance of the geometric average of the exact means to
   the ridge solution after `n_limit` steps.
2. `ill-conditioned` (small `n`) and `well-conditioned` (large `n`): excess risk
   `||Sigma^{1/2} (w - w*)||^2` of the geometric averages of ONE SGD pass along a lambda path
   (`geometric`), of regularized SGD, one run per lambda batched in one scan with the linked
   step `gamma = eta / (1 + eta lambda)`: its Polyak-Ruppert average, the comparator the paper
   means (Dieuleveut et al.'s averaged regularized SGD, `ridge-sgd`), and its last iterate
   (`ridge-sgd-last`), of the geometric averages of the known-covariance iteration the paper
   analyses in its Appendix C (`w_t = w_{t-1} - eta (Sigma w_{t-1} - y_t x_t)`,
   `geometric-known-cov`), of tail averages along a path of tail starts (`tail`), of the
   Polyak-Ruppert average (`polyak`) and of closed-form ridge (`ridge`). Metric
   `excess_risk`: at the lambda / tau chosen on held-out data, one value per seed. The curves
   against lambda (and tau) are in `curves.npz` under `DATASET/METHOD/excess_risk_vs_lambda`
   (`..._vs_tau`) and in the figures.
   The regime (see :func:`_setting`): step `eta = 1/R^2` (`R^2 = tr Sigma + 2 lambda_max`),
   one pass, `w_0 = 0`. One pass of SGD already regularizes like `lambda ~ 1/(eta n)`, so
   explicit regularization can only help when the ridge-optimal `lambda ~ sigma^2 / (n b^2)`
   is larger, i.e. when `kappa = sigma^2 / (b^2 R^2) > 1`: the ill-conditioned problem is run
   at `kappa = 4` (noise-dominated, least squares overfits), the well-conditioned one at
   `kappa = 1/17`. `config.json` (`ill-conditioned/noise_sweep`) and the figure
   `ill-conditioned_noise_sweep.png` repeat the ill-conditioned problem at `kappa` in
   `.25, 1, 4, 16` (the same compiled function).
3. The speed of the path (`config.json`: `speed`): 100 lambdas from one SGD pass against 100
   regularized runs batched in one scan (the full comparison is `scripts/bench_regpath.py`).

The heavy work is one cell `(params, problem, key)` per seed, run by the sweep engine (vmapped
over seeds in chunks, sharded over devices, resumable).

References:
  Neu, G. and Rosasco, L. (2018). Iterate averaging as regularization for stochastic gradient
  descent. COLT.
"""

from __future__ import annotations

import contextlib
import functools
import time
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ojax import averaging
from ojax.envs import regression
from ojax.plotting import curves_figure
from ojax.results import ExperimentResult, split_key
from ojax.sweep import sweep_experiment
from ojax.sweep.experiment import ExperimentConfig, ExperimentSpec

METHODS = ("geometric", "ridge-sgd", "tail", "polyak", "ridge", "ridge-sgd-last",
           "geometric-known-cov")  # fmt: skip
LAMBDA_PATHS = ("geometric", "ridge-sgd", "ridge", "ridge-sgd-last", "geometric-known-cov")


class PathParams(NamedTuple):
    """The hyperparameters of Path: a pytree of arrays passed at call time.

    Attributes:
      learning_rate: sGD step eta, shape ()
      regularization: lambda path, shape (L,)
      tail_start: tail starts, shape (T,), int32
    """

    learning_rate: jax.Array  # SGD step eta, shape ()
    regularization: jax.Array  # lambda path, shape (L,)
    tail_start: jax.Array  # tail starts, shape (T,), int32


class SeedOutput(NamedTuple):
    """SeedOutput: a record of the fields below.

    Attributes:
      risks: method -> (L,) / (T,) / () excess risks along the path
      chosen: method -> () excess risk at the held-out choice
    """

    risks: dict  # method -> (L,) / (T,) / () excess risks along the path
    chosen: dict  # method -> () excess risk at the held-out choice


# kappa = sigma^2 / (b^2 R^2): the ridge-optimal lambda of a problem with per-coordinate target
# scale b (``||w*||^2 = d b^2``) and noise sigma is about sigma^2 / (n b^2); one pass of SGD with
# step eta = 1 / R^2 already regularizes like lambda ~ 1 / (eta n) = R^2 / n. Explicit
# regularization (geometric averaging) can only help when the first exceeds the second: kappa > 1.
ILL_CONDITIONED_KAPPA = 4.0
NOISE_SWEEP_KAPPAS = (0.25, 1.0, 4.0, 16.0)


def _setting(name: str, quick: bool) -> dict:
    """The two excess-risk problems (d = 20, w* a random direction of norm sqrt(d), so b = 1).

    The step is eta = 1 / R^2 with R^2 = tr(Sigma) + 2 lambda_max, the constant of
    E[||x||^2 x x^T] <= R^2 Sigma for Gaussian inputs (half the mean-square stability limit of
    one-pass least-squares SGD). `ill-conditioned`: eigenvalues k^-2 (condition number 400),
    small n, and noise sigma = sqrt(kappa) R with kappa = 4, the noise-dominated regime where the
    ridge-optimal lambda (~ sigma^2 / n) is about 4x the implicit regularization R^2 / n of the
    pass. `well-conditioned`: eigenvalues in [.5, 1], large n, sigma = 1 (kappa = 1/17).
    """
    d = 20
    if name == "ill-conditioned":
        eig = 1.0 / np.arange(1, d + 1) ** 2  # condition number 400
        n = 60 if quick else 200
    else:
        eig = np.linspace(1.0, 0.5, d)
        n = 600 if quick else 5000
    r2 = float(eig.sum() + 2 * eig.max())
    eta = 1.0 / r2
    if name == "ill-conditioned":
        noise_std = float(np.sqrt(ILL_CONDITIONED_KAPPA * r2))
    else:
        noise_std = 1.0
    lams = np.logspace(-5, 2, 8 if quick else 36)
    taus = np.unique(np.round(np.linspace(0, 0.95, 6 if quick else 20) * n).astype(int))
    return dict(
        eig=eig,
        n=n,
        eta=eta,
        r2=r2,
        noise_std=noise_std,
        kappa=noise_std**2 / r2,
        implicit_regularization=r2 / n,
        lams=lams,
        taus=taus,
        n_val=n,
    )


def _seed_run(params: PathParams, problem: regression.RegressionProblem, key, n: int, n_val: int):
    """All methods on one seed: one SGD pass + paths, batched regularized runs, closed form."""
    k_train, k_val = jax.random.split(key)
    xs, ys = regression.sample(k_train, problem, n)
    x_val, y_val = regression.sample(k_val, problem, n_val)
    eta = params.learning_rate
    w0 = jnp.zeros(xs.shape[1], xs.dtype)
    log_discount = averaging.log_discount_from_regularization(eta, params.regularization)
    ws = averaging.sgd_iterates(xs, ys, eta, w0)
    geo, tail = averaging.path_of_iterates(
        ws, log_discount=log_discount, tail_start=params.tail_start
    )
    assert geo is not None and tail is not None  # both asked for
    polyak = jnp.mean(ws, axis=0)
    gamma = averaging.linked_step_size(eta, params.regularization)
    lams = params.regularization
    ridge_sgd = averaging.ridge_sgd_runs(xs, ys, gamma, lams, w0, average=True)
    ridge_sgd_last = averaging.ridge_sgd_runs(xs, ys, gamma, lams, w0)
    ridge = averaging.ridge_regression(xs, ys, params.regularization, w0)
    known = averaging.known_covariance_iterates(xs, ys, regression.covariance(problem), eta, w0)
    paths = {
        "geometric": geo,
        "ridge-sgd": ridge_sgd,
        "tail": tail,
        "ridge": ridge,
        "ridge-sgd-last": ridge_sgd_last,
        "geometric-known-cov": averaging.geometric_path(known, log_discount),
    }
    risks, chosen = {}, {}
    for name, path in paths.items():
        risks[name] = regression.excess_risk(path, problem)
        _, index, _ = averaging.select_on_holdout(path, x_val, y_val)
        chosen[name] = risks[name][index]
    risks["polyak"] = regression.excess_risk(polyak, problem)
    chosen["polyak"] = risks["polyak"]
    return SeedOutput(risks, chosen)


def _excess_risk_experiment(config, result, name, dtype, timings):
    s = _setting(name, config.quick)
    problem = regression.make_problem(
        jax.random.key(100),
        s["eig"],
        noise_std=s["noise_std"],
        w_star_norm=np.sqrt(len(s["eig"])),
        dtype=dtype,
    )
    params = PathParams(
        jnp.asarray(s["eta"], dtype),
        jnp.asarray(s["lams"], dtype),
        jnp.asarray(s["taus"], jnp.int32),
    )
    out = _seeds(config, name, params, problem, s, timings)
    for method in METHODS:
        result.add(name, method, "excess_risk", np.asarray(out.chosen[method]))
    for method in LAMBDA_PATHS:
        result.curves[f"{name}/{method}/excess_risk_vs_lambda"] = np.asarray(out.risks[method])
    result.curves[f"{name}/tail/excess_risk_vs_tau"] = np.asarray(out.risks["tail"])
    result.curves[f"{name}/polyak/excess_risk_vs_lambda"] = np.repeat(
        np.asarray(out.risks["polyak"])[:, None], len(s["lams"]), axis=1
    )
    for key in list(result.curves):
        if key.startswith(f"{name}/") and key.endswith("_vs_lambda"):
            result.steps[key] = np.asarray(s["lams"])
    result.steps[f"{name}/tail/excess_risk_vs_tau"] = np.asarray(s["taus"])
    info = {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in s.items()}
    info["summary"] = _summary(out, s["lams"], s["taus"])
    if name == "ill-conditioned":
        info["noise_sweep"] = _noise_sweep(config, result, params, problem, s, timings)
    return info


def _summary(out: SeedOutput, lams: np.ndarray, taus: np.ndarray) -> dict:
    """Minimizers of the mean curves, and closed-form ridge at lambda* vs at the smallest lambda."""
    means = {m: np.asarray(out.risks[m]).mean(axis=0) for m in LAMBDA_PATHS}
    info = {f"{m}_best_lambda_on_mean_curve": float(lams[np.argmin(v)]) for m, v in means.items()}
    info["tail_best_tau_on_mean_curve"] = int(
        taus[np.argmin(np.asarray(out.risks["tail"]).mean(0))]
    )
    info["ridge_risk_at_best_lambda"] = float(means["ridge"].min())
    info["ridge_risk_at_smallest_lambda"] = float(means["ridge"][0])
    info["polyak_risk"] = float(np.mean(out.risks["polyak"]))
    return info


@functools.cache
def _seed_cell(n: int, n_val: int):
    """The engine's cell: `(_, (params, problem), key) -> SeedOutput` of one seed."""

    def one(_, data, key):
        params, problem = data
        return _seed_run(params, problem, key, n, n_val)

    return one


def _seeds(config, label, params, problem, s, timings) -> SeedOutput:
    """`config.seeds` seeds of one setting through the sweep engine (compiled once per
    setting's shapes; the seeds' keys split from `key(2018)`)."""
    cell = sweep_experiment(
        config,
        _seed_cell(s["n"], s["n_val"]),
        key=jax.random.key(2018),
        data=(params, problem),
        name=label,
        num_steps=s["n"],
    )
    timings.append(cell.stats.compile_seconds)
    return cell.outputs


def _noise_sweep(config, result, params, problem, s, timings) -> list[dict]:
    """The same ill-conditioned problem at several kappa (noise levels); no recompilation."""
    kappas = NOISE_SWEEP_KAPPAS[1:3] if config.quick else NOISE_SWEEP_KAPPAS
    rows: list[dict] = []
    chosen: dict[str, list[np.ndarray]] = {m: [] for m in METHODS}
    for kappa in kappas:
        sigma = float(np.sqrt(kappa * s["r2"]))
        prob = problem._replace(noise_std=jnp.asarray(sigma, problem.noise_std.dtype))
        out = _seeds(config, f"ill-conditioned-kappa-{kappa:g}", params, prob, s, timings)
        row: dict[str, Any] = {"kappa": kappa, "noise_std": sigma}
        for m in METHODS:
            values = np.asarray(out.chosen[m])
            chosen[m].append(values)
            row[m] = [float(values.mean()), float(values.std())]
        row.update(_summary(out, s["lams"], s["taus"]))
        rows.append(row)
    for m, v in chosen.items():  # the figure's curves (no rows: those are in config.json)
        key = f"ill-conditioned/{m}/excess_risk_vs_kappa"
        result.curves[key] = np.stack(v, axis=1).astype(np.float64)
        result.steps[key] = np.asarray(kappas, np.float64)
    return rows


def _identity_experiment(config, result, runs):
    """Exact means (float64) and Monte Carlo (one vmap) for the identity and the ridge limit."""
    with jax.enable_x64(True):
        f64 = jnp.float64
        problem = regression.ill_conditioned_problem(jax.random.key(0), dtype=f64)
        cov, cross = regression.covariance(problem), regression.cross_moment(problem)
        eta, n = 0.05, (50 if config.quick else 200)
        n_limit = 40000
        lams = np.array([0.01, 0.1, 0.5, 2.0, 10.0])
        w0 = jnp.asarray([0.5, -0.5, 0.25, 0.0, 1.0], f64)
        log_discount = averaging.log_discount_from_regularization(eta, jnp.asarray(lams, f64))
        gamma = np.asarray(averaging.linked_step_size(eta, jnp.asarray(lams, f64)))
        rho = np.exp(np.asarray(log_discount))
        # the exact means of the first n steps are the first rows of the long run (one scan)
        long_means = averaging.expected_sgd_iterates(cov, cross, f64(eta), w0, n_limit)
        means = long_means[: n + 1]
        w_tilde = averaging.geometric_path(means, log_discount)
        lhs = jax.vmap(lambda g, lam: averaging.expected_ridge_sgd(cov, cross, g, lam, w0, n))(
            jnp.asarray(gamma), jnp.asarray(lams)
        )
        rhs = (1 - rho ** (n + 1))[:, None] * w_tilde + (rho ** (n + 1))[:, None] * means[-1][
            None, :
        ]
        exact_err = np.max(np.abs(rhs - lhs), axis=1) / np.max(np.abs(lhs), axis=1)

        ridge = averaging.ridge_solution(cov, cross, jnp.asarray(lams), w0)
        limit = averaging.geometric_path(long_means, log_discount)
        limit_err = np.max(np.abs(limit - ridge), axis=1) / np.max(np.abs(ridge), axis=1)

        def one(_, data, key):
            log_discount, gamma, lams, w0 = data
            xs, ys = regression.sample(key, problem, n)
            ws = averaging.sgd_iterates(xs, ys, f64(eta), w0)
            geo = averaging.geometric_average(ws, log_discount)
            return geo, ws[-1], averaging.ridge_sgd_runs(xs, ys, gamma, lams, w0)

        data = (log_discount, jnp.asarray(gamma), jnp.asarray(lams), w0)
        cell = sweep_experiment(
            config, one, key=jax.random.key(7), data=data, num_seeds=runs, name="identity"
        )
        geo, last, v = cell.outputs
        rhs_mc = (1 - rho ** (n + 1))[None, :, None] * geo + (rho ** (n + 1))[None, :, None] * (
            last[:, None, :]
        )
        diff = v - rhs_mc  # per run; its mean is 0 by the identity
        mean = diff.mean(axis=0)
        se = diff.std(axis=0, ddof=1) / np.sqrt(runs)
        z = np.abs(mean) / se
        mc_err = np.max(np.abs(mean), axis=1) / np.max(np.abs(np.asarray(lhs)), axis=1)
    result.add("identity", "geometric", "identity_error", np.array([exact_err.max()]))
    result.add("identity", "ridge-sgd-last", "identity_error", np.array([mc_err.max()]))
    result.add("identity", "ridge", "identity_error", np.array([limit_err.max()]))
    for method, values in (("geometric", exact_err), ("ridge-sgd-last", mc_err)):
        result.curves[f"identity/{method}/identity_error_vs_lambda"] = np.asarray(values)[None]
    result.curves["identity/ridge/identity_error_vs_lambda"] = np.asarray(limit_err)[None]
    for method in ("geometric", "ridge-sgd-last", "ridge"):
        result.steps[f"identity/{method}/identity_error_vs_lambda"] = lams
    return {
        "n": n,
        "n_limit": n_limit,
        "learning_rate": eta,
        "lambdas": lams.tolist(),
        "monte_carlo_runs": runs,
        "monte_carlo_max_z": float(z.max()),
        "exact_identity_error": exact_err.tolist(),
        "ridge_limit_error": limit_err.tolist(),
    }


def figures(run) -> dict[str, Any]:
    """The plot function of `neu-rosasco2018` (:mod:`ojax.app.files`): per problem
    the excess risk against lambda and against the tail start, the noise sweep and the
    identity's errors against lambda."""
    from ojax.plotting import display_name, legend, new_figure, style

    def curves(dataset: str, metric: str) -> dict[str, Any]:
        prefix = f"{dataset}/"
        return {
            split_key(k)[1]: c
            for k, c in run.curves.items()
            if k.startswith(prefix) and k.endswith(f"/{metric}")
        }

    out = {}
    for name in ("ill-conditioned", "well-conditioned"):
        lam = curves(name, "excess_risk_vs_lambda")
        if lam:
            x = next(iter(lam.values())).steps
            out[f"{name}_excess_risk_vs_lambda"] = curves_figure(
                x, {display_name(m): c.values for m, c in lam.items()}, xlabel="lambda",
                ylabel="excess risk", logx=True, logy=True,
            )  # fmt: skip
        tail = curves(name, "excess_risk_vs_tau")
        if tail:
            (c,) = tail.values()
            out[f"{name}_excess_risk_vs_tau"] = curves_figure(
                c.steps, {display_name("tail"): c.values}, xlabel="tail start tau",
                ylabel="excess risk", logy=True,
            )  # fmt: skip
    noise = curves("ill-conditioned", "excess_risk_vs_kappa")
    if noise:
        kappas = next(iter(noise.values())).steps
        out["ill-conditioned_noise_sweep"] = curves_figure(
            kappas,
            {display_name(m): c.values / kappas[None, :] for m, c in noise.items()},
            xlabel="kappa = sigma^2 / R^2  (ridge-optimal lambda / implicit 1/(eta n))",
            ylabel="excess risk / kappa at the held-out choice",
            logx=True,
            logy=True,
        )
    identity = curves("identity", "identity_error_vs_lambda")
    if identity:
        info = run.config.get("identity", {})
        labels = {
            "geometric": "exact means (float64)",
            "ridge-sgd-last": f"Monte Carlo, {info.get('monte_carlo_runs', '?')} runs",
            "ridge": f"ridge limit after {info.get('n_limit', '?')} steps",
        }
        fig, ax = new_figure()
        for i, (method, c) in enumerate(identity.items()):
            values = c.values[0] if method == "ridge-sgd-last" else np.maximum(c.values[0], 1e-17)
            ax.plot(c.steps, values, label=labels.get(method, method), **style(i, every=None))
        ax.set(xscale="log", yscale="log", xlabel="lambda", ylabel="relative error")
        ax.grid(alpha=0.3, which="both")
        legend(fig, ax)
        out["identity"] = fig
    return out


def _speed(config, dtype) -> dict:
    """100 lambdas: the path from one pass (product and stream) vs 100 runs batched in one scan."""
    n, d, num = (500, 20, 100) if config.quick else (20000, 50, 100)
    problem = regression.well_conditioned_problem(jax.random.key(3), d, dtype=dtype)
    xs, ys = regression.sample(jax.random.key(4), problem, n)
    lams = jnp.asarray(np.logspace(-4, 1, num), dtype)
    eta = 0.5 / d

    def timed(fn, repeats=3):
        jax.block_until_ready(fn())
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            jax.block_until_ready(fn())
            times.append(time.perf_counter() - start)
        return float(np.median(times))

    out = {"n": n, "d": d, "num_lambdas": num}
    for mode in ("product", "stream"):
        out[f"path_{mode}_seconds"] = timed(
            lambda m=mode: (
                averaging.regularization_path(xs, ys, eta, regularization=lams, mode=m).geometric
            )
        )
    gamma = averaging.linked_step_size(eta, lams)
    out["batched_runs_seconds"] = timed(lambda: averaging.ridge_sgd_runs(xs, ys, gamma, lams))
    out["one_run_seconds"] = timed(lambda: averaging.ridge_sgd_runs(xs, ys, gamma[0], lams[0]))
    out["serial_runs_seconds_estimate"] = 100 * out["one_run_seconds"]
    return out


def run_experiment(config: ExperimentConfig) -> ExperimentResult:
    """Runs the three experiments of the spec (see the module docstring)."""
    dtype = jnp.float64 if config.x64 else jnp.float32
    result = ExperimentResult()
    extra: dict = {}
    steps = ["identity", "ill-conditioned", "well-conditioned", "speed"]
    timings: list[float] = []
    ctx = jax.enable_x64(True) if config.x64 else contextlib.nullcontext()
    with ctx:
        for step in config.progress(steps, desc="neu-rosasco2018", total=len(steps)):
            if step == "identity":
                extra["identity"] = _identity_experiment(
                    config, result, 400 if config.quick else 4000
                )
            elif step == "speed":
                extra["speed"] = _speed(config, dtype)
            else:
                extra[step] = _excess_risk_experiment(config, result, step, dtype, timings)
    extra["dtype"] = jnp.dtype(dtype).name
    result.extra_config = extra
    result.compile_seconds = float(sum(timings))
    return result


__all__ = ["METHODS", "run_experiment"]


SPEC = ExperimentSpec(
    name="neu-rosasco2018",
    summary="Neu & Rosasco 2018: geometric / tail / Polyak-Ruppert averaging as regularization, "
    "the regularization path from one SGD pass",
    run=run_experiment,
    plot=figures,
    default_seeds=50,
    figures=(
        "{dataset}_excess_risk_vs_lambda.png",
        "{dataset}_excess_risk_vs_tau.png",
        "ill-conditioned_noise_sweep.png",
        "identity.png",
    ),
    page="reproductions/neu-rosasco2018.md",
)
