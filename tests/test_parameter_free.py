"""Parameter-free learners against closed forms and the float64 NumPy loops of
tests/reference_denevi.py, step by step."""

from __future__ import annotations

import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ojax import InputError, losses, parameter_free, run_oco
from ojax.run import _run_oco

sys.path.insert(0, str(Path(__file__).parent))
import reference_denevi as ref  # noqa: E402


def _coins(seed: int, n: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.clip(rng.normal(0.3, 0.6, n), -1.0, 1.0)


@pytest.mark.parametrize("wealth", [1.0, 0.25])
def test_kt_closed_form(x64, wealth):
    coins = _coins(0, 30)
    state = parameter_free.bettor_init(jnp.asarray(wealth, jnp.float64))
    expected_wealth = wealth
    for k, c in enumerate(coins, start=1):
        beta_prev = float(state.betting_fraction)
        state = parameter_free.bettor_update("kt", state, jnp.asarray(c), jnp.asarray(k))
        expected_wealth *= 1.0 - c * beta_prev
        # beta_k = minus the mean of the first k coins (divided by k, not k + 1).
        np.testing.assert_allclose(float(state.betting_fraction), -coins[:k].mean(), rtol=1e-12)
        np.testing.assert_allclose(float(state.wealth), expected_wealth, rtol=1e-12)


@pytest.mark.parametrize("pattern", ["alternating", "random", "constant"])
def test_ons_fraction_bounded_wealth_positive(pattern):
    n = 500
    if pattern == "alternating":
        coins = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    elif pattern == "constant":
        coins = -np.ones(n)
    else:
        coins = np.random.default_rng(1).uniform(-1, 1, n)
    state = parameter_free.bettor_init(jnp.asarray(1.0))
    fractions, wealth = [], []
    for k, c in enumerate(coins, start=1):
        state = parameter_free.bettor_update(
            "ons", state, jnp.asarray(c, jnp.float32), jnp.asarray(k)
        )
        fractions.append(float(state.betting_fraction))
        wealth.append(float(state.wealth))
    assert np.all(np.abs(fractions) <= 0.5)
    assert np.all(np.asarray(wealth) > 0)
    if pattern == "constant":  # a favourable stream: the bettor saturates and the wealth grows
        assert fractions[-1] == 0.5 and wealth[-1] > 1e3


def test_ons_matches_reference(x64):
    coins = _coins(2, 40)
    state = parameter_free.bettor_init(jnp.asarray(2.0, jnp.float64))
    mag = ref.Magnitude("ons", 2.0)
    for k, c in enumerate(coins, start=1):
        state = parameter_free.bettor_update("ons", state, jnp.asarray(c), jnp.asarray(k))
        mag.step(float(c), k)
        assert abs(float(state.betting_fraction) - mag.beta) < 1e-12
        assert abs(float(state.wealth) - mag.wealth) < 1e-12
    assert abs(float(state.ons_sum) - mag.a) < 1e-10


def _gradient_stream(seed: int, n: int, d: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    target = rng.normal(size=d)
    g = rng.normal(size=(n, d)) + 0.5 * target
    return g / np.maximum(1.0, np.linalg.norm(g, axis=1, keepdims=True))


@pytest.mark.parametrize("bettor", ["kt", "ons"])
@pytest.mark.parametrize("wealth,scale", [(1.0, 1.0), (3.5, 0.6)])
def test_direction_magnitude_matches_reference(x64, bettor, wealth, scale):
    d, n = 5, 60
    gs = _gradient_stream(3, n, d)
    x0 = np.linspace(-0.3, 0.4, d)
    learner = parameter_free.direction_magnitude(bettor)
    params = parameter_free.DirectionMagnitudeParams(jnp.asarray(wealth), jnp.asarray(scale))
    _, trace = run_oco(
        learner,
        params,
        jnp.asarray(x0),
        jnp.asarray(gs),
        losses.linear_objective,
        store_iterates=True,
    )
    dm = ref.DirectionMagnitude(bettor, d, wealth, scale)
    for k in range(n):
        w = x0 + dm.point()
        np.testing.assert_allclose(np.asarray(trace.iterate[k]), w, atol=1e-9, rtol=0)
        assert abs(float(trace.loss[k]) - float(gs[k] @ w)) < 1e-9
        dm.step(gs[k], k + 1)


@pytest.mark.parametrize("bettor", ["kt", "ons"])
def test_coin_betting_coordinatewise_matches_reference(x64, bettor):
    d, n = 3, 40
    gs = np.clip(np.random.default_rng(4).normal(-0.2, 0.5, (n, d)), -1, 1)
    learner = parameter_free.coin_betting(bettor)
    params = parameter_free.CoinBettingParams(jnp.asarray(1.5), jnp.asarray(1.0))
    _, trace = run_oco(
        learner, params, jnp.zeros(d), jnp.asarray(gs), losses.linear_objective, store_iterates=True
    )
    mags = [ref.Magnitude(bettor, 1.5) for _ in range(d)]
    for k in range(n):
        w = np.array([m.value() for m in mags])
        np.testing.assert_allclose(np.asarray(trace.iterate[k]), w, atol=1e-9, rtol=0)
        for j, m in enumerate(mags):
            m.step(float(gs[k, j]), k + 2)  # standalone KT: the textbook divisor k + 1


def test_direction_stays_in_unit_ball():
    learner = parameter_free.direction_magnitude("ons")
    params = parameter_free.DirectionMagnitudeParams(jnp.asarray(1.0), jnp.asarray(1.0))
    state = learner.init(params, jnp.zeros(4))
    for g in _gradient_stream(5, 100, 4):
        state = learner.update(state, params, jnp.asarray(g, jnp.float32))
        assert float(jnp.linalg.norm(state.direction)) <= 1.0 + 1e-6
        assert float(state.bet.wealth) > 0


def test_parameter_free_average_regret_vanishes():
    # Quadratic losses 0.5 ||w - z_t||^2 around a far point, with no step size to tune: the
    # average regret against the best fixed point (the mean of the z_t) decreases towards 0.
    rng = np.random.default_rng(6)
    zs = jnp.asarray(np.array([2.0, -1.0, 1.0]) + 0.3 * rng.normal(size=(3000, 3)), jnp.float32)
    best = 0.5 * jnp.sum((zs - zs.mean(axis=0, keepdims=True)) ** 2, axis=1)
    params = parameter_free.DirectionMagnitudeParams(jnp.asarray(1.0), jnp.asarray(0.25))
    for bettor in ("kt", "ons"):
        _, trace = run_oco(
            parameter_free.direction_magnitude(bettor),
            params,
            jnp.zeros(3),
            zs,
            losses.quadratic_objective,
        )
        regret = np.cumsum(np.asarray(trace.loss - best))
        average = regret / np.arange(1, 3001)
        assert np.all(np.isfinite(average))
        assert average[-1] < 0.5 * average[299] and average[-1] < 0.1


def test_no_recompile_across_wealth_values():
    learner = parameter_free.direction_magnitude("kt")
    gs = jnp.asarray(_gradient_stream(7, 30, 3), jnp.float32)
    before = _run_oco._cache_size()
    finals = []
    for wealth in (0.5, 2.0, 40.0):
        params = parameter_free.DirectionMagnitudeParams(jnp.asarray(wealth), jnp.asarray(1.0))
        _, tr = run_oco(learner, params, jnp.zeros(3), gs, losses.linear_objective)
        finals.append(float(tr.loss.sum()))
    assert _run_oco._cache_size() - before == 1
    assert len(set(finals)) == 3


def test_vmap_over_wealth_equals_loop():
    learner = parameter_free.direction_magnitude("ons")
    gs = jnp.asarray(_gradient_stream(8, 30, 3), jnp.float32)
    wealths = jnp.asarray([0.1, 1.0, 10.0])

    def total(w):
        params = parameter_free.DirectionMagnitudeParams(w, jnp.asarray(1.0))
        return run_oco(learner, params, jnp.zeros(3), gs, losses.linear_objective)[1].loss

    batched = jax.vmap(total)(wealths)
    for i in range(3):
        np.testing.assert_allclose(batched[i], total(wealths[i]), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("wealth", [0.0, -1.0, float("nan")])
def test_bad_initial_wealth(wealth):
    params = parameter_free.DirectionMagnitudeParams(jnp.asarray(wealth), jnp.asarray(1.0))
    with pytest.raises(InputError, match="initial_wealth"):
        run_oco(
            parameter_free.direction_magnitude("kt"),
            params,
            jnp.zeros(2),
            jnp.ones((3, 2)),
            losses.linear_objective,
        )


def test_bad_scale_and_bettor():
    params = parameter_free.CoinBettingParams(jnp.asarray(1.0), jnp.asarray(0.0))
    with pytest.raises(InputError, match="gradient_scale"):
        run_oco(
            parameter_free.coin_betting("ons"),
            params,
            jnp.zeros(2),
            jnp.ones((3, 2)),
            losses.linear_objective,
        )
    with pytest.raises(InputError, match="bettor"):
        parameter_free.direction_magnitude("adagrad")


def test_nan_gradients_rejected():
    params = parameter_free.DirectionMagnitudeParams(jnp.asarray(1.0), jnp.asarray(1.0))
    zs = jnp.ones((3, 2)).at[1, 0].set(jnp.nan)
    with pytest.raises(InputError, match="zs"):
        run_oco(
            parameter_free.direction_magnitude("kt"),
            params,
            jnp.zeros(2),
            zs,
            losses.linear_objective,
        )
