"""The source documents' numbered results, checked numerically (``ojax run theory``).

:data:`CHECKS` maps a result's name (the ``dataset`` of its rows) to its :class:`Check`; every
bound, rate or shape check carries falsifiers (methods ``falsifier:<what>``) and
:func:`verdict` decides whether it holds and is sound (see :mod:`ojax.theory.base`). A module of
checks exposes a tuple ``CHECKS`` and is listed in :data:`MODULES`.
"""

from __future__ import annotations

from ojax.theory import (
    baselines,
    denevi,
    denevi_tasks,
    neu_rosasco,
    notes,
    notes_convex,
    notes_experts,
    notes_mirror,
    parameter_free_baselines,
    zhao_hoi,
)
from ojax.theory.base import (
    BOUND_RTOL,
    FALSIFIER,
    FLOAT32_RTOL,
    IDENTITY_TOLERANCE,
    SLOPE_TOLERANCE,
    Check,
    CheckConfig,
    Measured,
    Outcome,
    Verdict,
    as_measured,
    fitted_slope,
    is_falsifier,
    log_horizons,
    slope_of,
    verdict,
    within_bound,
)

MODULES = (notes, notes_mirror, notes_experts, notes_convex, denevi, denevi_tasks, neu_rosasco,
           zhao_hoi, parameter_free_baselines, baselines)  # fmt: skip
"""The modules of checks, in the order ``ojax run theory`` runs them."""

CHECKS: dict[str, Check] = {check.name: check for module in MODULES for check in module.CHECKS}

__all__ = [
    "BOUND_RTOL",
    "CHECKS",
    "FALSIFIER",
    "FLOAT32_RTOL",
    "IDENTITY_TOLERANCE",
    "MODULES",
    "SLOPE_TOLERANCE",
    "Check",
    "CheckConfig",
    "Measured",
    "Outcome",
    "Verdict",
    "as_measured",
    "fitted_slope",
    "is_falsifier",
    "log_horizons",
    "slope_of",
    "verdict",
    "within_bound",
]
