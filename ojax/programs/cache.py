"""JAX's persistent compilation cache, on by default for the `ojax` command.

XLA compilation dominates a cold run of a small experiment (75 to 90% of a `--quick` run on a
CPU). With the persistent cache, a process that compiles a program already compiled by an earlier
process (same program, same shapes, same JAX and device) reads it from disk instead.

Where the cache lives: the `path` argument, else `$OJAX_COMPILATION_CACHE`, else
`$XDG_CACHE_HOME/ojax/jax` (`~/.cache/ojax/jax`). `OJAX_COMPILATION_CACHE=off` (or
`0`, `none`, `false`) disables it; so does `ojax run ... --compile-cache off`.

The folder holds compiled programs, machine code that JAX loads and runs: share it only with
people whose programs you would run (see the trust page of the docs). An entry JAX cannot read
(junk, or one a killed process left half-written) is removed when JAX reports it, with one line
on stderr, and compiled again (JAX alone would warn on every later run and never replace it).
"""

from __future__ import annotations

import glob
import os
import re
import stat
import sys
import tempfile
import warnings
import zlib
from pathlib import Path

from ojax.fileio import DataError, open_regular
from ojax.validation import InputError

ENV_VAR = "OJAX_COMPILATION_CACHE"
_OFF = {"off", "0", "none", "false", "no"}


def default_cache_dir() -> Path:
    """`$XDG_CACHE_HOME/ojax/jax`, or `~/.cache/ojax/jax`."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "ojax" / "jax"


def compilation_cache_dir(path: str | os.PathLike | None = None) -> Path | None:
    """The cache folder that :func:`enable_compilation_cache` would use (`None`: disabled)."""
    value = os.fspath(path) if path is not None else os.environ.get(ENV_VAR)
    if value is None:
        return default_cache_dir()
    if value.strip().lower() in _OFF:
        return None
    if not value.strip():
        return default_cache_dir()
    return Path(value).expanduser()


def enable_compilation_cache(path: str | os.PathLike | None = None) -> Path | None:
    """Switches on JAX's persistent compilation cache (every compiled program is kept).

    Call it once, before the first compilation (at the top of a notebook or a script); the
    `ojax` command calls it itself.

    Args:
      path: the cache folder; `"off"` disables the cache. Default: `$OJAX_COMPILATION_CACHE`,
        else `~/.cache/ojax/jax`.

    Returns:
      The folder in use, or `None` when disabled.

    Raises:
      InputError: the folder cannot be created or written.
    """
    folder = compilation_cache_dir(path)
    if folder is None:
        return None
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if folder.stat().st_mode & stat.S_IWOTH:  # anyone could plant compiled code there
            raise InputError(
                f"compilation cache: the folder {str(folder)!r} is writable by every user of "
                "this machine: anyone could plant compiled programs there that ojax would run; "
                f"use a folder only you (or people you trust) can write, or set {ENV_VAR} to "
                "'off' (see the trust page of the docs)"
            )
        # a probe of this process's own: processes starting together share the folder
        handle, probe = tempfile.mkstemp(prefix=".ojax-write-probe-", dir=folder)
        os.close(handle)
        os.unlink(probe)
    except OSError as exc:
        raise InputError(
            f"compilation cache: cannot write the folder {str(folder)!r} ({exc.strerror}); set "
            f"{ENV_VAR} to a writable folder or to 'off'"
        ) from None
    import jax  # here, so that `ojax --help` and `ojax list` do not import JAX

    jax.config.update("jax_compilation_cache_dir", str(folder))
    _watch_unreadable_entries(folder)
    # Keep every program: the small scans of quick runs compile in well under JAX's 1 s default.
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    return folder


_UNREADABLE = re.compile(r"Error reading persistent compilation cache entry for '([^']+)'")
_watched: dict[str, Path] = {}  # the folder whose unreadable entries are removed


def _decompresses(data: bytes) -> bool:
    """Whether `data` is a whole compressed stream of one of the codecs JAX writes with."""
    try:
        zlib.decompress(data)
        return True
    except zlib.error:
        pass
    try:  # JAX prefers zstandard when it is installed
        import zstandard

        zstandard.ZstdDecompressor().decompress(data)
        return True
    except Exception:
        return False


def remove_unreadable_entries(folder: str | os.PathLike, program: str) -> list[Path]:
    """Removes the compilation cache entries of `program` (e.g. `jit_stage`) in `folder`
    that are not whole compressed streams; returns their paths."""
    removed = []
    name = glob.escape(program)  # a module name (``jit_stage``) or a whole key
    for path in [*Path(folder).glob(f"{name}-*-cache"), *Path(folder).glob(f"{name}-cache")]:
        try:
            with open_regular(path) as f:  # a pipe planted in the cache is never waited on
                data = f.read()
            if not _decompresses(data):
                path.unlink()
                removed.append(path)
        except (OSError, DataError):  # gone meanwhile, not a file, or not ours to remove
            continue
    return removed


def _watch_unreadable_entries(folder: Path) -> None:
    """Turns JAX's warning about an unreadable cache entry into its removal (JAX then compiles
    the program and writes the entry anew) and one line on stderr; a warning JAX gives about an
    entry that decompresses (so is not removed here) says how to clear the folder."""
    first = not _watched
    _watched["folder"] = folder
    if not first:
        return
    show = warnings.showwarning

    def repairing(message, category, filename, lineno, file=None, line=None):
        match = _UNREADABLE.search(str(message))
        if match is None:
            return show(message, category, filename, lineno, file, line)
        where = _watched["folder"]
        removed = remove_unreadable_entries(where, match.group(1))
        if removed:
            count = f"{len(removed)} unreadable entr{'y' if len(removed) == 1 else 'ies'}"
            text = (
                f"removed {count} of {match.group(1)!r} from the compilation cache "
                f"{str(where)!r}; compiled again"
            )
        else:
            text = (
                f"JAX cannot read its compilation cache entry for {match.group(1)!r} "
                f"({str(message)[:200]}); remove the files {str(where)}/{match.group(1)}-*-cache "
                "(or the whole folder: it is only a cache) to clear it"
            )
        print(f"ojax: note: {text}", file=sys.stderr)
        return None

    warnings.showwarning = repairing


__all__ = [
    "ENV_VAR",
    "compilation_cache_dir",
    "default_cache_dir",
    "enable_compilation_cache",
    "remove_unreadable_entries",
]
