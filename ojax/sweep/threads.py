"""Independent pieces of an experiment computed at once on CPU threads, results in order.

While one piece traces, lowers or works on the host (Python, holding the GIL), another's
compiled programs run (XLA releases it), and two programs that each keep one core busy share
the machine: on a 2-core machine `ojax run theory`'s checks take 28.6 s instead of 41.8 s, the
main job's methods 4.6 s instead of 6.1 s (`scripts/bench_e2e.py --profile`). Numbers do not
change: each piece computes what it would alone (XLA's CPU programs give the same bits whatever
runs beside them). Memory does: pieces at once hold their buffers at once.

Programs that call LAPACK (`jnp.linalg` on the CPU: `lstsq`, `qr`, `eigh`, `solve`) never run
two at once (:data:`LAPACK`): jaxlib's batched LAPACK kernels split their batch over the CPU's
intra-op thread pool and wait for it, and two waiting at once wait for each other for ever
(jaxlib 0.10.2 on 2 cores: two threads each running a `lax.scan` over a batched `lstsq`, or
`qr`, hung within 20 runs; one beside a program without LAPACK ran 30 times).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

import jax

T = TypeVar("T")
R = TypeVar("R")

THREADS = min(4, os.cpu_count() or 1)
"""How many pieces :func:`in_threads` computes at once by default."""

LAPACK = threading.RLock()
"""Held while a program that calls LAPACK runs on the CPU (the sweep engine's chunks that do,
the pieces :func:`in_threads` is told do): one such program at a time in a process."""
_FREE = contextlib.nullcontext()  # what a piece that does not call LAPACK holds


class _InOrder(Iterator[R]):
    """The results of :func:`in_threads`: an iterator that knows its length (a progress bar's
    total)."""

    def __init__(self, results: Iterator[R], length: int):
        self._results, self._length = results, length

    def __iter__(self) -> _InOrder[R]:
        return self

    def __next__(self) -> R:
        return next(self._results)

    def __len__(self) -> int:
        return self._length


def in_threads(
    fn: Callable[[T], R],
    items: Iterable[T],
    threads: int | None = None,
    lapack: Callable[[T], bool] | None = None,
) -> Iterator[R]:
    """`fn(item)` for each of `items`, up to `threads` (default :data:`THREADS`) at once,
    yielded in the items' order (the iterator has a `len`). The calls of the items for which
    `lapack(item)` is true (their programs call LAPACK) run one at a time, holding
    :data:`LAPACK`.

    Each call runs under the float64 setting of the call to `in_threads` (a `jax.enable_x64`
    context too, which a thread does not inherit). The calls run one after another on an
    accelerator (one device runs one program at a time, and two calls would hold twice the
    memory), with several JAX processes (`jax.distributed`: every process must issue its
    collectives in the same order) and with `threads=1`. An error raised by a call is raised
    here, in order, at once; it, or the caller leaving the loop, cancels the calls not started
    (those running end on their threads, their results dropped).
    """
    items = list(items)
    x64 = bool(jax.config.jax_enable_x64)  # type: ignore[attr-defined]  # the caller's, now
    count = THREADS if threads is None else threads
    return _InOrder(_results(fn, items, count, x64, lapack), len(items))


def _results(
    fn: Callable[[T], R],
    items: list[T],
    threads: int,
    x64: bool,
    lapack: Callable[[T], bool] | None,
) -> Iterator[R]:
    def call(item: T) -> R:
        with jax.enable_x64(x64), LAPACK if lapack is not None and lapack(item) else _FREE:
            return fn(item)

    if threads <= 1 or len(items) <= 1 or jax.process_count() > 1 or jax.default_backend() != "cpu":
        yield from map(call, items)
        return
    pool = concurrent.futures.ThreadPoolExecutor(threads, thread_name_prefix="ojax-piece")
    try:
        yield from pool.map(call, items)
    finally:  # all done, or an error / an early exit: the calls not started are cancelled
        pool.shutdown(wait=False, cancel_futures=True)


__all__ = ["LAPACK", "THREADS", "in_threads"]
