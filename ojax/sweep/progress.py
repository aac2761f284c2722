"""Progress on stderr: a tqdm bar on a terminal, plain lines in a log file.

tqdm redraws its bar with carriage returns and cursor moves, which a log file or a pipe keeps
as escape codes. :func:`progress_bar` gives tqdm only when the stream is a terminal; otherwise
a :class:`PlainProgress` that writes a whole line (`desc: 3/8 chunk, 12 s`) at most every
`interval` seconds, and a last line at the end if it wrote any (short runs stay silent).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Iterator
from typing import Any, TextIO

PLAIN_INTERVAL = 10.0
"""Seconds between two plain progress lines."""


class PlainProgress:
    """The part of tqdm's interface ojax uses (iteration, `update`, `close`), as plain
    lines: one at most every `interval` seconds (default :data:`PLAIN_INTERVAL`), and a final
    one if any was written."""

    def __init__(
        self,
        iterable: Iterable | None = None,
        *,
        desc: str = "",
        total: int | None = None,
        initial: int = 0,
        unit: str = "it",
        file: TextIO | None = None,
        interval: float | None = None,
    ) -> None:
        self.iterable = iterable
        self.desc, self.unit, self.file = desc, unit, file
        self.interval = PLAIN_INTERVAL if interval is None else interval
        if total is None and iterable is not None and hasattr(iterable, "__len__"):
            total = len(iterable)  # type: ignore[arg-type]
        self.total, self.n = total, initial
        self.start = self._last = time.monotonic()
        self.lines = 0
        self.closed = False

    def _write(self, final: bool = False) -> None:
        out = self.file if self.file is not None else sys.stderr
        count = f"{self.n}/{self.total}" if self.total is not None else f"{self.n}"
        elapsed = time.monotonic() - self.start
        state = "done in" if final else "elapsed"
        print(f"{self.desc}: {count} {self.unit}, {state} {elapsed:.0f} s", file=out, flush=True)
        self._last = time.monotonic()
        self.lines += 1

    def update(self, n: int = 1) -> None:
        """Counts `n` more; writes a line if `interval` seconds passed since the last."""
        self.n += n
        if time.monotonic() - self._last >= self.interval:
            self._write()

    def close(self) -> None:
        """Writes the final line if any line was written before."""
        if not self.closed and self.lines:
            self._write(final=True)
        self.closed = True

    def __iter__(self) -> Iterator[Any]:
        if self.iterable is None:
            raise TypeError("PlainProgress has no iterable to iterate over")
        try:
            for item in self.iterable:
                yield item
                self.update()
        finally:
            self.close()

    def __enter__(self) -> PlainProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def is_terminal(file: TextIO | None = None) -> bool:
    """Whether `file` (default stderr) is an interactive terminal."""
    stream = file if file is not None else sys.stderr
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


def progress_bar(
    iterable: Iterable | None = None,
    *,
    desc: str = "",
    total: int | None = None,
    initial: int = 0,
    unit: str = "it",
    file: TextIO | None = None,
) -> Any:
    """A progress bar on `file` (default stderr): tqdm on a terminal (it disappears when done),
    else :class:`PlainProgress` lines. Use it as tqdm: iterate over it, or `update` and
    `close` it."""
    if not is_terminal(file):
        return PlainProgress(
            iterable, desc=desc, total=total, initial=initial, unit=unit, file=file
        )
    from tqdm import tqdm

    return tqdm(
        iterable,
        desc=desc,
        total=total,
        initial=initial,
        unit=unit,
        file=file if file is not None else sys.stderr,
        dynamic_ncols=True,
        leave=False,
    )


__all__ = ["PLAIN_INTERVAL", "PlainProgress", "is_terminal", "progress_bar"]
