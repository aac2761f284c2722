"""Trajectory parity of ojax's parameter-free baselines with ``optax.contrib`` (run directly and
through ``ojax.optax_learner``) on the same losses, step by step, in float64.

Where optax follows another convention than the paper, the test shows both facts: optax equals
the NumPy loop of tests/reference_parameter_free.py switched to optax's convention, ojax equals
the loop as the paper writes it, and the difference has the explained form (a closed-form first
step, a scale, an exit). Every learner plays on the same loss sequence: ``f_t(w) = <w, z_t>`` or
``||w - z_t||^2 / 2`` (the gradient depends on the point, so a difference shows in every
later iterate).
"""

from __future__ import annotations

import contextlib
import math
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from ojax import losses, oco, parameter_free, run_oco
from ojax.adapters import optax_learner

sys.path.insert(0, str(Path(__file__).parent))
import reference_parameter_free as ref  # noqa: E402

OBJECTIVES = {"linear": losses.linear_objective, "quadratic": losses.quadratic_objective}
RTOL = 1e-10  # rounding (optax applies x + (new - x)), relative to the largest |coordinate|


@contextlib.contextmanager
def _peer():
    """optax's own arithmetic mixes Python floats with int32 counts and broadcasts (1,) against
    (d,): allowed while a peer runs (the suite promotes nothing silently otherwise)."""
    with jax.numpy_dtype_promotion("standard"), jax.numpy_rank_promotion("allow"):
        yield


def _stream(objective: str, seed: int, n: int = 100, d: int = 4) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if objective == "linear":
        return np.clip(rng.normal(0.3 * rng.choice([-1, 1], d), 0.6, (n, d)), -1, 1)
    return rng.normal(1.5 * rng.normal(size=d), 0.5, (n, d))


X0 = np.linspace(-0.4, 0.3, 4)


def _optax_run(opt, zs, objective, x0=X0, jit=True):
    """optax's own loop, its step jitted as optax's users write it (`jit=False`: op by op):
    ``update`` then ``apply_updates``; the played points and the states."""
    gradient = OBJECTIVES[objective].grad

    def step(params, state, z):
        updates, state = opt.update(gradient(params, z), state, params)
        return optax.apply_updates(params, updates), state

    with _peer():
        jitted = jax.jit(step) if jit else step
        params = jnp.asarray(x0)
        state = opt.init(params)
        points, states = [], []
        for z in jnp.asarray(zs):
            points.append(np.asarray(params))
            states.append(state)
            params, state = jitted(params, state, z)
    return np.stack(points), states


def _through_adapter(make, params, zs, objective, x0=X0):
    with _peer():
        _, trace = run_oco(
            optax_learner(make),
            params,
            jnp.asarray(x0),
            jnp.asarray(zs),
            OBJECTIVES[objective],
            store_iterates=True,
        )
    return np.asarray(trace.prediction)


def _ours(learner, params, zs, objective, x0=X0):
    x0, zs = jnp.asarray(x0), jnp.asarray(zs)
    _, trace = run_oco(learner, params, x0, zs, OBJECTIVES[objective], store_iterates=True)
    return np.asarray(trace.prediction)


def relative_difference(a: np.ndarray, b: np.ndarray) -> float:
    """Largest |a - b| over every iterate, relative to the largest |coordinate| (at least 1)."""
    return float(np.max(np.abs(a - b)) / max(1.0, np.max(np.abs(b))))


def _f64(*values):
    return tuple(jnp.asarray(v, jnp.float64) for v in values)


# ------------------------------------------------------------------------------------- COCOB


@pytest.mark.parametrize("objective", ["linear", "quadratic"])
def test_cocob_agrees_with_optax_to_rounding(x64, objective):
    """optax's update ``-p + (p0 + ...)`` (questioned in optax issue 1227) is the difference to
    the paper's iterate: ``apply_updates`` lands on it to rounding. Its ``L_0 = 1e-8`` changes
    nothing once a coordinate has seen a gradient above 1e-8."""
    zs = _stream(objective, 1)
    ours = _ours(parameter_free.cocob(), parameter_free.CocobParams(*_f64(100.0)), zs, objective)
    peer, _ = _optax_run(optax.contrib.cocob(alpha=100.0), zs, objective)
    adapter = _through_adapter(
        optax.contrib.cocob, {"learning_rate": 1.0, "alpha": 100.0}, zs, objective
    )
    assert relative_difference(ours, peer) < RTOL
    assert relative_difference(adapter, peer) < RTOL
    assert np.max(np.abs(ours[-1] - X0)) > 0.1  # it moved


def test_cocob_optax_floor_breaks_scale_invariance(x64):
    """The paper's COCOB-Backprop is invariant to the scale of the gradients (``w - w_1`` is a
    ratio of gradient sums). optax (like the authors' code) starts ``L`` at 1e-8: a coordinate
    whose gradients are 1e-10 bets as if its gradient range were 1e-8, and moves far less (here
    over 50 times less) than the paper's bet; the other coordinates agree to rounding."""
    zs = _stream("linear", 2)
    tiny = zs.copy()
    tiny[:, 1] *= 1e-10
    params = parameter_free.CocobParams(*_f64(100.0))
    ours, ours_tiny = (_ours(parameter_free.cocob(), params, s, "linear") for s in (zs, tiny))
    peer, _ = _optax_run(optax.contrib.cocob(alpha=100.0), tiny, "linear")
    np.testing.assert_allclose(ours_tiny, ours, rtol=1e-9, atol=1e-12)  # scale-free
    np.testing.assert_allclose(ours_tiny, ref.cocob(tiny, "linear", X0, 100.0), atol=1e-12)
    floor = ref.cocob(tiny, "linear", X0, 100.0, initial_scale=1e-8)
    np.testing.assert_allclose(peer, floor, rtol=1e-9, atol=1e-15)
    moved_ours, moved_peer = np.abs(ours_tiny[:, 1] - X0[1]), np.abs(peer[:, 1] - X0[1])
    assert moved_ours.max() > 0.1 and moved_peer.max() < moved_ours.max() / 50
    others = [0, 2, 3]  # coordinates with gradients above the floor agree
    assert relative_difference(peer[:, others], ours_tiny[:, others]) < RTOL


# --------------------------------------------------------------------------------------- DoG


@pytest.mark.parametrize("objective", ["linear", "quadratic"])
def test_dog_agrees_with_optax_once_eps_is_mapped(x64, objective):
    """optax adds ``eps = 1e-8`` under the root of ``sum ||g||^2``: with ``eps = 0`` it agrees
    with the paper's DoG to rounding; with its default it equals the loop with that eps."""
    zs, r_eps = _stream(objective, 3), 1e-3
    ours = _ours(parameter_free.dog(), parameter_free.DoGParams(*_f64(r_eps)), zs, objective)
    exact, _ = _optax_run(optax.contrib.dog(init_step=("distance", r_eps), eps=0.0), zs, objective)
    default, _ = _optax_run(optax.contrib.dog(init_step=("distance", r_eps)), zs, objective)
    assert relative_difference(ours, exact) < RTOL
    assert relative_difference(default, ref.dog(zs, objective, X0, r_eps, eps=1e-8)) < RTOL
    assert 0 < relative_difference(default, ours) < 1e-6

    def make(r):
        return optax.contrib.dog(init_step=("distance", r), eps=0.0)

    assert relative_difference(_through_adapter(make, {"r": r_eps}, zs, objective), exact) < RTOL


def test_dog_heuristic_start_is_a_distance(x64):
    """optax's default ``("heuristic", 1e-6)`` is the paper's suggestion ``r_eps = 1e-6
    (1 + ||x_0||)``."""
    zs = _stream("quadratic", 4)
    r_eps = 1e-6 * (1 + np.linalg.norm(X0))
    ours = _ours(parameter_free.dog(), parameter_free.DoGParams(*_f64(r_eps)), zs, "quadratic")
    peer, _ = _optax_run(optax.contrib.dog(init_step=("heuristic", 1e-6), eps=0.0), zs, "quadratic")
    assert relative_difference(ours, peer) < RTOL


def test_layerwise_dog_transform_ascends_by_default(x64):
    """optax keeps a second DoG (optax issue 1509): ``optax.scale_by_distance_over_gradients``
    (layer-wise DoG; one array here, so layer-wise is global). Its ``global_scale`` defaults to
    +1, so used as an optimizer it moves along +g: its first step is exactly the mirror image
    of the paper's. With ``global_scale = -1`` it is the paper's DoG (to its eps)."""
    zs, reps = _stream("quadratic", 5), 1e-3
    r_eps = reps * (1 + np.linalg.norm(X0))
    ours = _ours(parameter_free.dog(), parameter_free.DoGParams(*_f64(r_eps)), zs, "quadratic")

    def ldog(global_scale):
        return optax.scale_by_distance_over_gradients(
            reps_rel=reps, eps=0.0, param_dtype=jnp.float64, global_scale=global_scale
        )

    descends, _ = _optax_run(ldog(-1.0), zs, "quadratic")
    ascends, _ = _optax_run(ldog(1.0), zs, "quadratic")
    assert relative_difference(descends, ours) < RTOL
    np.testing.assert_allclose(ascends[1] - X0, -(ours[1] - X0), rtol=1e-12)
    assert np.linalg.norm(ascends[-1] - X0) > 10 * np.linalg.norm(ours[-1] - X0)  # it diverges


# ----------------------------------------------------------------------------------- Prodigy

PRODIGY = (1e-3, 1.0, 0.9, 0.999, 1e-8)  # d0, gamma, beta1, beta2, eps


def _optax_prodigy(d0, gamma, beta1, beta2, eps):
    return optax.contrib.prodigy(learning_rate=gamma, betas=(beta1, beta2), eps=eps, estim_lr0=d0)


@pytest.mark.parametrize("objective", ["linear", "quadratic"])
def test_prodigy_differs_from_optax_by_bias_correction(x64, objective):
    """optax always applies Adam's bias correction (the paper's Adam version has none; the
    authors' package makes it an option) and uses ``d_{k+1}`` in the step's ``d eps``: optax
    equals the loop with exactly these two conventions, ojax the loop without them."""
    zs = _stream(objective, 6)
    params = parameter_free.ProdigyParams(*_f64(*PRODIGY))
    ours = _ours(parameter_free.prodigy(), params, zs, objective)
    peer, _ = _optax_run(_optax_prodigy(*PRODIGY), zs, objective)
    mapped = ref.prodigy(zs, objective, X0, *PRODIGY, optax_conventions=True)
    assert relative_difference(peer, mapped) < RTOL
    assert relative_difference(ours, ref.prodigy(zs, objective, X0, *PRODIGY)) < RTOL
    assert relative_difference(ours, peer) > 1e-3  # the difference is not rounding

    def make(d0, gamma):
        return _optax_prodigy(d0, gamma, *PRODIGY[2:])

    adapter = _through_adapter(make, {"d0": PRODIGY[0], "gamma": PRODIGY[1]}, zs, objective)
    assert relative_difference(adapter, peer) < RTOL


def test_prodigy_first_step_closed_forms(x64):
    """With eps = 0 the first step is ``-gamma d0 sign(g_0)`` in optax (bias-corrected Adam) and
    ``-gamma d0 (1 - beta1) / sqrt(1 - beta2) sign(g_0)`` in the paper (3.16 times larger at
    the default betas)."""
    values = (1e-3, 0.7, 0.9, 0.999, 0.0)
    zs = _stream("linear", 7, n=3)
    params = parameter_free.ProdigyParams(*_f64(*values))
    ours = _ours(parameter_free.prodigy(), params, zs, "linear")
    peer, _ = _optax_run(_optax_prodigy(*values), zs, "linear")
    d0, gamma, beta1, beta2, _ = values
    sign = np.sign(zs[0])
    np.testing.assert_allclose(peer[1] - X0, -gamma * d0 * sign, rtol=1e-12)
    paper = -gamma * d0 * (1 - beta1) / math.sqrt(1 - beta2) * sign
    np.testing.assert_allclose(ours[1] - X0, paper, rtol=1e-12)


def test_prodigy_zero_gradient_turns_optax_nan(x64):
    """A zero gradient makes optax's D estimate ``0 / ||s||_1 = 0 / 0``: its iterate (and its
    ``dadapt_adamw``'s) becomes NaN for good. The authors' package skips the D update when
    ``||s||_1 = 0``; so does ojax, which then learns from the next gradients."""
    zs = _stream("quadratic", 13, n=20)
    zs_zero = np.concatenate([np.tile(X0, (1, 1)), zs])  # f_1 = ||w - x0||^2 / 2: g_1 = 0
    peer, _ = _optax_run(_optax_prodigy(*PRODIGY), zs_zero, "quadratic")
    adamw, _ = _optax_run(optax.contrib.dadapt_adamw(), zs_zero, "quadratic")
    params = parameter_free.ProdigyParams(*_f64(*PRODIGY))
    ours = _ours(parameter_free.prodigy(), params, zs_zero, "quadratic")
    assert np.all(np.isnan(peer[2:])) and np.all(np.isnan(adamw[2:]))
    assert np.all(np.isfinite(ours)) and np.array_equal(ours[1], X0)
    np.testing.assert_allclose(ours, ref.prodigy(zs_zero, "quadratic", X0, *PRODIGY), atol=1e-12)
    assert np.linalg.norm(ours[-1] - X0) > 1e-3  # it moves on


def test_optax_has_no_dadaptation_sgd():
    """D-Adaptation: optax ships only the Adam form (``dadapt_adamw``, the paper's Algorithm 4),
    not SGD with D-Adaptation (Algorithm 3): there is no peer to compare ``dadapt_sgd`` with."""
    assert hasattr(optax.contrib, "dadapt_adamw")
    assert not any("dadapt" in name and "sgd" in name for name in dir(optax.contrib))


# ---------------------------------------------------------------------------------- Mechanic

MECHANIC = (0.5, 1e-6, 0.01)  # base SGD step, s_init, lambda


@pytest.mark.parametrize("objective", ["linear", "quadratic"])
def test_mechanic_differs_from_optax_by_its_later_conventions(x64, objective):
    """``optax.contrib.mechanize`` (the authors' JAX code) differs from the paper's Algorithm 1
    in: ``s_1 = s_init`` per beta (the paper: 0), the coin clipped to ``[-m_{t-1}, m_{t-1}]`` in
    the reward ("not part of the original paper", its comment says), the reward kept unclipped
    in the state (``max(0, r)`` only in the wealth), ``m`` taking ``|h| + eps``,
    ``Delta`` recomputed from the iterate with ``sum s + eps`` and ``||x|| + eps``: optax equals
    the loop with these conventions, ojax the loop without them."""
    zs = _stream(objective, 8, n=150)
    eta, s_init, lam = MECHANIC
    betas = parameter_free.BETAS
    base = oco.OGDParams(*_f64(eta, 1.0))
    params = parameter_free.MechanicParams(base, *_f64(s_init, lam), jnp.asarray(betas))
    ours = _ours(parameter_free.mechanic(oco.ogd("none")), params, zs, objective)
    opt = optax.contrib.mechanize(optax.sgd(eta), weight_decay=lam, s_init=s_init)
    peer, _ = _optax_run(opt, zs, objective)
    mapped = ref.mechanic_sgd(zs, objective, X0, eta, s_init, lam, betas, optax_conventions=True)
    assert relative_difference(peer, mapped) < RTOL
    assert relative_difference(ours, ref.mechanic_sgd(zs, objective, X0, *MECHANIC, betas)) < RTOL
    assert relative_difference(ours, peer) > 1e-6

    def make(eta, s_init):
        return optax.contrib.mechanize(optax.sgd(eta), weight_decay=lam, s_init=s_init)

    adapter = _through_adapter(make, {"eta": eta, "s_init": s_init}, zs, objective)
    assert relative_difference(adapter, peer) < RTOL


def test_mechanic_first_steps(x64):
    """The paper starts at ``s_1 = 0``: ``x_2 = x_1``. optax starts at ``s_init`` per beta and
    moves at once: ``x_2 = x_1 - s_init eta g_1``."""
    zs = _stream("linear", 9, n=3)
    eta, s_init, lam = MECHANIC
    base = oco.OGDParams(*_f64(eta, 1.0))
    params = parameter_free.MechanicParams(
        base, *_f64(s_init, lam), jnp.asarray(parameter_free.BETAS)
    )
    ours = _ours(parameter_free.mechanic(oco.ogd("none")), params, zs, "linear")
    peer, _ = _optax_run(optax.contrib.mechanize(optax.sgd(eta), lam, s_init=s_init), zs, "linear")
    assert np.array_equal(ours[1], X0)
    np.testing.assert_allclose(peer[1], X0 - s_init * eta * zs[0], rtol=1e-12)


# ----------------------------------------------------------------------------- Schedule-Free


def _sf_params(gamma, beta, warmup=0.0):
    return parameter_free.ScheduleFreeParams(*_f64(gamma, beta, warmup))


@pytest.mark.parametrize("beta", [0.9, 0.5])
def test_schedule_free_weighted_agrees_with_optax(x64, beta):
    """Without warmup optax's averaging ``c = gamma^2 / sum gamma^2`` (weight power 2) is the
    ``"weighted"`` form: the played ``y`` and the average ``x`` agree to rounding."""
    zs, gamma = _stream("quadratic", 10), 0.3
    params = _sf_params(gamma, beta)
    ours = _ours(parameter_free.schedule_free_sgd("weighted"), params, zs, "quadratic")
    opt = optax.contrib.schedule_free_sgd(learning_rate=gamma, b1=beta)
    peer, states = _optax_run(opt, zs, "quadratic")
    assert relative_difference(ours, peer) < RTOL
    _, xs = ref.schedule_free_sgd(zs, "quadratic", X0, gamma, beta, averaging="weighted")
    with _peer():
        peer_x = np.stack(
            [optax.contrib.schedule_free_eval_params(s, p) for s, p in zip(states, peer)]
        )
    assert relative_difference(peer_x, xs) < RTOL

    def make(gamma, beta):
        return optax.contrib.schedule_free_sgd(learning_rate=gamma, b1=beta)

    adapter = _through_adapter(make, {"gamma": gamma, "beta": beta}, zs, "quadratic")
    assert relative_difference(adapter, peer) < RTOL


def test_schedule_free_uniform_keeps_z1_in_the_average(x64):
    """The paper's ``c_{t+1} = 1 / (t + 1)`` (its Theorem 1) averages ``z_1 .. z_T``; optax's
    weights give ``z_1`` none (``c_2 = 1``): after one step optax has ``x_2 = z_2`` and the
    uniform form ``(z_1 + z_2) / 2``."""
    zs, gamma, beta = _stream("quadratic", 11, n=5), 0.3, 0.9
    uniform = parameter_free.schedule_free_sgd("uniform")
    ours = _ours(uniform, _sf_params(gamma, beta), zs, "quadratic")
    peer, _ = _optax_run(optax.contrib.schedule_free_sgd(gamma, b1=beta), zs, "quadratic")
    z2 = X0 - gamma * (X0 - zs[0])  # y_1 = x_1 = z_1 = x0
    np.testing.assert_allclose(peer[1], z2, rtol=1e-12)  # y_2 = (1 - b) z_2 + b x_2, x_2 = z_2
    np.testing.assert_allclose(ours[1], (1 - beta) * z2 + beta * (X0 + z2) / 2, rtol=1e-12)


def test_schedule_free_optax_warmup_lags_one_step(x64):
    """With a warmup, optax's SGD step reads its schedule at the count before the update (0 at
    the first step) while the averaging weights read it one step later: its z-steps lag the
    paper's ``gamma_t = gamma min(1, t / T_warmup)`` by one, and its first update does not move.
    optax equals the loop with that lag (and its schedule's values, computed in float32: 1e-8
    off the formula); ojax the loop without it."""
    zs, gamma, beta, warmup = _stream("quadratic", 12), 0.4, 0.9, 10
    weighted = parameter_free.schedule_free_sgd("weighted")
    ours = _ours(weighted, _sf_params(gamma, beta, warmup), zs, "quadratic")
    opt = optax.contrib.schedule_free_sgd(gamma, warmup_steps=warmup, b1=beta)
    peer, _ = _optax_run(opt, zs, "quadratic", jit=False)  # the schedule's values op by op
    with _peer():
        schedule = optax.warmup_constant_schedule(0.0, gamma, warmup)
        rates = [float(schedule(jnp.int32(k))) for k in range(len(zs) + 1)]  # as optax calls it
    lagged, _ = ref.schedule_free_sgd(
        zs, "quadratic", X0, gamma, beta, warmup, "weighted", True, rates.__getitem__
    )
    paper, _ = ref.schedule_free_sgd(zs, "quadratic", X0, gamma, beta, warmup, "weighted")
    assert relative_difference(peer, lagged) < RTOL
    assert relative_difference(ours, paper) < RTOL
    assert np.array_equal(peer[1], X0) and not np.allclose(ours[1], X0)
    assert relative_difference(ours, peer) > 1e-3
