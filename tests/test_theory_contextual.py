"""The contextual bandit checks (ojax.theory.contextual) at quick sizes: EXP4 and SquareCB under
their bounds at every horizon and row, the uniform player over them at the largest horizon on
the same instances; SquareCB's per-round inequality on random vectors."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from bound_checks import assert_learners_under_falsifiers_over

from ojax.contextual import inverse_gap_weights
from ojax.experiments.theory import CHECKS
from ojax.theory import CheckConfig, contextual, verdict

NAMES = [check.name for check in contextual.CHECKS]


def test_the_checks_are_registered():
    assert NAMES == ["bubeck2012-thm4.2-exp4", "foster2020-thm1-squarecb"]
    assert all(CHECKS[name].kind == "bound" for name in NAMES)


@pytest.mark.parametrize("x64", [True, False])
def test_exp4_under_its_bound_and_the_uniform_player_over_it(x64):
    check = CHECKS["bubeck2012-thm4.2-exp4"]
    outcome = check.compute(CheckConfig(quick=True, num_seeds=2, seed=0, x64=x64))
    assert_learners_under_falsifiers_over(outcome, 0.1)
    assert verdict(check, outcome).holds and verdict(check, outcome).sound
    bound = outcome.methods["EXP4@noisy-policy"].bound
    t = float(outcome.horizons[-1])
    k, n = contextual.NUM_ARMS, contextual.NUM_POLICIES
    assert float(bound[-1]) == pytest.approx(math.sqrt(2 * t * k * math.log(n)), rel=1e-9)


def test_squarecb_under_its_bound_and_the_uniform_player_over_it():
    check = CHECKS["foster2020-thm1-squarecb"]
    outcome = check.compute(CheckConfig(quick=True, num_seeds=2, seed=0, x64=False))
    assert_learners_under_falsifiers_over(outcome, 0.1)
    assert verdict(check, outcome).holds and verdict(check, outcome).sound
    steps, k = outcome.horizons.astype(float), contextual.SQUARECB_ARMS
    gamma = math.sqrt(k * steps[-1]) / 2
    bound = np.broadcast_to(outcome.methods["SquareCB(OGD)@realizable"].bound, (2, len(steps)))
    # the oracle term (gamma / 2) E[Reg_Sq] is positive and grows with T
    oracle_term = bound - 2 * k * steps / gamma
    assert np.all(oracle_term > 0) and np.all(np.diff(oracle_term, axis=1) > 0)


def test_squarecb_per_round_inequality_on_random_vectors():
    """`sum_a p_a f*_a - min f* <= 2 K / gamma + (gamma / 2) sum_a p_a (y^_a - f*_a)^2` for
    the inverse gap weights of any `y^` (the module doc's derivation), over random `y^`, `f*`,
    `gamma` and `K`; with the oracle term at a quarter (`gamma / 8`) it fails somewhere."""
    rng = np.random.default_rng(0)
    worst, worst_quarter = -np.inf, -np.inf
    for _ in range(400):
        k = int(rng.integers(2, 8))
        gamma = float(10 ** rng.uniform(-1, 3))
        f_star = rng.uniform(0, 1, k)
        y_hat = np.clip(f_star + rng.normal(0, 10 ** rng.uniform(-3, 0), k), -1, 2)
        with jax.enable_x64(True):
            p = np.asarray(inverse_gap_weights(jnp.asarray(y_hat), jnp.float64(gamma)))
        regret = p @ f_star - f_star.min()
        error = p @ (y_hat - f_star) ** 2
        worst = max(worst, regret - 2 * k / gamma - gamma / 2 * error)
        worst_quarter = max(worst_quarter, regret - 2 * k / gamma - gamma / 8 * error)
    assert worst <= 1e-12
    assert worst_quarter > 0
