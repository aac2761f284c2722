"""Checks of the classic baselines' regret bounds (document `baselines`): AdaGrad (Duchi et al.
2011), Online Newton Step (Hazan et al. 2007), AdaHedge (de Rooij et al. 2014) and Squint
(Koolen & van Erven 2015). FTRL-Proximal has none: its paper (McMahan et al. 2013) states no
regret bound.

Each check runs the learner and, on the same instance, at least one falsifier (a method named
`falsifier:<what>`: no learning, a step 100 times too small, follow the leader, the uniform
mixture) whose measured / bound ratio exceeds 1 at the largest horizon while the learner's stays
at most 1. Regret is against the best fixed point (or expert) in hindsight at each horizon.
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np

from ojax import oco, programs
from ojax.core import Array, OCOLearner
from ojax.losses import linear_objective, quadratic_objective
from ojax.runner import run_oco
from ojax.theory.base import Check, CheckConfig, Outcome, as_measured, log_horizons
from ojax.theory.notes import config_dtype, config_rng, values_at, with_precision

DIM = 5  # AdaGrad's box [-1, 1]^5
ONS_DIM = 2
NUM_EXPERTS = 10


def _horizons(config: CheckConfig) -> np.ndarray:
    return log_horizons(10, 1000 if config.quick else 10_000, 6 if config.quick else 12)


def _plays(learner: OCOLearner, params: object, zs: np.ndarray, x0: Array):
    """The losses `(seeds, T)` and played points `(seeds, T, d)` on linear losses `zs`
    `(seeds, T, d)` from `x0` (one jitted, vmapped program)."""

    def one(z: Array, start: Array) -> tuple[Array, Array]:
        trace = run_oco(learner, params, start, z, linear_objective, store_iterates=True)[1]
        assert trace.prediction is not None  # store_iterates
        return trace.loss, trace.prediction

    return programs.jit(jax.vmap(one, in_axes=(0, None)))(zs, x0)


# ----------------------------------------------------------------------------- AdaGrad

D_INF = 2.0  # the L_inf diameter of [-1, 1]^d
ADAGRAD_STEP = D_INF / math.sqrt(2.0)


def _sparse_drift(config: CheckConfig, num_steps: int) -> np.ndarray:
    """Linear losses in [-1, 1]^5: coordinate i is nonzero with probability 2^-i, then a drift
    of sign s_i (one per seed) plus uniform noise, clipped."""
    rng = config_rng(config, 0)
    shape = (config.num_seeds, num_steps, DIM)
    active = rng.uniform(size=shape) < 0.5 ** np.arange(DIM)
    signs = np.where(rng.uniform(size=(config.num_seeds, 1, DIM)) < 0.5, -1.0, 1.0)
    return active * np.clip(0.4 * signs + rng.uniform(-1.0, 1.0, size=shape), -1.0, 1.0)


@with_precision
def _adagrad(config: CheckConfig) -> Outcome:
    """Theorem 5 (mirror-descent update, delta = 0) at eta = D_inf / sqrt(2) on the box."""
    steps, dtype = _horizons(config), config_dtype(config)
    zs = _sparse_drift(config, int(steps[-1])).astype(dtype)
    z64 = zs.astype(np.float64)
    best = -values_at(np.sum(np.abs(np.cumsum(z64, axis=1)), axis=-1), steps)  # min_u <u, S_t>
    column_norms = np.sqrt(np.cumsum(z64**2, axis=1))  # ||g_{1:t,i}||_2
    bound = math.sqrt(2.0) * D_INF * values_at(np.sum(column_norms, axis=-1), steps)
    methods = {}
    for name, step in (("AdaGrad", ADAGRAD_STEP), ("falsifier:step-0.01x", ADAGRAD_STEP / 100)):
        params = oco.AdaGradParams(*(jnp.asarray(v, dtype) for v in (step, 0.0, 1.0)))
        losses, _ = _plays(oco.adagrad("box"), params, zs, jnp.zeros(DIM, dtype))
        paid = values_at(np.cumsum(np.asarray(losses, np.float64), axis=1), steps)
        methods[f"{name}@sparse"] = as_measured(paid - best, bound)
    methods["falsifier:no-learning@sparse"] = as_measured(-best, bound)  # plays 0: pays 0
    return Outcome(steps, methods)


# ----------------------------------------------------------------------------- ONS

# 0.5 ||x - z||^2 on the unit ball with ||z|| <= 1: gradients ||x - z|| <= G = 2, diameter
# D = 2, 1-strongly convex hence alpha = 1 / G^2 exp-concave
ONS_G, ONS_D, ONS_ALPHA = 2.0, 2.0, 0.25


def _ons_stream(config: CheckConfig, num_steps: int) -> tuple[np.ndarray, np.ndarray]:
    """z_t = P_ball(0.9 u + 0.3 N(0, I)) around a direction u (one per seed); the start is
    x_1 = -0.9 u (the far side of the ball)."""
    rng = config_rng(config, 1)
    u = rng.normal(size=(config.num_seeds, 1, ONS_DIM))
    u = u / np.linalg.norm(u, axis=-1, keepdims=True)
    z = 0.9 * u + 0.3 * rng.normal(size=(config.num_seeds, num_steps, ONS_DIM))
    z = z / np.maximum(1.0, np.linalg.norm(z, axis=-1, keepdims=True))
    return z, -0.9 * u[:, 0]


def _quadratic_best(z: np.ndarray, steps: np.ndarray) -> np.ndarray:
    """min over the unit ball of sum_{s<=t} 0.5 ||x - z_s||^2: at x = P_ball(mean z)."""
    count = np.arange(1, z.shape[1] + 1)[None, :, None]
    mean = np.cumsum(z, axis=1) / count
    x = mean / np.maximum(1.0, np.linalg.norm(mean, axis=-1, keepdims=True))
    sums = np.cumsum(z, axis=1)
    squares = np.cumsum(np.sum(z**2, axis=-1), axis=1)
    total = 0.5 * (count[..., 0] * np.sum(x**2, -1) - 2 * np.sum(x * sums, -1) + squares)
    return values_at(total, steps)


@with_precision
def _ons(config: CheckConfig) -> Outcome:
    steps, dtype = _horizons(config), config_dtype(config)
    z, starts = _ons_stream(config, int(steps[-1]))
    zs = z.astype(dtype)
    z = zs.astype(np.float64)
    params = oco.OnlineNewtonParams.paper(ONS_ALPHA, ONS_G, ONS_D, 1.0, dtype=dtype)

    def one(zs1: Array, x0: Array) -> Array:
        return run_oco(oco.online_newton(), params, x0, zs1, quadratic_objective)[1].loss

    losses = programs.jit(jax.vmap(one))(zs, jnp.asarray(starts, dtype))
    best = _quadratic_best(z, steps)
    regret = values_at(np.cumsum(np.asarray(losses, np.float64), axis=1), steps) - best
    still = 0.5 * np.sum((starts[:, None, :] - z) ** 2, axis=-1)  # x_t = x_1 for every t
    bound = 5.0 * (1.0 / ONS_ALPHA + ONS_G * ONS_D) * ONS_DIM * np.log(steps)
    return Outcome(
        steps,
        {
            "ONS@noisy-target": as_measured(regret, bound),
            "falsifier:no-learning@noisy-target": as_measured(
                values_at(np.cumsum(still, axis=1), steps) - best, bound
            ),
        },
    )


# ----------------------------------------------------------------------------- experts


def _ftl_killer(num_steps: int) -> np.ndarray:
    """(1, T, K): experts 0 and 1 take turns, (1/2, 0), (0, 1), (1, 0), ... (follow the leader
    picks the wrong one every round), the others lose 1 every round."""
    first = np.where(np.arange(num_steps) % 2 == 1, 0.0, 1.0)
    first[0] = 0.5
    losses = np.ones((1, num_steps, NUM_EXPERTS))
    second = 1.0 - first
    second[0] = 0.0
    losses[0, :, 0], losses[0, :, 1] = first, second
    return losses


def _bernoulli(config: CheckConfig, num_steps: int, stream: int) -> np.ndarray:
    """(seeds, T, K) losses in {0, 1}, expert k a coin of mean in [0.3, 0.7] (one per seed)."""
    rng = config_rng(config, stream)
    means = rng.uniform(0.3, 0.7, size=(config.num_seeds, 1, NUM_EXPERTS))
    return (rng.uniform(size=(config.num_seeds, num_steps, NUM_EXPERTS)) < means).astype(float)


def _experts_runs(learner: OCOLearner, params: object, zs: np.ndarray, dtype) -> np.ndarray:
    """The played weights (seeds, T, K) of `learner` from the uniform prior."""
    x0 = jnp.full(NUM_EXPERTS, 1.0 / NUM_EXPERTS, dtype)
    _, weights = _plays(learner, params, zs.astype(dtype), x0)
    return np.asarray(weights, np.float64)


@functools.cache
def _expert_instances(config: CheckConfig) -> dict[str, np.ndarray]:
    """The experts' instances (AdaHedge's and Squint's checks share them and their seed)."""
    t_max = int(_horizons(config)[-1])
    return {"ftl-killer": _ftl_killer(t_max), "stochastic": _bernoulli(config, t_max, 2)}


def _learner_on_both(learner: OCOLearner, params: object, config: CheckConfig) -> dict:
    """`learner`'s weights on both instances, from one program: the FTL killer run as one more
    row of the stochastic losses."""
    instances = _expert_instances(config)
    both = np.concatenate([instances["stochastic"], instances["ftl-killer"]])
    weights = _experts_runs(learner, params, both, config_dtype(config))
    return {"stochastic": weights[:-1], "ftl-killer": weights[-1:]}


@functools.cache
def _falsifiers(config: CheckConfig, instance: str) -> dict[str, np.ndarray]:
    """The falsifiers' weights on an instance: follow the leader over the simplex (the vertex
    of the smallest cumulative loss) on the FTL killer, the uniform mixture (no learning) on
    the stochastic one; computed once for both checks."""
    zs = _expert_instances(config)[instance]
    if instance == "ftl-killer":
        dtype = config_dtype(config)
        params = oco.FTLParams(jnp.asarray(1.0, dtype))
        return {"falsifier:ftl": _experts_runs(oco.ftl("linear", "simplex"), params, zs, dtype)}
    return {"falsifier:uniform": np.full(zs.shape, 1.0 / zs.shape[-1])}


def _regrets(weights: np.ndarray, zs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per step `h_t = <w_t, l_t>` and the cumulative regrets `R_{t,k}` (seeds, T, K)."""
    hedge = np.sum(weights * zs, axis=-1)
    return hedge, np.cumsum(hedge[..., None] - zs, axis=1)


@with_precision
def _adahedge(config: CheckConfig) -> Outcome:
    """R_T <= 2 sqrt(V_T ln K) + (4/3) ln K + 2, V_T the cumulative variance under w_t."""
    steps = _horizons(config)
    methods = {}
    learner = _learner_on_both(oco.adahedge(), oco.AdaHedgeParams(), config)
    for instance, zs in _expert_instances(config).items():
        plays = {"AdaHedge": learner[instance]}
        for name, weights in (plays | _falsifiers(config, instance)).items():
            hedge, regret = _regrets(weights, zs)
            variance = np.sum(weights * (zs - hedge[..., None]) ** 2, axis=-1)
            v = values_at(np.cumsum(variance, axis=1), steps)
            log_k = math.log(NUM_EXPERTS)
            bound = 2.0 * np.sqrt(v * log_k) + 4.0 / 3.0 * log_k + 2.0
            methods[f"{name}@{instance}"] = as_measured(
                values_at(regret.max(axis=-1), steps), bound
            )
    return Outcome(steps, methods)


def gauss_legendre(n: int) -> tuple[np.ndarray, np.ndarray]:
    """The `n`-point Gauss-Legendre nodes and weights on `[-1, 1]`: NumPy's
    `np.polynomial.legendre.leggauss` (the eigenvalues of the companion matrix, one Newton
    step, symmetrised), the eigenvalues from the tridiagonal solver, O(n^2) instead of a
    dense O(n^3) problem (for n = 2000: a tenth of a second, not seconds)."""
    leg = np.polynomial.legendre
    c = np.zeros(n + 1)
    c[-1] = 1.0
    scale = 1.0 / np.sqrt(2 * np.arange(n) + 1)  # the companion matrix: 0 on the diagonal
    import scipy.linalg  # here: SciPy's import is paid only by what uses it

    x = scipy.linalg.eigvalsh_tridiagonal(np.zeros(n), np.arange(1, n) * scale[:-1] * scale[1:])
    dy, df = leg.legval(x, c), leg.legval(x, leg.legder(c))
    x -= dy / df
    fm = leg.legval(x, c[1:])
    fm /= np.abs(fm).max()
    df /= np.abs(df).max()
    w = 1.0 / (fm * df)
    w, x = (w + w[::-1]) / 2, (x - x[::-1]) / 2
    w *= 2.0 / w.sum()
    return x, w


@functools.cache
def _quadrature() -> tuple[np.ndarray, np.ndarray]:
    """The 2000 Gauss-Legendre nodes and weights on `[0, 1/2]` (computed on first use)."""
    nodes, weights = gauss_legendre(2000)
    return 0.25 * (nodes + 1.0), 0.25 * weights


def squint_potential(regret: np.ndarray, variance: np.ndarray) -> np.ndarray:
    """`Phi(R, V) = int_0^{1/2} (exp(eta R - eta^2 V) - 1) / eta d eta` elementwise (float64
    Gauss-Legendre; +inf where the exponent overflows)."""
    etas, deta = _quadrature()
    r, v = np.asarray(regret)[..., None], np.asarray(variance)[..., None]
    with np.errstate(over="ignore", invalid="ignore"):
        integrand = np.expm1(etas * r - etas**2 * v) / etas
        return np.sum(integrand * deta, axis=-1)


def squint_regret_bound(variance: np.ndarray, prior: float, steps: np.ndarray) -> np.ndarray:
    """The largest `R` with `Phi(R, V) <= (1 - pi)(1 + ln(3 T / 4)) / pi` (bisection), which
    bounds Squint's regret to an expert of prior `pi` and cumulative `V` after `T` rounds
    (see the check's note)."""
    level = (1.0 - prior) * (1.0 + np.log(0.75 * steps)) / prior
    low, high = np.zeros_like(variance), np.ones_like(variance)
    while np.any(grow := squint_potential(high, variance) <= level):
        high = np.where(grow, 2.0 * high, high)
    for _ in range(80):
        middle = 0.5 * (low + high)
        below = squint_potential(middle, variance) <= level
        low, high = np.where(below, middle, low), np.where(below, high, middle)
    return high


@with_precision
def _squint(config: CheckConfig) -> Outcome:
    """Lemma 1 (the potential with the improper prior never exceeds 0) as a regret bound."""
    steps = _horizons(config)
    methods = {}
    learner = _learner_on_both(oco.squint(), oco.SquintParams(), config)
    for instance, zs in _expert_instances(config).items():
        plays = {"Squint": learner[instance]}
        for name, weights in (plays | _falsifiers(config, instance)).items():
            hedge, regret = _regrets(weights, zs)
            variance = np.cumsum((hedge[..., None] - zs) ** 2, axis=1)
            best = np.argmax(regret[:, steps - 1], axis=-1)  # (seeds, H): the best expert
            r_best = np.take_along_axis(regret[:, steps - 1], best[..., None], -1)[..., 0]
            v_best = np.take_along_axis(variance[:, steps - 1], best[..., None], -1)[..., 0]
            bound = squint_regret_bound(v_best, 1.0 / NUM_EXPERTS, steps.astype(np.float64))
            methods[f"{name}@{instance}"] = as_measured(r_best, bound)
    return Outcome(steps, methods)


# ----------------------------------------------------------------------------- the checks

_EXPERTS = (
    f"K = {NUM_EXPERTS} experts, uniform prior: the FTL killer (experts 0 and 1 take turns with "
    "losses (1/2, 0), (0, 1), (1, 0), ..., the others lose 1; deterministic) and stochastic "
    "Bernoulli losses with means in [0.3, 0.7]"
)

CHECKS: tuple[Check, ...] = (
    Check(
        "duchi2011-thm5",
        "baselines",
        "Duchi, Hazan & Singer 2011, Theorem 5 (composite mirror descent, delta = 0)",
        "R(T) <= (1/(2 eta)) max_t ||x* - x_t||_inf^2 sum_i ||g_{1:T,i}||_2 + eta sum_i "
        "||g_{1:T,i}||_2 <= sqrt(2) D_inf sum_i ||g_{1:T,i}||_2 at eta = D_inf / sqrt(2)",
        "linear losses on the box [-1, 1]^5 (D_inf = 2): coordinate i nonzero with probability "
        "2^-i, a drift of random sign plus uniform noise; AdaGrad from 0 at eta = sqrt(2)",
        "bound",
        "T",
        _adagrad,
        falsifier="AdaGrad at eta / 100 (the wrong step: too slow to reach the box's corner) "
        "and no learning (x_t = 0), on the same losses against the same bound",
        note="falsifiers on the same losses, against the same bound: AdaGrad at eta / 100 "
        "(too slow to reach the box's corner) and no learning (x_t = 0)",
    ),
    Check(
        "hazan2007-thm2",
        "baselines",
        "Hazan, Agarwal & Kale 2007, Theorem 2 (Online Newton Step)",
        "for alpha-exp-concave f_t with ||grad f_t|| <= G on K of diameter D, ONS with "
        "gamma = 1/2 min(1/(4 G D), alpha), epsilon = 1/(gamma^2 D^2): "
        "Regret_T <= 5 (1/alpha + G D) n log T",
        f"f_t(x) = 0.5 ||x - z_t||^2 on the unit ball of R^{ONS_DIM} (G = D = 2, alpha = 1/4), "
        "z_t = P(0.9 u + 0.3 N(0, I)) around a random direction u, x_1 = -0.9 u",
        "bound",
        "T",
        _ons,
        falsifier="no learning (x_t = x_1 on the far side of the ball): linear regret against "
        "the log T bound",
        note="alpha = 1/G^2 since f_t is 1-strongly convex (the paper's remark on strongly "
        "convex losses); log is natural. Falsifier: no learning (x_t = x_1 on the far side)",
        lapack=True,
    ),
    Check(
        "derooij2014-variance",
        "baselines",
        "de Rooij, van Erven, Grunwald & Koolen 2014, AdaHedge's variance bound",
        "losses in [0, 1]: R_T <= 2 sqrt(V_T ln K) + (4/3) ln K + 2, V_T = sum_t Var_{k ~ w_t} "
        "l_{t,k}",
        _EXPERTS,
        "bound",
        "T",
        _adahedge,
        falsifier="follow the leader on the FTL killer (V = 0, regret about T/2) and the uniform "
        "mixture on the stochastic losses, each with its own V_T",
        note="the paper's text is not among the repository's sources: we recall this as its "
        "Theorem 6 (Theorem 8, the bound in L*, follows from it via Var <= h(1 - h); its "
        "constants are not restated here), and re-derived every constant: R_T <= 2 Delta_T (mix "
        "loss at non-increasing rates) and Delta_T^2 <= V_T ln K + (2/3 ln K + 1) Delta_T "
        "(Bernstein). V_T is each method's own; falsifiers: FTL (V = 0, regret ~T/2) and the "
        "uniform mixture",
        shares="baselines-experts",
    ),
    Check(
        "koolen2015-lemma1",
        "baselines",
        "Koolen & van Erven 2015, Lemma 1 (Squint's potential never increases), as a regret bound",
        "sum_k pi_k Phi(R_k, V_k) <= 0 with Phi(R, V) = int_0^{1/2} (e^{eta R - eta^2 V} - 1) / "
        "eta d eta, hence Phi(R_k, V_k) <= (1 - pi_k)(1 + ln(3T/4)) / pi_k: R_k <= the largest "
        "R satisfying it",
        _EXPERTS,
        "bound",
        "T",
        _squint,
        falsifier="follow the leader on the FTL killer and the uniform mixture on the stochastic "
        "losses, each with its own R and V",
        note="the improper prior 1/eta (the paper's closed-form Squint). The regret form is "
        "derived here, not the paper's Theorem 4 (whose constants are not restated): every "
        "Phi(R_j, V_j) >= -(1 + ln(3T/4)) since |r| <= 1 gives eta R - eta^2 V >= -3T eta / 2. "
        "Measured: the regret to the best expert; bound: at that expert's V. Falsifiers: FTL "
        "and the uniform mixture, with their own R and V",
        shares="baselines-experts",
    ),
)


__all__ = [
    "ADAGRAD_STEP",
    "CHECKS",
    "DIM",
    "D_INF",
    "NUM_EXPERTS",
    "ONS_DIM",
    "gauss_legendre",
    "squint_potential",
    "squint_regret_bound",
]
