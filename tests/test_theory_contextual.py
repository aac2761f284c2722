"""The contextual bandit checks (ojax.theory.contextual) at quick sizes: EXP4 under its bound at
every horizon and row, the uniform player over it at the largest horizon on the same instances,
in float64 and float32."""

from __future__ import annotations

import math

import pytest
from bound_checks import assert_learners_under_falsifiers_over

from ojax.experiments.theory import CHECKS
from ojax.theory import CheckConfig, contextual, verdict

NAMES = [check.name for check in contextual.CHECKS]


def test_the_checks_are_registered():
    assert NAMES == ["bubeck2012-thm4.2-exp4"]
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
