"""How `ojax run` shows and records a run: the console table, the environment and the JSON of
`config.json` (the contract of docs/cli.md; :mod:`ojax.app.files` writes the files).

An experiment is a function `(config) -> ExperimentResult` (its config: an
:class:`~ojax.sweep.experiment.ExperimentConfig`). The writer puts into
the output folder `results.csv` (one row per dataset, method and metric: mean and std over
seeds of the final value), `curves.npz` (`DATASET/METHOD/METRIC` -> `(n_seeds, length)`,
and beside each curve its positions `DATASET/METHOD/METRIC:steps`), `config.json`, then the
figures, drawn from those files by the experiment's plot function
(:func:`ojax.app.files.write_figures`, what `ojax plot` runs). Everything is first
written to a temporary folder inside the output folder and then moved in file by file with
`os.replace`, so a failure leaves nothing partial.
:class:`ojax.app.run_folder.RunFolder` keeps one run per output folder.
"""

from __future__ import annotations

import platform
import resource
from collections.abc import Iterable
from typing import Any

import numpy as np

from ojax.results import Row

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
    measurement `shared` by several methods once, after its dataset's rows; rows of `detail`
    (each point of a grid, secondary metrics) counted in a last line, not printed."""
    body: list[tuple[str, ...]] = []
    shared: dict[tuple[str, str, str], Row] = {}  # printed once, after the dataset's rows

    def flush() -> None:
        body.extend(_cells(r, f"{r.shared} (together)") for r in shared.values())
        shared.clear()

    rows = list(rows)
    details = sum(r.detail for r in rows)
    for r in rows:
        if r.detail:
            continue
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
    if details:
        lines.append(f"({details} more rows in results.csv)")
    return lines


def peak_rss_gib() -> float:
    """This process's peak resident memory so far, in GiB (`getrusage`'s `ru_maxrss`)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB (bytes on macOS)
    return round(peak / (2**30 if platform.system() == "Darwin" else 2**20), 3)


def environment_info() -> dict[str, Any]:
    """Versions and device, for `config.json` and benchmark files."""
    import jax

    from ojax.programs.identity import ojax_version

    device = jax.devices()[0]
    return {
        "ojax_version": ojax_version(),
        "jax_version": jax.__version__,
        "device": f"{device.platform}:{getattr(device, 'device_kind', '')}",
        "num_devices": jax.device_count(),
        "python": platform.python_version(),
        "machine": platform.machine(),
    }


TMP_PREFIX = ".ojax-tmp-"
"""Temporary files and folders ojax writes inside the output folder (moved or removed after)."""


__all__ = [
    "SAME_OVER_SEEDS",
    "TMP_PREFIX",
    "environment_info",
    "format_mean_std",
    "peak_rss_gib",
    "results_table",
    "same_over_seeds",
]
