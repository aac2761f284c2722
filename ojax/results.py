"""A finished run's results as data: `ojax.results.load(OUT)` reads what `ojax run` and
`ojax sweep` wrote into `OUT`.

* :attr:`Results.table`: `results.csv`, the tidy table (one row per dataset, method and
  metric: `experiment, dataset, method, metric, mean, std, n_seeds`), a pandas `DataFrame`
  when pandas is installed (`pip install "ojax[pandas]"`), else a list of dicts with the
  same columns (`mean` and `std` floats, `n_seeds` an int);
* :attr:`Results.curves`: `curves.npz`, `"DATASET/METHOD/METRIC"` -> :class:`Curve`, the
  values `(n_seeds, length)` and their positions `steps` `(length,)` on the figure's x
  axis (the step, point, task, horizon or hyperparameter value each column is taken at; stored
  in `curves.npz` beside each curve as `"DATASET/METHOD/METRIC:steps"`);
* :attr:`Results.config`: `config.json`.

Nothing is recomputed, nothing executable is read (`allow_pickle=False`).

Examples:
  >>> import numpy as np, tempfile
  >>> from ojax.app.cli import main
  >>> out = tempfile.mkdtemp()
  >>> main(["sweep", "ogd_square", "--grid", "learning_rate=0.1,1", "--seeds", "2",
  ...       "--steps", "50", "--quiet", "--out", out])  # doctest: +ELLIPSIS
  dataset ...
  0
  >>> run = load(out, pandas=False)
  >>> print(run.table[0]["method"], run.table[0]["metric"], run.table[0]["n_seeds"])
  ogd_square@learning_rate=0.1 average_loss 2
  >>> curve = run.curve("linear_regression", "ogd_square@learning_rate=1", "average_loss")
  >>> print(curve.values.shape, curve.steps[:3], curve.steps[-1])
  (2, 50) [1 2 3] 50
"""

from __future__ import annotations

import csv
import dataclasses
import io
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from ojax.fileio import DataError, read_arrays, read_bytes, read_json
from ojax.validation import InputError

STEPS_SUFFIX = ":steps"
"""The key of a curve's positions in ``curves.npz``: the curve's key and this suffix."""

FILES = ("results.csv", "curves.npz", "config.json")
"""The data files of a run (the figures are drawn from them)."""

RESULT_COLUMNS = ("experiment", "dataset", "method", "metric", "mean", "std", "n_seeds")
"""The columns of ``results.csv`` (docs/cli.md)."""

TABLE_LIMIT = 2**28
"""The largest ``results.csv`` read back (256 MiB: a million rows)."""


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
      detail: a row of detail (one point of a method's grid, a secondary metric): in
        results.csv, not in the console table
    """

    dataset: str
    method: str
    metric: str
    mean: float
    std: float
    n_seeds: int
    shared: str = ""  # one measurement shared by these methods (e.g. "PA+OTL"), else ""
    detail: bool = False  # in results.csv only, not in the console table


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
        detail: bool = False,
    ) -> None:
        """Records `curves` (`(n_seeds, length)`, or `(n_seeds,)` for a single value), their
        positions `steps` (`(length,)`; default `1..length`) and the row of their final
        values (mean and std over seeds). `shared` names the methods
        that one measurement covers (e.g. a time of several methods run in one scan): the
        console table prints it once for them; results.csv keeps a row per method. A
        `detail` row (one point of a grid, a secondary metric) is written to results.csv but
        not printed."""
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
                detail,
            )
        )


class Curve(NamedTuple):
    """One curve of `curves.npz`: its values over seeds and their positions."""

    steps: np.ndarray  # (length,): the x position of each column
    values: np.ndarray  # (n_seeds, length)


@dataclasses.dataclass(frozen=True)
class Results:
    """What a run wrote (see the module docstring)."""

    folder: Path
    table: Any  # a pandas DataFrame, or a list of dicts (pandas=False or not installed)
    curves: dict[str, Curve]
    config: dict[str, Any]

    @property
    def experiment(self) -> str:
        """The experiment's name (`sweep` for `ojax sweep`)."""
        return str(self.config.get("name", ""))

    def curve(self, dataset: str, method: str, metric: str) -> Curve:
        """The curve `DATASET/METHOD/METRIC`; an :class:`InputError` naming the keys there
        are when it is absent."""
        key = f"{dataset}/{method}/{metric}"
        if key not in self.curves:
            some = ", ".join(list(self.curves)[:5])
            raise InputError(f"no curve {key!r} in {self.folder}/curves.npz (it holds {some}, ...)")
        return self.curves[key]


def split_key(key: str) -> tuple[str, str, str]:
    """`"DATASET/METHOD/METRIC"` -> `(dataset, method, metric)` (a method's name may hold
    a `/`, e.g. `OGD-step/10`).

    Examples:
      >>> split_key("parameter-free/OGD-step/10/regret")
      ('parameter-free', 'OGD-step/10', 'regret')
    """
    dataset, _, rest = key.partition("/")
    method, _, metric = rest.rpartition("/")
    return dataset, method, metric


def curve_positions(curves: dict[str, np.ndarray], steps: dict[str, Any]) -> dict[str, Any]:
    """The arrays `curves.npz` holds: each curve and, beside it (`KEY:steps`), its positions,
    those of `steps` or else `1..length` (a per-step curve)."""
    out: dict[str, Any] = {}
    for key, values in curves.items():
        length = np.shape(values)[-1] if np.ndim(values) else 1
        given = steps.get(key)
        position = np.arange(1, length + 1) if given is None else np.asarray(given)
        if position.shape != (length,):
            raise ValueError(f"steps of {key!r}: shape {position.shape}, expected ({length},)")
        out[key] = values
        out[key + STEPS_SUFFIX] = position
    return out


def read_curves(path: str | Path) -> dict[str, Curve]:
    """`curves.npz` as `KEY -> Curve` (positions `1..length` for a file written before
    they were stored). Its arrays' declared sizes are checked before anything is inflated
    (:func:`ojax.fileio.read_arrays`); a curve that is not `(n_seeds, length)` numbers with
    `length` positions is a :class:`~ojax.fileio.DataError` naming the file and the key."""
    arrays = read_arrays(path)
    curves = {}
    for key, values in arrays.items():
        if key.endswith(STEPS_SUFFIX):
            continue
        steps = arrays.get(key + STEPS_SUFFIX)
        if values.ndim != 2 or values.dtype.kind not in "biuf":
            raise DataError(
                f"{str(path)!r}: curve {key!r} must be (n_seeds, length) numbers, got "
                f"{values.dtype}{list(values.shape)}"
            )
        length = values.shape[-1]
        if steps is not None and (steps.shape != (length,) or steps.dtype.kind not in "biuf"):
            raise DataError(
                f"{str(path)!r}: {key + STEPS_SUFFIX!r} must be ({length},) numbers (one position "
                f"per column of {key!r}), got {steps.dtype}{list(steps.shape)}"
            )
        curves[key] = Curve(np.arange(1, length + 1) if steps is None else steps, values)
    return curves


def _rows(path: Path, text: str) -> list[dict[str, Any]]:
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    for i, row in enumerate(rows):
        try:
            row["mean"], row["std"] = float(row["mean"]), float(row["std"])
            row["n_seeds"] = int(row["n_seeds"])
        except (KeyError, TypeError, ValueError) as exc:
            raise DataError(
                f"{str(path)!r}: row {i + 2} is not a row of {', '.join(RESULT_COLUMNS)} "
                f"({type(exc).__name__}: {exc})"
            ) from None
    return rows


def _text(path: Path, limit: int) -> str:
    try:
        return read_bytes(path, limit, "results file").decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(f"{str(path)!r} is not UTF-8 text ({exc.reason})") from None


def read_table(path: str | Path) -> list[dict[str, Any]]:
    """`results.csv` as a list of dicts (`mean`, `std` floats; `n_seeds` an int)."""
    path = Path(path)
    return _rows(path, _text(path, TABLE_LIMIT))


def _pandas(wanted: bool | None):
    if wanted is False:
        return None
    try:
        import pandas
    except ImportError:
        if wanted:
            raise InputError(
                'pandas=True needs pandas: pip install "ojax[pandas]" (or pip install pandas)'
            ) from None
        return None
    return pandas


def load(out: str | Path, *, pandas: bool | None = None) -> Results:
    """Reads the run in `out` (see the module docstring).

    Args:
      out: an output folder of `ojax run` or `ojax sweep`.
      pandas: the table as a `DataFrame` (`True`: pandas must be installed), as a list of
        dicts (`False`), or a `DataFrame` if pandas is installed (`None`, the default).

    Raises:
      InputError: `out` is not a folder, or lacks one of `results.csv`, `curves.npz`,
        `config.json`; a :class:`~ojax.fileio.DataError` (an `InputError`) naming the file
        when one is not what a run writes (not a regular file, too large, malformed).
    """
    folder = Path(out)
    if not folder.is_dir():
        raise InputError(f"out: {str(folder)!r} is not a folder")
    missing = [name for name in FILES if not (folder / name).is_file()]
    if missing:
        raise InputError(
            f"out: {str(folder)!r} holds no finished ojax run (no {', '.join(missing)}; a run "
            f"writes {', '.join(FILES)})"
        )
    module = _pandas(pandas)
    table_path, config_path = folder / "results.csv", folder / "config.json"
    rows = read_table(table_path)  # checked row by row: a bad file is named
    table: Any = rows
    if module is not None:
        table = module.DataFrame(rows, columns=list(rows[0]) if rows else list(RESULT_COLUMNS))
    try:
        config = read_json(config_path, what="config file")
    except OSError as exc:
        raise DataError(f"{str(config_path)!r} cannot be read ({exc.strerror})") from None
    if not isinstance(config, dict):
        raise DataError(
            f"{str(config_path)!r} must hold a JSON object, got {type(config).__name__}"
        )
    return Results(folder, table, read_curves(folder / "curves.npz"), config)


__all__ = [
    "Curve",
    "ExperimentResult",
    "FILES",
    "RESULT_COLUMNS",
    "Results",
    "Row",
    "STEPS_SUFFIX",
    "TABLE_LIMIT",
    "curve_positions",
    "load",
    "read_curves",
    "read_table",
    "split_key",
]
