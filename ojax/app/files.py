"""What a run writes into its output folder, and `ojax plot OUT`, which redraws its figures.

An experiment is a function `(config) -> ExperimentResult` (its config: an
:class:`~ojax.sweep.experiment.ExperimentConfig`). :func:`write_result` puts into the output
folder `results.csv` (one row per dataset, method and metric: mean and std over seeds of the
final value), `curves.npz` (`DATASET/METHOD/METRIC` -> `(n_seeds, length)`, and beside each
curve its positions `DATASET/METHOD/METRIC:steps`), `config.json`, then the figures, drawn
from those files by the experiment's plot function (its spec's `plot`, see
:class:`~ojax.sweep.experiment.ExperimentSpec`; :func:`write_figures`, what `ojax plot` runs).
A plot function reads the run's `curves.npz`, `results.csv` and the experiment's entries of
`config.json`, nothing else: a run's figures are exactly what `ojax plot` draws. Everything is
first written to a temporary folder inside the output folder and then moved in file by file
with `os.replace`, so a failure leaves nothing partial.
:class:`ojax.app.run_folder.RunFolder` keeps one run per output folder.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ojax import results as run_results
from ojax.app import learner_sweep
from ojax.app.output import TMP_PREFIX, environment_info, peak_rss_gib
from ojax.app.run_folder import RUN_RECORD, RunFolder
from ojax.experiments import EXPERIMENTS
from ojax.fileio import DataError, atomic_savez, atomic_write, read_json
from ojax.plotting import parse_figure_formats, pngs_encoded_in_background, save_figure
from ojax.programs import log as compile_log
from ojax.programs.identity import jsonable
from ojax.results import RESULT_COLUMNS, ExperimentResult, curve_positions
from ojax.sweep.experiment import ExperimentConfig
from ojax.validation import InputError


def plot_function(name: str) -> Callable[[run_results.Results], dict[str, Any]] | None:
    """The plot function of experiment `name` (its spec's `plot`; `ojax sweep`'s for a learner
    sweep), `None` for an experiment without one."""
    if name == learner_sweep.NAME:
        return learner_sweep.figures
    spec = EXPERIMENTS.get(name)
    return None if spec is None else spec.plot


def draw(run: run_results.Results) -> dict[str, Any]:
    """`{file stem: Figure}` of the run (:func:`plot_function`); `{}` for an experiment without
    a plot function."""
    plot = plot_function(run.experiment)
    if plot is None:
        return {}
    with np.errstate(invalid="ignore"):  # a diverged value's NaN curves are drawn as gaps
        return plot(run)


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


def write_result(
    config: ExperimentConfig,
    result: ExperimentResult,
    wall_seconds: float,
    before_move: Callable[[list[str]], None] | None = None,
) -> list[Path]:
    """Writes the result files into `config.out`: the data files, then the figures drawn from
    them in `config.figure_formats`; returns their paths.

    `before_move` (if given) receives the file names once they are complete, before the first
    one is moved into `config.out` (:meth:`~ojax.app.run_folder.RunFolder.record`
    records them there).
    """

    out = Path(config.out)
    out.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=TMP_PREFIX, dir=out))
    try:

        def table(f: Any) -> None:
            writer = csv.writer(f, lineterminator="\n")
            writer.writerow(RESULT_COLUMNS)
            for r in result.rows:
                row = (r.dataset, r.method, r.metric, repr(r.mean), repr(r.std), r.n_seeds)
                writer.writerow([config.name, *row])

        atomic_write(tmp / "results.csv", table, binary=False)
        arrays = curve_positions(result.curves, result.steps)
        # stored, not deflated: the curves are floats deflate shrinks by a fifth at most, for
        # seconds of a warm run (and again when the figures read them back)
        atomic_savez(tmp / "curves.npz", arrays)
        formats = tuple(getattr(config, "figure_formats", None) or ("png",))
        with pngs_encoded_in_background():
            for name, fig in result.figures.items():
                save_figure(fig, tmp, Path(name).stem, formats)
        settings = {k: v for k, v in dataclasses.asdict(config).items()}
        info = {
            **jsonable(settings),
            **environment_info(),
            **jsonable(result.extra_config),
            "wall_seconds": wall_seconds,
            "compile_seconds": result.compile_seconds,
            "programs": compile_log.summary(),
            "peak_rss_gib": peak_rss_gib(),
        }
        atomic_write(
            tmp / "config.json",
            lambda f: json.dump(info, f, indent=2, sort_keys=True),
            binary=False,
        )
        write_figures(tmp, formats, missing_ok=True)  # what `ojax plot` draws, from the files
        if before_move is not None:
            before_move(sorted(path.name for path in tmp.iterdir()))
        written = []
        for path in sorted(tmp.iterdir()):
            os.replace(path, out / path.name)
            written.append(out / path.name)
        return written
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


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

    formats = parse_figure_formats(formats)
    run = run_results.load(folder, pandas=False)
    if plot_function(run.experiment) is None and not missing_ok:
        with_plots = [name for name, spec in EXPERIMENTS.items() if spec.plot is not None]
        raise InputError(
            f"{str(folder)!r}: experiment {run.experiment!r} has no plot function (those with "
            f"one: {', '.join([*with_plots, learner_sweep.NAME])}); give its spec a `plot` "
            "(ojax.experiments.register_experiment)"
        )
    paths: list[Path] = []
    with pngs_encoded_in_background():
        for stem, fig in draw(run).items():
            paths.extend(save_figure(fig, into or folder, stem, formats))
    return paths


def plot(out: str | Path, formats: Sequence[str] = ("png",)) -> list[Path]:
    """`ojax plot OUT`: redraws every figure of the finished run in `out` from its files
    (in `formats`), under the folder's lock, recorded as the run's files (`--overwrite` of
    another run removes them); the other files stay. Returns the figures' paths."""

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
            try:
                drawn = write_figures(out, formats, into=tmp)
            except (ValueError, TypeError, KeyError, IndexError, AttributeError) as exc:
                if isinstance(exc, InputError):
                    raise
                raise DataError(  # files edited or crafted: one line naming the folder
                    f"{str(out)!r}: its files cannot be drawn ({type(exc).__name__}: "
                    f"{str(exc)[:200]}); they are not what the run wrote"
                ) from None
            names = [p.name for p in drawn]
            folder.record(names)
            for path in drawn:
                os.replace(path, out / path.name)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        kept = [out / n for n in files if n not in names and (out / n).is_file()]
        folder.finish([*kept, *(out / n for n in names)])
    return [out / n for n in names]


__all__ = ["draw", "draw_result", "plot", "plot_function", "write_figures", "write_result"]
