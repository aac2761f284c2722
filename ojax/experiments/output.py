"""What an experiment returns and how ``ojax run`` writes it (the INTERFACE.md contract).

An experiment is a function ``(ExperimentConfig) -> ExperimentResult``. The writer puts into
the output folder ``results.csv`` (one row per dataset, method and metric: mean and std over
seeds of the final value), ``curves.npz`` (``DATASET/METHOD/METRIC`` -> ``(n_seeds, length)``),
the PNG figures and ``config.json``. Everything is first written to a temporary folder beside the
output folder and then moved in file by file with ``os.replace``, so a failure leaves nothing
partial.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import os
import platform
import shutil
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

RESULT_COLUMNS = ("experiment", "dataset", "method", "metric", "mean", "std", "n_seeds")


@dataclasses.dataclass
class ExperimentConfig:
    """The options of ``ojax run`` (see INTERFACE.md)."""

    name: str
    seeds: int
    out: Path
    data_dir: Path | None = None
    quick: bool = False
    x64: bool = False
    devices: int | None = None
    quiet: bool = False
    resume: bool = True
    memory_budget: float | None = None  # bytes; None: the sweep engine's default

    def progress(self, iterable: Iterable, desc: str, total: int | None = None) -> Iterable:
        """``iterable`` wrapped in a progress bar on stderr (none when ``quiet``)."""
        if self.quiet:
            return iterable
        from tqdm.auto import tqdm

        return tqdm(iterable, desc=desc, total=total, leave=False, dynamic_ncols=True)


@dataclasses.dataclass
class Row:
    dataset: str
    method: str
    metric: str
    mean: float
    std: float
    n_seeds: int


@dataclasses.dataclass
class ExperimentResult:
    """Arrays and figures of one experiment run (nothing written yet)."""

    rows: list[Row] = dataclasses.field(default_factory=list)
    curves: dict[str, np.ndarray] = dataclasses.field(default_factory=dict)
    figures: dict[str, Any] = dataclasses.field(default_factory=dict)  # file name -> Figure
    extra_config: dict[str, Any] = dataclasses.field(default_factory=dict)
    compile_seconds: float | None = None

    def add(
        self,
        dataset: str,
        method: str,
        metric: str,
        curves: np.ndarray,
    ) -> None:
        """Records ``curves`` (``(n_seeds, length)``, or ``(n_seeds,)`` for a single value) and
        the row of their final values (mean and std over seeds)."""
        curves = np.asarray(curves, dtype=np.float64)
        if curves.ndim == 1:
            curves = curves[:, None]
        final = curves[:, -1]
        self.curves[f"{dataset}/{method}/{metric}"] = curves
        self.rows.append(
            Row(dataset, method, metric, float(final.mean()), float(final.std()), len(final))
        )


def environment_info() -> dict[str, Any]:
    """Versions and device, for ``config.json`` and benchmark files."""
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


def _jsonable(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return value


def write_result(
    config: ExperimentConfig, result: ExperimentResult, wall_seconds: float
) -> list[Path]:
    """Writes the result files into ``config.out``; returns their paths."""
    import matplotlib.pyplot as plt

    out = Path(config.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        with open(tmp / "results.csv", "w", newline="") as f:
            writer = csv.writer(f)
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
        np.savez_compressed(tmp / "curves.npz", **result.curves)
        for name, fig in result.figures.items():
            fig.savefig(tmp / name, dpi=120)
            plt.close(fig)
        settings = {k: v for k, v in dataclasses.asdict(config).items()}
        info = {
            **_jsonable(settings),
            **environment_info(),
            **_jsonable(result.extra_config),
            "wall_seconds": wall_seconds,
            "compile_seconds": result.compile_seconds,
        }
        with open(tmp / "config.json", "w") as f:
            json.dump(info, f, indent=2, sort_keys=True)
        out.mkdir(parents=True, exist_ok=True)
        written = []
        for path in sorted(tmp.iterdir()):
            os.replace(path, out / path.name)
            written.append(out / path.name)
        return written
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
