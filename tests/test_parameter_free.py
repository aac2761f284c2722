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

sys.path.insert(0, str(Path(__file__).parent))
import reference_denevi as ref  # noqa: E402
from tolerances import scaled_atol


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
        np.testing.assert_allclose(
            float(parameter_free.bettor_wealth(state)), expected_wealth, rtol=1e-12
        )


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
        wealth.append(float(parameter_free.bettor_wealth(state)))
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
        assert abs(float(parameter_free.bettor_wealth(state)) - mag.wealth) < 1e-12
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
        np.testing.assert_allclose(np.asarray(trace.prediction[k]), w, atol=scaled_atol(w), rtol=0)
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
        np.testing.assert_allclose(np.asarray(trace.prediction[k]), w, atol=scaled_atol(w), rtol=0)
        for j, m in enumerate(mags):
            m.step(float(gs[k, j]), k + 2)  # standalone KT: the textbook divisor k + 1


def test_direction_stays_in_unit_ball():
    learner = parameter_free.direction_magnitude("ons")
    params = parameter_free.DirectionMagnitudeParams(jnp.asarray(1.0), jnp.asarray(1.0))
    state = learner.init(params, jnp.zeros(4))
    for g in _gradient_stream(5, 100, 4):
        state = learner.update(state, params, jnp.asarray(g, jnp.float32))
        assert float(jnp.linalg.norm(state.direction)) <= 1.0 + 1e-6
        assert float(parameter_free.bettor_wealth(state.bet)) > 0


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
    traces = [0]

    def update(*args):
        traces[0] += 1
        return learner.update(*args)

    counted = learner._replace(update=update)
    gs = jnp.asarray(_gradient_stream(7, 30, 3), jnp.float32)
    finals, counts = [], []
    for wealth in (0.5, 2.0, 40.0):
        params = parameter_free.DirectionMagnitudeParams(jnp.asarray(wealth), jnp.asarray(1.0))
        _, tr = run_oco(counted, params, jnp.zeros(3), gs, losses.linear_objective)
        finals.append(float(tr.loss.sum()))
        counts.append(traces[0])
    assert counts[0] >= 1 and counts[1] == counts[0] and counts[2] == counts[0]
    assert len(set(finals)) == 3


def test_direction_magnitude_compares_by_value():
    # The same bettor gives an equal learner, so learners composed from it share compilations.
    assert parameter_free.direction_magnitude("ons") == parameter_free.direction_magnitude("ons")
    assert parameter_free.direction_magnitude("kt") != parameter_free.direction_magnitude("ons")


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


def test_log_wealth_survives_a_long_float32_stream():
    # 10^6 float32 steps of standalone KT (textbook divisor k + 1) on the 1-D linear losses g w:
    # g = -1/2 pays the bettor for h steps (the wealth grows to about e^(1.1e5), far beyond
    # float32, where W itself overflows), then g = +1/2 for h steps, after which the sum of the
    # coins is exactly 0, so beta = 0 and the bet is exactly 0 however large the wealth.
    h = 500_000
    g = np.concatenate([np.full(h, -0.5), np.full(h, 0.5)])
    params = parameter_free.CoinBettingParams(jnp.float32(1.0), jnp.float32(1.0))
    learner = parameter_free.coin_betting("kt")
    state, trace = run_oco(
        learner,
        params,
        jnp.zeros(1, jnp.float32),
        jnp.asarray(g[:, None], jnp.float32),
        losses.linear_objective,
        store_iterates=True,
    )
    iterates = np.asarray(trace.prediction[:, 0])
    # The float64 closed form: beta after k coins is -S_k / (k + 1); W_k = prod (1 - c beta_prev).
    sums = np.cumsum(g)
    beta = -sums / np.arange(2, 2 * h + 2)
    beta_prev = np.concatenate([[0.0], beta[:-1]])
    log_wealth = np.cumsum(np.log1p(-g * beta_prev))
    assert log_wealth.max() > 1e5  # far beyond float32 (log of its max is 88.7)
    with np.errstate(over="ignore"):
        direct = np.cumprod((1.0 - g * beta_prev).astype(np.float32), dtype=np.float32)
    assert np.isinf(direct).any()  # the direct form of the wealth overflows
    got = float(state.bet.log_wealth[0])
    assert np.isfinite(got) and abs(got - log_wealth[-1]) < 2e-2 * log_wealth[-1]
    assert float(state.bet.betting_fraction[0]) == 0.0
    assert float(learner.iterate(state, params)[0]) == 0.0  # finite, as it is mathematically
    # Iterate k is the bet before coin k: finite (and accurate) wherever |beta W| is
    # representable, infinite (never NaN) only where it is mathematically beyond float32.
    with np.errstate(divide="ignore"):
        log_bet = np.concatenate([[-np.inf], np.log(np.abs(beta)) + log_wealth])[:-1]
    assert not np.isnan(iterates).any()
    assert np.all(np.isinf(iterates[log_bet > 89.0]))
    small = log_bet < 80.0
    assert small.sum() > 100 and np.all(np.isfinite(iterates[small]))
    bet = np.concatenate([[0.0], np.sign(beta)])[:-1] * np.exp(np.minimum(log_bet, 80.0))
    np.testing.assert_allclose(iterates[small], bet[small], rtol=1e-3)


def test_ons_state_stays_finite_after_the_wealth_leaves_float32():
    # ONS on 10^6 float32 coins: -1 (the bettor wins 50% per step at beta = 1/2), then +1. The
    # direct form W - c m would read inf - inf = NaN at the first losing coin; the log form
    # keeps every state finite and the betting fraction moves back across 0.
    h = 500_000
    coins = jnp.concatenate([-jnp.ones(h), jnp.ones(h)]).astype(jnp.float32)

    def step(state, ck):
        c, k = ck
        state = parameter_free.bettor_update("ons", state, c, k)
        return state, (state.log_wealth, state.betting_fraction, state.ons_sum)

    state0 = parameter_free.bettor_init(jnp.float32(1.0))
    counts = jnp.arange(1, 2 * h + 1, dtype=jnp.int32)
    _, (log_wealth, beta, ons_sum) = jax.jit(lambda s: jax.lax.scan(step, s, (coins, counts)))(
        state0
    )
    log_wealth, beta = np.asarray(log_wealth), np.asarray(beta)
    assert np.all(np.isfinite(log_wealth)) and np.all(np.isfinite(np.asarray(ons_sum)))
    assert log_wealth[h - 1] > 1e5 * np.log(1.5)  # W beyond float32 after about 220 steps
    assert np.all(np.abs(beta) <= 0.5) and beta[h - 1] == 0.5 and beta[-1] < 0.0
