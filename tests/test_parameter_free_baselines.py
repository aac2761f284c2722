"""The parameter-free baselines (COCOB-Backprop, per-coordinate KT, DoG, D-Adaptation SGD,
Prodigy, Mechanic, Schedule-Free SGD) against the float64 NumPy loops of
tests/reference_parameter_free.py, every iterate; their edge cases and input checks."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from ojax import InputError, losses, oco, parameter_free, run_oco
from ojax.adapters import optax_learner
from ojax.validation import DivergedError

sys.path.insert(0, str(Path(__file__).parent))
import reference_parameter_free as ref  # noqa: E402

OBJECTIVES = {"linear": losses.linear_objective, "quadratic": losses.quadratic_objective}


def _stream(objective: str, seed: int, n: int = 80, d: int = 4) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if objective == "linear":  # gradients with a drift, clipped to [-1, 1] per coordinate
        return np.clip(rng.normal(0.3 * rng.choice([-1, 1], d), 0.6, (n, d)), -1, 1)
    return rng.normal(1.5 * rng.normal(size=d), 0.5, (n, d))  # quadratic: a far target


def _played(learner, params, zs, objective, x0):
    _, trace = run_oco(
        learner,
        params,
        jnp.asarray(x0),
        jnp.asarray(zs),
        OBJECTIVES[objective],
        store_iterates=True,
    )
    return np.asarray(trace.prediction)


def _assert_iterates(got: np.ndarray, want: np.ndarray, rtol: float = 1e-10) -> float:
    """Every iterate within ``rtol`` of the largest |coordinate| of the reference; returns the
    largest difference relative to that scale."""
    scale = max(1.0, float(np.max(np.abs(want))))
    diff = float(np.max(np.abs(got - want)))
    assert diff <= rtol * scale, f"max difference {diff:.3e} (scale {scale:.3g})"
    return diff / scale


def _x0(d: int = 4) -> np.ndarray:
    return np.linspace(-0.4, 0.3, d)


def _f64(*values):
    return tuple(jnp.asarray(v, jnp.float64) for v in values)


@pytest.mark.parametrize("objective", ["linear", "quadratic"])
@pytest.mark.parametrize("alpha", [100.0, 3.0])
def test_cocob_matches_reference(x64, objective, alpha):
    zs = _stream(objective, 1)
    got = _played(
        parameter_free.cocob(), parameter_free.CocobParams(*_f64(alpha)), zs, objective, _x0()
    )
    _assert_iterates(got, ref.cocob(zs, objective, _x0(), alpha))


@pytest.mark.parametrize("epsilon,scale", [(1.0, 1.0), (0.05, 0.5)])
def test_kt_coordinate_matches_reference(x64, epsilon, scale):
    zs = _stream("linear", 2)
    params = parameter_free.CoinBettingParams(*_f64(epsilon, scale))
    got = _played(parameter_free.coin_betting("kt"), params, zs, "linear", _x0())
    _assert_iterates(got, ref.kt_coordinate(zs, "linear", _x0(), epsilon, scale))


@pytest.mark.parametrize("objective", ["linear", "quadratic"])
@pytest.mark.parametrize("r_eps", [1e-6, 0.3])
def test_dog_matches_reference(x64, objective, r_eps):
    zs = _stream(objective, 3)
    params = parameter_free.DoGParams(*_f64(r_eps))
    got = _played(parameter_free.dog(), params, zs, objective, _x0())
    _assert_iterates(got, ref.dog(zs, objective, _x0(), r_eps))


@pytest.mark.parametrize("objective", ["linear", "quadratic"])
@pytest.mark.parametrize(
    "d0,gamma,growth", [(1e-6, 1.0, math.inf), (0.1, 0.5, math.inf), (1e-6, 1.0, 1.5)]
)
def test_dadapt_sgd_matches_reference(x64, objective, d0, gamma, growth):
    zs = _stream(objective, 4)
    params = parameter_free.DAdaptParams(*_f64(d0, gamma))
    got = _played(parameter_free.dadapt_sgd(growth), params, zs, objective, _x0())
    _assert_iterates(got, ref.dadapt_sgd(zs, objective, _x0(), d0, gamma, growth))


def test_dadapt_growth_rate_stops_the_blow_up_of_a_tiny_first_gradient(x64):
    """Every step is scaled by 1 / ||g_0||: after a first gradient of norm 1e-4 the paper's
    rule overflows even in float64 within 500 steps (the runner stops it with
    DivergedError); a slow cap on d's growth (the authors' growth_rate, 1.02) keeps the run
    bounded and converging, each iterate the reference's."""
    zs = _stream("quadratic", 12, n=500)
    zs[0] = 1e-4 / 2.0  # the first gradient x0 - z_0, x0 = 0: norm 1e-4 in d = 4
    x0, params = np.zeros(4), parameter_free.DAdaptParams(*_f64(1e-6, 1.0))
    with pytest.raises(DivergedError, match="state.d"):
        _played(parameter_free.dadapt_sgd(), params, zs, "quadratic", x0)
    capped = _played(parameter_free.dadapt_sgd(1.02), params, zs, "quadratic", x0)
    target = zs[1:].mean(0)
    assert np.linalg.norm(capped[-1] - target) < 0.4 * np.linalg.norm(target)
    _assert_iterates(capped, ref.dadapt_sgd(zs, "quadratic", x0, 1e-6, 1.0, 1.02))


def test_dadapt_growth_rate_is_checked():
    for bad in (0.5, math.nan):
        with pytest.raises(InputError, match=r"growth_rate must lie in \[1.0, inf\]"):
            parameter_free.dadapt_sgd(bad)


@pytest.mark.parametrize("objective", ["linear", "quadratic"])
@pytest.mark.parametrize(
    "values", [(1e-6, 1.0, 0.9, 0.999, 1e-8), (1e-2, 0.5, 0.5, 0.9, 1e-3)], ids=["paper", "other"]
)
def test_prodigy_matches_reference(x64, objective, values):
    zs = _stream(objective, 5)
    params = parameter_free.ProdigyParams(*_f64(*values))
    got = _played(parameter_free.prodigy(), params, zs, objective, _x0())
    _assert_iterates(got, ref.prodigy(zs, objective, _x0(), *values))


def _mechanic_params(eta, s_init, lam, betas):
    base = oco.OGDParams(*_f64(eta, 1.0))
    return parameter_free.MechanicParams(base, *_f64(s_init, lam), jnp.asarray(betas, jnp.float64))


@pytest.mark.parametrize("objective", ["linear", "quadratic"])
@pytest.mark.parametrize(
    "eta,s_init,lam,betas",
    [(1.0, 1e-8, 0.01, parameter_free.BETAS), (0.05, 1e-3, 0.0, (0.5, 0.99))],
    ids=["paper", "other"],
)
def test_mechanic_on_ogd_matches_reference(x64, objective, eta, s_init, lam, betas):
    zs = _stream(objective, 6, n=120)
    learner = parameter_free.mechanic(oco.ogd("none"))
    got = _played(learner, _mechanic_params(eta, s_init, lam, betas), zs, objective, _x0())
    want = ref.mechanic_sgd(zs, objective, _x0(), eta, s_init, lam, betas)
    assert np.array_equal(got[:2], np.stack([_x0(), _x0()]))  # s_1 = s_2 = 0: x_1 = x_2 = x_ref
    assert np.max(np.abs(want[-1] - _x0())) > 0.1  # the scale has grown: it learns
    _assert_iterates(got, want)


def _heavy_ball(learning_rate):
    return optax.sgd(learning_rate, momentum=0.9)


def test_mechanic_plays_the_scaled_displacement_of_any_base(x64):
    """On top of KT coin betting and of an optax optimizer (heavy ball), the played point is
    ``x_ref + (sum s) (base iterate - x_ref)`` at every step, and the runs stay finite."""
    zs = jnp.asarray(_stream("quadratic", 7))
    x0 = jnp.asarray(_x0())
    bases = {
        "kt": (parameter_free.coin_betting("kt"), parameter_free.CoinBettingParams(*_f64(1, 0.2))),
        "momentum": (optax_learner(_heavy_ball), {"learning_rate": jnp.float64(0.1)}),
    }
    for base, base_params in bases.values():
        learner = parameter_free.mechanic(base)
        params = parameter_free.MechanicParams(
            base_params, *_f64(1e-8, 0.01), jnp.asarray(parameter_free.BETAS)
        )
        state = learner.init(params, x0)
        for z in zs:
            w = learner.iterate(state, params)
            y = base.iterate(state.base, params.base)
            np.testing.assert_allclose(w, x0 + jnp.sum(state.scale) * (y - x0), rtol=1e-14)
            state = learner.update(state, params, w - z)
        assert np.all(np.isfinite(np.asarray(learner.iterate(state, params))))
        assert float(jnp.sum(state.scale)) > 1e-6  # the scale left s_init


@pytest.mark.parametrize("averaging", parameter_free.AVERAGING)
@pytest.mark.parametrize("gamma,beta,warmup", [(0.3, 0.9, 0), (0.1, 0.0, 0), (0.5, 1.0, 7)])
def test_schedule_free_matches_reference(x64, averaging, gamma, beta, warmup):
    zs = _stream("quadratic", 8)
    learner = parameter_free.schedule_free_sgd(averaging)
    params = parameter_free.ScheduleFreeParams(*_f64(gamma, beta, warmup))
    ys, xs = ref.schedule_free_sgd(zs, "quadratic", _x0(), gamma, beta, warmup, averaging)
    _assert_iterates(_played(learner, params, zs, "quadratic", _x0()), ys)
    state = learner.init(params, jnp.asarray(_x0()))
    for t, z in enumerate(zs):
        np.testing.assert_allclose(parameter_free.schedule_free_average(state), xs[t], atol=1e-12)
        state = learner.update(state, params, learner.iterate(state, params) - z)


def test_schedule_free_uniform_average_is_the_mean_of_z(x64):
    learner = parameter_free.schedule_free_sgd("uniform")
    params = parameter_free.ScheduleFreeParams(*_f64(0.2, 0.7, 0))
    state, zs_seen = learner.init(params, jnp.asarray(_x0())), [np.asarray(_x0())]
    for z in _stream("quadratic", 9, n=30):
        state = learner.update(state, params, learner.iterate(state, params) - z)
        zs_seen.append(np.asarray(state.z))
        np.testing.assert_allclose(state.x, np.mean(zs_seen, axis=0), rtol=1e-12)


# ----------------------------------------------------------------------------------------------
# edge cases: zero gradients (the 0/0 limits), long float32 streams, bad input

ZERO_SAFE = {
    "cocob": (parameter_free.cocob(), lambda: parameter_free.CocobParams(jnp.float32(100.0))),
    "dog": (parameter_free.dog(), lambda: parameter_free.DoGParams(jnp.float32(1e-4))),
    "dadapt_sgd": (
        parameter_free.dadapt_sgd(),
        lambda: parameter_free.DAdaptParams(jnp.float32(1e-6), jnp.float32(1.0)),
    ),
    "prodigy": (
        parameter_free.prodigy(),
        lambda: parameter_free.ProdigyParams(*map(jnp.float32, (1e-6, 1.0, 0.9, 0.999, 0.0))),
    ),
}


@pytest.mark.parametrize("name", sorted(ZERO_SAFE))
def test_zero_gradients_keep_the_start(name):
    """Zero gradients (the loss 0 w) leave every learner at x0 with a finite state (the
    paper's 0/0 ratios taken as their limits, Prodigy with eps = 0 included)."""
    learner, params = ZERO_SAFE[name]
    x0 = jnp.asarray(_x0(), jnp.float32)
    state, trace = run_oco(
        learner, params(), x0, jnp.zeros((20, 4)), losses.linear_objective, store_iterates=True
    )
    assert np.array_equal(np.asarray(trace.prediction), np.tile(np.asarray(x0), (20, 1)))
    assert all(np.all(np.isfinite(np.asarray(leaf))) for leaf in jax.tree.leaves(state))


def test_cocob_coordinate_without_gradient_stays(x64):
    zs = _stream("linear", 10)
    zs[:, 2] = 0.0
    params = parameter_free.CocobParams(*_f64(100))
    got = _played(parameter_free.cocob(), params, zs, "linear", _x0())
    assert np.all(got[:, 2] == _x0()[2]) and np.all(np.isfinite(got))


def test_dadapt_exits_when_the_first_gradient_is_zero(x64):
    zs = _stream("linear", 11)
    zs[0] = 0.0
    params = parameter_free.DAdaptParams(*_f64(1e-3, 1.0))
    got = _played(parameter_free.dadapt_sgd(), params, zs, "linear", _x0())
    assert np.array_equal(got, np.tile(_x0(), (len(zs), 1)))
    _assert_iterates(got, ref.dadapt_sgd(zs, "linear", _x0(), 1e-3, 1.0))


def test_long_float32_streams_stay_finite():
    """2 10^5 float32 steps of every baseline on quadratic losses around a far point (each
    adapts its scale to the distance 30) stay finite and end near the target."""
    n, d = 200_000, 3
    target = np.array([30.0, -20.0, 10.0])
    zs = jnp.asarray(target + np.random.default_rng(12).normal(0, 0.5, (n, d)), jnp.float32)
    learners = dict(ZERO_SAFE)
    learners["mechanic"] = (
        parameter_free.mechanic(oco.ogd("none")),
        lambda: parameter_free.MechanicParams(
            oco.OGDParams(jnp.float32(1.0), jnp.float32(1.0)),
            jnp.float32(1e-8),
            jnp.float32(0.01),
            parameter_free.default_betas(),
        ),
    )
    learners["schedule_free_sgd"] = (
        parameter_free.schedule_free_sgd("weighted"),
        lambda: parameter_free.ScheduleFreeParams(*map(jnp.float32, (0.5, 0.9, 100.0))),
    )
    for name, (learner, params) in learners.items():
        state, trace = run_oco(
            learner, params(), jnp.zeros(d, jnp.float32), zs, losses.quadratic_objective
        )
        loss = np.asarray(trace.loss)
        assert np.all(np.isfinite(loss)), name
        assert all(np.all(np.isfinite(np.asarray(leaf))) for leaf in jax.tree.leaves(state)), name
        assert loss[-1000:].mean() < 0.05 * loss[0], name


@pytest.mark.parametrize(
    "learner,params,match",
    [
        (parameter_free.cocob(), parameter_free.CocobParams(jnp.float32(0.0)), "alpha"),
        (parameter_free.dog(), parameter_free.DoGParams(jnp.float32(-1.0)), "initial_distance"),
        (
            parameter_free.dadapt_sgd(),
            parameter_free.DAdaptParams(jnp.float32(1e-6), jnp.float32(jnp.nan)),
            "learning_rate",
        ),
        (
            parameter_free.prodigy(),
            parameter_free.ProdigyParams(*map(jnp.float32, (1e-6, 1.0, 1.0, 0.999, 1e-8))),
            "beta1",
        ),
        (
            parameter_free.mechanic(oco.ogd("none")),
            parameter_free.MechanicParams(
                oco.OGDParams(jnp.float32(1.0), jnp.float32(1.0)),
                jnp.float32(1e-8),
                jnp.float32(0.01),
                jnp.asarray([0.9, 1.5], jnp.float32),
            ),
            "betas",
        ),
        (
            parameter_free.mechanic(oco.ogd("none")),
            parameter_free.MechanicParams(
                oco.OGDParams(jnp.float32(-1.0), jnp.float32(1.0)),
                jnp.float32(1e-8),
                jnp.float32(0.01),
                parameter_free.default_betas(),
            ),
            "learning_rate",  # the base learner's own check
        ),
        (
            parameter_free.schedule_free_sgd(),
            parameter_free.ScheduleFreeParams(*map(jnp.float32, (0.5, 1.2, 0.0))),
            "beta",
        ),
    ],
    ids=["cocob", "dog", "dadapt", "prodigy", "mechanic-betas", "mechanic-base", "schedule-free"],
)
def test_bad_params_are_refused(learner, params, match):
    with pytest.raises(InputError, match=match):
        run_oco(learner, params, jnp.zeros(2), jnp.ones((3, 2)), losses.quadratic_objective)


def test_bad_static_options_are_refused():
    with pytest.raises(InputError, match="averaging"):
        parameter_free.schedule_free_sgd("polyak")


def test_mechanic_checks_the_base_start(x64):
    learner = parameter_free.mechanic(oco.ogd("l2_ball"))
    params = parameter_free.MechanicParams(
        oco.OGDParams(*_f64(1.0, 0.5)), *_f64(1e-8, 0.0), jnp.asarray(parameter_free.BETAS)
    )
    with pytest.raises(InputError, match="x0"):
        run_oco(learner, params, jnp.ones(2), jnp.ones((3, 2)), losses.quadratic_objective)
