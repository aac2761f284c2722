"""The lock of an output folder: one ojax process writes a folder at a time.

A run of `ojax run` / `ojax sweep` holds `.ojax-lock` in its output folder while it
writes there: an advisory `flock` on the file (released by the kernel when the process ends,
however it ends), and in the file the owner's pid, host, start time and command, which the
refusal names. A second process that finds the lock held is refused (`--overwrite` included:
it would delete the files the first one is writing); a lock file nobody holds is stale (its
process has ended) and is taken over. On a file system without `flock` the pid decides: a
lock of a process that no longer runs on this host is stale; one of another host is refused
(its owner cannot be checked from here), with the file's path to remove once that run is over.
"""

from __future__ import annotations

import errno
import json
import os
import socket
import stat
import sys
import time
from pathlib import Path
from typing import Any

from ojax.fileio import read_json
from ojax.validation import InputError

try:  # POSIX; elsewhere the pid check alone decides
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]

LOCK = ".ojax-lock"
"""The lock file's name in an output folder."""
_TRIES, _PAUSE = 3, 0.05  # a lock held for a moment (another process checking it) is waited for


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    except (OSError, OverflowError):
        return False
    return True


def _read(path: Path) -> dict[str, Any]:
    try:
        value = read_json(path, limit=2**16)
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _try_flock(fd: int) -> bool | None:
    """Takes the lock on `fd`: True (taken), False (another process holds it), None (the file
    system has no `flock`)."""
    if fcntl is None:  # pragma: no cover
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError as exc:
        if exc.errno in (errno.EWOULDBLOCK, errno.EACCES, errno.EAGAIN):
            return False
        return None  # ENOLCK, EOPNOTSUPP...: no advisory locks here
    return True


def _held_by_pid(owner: dict[str, Any]) -> bool:
    """Without `flock`: whether the owner recorded in the file may still run."""
    pid, host = owner.get("pid"), owner.get("host")
    if not isinstance(pid, int) or isinstance(pid, bool):
        return False
    if host != socket.gethostname():
        return True  # cannot be checked from this host
    return pid != os.getpid() and _alive(pid)


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


def _refusal(folder: Path, owner: dict[str, Any]) -> InputError:
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


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)


def _open(path: Path, flags: int) -> int:
    """`os.open` of the lock file that never follows a link (a planted `.ojax-lock ->
    ~/.bashrc` would be truncated) nor waits on a pipe; :class:`InputError` for anything but a
    regular file."""
    try:
        fd = os.open(path, flags | _NOFOLLOW, 0o666)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK, errno.ENXIO):
            raise _not_a_file(path) from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise _not_a_file(path)
    return fd


def _not_a_file(path: Path) -> InputError:
    return InputError(
        f"--out {str(path.parent)!r}: {LOCK} is not a regular file (a link, a pipe or a "
        "device): ojax never writes through it; remove it or choose another --out"
    )


def check_free(folder: Path) -> None:
    """Raises :class:`InputError` naming the owner when another live process holds the lock of
    `folder`; writes nothing."""
    path = Path(folder) / LOCK
    if not (path.exists() or path.is_symlink()):
        return
    try:
        fd = _open(path, os.O_RDONLY)
    except FileNotFoundError:
        return  # gone meanwhile
    try:
        for _ in range(_TRIES):  # another process may be looking at the same moment
            taken = _try_flock(fd)
            if taken is not False:
                break
            time.sleep(_PAUSE)
        held = (not taken) if taken is not None else _held_by_pid(_read(path))
    finally:
        os.close(fd)  # closing releases a lock taken only to look
    if held:
        raise _refusal(Path(folder), _read(path))


class FolderLock:
    """The lock of one output folder, held from :meth:`acquire` to :meth:`release`."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self.path = self.folder / LOCK
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        """Whether this object holds the lock."""
        return self._fd is not None

    def acquire(self) -> None:
        """Takes the lock (a stale one is taken over); :class:`InputError` naming the owner when
        another live process holds it."""
        while self._fd is None:
            fd = _open(self.path, os.O_RDWR | os.O_CREAT)
            for _ in range(_TRIES):  # another process may be looking at the same moment
                taken = _try_flock(fd)
                if taken is not False:
                    break
                time.sleep(_PAUSE)
            if taken is None and _held_by_pid(_read(self.path)):
                taken = False
            if taken is False:
                os.close(fd)
                raise _refusal(self.folder, _read(self.path))
            try:  # the holder may have removed the file meanwhile: lock the file in place
                same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
            except FileNotFoundError:
                same = False
            if not same:
                os.close(fd)
                continue
            owner = {
                "pid": os.getpid(),
                "host": socket.gethostname(),
                "started": time.time(),
                "command": " ".join(["ojax", *sys.argv[1:]]),
            }
            os.ftruncate(fd, 0)
            os.write(fd, json.dumps(owner).encode())
            self._fd = fd

    def release(self) -> None:
        """Removes the lock file and releases the lock (nothing if not held)."""
        if self._fd is None:
            return
        try:
            self.path.unlink(missing_ok=True)
        except OSError:  # pragma: no cover - a read-only folder: the kernel lock still goes
            pass
        os.close(self._fd)
        self._fd = None


__all__ = ["LOCK", "FolderLock", "check_free", "describe"]
