"""Float comparisons that hold on any machine: the absolute tolerance scales with the quantity.

Fusion order, BLAS blocking or a compiler's choice move the last digits of a result by a few
ulps of the quantity's SCALE, so an element near zero of a vector of size 0.4 can differ by
``1e-15`` between machines, which an absolute ``atol=1e-15`` passes on one and fails on another.
Compare it instead at ``factor * max|expected|``.
"""

from __future__ import annotations

import numpy as np


def scaled_atol(expected, factor: float = 1e-12) -> float:
    """``factor * max|expected|``: the absolute tolerance of an elementwise comparison."""
    values = np.abs(np.asarray(expected, dtype=np.float64))
    return factor * float(values.max()) if values.size else 0.0
