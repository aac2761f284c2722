"""Checks of the online learning notes (spec: online_learning_basics): the FTL and FTRL lemmas,
FTRL on R^d as gradient descent, OGD at any step, online least squares, mirror descent.

Every regret is measured against the comparator the result names: the best fixed point of the
feasible set in hindsight, in closed form at each horizon (linear losses over a ball of any norm
or the simplex, quadratics, least squares). Instances: a stochastic one (drawn with NumPy from
``CheckConfig.seed``; seeds are a ``vmap`` axis) and an adversarial one (a fixed hard sequence,
or an adaptive adversary answering the played point: deterministic, one row).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import TypeVar

import jax
import jax.numpy as jnp
import numpy as np

from ojax import oco
from ojax.core import Array, OCOLearner
from ojax.losses import Objective, linear_objective, quadratic_objective
from ojax.runner import run_oco
from ojax.sweep import programs
from ojax.theory.base import Check, CheckConfig, Outcome, as_measured, log_horizons

RADIUS = 1.0  # B (or M): the feasible ball, and the bound on the data's norm
DIM = 5
LAMBDAS = (1.0, 10.0, 100.0)  # "at any lambda": FTRL's regularization
STEPS = (0.01, 0.1)  # "at any step": OGD's eta
ETA_OMD = 0.05
Q = 1.5  # the p-norm map's q (p = 3)
NUM_EXPERTS = 10
_T = TypeVar("_T")


def _precision(compute: Callable[[CheckConfig], _T]) -> Callable[[CheckConfig], _T]:
    """``compute`` with float64 enabled when ``config.x64``."""

    @functools.wraps(compute)
    def wrapper(config: CheckConfig) -> _T:
        with jax.enable_x64(config.x64):
            return compute(config)

    return wrapper


def _horizons(config: CheckConfig) -> np.ndarray:
    return log_horizons(10, 300 if config.quick else 10_000, 6 if config.quick else 12)


def _dtype(config: CheckConfig) -> np.dtype:
    return np.dtype(np.float64 if config.x64 else np.float32)


def _rng(config: CheckConfig, stream: int) -> np.random.Generator:
    return np.random.default_rng([config.seed, stream])


def _at(curves: Array | np.ndarray, steps: np.ndarray) -> np.ndarray:
    """Values at the 1-based horizons ``steps`` along the last axis, as float64."""
    return np.asarray(curves, np.float64)[..., steps - 1]


def _cumulative(values: Array | np.ndarray, steps: np.ndarray) -> np.ndarray:
    return _at(np.cumsum(np.asarray(values, np.float64), axis=-1), steps)


def _derived(runs: Callable, bound: Callable) -> Callable[[CheckConfig], Outcome]:
    """A check computed from cached runs: ``bound(name, steps, *run)`` gives a method's
    ``(measured, bound)`` (``None``: the method is not about this result)."""

    def compute(config: CheckConfig) -> Outcome:
        steps, out = runs(config)
        pairs = {name: bound(name, steps, *run) for name, run in out.items()}
        return Outcome(steps, {k: as_measured(*v) for k, v in pairs.items() if v is not None})

    return compute


def _ball_stream(rng: np.random.Generator, shape: tuple[int, int, int], drift: float) -> np.ndarray:
    """``(seeds, T, d)`` vectors of norm in [0.5, 1] RADIUS: a drift direction (one per seed)
    plus isotropic noise."""
    seeds, _, dim = shape
    direction = rng.normal(size=(seeds, 1, dim))
    z = drift * direction / np.linalg.norm(direction, axis=-1, keepdims=True)
    z = z + rng.normal(size=shape)
    z = z / np.linalg.norm(z, axis=-1, keepdims=True)
    return RADIUS * z * rng.uniform(0.5, 1.0, size=(*shape[:2], 1))


def _alternating(num_steps: int) -> np.ndarray:
    """Example 4's sequence -0.5, 1, -1, 1, ... as ``(1, num_steps, 1)``."""
    z = np.where(np.arange(num_steps) % 2 == 1, 1.0, -1.0)
    z[0] = -0.5
    return RADIUS * z[None, :, None]


def _play(
    learner: OCOLearner, params: object, x0: Array, zs: Array, objective: Objective
) -> tuple[Array, Array]:
    """Losses ``f_t(w_t)`` and the stability terms ``f_t(w_t) - f_t(w_{t+1})``."""
    state, trace = run_oco(learner, params, x0, zs, objective, store_iterates=True)
    assert trace.prediction is not None  # store_iterates
    after = jnp.concatenate([trace.prediction[1:], learner.iterate(state, params)[None]])
    later = jax.vmap(objective.value)(after, zs)
    return trace.loss, trace.loss - later


def _adaptive(
    learner: OCOLearner, params: object, x0: Array, adversary: Callable, num_steps: int
) -> tuple[Array, Array]:
    """An adaptive adversary: the linear loss ``z_t = adversary(w_t)`` answers the played point;
    returns the losses ``<w_t, z_t>`` and ``zs``."""

    def step(state, _):
        w = learner.iterate(state, params)
        z = adversary(w)
        return learner.update(state, params, z), (jnp.vdot(w, z), z)

    _, (losses, zs) = jax.lax.scan(step, learner.init(params, x0), None, length=num_steps)
    return losses, zs


def _sign(w: Array) -> Array:
    """The worst linear loss of the box: ``sign(w)`` with ties to +1."""
    return jnp.where(w >= 0, 1.0, -1.0).astype(w.dtype)


def _toward(w: Array) -> Array:
    """The adaptive adversary of OGD: the unit loss along the played point (``e_1`` at 0)."""
    norm = jnp.linalg.norm(w)
    first = jnp.zeros_like(w).at[0].set(1.0)
    return jnp.where(norm > 0, w / jnp.where(norm > 0, norm, 1.0), first)


def _regret_linear(losses, zs, best: Callable[[np.ndarray], np.ndarray], steps) -> np.ndarray:
    """Regret against the best fixed point in hindsight; ``best(S)`` maps the running sums
    ``(..., T, d)`` to ``min_u <u, S_t>``."""
    paid = np.cumsum(np.asarray(losses, np.float64), axis=-1)
    return _at(paid - best(np.cumsum(np.asarray(zs, np.float64), axis=-2)), steps)


def _l2_best(sums: np.ndarray) -> np.ndarray:
    return -RADIUS * np.linalg.norm(sums, axis=-1)


def _moved(zs: np.ndarray, steps: np.ndarray) -> np.ndarray:
    """1 where the running sum is nonzero (the best point of a ball lies on its sphere), else 0
    (the best point is 0)."""
    sums = np.cumsum(np.asarray(zs, np.float64), axis=-2)
    return _at(np.linalg.norm(sums, axis=-1) > 0, steps)


# ----------------------------------------------------------------------------- FTL


@functools.cache
@_precision
def _ftl_runs(config: CheckConfig) -> tuple[np.ndarray, dict[str, tuple]]:
    """FTL on quadratics (stochastic; adversarial: z_t = (-1)^t e_1) and on example 4's linear
    losses: per method (regret, stability sum) at the horizons."""
    steps, dtype = _horizons(config), _dtype(config)
    t_max, params = int(steps[-1]), oco.FTLParams(jnp.asarray(RADIUS, dtype))
    zs = _ball_stream(_rng(config, 0), (config.num_seeds, t_max, DIM), 0.5)
    flip = np.zeros((1, t_max, DIM))
    flip[0, :, 0] = RADIUS * np.where(np.arange(t_max) % 2 == 0, 1.0, -1.0)
    zs = np.concatenate([zs, flip]).astype(dtype)  # the adversary as one more row
    x0 = jnp.zeros(DIM, dtype)
    play = jax.vmap(lambda z: _play(oco.ftl("quadratic"), params, x0, z, quadratic_objective))
    losses, stable = programs.jit(play)(zs)
    z64 = zs.astype(np.float64)
    sums, count = np.cumsum(z64, axis=-2), np.arange(1, t_max + 1)
    best = 0.5 * (np.cumsum(np.sum(z64**2, -1), -1) - np.sum(sums**2, -1) / count)
    regret = _at(np.cumsum(np.asarray(losses, np.float64), -1) - best, steps)
    stability = _cumulative(stable, steps)
    out = {
        "FTL@stochastic-quadratic": (regret[:-1], stability[:-1]),
        "FTL@adversarial-quadratic": (regret[-1:], stability[-1:]),
    }
    zs = _alternating(t_max).astype(dtype)
    x0 = jnp.zeros(1, dtype)
    play = jax.vmap(lambda z: _play(oco.ftl("linear"), params, x0, z, linear_objective))
    losses, stable = programs.jit(play)(zs)
    regret = _regret_linear(losses, zs, _l2_best, steps)
    out["FTL@adversarial-linear"] = (regret, _cumulative(stable, steps))
    return steps, out


# ----------------------------------------------------------------------------- FTRL


@functools.cache
@_precision
def _ftrl_runs(config: CheckConfig) -> tuple[np.ndarray, dict[str, tuple]]:
    """FTRL (lazy projection onto the ball) at each lambda on both instances: per method
    (lambda, regret, stability sum, ``||u*||^2``, ``sum ||z_t||^2``) at the horizons."""
    steps, dtype = _horizons(config), _dtype(config)
    t_max = int(steps[-1])
    lambdas, radius = jnp.asarray(LAMBDAS, dtype), jnp.asarray(RADIUS, dtype)

    def runs(zs):  # (lambdas, T) losses and stability terms
        x0 = jnp.zeros(zs.shape[1], dtype)
        return jax.vmap(
            lambda lam: _play(oco.ftrl(), oco.FTRLParams(lam, radius), x0, zs, linear_objective)
        )(lambdas)

    stochastic = _ball_stream(_rng(config, 0), (config.num_seeds, t_max, DIM), 0.3)
    out = {}
    for name, zs in (("stochastic", stochastic), ("adversarial", _alternating(t_max))):
        zs = zs.astype(dtype)
        losses, stable = programs.jit(jax.vmap(runs))(zs)  # (seeds, lambdas, T)
        u2 = RADIUS**2 * _moved(zs, steps)
        z2 = _cumulative(np.sum(zs.astype(np.float64) ** 2, -1), steps)
        for i, lam in enumerate(LAMBDAS):
            regret = _regret_linear(losses[:, i], zs, _l2_best, steps)
            stability = _cumulative(stable[:, i], steps)
            out[f"FTRL@{name},lambda={lam:g}"] = (lam, regret, stability, u2, z2)
    return steps, out


def _ftrl_is_gd(config: CheckConfig) -> Outcome:
    """Unconstrained FTRL with (lambda/2)||w||^2 on linear losses against OGD at step 1/lambda:
    the largest coordinate difference of the played points up to each horizon (float64)."""
    steps = _horizons(config)
    zs = _ball_stream(_rng(config, 0), (config.num_seeds, int(steps[-1]), DIM), 0.0)
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
    return Outcome(steps, {"FTRL-vs-OGD@stochastic": as_measured(_at(largest, steps), 1e-9)})


# ----------------------------------------------------------------------------- OGD


@functools.cache
@_precision
def _ogd_runs(config: CheckConfig) -> tuple[np.ndarray, dict[str, tuple]]:
    """Projected OGD from 0 at each fixed step: per method (eta, regret, ``||u*||^2``,
    ``sum ||g_t||^2``) at the horizons."""
    steps, dtype = _horizons(config), _dtype(config)
    t_max = int(steps[-1])
    etas, x0 = jnp.asarray(STEPS, dtype), jnp.zeros(DIM, dtype)

    def params(eta):
        return oco.OGDParams(eta, jnp.asarray(RADIUS, dtype))

    def both(zs):  # the stochastic runs (seeds, etas, T) and the adaptive adversary (etas, T)
        def run(z, eta):
            return run_oco(oco.ogd(), params(eta), x0, z, linear_objective)[1].loss

        stochastic = jax.vmap(lambda z: jax.vmap(lambda e: run(z, e))(etas))(zs)
        return stochastic, jax.vmap(lambda e: _adaptive(oco.ogd(), params(e), x0, _toward, t_max))(
            etas
        )

    zs = _ball_stream(_rng(config, 0), (config.num_seeds, t_max, DIM), 0.3).astype(dtype)
    stochastic, (adv_losses, adv_zs) = programs.jit(both)(zs)
    zs = np.broadcast_to(zs[:, None], (*stochastic.shape, DIM))
    out = {}
    for name, losses, z in (
        ("stochastic", stochastic, zs),
        ("adversarial", adv_losses[None], np.asarray(adv_zs)[None]),
    ):
        u2 = RADIUS**2 * _moved(z, steps)
        g2 = _cumulative(np.sum(np.asarray(z, np.float64) ** 2, -1), steps)
        for i, eta in enumerate(STEPS):
            regret = _regret_linear(losses[:, i], z[:, i], _l2_best, steps)
            out[f"OGD@{name},eta={eta:g}"] = (eta, regret, u2[:, i], g2[:, i])
    return steps, out


# ----------------------------------------------------------------------------- least squares


def _ridge(xs: Array, ys: Array, adversarial: Array, lam: float) -> tuple[Array, Array]:
    """Online ridge regression (FTRL with (lambda/2)||w||^2 on 0.5 (<w, x_t> - y_t)^2):
    ``w_t = A_{t-1}^{-1} b_{t-1}``, ``A_t^{-1}`` by Sherman-Morrison. Where ``adversarial``,
    the label is ``-sign(<w_t, x_t>)`` (ties to -1) instead of ``ys``. Returns the losses and
    the labels."""
    dtype = xs.dtype

    def step(carry, example):
        a_inv, b = carry
        x, given = example
        p = jnp.vdot(a_inv @ b, x)
        y = jnp.where(adversarial, jnp.where(p >= 0, -1.0, 1.0).astype(dtype), given)
        ax = a_inv @ x
        a_inv = a_inv - jnp.outer(ax, ax) / (1.0 + jnp.vdot(x, ax))
        return (a_inv, b + y * x), (0.5 * (p - y) ** 2, y)

    init = (jnp.eye(xs.shape[1], dtype=dtype) / lam, jnp.zeros(xs.shape[1], dtype))
    return jax.lax.scan(step, init, (xs, ys))[1]


def _ols_regret(xs: np.ndarray, ys: np.ndarray, losses: np.ndarray, steps: np.ndarray):
    """Regret against the least-squares point of each prefix, and its squared norm."""
    regret, u2 = np.empty((len(xs), len(steps))), np.empty((len(xs), len(steps)))
    for i in range(len(xs)):
        for j, t in enumerate(steps):
            u = np.linalg.lstsq(xs[i, :t], ys[i, :t], rcond=None)[0]
            regret[i, j] = losses[i, :t].sum() - 0.5 * np.sum((xs[i, :t] @ u - ys[i, :t]) ** 2)
            u2[i, j] = u @ u
    return regret, u2


@_precision
def _ols(config: CheckConfig) -> Outcome:
    steps, dtype = _horizons(config), _dtype(config)
    t_max, lam, seeds = int(steps[-1]), 1.0, config.num_seeds
    rng = _rng(config, 0)
    xs = _ball_stream(rng, (seeds, t_max, DIM), 0.0)
    u = rng.normal(size=(seeds, DIM))
    ys = np.einsum("std,sd->st", xs, u / np.linalg.norm(u, axis=-1, keepdims=True))
    ys = ys + 0.1 * rng.normal(size=ys.shape)
    flags = jnp.asarray([False, True])
    run = jax.vmap(jax.vmap(lambda x, y, a: _ridge(x, y, a, lam), (0, 0, None)), (None, None, 0))
    losses, labels = programs.jit(run)(xs.astype(dtype), ys.astype(dtype), flags)
    xs = xs.astype(dtype).astype(np.float64)
    x2 = _cumulative(np.sum(xs**2, -1), steps)
    methods = {}
    for i, name in enumerate(("stochastic", "adversarial")):
        loss = np.asarray(losses[i], np.float64)
        regret, u2 = _ols_regret(xs, np.asarray(labels[i], np.float64), loss, steps)
        worst = _at(np.maximum.accumulate(loss, axis=-1), steps)  # max_s r_s^2 / 2
        bound = lam / 2 * u2 + worst * DIM * np.log1p(x2 / (lam * DIM))
        methods[f"ridge@{name}"] = as_measured(regret, bound)
    return Outcome(steps, methods)


# ----------------------------------------------------------------------------- mirror descent


def _spd(dim: int) -> np.ndarray:
    """A fixed SPD matrix with eigenvalues from 0.5 to 4 (the quadratic map's A)."""
    basis = np.linalg.qr(np.random.default_rng(0).normal(size=(dim, dim)))[0]
    return basis @ np.diag(np.linspace(0.5, 4.0, dim)) @ basis.T


def _heaviest(w: Array) -> Array:
    """The adaptive adversary of Hedge: loss 1 on the expert of largest weight."""
    return jax.nn.one_hot(jnp.argmax(w), w.shape[-1], dtype=w.dtype)


def _omd_setup(name: str, config: CheckConfig, num_steps: int) -> tuple:
    """(learner, params, x0, stochastic losses (seeds, T, d), adversary, best(S),
    B_psi(u*, w_1) where S != 0, squared dual norms of the gradients)."""
    dtype = _dtype(config)
    eta, radius = jnp.asarray(ETA_OMD, dtype), jnp.asarray(RADIUS, dtype)
    rng = _rng(config, MIRROR_NAMES.index(name))
    if name == "entropy":  # losses in [0, 1] with means in [0.3, 0.7]
        means = rng.uniform(0.3, 0.7, size=(config.num_seeds, 1, NUM_EXPERTS))
        zs = np.minimum(rng.uniform(size=(config.num_seeds, num_steps, NUM_EXPERTS)) * 2 * means, 1)
        params = oco.OMDParams(eta, radius, jnp.asarray(1.0, dtype))
        x0 = jnp.full(NUM_EXPERTS, 1.0 / NUM_EXPERTS, dtype)
        return (oco.mirror_descent("entropy"), params, x0, zs, _heaviest,
                lambda s: np.min(s, axis=-1), math.log(NUM_EXPERTS),
                lambda g: np.max(np.abs(g), axis=-1) ** 2)  # fmt: skip
    drift = 0.3 * np.sign(rng.normal(size=(config.num_seeds, 1, DIM)))
    zs = np.clip(drift + rng.uniform(-1.0, 1.0, size=(config.num_seeds, num_steps, DIM)), -1, 1)
    x0 = jnp.zeros(DIM, dtype)
    if name == "pnorm":
        p = Q / (Q - 1)
        params = oco.OMDParams(eta, radius, jnp.asarray(Q, dtype))
        return (oco.mirror_descent("p_norm", "ball"), params, x0, zs, _sign,
                lambda s: -RADIUS * np.sum(np.abs(s) ** p, -1) ** (1 / p),
                RADIUS**2 / (2 * (Q - 1)),
                lambda g: np.sum(np.abs(g) ** p, -1) ** (2 / p))  # fmt: skip
    a = _spd(DIM)
    a_inv = np.linalg.inv(a)
    params = oco.OMDParams(eta, radius, jnp.asarray(a, dtype))
    return (oco.mirror_descent("quadratic", "ball"), params, x0, zs, _sign,
            lambda s: -RADIUS * np.sqrt(np.einsum("...i,ij,...j->...", s, a_inv, s)),
            RADIUS**2 / 2,
            lambda g: np.einsum("...i,ij,...j->...", g, a_inv, g))  # fmt: skip


MIRROR_NAMES = ("pnorm", "quadratic", "entropy")


@_precision
def _omd(config: CheckConfig) -> Outcome:
    steps = _horizons(config)
    t_max = int(steps[-1])
    methods = {}
    for name in MIRROR_NAMES:
        learner, params, x0, zs, adversary, best, bregman, dual2 = _omd_setup(name, config, t_max)

        def both(z, learner=learner, params=params, x0=x0, adversary=adversary):
            run = jax.vmap(lambda z1: run_oco(learner, params, x0, z1, linear_objective)[1].loss)
            return run(z), _adaptive(learner, params, x0, adversary, t_max)

        zs = zs.astype(_dtype(config))
        stochastic, (adv_losses, adv_zs) = programs.jit(both)(zs)
        for instance, losses, z in (
            ("stochastic", stochastic, zs),
            ("adversarial", adv_losses[None], np.asarray(adv_zs)[None]),
        ):
            z = np.asarray(z, np.float64)
            divergence = bregman * (_moved(z, steps) if name != "entropy" else 1.0)
            bound = divergence / ETA_OMD + ETA_OMD / 2 * _cumulative(dual2(z), steps)
            methods[f"OMD-{name}@{instance}"] = as_measured(
                _regret_linear(losses, z, best, steps), bound
            )
    return Outcome(steps, methods)


@_precision
def _hedge(config: CheckConfig) -> Outcome:
    """Hedge at a fixed eta = sqrt(8 ln m / T_max) on losses in [0, 1] (stochastic, and the
    adaptive adversary putting loss 1 on the heaviest expert) against the best expert."""
    steps, dtype = _horizons(config), _dtype(config)
    t_max = int(steps[-1])
    eta = math.sqrt(8 * math.log(NUM_EXPERTS) / t_max)
    rng = _rng(config, 0)
    means = rng.uniform(0.3, 0.7, size=(config.num_seeds, 1, NUM_EXPERTS))
    zs = np.minimum(rng.uniform(size=(config.num_seeds, t_max, NUM_EXPERTS)) * 2 * means, 1.0)
    zs = zs.astype(dtype)
    params = oco.HedgeParams(jnp.asarray(eta, dtype))
    x0 = jnp.full(NUM_EXPERTS, 1.0 / NUM_EXPERTS, dtype)

    def both(z):
        run = jax.vmap(lambda z1: run_oco(oco.hedge(), params, x0, z1, linear_objective)[1].loss)
        return run(z), _adaptive(oco.hedge(), params, x0, _heaviest, t_max)

    stochastic, (adv_losses, adv_zs) = programs.jit(both)(zs)
    bound = math.log(NUM_EXPERTS) / eta + eta * steps / 8
    methods = {}
    for instance, losses, z in (
        ("stochastic", stochastic, zs),
        ("adversarial", adv_losses[None], np.asarray(adv_zs)[None]),
    ):
        regret = _regret_linear(losses, z, lambda s: np.min(s, axis=-1), steps)
        methods[f"Hedge@{instance}"] = as_measured(regret, bound)
    return Outcome(steps, methods)


_ftl_btl = _derived(_ftl_runs, lambda name, steps, regret, stable: (regret, stable))
_ftl_quadratic = _derived(
    _ftl_runs,
    lambda name, steps, regret, _: (
        (regret, 4 * RADIUS**2 * (np.log(steps) + 1)) if name.endswith("quadratic") else None
    ),
)
_ftrl_lemma = _derived(
    _ftrl_runs, lambda name, steps, lam, regret, stable, u2, _: (regret, lam / 2 * u2 + stable)
)
_ftrl_linear = _derived(
    _ftrl_runs, lambda name, steps, lam, regret, _, u2, z2: (regret, lam / 2 * u2 + z2 / lam)
)
_ogd = _derived(
    _ogd_runs, lambda name, steps, eta, regret, u2, g2: (regret, u2 / (2 * eta) + eta / 2 * g2)
)
# D = sup ||u - w_1|| = RADIUS from w_1 = 0, G = sup ||g_t|| = RADIUS
_ogd_ball = _derived(
    _ogd_runs,
    lambda name, steps, eta, regret, *_: (
        regret,
        RADIUS**2 / (2 * eta) + eta * RADIUS**2 * steps / 2,
    ),
)


# ----------------------------------------------------------------------------- the checks

_STABILITY = "sum_t [f_t(w_t) - f_t(w_{t+1})]"

CHECKS: tuple[Check, ...] = (
    Check(
        "notes-ftl-btl",
        "notes",
        "FTL lemma (be the leader)",
        f"FTL: Regret_T(u) <= {_STABILITY} for every u",
        "0.5||w - z_t||^2, ||z_t|| <= 1, FTL on the unit ball: stochastic (drifting, d = 5) and "
        "adversarial z_t = (-1)^t e_1; <w, z_t> on [-1, 1] with z = -0.5, 1, -1, 1, ... "
        "(example 4)",
        "bound",
        "T",
        _ftl_btl,
    ),
    Check(
        "notes-ftl-quadratic",
        "notes",
        "FTL on quadratic losses (example 3)",
        "FTL on 0.5||w - z_t||^2, ||z_t|| <= M, over the M-ball: Regret_T <= 4 M^2 (ln T + 1)",
        "M = 1; stochastic (drifting z_t, d = 5) and adversarial z_t = (-1)^t e_1",
        "bound",
        "T",
        _ftl_quadratic,
    ),
    Check(
        "notes-ftrl-lemma",
        "notes",
        "FTRL lemma (any lambda)",
        f"FTRL with R = (lambda/2)||w||^2: Regret_T(u) <= R(u) - R(w_1) + {_STABILITY}",
        "linear losses ||z_t|| <= 1 on the unit ball (lazy projection), lambda = 1, 10, 100; "
        "stochastic (drifting) and adversarial (example 4); u = best point in hindsight",
        "bound",
        "T",
        _ftrl_lemma,
    ),
    Check(
        "notes-ftrl-linear",
        "notes",
        "FTRL on linear losses (any lambda)",
        "Regret_T(u) <= (lambda/2)||u||^2 + (1/lambda) sum_t ||z_t||^2",
        "as notes-ftrl-lemma",
        "bound",
        "T",
        _ftrl_linear,
    ),
    Check(
        "notes-ftrl-gd",
        "notes",
        "FTRL on R^d is gradient descent",
        "FTRL with (lambda/2)||w||^2 on linear losses over R^d plays w_{t+1} = w_t - z_t / lambda",
        "unconstrained, zero-mean ||z_t|| <= 1, lambda = 1, 10, 100, float64",
        "identity",
        "T",
        _ftrl_is_gd,
        note="measured: max |w_t(FTRL) - w_t(OGD, step 1/lambda)| up to T; bound: 1e-9",
    ),
    Check(
        "notes-ogd",
        "notes",
        "OGD theorem (any step)",
        "projected OGD from w_1 = 0: Regret_T(u) <= ||u||^2/(2 eta) + (eta/2) sum_t ||g_t||^2",
        "linear losses ||g_t|| <= 1 on the unit ball, eta = 0.01, 0.1; stochastic (drifting) and "
        "adaptive adversarial (g_t = w_t / ||w_t||); u = best point in hindsight",
        "bound",
        "T",
        _ogd,
        note="the adaptive adversary attains the bound at even T (ratio 1 up to rounding)",
    ),
    Check(
        "notes-ogd-ball",
        "notes",
        "OGD theorem, projection onto a ball",
        "Regret_T <= D^2/(2 eta) + eta G^2 T / 2, D = sup ||u - w_1||, G = sup ||g_t||",
        "as notes-ogd (D = G = 1)",
        "bound",
        "T",
        _ogd_ball,
    ),
    Check(
        "notes-hedge",
        "notes",
        "Hedge / EG (example 7, any eta)",
        "Hedge over m experts with losses in [0, 1]: Regret_T <= ln(m)/eta + eta T/8",
        "m = 10, eta = sqrt(8 ln m / T_max); stochastic losses with means in [0.3, 0.7] and "
        "the adaptive adversary (loss 1 on the heaviest expert); against the best expert",
        "bound",
        "T",
        _hedge,
    ),
    Check(
        "notes-ols",
        "notes",
        "online least squares (online ridge regression)",
        "FTRL with (lambda/2)||w||^2 on 0.5(<w, x_t> - y_t)^2: Regret_T(u) <= (lambda/2)||u||^2 "
        "+ max_t (r_t^2/2) d ln(1 + sum_t ||x_t||^2 / (lambda d)), r_t = <w_t, x_t> - y_t",
        "d = 5, ||x_t|| <= 1, lambda = 1; stochastic y = <u, x> + 0.1 noise; adversarial "
        "y_t = -sign(<w_t, x_t>); u = least squares in hindsight",
        "bound",
        "T",
        _ols,
        note="the spec states no bound for online least squares: checked is the FTRL lemma's "
        "bound (stability 0.5 r_t^2 x_t' A_t^-1 x_t, summed by the log-determinant lemma)",
    ),
    Check(
        "notes-omd",
        "notes",
        "OMD with a general mirror map",
        "Regret_T(u) <= B_psi(u, w_1)/eta + (eta/(2 sigma)) sum_t ||g_t||_*^2, psi sigma-strongly "
        "convex w.r.t. ||.|| (sigma = 1)",
        "linear losses, eta = 0.05: p-norm (q = 1.5) and quadratic (A SPD) maps on their unit "
        "balls with g_t in [-1, 1]^5, entropy on the simplex of 10 experts with losses in [0, 1]; "
        "stochastic and adaptive adversarial (sign(w_t); loss 1 on the heaviest expert)",
        "bound",
        "T",
        _omd,
    ),
)
