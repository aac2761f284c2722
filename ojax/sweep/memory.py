"""Memory: the bytes one combination uses, the default budget, the chunk size.

The estimate is XLA's memory analysis of `fn` compiled for one combination (arguments,
temporaries and outputs), the program kept in :mod:`ojax.programs` for the next process. The
engine makes it only for a sweep it cannot try in one chunk (its outputs alone exceed the
budget) or whose one chunk the compiled program finds too large, and checks it once against
the chunk program's own memory analysis.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any

import jax

from ojax import programs
from ojax.sweep.chunk import lower_chunk, memory_used
from ojax.sweep.fingerprint import shape_signature
from ojax.validation import InputError, fmt_bytes, host_memory


def tree_bytes(tree: Any) -> int:
    """Bytes of every array of a pytree."""
    leaves = jax.tree.leaves(tree)
    return sum(math.prod(a.shape) * getattr(a.dtype, "itemsize", 8) for a in leaves)


_ESTIMATES: dict = {}


def _identity(fn, params, data, key) -> tuple[tuple[Any, ...] | None, str | None]:
    """`(in-process cache key, program store name)` of `fn` on one combination (`None` for an
    unhashable `fn`)."""
    # jax sets its flags on Config at run time: its stubs do not know jax_enable_x64
    x64 = jax.config.jax_enable_x64  # type: ignore[attr-defined]
    cache_key = (fn, shape_signature((params, data, key)), x64)
    try:
        hash(cache_key)
    except TypeError:
        return None, None
    return cache_key, programs.entry_name("estimate", fn, repr(cache_key[1:]))


def _not_traced(exc: Exception, params, data, key) -> InputError:
    return InputError(
        f"fn could not be traced on one combination (params {params}, data {data}, key "
        f"{key}): {type(exc).__name__}: {exc}"
    )


def output_shapes(fn, params, data, key) -> Any:
    """One combination's output shapes (`jax.ShapeDtypeStruct` leaves): from the program
    store's program of `fn` on one combination (exported there the first time: a warm process
    traces nothing), else `jax.eval_shape` (no compilation either way)."""
    _, name = _identity(fn, params, data, key)
    try:
        stored = (
            None
            if name is None
            else programs.exported_program(name, jax.jit(fn), (params, data, key))
        )
        if stored is not None:
            avals = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in stored.out_avals]
            return jax.tree.unflatten(stored.out_tree, avals)
        return jax.eval_shape(fn, params, data, key)
    except InputError:
        raise
    except Exception as exc:
        raise _not_traced(exc, params, data, key) from exc


def estimate(fn, params, data, key) -> tuple[int, float]:
    """`(bytes one combination uses, seconds spent)`: `fn` compiled for one combination (once
    per `fn` and input shapes: 0 seconds when cached)."""
    cache_key, name = _identity(fn, params, data, key)
    hit = None if cache_key is None else _ESTIMATES.get(cache_key)
    if hit is not None:
        return hit, 0.0
    start = time.perf_counter()
    try:
        lowered = lower_chunk(jax.jit(fn), name, (params, data, key))
    except InputError:
        raise
    except Exception as exc:
        raise _not_traced(exc, params, data, key) from exc
    out_struct = jax.tree.map(lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype), lowered.out_info)
    value = max(1, memory_used(lowered.compile()), tree_bytes(out_struct))
    if cache_key is not None:
        if len(_ESTIMATES) > 64:
            _ESTIMATES.clear()
        _ESTIMATES[cache_key] = value
    return value, time.perf_counter() - start


def check_output_memory(total: int, per_combination: int) -> None:
    """Raises :class:`~ojax.validation.InputError` when the outputs of every combination, which
    the host keeps until the sweep ends, would not fit in half of its memory (a clear error
    before anything runs, instead of running out of memory later)."""
    need, limit = total * per_combination, host_memory() // 2
    if need > limit:
        raise InputError(
            f"the outputs of {total} runs need {fmt_bytes(need)} on the host "
            f"({fmt_bytes(per_combination)} each), more than half of its {fmt_bytes(2 * limit)}: "
            "run fewer seeds or grid points at a time, or record fewer values per run"
        )


def default_budget(devices: Sequence[Any]) -> int:
    """Half a GPU's memory; on a CPU a quarter of the host memory shared by its devices
    (`devices`: this process's devices of the mesh)."""
    try:
        stats = devices[0].memory_stats() or {}
    except Exception:  # pragma: no cover - backends without memory stats
        stats = {}
    if stats.get("bytes_limit"):
        return int(stats["bytes_limit"] * 0.5)
    return int(host_memory() / 4 / max(1, len(devices)))


class TooSmallBudget(InputError):
    """The memory budget cannot hold one combination."""


def chunk_size_for(
    budget: int,
    shared: int,
    per_combination: int,
    num_devices: int,
    total: int,
    chunk_size: int | None,
) -> tuple[int, bool]:
    """`(combinations per chunk, whether the budget decided it)`, a multiple of the devices.

    `shared` bytes (grid, tasks, data, keys) are replicated on every device; the rest of the
    budget holds `budget // per_combination` combinations per device.
    """
    if chunk_size is None:
        per_device = (budget - shared) // per_combination
        if per_device < 1:
            raise TooSmallBudget(
                f"memory_budget={budget} bytes ({fmt_bytes(budget)}) is too small for one "
                f"combination: it needs about {fmt_bytes(per_combination)} plus "
                f"{fmt_bytes(shared)} of shared inputs per device"
            )
        chunk, derived = int(min(per_device * num_devices, total)), True
    else:
        chunk, derived = int(min(chunk_size, total)), False
    return -(-chunk // num_devices) * num_devices, derived


def shrunk_chunk(chunk: int, num_devices: int, budget: int, used: int) -> int:
    """A chunk size scaled down to fit `budget` when the compiled program uses `used` bytes
    per device for `chunk` combinations (10% margin)."""
    per_device = max(1, int(chunk // num_devices * budget / used * 0.9))
    return per_device * num_devices
