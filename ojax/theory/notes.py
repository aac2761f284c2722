"""Checks of the online learning notes (spec: online_learning_basics): the FTL and FTRL lemmas,
FTRL on R^d as gradient descent, the OGD theorem at any step (online least squares, mirror
descent and Hedge, bounds the notes do not state, in :mod:`ojax.theory.notes_mirror`; the
realizable experts in :mod:`ojax.theory.notes_experts`; convex analysis in
:mod:`ojax.theory.notes_convex`).

The notes number none of their results: each check cites the notes' own label ("Lemma: regret
bound for FTL", "Example I", "Theorem: regret bound for OGD learner") and, where the spec
numbers the example, the spec's number.

Every regret is measured against the comparator the result names: the best fixed point of the
feasible set in hindsight, in closed form at each horizon (linear losses over a ball of any norm
or the simplex, quadratics, least squares). Instances: a stochastic one (drawn with NumPy from
`CheckConfig.seed`; seeds are a `vmap` axis) and an adversarial one (a fixed hard sequence,
or an adaptive adversary answering the played point: deterministic, one row).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TypeVar

import jax
import jax.numpy as jnp
import numpy as np

from ojax import oco, programs
from ojax.core import Array, OCOLearner
from ojax.envs import adversaries
from ojax.losses import Objective, linear_objective, quadratic_objective
from ojax.runner import run_oco
from ojax.theory.base import Check, CheckConfig, Outcome, as_measured, log_horizons

RADIUS = 1.0  # B (or M): the feasible ball, and the bound on the data's norm
DIM = 5
LAMBDAS = (1.0, 10.0, 100.0)  # "at any lambda": FTRL's regularization
STEPS = (0.01, 0.1)  # "at any step": OGD's eta
_T = TypeVar("_T")


def with_precision(compute: Callable[[CheckConfig], _T]) -> Callable[[CheckConfig], _T]:
    """`compute` with float64 enabled when `config.x64`."""

    @functools.wraps(compute)
    def wrapper(config: CheckConfig) -> _T:
        with jax.enable_x64(config.x64):
            return compute(config)

    return wrapper


def notes_horizons(config: CheckConfig) -> np.ndarray:
    """The horizons of the notes' checks: 6 (quick) or 12 log-spaced from 10 to 300 or
    10 000."""
    return log_horizons(10, 300 if config.quick else 10_000, 6 if config.quick else 12)


def config_dtype(config: CheckConfig) -> np.dtype:
    """The float dtype of a check: float64 under `x64`, else float32."""
    return np.dtype(np.float64 if config.x64 else np.float32)


def config_rng(config: CheckConfig, stream: int) -> np.random.Generator:
    """A NumPy generator of the check's seed and the numbered `stream`."""
    return np.random.default_rng([config.seed, stream])


def values_at(curves: Array | np.ndarray, steps: np.ndarray) -> np.ndarray:
    """Values at the 1-based horizons `steps` along the last axis, as float64."""
    return np.asarray(curves, np.float64)[..., steps - 1]


def cumulative_at(values: Array | np.ndarray, steps: np.ndarray) -> np.ndarray:
    """The cumulative sums of `values` at the 1-based horizons `steps`, as float64."""
    return values_at(np.cumsum(np.asarray(values, np.float64), axis=-1), steps)


def _derived(runs: Callable, group: str, bound: Callable) -> Callable[[CheckConfig], Outcome]:
    """A check computed from cached runs: `runs(config)` gives the horizons, the learners'
    runs (shared by the checks of one family) and the falsifiers' runs of each check (`group`
    picks this check's); `bound(name, steps, *run)` gives a method's `(measured, bound)`
    (`None`: the method is not about this result)."""

    def compute(config: CheckConfig) -> Outcome:
        steps, learners, falsifiers = runs(config)
        runs_here = {**learners, **falsifiers.get(group, {})}
        pairs = {name: bound(name, steps, *run) for name, run in runs_here.items()}
        return Outcome(steps, {k: as_measured(*v) for k, v in pairs.items() if v is not None})

    return compute


def ball_stream(rng: np.random.Generator, shape: tuple[int, int, int], drift: float) -> np.ndarray:
    """`(seeds, T, d)` vectors of norm in [0.5, 1] RADIUS: a drift direction (one per seed)
    plus isotropic noise."""
    seeds, _, dim = shape
    direction = rng.normal(size=(seeds, 1, dim))
    z = drift * direction / np.linalg.norm(direction, axis=-1, keepdims=True)
    z = z + rng.normal(size=shape)
    z = z / np.linalg.norm(z, axis=-1, keepdims=True)
    return RADIUS * z * rng.uniform(0.5, 1.0, size=(*shape[:2], 1))


def _alternating(num_steps: int) -> np.ndarray:
    """Example 4's sequence -0.5, 1, -1, 1, ... as `(1, num_steps, 1)`."""
    z = np.where(np.arange(num_steps) % 2 == 1, 1.0, -1.0)
    z[0] = -0.5
    return RADIUS * z[None, :, None]


def _play(
    learner: OCOLearner, params: object, x0: Array, zs: Array, objective: Objective
) -> tuple[Array, Array]:
    """Losses `f_t(w_t)` and the stability terms `f_t(w_t) - f_t(w_{t+1})`."""
    state, trace = run_oco(learner, params, x0, zs, objective, store_iterates=True)
    assert trace.prediction is not None  # store_iterates
    after = jnp.concatenate([trace.prediction[1:], learner.iterate(state, params)[None]])
    later = jax.vmap(objective.value)(after, zs)
    return trace.loss, trace.loss - later


_sign = adversaries.sign
_toward = adversaries.toward


def regret_linear(losses, zs, best: Callable[[np.ndarray], np.ndarray], steps) -> np.ndarray:
    """Regret against the best fixed point in hindsight; `best(S)` maps the running sums
    `(..., T, d)` to `min_u <u, S_t>`."""
    paid = np.cumsum(np.asarray(losses, np.float64), axis=-1)
    return values_at(paid - best(np.cumsum(np.asarray(zs, np.float64), axis=-2)), steps)


def _l2_best(sums: np.ndarray) -> np.ndarray:
    return -RADIUS * np.linalg.norm(sums, axis=-1)


def moved_from_zero(zs: np.ndarray, steps: np.ndarray) -> np.ndarray:
    """1 where the running sum is nonzero (the best point of a ball lies on its sphere), else 0
    (the best point is 0)."""
    sums = np.cumsum(np.asarray(zs, np.float64), axis=-2)
    return values_at(np.linalg.norm(sums, axis=-1) > 0, steps)


# ----------------------------------------------------------------------------- FTL


def _constant_quadratic(zs: np.ndarray, point: np.ndarray) -> np.ndarray:
    """The losses `0.5 ||c - z_t||^2` of the constant learner `w_t = c`."""
    return 0.5 * np.sum((point - np.asarray(zs, np.float64)) ** 2, axis=-1)


FALSIFIER_STEP = 1e-4  # OGD that barely moves: a learner that does not play the leader


@functools.cache
@with_precision
def _ftl_runs(config: CheckConfig) -> tuple[np.ndarray, dict[str, tuple], dict[str, dict]]:
    """FTL on quadratics (stochastic; adversarial: z_t = (-1)^t e_1) and on example 4's linear
    losses: per method (regret, stability sum) at the horizons; the falsifiers: OGD at step
    :data:`FALSIFIER_STEP` (its own stability sum) and the constant `w = e_1` (no stability)."""
    steps, dtype = notes_horizons(config), config_dtype(config)
    t_max, params = int(steps[-1]), oco.FTLParams(jnp.asarray(RADIUS, dtype))
    zs = ball_stream(config_rng(config, 0), (config.num_seeds, t_max, DIM), 0.5)
    flip = np.zeros((1, t_max, DIM))
    flip[0, :, 0] = RADIUS * np.where(np.arange(t_max) % 2 == 0, 1.0, -1.0)
    zs = np.concatenate([zs, flip]).astype(dtype)  # the adversary as one more row
    x0 = jnp.zeros(DIM, dtype)
    slow = oco.OGDParams(jnp.asarray(FALSIFIER_STEP, dtype), jnp.asarray(RADIUS, dtype))

    def both(z, slow):  # the falsifier's params as an argument (traced: checked by the caller)
        return (
            _play(oco.ftl("quadratic"), params, x0, z, quadratic_objective),
            _play(oco.ogd(), slow, x0, z, quadratic_objective),
        )

    (losses, stable), (slow_losses, slow_stable) = programs.jit(jax.vmap(both, in_axes=(0, None)))(
        zs, slow
    )
    z64 = zs.astype(np.float64)
    sums, count = np.cumsum(z64, axis=-2), np.arange(1, t_max + 1)
    best = 0.5 * (np.cumsum(np.sum(z64**2, -1), -1) - np.sum(sums**2, -1) / count)

    def regret(paid):
        return values_at(np.cumsum(np.asarray(paid, np.float64), -1) - best, steps)

    stability = cumulative_at(stable, steps)
    out = {
        "FTL@stochastic-quadratic": (regret(losses)[:-1], stability[:-1]),
        "FTL@adversarial-quadratic": (regret(losses)[-1:], stability[-1:]),
    }
    corner = np.eye(DIM)[0] * RADIUS
    constant = regret(_constant_quadratic(z64, corner))
    falsifiers: dict[str, dict] = {
        "btl": {
            "falsifier:OGD,eta=1e-4@stochastic-quadratic": (
                regret(slow_losses)[:-1],
                cumulative_at(slow_stable, steps)[:-1],
            )
        },
        "quadratic": {
            "falsifier:w=e_1@stochastic-quadratic": (constant[:-1], None),
            "falsifier:w=e_1@adversarial-quadratic": (constant[-1:], None),
        },
    }
    zs = _alternating(t_max).astype(dtype)
    x0 = jnp.zeros(1, dtype)
    play = jax.vmap(lambda z: _play(oco.ftl("linear"), params, x0, z, linear_objective))
    losses, stable = programs.jit(play)(zs)
    out["FTL@adversarial-linear"] = (
        regret_linear(losses, zs, _l2_best, steps),
        cumulative_at(stable, steps),
    )
    return steps, out, falsifiers


# ----------------------------------------------------------------------------- FTRL

WRONG_REGULARIZATION = 100.0  # the falsifier of the FTRL bound runs at lambda / 100


@functools.cache
@with_precision
def _ftrl_runs(config: CheckConfig) -> tuple[np.ndarray, dict[str, tuple], dict[str, dict]]:
    """FTRL (lazy projection onto the ball) at each lambda on both instances: per method
    (lambda, regret, stability sum, `||u*||^2`, `sum ||z_t||^2`) at the horizons, `lambda`
    the one the bound is evaluated at. Falsifiers: of the lemma, OGD at step
    :data:`FALSIFIER_STEP` (not FTRL) with `R` at lambda = 1; of the linear bound, FTRL at
    lambda / :data:`WRONG_REGULARIZATION` against the bound at lambda = 10, 100."""
    steps, dtype = notes_horizons(config), config_dtype(config)
    t_max = int(steps[-1])
    grid = (*LAMBDAS, *(lam / WRONG_REGULARIZATION for lam in LAMBDAS[1:]))
    lambdas, radius = jnp.asarray(grid, dtype), jnp.asarray(RADIUS, dtype)
    slow = oco.OGDParams(jnp.asarray(FALSIFIER_STEP, dtype), radius)

    def runs(zs, slow):  # (lambdas, T) losses and stability terms, and the slow OGD's
        x0 = jnp.zeros(zs.shape[1], dtype)
        ftrl = jax.vmap(
            lambda lam: _play(oco.ftrl(), oco.FTRLParams(lam, radius), x0, zs, linear_objective)
        )(lambdas)
        return ftrl, _play(oco.ogd(), slow, x0, zs, linear_objective)

    stochastic = ball_stream(config_rng(config, 0), (config.num_seeds, t_max, DIM), 0.3)
    out: dict[str, tuple] = {}
    falsifiers: dict[str, dict] = {"lemma": {}, "linear": {}}
    for name, zs in (("stochastic", stochastic), ("adversarial", _alternating(t_max))):
        zs = zs.astype(dtype)
        (losses, stable), (slow_losses, slow_stable) = programs.jit(
            jax.vmap(runs, in_axes=(0, None))
        )(zs, slow)
        u2 = RADIUS**2 * moved_from_zero(zs, steps)
        z2 = cumulative_at(np.sum(zs.astype(np.float64) ** 2, -1), steps)
        for i, lam in enumerate(grid):
            regret = regret_linear(losses[:, i], zs, _l2_best, steps)
            stability = cumulative_at(stable[:, i], steps)
            if i < len(LAMBDAS):
                out[f"FTRL@{name},lambda={lam:g}"] = (lam, regret, stability, u2, z2)
            elif name == "adversarial":
                meant = lam * WRONG_REGULARIZATION
                key = f"falsifier:FTRL,lambda/100@{name},lambda={meant:g}"
                falsifiers["linear"][key] = (meant, regret, stability, u2, z2)
        if name == "stochastic":
            regret = regret_linear(slow_losses, zs, _l2_best, steps)
            falsifiers["lemma"][f"falsifier:OGD,eta=1e-4@{name},lambda=1"] = (
                LAMBDAS[0],
                regret,
                cumulative_at(slow_stable, steps),
                u2,
                z2,
            )
    return steps, out, falsifiers


def _ftrl_is_gd(config: CheckConfig) -> Outcome:
    """Unconstrained FTRL with (lambda/2)||w||^2 on linear losses against OGD at step 1/lambda:
    the largest coordinate difference of the played points up to each horizon (float64)."""
    steps = notes_horizons(config)
    zs = ball_stream(config_rng(config, 0), (config.num_seeds, int(steps[-1]), DIM), 0.0)
    with jax.enable_x64(True):
        lambdas, one = jnp.asarray(LAMBDAS, jnp.float64), jnp.asarray(1.0, jnp.float64)
        x0 = jnp.zeros(DIM, jnp.float64)

        def gap(z, lam):
            ftrl = oco.FTRLParams(lam, one)
            ogd = oco.OGDParams(1.0 / lam, one)
            w1 = run_oco(oco.ftrl("none"), ftrl, x0, z, linear_objective, store_iterates=True)
            w2 = run_oco(oco.ogd("none"), ogd, x0, z, linear_objective, store_iterates=True)
            return jnp.max(jnp.abs(w1[1].prediction - w2[1].prediction), axis=-1)

        gaps = programs.jit(
            jax.vmap(lambda z: jnp.max(jax.vmap(lambda lam: gap(z, lam))(lambdas), 0))
        )
        largest = np.maximum.accumulate(np.asarray(gaps(zs)), axis=-1)
    return Outcome(steps, {"FTRL-vs-OGD@stochastic": as_measured(values_at(largest, steps), 1e-9)})


# ----------------------------------------------------------------------------- OGD


@functools.cache
@with_precision
def _ogd_runs(config: CheckConfig) -> tuple[np.ndarray, dict[str, tuple], dict[str, dict]]:
    """Projected OGD from 0 at each fixed step: per method (eta, regret, `||u*||^2`,
    `sum ||g_t||^2`) at the horizons. The falsifier: the constant `w = 0` against the same
    adaptive adversary (it answers `e_1` at 0, so `w = 0` pays 0 against `-T`), with the
    bound at each step."""
    steps, dtype = notes_horizons(config), config_dtype(config)
    t_max = int(steps[-1])
    etas, x0 = jnp.asarray(STEPS, dtype), jnp.zeros(DIM, dtype)

    def params(eta):
        return oco.OGDParams(eta, jnp.asarray(RADIUS, dtype))

    def both(zs):  # the stochastic runs (seeds, etas, T) and the adaptive adversary (etas, T)
        def run(z, eta):
            return run_oco(oco.ogd(), params(eta), x0, z, linear_objective)[1].loss

        stochastic = jax.vmap(lambda z: jax.vmap(lambda e: run(z, e))(etas))(zs)
        return stochastic, jax.vmap(
            lambda e: adversaries.play_against(oco.ogd(), params(e), x0, _toward, t_max)
        )(etas)

    zs = ball_stream(config_rng(config, 0), (config.num_seeds, t_max, DIM), 0.3).astype(dtype)
    stochastic, (adv_losses, adv_zs) = programs.jit(both)(zs)
    zs = np.broadcast_to(zs[:, None], (*stochastic.shape, DIM))
    out = {}
    for name, losses, z in (
        ("stochastic", stochastic, zs),
        ("adversarial", adv_losses[None], np.asarray(adv_zs)[None]),
    ):
        u2 = RADIUS**2 * moved_from_zero(z, steps)
        g2 = cumulative_at(np.sum(np.asarray(z, np.float64) ** 2, -1), steps)
        for i, eta in enumerate(STEPS):
            regret = regret_linear(losses[:, i], z[:, i], _l2_best, steps)
            out[f"OGD@{name},eta={eta:g}"] = (eta, regret, u2[:, i], g2[:, i])
    still = np.zeros((1, t_max, DIM))
    still[..., 0] = RADIUS  # _toward(0) = e_1 at every step
    regret = regret_linear(np.zeros((1, t_max)), still, _l2_best, steps)
    u2, g2 = RADIUS**2 * moved_from_zero(still, steps), cumulative_at(np.sum(still**2, -1), steps)
    falsifiers = {f"falsifier:w=0@adversarial,eta={eta:g}": (eta, regret, u2, g2) for eta in STEPS}
    return steps, out, {"ogd": falsifiers}


_ftl_btl = _derived(_ftl_runs, "btl", lambda name, steps, regret, stable: (regret, stable))
_ftl_quadratic = _derived(
    _ftl_runs,
    "quadratic",
    lambda name, steps, regret, _: (
        (regret, 4 * RADIUS**2 * (np.log(steps) + 1)) if name.endswith("quadratic") else None
    ),
)
_ftrl_lemma = _derived(
    _ftrl_runs,
    "lemma",
    lambda name, steps, lam, regret, stable, u2, _: (regret, lam / 2 * u2 + stable),
)
_ftrl_linear = _derived(
    _ftrl_runs,
    "linear",
    lambda name, steps, lam, regret, _, u2, z2: (regret, lam / 2 * u2 + z2 / lam),
)
_ogd = _derived(
    _ogd_runs,
    "ogd",
    lambda name, steps, eta, regret, u2, g2: (regret, u2 / (2 * eta) + eta / 2 * g2),
)
# D = sup ||u - w_1|| = RADIUS from w_1 = 0, G = sup ||g_t|| = RADIUS
_ogd_ball = _derived(
    _ogd_runs,
    "ogd",
    lambda name, steps, eta, regret, *_: (
        regret,
        RADIUS**2 / (2 * eta) + eta * RADIUS**2 * steps / 2,
    ),
)


# ----------------------------------------------------------------------------- the checks

STABILITY = "sum_t [f_t(w_t) - f_t(w_{t+1})]"

CHECKS: tuple[Check, ...] = (
    Check(
        "notes-ftl-btl",
        "notes",
        "Lemma: regret bound for FTL (be the leader)",
        f"FTL: Regret_T(u) <= {STABILITY} for every u",
        "0.5||w - z_t||^2, ||z_t|| <= 1, FTL on the unit ball: stochastic (drifting, d = 5) and "
        "adversarial z_t = (-1)^t e_1; <w, z_t> on [-1, 1] with z = -0.5, 1, -1, 1, ... "
        "(example 4)",
        "bound",
        "T",
        _ftl_btl,
        falsifier="OGD at step 1e-4 on the stochastic quadratics, against its own stability sum: "
        "a learner that does not play the leader, so Regret - stability = sum_t f_t(w_{t+1}) - "
        "min_u sum_t f_t(u) > 0 (its next point is no better than its current one)",
        note="the lemma is an identity away from sum_t f_t(w_{t+1}) <= min_u sum_t f_t(u), which "
        "only the leader's sequence satisfies; on the adversarial instances FTL's stability sum "
        "is about twice its regret and no learner of interest exceeds it, so the falsifier is "
        "run on the stochastic instance",
        shares="notes-ftl",
    ),
    Check(
        "notes-ftl-quadratic",
        "notes",
        "Example I (FTL on quadratic losses; the spec's example 3)",
        "FTL on 0.5||w - z_t||^2, ||z_t|| <= M, over the M-ball: Regret_T <= 4 M^2 (ln T + 1)",
        "M = 1; stochastic (drifting z_t, d = 5) and adversarial z_t = (-1)^t e_1",
        "bound",
        "T",
        _ftl_quadratic,
        falsifier="the constant w = e_1 (no learning) on both instances: its regret 0.5 T "
        "||e_1 - mean z||^2 is linear in T, above the logarithmic bound",
        shares="notes-ftl",
    ),
    Check(
        "notes-ftrl-lemma",
        "notes",
        "Lemma: regret bound for FTRL, its proof's intermediate bound (any lambda)",
        f"FTRL with R = (lambda/2)||w||^2: Regret_T(u) <= R(u) - R(w_1) + {STABILITY}",
        "linear losses ||z_t|| <= 1 on the unit ball (lazy projection), lambda = 1, 10, 100; "
        "stochastic (drifting) and adversarial (example 4); u = best point in hindsight",
        "bound",
        "T",
        _ftrl_lemma,
        falsifier="OGD at step 1e-4 (not FTRL: it barely moves) on the stochastic instance, "
        "against R(u) - R(w_1) + its own stability sum at lambda = 1",
        note="on example 4 every learner's regret is at most about T while FTRL's stability "
        "sum is of that order too: the falsifier runs on the stochastic instance",
        shares="notes-ftrl",
    ),
    Check(
        "notes-ftrl-linear",
        "notes",
        "Lemma: regret bound for FTRL (any lambda; the spec's example 5)",
        "Regret_T(u) <= (lambda/2)||u||^2 + (1/lambda) sum_t ||z_t||^2",
        "as notes-ftrl-lemma",
        "bound",
        "T",
        _ftrl_linear,
        falsifier="FTRL at lambda / 100 (the wrong regularization, close to FTL) on example 4, "
        "against the bound at lambda = 10 and 100: it pays about T, above lambda/2 + T/lambda",
        note="at lambda = 1 the bound is 1/2 + T, above the regret of any learner on example 4 "
        "(about T): no falsifier there; on the drifting stochastic instance FTL-like learners "
        "do well, so the falsifier runs on example 4",
        shares="notes-ftrl",
    ),
    Check(
        "notes-ftrl-gd",
        "notes",
        "FTRL on R^d is gradient descent (the text after FTRL's closed form)",
        "FTRL with (lambda/2)||w||^2 on linear losses over R^d plays w_{t+1} = w_t - z_t / lambda",
        "unconstrained, zero-mean ||z_t|| <= 1, lambda = 1, 10, 100, float64",
        "identity",
        "T",
        _ftrl_is_gd,
        note="measured: max |w_t(FTRL) - w_t(OGD, step 1/lambda)| up to T; bound: 1e-9. An "
        "identity: no falsifier needed",
    ),
    Check(
        "notes-ogd",
        "notes",
        "Theorem: regret bound for OGD learner (any step; the spec's example 6)",
        "projected OGD from w_1 = 0: Regret_T(u) <= ||u||^2/(2 eta) + (eta/2) sum_t ||g_t||^2",
        "linear losses ||g_t|| <= 1 on the unit ball, eta = 0.01, 0.1; stochastic (drifting) and "
        "adaptive adversarial (g_t = w_t / ||w_t||); u = best point in hindsight",
        "bound",
        "T",
        _ogd,
        falsifier="the constant w = 0 (no learning) against the adaptive adversary (which "
        "answers e_1 there): regret T against the bound 1/(2 eta) + eta T / 2 at each step",
        note="the adaptive adversary attains the bound at even T (ratio 1 up to rounding)",
        shares="notes-ogd",
    ),
    Check(
        "notes-ogd-ball",
        "notes",
        "Theorem: regret bound for OGD learner, its proof's bound with w_1 on a ball",
        "Regret_T <= D^2/(2 eta) + eta G^2 T / 2, D = sup ||u - w_1||, G = sup ||g_t||",
        "as notes-ogd (D = G = 1)",
        "bound",
        "T",
        _ogd_ball,
        falsifier="as notes-ogd: w = 0 against the adaptive adversary",
        shares="notes-ogd",
    ),
)


__all__ = [
    "CHECKS",
    "DIM",
    "FALSIFIER_STEP",
    "LAMBDAS",
    "RADIUS",
    "STABILITY",
    "STEPS",
    "WRONG_REGULARIZATION",
    "ball_stream",
    "config_dtype",
    "config_rng",
    "cumulative_at",
    "moved_from_zero",
    "notes_horizons",
    "regret_linear",
    "values_at",
    "with_precision",
]
