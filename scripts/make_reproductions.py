"""Writes the reproduction pages ``docs/reproductions/<paper>.md`` from the experiments' results.

Each page puts the document's published numbers (transcribed from the specs, in
``scripts/reproductions_content.py``) beside ours (mean +- std over seeds), shows the figures
(copied to ``docs/reproductions/figures/``), the document's numbered results from the ``theory``
experiment, and each claim with what our data shows and the test that checks it.

Usage::

    python scripts/make_reproductions.py [--results DIR] [--docs DIR] [--run] [--quick]
                                         [--page NAME ...]

``--results DIR`` holds one folder per experiment, as ``ojax run NAME --out DIR/NAME`` writes
it (default ``results``). ``--run`` first runs the experiments whose folder has no
``results.csv`` (``python -m ojax.app.cli run NAME --out DIR/NAME``, full size unless ``--quick``).
An experiment without results is named as missing on its page. ``--page NAME`` writes only
that page (and removes only its own stale figures), e.g. ``--page parameter-free-benchmark``.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import parameter_free_tables  # noqa: E402
from reproductions_content import (  # noqa: E402
    PAGES,
    PUBLISHED,
    QUICK_REASONS,
    TABLES,
    Claim,
    Page,
)

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs" / "reproductions"
FIGURES = "figures"
SCRIPT = "python scripts/make_reproductions.py"
PLACEHOLDER = re.compile(r"\{([a-z0-9-]+):([^{}]+)\}")
SLOPE_TOLERANCE = 0.15  # ojax.theory.SLOPE_TOLERANCE (checked by tests/test_reproductions.py)
BOUND_RTOL = 1e-9  # ojax.theory.BOUND_RTOL (idem)
FLOAT32_RTOL = 1e-5  # ojax.theory.FLOAT32_RTOL (idem): a bound attained exactly, in float32
FALSIFIER = "falsifier:"  # ojax.theory.FALSIFIER (idem): the prefix of a falsifier's method
VARIANT = "variant:"  # ojax.theory.VARIANT (idem): a wrong formula or parameter
VACUOUS = "vacuous:"  # ojax.theory.VACUOUS (idem): a non-learner on the document's instance
VERDICT = "verdict"  # ojax.experiments.theory.VERDICT (idem): a check's decision rows
MAX_WIDTH = 900  # pixels of a copied figure
X64 = ("theory",)  # run in float64 by --run (its tests check it so: an attained bound)


class Results(NamedTuple):
    """One experiment's outputs: final rows keyed ``(dataset, method, metric)`` ->
    ``(mean, std, n_seeds)``, ``config.json``, the figures' paths and the folder."""

    rows: dict[tuple[str, str, str], tuple[float, float, int]]
    config: dict[str, Any]
    figures: list[Path]
    folder: Path


def load_results(folder: Path) -> Results | None:
    """The outputs of ``ojax run NAME --out folder``, or ``None`` without ``results.csv``."""
    table = folder / "results.csv"
    if not table.is_file():
        return None
    rows = {}
    with table.open(newline="") as f:
        for r in csv.DictReader(f):
            key = (r["dataset"], r["method"], r["metric"])
            rows[key] = (float(r["mean"]), float(r["std"]), int(r["n_seeds"]))
    config_file = folder / "config.json"
    config = json.loads(config_file.read_text()) if config_file.is_file() else {}
    return Results(rows, config, sorted(folder.glob("*.png")), folder)


def run_missing(names: list[str], results: Path, quick: bool) -> dict[str, float]:
    """Runs the experiments of ``names`` without results (one subprocess each); returns the
    wall time of each run (seconds), ``nan`` for one that failed."""
    import time

    times = {}
    for name in names:
        if (results / name / "results.csv").is_file():
            continue
        command = [sys.executable, "-m", "ojax.app.cli", "run", name, "--out", str(results / name)]
        command += ["--quick"] if quick else []
        command += ["--x64"] if name in X64 else []
        print("running", " ".join(command[1:]), flush=True)
        start = time.perf_counter()
        done = subprocess.run(command + ["--quiet"], cwd=ROOT, check=False)
        times[name] = time.perf_counter() - start if done.returncode == 0 else float("nan")
        if done.returncode != 0:
            print(f"{name}: exit status {done.returncode}; its page says it is missing")
    return times


def mean_std(value: tuple[float, float, int] | None) -> str:
    """``mean +- std`` to the std's second significant digit (the CLI's rounding)."""
    if value is None:
        return "n/a"
    mean, std, n = value
    if n == 1 or std <= 1e-12 * max(abs(mean), 1e-300):
        return f"{mean:.6g}"
    place = int(np.floor(np.log10(std)))
    if mean == 0 or 1e-3 <= abs(mean) < 1e7:
        decimals = max(1 - place, 0)
        return f"{mean:.{decimals}f} +- {std:.{decimals}f}"
    return f"{mean:.3e} +- {std:.1e}"


def run_settings(name: str, res: Results) -> str:
    """One line: size (quick / full), seeds, precision, device and wall time of a run."""
    c = res.config
    seeds = {n for (_, _, _), (_, _, n) in res.rows.items()}
    generic = "fewer tasks, points or seeds than the document's; without `--quick`: full size"
    reason = QUICK_REASONS.get(name, generic)
    size = f"quick size (`--quick`: {reason})" if c.get("quick") else "full size"
    wall = c.get("wall_seconds")
    time = f", {wall:.0f} s wall" if isinstance(wall, (int, float)) else ""
    seeds_text = f"{c.get('seeds', '?')} seeds"
    if seeds != {c.get("seeds")}:  # deterministic rows are one run
        seeds_text += f" (rows over {_counts(seeds)})"
    return (
        f"`{name}`: {size}, {seeds_text}, "
        f"{'float64' if c.get('x64') else 'float32'}, device {c.get('device', '?')}{time}, "
        f"ojax {c.get('ojax_version', '?')}, jax {c.get('jax_version', '?')}"
    )


def _counts(values: set[int]) -> str:
    return " or ".join(str(v) for v in sorted(values)) if values else "?"


def _order(keys: list[tuple[str, str, str]]) -> tuple[list[str], list[str]]:
    """Datasets and methods in their order of appearance in ``results.csv``."""
    datasets = list(dict.fromkeys(k[0] for k in keys))
    methods = list(dict.fromkeys(k[1] for k in keys))
    return datasets, methods


def results_table(name: str, res: Results) -> list[str]:
    """The experiment's table: the document's numbers beside ours, one row per (dataset,
    method); a pivoted table for methods suffixed ``@KEY=VALUE``."""
    if name == parameter_free_tables.NAME:  # a row per grid point: headline tables instead
        return parameter_free_tables.headline(res, mean_std)
    table, published = TABLES[name], PUBLISHED[name].values
    keys = [k for k in res.rows if k[2] in table.metrics]
    if table.pivot:
        return [line for m in table.metrics for line in _pivot_table(res, keys, m) + [""]][:-1]
    datasets, methods = _order(keys)
    head, cols = ["dataset", "method"], []
    for metric in table.metrics:
        if any(k[2] == metric for k in published):
            head.append(f"{metric} (document)")
            cols.append(("doc", metric))
        head.append(f"{metric} (ours)")
        cols.append(("ours", metric))
    lines = _header(head + ["seeds"])
    for data in datasets:
        for method in methods:
            found = [res.rows.get((data, method, m)) for m in table.metrics]
            if not any(found):
                continue
            cells = [data, method]
            for kind, metric in cols:
                key = (data, method, metric)
                cells.append(
                    published.get(key, "-") if kind == "doc" else mean_std(res.rows.get(key))
                )
            cells.append(str(next(v[2] for v in found if v)))
            lines.append(_row(cells))
    return lines


def _pivot_table(res: Results, keys: list, metric: str) -> list[str]:
    datasets, methods = _order([k for k in keys if k[2] == metric])
    bases = list(dict.fromkeys(m.split("@", 1)[0] for m in methods))
    values = list(dict.fromkeys(m.split("@", 1)[1] for m in methods if "@" in m))
    lines = [f"Final `{metric}`, mean +- std over seeds, one column per value:", ""]
    lines += _header(["dataset", "method", *values])
    for data in datasets:
        for base in bases:
            cells = [mean_std(res.rows.get((data, f"{base}@{v}", metric))) for v in values]
            lines.append(_row([data, base, *cells]))
    return lines


def _header(cells: list[str]) -> list[str]:
    return [_row(cells), _row(["---"] * len(cells))]


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"


def small_png(source: Path, target: Path, width: int = MAX_WIDTH) -> None:
    """A copy of a PNG at most ``width`` pixels wide with a palette of 128 colours (about a
    quarter of matplotlib's RGBA file); a plain copy without Pillow."""
    try:
        from PIL import Image
    except ImportError:  # pragma: no cover - Pillow comes with matplotlib
        shutil.copyfile(source, target)
        return
    with Image.open(source) as image:
        image = image.convert("RGB")
        if image.width > width:
            height = round(image.height * width / image.width)
            image = image.resize((width, height), Image.Resampling.LANCZOS)
        image.quantize(colors=128).save(target, optimize=True)


def copy_figures(name: str, res: Results, out: Path, only: set[str] | None = None) -> list[str]:
    """Copies the run's PNGs into ``out/figures/`` as ``NAME_FILE.png``; their markdown."""
    folder = out / FIGURES
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    for path in res.figures:
        if only is not None and path.name not in only:
            continue
        prefix = name.split("-")[0] + "_"
        target = path.name if path.name.startswith(prefix) else f"{name}_{path.name}"
        small_png(path, folder / target)
        lines += [f"![{name}: {path.stem}]({FIGURES}/{target})", ""]
    return lines


def theory_rows(theory: Results, document: str) -> list[tuple[str, dict, str]]:
    """The theory checks of ``document``: ``(check name, its config entry, method)``."""
    checks = theory.config.get("checks", {})
    out = []
    for data, method, metric in theory.rows:
        entry = checks.get(data)
        if entry is None or entry.get("document") != document or metric != "measured":
            continue
        out.append((data, entry, method))
    return out


def role(method: str) -> str:
    """``ojax.theory.role``: a method's role from its prefix."""
    for prefix, name in ((FALSIFIER, "falsifier"), (VARIANT, "variant"), (VACUOUS, "vacuous")):
        if method.startswith(prefix):
            return name
    return "learner"


def _last_ratios(theory: Results, check: str, method: str) -> np.ndarray | None:
    """``measured / bound`` at the largest horizon, one per seed (from ``curves.npz``; the mean
    row without it)."""
    curves = _theory_curves(theory, check, method)
    if curves is not None:
        measured, bound = curves
        return measured[:, -1] / np.broadcast_to(bound, measured.shape)[:, -1]
    ratio = theory.rows.get((check, method, "ratio"))
    return None if ratio is None else np.array([ratio[0]])


def theory_status(theory: Results, check: str, kind: str, method: str) -> tuple[str, str]:
    """The value shown (ratio at the largest horizon, the largest difference, or the fitted
    slope) and the status: a learner holds or fails, a falsifier or a variant breaks the
    result or not, a non-learner on the document's own instance is under its bound or not."""
    rows = theory.rows
    which = role(method)
    if kind == "rate":
        slope = rows.get((check, method, "slope"))
        expected = rows.get((check, method, "expected_slope"))
        if slope is None or expected is None:
            return "n/a", "no slope"
        above = slope[0] > expected[0] + SLOPE_TOLERANCE
        shown = f"slope {slope[0]:.3f} (limit {expected[0] + SLOPE_TOLERANCE:g})"
        if which == "learner":
            return shown, "**fails**" if above else "holds"
        return shown, _breaks(which, above)
    ratio = rows.get((check, method, "ratio"))
    if ratio is None:
        return "n/a", "no bound"
    if which != "learner":
        ratios = _last_ratios(theory, check, method)
        above = bool(np.all(ratios > 1.0)) if ratios is not None else ratio[0] - ratio[1] > 1.0
        return mean_std(ratio), _breaks(which, above)
    curves = _theory_curves(theory, check, method)
    rtol = BOUND_RTOL if theory.config.get("x64") else FLOAT32_RTOL
    if curves is not None:
        measured, bound = curves
        ok = bool(np.all(measured <= bound + rtol * np.maximum(1.0, np.abs(bound))))
    else:  # no curves: the largest horizon's mean and std only
        ok = ratio[0] + ratio[1] <= 1.0 + rtol
    if kind == "identity":
        shown = f"{rows[(check, method, 'measured')][0]:.2e} (tolerance 1e-9)"
    else:
        shown = mean_std(ratio)
    return shown, "holds" if ok else "**fails**"


def _breaks(which: str, above: bool) -> str:
    if which == "vacuous":
        return "over its bound" if above else "under its bound: vacuous here"
    return "breaks it" if above else "**does not break it**"


def _theory_curves(theory: Results, check: str, method: str) -> tuple | None:
    path = theory.folder / "curves.npz"
    if not path.is_file():
        return None
    with np.load(path) as z:
        keys = [f"{check}/{method}/measured", f"{check}/{method}/bound"]
        if not all(k in z for k in keys):
            return None
        return z[keys[0]], z[keys[1]]


def check_verdicts(theory: Results, checks: list[str]) -> tuple[list[str], list[str]]:
    """The checks whose learners break the result, and those no falsifier breaks (the
    experiment's ``verdict`` rows; a check without them counts as not sound)."""
    rows = theory.rows
    failing = [c for c in checks if rows.get((c, VERDICT, "holds"), (1.0,))[0] != 1.0]
    unsound = [c for c in checks if rows.get((c, VERDICT, "sound"), (0.0,))[0] != 1.0]
    return failing, unsound


def _size(entry: dict, rows: int | None) -> str:
    """The horizons a check ran over and its rows (seeds), e.g. ``T = 10 .. 10000 (12), 10
    rows``."""
    horizons = entry.get("horizons") or []
    label = str(entry.get("horizon", "")).split(" (")[0] or "horizon"
    span = f"{label} = {horizons[0]:g} .. {horizons[-1]:g} ({len(horizons)})" if horizons else "?"
    count = entry.get("rows", rows)
    return f"{span}, {count} row{'s' if count != 1 else ''}" if count else span


def _extreme(theory: Results, check: str, kind: str, methods: list[str], largest: bool):
    """``(method, value)``: the largest (or smallest) deciding value among ``methods`` (a rate's
    slope, else the ratio at the largest horizon over seeds), or ``None``."""
    found = []
    for method in methods:
        if kind == "rate":
            slope = theory.rows.get((check, method, "slope"))
            value = None if slope is None else slope[0]
        else:
            ratios = _last_ratios(theory, check, method)
            value = None if ratios is None else float(ratios.max() if largest else ratios.min())
        if value is not None and np.isfinite(value):
            found.append((value, method))
    if not found:
        return None
    value, method = max(found) if largest else min(found)
    return method, value


def _shown(found, kind: str) -> str:
    if found is None:
        return "-"
    method, value = found
    number = f"slope {value:.3f}" if kind == "rate" else f"{value:.3g}"
    name = method if role(method) == "learner" else method.split(":", 1)[1]
    return f"{number} ({name})"


def _vacuous(theory: Results, check: str, kind: str, methods: list[str]) -> str:
    """The non-learners on the document's own instance: their ratios' range over rows (the
    largest method), and whether they stay under the bound there."""
    if not methods:
        return "-"
    low = _extreme(theory, check, kind, methods, largest=False)
    high = _extreme(theory, check, kind, methods, largest=True)
    if low is None or high is None:
        return "-"
    name = high[0].split(":", 1)[1]
    if high[1] <= 1.0:
        return f"{high[1]:.3g} ({name}): under the bound, vacuous there"
    return f"{low[1]:.3g} .. {high[1]:.3g} ({name}): not separated there"


def summary_table(theory: Results, found: list[tuple[str, dict, str]]) -> list[str]:
    """One row per check: its size, the learners' worst value, the weakest falsifier
    (non-learner), the weakest variant (a wrong formula or parameter) and the non-learner on
    the document's own instance where the bound is vacuous."""
    lines = _header([
        "check", "kind", "size", "learners' worst", "weakest falsifier", "weakest variant",
        "the document's own instance",
    ])  # fmt: skip
    by_check: dict[str, list[str]] = {}
    for check, _, method in found:
        by_check.setdefault(check, []).append(method)
    entries = {check: entry for check, entry, _ in found}
    for check, methods in by_check.items():
        entry, kind = entries[check], entries[check]["kind"]
        rows = max(theory.rows.get((check, m, "measured"), (0, 0, 0))[2] for m in methods)
        roles: dict[str, list[str]] = {}
        for method in methods:
            roles.setdefault(role(method), []).append(method)
        learners = roles.get("learner", [])
        worst = _extreme(theory, check, kind, learners, largest=True)
        if kind == "identity" and worst is not None:
            measured = max(theory.rows[(check, m, "measured")][0] for m in learners)
            learner = f"{measured:.2e} (tolerance 1e-9)"
        else:
            learner = _shown(worst, kind)
        weakest = _extreme(theory, check, kind, roles.get("falsifier", []), largest=False)
        falsifier = _shown(weakest, kind)
        if weakest is None:
            falsifier = {"identity": "none needed", "inequality": "none (no learner)"}.get(
                kind, "**none**"
            )
        variant = _shown(_extreme(theory, check, kind, roles.get("variant", []), False), kind)
        document = _vacuous(theory, check, kind, roles.get("vacuous", []))
        lines.append(_row([f"`{check}`", kind, _size(entry, rows), learner, falsifier,
                           variant, document]))  # fmt: skip
    return lines


def theory_section(theory: Results | None, document: str, out: Path) -> list[str]:
    """The document's numbered results checked by the ``theory`` experiment, each with its
    falsifiers (non-learners that should break it), variants and, where the document's own
    instance makes the bound vacuous, the non-learner there."""
    lines = ["## The document's numbered results (`ojax run theory`)", ""]
    if theory is None:
        return lines + ["The `theory` experiment has no results here: not run.", ""]
    found = theory_rows(theory, document)
    if not found:
        return lines + [f"The `theory` experiment holds no check of `{document}`.", ""]
    tolerance = "1e-9" if theory.config.get("x64") else f"{FLOAT32_RTOL:g} (float32)"
    size = "quick size (`--quick`)" if theory.config.get("quick") else "full size"
    lines += [
        f"From `{_command('theory', theory).split(' --out')[0]}` at {size}. Each result is "
        "run for the learner it is about and for its **falsifiers** (methods `falsifier:...`: "
        "a non-learner on the same instance: no learning, a constant, the wrong step): a bound, "
        "shape or rate is checked only if a falsifier breaks it. **Variants** (`variant:...`: "
        "the bound with a wrong formula or parameter, an instance outside the hypothesis) must "
        "break it too and are reported apart; an inequality without a learner has only "
        "variants. Where the document's own instance makes the bound vacuous, its non-learner "
        "is shown beside (`vacuous:...`). Value: measured / bound at the largest horizon "
        "(mean +- std over rows; the weakest and worst values below are over rows); for an "
        "identity the largest difference; for a rate the fitted log-log slope; a shape's bound "
        "is its stated constant times the bound's form. Status of a learner: the bound holds "
        f"at every horizon and row (relative slack {tolerance}), the slope is at most the "
        f"expected one + {SLOPE_TOLERANCE}. A falsifier or variant breaks the result when its "
        "ratio at the largest horizon exceeds 1 on every row (its slope exceeds the limit).",
        "",
    ]
    lines += summary_table(theory, found) + [""]
    lines += _header(["check", "result", "statement", "kind", "method", "value", "status"])
    previous = None
    for check, entry, method in found:
        shown, status = theory_status(theory, check, entry["kind"], method)
        cells = [f"`{check}`", entry["result"], entry["statement"], entry["kind"]]
        if check == previous:  # the check's own cells once, then one row per method
            cells = [""] * len(cells)
        previous = check
        lines.append(_row(cells + [method, shown, status]))
    checks = list(dict.fromkeys(check for check, _, _ in found))
    failing, unsound = check_verdicts(theory, checks)
    bounds = [c for c, e, _ in found if e["kind"] != "identity"]
    lines += [""]
    if not unsound and not failing:
        lines.append(
            f"Every result holds, and each of the {len(set(bounds))} bounds, shapes, rates and "
            "inequalities is broken by its falsifiers (inequalities: by their variants): none "
            "is vacuous on the instance it is checked on (where the document's own instance "
            "makes it vacuous, the summary shows it beside)."
        )
    for label, which in (
        ("Results that do not hold", failing),
        ("Results no falsifier breaks (vacuous on their instance)", unsound),
    ):
        if which:
            lines.append(f"**{label}:** " + ", ".join(f"`{c}`" for c in which))
    lines.append("")
    names = {f"theory_{check}.png" for check in checks}
    return lines + copy_figures("theory", theory, out, names)


def fill(text: str, loaded: dict[str, Results | None]) -> str:
    """Replaces each ``{EXPERIMENT:DATASET/METHOD/METRIC}`` with that row's mean +- std, and
    each ``{EXPERIMENT:DATASET/METHOD/METRIC#STEP}`` with the curve's mean +- std over seeds
    at that step (``curves.npz``)."""

    def one(match: re.Match) -> str:
        experiment, path = match.group(1), match.group(2)
        step = None
        if re.search(r"#\d+$", path):
            path, step = path.rsplit("#", 1)
        dataset, rest = path.split("/", 1)
        method, metric = rest.rsplit("/", 1)
        res = loaded.get(experiment)
        if res is not None and step is not None:
            value = curve_at(res, f"{dataset}/{method}/{metric}", int(step))
        else:
            value = None if res is None else res.rows.get((dataset, method, metric))
        return "(not in these results)" if value is None else mean_std(value)

    return PLACEHOLDER.sub(one, text)


def curve_at(res: Results, key: str, step: int) -> tuple[float, float, int] | None:
    """``(mean, std, n_seeds)`` of the curve ``key`` at the column whose step is ``step``."""
    path = res.folder / "curves.npz"
    if not path.is_file():
        return None
    with np.load(path) as z:
        if key not in z:
            return None
        values = np.atleast_2d(z[key])
        steps = z[key + ":steps"] if key + ":steps" in z else np.arange(1, values.shape[1] + 1)
    where = np.flatnonzero(np.asarray(steps) == step)
    if not len(where):
        return None
    column = values[:, where[0]]
    return float(column.mean()), float(column.std()), len(column)


def claims_section(claims: tuple[Claim, ...], loaded: dict[str, Results | None]) -> list[str]:
    lines = ["## Claims", ""]
    for c in claims:
        verdict = "supported by our data" if c.supported else "**not supported by our data**"
        lines.append(f"- **{c.claim}** ({verdict})")
        lines.append(f"    - What the data shows: {fill(c.shows, loaded)}")
        lines.append(f"    - Checked by `{c.test}`")
    return lines + [""]


def experiment_section(name: str, res: Results | None, out: Path) -> list[str]:
    """An experiment's published numbers beside ours, and its figures."""
    published = PUBLISHED[name]
    lines = [f"## `{name}`", ""]
    lines += [f"Document's numbers: {published.section}. {published.note}", ""]
    if res is None:
        return lines + [f"No results: `ojax run {name}` was not run (or failed) here.", ""]
    lines += results_table(name, res) + [""]
    return lines + copy_figures(name, res, out)


def render_page(page: Page, loaded: dict[str, Results | None], out: Path) -> str:
    """The markdown of one reproduction page (figures copied as a side effect)."""
    lines = [f"# {page.title}", "", page.intro, ""]
    lines += [
        "Generated by `scripts/make_reproductions.py` from the results of `ojax run`; "
        "regenerate with:",
        "",
        "```bash",
        *[_command(name, loaded.get(name)) for name in (*page.experiments, "theory")],
        SCRIPT + " --results results",
        "```",
        "",
        "Runs shown here (size, seeds, precision):",
        "",
    ]
    for name in (*page.experiments, "theory"):
        res = loaded.get(name)
        lines.append(f"- {run_settings(name, res) if res else f'`{name}`: not run'}")
    lines.append("")
    for name in page.experiments:
        lines += experiment_section(name, loaded.get(name), out)
    lines += theory_section(loaded.get("theory"), page.document, out)
    lines += claims_section(page.claims, loaded)
    return "\n".join(lines).rstrip() + "\n"


def _command(name: str, res: Results | None) -> str:
    """The ``ojax run`` line of an experiment as shown (``--quick`` if it was a quick run)."""
    config = {} if res is None else res.config
    flags = (" --quick" if config.get("quick") else "") + (" --x64" if config.get("x64") else "")
    if res is None and name in X64:
        flags = " --x64"
    return f"ojax run {name}{flags} --out results/{name}"


def all_experiments() -> list[str]:
    """Every experiment the pages show, ``theory`` last."""
    names = [name for page in PAGES for name in page.experiments]
    return list(dict.fromkeys([*names, "theory"]))


def make_pages(results: Path, out: Path, only: list[str] | None = None) -> list[Path]:
    """Writes every page (or the pages named in ``only``) from ``results``; returns their
    paths. Stale figures go: all of them, or with ``only`` those of its pages' experiments."""
    pages = [page for page in PAGES if only is None or page.name in only]
    loaded = {name: load_results(results / name) for name in all_experiments()}
    figures = out / FIGURES
    if figures.is_dir():  # generated only here: stale figures go
        mine = [f"{name}_" for page in pages for name in page.experiments]
        for old in figures.glob("*.png"):
            if only is None or old.name.startswith(tuple(mine)):
                old.unlink()
    written = []
    for page in pages:
        path = out / f"{page.name}.md"
        path.write_text(render_page(page, loaded, out))
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, default=ROOT / "results")
    parser.add_argument("--docs", type=Path, default=DOCS)
    parser.add_argument("--run", action="store_true", help="run the missing experiments first")
    parser.add_argument("--quick", action="store_true", help="with --run: quick sizes")
    names = [page.name for page in PAGES]
    parser.add_argument(
        "--page", action="append", choices=names, help="write only this page (repeatable)"
    )
    args = parser.parse_args(argv)
    if args.run:
        wanted = all_experiments()
        if args.page:
            chosen = [page for page in PAGES if page.name in args.page]
            wanted = list(dict.fromkeys([e for p in chosen for e in p.experiments] + ["theory"]))
        for name, seconds in run_missing(wanted, args.results, args.quick).items():
            print(f"{name}: {seconds:.0f} s")
    args.docs.mkdir(parents=True, exist_ok=True)
    for path in make_pages(args.results, args.docs, args.page):
        print("wrote", path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
