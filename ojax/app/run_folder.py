"""One run per output folder (:class:`RunFolder`): what `ojax run` / `ojax sweep` check,
lock, record and remove in `--out` (see the README and the trust page of the docs)."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ojax.app.lock import LOCK, OWNER, FolderLock, check_free
from ojax.app.output import TMP_PREFIX
from ojax.fileio import atomic_json, plain_name, read_json
from ojax.programs.identity import jsonable
from ojax.validation import InputError

RUN_RECORD = ".ojax-run.json"
"""The identity file ``ojax run`` / ``ojax sweep`` keep in their output folder."""
CHUNK_STORE = ".sweep"
"""The sweep engine's chunk store under the output folder (``ojax.sweep.sweep_experiment``)."""
_RESULT_FILES = ("results.csv", "curves.npz", "config.json")


def _show(path: Path | str) -> str:
    return repr(str(path))


def _listing(names: list[str], limit: int = 3) -> str:
    shown = ", ".join(repr(n) for n in names[:limit])
    return shown if len(names) <= limit else f"{shown}, ... ({len(names)} entries)"


def _exists(path: Path) -> bool:
    return path.exists() or path.is_symlink()


def check_out_folder(out: Path) -> None:
    """Raises :class:`InputError` (`--out: ...`) when `out` is not a folder, or cannot be
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


def _real_folder(path: Path) -> bool:
    return path.is_dir() and not path.is_symlink()


def _remove(path: Path) -> None:
    if _real_folder(path):
        shutil.rmtree(path)
    elif _exists(path):
        path.unlink()


def _plain(value: Any) -> Any:
    """`value` as it reads back from JSON (tuples -> lists, paths -> strings)."""
    return json.loads(json.dumps(jsonable(value), default=str))


def _describe(identity: Mapping[str, Any], keys: list[str]) -> str:
    def fmt(v: Any) -> str:
        return v if isinstance(v, str) else json.dumps(v, separators=(",", ":"))

    fields = ", ".join(f"{k}={fmt(identity.get(k))}" for k in keys)
    return f"{identity.get('experiment')}" + (f" with {fields}" if fields else "")


class RunFolder:
    """One run per output folder: `ojax run` and `ojax sweep` never mix two runs' files.

    The rule (README, `--help`): a run writes `.ojax-run.json` (its identity and the files it
    wrote) into `out` before computing. The folder must be missing, empty, or hold one ojax run:

    * the same run (equal `identity`): it resumes (the chunk store `.sweep/` is kept);
    * another run: refused unless `overwrite`, which first removes every file and folder the
      old run wrote (those its `.ojax-run.json` lists, `results.csv`, `curves.npz`,
      `config.json`, `.sweep/`; for a folder written before `.ojax-run.json` existed,
      recognized by its `config.json` or holding `.sweep/` alone: those and the `*.png`
      figures, the only format ojax wrote then); a folder that also holds files ojax did not
      write is refused even with `overwrite` (ojax deletes only its own files);
    * anything else (files but no ojax run): refused.

    `.ojax-run.json` lists plain file names only: a record naming a path (`/tmp/x`,
    `../dir`) or a hidden name refuses the folder, and a listed name that is a folder is never
    removed. While a run writes the folder it holds its lock (`.ojax-lock`,
    :mod:`ojax.app.lock`): another process is refused, naming the owner.

    Use :meth:`check` (reads only; raises :class:`InputError`), then `with folder:` around the
    computation (creates `out`, takes the lock, checks again, removes the old run if replacing
    it, writes the identity; on an :class:`InputError` inside, removes what this run wrote into
    a folder that held no run and the folders it created if they are empty, never an ancestor
    that others wrote into meanwhile), passing :meth:`record` to :func:`write_result` and the
    written paths to :meth:`finish`. Leaving the `with` releases the lock.

    Args:
      out: the output folder.
      identity: what makes two runs the same (`"experiment"` names it), JSON-able.
      overwrite: replace another run.
    """

    def __init__(
        self,
        out: Path,
        identity: Mapping[str, Any],
        overwrite: bool = False,
    ) -> None:
        self.out = Path(out)
        self.identity = _plain(dict(identity))
        self.overwrite = overwrite
        self._previous: list[str] = []  # result files of the same run, written earlier
        self._stale: list[Path] = []  # the other run's files (overwrite)
        self._created: list[Path] = []  # the folders this run created, the deepest first
        self._recorded: list[str] = []  # the result files this run recorded
        self._fresh = True  # the folder holds no run once opened
        self._owned = False  # this run has written its record (it holds the lock)
        self._lock = FolderLock(self.out)

    def check(self) -> None:
        """Raises :class:`InputError` unless this run may write into `out`; writes nothing."""
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
        names = [n for n in names if not n.startswith(TMP_PREFIX) and n not in (LOCK, OWNER)]
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
        """(identity or `None` if unknown, names it owns, its result files) of the run in
        `out`; an :class:`InputError` when the folder holds no ojax run."""
        if RUN_RECORD in names:
            old, files = self._read_record()
            return old, {RUN_RECORD, CHUNK_STORE, *_RESULT_FILES, *files}, files
        raise InputError(
            f"--out {_show(self.out)} is not empty and holds no ojax run (it holds "
            f"{_listing(names)}); choose a new or empty folder"
        )

    def _check_entries(self, names: list[str], files: list[str]) -> None:
        """Refuses a chunk store that is a link or a file, and a folder named as a file ojax
        writes."""
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
        """`(identity or None, result files)` of `.ojax-run.json`; a record listing anything
        but plain file names (a path, `..`, a hidden name) refuses the folder."""
        path = self.out / RUN_RECORD
        try:
            record = read_json(path)
            old, files = record["identity"], record["files"]
        except (OSError, ValueError, KeyError, TypeError):
            return None, []
        edited = (
            "the record was edited or comes from elsewhere; nothing was changed: check the "
            "folder, or choose another --out"
        )
        if not isinstance(files, list):  # a string would be read as one name per character
            raise InputError(
                f"--out {_show(self.out)}: its {RUN_RECORD} lists its files as a "
                f"{type(files).__name__}, not a list of file names: {edited}"
            )
        bad = [f for f in files if not plain_name(f)]
        if bad:
            raise InputError(
                f"--out {_show(self.out)}: its {RUN_RECORD} lists {_listing(bad)} among the files "
                "ojax wrote, which is not a plain file name of that folder (ojax writes and "
                f"removes only plain names inside --out): {edited}"
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
        except BaseException:  # nothing of this run is in the folder: only what it created goes
            self._clean_up()
            raise
        try:
            for path in self._stale:  # the identity file last: an interruption keeps it valid
                _remove(path)
            for path in self.out.iterdir():  # left by a killed run (this one holds the lock)
                if path.name.startswith(TMP_PREFIX):
                    _remove(path)
            self._fresh = self._fresh or bool(self._stale)
            self._owned = True
            self._write_record(self._previous)
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
        temporary files, result files; nothing before it holds the lock and has written its
        record), then the folders it created if they are empty: never a file or folder this
        run did not write."""
        if self._owned and self._fresh and self.out.is_dir():
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
        """Records `names` (about to be moved into `out`) as this run's files."""
        self._recorded = [n for n in names if plain_name(n)]
        self._write_record(sorted({*self._previous, *names}))

    def finish(self, written: list[Path]) -> None:
        """Removes the files an earlier pass of the same run wrote and this one did not."""
        names = [p.name for p in written]
        for name in sorted(set(self._previous) - set(names)):
            if plain_name(name) and not _real_folder(self.out / name):
                _remove(self.out / name)
        self._previous = names
        self._write_record(names)

    def _write_record(self, files: list[str]) -> None:
        record = {"identity": self.identity, "files": files}
        atomic_json(self.out / RUN_RECORD, record, prefix=TMP_PREFIX)  # a crash leaves ojax's own


__all__ = ["CHUNK_STORE", "RUN_RECORD", "RunFolder", "check_out_folder"]
