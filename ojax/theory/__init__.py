"""The source documents' numbered results, checked numerically (`ojax run theory`).

Each module of checks (`notes`, `denevi`, ...) exposes a tuple `CHECKS` of :class:`Check`;
every bound, shape or rate check carries falsifiers (non-learners, methods
`falsifier:<what>`), an inequality variants (`variant:<what>`), and :func:`verdict` decides
whether it holds and is sound (see :mod:`ojax.theory.base`). The experiments' registry lists
the modules (the `checks` of the `theory` experiment's spec,
:data:`ojax.experiments.theory.SPEC`), and :func:`ojax.experiments.theory.checks` collects them.
"""

from __future__ import annotations

from ojax.theory.base import (
    BOUND_RTOL,
    FALSIFIER,
    FLOAT32_RTOL,
    IDENTITY_TOLERANCE,
    SLOPE_TOLERANCE,
    VACUOUS,
    VARIANT,
    Check,
    CheckConfig,
    Measured,
    Outcome,
    Verdict,
    as_measured,
    fitted_slope,
    is_falsifier,
    log_horizons,
    role,
    slope_of,
    verdict,
    within_bound,
)

__all__ = [
    "BOUND_RTOL",
    "FALSIFIER",
    "FLOAT32_RTOL",
    "IDENTITY_TOLERANCE",
    "SLOPE_TOLERANCE",
    "VACUOUS",
    "VARIANT",
    "Check",
    "CheckConfig",
    "Measured",
    "Outcome",
    "Verdict",
    "as_measured",
    "fitted_slope",
    "is_falsifier",
    "log_horizons",
    "role",
    "slope_of",
    "verdict",
    "within_bound",
]
