"""A numbered result of a source document, checked numerically (`ojax run theory`).

A :class:`Check` names the result and computes, on the instance the result is about, the measured
quantity and its bound over a range of horizons (`T`, `n` or the number of tasks), for the
learner the result is about and for the methods that should break it. A method's name says its
role (:func:`role`):

- a **learner** (no prefix): what the result is about; it must satisfy the result;
- a **falsifier** (`falsifier:<what>`, :data:`FALSIFIER`): something that does not learn on the
  same instance (no learning, a constant, the wrong step, the learner without the mechanism the
  result is about); it must break the result at the largest horizon. A bound, shape or rate
  check is *sound* only if it has one and every one breaks it: a bound that no non-learner
  breaks checks nothing;
- a **variant** (`variant:<what>`, :data:`VARIANT`): the bound with a wrong formula or a wrong
  parameter, or an instance outside the result's hypothesis; it must break the result too, and
  is reported apart (it shows that a term or a hypothesis matters, not that the bound is
  informative);
- **vacuous** (`vacuous:<what>`, :data:`VACUOUS`): a non-learner on the document's own instance
  where the bound is vacuous (it stays under it); reported beside the informative instance,
  neither required to break the result nor counted in the verdict.

Five kinds:

- `"bound"`: the document's right-hand side is explicit; the learners' measured values must
  lie under it at every horizon and seed; each falsifier's (and variant's) `measured / bound` at
  the largest horizon must exceed 1 (on every seed).
- `"shape"`: the bound's form is known but not its constant (the document's display is lost):
  `bound` is :attr:`Check.constant` times the form, a largest ratio stated in the check, tested
  over a wide window of horizons as a `"bound"` is.
- `"rate"`: no explicit constant; `bound` is NaN and the log-log slope of the mean measured
  value against the horizon must not exceed `Check.rate` (plus :data:`SLOPE_TOLERANCE`); each
  falsifier's (and variant's) slope must exceed it.
- `"inequality"`: a property of functions or constants, with no learner (a lemma on the
  weights, a convex-analysis inequality): tested as a `"bound"`; sound when its variants (a
  function outside the hypothesis, the formula without a term) break it.
- `"identity"`: an exact identity (float64); `measured` is the largest absolute difference
  and `bound` the tolerance (:data:`IDENTITY_TOLERANCE`). It needs no falsifier (there is no
  slack to hide in); one given (a wrong formula) must exceed the tolerance.

:func:`verdict` decides both (`holds` and `sound`) for every kind; `ojax run theory`
records it as the method `verdict` of each check's rows.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any, Literal, NamedTuple, get_args

import numpy as np

Kind = Literal["bound", "shape", "rate", "inequality", "identity"]
Document = Literal[
    "notes",
    "denevi2020",
    "neu-rosasco2018",
    "zhao-hoi2010",
    "parameter-free",
    "baselines",
    "nonstationary",
]
KINDS: tuple[str, ...] = get_args(Kind)
DOCUMENTS: tuple[str, ...] = get_args(Document)
IDENTITY_TOLERANCE = 1e-9
FALSIFIER = "falsifier:"
"""The prefix of a falsifier's method name, e.g. ``"falsifier:w=0"``: a non-learner."""
VARIANT = "variant:"
"""The prefix of a variant's method name, e.g. ``"variant:bound without delay"``."""
VACUOUS = "vacuous:"
"""The prefix of a non-learner on the document's own instance where the bound is vacuous."""
ROLES = ("learner", "falsifier", "variant", "vacuous")


def is_falsifier(method: str) -> bool:
    """Whether `method` names a falsifier (`falsifier:<what>`): a non-learner."""
    return method.startswith(FALSIFIER)


def role(method: str) -> str:
    """`"falsifier"`, `"variant"`, `"vacuous"` (from the method's prefix) or `"learner"`."""
    for prefix, name in ((FALSIFIER, "falsifier"), (VARIANT, "variant"), (VACUOUS, "vacuous")):
        if method.startswith(prefix):
            return name
    return "learner"


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
    `"identity"` and `"inequality"`); `variant`: what each variant is (required for an
    `"inequality"`); `rate`: the expected log-log slope (`"rate"` checks); `constant`: the
    largest ratio to the bound's form a `"shape"` check states (its bound is the form times
    it); `note`: e.g. why this instance, where a constant comes from; `shares`: checks that
    give the same name share their PRNG seed, hence their instance and the runs on it (one
    draw and one run of the learners for a family of results), default the check's own name;
    `lapack`: its programs call LAPACK (`jnp.linalg` on the CPU), so it never runs beside
    another such check (:data:`ojax.sweep.threads.LAPACK`: two at once deadlock).
    """

    name: str
    document: Document
    result: str
    statement: str
    instance: str
    kind: Kind
    horizon: str
    compute: Callable[[CheckConfig], Outcome]
    falsifier: str = ""
    rate: float | None = None
    note: str = ""
    variant: str = ""
    constant: float | None = None
    shares: str = ""
    lapack: bool = False

    @property
    def seed_name(self) -> str:
        """The name the check's seed is drawn from (:attr:`shares`, else :attr:`name`)."""
        return self.shares or self.name

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"Check {self.name!r}: kind={self.kind!r}, expected one of {KINDS}")
        if self.document not in DOCUMENTS:
            raise ValueError(
                f"Check {self.name!r}: document={self.document!r}, expected one of {DOCUMENTS}"
            )
        if (self.kind == "rate") != (self.rate is not None):
            raise ValueError(f"Check {self.name!r}: a rate is given exactly for kind 'rate'")
        if (self.kind == "shape") != (self.constant is not None):
            raise ValueError(
                f"Check {self.name!r}: a constant (the largest ratio to the bound's form) is "
                "given exactly for kind 'shape'"
            )
        if self.kind in ("bound", "shape", "rate") and not self.falsifier:
            raise ValueError(
                f"Check {self.name!r}: a {self.kind!r} check needs a falsifier (a non-learner "
                "that should break it, reported as methods 'falsifier:<what>')"
            )
        if self.kind == "inequality" and not (self.variant or self.falsifier):
            raise ValueError(
                f"Check {self.name!r}: an 'inequality' check needs a variant (what should "
                "break it, reported as methods 'variant:<what>')"
            )

    @property
    def expected_slope(self) -> float | None:
        """The slope a `"rate"` check tests (`rate`); `None` for the other kinds."""
        return self.rate if self.kind == "rate" else None


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
    falsifier and variant breaks it, and a bound, shape or rate check has a falsifier (an
    inequality a falsifier or a variant; an identity needs neither). `learner`: the learners'
    worst value (largest ratio at the largest horizon, largest slope, largest difference);
    `falsifier`: the falsifiers' weakest value (smallest ratio at the largest horizon over
    seeds, smallest slope; NaN without falsifiers); `variant`: the same of the variants.
    `reason`: one line when not both.
    """

    holds: bool
    sound: bool
    learner: float
    falsifier: float
    reason: str
    variant: float = math.nan


def _last_ratio(curves: Measured) -> np.ndarray:
    """`measured / bound` at the largest horizon, one value per seed."""
    measured = np.atleast_2d(curves.measured)
    bound = np.broadcast_to(curves.bound, measured.shape)
    return measured[:, -1] / bound[:, -1]


def slope_of(kind: str, horizons: np.ndarray, curves: Measured) -> float:
    """The slope a `"rate"` check tests: of the mean measured value against the horizon."""
    return fitted_slope(horizons, np.atleast_2d(curves.measured))


def _weakest(values: list[float]) -> float:
    return min(values) if values else math.nan


def verdict(check: Check, outcome: Outcome, x64: bool = True) -> Verdict:
    """Whether `outcome` (of `check`) holds for its learners and is broken by its
    falsifiers and variants; see :class:`Verdict` and the module docstring."""
    rtol = BOUND_RTOL if x64 else FLOAT32_RTOL
    by_role: dict[str, dict[str, Measured]] = {name: {} for name in ROLES}
    for method, curves in outcome.methods.items():
        by_role[role(method)][method] = curves
    learners, falsifiers, variants = by_role["learner"], by_role["falsifier"], by_role["variant"]
    if not learners:
        return Verdict(False, False, math.nan, math.nan, "no learner")
    reasons = []
    threshold = 1.0  # what a falsifier's or a variant's value must exceed
    if check.kind == "rate":
        limit = threshold = float(check.expected_slope or 0.0) + SLOPE_TOLERANCE

        def value(curves: Measured) -> float:
            return slope_of(check.kind, outcome.horizons, curves)

        holds = all(value(v) <= limit for v in learners.values())
        learner = max(value(v) for v in learners.values())
        weakest = _weakest([value(v) for v in falsifiers.values()])
        variant = _weakest([value(v) for v in variants.values()])
        broken = [w > threshold for w in (weakest, variant) if not math.isnan(w)]
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
        weakest = _weakest([float(np.min(_last_ratio(v))) for v in falsifiers.values()])
        variant = _weakest([float(np.min(_last_ratio(v))) for v in variants.values()])
        broken = [w > 1.0 for w in (weakest, variant) if not math.isnan(w)]
        what = "ratio {:.3g} at the largest horizon"
    needs = {"identity": True, "inequality": bool(falsifiers or variants)}
    sound = all(broken) and needs.get(check.kind, bool(falsifiers))
    if not holds:
        reasons.append(f"a learner breaks the result ({what.format(learner)})")
    if not sound:
        if not needs.get(check.kind, bool(falsifiers)):
            reasons.append("no falsifier" if check.kind != "inequality" else "no variant")
        for label, number in (("falsifier", weakest), ("variant", variant)):
            if not math.isnan(number) and not number > threshold:
                reasons.append(f"a {label} does not break it ({what.format(number)})")
    return Verdict(
        bool(holds), bool(sound), float(learner), float(weakest), "; ".join(reasons), variant
    )


__all__ = [
    "BOUND_RTOL",
    "Check",
    "CheckConfig",
    "DOCUMENTS",
    "Document",
    "FALSIFIER",
    "FLOAT32_RTOL",
    "IDENTITY_TOLERANCE",
    "KINDS",
    "Kind",
    "Measured",
    "Outcome",
    "ROLES",
    "SLOPE_TOLERANCE",
    "VACUOUS",
    "VARIANT",
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
