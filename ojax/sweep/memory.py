"""Memory: the bytes one combination holds at its peak, the default budget, the chunk size.

The estimate is a liveness walk over `fn`'s jaxpr (one abstract trace of one combination, no
compilation), nested bodies included; the engine checks it once against the compiled program's
memory analysis.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any

import jax

from ojax import programs
from ojax.sweep.fingerprint import shape_signature
from ojax.validation import InputError, fmt_bytes, host_memory


def nbytes(aval: Any) -> int:
    """Bytes of an abstract value (0 for tokens and other shapeless values)."""
    shape = getattr(aval, "shape", None)
    dtype = getattr(aval, "dtype", None)
    if shape is None or dtype is None:
        return 0
    return int(math.prod(shape)) * int(getattr(dtype, "itemsize", 8))


def tree_bytes(tree: Any) -> int:
    """Bytes of every array of a pytree."""
    return sum(nbytes(leaf) for leaf in jax.tree.leaves(tree))


def _is_var(v: Any) -> bool:
    return hasattr(v, "aval") and not hasattr(v, "val")


def _sub_jaxprs(eqn: Any) -> list:
    found = []

    def visit(value):
        if hasattr(value, "eqns"):
            found.append(value)
        elif hasattr(value, "jaxpr") and hasattr(value.jaxpr, "eqns"):
            found.append(value.jaxpr)
        elif isinstance(value, (tuple, list)):
            for v in value:
                visit(v)

    for value in eqn.params.values():
        visit(value)
    return found


def peak_bytes(jaxpr: Any) -> int:
    """Peak bytes of live values over a jaxpr's equations (a liveness walk, nested bodies
    included): an estimate of what one combination holds at once."""
    last = {}
    for i, eqn in enumerate(jaxpr.eqns):
        for v in eqn.invars:
            if _is_var(v):
                last[v] = i
    for v in jaxpr.outvars:
        if _is_var(v):
            last[v] = len(jaxpr.eqns)
    live = sum(nbytes(v.aval) for v in list(jaxpr.invars) + list(jaxpr.constvars))
    peak = live
    for i, eqn in enumerate(jaxpr.eqns):
        inner = 0
        for sub in _sub_jaxprs(eqn):
            own = sum(nbytes(v.aval) for v in sub.invars)
            inner = max(inner, peak_bytes(sub) - own)
        out = sum(nbytes(v.aval) for v in eqn.outvars)
        peak = max(peak, live + out + inner)
        live += out
        for v in {v for v in eqn.invars if _is_var(v)}:
            if last.get(v) == i:
                live -= nbytes(v.aval)
        for v in eqn.outvars:
            if _is_var(v) and v not in last:  # produced and never used
                live -= nbytes(v.aval)
    return peak


_ESTIMATES: dict = {}


def estimate(fn, params, data, key) -> tuple[int, Any, float]:
    """`(bytes one combination holds at its peak, its output shapes, seconds spent)`,
    traced once per `fn` and input shapes (0 seconds when cached)."""
    # jax sets its flags on Config at run time: its stubs do not know jax_enable_x64
    x64 = jax.config.jax_enable_x64  # type: ignore[attr-defined]
    cache_key: tuple[Any, ...] | None = (fn, shape_signature((params, data, key)), x64)
    try:
        hit = _ESTIMATES.get(cache_key)
    except TypeError:  # an unhashable fn
        hit, cache_key = None, None
    if hit is not None:
        return (*hit, 0.0)
    start = time.perf_counter()
    stored_name = programs.entry_name("estimate", fn, repr(cache_key[1:]) if cache_key else None)
    stored = _load_estimate(stored_name) if cache_key is not None else None
    if stored is not None:  # traced by an earlier process
        _ESTIMATES[cache_key] = stored
        return (*stored, time.perf_counter() - start)
    try:
        closed, out_struct = jax.make_jaxpr(fn, return_shape=True)(params, data, key)
    except InputError:
        raise
    except Exception as exc:
        raise InputError(
            f"fn could not be traced on one combination (params {params}, data {data}, key "
            f"{key}): {type(exc).__name__}: {exc}"
        ) from exc
    value = (max(1, peak_bytes(closed.jaxpr) + tree_bytes(out_struct)), out_struct)
    if cache_key is not None:
        if len(_ESTIMATES) > 64:
            _ESTIMATES.clear()
        _ESTIMATES[cache_key] = value
        try:
            programs.save_value(
                stored_name, {"peak": value[0], **programs.shapes_to_data(value[1])}
            )
        except ValueError:  # output shapes JSON does not hold: not kept
            pass
    return (*value, time.perf_counter() - start)


def _load_estimate(name: str | None) -> tuple[int, Any] | None:
    """`(peak bytes, output shapes)` stored by an earlier process, or `None` (also for an
    entry that does not parse: traced again and replaced)."""
    stored = programs.load_value(name)
    try:
        peak = stored["peak"]
        if not isinstance(peak, int) or isinstance(peak, bool) or peak < 1:
            return None
        return peak, programs.shapes_from_data(stored)
    except Exception:
        return None


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
