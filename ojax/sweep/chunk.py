"""The jitted chunk of a sweep: its layout, the function it runs, its compilation (kept in a
small in-process cache and, for one device, in the program store :mod:`ojax.programs`).

A chunk is a vector of combination numbers, padded to the chunk size, from which one jitted
function gathers its params, data and keys on the device, its batch axis sharded over the mesh.
A chunk of whole seeds (:func:`by_seed`) is a vector of seed numbers instead: the function is
vmapped over the seeds' keys and, inside, over one seed's combinations with its key unbatched,
so what depends on the key alone (the seed's data drawn from it) is computed once per seed, not
once per combination.
"""

from __future__ import annotations

import collections
import functools
import math
import re
import threading
import time
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec

from ojax import programs
from ojax.programs import log as compile_log
from ojax.programs.identity import shape_signature
from ojax.sweep.threads import LAPACK
from ojax.validation import InputError

BATCH_AXIS = "batch"
"""Name of the mesh axis the combinations are sharded over."""


class Layout(NamedTuple):
    """The combinations: C order over `(seed, *hyperparameters, [task])`."""

    sizes: tuple[int, ...]  # (num_seeds, *hyperparameter sizes, [num_tasks])
    kind: str  # "none", "product", "stacked"
    names: tuple[str, ...]  # hyperparameter axis names
    has_tasks: bool

    @property
    def total(self) -> int:
        return math.prod(self.sizes)

    @property
    def axis_names(self) -> tuple[str, ...]:
        return ("seed", *self.names, *(("task",) if self.has_tasks else ()))

    @property
    def per_seed(self) -> int:
        """Combinations of one seed (hyperparameter values x tasks)."""
        return math.prod(self.sizes[1:])


def by_seed(layout: Layout, chunk: int, num_devices: int) -> bool:
    """Whether a chunk of `chunk` combinations is run as whole seeds: a seed has several
    combinations and the chunk holds a multiple of them on each device."""
    return layout.per_seed > 1 and chunk % (layout.per_seed * num_devices) == 0


def chunk_fn(fn, layout: Layout, sharding, seeds: bool, index, hyper, tasks, data, keys):
    """`fn` vmapped over the chunk's combinations `index` (with `seeds`, every combination of
    the seeds `index`), gathered on the device."""

    def constrain(tree):
        return jax.tree.map(lambda a: jax.lax.with_sharding_constraint(a, sharding), tree)

    if seeds:  # one seed's combinations, its key unbatched inside: key-only work done once
        coords = jnp.unravel_index(jnp.arange(layout.per_seed), layout.sizes[1:])
        params, data = _gathered(layout, coords, hyper, tasks, data)
        one_seed = jax.vmap(fn, in_axes=(0, 0 if layout.has_tasks else None, None))
        out = jax.vmap(one_seed, in_axes=(None, None, 0))(params, data, constrain(keys[index]))
        return constrain(jax.tree.map(lambda a: a.reshape(-1, *a.shape[2:]), out))
    seed, *rest = jnp.unravel_index(index, layout.sizes)
    params, data = _gathered(layout, tuple(rest), hyper, tasks, data)
    params, key = constrain(params), constrain(keys[seed])
    if layout.has_tasks:
        data = constrain(data)
    out = jax.vmap(fn, in_axes=(0, 0 if layout.has_tasks else None, 0))(params, data, key)
    return constrain(out)


def _gathered(layout: Layout, coords, hyper, tasks, data):
    """`(params, data)` at `coords`, the coordinates over `layout.sizes[1:]` (hyperparameters,
    task)."""
    params: Any = None
    if layout.kind == "product":
        params = {
            name: jax.tree.map(lambda a, c=c: a[c], hyper[name])
            for name, c in zip(layout.names, coords)
        }
    elif layout.kind == "stacked":
        params = jax.tree.map(lambda a: a[coords[0]], hyper)
    if layout.has_tasks:
        data = jax.tree.map(lambda a: a[coords[-1]], tasks)
    return params, data


COMPILED: collections.OrderedDict = collections.OrderedDict()
"""The last :data:`COMPILED_MAX` compiled chunk programs of this process, by configuration."""
COMPILED_MAX = 8
_COMPILED_LOCK = threading.Lock()


def memory_used(executable: Any) -> int:
    """The bytes a compiled program uses per device (0 where the backend does not say)."""
    try:
        analysis = executable.memory_analysis()
    except Exception:  # pragma: no cover - backends without a memory analysis
        return 0
    if analysis is None:  # pragma: no cover
        return 0
    return int(
        analysis.temp_size_in_bytes
        + analysis.argument_size_in_bytes
        + analysis.output_size_in_bytes
    )


def compile_chunk(fn, layout, mesh, chunk, hyper, tasks, data, keys, options=(), label="sweep"):
    """`((executable, bytes it uses per device), compile seconds)`; 0 seconds when cached.

    `options` are XLA compiler options as `(name, value)` pairs; `label` names the
    program in :mod:`ojax.programs.log`."""
    batch = NamedSharding(mesh, PartitionSpec(BATCH_AXIS))
    signature = shape_signature((hyper, tasks, data, keys))
    key = (fn, layout, batch, chunk, signature, jax.config.jax_enable_x64, options)
    with _COMPILED_LOCK:  # sweeps on threads (ojax.sweep.in_threads) share the cache
        try:
            hit = COMPILED.get(key)
        except TypeError:  # an unhashable fn: no cache
            hit, key = None, None
        if hit is not None:
            COMPILED.move_to_end(key)
            return hit, 0.0
    start = time.perf_counter()
    seeds = by_seed(layout, chunk, mesh.devices.size)
    width = chunk // layout.per_seed if seeds else chunk
    index = jax.ShapeDtypeStruct((width,), jnp.int32, sharding=batch)
    jitted = jax.jit(functools.partial(chunk_fn, fn, layout, batch, seeds))
    args = (index, hyper, tasks, data, keys)
    with compile_log.program(label):
        name = None
        if mesh.devices.size == 1:  # the program store holds single-device programs
            parts = [list(layout), chunk, repr(signature), [list(o) for o in options]]
            name = programs.entry_name("chunk", fn, parts)
        lowered = lower_chunk(jitted, name, args)
        lapack = _lapack_on_cpu(lowered, mesh)
        executable = lowered.compile(compiler_options=programs.compiler_options(dict(options)))
    compiled = (_one_at_a_time(executable) if lapack else executable, memory_used(executable))
    seconds = time.perf_counter() - start
    if key is not None:
        with _COMPILED_LOCK:
            COMPILED[key] = compiled
            while len(COMPILED) > COMPILED_MAX:
                COMPILED.popitem(last=False)
    return compiled, seconds


def _lapack_on_cpu(lowered: jax.stages.Lowered, mesh: Any) -> bool:
    """Whether the program calls LAPACK (`jnp.linalg` on the CPU: the Online Newton Step's
    `eigh`, a `solve`, an `lstsq`) on CPU devices of this process; such a program runs
    holding :data:`ojax.sweep.threads.LAPACK` (two at once deadlock, see there).

    Refuses, before it runs, such a program sharded over several CPU devices of this process:
    the devices share the intra-op thread pool and wait for each other for ever (seen with
    jaxlib 0.10.2 on 2 cores: `sweep` of `online_newton` at d = 65 over 2 forced host devices
    never returned)."""
    mine = jax.process_index()
    cpus = [d for d in mesh.devices.flat if d.platform == "cpu" and d.process_index == mine]
    if not cpus:
        return False
    kernels = sorted(set(re.findall(r"lapack_\w+", lowered.as_text())))
    if kernels and len(cpus) > 1:
        raise InputError(
            f"options.devices: the sweep's function calls LAPACK ({', '.join(kernels)}: "
            f"jnp.linalg on the CPU), and {len(cpus)} CPU devices of one process running it "
            f"at once deadlock in jax {jax.__version__} (each kernel waits for the thread "
            "pool the other holds); use options.devices=1, and for more cores one process "
            "per core with jax.distributed (docs/distributed.md)"
        )
    return bool(kernels)


def _one_at_a_time(executable: Any) -> Callable[..., Any]:
    """`executable`, each call holding :data:`ojax.sweep.threads.LAPACK` until its outputs
    are computed."""

    def run(*args: Any) -> Any:
        with LAPACK:
            return jax.block_until_ready(executable(*args))

    return run


def lower_chunk(jitted, name: str | None, args: tuple) -> jax.stages.Lowered:
    """The lowered chunk program: from :mod:`ojax.programs` when it holds the program (no
    trace), else traced (and exported there for the next process when `name` is given)."""
    stored = None if name is None else programs.exported_program(name, jitted, args)
    if stored is None:  # no store, or something export does not take (e.g. a host callback)
        return jitted.lower(*args)
    try:  # cold and warm processes lower the same module: the compilation cache serves it
        return jax.jit(stored.call).lower(*args)
    except Exception:  # a stored program this JAX cannot call: trace as usual
        return jitted.lower(*args)


__all__ = [
    "BATCH_AXIS",
    "COMPILED",
    "COMPILED_MAX",
    "Layout",
    "by_seed",
    "chunk_fn",
    "compile_chunk",
    "lower_chunk",
    "memory_used",
]
