"""OGD with the doubling trick (Shalev-Shwartz 2012, Section 2.3.1) against a float64 NumPy loop
written from the rule, step by step, and its anytime regret bound, which a learner that does
not learn breaks on the same instance."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from ojax import losses, oco, run_oco


def _reference(zs: np.ndarray, alpha: float, radius: float) -> np.ndarray:
    """The points w_1..w_n on the losses 0.5 ||w - z_t||^2: epoch m holds rounds 2^m..2^(m+1)-1,
    restarts at x0 = 0 and steps alpha / sqrt(2^m), projected on the L2 ball."""
    w, points = np.zeros(zs.shape[1]), []
    for t, z in enumerate(zs, start=1):
        points.append(w.copy())
        epoch = int(math.floor(math.log2(t)))
        w = w - alpha / math.sqrt(2.0**epoch) * (w - z)
        norm = np.linalg.norm(w)
        if norm > radius:
            w = w * (radius / norm)
        if ((t + 1) & t) == 0:  # round t + 1 = 2^(m+1) starts the next epoch
            w = np.zeros_like(w)
    return np.asarray(points)


def test_every_iterate_matches_the_numpy_loop(x64):
    zs = 2.0 * np.random.default_rng(3).normal(size=(70, 3))
    params = oco.OGDParams(jnp.float64(0.7), jnp.float64(0.8))
    _, trace = run_oco(
        oco.ogd_doubling(),
        params,
        jnp.zeros(3),
        jnp.asarray(zs),
        losses.quadratic_objective,
        store_iterates=True,
    )
    expected = _reference(zs, 0.7, 0.8)
    got = np.asarray(trace.prediction)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12 * np.abs(expected).max())
    assert np.any(np.linalg.norm(expected, axis=1) > 0.79)  # the projection binds
    assert np.all(got[[0, 1, 3, 7, 15, 31, 63]] == 0.0)  # every epoch starts at x0


def _regret(learning_rate: float, zs: jax.Array) -> np.ndarray:
    """Regret at every horizon T to the best point of the unit ball, linear losses <w, z_t>."""
    params = oco.OGDParams(jnp.float64(learning_rate), jnp.float64(1.0))
    _, trace = run_oco(oco.ogd_doubling(), params, jnp.zeros(2), zs, losses.linear_objective)
    best = -np.linalg.norm(np.cumsum(np.asarray(zs), axis=0), axis=1)
    return np.cumsum(np.asarray(trace.loss)) - best


def test_anytime_regret_bound_and_its_falsifier(x64):
    # z_t = a drift plus a random unit direction, ||z_t|| <= 1 (rho = 1, B = 1: alpha = 1)
    u = jax.random.normal(jax.random.key(0), (2000, 2), jnp.float64)
    zs = 0.5 * jnp.array([[1.0, 0.0]]) + 0.5 * u / jnp.linalg.norm(u, axis=1, keepdims=True)
    horizons = np.arange(1, 2001)
    bound = math.sqrt(2.0) / (math.sqrt(2.0) - 1.0) * np.sqrt(horizons)
    regret = _regret(1.0, zs)
    assert np.all(regret <= bound), float(np.max(regret - bound))
    assert np.max(regret / bound) > 0.2  # not vacuous: the bound is within a factor 5
    frozen = _regret(1e-6, zs)  # a step far too small: the learner stays at x0
    assert frozen[-1] > bound[-1]
