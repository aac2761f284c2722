"""What a bound check's outcome must show (shared by the theory tests of bound checks)."""

from __future__ import annotations

import numpy as np

from ojax.theory import role, within_bound


def assert_learners_under_falsifiers_over(outcome, floor: float) -> None:
    """Every learner under its bound at every horizon and seed, and reaching `floor` of it
    somewhere (the bound measures something); every falsifier (and variant) over its bound at
    the largest horizon, on the same instance (the name after `@`) as a learner of the
    check."""
    falsifiers = [m for m in outcome.methods if role(m) in ("falsifier", "variant")]
    learners = [m for m in outcome.methods if role(m) == "learner"]
    assert any(role(m) == "falsifier" for m in falsifiers) and learners
    for method, curves in outcome.methods.items():
        measured = curves.measured
        bound = np.broadcast_to(curves.bound, measured.shape)
        assert measured.shape[1] == len(outcome.horizons) and np.all(np.isfinite(measured))
        ratio = measured / bound
        if role(method) == "vacuous":
            continue
        if method in falsifiers:
            assert np.all(ratio[:, -1] > 1.0), (method, ratio[:, -1])
            assert any(method.split("@")[1] == m.split("@")[1] for m in learners)
        else:
            assert within_bound(measured, bound).all(), (method, ratio.max())
            assert ratio.max() > floor, (method, ratio.max())
