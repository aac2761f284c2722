"""A numbered result of a source document, checked numerically (`ojax run theory`).

A :class:`Check` names the result and computes, on the instance the result is about, the measured
quantity and its bound over a range of horizons (`T`, `n` or the number of tasks), for the
learner the result is about and for its **falsifiers**: learners (or instances) that should break
the result, reported as methods named `falsifier:<what>` (:data:`FALSIFIER`). A check is
*sound* only if every falsifier breaks it at the largest horizon: a bound that nothing breaks
checks nothing. Four kinds:

- `"bound"`: the document's right-hand side is explicit; the learner's measured values must
  lie under it at every horizon and seed; each falsifier's `measured / bound` at the largest
  horizon must exceed 1 (on every seed).
- `"rate"`: no explicit constant; `bound` is NaN and the log-log slope of the mean measured
  value against the horizon must not exceed `Check.rate` (plus :data:`SLOPE_TOLERANCE`); each
  falsifier's slope must exceed it.
- `"shape"`: the bound's form is known but not its constant; `bound` is that form (constant
  1) and the log-log slope of the mean `measured / bound` must not exceed 0 (plus the
  tolerance: the ratio stays bounded); each falsifier's ratio must grow faster than that.
- `"identity"`: an exact identity (float64); `measured` is the largest absolute difference
  and `bound` the tolerance (:data:`IDENTITY_TOLERANCE`). It needs no falsifier (there is no
  slack to hide in); one may be given (a wrong formula), and must then exceed the tolerance.

:func:`verdict` decides both (`holds` and `sound`) for every kind; `ojax run theory`
records it as the method `verdict` of each check's rows.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any, Literal, NamedTuple

import numpy as np

KINDS = ("bound", "rate", "shape", "identity")
DOCUMENTS = (
    "notes",
    "denevi2020",
    "neu-rosasco2018",
    "zhao-hoi2010",
    "parameter-free",
    "baselines",
    "nonstationary",
)
IDENTITY_TOLERANCE = 1e-9
FALSIFIER = "falsifier:"
"""The prefix of a falsifier's method name, e.g. ``"falsifier:w=0"``."""


def is_falsifier(method: str) -> bool:
    """Whether `method` names a falsifier (`falsifier:<what>`)."""
    return method.startswith(FALSIFIER)


class CheckConfig(NamedTuple):
    """What a check is run with.

    `quick`: small sizes (tests, `--quick`); `num_seeds`: independent runs of random
    instances (adversarial, deterministic instances may ignore it and return one row);
    `seed`: the integer seed of the check's PRNG keys; `x64`: compute in float64 (identities
    always do).
    """

    quick: bool
    num_seeds: int
    seed: int
    x64: bool


class Measured(NamedTuple):
    """One learner's measured quantity against its bound.

    `measured`: `(num_seeds, H)` (`(1, H)` for a deterministic instance), float64.
    `bound`: `(H,)` or `(num_seeds, H)`; NaN for a `"rate"` check.
    """

    measured: np.ndarray
    bound: np.ndarray


class Outcome(NamedTuple):
    """The horizons `(H,)` and, per method (the learners the result is about and the
    falsifiers, `falsifier:<what>`), its curves."""

    horizons: np.ndarray
    methods: dict[str, Measured]


@dataclasses.dataclass(frozen=True)
class Check:
    """A result of a document with a computable right-hand side (or rate, shape, identity).

    `name`: the `dataset` of its `results.csv` rows, e.g. `"denevi-prop3"`;
    `result`: as the document numbers it, e.g. `"Proposition 3"`; `statement`: one line,
    the inequality with its constants; `instance`: the sequence or distribution it is run on;
    `kind`: see the module docstring; `horizon`: what the horizons count; `compute`: the
    outcome for a :class:`CheckConfig`, learners and falsifiers; `falsifier`: what each
    falsifier is and why it should break the result (required for every kind but
    `"identity"`); `rate`: the expected log-log slope (`"rate"` checks); `note`: e.g. why
    this instance, where a constant comes from.
    """

    name: str
    document: Literal[
        "notes",
        "denevi2020",
        "neu-rosasco2018",
        "zhao-hoi2010",
        "parameter-free",
        "baselines",
        "nonstationary",
    ]
    result: str
    statement: str
    instance: str
    kind: Literal["bound", "rate", "shape", "identity"]
    horizon: str
    compute: Callable[[CheckConfig], Outcome]
    falsifier: str = ""
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
        if self.kind != "identity" and not self.falsifier:
            raise ValueError(
                f"Check {self.name!r}: a {self.kind!r} check needs a falsifier (what should "
                "break it, reported as methods 'falsifier:<what>')"
            )

    @property
    def expected_slope(self) -> float | None:
        """The slope a `"rate"` (`rate`) or `"shape"` (0: a bounded ratio) check tests."""
        return {"rate": self.rate, "shape": 0.0}.get(self.kind)


def as_measured(measured: Any, bound: Any) -> Measured:
    """:class:`Measured` from array-likes (float64, `measured` at least 2-D)."""
    measured = np.atleast_2d(np.asarray(measured, dtype=np.float64))
    return Measured(measured, np.asarray(bound, dtype=np.float64))


SLOPE_TOLERANCE = 0.15
"""How far above the expected slope the fitted log-log slope of a ``"rate"`` or ``"shape"``
check may lie (and how far above it a falsifier's slope must lie)."""


def log_horizons(start: int, stop: int, count: int) -> np.ndarray:
    """About `count` log-spaced distinct integer horizons from `start` to `stop`."""
    return np.unique(np.geomspace(start, stop, count).astype(np.int64))


def fitted_slope(horizons: np.ndarray, measured: np.ndarray) -> float:
    """Least-squares slope of `log(mean over seeds of measured)` against `log(horizons)`
    (the horizons where the mean is positive)."""
    mean = np.atleast_2d(np.asarray(measured, np.float64)).mean(axis=0)
    keep = mean > 0
    x, y = np.log(np.asarray(horizons, np.float64)[keep]), np.log(mean[keep])
    return float(np.polyfit(x, y, 1)[0])


BOUND_RTOL = 1e-9
"""Relative slack of a ``"bound"`` check in float64 (rounding where an instance attains it)."""
FLOAT32_RTOL = 1e-5
"""The same slack for a check computed in float32."""


def within_bound(measured: np.ndarray, bound: np.ndarray, rtol: float = BOUND_RTOL) -> np.ndarray:
    """Elementwise `measured <= bound` up to `rtol` (relative to `max(1, |bound|)`)."""
    return measured <= bound + rtol * np.maximum(1.0, np.abs(bound))


class Verdict(NamedTuple):
    """What a check's outcome says.

    `holds`: every learner satisfies the result (under its bound at every horizon and seed;
    slope at most the expected one + tolerance; identity within tolerance). `sound`: every
    falsifier breaks it (an identity without falsifiers is sound). `learner`: the learners'
    worst value (largest ratio at the largest horizon, largest slope, largest difference);
    `falsifier`: the falsifiers' weakest value (smallest ratio at the largest horizon over
    seeds, smallest slope; NaN without falsifiers). `reason`: one line when not both.
    """

    holds: bool
    sound: bool
    learner: float
    falsifier: float
    reason: str


def _last_ratio(curves: Measured) -> np.ndarray:
    """`measured / bound` at the largest horizon, one value per seed."""
    measured = np.atleast_2d(curves.measured)
    bound = np.broadcast_to(curves.bound, measured.shape)
    return measured[:, -1] / bound[:, -1]


def slope_of(kind: str, horizons: np.ndarray, curves: Measured) -> float:
    """The slope a `"rate"` (of the mean measured) or `"shape"` (of the mean ratio) check
    tests."""
    measured = np.atleast_2d(curves.measured)
    if kind == "shape":
        measured = measured / np.broadcast_to(curves.bound, measured.shape)
    return fitted_slope(horizons, measured)


def verdict(check: Check, outcome: Outcome, x64: bool = True) -> Verdict:
    """Whether `outcome` (of `check`) holds for its learners and is broken by its
    falsifiers; see :class:`Verdict` and the module docstring."""
    rtol = BOUND_RTOL if x64 else FLOAT32_RTOL
    learners = {k: v for k, v in outcome.methods.items() if not is_falsifier(k)}
    falsifiers = {k: v for k, v in outcome.methods.items() if is_falsifier(k)}
    if not learners:
        return Verdict(False, False, math.nan, math.nan, "no learner")
    reasons = []
    if check.kind in ("rate", "shape"):
        limit = float(check.expected_slope or 0.0) + SLOPE_TOLERANCE
        slopes = {k: slope_of(check.kind, outcome.horizons, v) for k, v in learners.items()}
        broken = {k: slope_of(check.kind, outcome.horizons, v) for k, v in falsifiers.items()}
        holds = all(s <= limit for s in slopes.values())
        sound = bool(broken) and all(s > limit for s in broken.values())
        learner = max(slopes.values())
        weakest = min(broken.values()) if broken else math.nan
        what = f"slope {{:.3g}} against {limit:.3g}"
    else:
        holds = True
        for curves in learners.values():
            measured = np.atleast_2d(curves.measured)
            bound = np.broadcast_to(curves.bound, measured.shape)
            if check.kind == "identity":
                holds &= bool(np.all(measured <= bound))
            else:
                holds &= bool(np.all(within_bound(measured, bound, rtol)))
        learner = max(float(np.max(_last_ratio(v))) for v in learners.values())
        ratios = [float(np.min(_last_ratio(v))) for v in falsifiers.values()]
        weakest = min(ratios) if ratios else math.nan
        sound = all(r > 1.0 for r in ratios) and (bool(ratios) or check.kind == "identity")
        what = "ratio {:.3g} at the largest horizon"
    if not holds:
        reasons.append(f"a learner breaks the result ({what.format(learner)})")
    if not sound:
        reasons.append(
            "no falsifier"
            if math.isnan(weakest)
            else f"a falsifier does not break it ({what.format(weakest)})"
        )
    return Verdict(bool(holds), bool(sound), float(learner), float(weakest), "; ".join(reasons))
