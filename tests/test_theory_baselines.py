"""The classic baselines' regret bounds (ojax.theory.baselines) at quick sizes in float64: each
learner under its bound at every horizon and seed, each falsifier over it at the largest horizon
on the same instance; Squint's Lemma 1 (the potential never exceeds 0) step by step."""

from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np
import pytest
from bound_checks import assert_learners_under_falsifiers_over
from scipy import integrate
from tolerances import scaled_atol

from ojax import losses, oco, run_oco
from ojax.experiments.theory import CHECKS, selected_checks
from ojax.theory import CheckConfig
from ojax.theory import baselines as checks

QUICK = CheckConfig(quick=True, num_seeds=2, seed=0, x64=True)
NAMES = [check.name for check in checks.CHECKS]


def test_the_baselines_document_lists_its_checks():
    expected = ["duchi2011-thm5", "hazan2007-thm2", "derooij2014-variance", "koolen2015-lemma1"]
    assert NAMES == expected
    bandits = [
        "bubeck2012-thm3.1-exp3",
        "neu2015-thm1-exp3-ix",
        "delayed-ogd",
        "bubeck2012-thm4.2-exp4",
        "foster2020-thm1-squarecb",
    ]
    assert [c.name for c in selected_checks("baselines")] == NAMES + bandits
    for name in NAMES:
        assert CHECKS[name].document == "baselines" and CHECKS[name].kind == "bound"


@pytest.mark.parametrize("name", NAMES)
def test_learner_under_its_bound_and_falsifier_over_it(name):
    outcome = CHECKS[name].compute(QUICK)
    assert_learners_under_falsifiers_over(outcome, 0.01)


@pytest.mark.parametrize("n", [1, 2, 5, 64, 301])
def test_gauss_legendre_is_numpys(n):
    """The tridiagonal route gives NumPy's nodes and weights (its algorithm, its Newton step)."""
    nodes, weights = checks.gauss_legendre(n)
    expected_nodes, expected_weights = np.polynomial.legendre.leggauss(n)
    np.testing.assert_allclose(
        nodes, expected_nodes, rtol=0, atol=scaled_atol(expected_nodes, 1e-15)
    )
    np.testing.assert_allclose(
        weights, expected_weights, rtol=0, atol=scaled_atol(expected_weights, 1e-15)
    )
    assert np.sum(weights) == pytest.approx(2.0, rel=1e-14)  # integrates 1 over [-1, 1]


def test_squint_potential_is_the_integral():
    for r, v in [(0.0, 0.0), (3.0, 40.0), (-50.0, 400.0), (25.0, 100.0), (1.0, 1e-6)]:

        def integrand(eta: float, r: float = r, v: float = v) -> float:
            return math.expm1(eta * r - eta * eta * v) / eta

        value, _ = integrate.quad(integrand, 0, 0.5, epsabs=0, epsrel=1e-12, limit=200)
        assert checks.squint_potential(np.array(r), np.array(v)) == pytest.approx(value, 1e-10)


def test_squint_regret_bound_solves_its_equation():
    variance, steps = np.array([1.0, 30.0, 300.0, 3000.0]), np.array([10.0, 100.0, 1e3, 1e4])
    bound = checks.squint_regret_bound(variance, 0.1, steps)
    level = 0.9 * (1 + np.log(0.75 * steps)) / 0.1
    np.testing.assert_allclose(checks.squint_potential(bound, variance), level, rtol=1e-9)
    assert np.all(np.diff(bound) > 0) and np.all(bound < 2 * np.sqrt(variance * 60) + 60)


def _potential(weights: np.ndarray, zs: np.ndarray, prior: np.ndarray) -> np.ndarray:
    """sum_k pi_k Phi(R_{t,k}, V_{t,k}) after each round t."""
    r = np.sum(weights * zs, axis=-1, keepdims=True) - zs
    regret, variance = np.cumsum(r, axis=0), np.cumsum(r**2, axis=0)
    return np.sum(prior * checks.squint_potential(regret, variance), axis=-1)


def test_squint_potential_never_exceeds_zero_and_ftl_breaks_it(x64):
    """Koolen & van Erven 2015, Lemma 1, step by step (float64), on random and adversarial
    losses; follow the leader's regrets on the FTL killer give a positive potential."""
    rng = np.random.default_rng(0)
    prior = np.array([0.05, 0.15, 0.3, 0.5])
    killer = checks._ftl_killer(400)[0, :, :4]
    for zs in (rng.uniform(size=(400, 4)) ** 2, killer):
        _, trace = run_oco(
            oco.squint(),
            oco.SquintParams(),
            jnp.asarray(prior),
            jnp.asarray(zs),
            losses.linear_objective,
            store_iterates=True,
        )
        potential = _potential(np.asarray(trace.prediction), zs, prior)
        assert np.all(potential <= 1e-9), potential.max()
        assert potential.min() < -0.1  # not trivially 0
    ftl = np.zeros_like(killer)
    ftl[0] = 0.25
    ftl[1:, :] = np.eye(4)[np.argmin(np.cumsum(killer, axis=0)[:-1], axis=-1)]
    assert _potential(ftl, killer, prior)[-1] > 1.0
