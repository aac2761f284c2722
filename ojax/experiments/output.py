"""What an experiment returns and how `ojax run` writes it (the contract of docs/cli.md).

An experiment is a function `(config) -> ExperimentResult` (its config: an
:class:`~ojax.experiments.spec.ExperimentConfig`). The writer puts into
the output folder `results.csv` (one row per dataset, method and metric: mean and std over
seeds of the final value), `curves.npz` (`DATASET/METHOD/METRIC` -> `(n_seeds, length)`,
and beside each curve its positions `DATASET/METHOD/METRIC:steps`), `config.json`, then the
figures, drawn from those files by the experiment's plot function
(:func:`ojax.experiments.figures.write_figures`, what `ojax plot` runs). Everything is first
written to a temporary folder inside the output folder and then moved in file by file with
`os.replace`, so a failure leaves nothing partial.
:class:`ojax.experiments.run_folder.RunFolder` keeps one run per output folder.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import os
import platform
import resource
import shutil
import tempfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ojax import compile_log
from ojax.experiments.spec import ExperimentConfig
from ojax.results import RESULT_COLUMNS, curve_positions


@dataclasses.dataclass
class Row:
    """Row: a record of the fields below.

    Attributes:
      dataset: `str`
      method: `str`
      metric: `str`
      mean: `float`
      std: `float`
      n_seeds: `int`
      shared: one measurement shared by these methods (e.g. "PA+OTL"), else ""
    """

    dataset: str
    method: str
    metric: str
    mean: float
    std: float
    n_seeds: int
    shared: str = ""  # one measurement shared by these methods (e.g. "PA+OTL"), else ""


@dataclasses.dataclass
class ExperimentResult:
    """The arrays of one experiment run (nothing written yet).

    `steps`: a curve's key -> the positions of its columns (default `1..length`).
    `figures`: figures drawn in memory, written beside those of the experiment's plot
    function (an experiment of one's own without one; `ojax plot` cannot redraw them).
    """

    rows: list[Row] = dataclasses.field(default_factory=list)
    curves: dict[str, np.ndarray] = dataclasses.field(default_factory=dict)
    steps: dict[str, np.ndarray] = dataclasses.field(default_factory=dict)
    figures: dict[str, Any] = dataclasses.field(default_factory=dict)  # file name -> Figure
    extra_config: dict[str, Any] = dataclasses.field(default_factory=dict)
    compile_seconds: float | None = None

    def add(
        self,
        dataset: str,
        method: str,
        metric: str,
        curves: np.ndarray,
        shared: str = "",
        steps: Any = None,
    ) -> None:
        """Records `curves` (`(n_seeds, length)`, or `(n_seeds,)` for a single value), their
        positions `steps` (`(length,)`; default `1..length`) and the row of their final
        values (mean and std over seeds). `shared` names the methods
        that one measurement covers (e.g. a time of several methods run in one scan): the
        console table prints it once for them; results.csv keeps a row per method."""
        curves = np.asarray(curves, dtype=np.float64)
        if curves.ndim == 1:
            curves = curves[:, None]
        final = curves[:, -1]
        self.curves[f"{dataset}/{method}/{metric}"] = curves
        if steps is not None:
            self.steps[f"{dataset}/{method}/{metric}"] = np.asarray(steps)
        self.rows.append(
            Row(
                dataset,
                method,
                metric,
                float(final.mean()),
                float(final.std()),
                len(final),
                shared,
            )
        )


# ----------------------------------------------------------------------------- console table

SAME_OVER_SEEDS = 1e-9
"""A std at most this times ``|mean|`` is rounding noise: the value is the same for every seed."""


def same_over_seeds(row: Row) -> bool:
    """Whether `row`'s final value is the same for every seed (one seed, or a deterministic
    run repeated over seeds: its std is 0 up to the rounding of the mean)."""
    return row.n_seeds == 1 or bool(row.std <= SAME_OVER_SEEDS * abs(row.mean))


def format_mean_std(mean: float, std: float | None) -> tuple[str, str]:
    """`(mean, std)` as text: the std to two significant digits and the mean to the same
    decimal place (scientific notation for very small or large means); with `std` `None`
    (the same value for every seed) the mean to 6 significant digits and the std `"-"`."""
    if std is None or not np.isfinite(mean) or not np.isfinite(std) or std <= 0:
        return f"{mean:.6g}", "-" if std is None else f"{std:.2g}"
    place = int(np.floor(np.log10(std)))  # the std's first significant digit
    if mean == 0 or 1e-3 <= abs(mean) < 1e7:
        decimals = max(1 - place, 0)
        return f"{mean:.{decimals}f}", f"{std:.{decimals}f}"
    digits = max(int(np.floor(np.log10(abs(mean)))) - place + 1, 1)
    return f"{mean:.{digits}e}", f"{std:.1e}"


def _cells(r: Row, method: str) -> tuple[str, ...]:
    mean, std = format_mean_std(r.mean, None if same_over_seeds(r) else r.std)
    if "seconds" in r.metric and same_over_seeds(r):
        mean = f"{r.mean:.3g}"  # a time: three digits are all a timing supports
    return (r.dataset, method, r.metric, mean, std, str(r.n_seeds))


def results_table(rows: Iterable[Row]) -> list[str]:
    """The console table of `ojax run` / `ojax sweep`: a header row, then one line per row
    (dataset, method, metric, mean, std over seeds, seeds); values rounded to what their std
    supports; no std (`-`) where the value is the same for every seed, with a note below; a
    measurement `shared` by several methods once, after its dataset's rows."""
    body: list[tuple[str, ...]] = []
    shared: dict[tuple[str, str, str], Row] = {}  # printed once, after the dataset's rows

    def flush() -> None:
        body.extend(_cells(r, f"{r.shared} (together)") for r in shared.values())
        shared.clear()

    for r in rows:
        if body and r.dataset != body[-1][0]:
            flush()
        if r.shared:
            shared.setdefault((r.dataset, r.metric, r.shared), r)
        else:
            body.append(_cells(r, r.method))
    flush()
    header = ("dataset", "method", "metric", "mean", "std", "seeds")
    widths = [max(len(line[i]) for line in [header, *body]) for i in range(len(header))]
    right = (False, False, False, True, True, True)

    def line(cells: tuple[str, ...]) -> str:
        parts = [c.rjust(w) if r else c.ljust(w) for c, w, r in zip(cells, widths, right)]
        return "  ".join(parts).rstrip()

    lines = [line(header), *(line(cells) for cells in body)]
    if any(cells[4] == "-" for cells in body):
        lines.append("(std -: the same value for every seed)")
    return lines


def peak_rss_gib() -> float:
    """This process's peak resident memory so far, in GiB (`getrusage`'s `ru_maxrss`)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB (bytes on macOS)
    return round(peak / (2**30 if platform.system() == "Darwin" else 2**20), 3)


def environment_info() -> dict[str, Any]:
    """Versions and device, for `config.json` and benchmark files."""
    import jax

    import ojax

    device = jax.devices()[0]
    return {
        "ojax_version": ojax.__version__,
        "jax_version": jax.__version__,
        "device": f"{device.platform}:{getattr(device, 'device_kind', '')}",
        "num_devices": jax.device_count(),
        "python": platform.python_version(),
        "machine": platform.machine(),
    }


def jsonable(value: Any) -> Any:
    """`value` as JSON can hold it: paths as text, mappings and sequences element by element,
    NumPy scalars and arrays as Python numbers and lists."""
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return value


def write_result(
    config: ExperimentConfig,
    result: ExperimentResult,
    wall_seconds: float,
    before_move: Callable[[list[str]], None] | None = None,
) -> list[Path]:
    """Writes the result files into `config.out`: the data files, then the figures drawn from
    them in `config.figure_formats`; returns their paths.

    `before_move` (if given) receives the file names once they are complete, before the first
    one is moved into `config.out` (:meth:`~ojax.experiments.run_folder.RunFolder.record`
    records them there).
    """
    from ojax.experiments.figures import write_figures
    from ojax.plotting import save_figure

    out = Path(config.out)
    out.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=TMP_PREFIX, dir=out))
    try:
        with open(tmp / "results.csv", "w", newline="") as f:
            writer = csv.writer(f, lineterminator="\n")
            writer.writerow(RESULT_COLUMNS)
            for r in result.rows:
                writer.writerow(
                    [
                        config.name,
                        r.dataset,
                        r.method,
                        r.metric,
                        repr(r.mean),
                        repr(r.std),
                        r.n_seeds,
                    ]
                )
        arrays = curve_positions(result.curves, result.steps)
        # stored, not deflated: the curves are floats deflate shrinks by a fifth at most, for
        # seconds of a warm run (and again when the figures read them back)
        np.savez(tmp / "curves.npz", **arrays)
        formats = tuple(getattr(config, "figure_formats", None) or ("png",))
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
        with open(tmp / "config.json", "w") as f:
            json.dump(info, f, indent=2, sort_keys=True)
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


TMP_PREFIX = ".ojax-tmp-"
"""Temporary files and folders ojax writes inside the output folder (moved or removed after)."""
