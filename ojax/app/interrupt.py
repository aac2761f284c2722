"""Ctrl-C and a closed pipe in the `ojax` command: one short line, never a traceback.

Python turns Ctrl-C into a `KeyboardInterrupt` raised wherever the interpreter happens to be:
while JAX is being imported it prints a long traceback (or an `ImportError`), and inside a
garbage-collection callback it is swallowed and the run goes on. The `ojax` command therefore
installs, before anything is imported, a handler of its own: Ctrl-C prints
:data:`INTERRUPTED` and ends the process with status 130 at once. Every file ojax writes is
written all or nothing (a temporary file, then a rename), so stopping anywhere leaves finished
work whole: re-running the command resumes it. The library (`ojax.app.cli.main` called from
Python, a notebook) keeps Python's `KeyboardInterrupt`.
"""

from __future__ import annotations

import logging
import os
import signal
import sys

INTERRUPTED = "ojax: interrupted; finished work is kept, re-run to resume"
"""The line Ctrl-C prints."""


def _stop(signum, frame) -> None:  # pragma: no cover - runs in the command's process
    try:
        os.write(2, f"\n{INTERRUPTED}\n".encode())
    finally:
        os._exit(130)


def is_command() -> bool:
    """Whether this process is the `ojax` command (the console script, or `python -m
    ojax.app.cli`) rather than a program that imports ojax."""
    argv = getattr(sys, "orig_argv", sys.argv)
    script = os.path.basename(sys.argv[0]) if sys.argv else ""
    return script in ("ojax", "ojax.exe") or list(argv[1:3]) == ["-m", "ojax.app.cli"]


def install() -> None:
    """In the `ojax` command: Ctrl-C prints one line and exits with status 130."""
    if is_command() and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _stop)


def closed_pipe() -> int:
    """What the command does when its output's reader went away (`ojax list | head -1`):
    nothing more is written to stdout (not even at exit); status 141, as a shell reports a
    process ended by SIGPIPE."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # pragma: no cover - no real stdout
        pass
    return 141


def end(code: int) -> int:
    """The `ojax` command's last step: flushes its output and ends the process with `code`
    at once (`os._exit`, skipping the interpreter's teardown of JAX's backends and of every
    module: seconds of a warm run; every file is closed by then; a multi-process run has left
    `jax.distributed` before, or it failed and the others learn it from JAX). Elsewhere (a
    program that imports ojax), returns `code`."""
    if not is_command():
        return code
    try:
        sys.stdout.flush()
    except BrokenPipeError:  # the reader of stdout went away while the last lines were written
        code = closed_pipe()
    except (OSError, ValueError):  # pragma: no cover - no real stdout
        pass
    try:
        sys.stderr.flush()
    except (OSError, ValueError):  # pragma: no cover - no real stderr
        pass
    logging.shutdown()  # what the interpreter's exit would have flushed
    os._exit(code)


__all__ = ["INTERRUPTED", "closed_pipe", "end", "install", "is_command"]
