"""The engine: :func:`sweep` and :func:`sweep_experiment`.

A sweep is planned (its axes, keys and layout), sized (one combination's bytes, the mesh, the
chunk), given its store (the chunk folder, finished chunks loaded), then run chunk by chunk: a
chunk is a vector of combination numbers, padded to the chunk size, from which one jitted
function gathers its params, data and keys on the device, its batch axis sharded over the mesh.
With several processes (:mod:`ojax.sweep.distributed`) the mesh holds every process's devices:
each chunk is one program over all of them, its outputs all-gathered, and process 0 writes.
"""

from __future__ import annotations

import functools
import math
import os
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from ojax.core import is_prng_key
from ojax.sweep import distributed
from ojax.sweep.chunk import BATCH_AXIS, Layout, by_seed, compile_chunk
from ojax.sweep.fingerprint import configuration, describe, manifest
from ojax.sweep.grid import Axis, as_arrays, grid_axes, leading_size
from ojax.sweep.memory import (
    TooSmallBudget,
    bytes_per_combination,
    check_output_memory,
    chunk_size_for,
    default_budget,
    output_shapes,
    tree_bytes,
)
from ojax.sweep.options import EngineOptions, ExperimentRun, checked_options
from ojax.sweep.results import SweepResult, SweepStats
from ojax.sweep.store import open_store, prepare, save_chunk
from ojax.validation import InputError, check_int, fmt_bytes


def _put(value: Any, sharding: NamedSharding) -> jax.Array:
    """`value` placed with `sharding`; over several processes' devices, from host memory (the
    same value on every process)."""
    if sharding.is_fully_addressable:
        return jax.device_put(value, sharding)
    if jnp.issubdtype(getattr(value, "dtype", np.float32), jax.dtypes.prng_key):
        data = _put(jax.random.key_data(value), sharding)
        return jax.random.wrap_key_data(data, impl=jax.random.key_impl(value))
    host = np.asarray(value)
    return jax.make_array_from_callback(host.shape, sharding, lambda index: host[index])


def _fetch(tree: Any) -> list[np.ndarray]:
    """The leaves on the host (of a replicated array over several processes: the local copy)."""
    leaves = jax.tree.leaves(tree)
    return [np.asarray(a if a.is_fully_addressable else a.addressable_data(0)) for a in leaves]


def _mesh(devices: int | None) -> Mesh:
    """The first `devices` devices (`None`: all) of every process of the run, in process
    order: one process's own devices, or with several processes one mesh over all of them."""
    local = jax.local_devices()
    if devices is not None and not 1 <= devices <= len(local):
        raise InputError(
            f"options.devices must be in [1, {len(local)}] (the available devices), got {devices}"
        )
    by_process: dict[int, list] = {}
    for device in jax.devices():
        by_process.setdefault(device.process_index, []).append(device)
    chosen = [d for p in sorted(by_process) for d in by_process[p][: devices or len(local)]]
    return Mesh(np.asarray(chosen), (BATCH_AXIS,))


def _keys(key: Any, num_seeds: int) -> jax.Array:
    if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
        if not -(2**63) <= int(key) < 2**63:
            raise InputError(f"key must be a 64-bit integer seed (or a PRNG key), got {key}")
        key = jax.random.key(int(key))
    if not isinstance(key, jax.Array):
        key = jnp.asarray(key)
    typed = is_prng_key(key)
    if (typed and key.shape != ()) or (not typed and key.shape != (2,)):
        raise InputError(f"key must be one PRNG key (jax.random.key(0)), got shape {key.shape}")
    return jax.random.split(key, num_seeds)


def _num_seeds(num_seeds: Any, key: Any, seeds: Any) -> Any:
    if (seeds is None) == (num_seeds is None or key is None):
        raise InputError("give num_seeds and key (keys split from key), or explicit seeds")
    return len(seed_keys(seeds)) if seeds is not None else num_seeds


def seed_keys(seeds: Any) -> jax.Array:
    """The keys of explicit integer seeds: `jax.random.key(s)` for each `s` of `seeds`
    (a non-empty 1-D sequence of integers in `[-2**31, 2**31)`), stacked."""
    values = np.asarray(seeds)
    if values.ndim != 1 or values.size == 0 or values.dtype.kind not in "iu":
        raise InputError(f"seeds must be a non-empty 1-D sequence of integers, got {seeds!r}")
    if values.min() < -(2**31) or values.max() >= 2**31:
        raise InputError(f"seeds must lie in [-2**31, 2**31), got {values.min()}..{values.max()}")
    return jax.vmap(jax.random.key)(jnp.asarray(values, jnp.int32))


# --------------------------------------------------------------------------------------------
# the steps of a sweep


def _check_options(fn, num_seeds, tasks, data, chunk_size, num_steps) -> None:
    if not callable(fn):
        raise InputError(f"fn must be callable, got {fn!r}")
    check_int("num_seeds", num_seeds, 1)
    if tasks is not None and data is not None:
        raise InputError("give either tasks (one slice per combination) or data (shared)")
    if chunk_size is not None:
        check_int("chunk_size", chunk_size, 1)
    if num_steps is not None:
        check_int("num_steps", num_steps, 1)


class _Plan(NamedTuple):
    """What a sweep computes, decided (and checked) before anything runs."""

    fn: Callable
    name: str
    layout: Layout
    axes: list[Axis]
    hyper: Any  # the grid's arrays: a dict of the product axes, the stacked pytree, or None
    tasks: Any
    data: Any
    keys: jax.Array


def _plan(fn, grid, name, num_seeds, key, tasks, data, seeds=None) -> _Plan:
    name = name or getattr(fn, "__name__", None) or "sweep"
    kind, axes = grid_axes(grid)
    hyper = (
        {a.name: a.values for a in axes}
        if kind == "product"
        else (axes[0].values if axes else None)
    )
    num_tasks = None
    if tasks is not None:
        tasks = as_arrays("tasks", tasks)
        num_tasks = leading_size("tasks", tasks)
    if data is not None:
        data = as_arrays("data", data)
    keys = _keys(key, int(num_seeds)) if seeds is None else seed_keys(seeds)
    layout = Layout(
        (int(num_seeds), *(a.size for a in axes), *(() if num_tasks is None else (num_tasks,))),
        kind,
        tuple(a.name for a in axes),
        tasks is not None,
    )
    if layout.total >= 2**31:
        raise InputError(f"a sweep holds at most 2**31 - 1 combinations, got {layout.total}")
    return _Plan(fn, name, layout, axes, hyper, tasks, data, keys)


class _Sizing(NamedTuple):
    mesh: Mesh
    budget: int
    chunk: int
    derived: bool  # the chunk size came from the budget (not chunk_size=)
    per_combination: int  # one combination's bytes: its outputs' until a chunk is compiled
    shared: int  # bytes of the inputs every device holds (grid, tasks, data, keys)
    out_struct: Any  # one combination's output shapes


def _one(tree):
    return jax.tree.map(lambda a: jax.ShapeDtypeStruct(a.shape[1:], a.dtype), tree)


def _size(plan: _Plan, devices, memory_budget, chunk_size) -> _Sizing:
    """One combination's output shapes, the mesh, the budget, and the largest chunk the budget
    could hold (each combination's outputs, a lower bound of its bytes, in it): the compiled
    chunk program's memory analysis confirms or shrinks it (:func:`_compiled_chunk`)."""
    one_params = None if plan.layout.kind == "none" else _one(plan.hyper)
    one_data = (
        _one(plan.tasks)
        if plan.tasks is not None
        else jax.tree.map(lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype), plan.data)
    )
    out_struct = output_shapes(plan.fn, one_params, one_data, _one(plan.keys))
    floor = max(1, tree_bytes(out_struct))
    mesh = _mesh(devices)
    local = [d for d in mesh.devices.flat if d.process_index == jax.process_index()]
    budget = int(memory_budget) if memory_budget is not None else default_budget(local)
    shared = tree_bytes((plan.hyper, plan.tasks, plan.data, plan.keys))
    chunk, derived = chunk_size_for(
        budget, shared, floor, mesh.devices.size, plan.layout.total, chunk_size
    )
    if derived:
        chunk = _whole_seeds(plan.layout, chunk, mesh.devices.size)
    return _Sizing(mesh, budget, chunk, derived, floor, shared, out_struct)


def _whole_seeds(layout: Layout, chunk: int, num_devices: int) -> int:
    """`chunk` (a multiple of the devices) made a multiple of a seed's combinations times the
    devices where it holds one (then :func:`ojax.sweep.chunk.by_seed` runs it as whole seeds)."""
    unit = layout.per_seed * num_devices
    return chunk if chunk < unit else chunk - chunk % unit


class _Store(NamedTuple):
    folder: Path | None  # the chunk folder (None without out_dir, and on processes other than 0)
    leaves: list[np.ndarray]  # every output leaf, (total, *shape), filled chunk by chunk
    done: np.ndarray  # (total,) bool: combinations loaded from finished chunks
    loaded: int  # chunks loaded
    manifest: dict | None  # the chunk folder's sweep.json
    error: str  # several processes: why process 0 could not open the folder ("" if it could)


def _open(plan: _Plan, sizing: _Sizing, out_dir, resume: bool, config: Any) -> _Store:
    """The output arrays and, with `out_dir`, the configuration's chunk folder (its finished
    chunks loaded); only process 0 of several opens the folder."""
    specs, treedef = jax.tree.flatten(sizing.out_struct)
    total = plan.layout.total
    check_output_memory(total, sum(math.prod(s.shape) * s.dtype.itemsize for s in specs))
    leaves = [np.empty((total, *s.shape), s.dtype) for s in specs]
    done = np.zeros(total, bool)
    if out_dir is None:
        return _Store(None, leaves, done, 0, None, "")
    output = [str(treedef), [[list(s.shape), str(s.dtype)] for s in specs]]
    inputs = (plan.tasks, plan.data, plan.keys)
    described = configuration(
        plan.fn, config, plan.layout.kind, plan.axes, inputs, plan.layout.sizes[0], output
    )
    held = manifest(described, plan.name, plan.fn, config, plan.layout)
    if jax.process_index() != 0:
        return _Store(None, leaves, done, 0, held, "")
    try:
        folder = open_store(Path(out_dir), plan.name, held["hash"], held)
        loaded = prepare(folder, resume, leaves, done)
    except InputError as exc:
        if jax.process_count() == 1:
            raise
        return _Store(None, leaves, done, 0, held, str(exc))  # raised on every process
    return _Store(folder, leaves, done, loaded, held, "")


def _shared(name: str, sizing: _Sizing, store: _Store) -> tuple[_Sizing, _Store]:
    """Several processes: checks that every one runs this sweep (its manifest), then takes
    process 0's budget and chunk size (so that every process compiles the same chunks) and
    the chunks process 0 loaded (broadcast)."""
    parts = (store.manifest or {}).get("parts", {})
    mine = {"parts": parts, "budget": sizing.budget, "chunk": sizing.chunk}
    payloads = distributed.gather_json({**mine, "loaded": store.loaded, "error": store.error})
    first = payloads[0]
    if first["error"]:
        own = jax.process_index() == 0
        raise distributed.refuse(first["error"] if own else f"(process 0) {first['error']}")
    diff = distributed.differences([p["parts"] for p in payloads])
    if diff:
        raise distributed.refuse(
            f"sweep {name!r}: the processes run different configurations (digests of {diff}); "
            "start every process with the same command"
        )
    sizing = sizing._replace(budget=first["budget"], chunk=first["chunk"])
    if first["loaded"]:
        done, *leaves = distributed.broadcast([store.done, *store.leaves])
        store = store._replace(done=done, leaves=leaves, loaded=first["loaded"])
    return sizing, store


def _compiled_chunk(plan: _Plan, sizing: _Sizing, options: tuple):
    """`(executable, replicated inputs, sizing, compile seconds)`: the chunk program and the
    bytes per combination its memory analysis gives. A chunk derived from the budget that
    the program finds too large is made from those bytes and compiled once more (again while
    it does not fit: the bytes are not exactly linear in the chunk)."""
    mesh = sizing.mesh
    n_dev = mesh.devices.size
    replicated = NamedSharding(mesh, PartitionSpec())
    args: tuple[Any, Any, Any, Any] = jax.tree.map(
        functools.partial(_put, sharding=replicated), (plan.hyper, plan.tasks, plan.data, plan.keys)
    )

    def compiled_at(chunk: int):
        return compile_chunk(plan.fn, plan.layout, mesh, chunk, *args, options, plan.name)

    (compiled, used), seconds = compiled_at(sizing.chunk)
    per = bytes_per_combination(used, sizing.shared, sizing.chunk, n_dev)
    while sizing.derived and used > sizing.budget:
        if sizing.chunk <= n_dev:
            raise TooSmallBudget(
                f"memory_budget={sizing.budget} bytes ({fmt_bytes(sizing.budget)}) is too small "
                f"for one combination: the compiled program needs {fmt_bytes(used)} per device"
            )
        chunk, _ = chunk_size_for(sizing.budget, sizing.shared, per, n_dev, sizing.chunk, None)
        chunk = _whole_seeds(plan.layout, min(chunk, sizing.chunk - n_dev), n_dev)
        sizing = sizing._replace(chunk=chunk)
        (compiled, used), more = compiled_at(sizing.chunk)
        per = max(per, bytes_per_combination(used, sizing.shared, sizing.chunk, n_dev))
        seconds += more
    return (
        compiled,
        args,
        sizing._replace(per_combination=max(sizing.per_combination, per)),
        seconds,
    )


def _progress_bar(name: str, loaded: int, count: int):
    from ojax.sweep.progress import progress_bar  # tqdm on a terminal, plain lines otherwise

    return progress_bar(desc=name, total=loaded + count, initial=loaded, unit="chunk")


def _run_chunks(compiled, args, mesh, width, batches, store: _Store, bar, on_chunk) -> None:
    """Runs every batch `(program input, its combinations)`, the input padded to `width`;
    stores one chunk while the next is computing. Over several processes, each chunk's outputs
    are all-gathered and process 0 stores them."""
    batch_sharding = NamedSharding(mesh, PartitionSpec(BATCH_AXIS))
    several = not batch_sharding.is_fully_addressable
    if several:
        gather = jax.jit(lambda out: out, out_shardings=NamedSharding(mesh, PartitionSpec()))

    def finish(batch, out, number):
        with distributed.across(f"at chunk {number + 1} of {len(batches)}"):
            values = _fetch(out)
        for leaf, value in zip(store.leaves, values):
            leaf[batch] = value[: batch.size]
        path = None
        if store.folder is not None:
            path = save_chunk(store.folder, batch, values)
        if bar is not None:
            bar.update(1)
        if on_chunk is not None:
            info = {"chunk": number, "computed": number + 1, "total": len(batches)}
            on_chunk({**info, "indices": batch, "path": path})

    in_flight = None
    for number, (given, batch) in enumerate(batches):
        padded = np.full(width, given[-1], np.int32)
        padded[: given.size] = given
        with distributed.across(f"at chunk {number + 1} of {len(batches)}"):
            out = compiled(_put(padded, batch_sharding), *args)  # overlaps with storing the last
            out = gather(out) if several else out
        if in_flight is not None:
            finish(*in_flight)
        in_flight = (batch, out, number)
    if in_flight is not None:
        finish(*in_flight)


class _Ran(NamedTuple):
    chunk: int
    chunks_computed: int
    combinations_computed: int
    compile_seconds: float


def _split(pending: np.ndarray, chunk: int) -> list[np.ndarray]:
    return [pending[i : i + chunk] for i in range(0, pending.size, chunk)]


def _batches(layout: Layout, pending: np.ndarray, chunk: int, n_dev: int):
    """`(width, batches)`: each chunk of the `pending` combinations as `(program input, its
    combinations)`, the input of `width` numbers once padded: the combination numbers, or for
    chunks of whole seeds (:func:`ojax.sweep.chunk.by_seed`) the seeds with a pending
    combination and all their combinations (those already done computed again, to the same
    numbers)."""
    if not by_seed(layout, chunk, n_dev):
        return chunk, [(batch, batch) for batch in _split(pending, chunk)]
    per = layout.per_seed
    seeds = np.unique(pending // per).astype(np.int32)
    inner = np.arange(per, dtype=np.int32)
    batches = [(s, (s[:, None] * per + inner).ravel()) for s in _split(seeds, chunk // per)]
    return chunk // per, batches


def _compute(plan, sizing, store, options, show: bool, on_chunk) -> tuple[_Ran, _Sizing, _Store]:
    """Compiles the chunk program (if anything is pending) and runs the pending chunks; the
    sizing the compiled program confirmed."""
    if jax.process_count() > 1:
        sizing, store = _shared(plan.name, sizing, store)
        show = show and jax.process_index() == 0  # one bar: every process runs every chunk
    pending = np.flatnonzero(~store.done).astype(np.int32)
    seconds, width = 0.0, 0
    batches: list[tuple[np.ndarray, np.ndarray]] = []
    if pending.size:
        compiled, args, sizing, seconds = _compiled_chunk(plan, sizing, options)
        width, batches = _batches(plan.layout, pending, sizing.chunk, sizing.mesh.devices.size)
    bar = _progress_bar(plan.name, store.loaded, len(batches)) if show else None
    try:
        if batches:
            _run_chunks(compiled, args, sizing.mesh, width, batches, store, bar, on_chunk)
    finally:
        if bar is not None:
            bar.close()
    computed = sum(batch.size for _, batch in batches)
    return _Ran(sizing.chunk, len(batches), computed, seconds), sizing, store


def _result(plan, sizing, store, ran: _Ran, start: float, num_steps) -> SweepResult:
    layout = plan.layout
    treedef = jax.tree.structure(sizing.out_struct)
    outputs = jax.tree.unflatten(
        treedef, [leaf.reshape(layout.sizes + leaf.shape[1:]) for leaf in store.leaves]
    )
    coords: dict[str, Any] = {"seed": np.arange(layout.sizes[0])}
    for a in plan.axes:
        coords[a.name] = jax.tree.map(np.asarray, a.values)
    if layout.has_tasks:
        coords["task"] = np.arange(layout.sizes[-1])
    stats = SweepStats(
        num_combinations=layout.total,
        chunk_size=ran.chunk,
        num_chunks=store.loaded + ran.chunks_computed,
        chunks_computed=ran.chunks_computed,
        chunks_loaded=store.loaded,
        combinations_computed=ran.combinations_computed,
        num_devices=sizing.mesh.devices.size,
        memory_budget=sizing.budget,
        estimated_bytes_per_combination=int(sizing.per_combination),
        compile_seconds=ran.compile_seconds,
        wall_seconds=time.perf_counter() - start,
        num_steps=None if num_steps is None else int(num_steps),
        folder=None if store.folder is None else str(store.folder),
    )
    return SweepResult(outputs, layout.axis_names, coords, stats)


# --------------------------------------------------------------------------------------------
# the entry points


def sweep(
    fn: Callable[[Any, Any, jax.Array], Any],
    grid: Any = None,
    *,
    num_seeds: int | None = None,
    key: Any = None,
    seeds: Any = None,
    tasks: Any = None,
    data: Any = None,
    options: EngineOptions | None = None,
    chunk_size: int | None = None,
    out_dir: str | os.PathLike | None = None,
    name: str | None = None,
    config: Any = None,
    num_steps: int | None = None,
    on_chunk: Callable[[dict[str, Any]], None] | None = None,
    compiler_options: Mapping[str, Any] | None = None,
) -> SweepResult:
    """Evaluates `fn(params, data, key)` on every (seed, hyperparameter, task) combination.

    `out[s, h_1, ..., h_k, t] = fn(params[h_1, ..., h_k], tasks[t] or data, keys[s])` with
    `keys = jax.random.split(key, num_seeds)` (or :func:`seed_keys` of `seeds`), vmapped in
    chunks, each chunk one call of a function compiled once (see :mod:`ojax.sweep`).

    Args:
      fn: `(params, data, key) -> pytree of arrays` for ONE combination (static: it keys the
        compile cache; define it once). `params`: a dict of the product axes' values, the
        stacked pytree's slice, or `None` without a grid.
      grid: `None` (seeds only), a `dict` `name -> values with a leading axis` (a
        Cartesian product), or a pytree with a leading axis (one axis `"grid"`; name it with
        :func:`stacked`). Every value must be finite and fit the dtype it runs in.
      num_seeds: number of seeds, `>= 1`.
      key: a PRNG key (or an int seed) split into `num_seeds` keys.
      seeds: explicit integer seeds instead (keys :func:`seed_keys`, `jax.random.key(s)`).
      tasks: optional pytree with a leading task axis; `fn` gets one task's slice.
      data: optional data shared by every combination (not with `tasks`).
      options: how the sweep computes, an :class:`~ojax.sweep.EngineOptions` (default
        `EngineOptions()`; an experiment's config is one): `devices`, shard over the first N
        devices (default all); `memory_budget`, bytes one device may use for a chunk (default:
        half a GPU's memory, or a quarter of the host memory split among the CPU devices):
        the chunk holds as many combinations as their outputs allow, fewer when the compiled
        chunk program's memory analysis finds it too large (then compiled once more);
        `resume`, load finished chunks of the same configuration (default; `False` recomputes
        and replaces them); `quiet`, no progress bar over chunks on stderr and no one-line
        summary at the end.
      chunk_size: combinations per chunk (overrides the budget; a multiple of the devices).
      out_dir: folder for the chunk files (`out_dir/NAME-HASH/`) and resume; `None` keeps
        everything in memory.
      name: a label for the progress bar and the chunk folder (default `fn.__name__`).
      config: anything else that decides the numbers and is not in `fn`'s code, closures or
        arguments (JSON-able or plain values); it enters the configuration hash.
      num_steps: steps per combination, for the summary's steps per second.
      on_chunk: `(info) -> None` after each computed chunk is stored, with `info =
        {"chunk", "computed", "total", "indices", "path"}`.
      compiler_options: XLA options for the chunk program (e.g.
        `{"xla_backend_optimization_level": 1}`), those XLA_FLAGS does not set
        (:func:`ojax.programs.compiler_options`); they change no number (not in the hash).

    Returns:
      A :class:`SweepResult` (numpy arrays with named axes, summaries, stats).

    Raises:
      InputError: an empty grid or axis, a grid value that is not finite or does not fit its
        dtype, leading sizes that differ, `num_seeds < 1`, `options` not an `EngineOptions`
        (or a bad field of it), a budget too small for one combination, `out_dir` holding
        another configuration (nothing is written then).
    """
    start = time.perf_counter()
    engine = checked_options(options)
    num_seeds = _num_seeds(num_seeds, key, seeds)
    _check_options(fn, num_seeds, tasks, data, chunk_size, num_steps)
    plan = _plan(fn, grid, name, num_seeds, key, tasks, data, seeds)
    sizing = _size(plan, engine.devices, engine.memory_budget, chunk_size)
    store = _open(plan, sizing, out_dir, engine.resume, config)
    xla = tuple(sorted((compiler_options or {}).items()))
    ran, sizing, store = _compute(plan, sizing, store, xla, not engine.quiet, on_chunk)
    result = _result(plan, sizing, store, ran, start, num_steps)
    if not engine.quiet and jax.process_index() == 0:
        sys.stderr.write(f"{result.stats.summary_line(plan.name)}\n")  # whole (in_threads)
    return result


def sweep_experiment(
    config: ExperimentRun,
    fn: Callable[[Any, Any, jax.Array], Any],
    grid: Any = None,
    *,
    key: Any = None,
    seeds: Any = None,
    tasks: Any = None,
    data: Any = None,
    name: str | None = None,
    num_steps: int | None = None,
    chunk_size: int | None = None,
    settings: Any = None,
    num_seeds: int | None = None,
    compiler_options: Mapping[str, Any] | None = None,
) -> SweepResult:
    """Runs one cell of an experiment through :func:`sweep`, with seeds as the sweep axis.

    Honours the :class:`~ojax.experiments.ExperimentConfig`: `config.seeds` seeds, its engine
    options (`config.engine_options()`, passed whole to :func:`sweep`); the chunk files go
    under `config.out/.sweep/`.

    Args:
      config: the experiment's configuration (an :class:`~ojax.experiments.ExperimentConfig`,
        or anything with its fields :class:`~ojax.sweep.options.ExperimentRun`).
      fn: `(params, data, key) -> pytree` for one seed (and hyperparameter / task).
      grid: as in :func:`sweep`.
      tasks: as in :func:`sweep`.
      data: as in :func:`sweep`.
      num_steps: as in :func:`sweep`.
      chunk_size: as in :func:`sweep`.
      key: the PRNG key (or an int seed) split into the seeds' keys.
      seeds: instead of `key`: explicit integer seeds, seed `s`'s key
        `jax.random.key(seeds[s])` (e.g. `range(config.seeds)`: a seed's numbers then do
        not depend on how many seeds run).
      name: a label (default: `fn.__name__`); it names the chunk folder.
      settings: anything else that decides the numbers (enters the configuration hash with
        the experiment's name, `quick` and `x64`).
      num_seeds: overrides `config.seeds` (without `seeds`).
      compiler_options: as in :func:`sweep`.

    Returns:
      The :class:`SweepResult`; its `outputs` have the seed axis first.

    Raises:
      InputError: `config` is not an experiment's config; as in :func:`sweep`.
    """
    if not isinstance(config, ExperimentRun):
        raise InputError(
            "config must be an experiment's config (ojax.experiments.ExperimentConfig), "
            f"got {type(config).__name__} {config!r}"
        )
    return sweep(
        fn,
        grid,
        num_seeds=None if seeds is not None else int(num_seeds or config.seeds),
        key=key,
        seeds=seeds,
        tasks=tasks,
        data=data,
        options=config.engine_options(),
        chunk_size=chunk_size,
        out_dir=Path(config.out) / ".sweep",
        name=name,
        config={
            "experiment": config.name,
            "quick": bool(config.quick),
            "x64": bool(config.x64),
            "settings": describe(settings),
        },
        num_steps=num_steps,
        compiler_options=compiler_options,
    )


__all__ = ["seed_keys", "sweep", "sweep_experiment"]
