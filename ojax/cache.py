"""JAX's persistent compilation cache, on by default for the ``ojax`` command.

XLA compilation dominates a cold run of a small experiment (75 to 90% of a ``--quick`` run on a
CPU). With the persistent cache, a process that compiles a program already compiled by an earlier
process (same program, same shapes, same JAX and device) reads it from disk instead.

Where the cache lives: the ``path`` argument, else ``$OJAX_COMPILATION_CACHE``, else
``$XDG_CACHE_HOME/ojax/jax`` (``~/.cache/ojax/jax``). ``OJAX_COMPILATION_CACHE=off`` (or
``0``, ``none``, ``false``) disables it; so does ``ojax run ... --compile-cache off``.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from ojax.validation import InputError

ENV_VAR = "OJAX_COMPILATION_CACHE"
_OFF = {"off", "0", "none", "false", "no"}


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/ojax/jax``, or ``~/.cache/ojax/jax``."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "ojax" / "jax"


def compilation_cache_dir(path: str | os.PathLike | None = None) -> Path | None:
    """The cache folder that :func:`enable_compilation_cache` would use (``None``: disabled)."""
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
    ``ojax`` command calls it itself.

    Args:
      path: the cache folder; ``"off"`` disables the cache. Default: ``$OJAX_COMPILATION_CACHE``,
        else ``~/.cache/ojax/jax``.

    Returns:
      The folder in use, or ``None`` when disabled.

    Raises:
      InputError: the folder cannot be created or written.
    """
    folder = compilation_cache_dir(path)
    if folder is None:
        return None
    try:
        folder.mkdir(parents=True, exist_ok=True)
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
    # Keep every program: the small scans of quick runs compile in well under JAX's 1 s default.
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    return folder


__all__ = ["ENV_VAR", "compilation_cache_dir", "default_cache_dir", "enable_compilation_cache"]
