"""``ojax run theory``: every numbered result of the source documents with a computable
right-hand side, measured against its bound over a range of horizons (:data:`ojax.theory.CHECKS`).

One dataset per result (its name, e.g. ``notes-ogd``), one method per learner and instance,
and one per falsifier (``falsifier:<what>``: a learner or instance that should break the result,
see :mod:`ojax.theory.base`). Metrics: ``measured``, ``bound`` and ``ratio`` (measured / bound)
as curves ``(n_seeds, H)`` over the horizons; an identity gives single values (the largest
difference over every horizon, the tolerance 1e-9 and their ratio); a result whose constant is
not explicit (``rate``) gives ``measured``, the fitted log-log ``slope`` of its mean and the
``expected_slope`` instead of a bound; a ``shape`` check gives both (the slope of its mean
ratio). The method ``verdict`` of each result holds the decision (:func:`ojax.theory.verdict`):
``holds`` and ``sound`` (1 or 0) and the deciding values, ``learner_ratio`` /
``falsifier_ratio`` (the learners' largest and the falsifiers' smallest ratio at the largest
horizon) or ``learner_slope`` / ``falsifier_slope``. A result that does not hold, or that no
falsifier breaks, is named on stderr and in ``config.json`` (``checks/NAME/verdict``). One figure
per result: the measured quantity (median over seeds, a 10-90% quantile band, positive values
only on the log axes) with its bound dashed in the same colour; falsifiers dotted, with crosses.
"""

from __future__ import annotations

import sys
import textwrap
import zlib

import matplotlib

if "ipykernel" not in sys.modules:  # a notebook keeps its inline backend (figures shown)
    matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

from ojax.experiments.output import ExperimentConfig, ExperimentResult
from ojax.plotting import quantile_band
from ojax.theory import (
    CHECKS,
    Check,
    CheckConfig,
    Outcome,
    Verdict,
    is_falsifier,
    slope_of,
    verdict,
)
from ojax.validation import InputError

VERDICT = "verdict"
"""The method of a result's decision rows (``holds``, ``sound`` and the deciding values)."""


def check_seed(name: str) -> int:
    """The integer seed of a check: a hash of its name (stable, independent of the others)."""
    return zlib.crc32(name.encode()) % (2**31)


def _positive(values: np.ndarray) -> np.ndarray:
    return np.where(values > 0, values, np.nan)


def check_figure(check: Check, outcome: Outcome) -> Figure:
    """Measured (median and 10-90% band over seeds) and bound against the horizon, log-log."""
    with plt.rc_context({"figure.max_open_warning": 0}):  # one figure per check, all kept
        fig, ax = plt.subplots(figsize=(6.4, 4.6))
    x = np.asarray(outcome.horizons, np.float64)
    for method, curves in outcome.methods.items():
        measured = np.atleast_2d(curves.measured)
        median = _positive(np.median(measured, axis=0))
        if is_falsifier(method):
            (line,) = ax.plot(x, median, marker="x", ms=4, ls=":", label=method)
        else:
            (line,) = ax.plot(x, median, marker="o", ms=3, label=method)
        if measured.shape[0] > 1:
            _, low, high = quantile_band(measured)  # the band every ojax figure draws
            ax.fill_between(x, _positive(low), _positive(high), color=line.get_color(), alpha=0.2)
        bound = np.broadcast_to(curves.bound, measured.shape).mean(axis=0)
        if np.all(np.isfinite(bound)):
            ax.plot(x, _positive(bound), "--", color=line.get_color(), lw=1)
        elif check.rate is not None:  # a reference line of the expected slope
            start = np.nanmedian(measured[:, 0])
            ax.plot(x, start * (x / x[0]) ** check.rate, "-.", color=line.get_color(), lw=1)
    guide = {
        "bound": "dashed: bound",
        "identity": "dashed: tolerance",
        "shape": "dashed: the bound's form, constant 1",
    }.get(check.kind, f"dash-dot: slope {check.rate:g}" if check.rate is not None else "")
    title = f"{check.name}: {check.result} ({check.document})"
    instance = textwrap.shorten(check.instance, 160)
    ax.set_title(f"{title}\n{textwrap.fill(instance, 90)}", fontsize=7)
    ax.set(xlabel=check.horizon, ylabel=f"measured ({guide})")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=6)
    # fixed margins (room for three title lines): a tight layout measures every tick label
    # first and doubled the drawing time of the 24 figures
    fig.subplots_adjust(left=0.11, right=0.97, bottom=0.1, top=0.87)
    return fig


def add_outcome(
    result: ExperimentResult, check: Check, outcome: Outcome, x64: bool = True
) -> Verdict:
    """The rows and curves of one check, its verdict rows last (see the module docstring)."""
    horizons = np.asarray(outcome.horizons, np.float64)
    for method, curves in outcome.methods.items():
        measured = np.atleast_2d(np.asarray(curves.measured, np.float64))
        bound = np.broadcast_to(np.asarray(curves.bound, np.float64), measured.shape)
        if check.kind in ("rate", "shape"):
            slope = slope_of(check.kind, horizons, curves)
            result.add(check.name, method, "slope", np.array([slope]))
            result.add(check.name, method, "expected_slope", np.array([check.expected_slope]))
        if check.kind == "identity":
            measured, bound = measured.max(axis=1), bound.max(axis=1)
        result.add(check.name, method, "measured", measured)
        if np.all(np.isfinite(bound)):
            result.add(check.name, method, "bound", bound)
            result.add(check.name, method, "ratio", measured / bound)
    decided = verdict(check, outcome, x64)
    value = "slope" if check.kind in ("rate", "shape") else "ratio"
    for metric, number in (
        ("holds", float(decided.holds)),
        ("sound", float(decided.sound)),
        (f"learner_{value}", decided.learner),
        (f"falsifier_{value}", decided.falsifier),
    ):
        result.add(check.name, VERDICT, metric, np.array([number]))
    return decided


def describe(check: Check, outcome: Outcome, decided: Verdict) -> dict:
    """What ``config.json`` records of a check."""
    return {
        "document": check.document,
        "result": check.result,
        "statement": check.statement,
        "instance": check.instance,
        "kind": check.kind,
        "horizon": check.horizon,
        "horizons": np.asarray(outcome.horizons).tolist(),
        "rate": check.rate,
        "falsifier": check.falsifier,
        "note": check.note,
        "verdict": decided._asdict(),
    }


def selected_checks(value: str | None) -> list[Check]:
    """The checks ``--dataset`` names: every check (``None``), else comma-separated check names
    or documents (``notes``, ``denevi2020``, ``neu-rosasco2018``, ``zhao-hoi2010``,
    ``baselines``).

    Raises:
      InputError: a name that is neither a check nor a document.
    """
    if value is None:
        return list(CHECKS.values())
    documents = sorted({c.document for c in CHECKS.values()})
    picked: dict[str, Check] = {}
    for name in (part.strip() for part in value.split(",")):
        if name in CHECKS:
            picked[name] = CHECKS[name]
        elif name in documents:
            picked.update({n: c for n, c in CHECKS.items() if c.document == name})
        else:
            raise InputError(
                f"--dataset: {name!r} is neither a check of theory nor a document; choose "
                f"check names ({', '.join(CHECKS)}) or documents ({', '.join(documents)})"
            )
    return [c for n, c in CHECKS.items() if n in picked]


def run_theory(config: ExperimentConfig) -> ExperimentResult:
    """Runs every check of :data:`ojax.theory.CHECKS` (or those of ``config.dataset``, see
    :func:`selected_checks`) and draws one figure per check."""
    result = ExperimentResult()
    described = {}
    checks = selected_checks(getattr(config, "dataset", None))
    for check in config.progress(checks, desc="theory"):
        settings = CheckConfig(config.quick, config.seeds, check_seed(check.name), config.x64)
        outcome = check.compute(settings)
        decided = add_outcome(result, check, outcome, config.x64)
        described[check.name] = describe(check, outcome, decided)
        result.figures[f"theory_{check.name}.png"] = check_figure(check, outcome)
        if decided.reason:
            print(f"theory: {check.name} FAILS: {decided.reason}", file=sys.stderr)
    result.extra_config["checks"] = described
    return result
