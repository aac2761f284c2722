"""Streams longer than memory: runs that continue block by block, from disk or drawn in the scan.

A run of `T` steps is the same run as its first `B` steps continued from their final state
(`ojax.run(..., state=...)`), bit for bit. Two ways use that to keep memory bounded:

* :func:`run_blocks` feeds a :class:`BlockReader` (a `.npy` pair, an `.npz` or arrays
  already open) to :func:`ojax.run` `block` rows at a time: memory is one block plus the
  state, whatever the length of the stream: only one block is ever handed to JAX (a whole
  memory-mapped array given to `ojax.run` becomes one device array of the whole stream).
  Blocks of a file are read with positioned reads into fresh arrays (a compressed `.npz`
  member forward, as it inflates).
* :func:`run_drawn` draws a synthetic stream block by block inside one jitted scan (`draw(data,
  start, size)` gives rows `start .. start + size`), so the stream is never materialised:
  memory is one block, and the run is `jax.vmap`-able over seeds like any other.
  :func:`ojax.envs.streams.linear_regression_rows` gives the rows of
  :func:`~ojax.envs.streams.linear_regression_stream` exactly, so the drawn run equals the
  materialised one (see `tests/test_streaming.py` for what is bit for bit).

Both return the final state and one :class:`~ojax.core.Trace` over all steps; each block size
compiles once (a last, shorter block once more).
"""

from __future__ import annotations

import contextlib
import math
import os
import struct
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ojax.core import Params, State, Trace
from ojax.datasets.paths import DataError
from ojax.fileio import open_regular
from ojax.losses import Loss
from ojax.runner import run
from ojax.validation import InputError, check_int, check_state_finite

Draw = Callable[[Any, jax.Array, int], tuple[Any, jax.Array]]


def _identity(info: os.stat_result) -> tuple[int, ...]:
    """What changes when a file is rewritten or replaced: its device, inode, size and times
    (the status change time cannot be set back by a writer)."""
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


class _Member:
    """One array of a file, read by rows: `(path, offset)` of its data when stored as is,
    else a member of a compressed `.npz` read forward. The file is a regular file
    (:func:`ojax.fileio.open_regular`) and must stay as it was when the reader was built."""

    def __init__(self, path: Path, key: str | None):
        self.path, self.key = path, key
        self.name = str(path) + ("" if key is None else f"[{key}]")
        self.offset: int | None = None
        with self._open() as (f, raw):
            self.shape, self.dtype = self._header(f)
            self.identity = _identity(os.fstat(raw.fileno()))
            if f is raw:
                self.offset = raw.tell()
        self.row_bytes = math.prod(self.shape[1:]) * self.dtype.itemsize

    @contextlib.contextmanager
    def _open(self) -> Iterator[tuple[Any, Any]]:
        """`(reader at the array's header, the file)`: the file itself for a `.npy` or a
        stored `.npz` member (positioned at it), the inflating member of a compressed one."""
        with open_regular(self.path, what="stream file") as raw:
            if self.key is None:
                yield raw, raw
                return
            try:
                archive = zipfile.ZipFile(raw)
                info = archive.getinfo(f"{self.key}.npy")
            except KeyError:
                raise DataError(f"{str(self.path)!r}: no array {self.key!r} in the .npz") from None
            except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
                raise DataError(
                    f"{str(self.path)!r}: cannot read as an .npz file ({exc})"
                ) from None
            with archive:
                if info.compress_type == zipfile.ZIP_STORED:  # rows at a fixed file offset
                    raw.seek(info.header_offset)
                    head = raw.read(30)
                    name_len, extra_len = struct.unpack("<HH", head[26:30])
                    raw.seek(info.header_offset + 30 + name_len + extra_len)
                    yield raw, raw
                else:
                    with archive.open(info) as member:
                        yield member, raw

    def _header(self, f) -> tuple[tuple[int, ...], np.dtype]:
        try:
            version = np.lib.format.read_magic(f)
            read = (
                np.lib.format.read_array_header_1_0
                if version == (1, 0)
                else np.lib.format.read_array_header_2_0
            )
            shape, fortran, dtype = read(f)
        except Exception as exc:
            raise DataError(f"{self.name!r}: not a readable .npy array ({exc})") from None
        if dtype.hasobject:
            raise DataError(f"{self.name!r}: holds Python objects (dtype {dtype}), never unpickled")
        if dtype.kind not in "biuf":  # text, bytes, records, dates, complex numbers
            raise DataError(
                f"{self.name!r}: holds {dtype} values; a stream is numbers (bool, int or float)"
            )
        if fortran and len(shape) > 1:
            raise DataError(
                f"{self.name!r}: Fortran order cannot be read by rows; save it C-ordered"
            )
        if len(shape) < 1:
            raise DataError(f"{self.name!r}: needs a leading time axis, got shape {shape}")
        return tuple(shape), dtype

    def _check_same(self, raw, start: int, stop: int) -> None:
        """Refuses a file rewritten or replaced since the reader was built: its rows would mix
        two files without a word."""
        try:
            now = {_identity(os.fstat(raw.fileno())), _identity(os.stat(self.path))}
        except OSError:
            now = set()
        if now != {self.identity}:
            raise DataError(
                f"{str(self.path)!r} changed while it was read (rewritten or replaced by the time "
                f"rows {start}..{stop - 1} were read): the rows would mix two files; rerun on a "
                "file that stays as it is while ojax reads it"
            )

    def blocks(self, size: int) -> Iterator[np.ndarray]:
        n, row = self.shape[0], self.shape[1:]
        with self._open() as (f, raw):
            if self.offset is None:
                self._header(f)  # a compressed member: read forward past its header
            for start in range(0, n, size):
                rows = min(size, n - start)
                if self.offset is not None:
                    f.seek(self.offset + start * self.row_bytes)
                data = f.read(rows * self.row_bytes)
                self._check_same(raw, start, start + rows)
                if len(data) != rows * self.row_bytes:
                    raise DataError(f"{str(self.path)!r}: truncated at row {start}")
                block = np.frombuffer(data, self.dtype).reshape((rows,) + row)
                yield block.astype(self.dtype.newbyteorder("="), copy=False)  # big-endian files


class BlockReader:
    """A stream `(xs, ys)` on disk (or in memory) read `size` rows at a time.

    Build it with :meth:`from_npy` (two `.npy` files), :meth:`from_npz` (two arrays of one
    `.npz`, stored or compressed) or :meth:`from_arrays` (arrays already open, e.g. a
    `np.memmap`). Headers are checked when it is built (no object arrays, no Fortran order,
    the same number of rows); data is read only by :meth:`blocks`.
    """

    def __init__(self, sources: tuple[Any, Any], num_steps: int):
        self._sources, self.num_steps = sources, num_steps

    @classmethod
    def from_npy(cls, xs_path: str | Path, ys_path: str | Path) -> BlockReader:
        return cls._checked(_Member(Path(xs_path), None), _Member(Path(ys_path), None))

    @classmethod
    def from_npz(cls, path: str | Path, keys: tuple[str, str] = ("xs", "ys")) -> BlockReader:
        return cls._checked(_Member(Path(path), keys[0]), _Member(Path(path), keys[1]))

    @classmethod
    def from_arrays(cls, xs: Any, ys: Any) -> BlockReader:
        return cls._checked(xs, ys)

    @classmethod
    def _checked(cls, xs: Any, ys: Any) -> BlockReader:
        nx, ny = tuple(np.shape(xs))[:1], tuple(np.shape(ys))[:1]
        if not nx or not ny or nx != ny:
            raise InputError(
                f"xs and ys need one leading time axis of the same length, got shapes "
                f"{xs.shape} and {ys.shape}"
            )
        return cls((xs, ys), nx[0])

    @property
    def shapes(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        return tuple(tuple(s.shape) for s in self._sources)  # type: ignore[return-value]

    def blocks(self, size: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Consecutive `(xs, ys)` blocks of `size` rows (the last one shorter)."""
        size = check_int("block", size, low=1)
        yield from zip(*(_rows(source, size) for source in self._sources))


def _rows(source: Any, size: int) -> Iterator[np.ndarray]:
    if isinstance(source, _Member):
        yield from source.blocks(size)
    else:
        for start in range(0, np.shape(source)[0], size):
            yield np.asarray(source[start : start + size])


def _check_rows(name: str, block: np.ndarray, start: int) -> None:
    """Refuses NaN / Inf and values whose square overflows in the block of rows `start ...`,
    naming the row of the whole stream (the runner's own check would name the block's)."""
    if not np.issubdtype(block.dtype, np.floating) or not block.size:
        return
    flat = block.reshape(len(block), -1)
    with np.errstate(over="ignore", invalid="ignore"):
        bad = ~np.isfinite(flat) | (np.abs(flat) > np.sqrt(np.finfo(block.dtype).max))
    if bad.any():
        row, col = (int(i[0]) for i in np.nonzero(bad))
        value = flat[row, col]
        what = "must be finite" if not np.isfinite(value) else "is too large (its square overflows)"
        raise InputError(
            f"{name}: row {start + row} of the stream {what}, got {float(value)!r} (column {col}); "
            f"{int(bad.sum())} such value(s) in rows {start} to {start + len(block) - 1}"
        )


def _join(traces: list[Trace]) -> Trace:
    """One trace of the blocks' traces, on the host."""

    def cat(*parts):
        return np.concatenate([np.asarray(p) for p in parts])

    return jax.tree.map(cat, *traces) if len(traces) > 1 else jax.tree.map(np.asarray, traces[0])


def run_blocks(
    learner: Any,
    params: Params,
    reader: BlockReader,
    loss: Loss,
    *,
    block: int = 1 << 16,
    state: State | None = None,
    dtype: Any = None,
    record: Callable | None = None,
    keep_predictions: bool = False,
) -> tuple[State, Trace]:
    """Runs `learner` over the stream of `reader`, `block` rows per :func:`ojax.run`
    call, each continuing from the state the one before returned.

    Equal to `ojax.run(learner, params, xs, ys, loss, state=state)` on the whole stream, bit
    for bit; memory is one block (`block` rows, on the host and on the device) plus the
    state and the trace (`n` losses, kept on the host).

    Args:
      learner: a predictor (static).
      params: its hyperparameters.
      reader: the stream (:class:`BlockReader`).
      loss: the loss recorded per step.
      block: rows per call (each block size compiles once).
      state: continue from this state (default: `learner.init(params)`).
      dtype: cast the rows to this dtype first (e.g. `np.float32` for a float64 file).
      record: as in :func:`ojax.run` (kept on the host, `n` rows).
      keep_predictions: as in :func:`ojax.run` (kept on the host, `n` rows).

    Returns:
      The final state and the :class:`~ojax.core.Trace` of all `n` steps (NumPy arrays).
    """
    block = check_int("block", block, low=1)
    traces = []
    start = 0
    for xs, ys in reader.blocks(block):
        if dtype is not None:
            xs, ys = xs.astype(dtype), ys.astype(dtype)
        _check_rows("xs", xs, start)
        _check_rows("ys", ys, start)
        start += len(xs)
        state, trace = run(
            learner,
            params,
            jnp.asarray(xs),
            jnp.asarray(ys),
            loss,
            state=state,
            record=record,
            keep_predictions=keep_predictions,
        )
        traces.append(jax.device_get(trace))
    return state, _join(traces)


def run_drawn(
    learner: Any,
    params: Params,
    draw: Draw,
    data: Any,
    num_steps: int,
    loss: Loss,
    *,
    block: int = 1024,
    state: State | None = None,
    record: Callable | None = None,
    keep_predictions: bool = False,
) -> tuple[State, Trace]:
    """Runs `learner` over a stream drawn `block` rows at a time inside one scan.

    `draw(data, start, size)` (static; `start` a traced int32, `size` a static int) gives
    the rows `start .. start + size` of the stream, e.g.
    `lambda key, start, size: linear_regression_rows(key, start, size, dim)`. The stream is
    never materialised (memory: one block); works under `jit` / `vmap`.

    Args:
      learner: a predictor (static).
      params: its hyperparameters.
      draw: the rows of the stream.
      data: what `draw` reads (a key, a problem), passed at call time.
      num_steps: `n` (static).
      loss: the loss recorded per step.
      block: rows per draw (static); a last, shorter block draws `n mod block` rows.
      state: continue from this state (default: `learner.init(params)`).
      record: as in :func:`ojax.run`.
      keep_predictions: as in :func:`ojax.run`.

    Returns:
      The final state and the :class:`~ojax.core.Trace` of the `n` steps.
    """
    num_steps = check_int("num_steps", num_steps, low=1)
    block = min(check_int("block", block, low=1), num_steps)
    full, rest = divmod(num_steps, block)
    options = dict(record=record, keep_predictions=keep_predictions)

    def one(state, start, size):
        xs, ys = draw(data, start, size)
        return run(learner, params, xs, ys, loss, state=state, **options)

    def body(state, b):
        return one(state, b * block, block)

    if state is None:
        state = learner.init(params)
    check_state_finite(state)
    state, trace = jax.lax.scan(body, state, jnp.arange(full, dtype=jnp.int32))
    trace = jax.tree.map(lambda a: a.reshape((full * block,) + a.shape[2:]), trace)
    if rest:
        state, last = one(state, jnp.int32(full * block), rest)
        trace = jax.tree.map(lambda a, b: jnp.concatenate([a, b]), trace, last)
    check_state_finite(state, num_steps)  # (called outside jit: the blocks' runs are traced)
    return state, trace


__all__ = ["BlockReader", "run_blocks", "run_drawn"]
