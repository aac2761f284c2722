"""Memory: one combination's output shapes, the default budget, the chunk size.

The engine sizes a chunk in two steps. First the outputs, a lower bound of what a combination
uses, set the largest chunk the budget could hold (:func:`chunk_size_for`). Then XLA's memory
analysis of the compiled chunk program (arguments, temporaries and outputs per device) gives
the bytes per combination (:func:`bytes_per_combination`); a chunk that does not fit is made
from them and compiled once more. XLA's analysis is the one estimate; nothing is compiled only
to measure.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import jax

from ojax import programs
from ojax.sweep.fingerprint import shape_signature
from ojax.validation import InputError, fmt_bytes, host_memory


def tree_bytes(tree: Any) -> int:
    """Bytes of every array of a pytree."""
    leaves = jax.tree.leaves(tree)
    return sum(math.prod(a.shape) * getattr(a.dtype, "itemsize", 8) for a in leaves)


def output_shapes(fn, params, data, key) -> Any:
    """One combination's output shapes (`jax.ShapeDtypeStruct` leaves): from the program
    store's program of `fn` on one combination (exported there the first time: a warm process
    traces nothing), else `jax.eval_shape` (no compilation either way)."""
    # jax sets its flags on Config at run time: its stubs do not know jax_enable_x64
    x64 = jax.config.jax_enable_x64  # type: ignore[attr-defined]
    args = (params, data, key)
    name = programs.entry_name("estimate", fn, repr((shape_signature(args), x64)))
    try:
        stored = None if name is None else programs.exported_program(name, jax.jit(fn), args)
        if stored is not None:
            avals = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in stored.out_avals]
            return jax.tree.unflatten(stored.out_tree, avals)
        return jax.eval_shape(fn, params, data, key)
    except InputError:
        raise
    except Exception as exc:
        raise InputError(
            f"fn could not be traced on one combination (params {params}, data {data}, key "
            f"{key}): {type(exc).__name__}: {exc}"
        ) from exc


def bytes_per_combination(used: int, shared: int, chunk: int, num_devices: int) -> int:
    """One combination's bytes in a compiled chunk program that uses `used` bytes per device
    for `chunk` combinations over `num_devices`, `shared` of them replicated inputs."""
    return max(1, -(-(used - shared) * num_devices // chunk))


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


__all__ = [
    "TooSmallBudget",
    "bytes_per_combination",
    "check_output_memory",
    "chunk_size_for",
    "default_budget",
    "output_shapes",
    "tree_bytes",
]
