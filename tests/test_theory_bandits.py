"""The bandit and delayed-feedback checks (ojax.theory.bandits) at quick sizes: each learner
under its bound at every horizon and row, each falsifier over it at the largest horizon on the
same instance, in float64 and float32."""

from __future__ import annotations

import math

import numpy as np
import pytest
from bound_checks import assert_learners_under_falsifiers_over

from ojax.experiments.theory import CHECKS
from ojax.theory import CheckConfig, bandits, verdict

QUICK = CheckConfig(quick=True, num_seeds=2, seed=0, x64=True)
NAMES = [check.name for check in bandits.CHECKS]


def test_the_checks_are_registered():
    assert NAMES == ["bubeck2012-thm3.1-exp3", "neu2015-thm1-exp3-ix", "delayed-ogd"]
    assert all(CHECKS[name].kind == "bound" for name in NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_learner_under_its_bound_and_falsifier_over_it(name):
    outcome = CHECKS[name].compute(QUICK)
    assert_learners_under_falsifiers_over(outcome, 0.1)
    assert verdict(CHECKS[name], outcome).holds and verdict(CHECKS[name], outcome).sound


def test_the_tuned_bounds_are_the_stated_ones():
    t, k = np.array([100.0, 2000.0]), bandits.NUM_ARMS
    eta = math.sqrt(2 * math.log(k) / (2000 * k))  # EXP3 at its rate for T = 2000
    assert math.log(k) / eta + eta * k * 2000 / 2 == pytest.approx(
        math.sqrt(2 * 2000 * k * math.log(k))
    )
    for d in (0, 4, 16):
        eta = 1 / math.sqrt((2 * d + 1) * t[-1])
        got = bandits.delayed_ogd_bound(t, eta, d)[-1]
        assert got == pytest.approx(math.sqrt((2 * d + 1) * t[-1]))
    ix = bandits.exp3_ix_bound(t, k, 0.05)
    want = 2 * np.sqrt(2 * k * t * math.log(k)) + (np.sqrt(2 * k * t / math.log(k)) + 1) * math.log(
        40
    )
    np.testing.assert_allclose(ix, want)


def test_float32_run_holds():
    outcome = CHECKS["delayed-ogd"].compute(QUICK._replace(x64=False))
    assert verdict(CHECKS["delayed-ogd"], outcome, x64=False).holds
