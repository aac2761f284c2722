"""`ojax run theory`: every numbered result of the source documents with a computable
right-hand side, measured against its bound over a range of horizons (:func:`checks`: those
of the modules :data:`SPEC` lists).

One dataset per result (its name, e.g. `notes-ogd`), one method per learner and instance,
one per falsifier (`falsifier:<what>`: a non-learner that should break the result), per variant
(`variant:<what>`: a wrong formula or parameter) and per non-learner on the document's own
instance where the bound is vacuous (`vacuous:<what>`), see :mod:`ojax.theory.base`. Metrics:
`measured`, `bound` and `ratio` (measured / bound) as curves `(n_seeds, H)` over the horizons;
an identity gives single values (the largest difference over every horizon, the tolerance 1e-9
and their ratio); a result whose constant is not explicit (`rate`) gives `measured`, the fitted
log-log `slope` of its mean and the `expected_slope` instead of a bound; a `shape` check's bound
is its stated constant times the bound's form. The method `verdict` of each result holds the
decision (:func:`ojax.theory.verdict`): `holds` and `sound` (1 or 0) and the deciding values,
`learner_ratio` / `falsifier_ratio` / `variant_ratio` (the learners' largest, the falsifiers'
and the variants' smallest ratio at the largest horizon) or the same `_slope`s. A result that
does not hold, or that no falsifier breaks, is named on stderr and in `config.json`
(`checks/NAME/verdict`). One figure per result: the measured quantity (median over seeds, a
10-90% quantile band, positive values only on the log axes) with its bound dashed in the same
colour; falsifiers dotted with crosses, variants dotted with pluses, vacuous rows dash-dotted.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import sys
import textwrap
import zlib
from typing import Any

import matplotlib
import matplotlib.ticker

if "ipykernel" not in sys.modules:  # a notebook keeps its inline backend (figures shown)
    matplotlib.use("Agg")

import numpy as np
from matplotlib.figure import Figure

from ojax.plotting import quantile_band
from ojax.results import ExperimentResult, split_key
from ojax.sweep import in_threads
from ojax.sweep.experiment import ExperimentConfig, ExperimentSpec, option
from ojax.theory import (
    Check,
    CheckConfig,
    Outcome,
    Verdict,
    role,
    slope_of,
    verdict,
)
from ojax.validation import InputError

VERDICT = "verdict"
"""The method of a result's decision rows (``holds``, ``sound`` and the deciding values)."""


def check_seed(name: str) -> int:
    """The integer seed of a check: a hash of its :attr:`~ojax.theory.Check.seed_name` (stable;
    the checks of a family that share an instance share it, the others are independent)."""
    return zlib.crc32(name.encode()) % (2**31)


def _positive(values: np.ndarray) -> np.ndarray:
    return np.where(values > 0, values, np.nan)


def figures(run) -> dict[str, Figure]:
    """The plot function of `theory` (:mod:`ojax.app.files`): `theory_CHECK` per
    check of `config.json`'s `checks`, from its `measured` and `bound` curves."""
    out, known = {}, checks()
    for name in run.config.get("checks", {}):
        if name not in known:
            continue
        methods: dict[str, tuple[np.ndarray, np.ndarray | None]] = {}
        horizons = None
        for key, curve in run.curves.items():
            check, method, metric = split_key(key)
            if check != name or metric not in ("measured", "measured_by_horizon"):
                continue
            if known[name].kind == "identity" and metric == "measured":
                continue  # the figure draws the curve over the horizons
            bound = run.curves.get(key.replace("measured", "bound"))
            methods[method] = (curve.values, None if bound is None else bound.values)
            horizons = curve.steps
        if methods:
            out[f"theory_{name}"] = check_figure(known[name], horizons, methods)
    return out


_STYLES = {  # role -> (marker, line style)
    "learner": ("o", "-"),
    "falsifier": ("x", ":"),
    "variant": ("+", ":"),
    "vacuous": ("d", "-."),
}


_SUPERSCRIPTS = str.maketrans(
    "-0123456789", "\u207b\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079"
)


def _power_label(value: float, _position: Any = None) -> str:
    """A log axis's tick label in plain text: `10³`, `2×10⁻¹` (matplotlib's default writes
    `$10^{3}$`, whose mathtext parsing is a tenth of a theory figure's time)."""
    if not (np.isfinite(value) and value > 0):
        return ""
    exponent = int(np.floor(np.log10(value) + 1e-9))
    mantissa = value / 10.0**exponent
    power = "10" + str(exponent).translate(_SUPERSCRIPTS)
    return power if abs(mantissa - 1.0) < 1e-6 else f"{mantissa:.3g}\u00d7{power}"


_POWERS = matplotlib.ticker.FuncFormatter(_power_label)


def check_figure(check: Check, horizons, methods) -> Figure:
    """Measured (median and 10-90% band over seeds) and bound against the horizon, log-log;
    `methods`: method -> `(measured, bound or None)`, each `(n_seeds, len(horizons))`."""
    from ojax.plotting import legend, new_figure

    fig, ax = new_figure(height=4.2)
    x = np.asarray(horizons, np.float64)
    for method, (measured, bound) in methods.items():
        measured = np.atleast_2d(measured)
        median = _positive(np.median(measured, axis=0))
        marker, style = _STYLES[role(method)]
        (line,) = ax.plot(x, median, marker=marker, ms=3 if marker == "o" else 4, ls=style,
                          label=method)  # fmt: skip
        if measured.shape[0] > 1:
            _, low, high = quantile_band(measured)  # the band every ojax figure draws
            ax.fill_between(x, _positive(low), _positive(high), color=line.get_color(), alpha=0.2)
        if bound is not None and np.all(np.isfinite(bound)):
            mean_bound = np.broadcast_to(bound, measured.shape).mean(axis=0)
            ax.plot(x, _positive(mean_bound), "--", color=line.get_color(), lw=1)
        elif check.rate is not None:  # a reference line of the expected slope
            start = np.nanmedian(measured[:, 0])
            ax.plot(x, start * (x / x[0]) ** check.rate, "-.", color=line.get_color(), lw=1)
    if check.kind == "shape":
        guide = f"dashed: {check.constant:g} x the bound's form"
    elif check.kind == "rate":
        guide = f"dash-dot: slope {check.rate:g}"
    else:
        guide = "dashed: tolerance" if check.kind == "identity" else "dashed: bound"
    title = f"{check.name}: {check.result} ({check.document})"
    instance = textwrap.shorten(check.instance, 160)
    heading = f"{textwrap.fill(title, 100)}\n{textwrap.fill(instance, 100)}"
    # a diagnostic of a check, not a paper's figure; at the default height, set (nothing sits
    # on top of these axes), so that matplotlib does not search for a clear spot at every draw
    ax.set_title(heading, fontsize=7, y=1.0)
    ax.set(xlabel=check.horizon, ylabel=f"measured ({guide})")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.minorticks_off()  # the decades only: a log axis's minor ticks cost half the figure's time
    ax.xaxis.set_major_formatter(_POWERS)  # "10³" in plain text: no mathtext to parse
    ax.yaxis.set_major_formatter(_POWERS)
    ax.grid(alpha=0.3)
    legend(fig, ax)
    return fig


def add_outcome(
    result: ExperimentResult, check: Check, outcome: Outcome, x64: bool = True
) -> Verdict:
    """The rows and curves of one check, its verdict rows last (see the module docstring)."""
    horizons = np.asarray(outcome.horizons, np.float64)
    for method, curves in outcome.methods.items():
        measured = np.atleast_2d(np.asarray(curves.measured, np.float64))
        bound = np.broadcast_to(np.asarray(curves.bound, np.float64), measured.shape)
        if check.kind == "rate":
            slope = slope_of(check.kind, horizons, curves)
            result.add(check.name, method, "slope", np.array([slope]))
            result.add(check.name, method, "expected_slope", np.array([check.expected_slope]))
        steps: np.ndarray | None = horizons
        if check.kind == "identity":  # the figure's curves over the horizons (no rows)
            result.curves[f"{check.name}/{method}/measured_by_horizon"] = measured
            result.steps[f"{check.name}/{method}/measured_by_horizon"] = horizons
            if np.all(np.isfinite(bound)):
                result.curves[f"{check.name}/{method}/bound_by_horizon"] = np.array(bound)
                result.steps[f"{check.name}/{method}/bound_by_horizon"] = horizons
            measured, bound, steps = measured.max(axis=1), bound.max(axis=1), None
        result.add(check.name, method, "measured", measured, steps=steps)
        if np.all(np.isfinite(bound)):
            result.add(check.name, method, "bound", bound, steps=steps)
            result.add(check.name, method, "ratio", measured / bound, steps=steps)
    decided = verdict(check, outcome, x64)
    value = "slope" if check.kind == "rate" else "ratio"
    for metric, number in (
        ("holds", float(decided.holds)),
        ("sound", float(decided.sound)),
        (f"learner_{value}", decided.learner),
        (f"falsifier_{value}", decided.falsifier),
        (f"variant_{value}", decided.variant),
    ):
        result.add(check.name, VERDICT, metric, np.array([number]))
    return decided


def describe(check: Check, outcome: Outcome, decided: Verdict) -> dict:
    """What `config.json` records of a check."""
    return {
        "document": check.document,
        "result": check.result,
        "statement": check.statement,
        "instance": check.instance,
        "kind": check.kind,
        "horizon": check.horizon,
        "horizons": np.asarray(outcome.horizons).tolist(),
        "rows": max(np.atleast_2d(c.measured).shape[0] for c in outcome.methods.values()),
        "rate": check.rate,
        "constant": check.constant,
        "falsifier": check.falsifier,
        "variant": check.variant,
        "note": check.note,
        "verdict": decided._asdict(),
    }


CHECK_MODULES = (
    "notes",
    "notes_mirror",
    "notes_experts",
    "notes_convex",
    "denevi",
    "denevi_tasks",
    "neu_rosasco",
    "zhao_hoi",
    "parameter_free_baselines",
    "baselines",
    "bandits",
    "nonstationary",
    "contextual",
)
"""The modules of :mod:`ojax.theory` whose ``CHECKS`` ``ojax run theory`` runs, in order
(imported when first needed: computing some checks' constants takes seconds)."""


@functools.cache
def checks() -> dict[str, Check]:
    """Every check of the theory experiment (:data:`SPEC` `.checks`), by name."""
    found: dict[str, Check] = {}
    for module in SPEC.checks:
        for check in importlib.import_module(f"ojax.theory.{module}").CHECKS:
            found[check.name] = check
    return found


def __getattr__(name: str) -> Any:
    if name == "CHECKS":  # ``CHECKS``: :func:`checks`, loaded on first use
        return checks()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def selected_checks(value: str | None) -> list[Check]:
    """The checks `--dataset` names: every check (`None`), else comma-separated check names
    or documents (`notes`, `denevi2020`, `neu-rosasco2018`, `zhao-hoi2010`,
    `baselines`).

    Raises:
      InputError: a name that is neither a check nor a document.
    """
    every = checks()
    if value is None:
        return list(every.values())
    documents = sorted({c.document for c in every.values()})
    picked: dict[str, Check] = {}
    for name in (part.strip() for part in value.split(",")):
        if name in every:
            picked[name] = every[name]
        elif name in documents:
            picked.update({n: c for n, c in every.items() if c.document == name})
        else:
            raise InputError(
                f"--dataset: {name!r} is neither a check of theory nor a document; choose "
                f"check names ({', '.join(every)}) or documents ({', '.join(documents)})"
            )
    return [c for n, c in every.items() if n in picked]


@dataclasses.dataclass(frozen=True)
class TheoryConfig(ExperimentConfig):
    """The options of `ojax run theory`."""

    dataset: str | None = option(
        help="theory: these checks only (comma-separated check names or documents, e.g. notes)",
        metavar="NAME",
    )

    def check(self, seeds_given: bool = True) -> tuple[ExperimentConfig, dict[str, Any]]:
        selected_checks(self.dataset)  # the names are checked before anything runs
        return super().check(seeds_given)


def run_theory(config: TheoryConfig) -> ExperimentResult:
    """Runs every check of :func:`checks` (or those of `config.dataset`, see
    :func:`selected_checks`), several at once (:func:`ojax.sweep.in_threads`), and draws one
    figure per check."""
    result = ExperimentResult()
    described = {}
    chosen = selected_checks(config.dataset)

    def compute(check: Check) -> Outcome:
        seed = check_seed(check.seed_name)
        return check.compute(CheckConfig(config.quick, config.seeds, seed, config.x64))

    computed = in_threads(compute, chosen, lapack=lambda check: check.lapack)
    outcomes = config.progress(computed, desc="theory")
    for check, outcome in zip(chosen, outcomes, strict=True):
        decided = add_outcome(result, check, outcome, config.x64)
        described[check.name] = describe(check, outcome, decided)
        if decided.reason:
            print(f"theory: {check.name} FAILS: {decided.reason}", file=sys.stderr)
    result.extra_config["checks"] = described
    return result


SPEC = ExperimentSpec(
    name="theory",
    summary="the documents' numbered results (lemmas, theorems, propositions) against their "
    "bounds over a range of horizons",
    run=run_theory,
    plot=figures,
    config=TheoryConfig,
    default_seeds=10,
    quick_seeds=2,
    figures=("theory_{dataset}.png",),
    checks=CHECK_MODULES,
    page="reproductions/index.md",
)


__all__ = [
    "CHECK_MODULES",
    "SPEC",
    "TheoryConfig",
    "VERDICT",
    "add_outcome",
    "check_figure",
    "check_seed",
    "checks",
    "describe",
    "figures",
    "run_theory",
    "selected_checks",
]
