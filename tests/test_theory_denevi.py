"""The Denevi et al. (2020) checks of ojax/theory/denevi.py, beyond the generic "under its bound"
test of tests/test_theory.py: the bounds are not vacuous (a floor on measured / bound at the
largest horizon), the adversarial instances are adversarial (brute force over every sign
sequence; the regret grows at the stated rate), the comparators are optimal (an LP solver, no
perturbation improves them), and the runs are the learners they claim (float64 NumPy loops of
tests/reference_denevi.py).
"""

from __future__ import annotations

import functools
import itertools
import math
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.optimize import linprog

import ojax.theory as theory
from ojax import losses
from ojax.parameter_free import CoinBettingParams, coin_betting
from ojax.runner import run_oco
from ojax.theory import denevi
from ojax.theory.base import CheckConfig, fitted_slope

sys.path.insert(0, str(Path(__file__).parent))
import reference_denevi as ref  # noqa: E402

QUICK = CheckConfig(quick=True, num_seeds=3, seed=0, x64=True)
NAMES = ("prop1", "prop2", "prop3", "cor4", "thm5", "lazy", "prop7")
# measured / bound at the largest horizon must stay above these (quick sizes measure 0.76,
# 0.49, 0.25, 0.064, 0.072, 0.081, 0.060): a bound made trivially loose fails
FLOORS = {
    "prop1": 0.5,
    "prop2": 0.4,
    "prop3": 0.15,
    "cor4": 0.03,
    "thm5": 0.03,
    "lazy": 0.03,
    "prop7": 0.02,
}


@functools.cache
def outcome(name: str):
    return theory.CHECKS[f"denevi-{name}"].compute(QUICK)


def test_every_result_is_a_registered_bound_check():
    names = [n for n in theory.CHECKS if n.startswith("denevi-")]
    assert names == [f"denevi-{n}" for n in NAMES]
    for name in names:
        check = theory.CHECKS[name]
        assert check.document == "denevi2020" and check.kind == "bound" and check.note


@pytest.mark.parametrize("name", NAMES)
def test_bound_holds_and_is_not_vacuous(name):
    result = outcome(name)
    assert np.all(np.diff(result.horizons) > 0)
    for method, m in result.methods.items():
        h = len(result.horizons)
        assert m.measured.shape[1:] == (h,) and m.bound.shape[-1] == h, method
        assert np.all(np.isfinite(m.measured)) and np.all(np.isfinite(m.bound)), method
        ratio = m.measured / m.bound
        assert np.all(ratio <= 1.0), (method, ratio.max())
        assert np.min(ratio[..., -1]) >= FLOORS[name], (method, ratio[..., -1])


# ----------------------------------------------------------------------------------------------
# Proposition 1


def _kt_wealth_numpy(coins) -> float:
    """Textbook KT (divisor k + 1) with the reference bettor (its divisor is the count given)."""
    bettor = ref.Magnitude("kt", denevi.EPSILON)
    for k, c in enumerate(coins, start=1):
        bettor.step(float(c), k + 1)
    return bettor.wealth


def test_kt_worst_case_is_the_maximum_over_every_sign_sequence():
    length, u = 10, 1.0
    best = -np.inf
    for signs in itertools.product((-1.0, 1.0), repeat=length):
        best = max(best, denevi.EPSILON - _kt_wealth_numpy(signs) - u * sum(signs))
    with jax.enable_x64(True):
        measured = denevi.kt_worst_regret(np.array([length]), u, jnp.float64)
    np.testing.assert_allclose(measured, [best], rtol=1e-10)


def test_kt_regret_is_the_regret_of_the_played_points():
    # the check reads the regret off the final wealth: eps - W_T = sum of the losses c_t w_t
    coins = denevi.balanced_signs(np.array([7]), 40, 48)[0]
    with jax.enable_x64(True):
        params = CoinBettingParams(jnp.float64(denevi.EPSILON), jnp.float64(1.0))
        state, trace = run_oco(
            coin_betting("kt"), params, jnp.zeros(1), coins[:, None], losses.linear_objective
        )
        wealth = float(jnp.exp(state.bet.log_wealth[0]))
    np.testing.assert_allclose(np.sum(np.asarray(trace.loss)), denevi.EPSILON - wealth, rtol=1e-10)
    np.testing.assert_allclose(wealth, _kt_wealth_numpy(coins[:40]), rtol=1e-10)


def test_kt_worst_regret_grows_like_sqrt_t_log_t():
    result = outcome("prop1")
    for m in result.methods.values():
        assert 0.5 <= fitted_slope(result.horizons, m.measured) <= 0.75


def test_kt_worst_regret_in_float32_matches_float64():
    result = theory.CHECKS["denevi-prop1"].compute(QUICK._replace(x64=False))
    for method, m in outcome("prop1").methods.items():
        np.testing.assert_allclose(result.methods[method].measured, m.measured, rtol=1e-3)


# ----------------------------------------------------------------------------------------------
# Proposition 2


def test_direction_learner_is_the_reductions_and_the_adversary_is_adaptive():
    rng = np.random.default_rng(0)
    zs = rng.normal(size=(60, 3))
    zs /= np.linalg.norm(zs, axis=1, keepdims=True)
    direction = ref.DirectionMagnitude("kt", 3, 1.0)
    regret, grads = 0.0, []
    for k, z in enumerate(zs, start=1):
        v = direction.v.copy()
        g = (1.0 if v @ z >= 0 else -1.0) * z
        regret += float(g @ v)
        grads.append(g)
        direction.step(g, k)
    regret += float(np.linalg.norm(np.sum(grads, axis=0)))
    with jax.enable_x64(True):
        measured = denevi.direction_regret(jnp.asarray(zs))
    np.testing.assert_allclose(float(measured[-1]), regret, rtol=1e-10)


def test_direction_comparator_is_the_best_point_of_the_ball():
    rng = np.random.default_rng(1)
    g = rng.normal(size=3)
    best = -g / np.linalg.norm(g)
    others = best + 0.1 * rng.normal(size=(1000, 3))
    others /= np.maximum(1.0, np.linalg.norm(others, axis=1, keepdims=True))
    assert np.all(others @ g >= best @ g - 1e-12)


def test_direction_adversary_gets_the_sqrt_rate():
    result = outcome("prop2")
    for m in result.methods.values():
        assert 0.45 <= fitted_slope(result.horizons, m.measured) <= 0.55


# ----------------------------------------------------------------------------------------------
# Proposition 3 and the realizable task


def test_realizable_comparator_has_zero_loss_at_the_stated_distance():
    with jax.enable_x64(True):
        bias = jnp.full(denevi.DIM, denevi.TASK_MEAN)
        task = denevi.realizable_task(jax.random.key(3), bias, jnp.float64(10.0), 64)
        x, y = np.asarray(task.x_train[0]), np.asarray(task.y_train[0])
    u = np.linalg.lstsq(x, y, rcond=None)[0]
    np.testing.assert_allclose(x @ u, y, atol=1e-10)
    np.testing.assert_allclose(np.linalg.norm(u - np.asarray(bias)), 10.0, rtol=1e-10)
    np.testing.assert_allclose(np.linalg.norm(x, axis=1), 1.0, rtol=1e-12)


def test_within_task_regret_scales_with_the_distance_to_the_bias():
    near, far = outcome("prop3").methods.values()
    assert np.all(far.measured[:, -1] > 4.0 * near.measured[:, -1])


# ----------------------------------------------------------------------------------------------
# the synthetic environment: comparators and runs


def _lad_linprog(x, y) -> float:
    n, d = x.shape
    cost = np.r_[np.zeros(d), np.ones(2 * n)]
    a_eq = np.c_[x, np.eye(n), -np.eye(n)]
    bounds = [(None, None)] * d + [(0, None)] * (2 * n)
    return float(linprog(cost, A_eq=a_eq, b_eq=y, bounds=bounds, method="highs").fun)


def test_lad_comparators_are_optimal():
    data = denevi.synthetic(QUICK)
    x, y = np.asarray(data.tasks.x_train[0]), np.asarray(data.tasks.y_train[0])
    rng = np.random.default_rng(2)
    for t in range(4):
        np.testing.assert_allclose(data.lad_loss[0, t], _lad_linprog(x[t], y[t]), rtol=1e-7)
        np.testing.assert_allclose(
            data.lad_loss[0, t], np.sum(np.abs(y[t] - x[t] @ data.lad[0, t])), rtol=1e-12
        )
        moved = data.lad[0, t] + 1e-3 * rng.normal(size=(200, denevi.DIM))
        assert np.all(np.sum(np.abs(y[t] - moved @ x[t].T), axis=1) >= data.lad_loss[0, t])


@pytest.mark.parametrize("method", ["Aggressive_KT", "Lazy_KT", "ITL", "Oracle"])
def test_runs_are_the_reference_learners(method):
    data = denevi.synthetic(QUICK)
    online, test = denevi.meta_trace(QUICK, method)
    block = [np.asarray(a[1, :6]) for a in data.tasks]  # seed 1, its first six tasks
    tasks = ref.tasks_from_block(block)
    if method in ("ITL", "Oracle"):
        bias = np.full(denevi.DIM, 0.0 if method == "ITL" else denevi.TASK_MEAN)
        out = ref.run_pf(tasks, "kt", "fixed", bias)
    else:
        out = ref.run_pf(tasks, "kt", "aggressive" if method == "Aggressive_KT" else "lazy")
    np.testing.assert_allclose(online[1, :6], [e.sum() for e in out["errors"]], rtol=1e-9)
    np.testing.assert_allclose(test[1, :6], out["test"], rtol=1e-9)


def test_variance_form_follows_from_concavity():
    # Cor. 4 / Thm. 5 replace mean_t B(||u_t - h||) by B(Var_h): B(sqrt(s), n) is concave in s
    s = np.linspace(0.0, 400.0, 4001)
    values = denevi.within_bound(np.sqrt(s), denevi.POINTS)
    assert np.all(np.diff(values, 2) <= 1e-9)
    rng = np.random.default_rng(4)
    points = rng.normal(size=(50, denevi.DIM)) * rng.uniform(0.1, 5.0, size=(50, 1))
    var = denevi.spread(points, np.zeros(denevi.DIM))[-1]
    mean_bound = np.mean(denevi.within_bound(np.linalg.norm(points, axis=1), denevi.POINTS))
    assert mean_bound <= float(denevi.within_bound(var, denevi.POINTS))


def test_meta_bound_terms():
    rng = np.random.default_rng(5)
    points = 4.0 + rng.normal(size=(20, denevi.DIM))
    for mode in ("aggressive", "lazy"):
        got = denevi.meta_bound(points, mode)
        for t in (1, 7, 20):
            m = points[:t].mean(axis=0)
            var = math.sqrt(np.mean(np.sum((points[:t] - m) ** 2, axis=1)))
            norm, n = np.linalg.norm(m), denevi.POINTS
            outer = (
                denevi.within_bound(norm, n * t) / t
                if mode == "aggressive"
                else n * denevi.within_bound(norm, t) / t
            )
            np.testing.assert_allclose(got[t - 1], denevi.within_bound(var, n) + outer, rtol=1e-9)
    # the aggressive meta term is the faster one
    assert np.all(denevi.meta_bound(points, "aggressive") < denevi.meta_bound(points, "lazy"))


def test_a_learned_or_true_bias_beats_no_bias():
    itl, oracle = outcome("cor4").methods.values()
    agg = outcome("thm5").methods["Aggressive_KT"]
    assert np.all(oracle.measured[:, -1] < itl.measured[:, -1])
    # the bias is being learned: about ITL's regret after 4 tasks, a third below it after 64
    share = agg.measured / itl.measured
    assert np.all(share[:, 0] > 0.9) and np.all(share[:, -1] < 0.8)


def test_excess_risk_is_measured_against_the_true_vectors():
    data = denevi.synthetic(QUICK)
    _, test = denevi.meta_trace(QUICK, "Oracle")
    x, y = np.asarray(data.tasks.x_test), np.asarray(data.tasks.y_test)
    best = np.mean(np.abs(y - np.einsum("stmd,std->stm", x, data.vectors)), axis=-1)
    tasks = np.arange(1, test.shape[1] + 1)
    expected = (np.cumsum(test - best, axis=1) / tasks)[:, data.horizons - 1]
    np.testing.assert_allclose(denevi.excess_test_risk(QUICK, "Oracle"), expected, rtol=1e-12)
    # the true vectors generate the labels: their held-out error is the noise level, below ITL's
    _, itl = denevi.meta_trace(QUICK, "ITL")
    assert np.mean(best) < np.mean(itl)
