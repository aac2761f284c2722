"""The lock of an output folder: one ojax process writes a folder at a time.

A run of `ojax run` / `ojax sweep` holds `.ojax-lock` in its output folder while it
writes there: a :class:`filelock.FileLock` (an advisory `flock`, released by the kernel when
the process ends, however it ends; filelock's own fallback where the file system has none),
beside which `.ojax-lock.json` records the owner's pid, host, start time and command, which the
refusal names. A second process that finds the lock held is refused (`--overwrite` included:
it would delete the files the first one is writing); a lock file nobody holds is stale (its
process has ended) and is taken over. A lock file that is a link, a pipe or a device is
refused, never written through.
"""

from __future__ import annotations

import os
import socket
import stat
import sys
import time
from pathlib import Path
from typing import Any

import filelock

from ojax.app.output import TMP_PREFIX
from ojax.fileio import atomic_json, read_json
from ojax.validation import InputError

LOCK = ".ojax-lock"
"""The lock file's name in an output folder."""
OWNER = ".ojax-lock.json"
"""The name of the lock owner's record beside it."""
_WAIT = 0.15  # seconds: a lock held for a moment (another process checking it) is waited for


def describe(owner: dict[str, Any]) -> str:
    """`"pid 123 on host, started 2024-05-01 10:00:00: ojax sweep ..."`."""
    started = owner.get("started")
    when = (
        time.strftime(", started %Y-%m-%d %H:%M:%S", time.localtime(started))
        if isinstance(started, (int, float)) and not isinstance(started, bool)
        else ""
    )
    command = owner.get("command")
    what = f": {str(command)[:120]}" if command else ""
    return f"pid {owner.get('pid', '?')} on {owner.get('host', '?')}{when}{what}"


def _refusal(folder: Path) -> InputError:
    try:
        owner = read_json(folder / OWNER, limit=2**16)
    except (OSError, ValueError):
        owner = {}
    owner = owner if isinstance(owner, dict) else {}
    stale = (
        f"; if that process no longer runs, remove {str(folder / LOCK)!r}"
        if owner.get("host") != socket.gethostname()
        else ""
    )
    return InputError(
        f"--out {str(folder)!r} is in use by another ojax process ({describe(owner)}); wait for "
        f"it to finish or choose another --out (--overwrite does not replace a folder that "
        f"another process is writing){stale}"
    )


def _take(lock: filelock.BaseFileLock, folder: Path) -> None:
    """Takes `lock` (waiting a moment at most); :class:`InputError` naming the owner when
    another process holds it, or when the lock file is not a regular file (a planted
    `.ojax-lock -> ~/.bashrc` is never opened for writing)."""
    path = folder / LOCK
    if path.is_symlink() or (path.exists() and not stat.S_ISREG(path.stat().st_mode)):
        raise InputError(
            f"--out {str(folder)!r}: {LOCK} is not a regular file (a link, a pipe or a "
            "device): ojax never writes through it; remove it or choose another --out"
        )
    try:
        lock.acquire(timeout=_WAIT)
    except filelock.Timeout:
        raise _refusal(folder) from None


def check_free(folder: Path) -> None:
    """Raises :class:`InputError` naming the owner when another live process holds the lock of
    `folder`; changes nothing there."""
    folder = Path(folder)
    if not os.path.lexists(folder / LOCK):
        return
    probe = filelock.FileLock(folder / LOCK)
    _take(probe, folder)
    probe.release()


class FolderLock:
    """The lock of one output folder, held from :meth:`acquire` to :meth:`release`."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self.path = self.folder / LOCK
        self._lock = filelock.FileLock(self.path)

    @property
    def held(self) -> bool:
        """Whether this object holds the lock."""
        return self._lock.is_locked

    def acquire(self) -> None:
        """Takes the lock (a stale one is taken over) and records its owner;
        :class:`InputError` naming the owner when another live process holds it."""
        _take(self._lock, self.folder)
        owner = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "started": time.time(),
            "command": " ".join(["ojax", *sys.argv[1:]]),
        }
        atomic_json(self.folder / OWNER, owner, prefix=TMP_PREFIX)

    def release(self) -> None:
        """Removes the lock file and its owner's record, then releases the lock (nothing if not
        held)."""
        if not self.held:
            return
        for name in (OWNER, LOCK):
            try:
                (self.folder / name).unlink(missing_ok=True)
            except OSError:  # pragma: no cover - a read-only folder: the kernel lock still goes
                pass
        self._lock.release()


__all__ = ["LOCK", "OWNER", "FolderLock", "check_free", "describe"]
