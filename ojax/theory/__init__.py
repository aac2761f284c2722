"""The source documents' numbered results, checked numerically (``ojax run theory``).

:data:`CHECKS` maps a result's name (the ``dataset`` of its rows) to its :class:`Check`.
"""

from __future__ import annotations

from ojax.theory import baselines, denevi, neu_rosasco, notes, parameter_free_baselines, zhao_hoi
from ojax.theory.base import (
    BOUND_RTOL,
    IDENTITY_TOLERANCE,
    SLOPE_TOLERANCE,
    Check,
    CheckConfig,
    Measured,
    Outcome,
    as_measured,
    fitted_slope,
    log_horizons,
    within_bound,
)

CHECKS: dict[str, Check] = {
    check.name: check
    for module in (notes, denevi, neu_rosasco, zhao_hoi, parameter_free_baselines, baselines)
    for check in module.CHECKS
}

__all__ = [
    "BOUND_RTOL",
    "CHECKS",
    "IDENTITY_TOLERANCE",
    "SLOPE_TOLERANCE",
    "Check",
    "CheckConfig",
    "Measured",
    "Outcome",
    "as_measured",
    "fitted_slope",
    "log_horizons",
    "within_bound",
]
