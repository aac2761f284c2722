"""`denevi2020-variance`: when does a learned bias help? (Denevi et al. 2020, Section 5.)

The paper's bounds say that learning a bias pays when the tasks' variance `Var = E||w_t - m||^2`
is small against the squared norm of their mean `||m||^2`, and that a zero bias gives back
independent task learning (ITL), so there is no large negative transfer when it is not. Here the
synthetic environment's spread is swept over a log grid of `Var / ||m||^2` (from `1/64` to
`256`; the paper's point `w_t = 4 * 1 + N(0, I)` is `1/16`) with the second moment
`E||w_t||^2 = ||m||^2 + Var` held at the paper's `17 d`, so the labels keep their scale::

    task_mean^2 = 17 / (1 + r),   task_spread^2 = 17 r / (1 + r),   r = Var / ||m||^2

(per coordinate; at `r = 1/16` exactly the paper's 4 and 1, so those rows equal
`denevi2020-synthetic`'s). The grid is one sweep axis: every method is one compiled cell over
(variance, seed), seed `s` drawing from `jax.random.key(s)` as in `denevi2020-synthetic`.

Methods: those of `denevi2020-synthetic` (the Oracle's bias is each grid point's true mean) and
`Best-bias`, the within-task learner (ONS bettor) with its bias fixed to the best bias in
hindsight for the training tasks seen: the mean over the training tasks of each task's
least-absolute-error solution on its online points (:func:`ojax.meta.best_bias_in_hindsight`,
iteratively reweighted least squares). This is the spec's convention: it minimises the hindsight
variance `(1/T) sum_t ||w_hat_t - h||^2` over `h`, the quantity the paper's bounds pay for
(the minimiser of the learner's own total loss over `h` has no closed form). It is not
optimal for that loss: at full size it ties with the Oracle (online errors within 0.002 of the
Oracle's, held-out within 0.005). Names carry the suffix `@variance=r` with
`r = Var / ||m||^2`.

Besides the rows of every (method, variance, metric), the figure shows each meta-learner's gain
over ITL (paired per seed: ITL's final multi-task test error minus the method's) against `r`
on a log axis, median and 10-90% quantile band over seeds, and the same for the Oracle (the true
mean) beside `Best-bias`. The tuned `_SS` baselines (dashed) also tune their within-task step
in hindsight, which ITL (parameter-free) does not: part of their gain stays at high variance and
is not the bias's.
"""

from __future__ import annotations

import functools
import time
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ojax import meta
from ojax.envs import multitask as mt_env
from ojax.experiments import denevi2020 as den
from ojax.experiments.denevi2020_methods import checkpoints as task_checkpoints
from ojax.results import ExperimentResult
from ojax.sweep import check_output_memory, sweep_experiment
from ojax.sweep.experiment import ExperimentConfig, ExperimentSpec
from ojax.validation import check_choice, check_positive

QUICK_SIZE = den.QUICK_SYNTHETIC
RATIOS = 4.0 ** np.arange(-3.0, 5.0)  # Var / ||m||^2: 1/64 .. 256 (the paper's 1/16 included)
QUICK_RATIOS = RATIOS[[0, 1, 3, 5, 7]]
SECOND_MOMENT = 17.0  # E||w_t||^2 / d of the paper's environment (4^2 + 1)
BEST_BIAS = den.BEST_BIAS
METHODS = [*den.PF_METHODS, BEST_BIAS, *den.SS_METHODS]
META_LEARNERS = ["Aggressive", "Lazy", "Aggressive_KT", "Lazy_KT", *den.SS_METHODS]


def mean_and_spread(
    ratios: Any, second_moment: float = SECOND_MOMENT
) -> tuple[np.ndarray, np.ndarray]:
    """`(task_mean, task_spread)` (float64) at each `r = Var / ||m||^2`, the second moment
    per coordinate `task_mean^2 + task_spread^2` held at `second_moment`."""
    r = np.asarray(ratios, np.float64)
    return np.sqrt(second_moment / (1.0 + r)), np.sqrt(second_moment * r / (1.0 + r))


def environment_grid(ratios: Any, dtype, second_moment: float = SECOND_MOMENT):
    """The environment's params at each ratio of `ratios`, stacked `(V,)`, in `dtype`
    (see :func:`mean_and_spread`)."""
    mean, spread = mean_and_spread(ratios, second_moment)
    return mt_env.LowVarianceParams(jnp.asarray(mean, dtype), jnp.asarray(spread, dtype))


def label(method: str, ratio: float) -> str:
    """The method's name in the results: `METHOD@variance=r`."""
    return f"{method}@variance={ratio:g}"


def fixed_bias(method: str, env: mt_env.LowVarianceParams, data: den.SeedData, dim: int, dtype):
    """The bias of a fixed-bias method: 0 (ITL), the true mean (Oracle), or the best bias in
    hindsight of the training tasks (`Best-bias`) (traceable)."""
    if method == "ITL":
        return jnp.zeros(dim, dtype)
    if method == "Oracle":
        return jnp.full((dim,), env.task_mean, dtype)
    return meta.best_bias_in_hindsight(data.train).astype(dtype)


@functools.lru_cache(maxsize=32)
def _cell(method: str, size: den.SyntheticSize, dtype, checkpoints: tuple[int, ...], grid: int):
    """`(env params, _, key) -> Outputs` (or `Tuned`) of one method (compiled once)."""
    points = np.asarray(checkpoints, np.int32)
    learners = den.method_learners("ITL" if method == BEST_BIAS else method, size.dim)
    steps = meta.MetaParams.step_grid(grid, dtype=dtype) if method in den.SS_METHODS else None

    def cell(env, _, key):
        data = den.synthetic_data(key, size, dtype, env)
        if steps is not None:
            return den.tune_method(learners, steps, data, points)
        if method in ("ITL", "Oracle", BEST_BIAS):
            bias = fixed_bias(method, env, data, size.dim, dtype)
            params = meta.FixedBiasParams.paper(bias, dtype=dtype)
        else:
            params = den.method_params(method, size.dim, dtype)
        return den.run_method(learners, params, data, points)

    return cell


class Sweep(NamedTuple):
    """A variance sweep's curves and compile time."""

    curves: dict[str, dict[str, dict[str, np.ndarray]]]  # method -> label -> metric -> (S, L)
    compile_seconds: float


def sweep_variance(
    config: ExperimentConfig,
    methods: list[str],
    ratios: Any,
    size: den.SyntheticSize,
    num_seeds: int,
    *,
    grid_size: int = 20,
    progress=lambda it: it,
) -> Sweep:
    """Runs `methods` at every ratio of `ratios` and seed `0 .. num_seeds - 1` (one
    sweep per method over the (variance, seed) grid).

    Raises:
      InputError: an unknown method or a ratio that is not finite and > 0.
    """
    for method in methods:
        check_choice("method", method, METHODS)
    check_positive("ratios", np.asarray(ratios, np.float64))
    dtype = jnp.float64 if config.x64 else jnp.float32
    ratios = [float(r) for r in ratios]
    checkpoints = tuple(int(c) for c in task_checkpoints(size.num_tasks, size.num_checkpoints))
    per_run = size.num_tasks * size.num_train * (2 * np.dtype(dtype).itemsize + 1)
    check_output_memory(num_seeds * len(ratios), per_run * len(methods))
    env = environment_grid(ratios, dtype)

    def one(method: str) -> tuple[dict[str, dict[str, np.ndarray]], float]:
        cell = _cell(method, size, dtype, checkpoints, grid_size)
        result = sweep_experiment(
            config,
            cell,
            env,
            seeds=np.arange(num_seeds),
            name=f"variance-{method}",
            settings={"ratios": ratios, "size": size._asdict(), "grid_size": grid_size},
            compiler_options=den.COMPILER_OPTIONS,
        )
        out = jax.tree.map(lambda a: np.asarray(a).swapaxes(0, 1), result.outputs)  # (V, S, ...)
        if method in den.SS_METHODS:
            out = out.hindsight
        found = {
            label(method, r): den.curves_of(jax.tree.map(lambda a, v=v: a[v], out))
            for v, r in enumerate(ratios)
        }
        return found, result.stats.compile_seconds

    curves: dict[str, dict[str, dict[str, np.ndarray]]] = {}
    compile_s = 0.0
    longest_first = sorted(methods, key=lambda m: m != BEST_BIAS)  # the others run beside it
    for method, (found, seconds) in zip(
        longest_first, progress(config.sweeps(one, longest_first)), strict=True
    ):
        curves[method] = found
        compile_s += seconds
    curves = {method: curves[method] for method in methods}
    return Sweep(curves, compile_s)


def final_gains(curves, ratios, metric: str = "test_error") -> dict[str, np.ndarray]:
    """Each method's gain over ITL, paired per seed: ITL's final `metric` minus the method's,
    `(S, V)` per method."""

    def finals(method):
        return np.stack([curves[method][label(method, r)][metric][:, -1] for r in ratios], axis=1)

    itl = finals("ITL")
    return {m: itl - finals(m) for m in curves if m != "ITL"}


def figures(run) -> dict[str, Any]:
    """The plot function of `denevi2020-variance` (:mod:`ojax.app.files`):
    `synthetic_variance_gain`, each method's gain over ITL (final test error, median and
    10-90% over seeds) against `Var / ||m||^2` (`config.json`'s `variance_ratios`); on
    one's own tasks (one variance, no grid), the figures of the real-data protocol."""
    if "variance_ratios" not in run.config:
        return den.figures(run)
    ratios = np.asarray(run.config["variance_ratios"], np.float64)
    curves: dict[str, dict[str, dict[str, np.ndarray]]] = {}
    for method in METHODS:
        keys = {label(method, r): f"synthetic/{label(method, r)}/test_error" for r in ratios}
        if all(k in run.curves for k in keys.values()):
            curves[method] = {n: {"test_error": run.curves[k].values} for n, k in keys.items()}
    if "ITL" not in curves:
        return {}
    return {"synthetic_variance_gain": _gain_figure(final_gains(curves, ratios), ratios)}


def _gain_figure(gains: dict[str, np.ndarray], ratios) -> Any:
    from ojax.plotting import display_name, legend, new_figure, style

    fig, axes = new_figure(1, 2, width=9.0, height=3.6, sharey=True)
    groups = (
        (axes[0], [m for m in META_LEARNERS if m in gains], "meta-learners"),
        (axes[1], [m for m in ("Oracle", BEST_BIAS) if m in gains], "fixed biases"),
    )
    index = 0
    for ax, methods, title in groups:
        for method in methods:
            lo, mid, hi = np.quantile(gains[method], [0.1, 0.5, 0.9], axis=0)
            line_style = style(index, every=None)
            (line,) = ax.plot(ratios, mid, label=display_name(method), **line_style)
            ax.fill_between(ratios, lo, hi, color=line.get_color(), alpha=0.15, lw=0)
            index += 1
        ax.axhline(0.0, color="black", lw=0.8)
        ax.axvline(1.0, color="grey", lw=0.8, ls=":")
        ax.set(xscale="log", xlabel="Var / ||m||^2 (second moment fixed)")
        ax.set_title(title, fontsize="medium")  # the panel's group of methods
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("gain over ITL (final test error)")
    legend(fig)
    return fig


def run_variance(config: den.DeneviConfig) -> ExperimentResult:
    """`denevi2020-variance`: every method over the grid of `Var / ||m||^2` (with
    `--tasks FILE`: one's own tasks have one variance, no grid: the real-data protocol with
    ITL, Best-bias and the meta-learners, :func:`ojax.experiments.denevi2020.run_own_tasks`, and
    each method's gain over ITL)."""
    if config.tasks is not None:
        return _own_tasks(config)
    start = time.perf_counter()
    size = QUICK_SIZE if config.quick else den.SyntheticSize()
    ratios = QUICK_RATIOS if config.quick else RATIOS
    got = sweep_variance(
        config,
        METHODS,
        ratios,
        size,
        config.seeds,
        progress=lambda it: config.progress(it, "denevi2020-variance methods"),
    )
    result = ExperimentResult()
    positions = {
        "cumulative_error": den.curve_points(size.num_tasks * size.num_train, config.seeds),
        "meta_test_error": task_checkpoints(size.num_tasks, size.num_checkpoints),
    }
    for by_ratio in got.curves.values():
        for name, metrics in by_ratio.items():
            for metric in den.METRICS:
                steps = positions.get(metric)
                result.add("synthetic", name, metric, metrics[metric], steps=steps)
    gains = final_gains(got.curves, ratios)
    mean, spread = mean_and_spread(ratios)
    result.extra_config.update(
        {
            "synthetic_size": size._asdict(),
            "seeds_run": config.seeds,
            "variance_axis": "r = Var / ||m||^2 (Var = E||w_t - m||^2), with E||w_t||^2 / d = "
            f"{SECOND_MOMENT:g} fixed; method names carry @variance=r",
            "variance_ratios": [float(r) for r in ratios],
            "task_mean": mean.tolist(),
            "task_spread": spread.tolist(),
            "best_bias": "mean over the training tasks of each task's least-absolute-error "
            "solution on its online points (IRLS, ojax.meta.best_bias_in_hindsight)",
            "gain_over_itl_test_error": {
                m: {"median": np.median(g, axis=0).tolist(), "mean": g.mean(axis=0).tolist()}
                for m, g in gains.items()
            },
            "synthetic_meta_test_checkpoints": task_checkpoints(
                size.num_tasks, size.num_checkpoints
            ).tolist(),
            "synthetic_run_seconds": time.perf_counter() - start - got.compile_seconds,
        }
    )
    result.compile_seconds = got.compile_seconds
    return result


def _own_tasks(config: den.DeneviConfig) -> ExperimentResult:
    result = den.run_own_tasks(config)
    finals = {
        name.split("/")[1]: curve[:, -1]
        for name, curve in result.curves.items()
        if name.endswith("/test_error")
    }
    result.extra_config["gain_over_itl_test_error"] = {
        m: {
            "median": float(np.median(finals["ITL"] - v)),
            "mean": float(np.mean(finals["ITL"] - v)),
        }
        for m, v in finals.items()
        if m != "ITL"
    }
    return result


SPEC = ExperimentSpec(
    name="denevi2020-variance",
    summary="Denevi et al. 2020, Section 5: the gain of a learned bias over independent learning "
    "against the tasks' variance (one sweep over a log grid)",
    run=run_variance,
    plot=figures,
    config=den.DeneviConfig,
    default_seeds=30,
    quick_seeds=3,
    figures=("synthetic_variance_gain.png",),
    page="reproductions/denevi2020.md",
)


__all__ = [
    "META_LEARNERS",
    "METHODS",
    "QUICK_RATIOS",
    "RATIOS",
    "SECOND_MOMENT",
    "SPEC",
    "Sweep",
    "environment_grid",
    "figures",
    "final_gains",
    "fixed_bias",
    "label",
    "mean_and_spread",
    "run_variance",
    "sweep_variance",
]
