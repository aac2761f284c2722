"""A numbered result of a source document, checked numerically (``ojax run theory``).

A :class:`Check` names the result and computes, on the instance the result is about, the measured
quantity and its bound over a range of horizons (``T``, ``n`` or the number of tasks). Three kinds:

- ``"bound"``: the document's right-hand side is explicit; every measured value must lie under it.
- ``"rate"``: a constant is not explicit in the document; ``bound`` is NaN and the log-log slope of
  the measured mean against the horizon must not exceed ``Check.rate`` (plus a tolerance).
- ``"identity"``: an exact identity (float64); ``measured`` is the largest absolute difference and
  ``bound`` the tolerance (1e-9).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, Literal, NamedTuple

import numpy as np

KINDS = ("bound", "rate", "identity")
DOCUMENTS = (
    "notes",
    "denevi2020",
    "neu-rosasco2018",
    "zhao-hoi2010",
    "parameter-free",
    "baselines",
)
IDENTITY_TOLERANCE = 1e-9


class CheckConfig(NamedTuple):
    """What a check is run with.

    ``quick``: small sizes (tests, ``--quick``); ``num_seeds``: independent runs of random
    instances (adversarial, deterministic instances may ignore it and return one row);
    ``seed``: the integer seed of the check's PRNG keys; ``x64``: compute in float64 (identities
    always do).
    """

    quick: bool
    num_seeds: int
    seed: int
    x64: bool


class Measured(NamedTuple):
    """One learner's measured quantity against its bound.

    ``measured``: ``(num_seeds, H)`` (``(1, H)`` for a deterministic instance), float64.
    ``bound``: ``(H,)`` or ``(num_seeds, H)``; NaN for a ``"rate"`` check.
    """

    measured: np.ndarray
    bound: np.ndarray


class Outcome(NamedTuple):
    """The horizons ``(H,)`` and, per method (the learner the result is about), its curves."""

    horizons: np.ndarray
    methods: dict[str, Measured]


@dataclasses.dataclass(frozen=True)
class Check:
    """A result of a document with a computable right-hand side (or rate, or identity).

    ``name``: the ``dataset`` of its ``results.csv`` rows, e.g. ``"denevi-prop3"``;
    ``result``: as the document numbers it, e.g. ``"Proposition 3"``; ``statement``: one line,
    the inequality with its constants; ``instance``: the sequence or distribution it is run on;
    ``rate``: the expected log-log slope (``"rate"`` checks); ``note``: e.g. why only the rate.
    """

    name: str
    document: Literal[
        "notes", "denevi2020", "neu-rosasco2018", "zhao-hoi2010", "parameter-free", "baselines"
    ]
    result: str
    statement: str
    instance: str
    kind: Literal["bound", "rate", "identity"]
    horizon: str
    compute: Callable[[CheckConfig], Outcome]
    rate: float | None = None
    note: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"Check {self.name!r}: kind={self.kind!r}, expected one of {KINDS}")
        if self.document not in DOCUMENTS:
            raise ValueError(
                f"Check {self.name!r}: document={self.document!r}, expected one of {DOCUMENTS}"
            )
        if (self.kind == "rate") != (self.rate is not None):
            raise ValueError(f"Check {self.name!r}: a rate is given exactly for kind 'rate'")


def as_measured(measured: Any, bound: Any) -> Measured:
    """:class:`Measured` from array-likes (float64, ``measured`` at least 2-D)."""
    measured = np.atleast_2d(np.asarray(measured, dtype=np.float64))
    return Measured(measured, np.asarray(bound, dtype=np.float64))


SLOPE_TOLERANCE = 0.15
"""How far above ``Check.rate`` the fitted log-log slope of a ``"rate"`` check may lie."""


def log_horizons(start: int, stop: int, count: int) -> np.ndarray:
    """About ``count`` log-spaced distinct integer horizons from ``start`` to ``stop``."""
    return np.unique(np.geomspace(start, stop, count).astype(np.int64))


def fitted_slope(horizons: np.ndarray, measured: np.ndarray) -> float:
    """Least-squares slope of ``log(mean over seeds of measured)`` against ``log(horizons)``
    (the horizons where the mean is positive)."""
    mean = np.atleast_2d(np.asarray(measured, np.float64)).mean(axis=0)
    keep = mean > 0
    x, y = np.log(np.asarray(horizons, np.float64)[keep]), np.log(mean[keep])
    return float(np.polyfit(x, y, 1)[0])


BOUND_RTOL = 1e-9
"""Relative slack of a ``"bound"`` check in float64 (rounding where an instance attains it)."""


def within_bound(measured: np.ndarray, bound: np.ndarray, rtol: float = BOUND_RTOL) -> np.ndarray:
    """Elementwise ``measured <= bound`` up to ``rtol`` (relative to ``max(1, |bound|)``)."""
    return measured <= bound + rtol * np.maximum(1.0, np.abs(bound))
