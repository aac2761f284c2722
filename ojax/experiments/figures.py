"""The figures of a run, drawn from its files: what `ojax run` / `ojax sweep` write after
their data files and what `ojax plot OUT` redraws, without recomputing anything.

Each experiment has one plot function, `(ojax.results.Results) -> {file stem: Figure}`,
named in :data:`PLOTS` (`"module:function"`, imported when drawn). It reads the run's
`curves.npz` (the curves and their positions), `results.csv` and the experiment's entries of
`config.json`, nothing else: a run's figures are exactly what `ojax plot` draws.
"""

from __future__ import annotations

import importlib
import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ojax import results as run_results
from ojax.validation import InputError

PLOTS: dict[str, str] = {
    "basics": "ojax.experiments.basics:figures",
    "theory": "ojax.experiments.theory:figures",
    "denevi2020-synthetic": "ojax.experiments.denevi2020:figures",
    "denevi2020-wealth": "ojax.experiments.denevi2020:wealth_figures",
    "denevi2020-variance": "ojax.experiments.denevi2020_variance:figures",
    "denevi2020-schools": "ojax.experiments.denevi2020:figures",
    "denevi2020-lenk": "ojax.experiments.denevi2020:figures",
    "neu-rosasco2018": "ojax.experiments.neu_rosasco2018:figures",
    "zhao-hoi2010-homogeneous": "ojax.experiments.zhao_hoi2010:figures",
    "zhao-hoi2010-heterogeneous": "ojax.experiments.zhao_hoi2010:figures",
    "parameter-free-benchmark": "ojax.experiments.parameter_free_summary:figures",
    "sweep": "ojax.experiments.learner_sweep:figures",
}
"""Experiment name (``config.json``'s ``name``) -> its plot function."""


def register_plot(name: str, target: str) -> None:
    """Names the plot function (`"module:function"`) of an experiment of one's own."""
    PLOTS[name] = target


def draw(run: run_results.Results) -> dict[str, Any]:
    """`{file stem: Figure}` of the run (:data:`PLOTS`); `{}` for an experiment without a
    plot function."""
    target = PLOTS.get(run.experiment)
    if target is None:
        return {}
    module, function = target.split(":")
    with np.errstate(invalid="ignore"):  # a diverged value's NaN curves are drawn as gaps
        return getattr(importlib.import_module(module), function)(run)


def draw_result(name: str, result: Any) -> dict[str, Any]:
    """The figures of an :class:`~ojax.experiments.ExperimentResult` not yet written (in a
    notebook): the plot function of experiment `name` on the result's arrays."""
    curves = run_results.curve_positions(result.curves, result.steps)
    found = {
        k: run_results.Curve(curves[k + run_results.STEPS_SUFFIX], np.asarray(v))
        for k, v in curves.items()
        if not k.endswith(run_results.STEPS_SUFFIX)
    }
    table = [
        {"experiment": name, "dataset": r.dataset, "method": r.method, "metric": r.metric,
         "mean": r.mean, "std": r.std, "n_seeds": r.n_seeds}
        for r in result.rows
    ]  # fmt: skip
    config = {**result.extra_config, "name": name}
    return draw(run_results.Results(Path("."), table, found, config))


def write_figures(
    folder: str | Path,
    formats: Sequence[str] = ("png",),
    *,
    missing_ok: bool = False,
    into: str | Path | None = None,
) -> list[Path]:
    """Draws the figures of the run in `folder` from its files and writes each as
    `STEM.FORMAT` into `into` (default `folder`); returns their paths.

    Raises:
      InputError: `folder` holds no finished run, or (unless `missing_ok`) its experiment
        has no plot function.
    """
    from ojax.plotting import parse_figure_formats, save_figure

    formats = parse_figure_formats(formats)
    run = run_results.load(folder, pandas=False)
    if run.experiment not in PLOTS and not missing_ok:
        raise InputError(
            f"{str(folder)!r}: experiment {run.experiment!r} has no plot function (those with "
            f"one: {', '.join(PLOTS)}); see ojax.experiments.figures.register_plot"
        )
    paths: list[Path] = []
    for stem, fig in draw(run).items():
        paths.extend(save_figure(fig, into or folder, stem, formats))
    return paths


def plot(out: str | Path, formats: Sequence[str] = ("png",)) -> list[Path]:
    """`ojax plot OUT`: redraws every figure of the finished run in `out` from its files
    (in `formats`), under the folder's lock, recorded as the run's files (`--overwrite` of
    another run removes them); the other files stay. Returns the figures' paths."""
    from ojax.experiments.output import TMP_PREFIX
    from ojax.experiments.run_folder import RUN_RECORD, RunFolder
    from ojax.sweep.store import read_json

    out = Path(out)
    run_results.load(out, pandas=False)  # a finished run, else a clear error
    try:
        record = read_json(out / RUN_RECORD)
        identity, files = record["identity"], list(record["files"])
    except (OSError, ValueError, KeyError, TypeError):
        raise InputError(
            f"{str(out)!r}: no readable {RUN_RECORD}, the identity file every run keeps; only a "
            "folder ojax run / ojax sweep wrote can be redrawn"
        ) from None
    folder = RunFolder(out, identity)
    with folder:
        tmp = Path(tempfile.mkdtemp(prefix=TMP_PREFIX, dir=out))
        try:
            drawn = write_figures(out, formats, into=tmp)
            names = [p.name for p in drawn]
            folder.record(names)
            for path in drawn:
                os.replace(path, out / path.name)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        kept = [out / n for n in files if n not in names and (out / n).is_file()]
        folder.finish([*kept, *(out / n for n in names)])
    return [out / n for n in names]


# ----------------------------------------------------------------------------- the command line


def add_figure_format(parser: Any) -> None:
    """`--figure-format` (of `ojax run`, `ojax sweep` and `ojax plot`)."""
    parser.add_argument(
        "--figure-format",
        action="append",
        metavar="png,pdf,svg",
        help="the figures' formats, comma-separated or repeated (default: png, at 200 dpi)",
    )


def formats(values: Sequence[str] | None) -> tuple[str, ...]:
    """The formats `--figure-format` gives (`png` when absent)."""
    from ojax.plotting import parse_figure_formats

    return parse_figure_formats(values or ["png"])


def add_plot_command(commands: Any) -> None:
    """`ojax plot OUT [--figure-format ...]`."""
    parser = commands.add_parser(
        "plot", help="redraw the figures of a finished run (ojax run / ojax sweep) from its files"
    )
    parser.add_argument("out", type=Path, help="the run's output folder")
    add_figure_format(parser)


def plot_command(out: Path, values: Sequence[str] | None) -> int:
    """Runs `ojax plot`: the formats checked, then :func:`plot`; prints what it wrote."""
    written = plot(out, formats(values))
    print(f"ojax: redrew {out}/ ({', '.join(p.name for p in written) or 'no figures'})")
    return 0
