"""The parameter-free baselines' theory checks (ojax.theory.parameter_free_baselines) at quick
sizes in float64: every learner under its bound, every falsifier above it at the largest
horizon, and the instances' closed forms."""

from __future__ import annotations

import numpy as np
import pytest

from ojax.experiments.theory import CHECKS, selected_checks
from ojax.theory import CheckConfig, parameter_free_baselines, within_bound

QUICK = CheckConfig(quick=True, num_seeds=2, seed=0, x64=True)
NAMES = [check.name for check in parameter_free_baselines.CHECKS]


@pytest.fixture(scope="module")
def outcomes():
    return {name: CHECKS[name].compute(QUICK) for name in NAMES}


def test_checks_are_registered_under_their_document():
    assert len(NAMES) == 2 and all(
        CHECKS[n] is c for n, c in zip(NAMES, parameter_free_baselines.CHECKS)
    )
    assert [c.name for c in selected_checks("parameter-free")] == NAMES
    for name in NAMES:
        assert CHECKS[name].document == "parameter-free" and CHECKS[name].kind == "bound"


@pytest.mark.parametrize("name", NAMES)
def test_learners_hold_and_falsifiers_break_the_bound(outcomes, name):
    outcome = outcomes[name]
    horizons = outcome.horizons
    assert len(horizons) >= 5 and np.all(np.diff(horizons) > 0)
    falsifiers = [m for m in outcome.methods if m.startswith("falsifier:")]
    learners = [m for m in outcome.methods if not m.startswith("falsifier:")]
    assert falsifiers and len(learners) >= 2
    for method in learners:
        curves = outcome.methods[method]
        assert curves.measured.shape == (QUICK.num_seeds, len(horizons))
        assert np.all(np.isfinite(curves.measured)), method
        bound = np.broadcast_to(curves.bound, curves.measured.shape)
        assert within_bound(curves.measured, bound).all(), method
    for method in falsifiers:
        curves = outcome.methods[method]
        assert np.all(curves.measured[:, -1] > curves.bound[-1]), method


def test_the_informative_instances_measure_something(outcomes):
    """Not vacuous for the learners either: KT on zero-mean coins and Schedule-Free SGD reach a
    sizeable fraction of their bounds somewhere."""
    kt = outcomes["parameter-free-kt"].methods
    for method in ("KT-coordinate@zero-mean,|u_i|=1", "KT-coordinate@zero-mean,|u_i|=10"):
        assert np.max(kt[method].measured / kt[method].bound) > 0.1, method
    sf = outcomes["parameter-free-schedule-free"].methods
    assert max(np.max(c.measured / c.bound) for m, c in sf.items() if m.startswith("SF")) > 0.2


def test_kt_regret_is_the_best_comparator_of_its_size():
    """``kt_regret`` equals the regret against every sign pattern's best: u = -r sign(G_T)."""
    rng = np.random.default_rng(0)
    gs = parameter_free_baselines.kt_gradients(rng, (1, 40, 3), 0.2)
    paid = rng.normal(size=(1, 40))
    steps = np.array([10, 40])
    got = parameter_free_baselines.kt_regret(paid, gs, 2.0, steps)
    for j, t in enumerate(steps):
        worst = max(
            paid[0, :t].sum() - gs[0, :t].sum(axis=0) @ (2.0 * np.array(s))
            for s in np.array(np.meshgrid(*[[-1, 1]] * 3)).reshape(3, -1).T
        )
        assert got[0, j] == pytest.approx(worst, rel=1e-12)
    assert np.all(np.abs(gs) <= 1.0)


def test_sphere_objective_gap_is_the_mean_distance():
    """The closed form of ``F(x) - F*`` against a Monte Carlo mean of ``||x - zeta||``."""
    rng = np.random.default_rng(1)
    u = rng.normal(size=(400_000, 3))
    radius = parameter_free_baselines.SF_RADIUS
    zeta = radius * u / np.linalg.norm(u, axis=1, keepdims=True)
    for rho in (0.0, 0.2, 0.5, 1.3):
        x = np.array([rho, 0.0, 0.0])
        mean = np.linalg.norm(x - zeta, axis=1).mean()
        gap = parameter_free_baselines.sphere_objective_gap(x, np.zeros(3))
        assert gap == pytest.approx(mean - radius, abs=2e-3)
