"""What an experiment returns and how ``ojax run`` writes it (the INTERFACE.md contract).

An experiment is a function ``(ExperimentConfig) -> ExperimentResult``. The writer puts into
the output folder ``results.csv`` (one row per dataset, method and metric: mean and std over
seeds of the final value), ``curves.npz`` (``DATASET/METHOD/METRIC`` -> ``(n_seeds, length)``),
the PNG figures and ``config.json``. Everything is first written to a temporary folder inside the
output folder and then moved in file by file with ``os.replace``, so a failure leaves nothing
partial. :class:`RunFolder` keeps one run per output folder (see its docstring).
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
from ojax.experiments.lock import LOCK, FolderLock, check_free
from ojax.sweep.store import atomic_json, read_json
from ojax.validation import InputError

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
    tasks: Path | None = None  # one's own tasks (.npz), for the denevi2020 real-data protocol
    split: Path | None = None  # one's own transfer split (.npz), for the zhao-hoi2010 methods
    order: str | None = None  # zhao-hoi2010-homogeneous: "shipped" (None) or "uniform" orders
    dataset: str | None = None  # zhao-hoi2010-*: run this dataset only (None: all of them)
    compile_cache: str | None = None  # JAX's persistent compilation cache folder (None: off)

    def progress(self, iterable: Iterable, desc: str, total: int | None = None) -> Iterable:
        """``iterable`` wrapped in a progress bar on stderr (none when ``quiet``; plain lines
        when stderr is not a terminal, see :func:`ojax.progress.progress_bar`)."""
        if self.quiet:
            return iterable
        from ojax.progress import progress_bar

        return progress_bar(iterable, desc=desc, total=total)


@dataclasses.dataclass
class Row:
    dataset: str
    method: str
    metric: str
    mean: float
    std: float
    n_seeds: int
    shared: str = ""  # one measurement shared by these methods (e.g. "PA+OTL"), else ""


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
        shared: str = "",
    ) -> None:
        """Records ``curves`` (``(n_seeds, length)``, or ``(n_seeds,)`` for a single value) and
        the row of their final values (mean and std over seeds). ``shared`` names the methods
        that one measurement covers (e.g. a time of several methods run in one scan): the
        console table prints it once for them; results.csv keeps a row per method."""
        curves = np.asarray(curves, dtype=np.float64)
        if curves.ndim == 1:
            curves = curves[:, None]
        final = curves[:, -1]
        self.curves[f"{dataset}/{method}/{metric}"] = curves
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
    """Whether ``row``'s final value is the same for every seed (one seed, or a deterministic
    run repeated over seeds: its std is 0 up to the rounding of the mean)."""
    return row.n_seeds == 1 or bool(row.std <= SAME_OVER_SEEDS * abs(row.mean))


def format_mean_std(mean: float, std: float | None) -> tuple[str, str]:
    """``(mean, std)`` as text: the std to two significant digits and the mean to the same
    decimal place (scientific notation for very small or large means); with ``std`` ``None``
    (the same value for every seed) the mean to 6 significant digits and the std ``"-"``."""
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
    """The console table of ``ojax run`` / ``ojax sweep``: a header row, then one line per row
    (dataset, method, metric, mean, std over seeds, seeds); values rounded to what their std
    supports; no std (``-``) where the value is the same for every seed, with a note below; a
    measurement ``shared`` by several methods once, after its dataset's rows."""
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
    """This process's peak resident memory so far, in GiB (``getrusage``'s ``ru_maxrss``)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB (bytes on macOS)
    return round(peak / (2**30 if platform.system() == "Darwin" else 2**20), 3)


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
    config: ExperimentConfig,
    result: ExperimentResult,
    wall_seconds: float,
    before_move: Callable[[list[str]], None] | None = None,
) -> list[Path]:
    """Writes the result files into ``config.out``; returns their paths.

    ``before_move`` (if given) receives the file names once they are complete, before the first
    one is moved into ``config.out`` (:meth:`RunFolder.record` records them there).
    """
    import matplotlib.pyplot as plt

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
        # numpy's stubs match **curves against savez_compressed's allow_pickle: bool too
        np.savez_compressed(tmp / "curves.npz", **result.curves)  # type: ignore[arg-type]
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
            "programs": compile_log.summary(),
            "peak_rss_gib": peak_rss_gib(),
        }
        with open(tmp / "config.json", "w") as f:
            json.dump(info, f, indent=2, sort_keys=True)
        if before_move is not None:
            before_move(sorted(path.name for path in tmp.iterdir()))
        written = []
        for path in sorted(tmp.iterdir()):
            os.replace(path, out / path.name)
            written.append(out / path.name)
        return written
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# ----------------------------------------------------------------------------- output folder

RUN_RECORD = ".ojax-run.json"
"""The identity file ``ojax run`` / ``ojax sweep`` keep in their output folder."""
CHUNK_STORE = ".sweep"
"""The sweep engine's chunk store under the output folder (``ojax.sweep.sweep_experiment``)."""
TMP_PREFIX = ".ojax-tmp-"
"""Temporary files and folders ojax writes inside the output folder (moved or removed after)."""
_RESULT_FILES = ("results.csv", "curves.npz", "config.json")


def _show(path: Path | str) -> str:
    return repr(str(path))


def _listing(names: list[str], limit: int = 3) -> str:
    shown = ", ".join(repr(n) for n in names[:limit])
    return shown if len(names) <= limit else f"{shown}, ... ({len(names)} entries)"


def _exists(path: Path) -> bool:
    return path.exists() or path.is_symlink()


def check_out_folder(out: Path) -> None:
    """Raises :class:`InputError` (``--out: ...``) when ``out`` is not a folder, or cannot be
    created or written; writes nothing."""
    try:
        if _exists(out):
            if not out.is_dir():
                raise InputError(f"--out: {_show(out)} exists and is not a folder")
            if not os.access(out, os.W_OK | os.X_OK):
                raise InputError(f"--out: {_show(out)} is not writable")
            return
        above = out.absolute().parent
        while not _exists(above):
            above = above.parent
    except OSError as exc:
        raise InputError(f"--out: cannot inspect {_show(out)} ({exc.strerror or exc})") from None
    if not above.is_dir():
        raise InputError(f"--out: cannot create {_show(out)}: {_show(above)} is not a folder")
    if not os.access(above, os.W_OK | os.X_OK):
        raise InputError(f"--out: cannot create {_show(out)}: {_show(above)} is not writable")


def plain_file_name(name: Any) -> bool:
    """Whether ``name`` is a plain, visible file name (no folder separator, not ``.`` or
    ``..``, not hidden, not absolute): what a run may record as one of its files."""
    return (
        isinstance(name, str)
        and bool(name)
        and not name.startswith(".")
        and not any(c in name for c in "/\\\0")
        and not os.path.isabs(name)
    )


def _real_folder(path: Path) -> bool:
    return path.is_dir() and not path.is_symlink()


def _remove(path: Path) -> None:
    if _real_folder(path):
        shutil.rmtree(path)
    elif _exists(path):
        path.unlink()


def _plain(value: Any) -> Any:
    """``value`` as it reads back from JSON (tuples -> lists, paths -> strings)."""
    return json.loads(json.dumps(_jsonable(value), default=str))


def _describe(identity: Mapping[str, Any], keys: list[str]) -> str:
    def fmt(v: Any) -> str:
        return v if isinstance(v, str) else json.dumps(v, separators=(",", ":"))

    fields = ", ".join(f"{k}={fmt(identity.get(k))}" for k in keys)
    return f"{identity.get('experiment')}" + (f" with {fields}" if fields else "")


class RunFolder:
    """One run per output folder: ``ojax run`` and ``ojax sweep`` never mix two runs' files.

    The rule (README, ``--help``): a run writes ``.ojax-run.json`` (its identity and the files it
    wrote) into ``out`` before computing. The folder must be missing, empty, or hold one ojax run:

    * the same run (equal ``identity``): it resumes (the chunk store ``.sweep/`` is kept);
    * another run: refused unless ``overwrite``, which first removes every file and folder the
      old run wrote (those its ``.ojax-run.json`` lists, ``results.csv``, ``curves.npz``,
      ``config.json``, ``.sweep/``; for a folder written before ``.ojax-run.json`` existed,
      recognized by its ``config.json`` or holding ``.sweep/`` alone: those and the ``*.png``
      files); a folder that also holds files ojax did not write is refused even with
      ``overwrite`` (ojax deletes only its own files);
    * anything else (files but no ojax run): refused.

    ``.ojax-run.json`` lists plain file names only: a record naming a path (``/tmp/x``,
    ``../dir``) or a hidden name refuses the folder, and a listed name that is a folder is never
    removed. While a run writes the folder it holds its lock (``.ojax-lock``,
    :mod:`ojax.experiments.lock`): another process is refused, naming the owner.

    Use :meth:`check` (reads only; raises :class:`InputError`), then ``with folder:`` around the
    computation (creates ``out``, takes the lock, checks again, removes the old run if replacing
    it, writes the identity; on an :class:`InputError` inside, removes what this run wrote into
    a folder that held no run and the folders it created if they are empty, never an ancestor
    that others wrote into meanwhile), passing :meth:`record` to :func:`write_result` and the
    written paths to :meth:`finish`. Leaving the ``with`` releases the lock.

    Args:
      out: the output folder.
      identity: what makes two runs the same (``"experiment"`` names it), JSON-able.
      overwrite: replace another run.
      legacy: ``config.json`` of a folder without ``.ojax-run.json`` -> its identity (or
        ``None``: unknown, never the same run).
    """

    def __init__(
        self,
        out: Path,
        identity: Mapping[str, Any],
        overwrite: bool = False,
        legacy: Callable[[dict], dict | None] | None = None,
    ) -> None:
        self.out = Path(out)
        self.identity = _plain(dict(identity))
        self.overwrite = overwrite
        self.legacy = legacy
        self._previous: list[str] = []  # result files of the same run, written earlier
        self._stale: list[Path] = []  # the other run's files (overwrite)
        self._created: list[Path] = []  # the folders this run created, the deepest first
        self._recorded: list[str] = []  # the result files this run recorded
        self._fresh = True  # the folder holds no run once opened
        self._lock = FolderLock(self.out)

    def check(self) -> None:
        """Raises :class:`InputError` unless this run may write into ``out``; writes nothing."""
        check_out_folder(self.out)
        self._previous, self._stale, self._fresh = [], [], True
        if not self.out.is_dir():
            return
        if not self._lock.held:
            check_free(self.out)
        try:
            names = sorted(p.name for p in self.out.iterdir())
        except OSError as exc:
            raise InputError(f"--out: cannot read {_show(self.out)} ({exc.strerror})") from None
        names = [n for n in names if not n.startswith(TMP_PREFIX) and n != LOCK]
        if not names:
            return
        old, owned, files = self._earlier_run(names)
        self._check_entries(names, files)
        folders = [n for n in names if n != CHUNK_STORE and _real_folder(self.out / n)]
        foreign = [n for n in names if n not in owned or n in folders]  # ojax writes files
        if old is not None and old == self.identity:
            self._previous, self._fresh = files, False
            return
        if not self.overwrite:
            raise InputError(f"{self._difference(old)}; pass --overwrite to replace it")
        if foreign:
            raise InputError(
                f"--out {_show(self.out)} holds files ojax did not write ({_listing(foreign)}); "
                "--overwrite removes only ojax's own files: move them away or choose another "
                "--out"
            )
        stale = [self.out / n for n in names if n != RUN_RECORD]
        tmp = [p for p in self.out.iterdir() if p.name.startswith(TMP_PREFIX)]
        self._stale = [*stale, *tmp, self.out / RUN_RECORD]

    def _earlier_run(self, names: list[str]) -> tuple[dict | None, set[str], list[str]]:
        """(identity or ``None`` if unknown, names it owns, its result files) of the run in
        ``out``; an :class:`InputError` when the folder holds no ojax run."""
        if RUN_RECORD in names:
            old, files = self._read_record()
            return old, {RUN_RECORD, CHUNK_STORE, *_RESULT_FILES, *files}, files
        config = None
        if "config.json" in names:
            try:
                config = read_json(self.out / "config.json")
            except (OSError, ValueError):
                config = None
        if isinstance(config, dict) and "ojax_version" in config and "name" in config:
            owned = {CHUNK_STORE, *_RESULT_FILES, *(n for n in names if n.endswith(".png"))}
            files = [n for n in names if n in owned and n != CHUNK_STORE]
            old = self.legacy(config) if self.legacy is not None else None
            return (None if old is None else _plain(old)), owned, files
        if names == [CHUNK_STORE]:  # an interrupted run written before .ojax-run.json existed
            return None, {CHUNK_STORE}, []
        raise InputError(
            f"--out {_show(self.out)} is not empty and holds no ojax run (it holds "
            f"{_listing(names)}); choose a new or empty folder"
        )

    def _check_entries(self, names: list[str], files: list[str]) -> None:
        """Refuses a chunk store that is not a folder of ojax's own (a link: ojax writes and
        deletes chunk files there), and a folder where ojax writes a file of that name."""
        store = self.out / CHUNK_STORE
        if store.is_symlink() or (_exists(store) and not store.is_dir()):
            raise InputError(
                f"--out {_show(self.out)}: {CHUNK_STORE} is a link or a file, not a folder of "
                "ojax's own (ojax writes and deletes chunk files there); remove it or choose "
                "another --out"
            )
        for name in dict.fromkeys([RUN_RECORD, *_RESULT_FILES, *files]):
            if name in names and _real_folder(self.out / name):
                raise InputError(
                    f"--out {_show(self.out)}: {name!r} is a folder, where ojax writes a file of "
                    "that name; move it away or choose another --out"
                )

    def _read_record(self) -> tuple[dict | None, list[str]]:
        """``(identity or None, result files)`` of ``.ojax-run.json``; a record listing anything
        but plain file names (a path, ``..``, a hidden name) refuses the folder."""
        path = self.out / RUN_RECORD
        try:
            record = read_json(path)
            old, files = record["identity"], record["files"]
        except (OSError, ValueError, KeyError, TypeError):
            return None, []
        if not isinstance(files, list):  # a string would be read as one name per character
            raise InputError(
                f"--out {_show(self.out)}: its {RUN_RECORD} lists its files as a "
                f"{type(files).__name__}, not a list of file names: the record was edited or "
                "comes from elsewhere; nothing was changed: check the folder, or choose another "
                "--out"
            )
        bad = [f for f in files if not plain_file_name(f)]
        if bad:
            raise InputError(
                f"--out {_show(self.out)}: its {RUN_RECORD} lists {_listing(bad)} among the files "
                "ojax wrote, which is not a plain file name of that folder (ojax writes and "
                "removes only plain names inside --out): the record was edited or comes from "
                "elsewhere; nothing was changed: check the folder, or choose another --out"
            )
        return (old if isinstance(old, dict) else None), [str(f) for f in files]

    def _difference(self, old: dict | None) -> str:
        here, new = f"--out {_show(self.out)}", self.identity
        if old is None:
            this = _describe(new, [k for k in new if k != "experiment"])
            return (
                f"{here} holds an earlier ojax run of another or unknown configuration; "
                f"this run is {this}"
            )
        keys = [k for k in dict.fromkeys([*old, *new]) if k != "experiment"]
        if old.get("experiment") != new.get("experiment"):
            keys = [k for k in keys if k in old and k in new]
        keys = [k for k in keys if old.get(k) != new.get(k)]
        return f"{here} holds a run of {_describe(old, keys)}; this run is {_describe(new, keys)}"

    def __enter__(self) -> RunFolder:
        missing = []
        above = self.out.absolute()
        while not _exists(above):
            missing.append(above)
            above = above.parent
        try:
            self.out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(f"--out: cannot write {_show(self.out)} ({exc})") from None
        self._created = [p for p in missing if p.is_dir()]  # the deepest first
        try:
            self._lock.acquire()
            self.check()  # again, under the lock: another process may have written meanwhile
            for path in self._stale:  # the identity file last: an interruption keeps it valid
                _remove(path)
            self._fresh = self._fresh or bool(self._stale)
            self._write_record(self._previous)
        except InputError:
            self._clean_up()
            raise
        except OSError as exc:
            self._clean_up()
            raise InputError(f"--out: cannot write {_show(self.out)} ({exc})") from None
        return self

    def __exit__(self, kind, exc, tb) -> None:
        if kind is not None and issubclass(kind, InputError):
            self._clean_up()  # bad input found while running: what this run wrote goes
        else:
            self._lock.release()  # finished, or interrupted / crashed: kept for resuming

    def _clean_up(self) -> None:
        """Removes what this run wrote into a folder that held no run (its record, chunk store,
        temporary files, result files), then the folders it created if they are empty: never a
        file or folder this run did not write."""
        if self._fresh and self.out.is_dir():
            own = {RUN_RECORD, CHUNK_STORE, *self._recorded}
            for path in self.out.iterdir():
                if path.name in own or path.name.startswith(TMP_PREFIX):
                    _remove(path)
        self._lock.release()
        for folder in self._created:
            try:
                folder.rmdir()
            except OSError:  # not empty: someone else wrote there meanwhile; kept
                break
        self._created = []

    def record(self, names: list[str]) -> None:
        """Records ``names`` (about to be moved into ``out``) as this run's files."""
        self._recorded = [n for n in names if plain_file_name(n)]
        self._write_record(sorted({*self._previous, *names}))

    def finish(self, written: list[Path]) -> None:
        """Removes the files an earlier pass of the same run wrote and this one did not."""
        names = [p.name for p in written]
        for name in sorted(set(self._previous) - set(names)):
            if plain_file_name(name) and not _real_folder(self.out / name):
                _remove(self.out / name)
        self._previous = names
        self._write_record(names)

    def _write_record(self, files: list[str]) -> None:
        record = {"identity": self.identity, "files": files}
        atomic_json(self.out / RUN_RECORD, record, prefix=TMP_PREFIX)  # a crash leaves ojax's own
