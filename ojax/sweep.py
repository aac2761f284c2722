"""Sweeps at scale: seeds x hyperparameters x tasks, chunked, sharded, resumable, with progress.

:func:`sweep` evaluates a function ``fn(params, data, key) -> pytree of arrays`` (a run of a
learner, a multi-task run, one cell of an experiment) on every combination of

* a seed (``num_seeds`` keys split from ``key``; the same key for every hyperparameter value and
  task, so hyperparameters are compared on common random numbers),
* a hyperparameter value: a ``dict`` of named axes expanded as their Cartesian product, or a
  pytree with a leading axis (a ``XxxParams`` of arrays, ``entry.params_grid()``) taken as one
  axis named ``"grid"`` (see :func:`stacked` to name it),
* a task (``tasks``: a pytree with a leading task axis; ``fn`` gets one task's slice), or else
  the same shared ``data`` for every combination,

with ``jax.vmap``, in chunks of combinations sized from a memory budget. The combinations are
numbered in C order over the axes ``(seed, *hyperparameters, task)``; a chunk is a vector of
combination numbers, padded to the chunk size, from which one jitted function gathers its
params, data and keys on the device. The function compiles once per static configuration
(``fn``, shapes, dtypes, chunk size, devices), whatever the number of chunks, and a second sweep
with other values of the same shapes does not recompile.

Devices and hosts: the chunk's batch axis is sharded over a :class:`jax.sharding.Mesh` of the
first ``devices`` devices (``NamedSharding`` with ``PartitionSpec("batch")``); the grid, tasks
and keys are replicated. Under ``jax.distributed.initialize`` the mesh spans every host's
devices, each process runs the same sweep, process 0 writes the chunk files (see
``docs/sweeps.md``).

Resume: with ``out_dir``, every finished chunk is written atomically (a temporary file in the
same folder, then ``os.replace``) into ``out_dir/NAME-HASH/`` where ``HASH`` digests everything
that decides the numbers: ``fn`` (module, qualified name, code, closure values, defaults), the
user's ``config``, the grid, tasks, data, number of seeds, key data, output shapes, dtypes and
the versions of jax and ojax, and digests of ojax's source files and of the file defining
``fn`` (an edited library or script never reuses old chunks). The chunk size and the devices are
not part of it (they change no number), so a resumed run may use another budget. A re-run loads
the finished chunks, computes only the missing combinations and returns exactly the
uninterrupted run's arrays; another configuration gets another folder, and a folder holding
another configuration is refused.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import hashlib
import json
import math
import os
import re
import sys
import tempfile
import time
import types
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from ojax.validation import InputError, check_finite

BATCH_AXIS = "batch"
"""Name of the mesh axis the combinations are sharded over."""

_MANIFEST = "sweep.json"
_CHUNK_RE = re.compile(r"^chunk-(\d{10})\.npz$")


# --------------------------------------------------------------------------------------------
# grids


class Stacked(NamedTuple):
    """A pytree whose leaves share a leading axis, swept as ONE named axis (zipped, no product).

    Attributes:
      values: the pytree (e.g. an ``OGDParams`` whose leaves are ``(k,)`` arrays).
      name: the axis name in the results.
    """

    values: Any
    name: str = "grid"


def stacked(values: Any, name: str = "grid") -> Stacked:
    """Marks ``values`` (a pytree with a leading axis) as one axis named ``name``.

    A plain ``dict`` grid is a Cartesian product of its entries; wrap a dict of equally long
    arrays in ``stacked`` to zip them instead.
    """
    return Stacked(values, name)


class _Axis(NamedTuple):
    name: str
    values: Any  # pytree of arrays with a leading axis of `size`
    size: int


def _leading(name: str, tree: Any) -> int:
    """The common leading size of the leaves of ``tree`` (checked)."""
    leaves = jax.tree.leaves(tree)
    if not leaves:
        raise InputError(f"{name} is empty: it has no arrays")
    sizes = set()
    for leaf in leaves:
        if np.ndim(leaf) < 1:
            raise InputError(
                f"{name} must have a leading axis on every array, got a scalar {leaf!r}"
            )
        sizes.add(int(np.shape(leaf)[0]))
    if len(sizes) != 1:
        shapes = [tuple(np.shape(leaf)) for leaf in leaves]
        raise InputError(f"{name}: its arrays must share the leading size, got shapes {shapes}")
    (size,) = sizes
    if size < 1:
        raise InputError(f"{name} is empty: its leading axis has size 0")
    return size


def _is_value_list(x: Any) -> bool:
    """A list (or plain tuple) of numbers: one axis of values, not a pytree of scalars."""
    return (
        isinstance(x, (list, tuple))
        and not hasattr(x, "_fields")
        and all(
            isinstance(e, (int, float, bool, np.number))
            or (isinstance(e, (np.ndarray, jax.Array)) and e.ndim == 0)
            for e in x
        )
    )


def _as_arrays(name: str, tree: Any) -> Any:
    def convert(leaf):
        if _is_value_list(leaf):
            leaf = np.asarray(leaf)
            if leaf.dtype == np.float64 and not jax.config.jax_enable_x64:
                leaf = leaf.astype(np.float32)
        if isinstance(leaf, jax.Array):
            arr = leaf
        else:
            raw = np.asarray(leaf)
            if raw.dtype == object or not (
                np.issubdtype(raw.dtype, np.number) or raw.dtype == bool
            ):
                raise InputError(f"{name} must hold numeric arrays, got {leaf!r}")
            arr = jnp.asarray(raw)
        check_finite(name, arr)
        return arr

    return jax.tree.map(convert, tree, is_leaf=_is_value_list)


def _grid_axes(grid: Any) -> tuple[str, list[_Axis]]:
    """``(kind, axes)`` with kind ``"none"``, ``"product"`` or ``"stacked"``."""
    if grid is None:
        return "none", []
    if isinstance(grid, Stacked):
        name = grid.name
        values = _as_arrays(f"grid {name!r}", grid.values)
        return "stacked", [_Axis(name, values, _leading(f"grid {name!r}", values))]
    if isinstance(grid, Mapping):
        if not grid:
            raise InputError(
                "grid is empty ({}); give at least one axis, e.g. {'learning_rate': [0.1, 1.0]}, "
                "or grid=None to sweep over seeds only"
            )
        axes = []
        for name, value in grid.items():
            if not isinstance(name, str) or not name:
                raise InputError(f"grid axis names must be non-empty strings, got {name!r}")
            if name in ("seed", "task"):
                raise InputError(f"grid axis name {name!r} is reserved (seed and task axes)")
            arrays = _as_arrays(f"grid[{name!r}]", value)
            axes.append(_Axis(name, arrays, _leading(f"grid[{name!r}]", arrays)))
        return "product", axes
    values = _as_arrays("grid", grid)
    return "stacked", [_Axis("grid", values, _leading("grid", values))]


# --------------------------------------------------------------------------------------------
# fingerprint of the configuration


def _array_digest(value: Any) -> list:
    if isinstance(value, jax.Array) and jnp.issubdtype(value.dtype, jax.dtypes.prng_key):
        value = jax.random.key_data(value)
    arr = np.ascontiguousarray(np.asarray(value))
    return ["array", str(arr.dtype), list(arr.shape), hashlib.sha256(arr.tobytes()).hexdigest()]


def _describe(obj: Any, depth: int = 0) -> Any:
    """A JSON-able description of ``obj`` that changes when its behaviour may change."""
    if depth > 8:
        return ["deep", type(obj).__qualname__]
    nxt = depth + 1
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, (np.ndarray, np.generic, jax.Array)):
        return _array_digest(obj)
    if isinstance(obj, Path):
        return ["path", str(obj)]
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return [type(obj).__qualname__, {f: _describe(getattr(obj, f), nxt) for f in obj._fields}]
    if isinstance(obj, (list, tuple)):
        return [type(obj).__name__, [_describe(v, nxt) for v in obj]]
    if isinstance(obj, Mapping):
        return ["dict", sorted([str(k), _describe(v, nxt)] for k, v in obj.items())]
    if isinstance(obj, functools.partial):
        return [
            "partial",
            _describe(obj.func, nxt),
            _describe(obj.args, nxt),
            _describe(obj.keywords, nxt),
        ]
    if isinstance(obj, types.CodeType):
        consts = [_describe(c, nxt) for c in obj.co_consts]
        return [
            "code",
            obj.co_name,
            hashlib.sha256(obj.co_code).hexdigest(),
            consts,
            list(obj.co_names),
        ]
    if isinstance(obj, types.FunctionType):
        cells = []
        for cell in obj.__closure__ or ():
            try:
                cells.append(_describe(cell.cell_contents, nxt))
            except ValueError:  # an empty cell
                cells.append(None)
        return [
            "function",
            obj.__module__,
            obj.__qualname__,
            _describe(obj.__code__, nxt),
            _describe(obj.__defaults__, nxt),
            _describe(obj.__kwdefaults__, nxt),
            cells,
        ]
    if isinstance(obj, types.MethodType):
        return ["method", _describe(obj.__func__, nxt), _describe(obj.__self__, nxt)]
    wrapped = getattr(obj, "__wrapped__", None)
    if wrapped is not None and wrapped is not obj:  # jax.jit / functools.wraps
        return ["wrapped", type(obj).__qualname__, _describe(wrapped, nxt)]
    if isinstance(obj, (type, types.BuiltinFunctionType, types.ModuleType)):
        return ["named", getattr(obj, "__module__", ""), getattr(obj, "__qualname__", repr(obj))]
    if dataclasses.is_dataclass(obj):
        return [
            type(obj).__qualname__,
            {f.name: _describe(getattr(obj, f.name), nxt) for f in dataclasses.fields(obj)},
        ]
    text = repr(obj)
    if " at 0x" not in text:
        return ["repr", type(obj).__qualname__, text]
    if hasattr(obj, "__dict__"):
        return [type(obj).__qualname__, _describe(vars(obj), nxt)]
    return ["object", type(obj).__module__, type(obj).__qualname__]


def _digest(description: Any) -> str:
    text = json.dumps(description, sort_keys=True, separators=(",", ":"), default=repr)
    return hashlib.sha256(text.encode()).hexdigest()


# --------------------------------------------------------------------------------------------
# memory estimate


def _nbytes(aval: Any) -> int:
    shape = getattr(aval, "shape", None)
    dtype = getattr(aval, "dtype", None)
    if shape is None or dtype is None:
        return 0
    return int(math.prod(shape)) * int(getattr(dtype, "itemsize", 8))


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


def _peak_bytes(jaxpr: Any) -> int:
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
    live = sum(_nbytes(v.aval) for v in list(jaxpr.invars) + list(jaxpr.constvars))
    peak = live
    for i, eqn in enumerate(jaxpr.eqns):
        inner = 0
        for sub in _sub_jaxprs(eqn):
            own = sum(_nbytes(v.aval) for v in sub.invars)
            inner = max(inner, _peak_bytes(sub) - own)
        out = sum(_nbytes(v.aval) for v in eqn.outvars)
        peak = max(peak, live + out + inner)
        live += out
        for v in {v for v in eqn.invars if _is_var(v)}:
            if last.get(v) == i:
                live -= _nbytes(v.aval)
        for v in eqn.outvars:
            if _is_var(v) and v not in last:  # produced and never used
                live -= _nbytes(v.aval)
    return peak


_ESTIMATES: dict = {}


def _estimate(fn, params, data, key) -> tuple[int, Any, float]:
    """``(bytes one combination holds at its peak, its output shapes, seconds spent)``,
    traced once per ``fn`` and input shapes (0 seconds when cached)."""
    cache_key = (fn, _signature((params, data, key)), jax.config.jax_enable_x64)
    try:
        hit = _ESTIMATES.get(cache_key)
    except TypeError:  # an unhashable fn
        hit, cache_key = None, None
    if hit is not None:
        return (*hit, 0.0)
    start = time.perf_counter()
    try:
        closed, out_struct = jax.make_jaxpr(fn, return_shape=True)(params, data, key)
    except InputError:
        raise
    except Exception as exc:
        raise InputError(
            f"fn could not be traced on one combination (params {params}, data {data}, key "
            f"{key}): {type(exc).__name__}: {exc}"
        ) from exc
    value = (max(1, _peak_bytes(closed.jaxpr) + _tree_bytes(out_struct)), out_struct)
    if cache_key is not None:
        if len(_ESTIMATES) > 64:
            _ESTIMATES.clear()
        _ESTIMATES[cache_key] = value
    return (*value, time.perf_counter() - start)


def _tree_bytes(tree: Any) -> int:
    return sum(_nbytes(leaf) for leaf in jax.tree.leaves(tree))


def _default_budget(devices: Sequence[Any]) -> int:
    """Half a GPU's memory; on a CPU a quarter of the host memory shared by its devices."""
    try:
        stats = devices[0].memory_stats() or {}
    except Exception:  # pragma: no cover - backends without memory stats
        stats = {}
    if stats.get("bytes_limit"):
        return int(stats["bytes_limit"] * 0.5)
    try:
        host = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # pragma: no cover
        host = 8 * 2**30
    local = max(1, sum(1 for d in devices if d.process_index == jax.process_index()))
    return int(host / 4 / local)


def _fmt_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1024
    return f"{n} B"  # pragma: no cover


# --------------------------------------------------------------------------------------------
# the jitted chunk


class _Layout(NamedTuple):
    sizes: tuple[int, ...]  # (num_seeds, *hyperparameter sizes, [num_tasks])
    kind: str  # "none", "product", "stacked"
    names: tuple[str, ...]  # hyperparameter axis names
    has_tasks: bool


def _chunk_fn(fn, layout: _Layout, sharding, index, hyper, tasks, data, keys):
    coords = jnp.unravel_index(index, layout.sizes)
    key = keys[coords[0]]
    hyper_coords = coords[1 : 1 + len(layout.names)]
    if layout.kind == "none":
        params = None
    elif layout.kind == "product":
        params = {
            name: jax.tree.map(lambda a, c=c: a[c], hyper[name])
            for name, c in zip(layout.names, hyper_coords)
        }
    else:
        params = jax.tree.map(lambda a: a[hyper_coords[0]], hyper)
    if layout.has_tasks:
        data = jax.tree.map(lambda a: a[coords[-1]], tasks)

    def constrain(tree):
        return jax.tree.map(lambda a: jax.lax.with_sharding_constraint(a, sharding), tree)

    params, key = constrain(params), constrain(key)
    if layout.has_tasks:
        data = constrain(data)
    out = jax.vmap(fn, in_axes=(0, 0 if layout.has_tasks else None, 0))(params, data, key)
    return constrain(out)


_COMPILED: collections.OrderedDict = collections.OrderedDict()
_COMPILED_MAX = 8


def _signature(tree: Any) -> tuple:
    leaves, treedef = jax.tree.flatten(tree)
    return (str(treedef), tuple((tuple(a.shape), str(a.dtype)) for a in leaves))


def _compile(fn, layout, mesh, chunk, hyper, tasks, data, keys, options=()):
    """``((executable, bytes it uses per device), compile seconds)``; 0 seconds when cached.

    ``options`` are XLA compiler options as ``(name, value)`` pairs."""
    batch = NamedSharding(mesh, PartitionSpec(BATCH_AXIS))
    key = (
        fn,
        layout,
        batch,
        chunk,
        _signature((hyper, tasks, data, keys)),
        jax.config.jax_enable_x64,
        options,
    )
    try:
        hit = _COMPILED.get(key)
    except TypeError:  # an unhashable fn: no cache
        hit, key = None, None
    if hit is not None:
        _COMPILED.move_to_end(key)
        return hit, 0.0
    start = time.perf_counter()
    index = jax.ShapeDtypeStruct((chunk,), jnp.int32, sharding=batch)
    jitted = jax.jit(functools.partial(_chunk_fn, fn, layout, batch))
    executable = jitted.lower(index, hyper, tasks, data, keys).compile(
        compiler_options=dict(options) or None
    )
    try:
        analysis = executable.memory_analysis()
    except Exception:  # pragma: no cover - backends without a memory analysis
        analysis = None
    used = (
        0
        if analysis is None
        else int(
            analysis.temp_size_in_bytes
            + analysis.argument_size_in_bytes
            + analysis.output_size_in_bytes
        )
    )
    compiled = (executable, used)
    seconds = time.perf_counter() - start
    if key is not None:
        _COMPILED[key] = compiled
        while len(_COMPILED) > _COMPILED_MAX:
            _COMPILED.popitem(last=False)
    return compiled, seconds


def _put(value: np.ndarray, sharding: NamedSharding) -> jax.Array:
    if sharding.is_fully_addressable:
        return jax.device_put(value, sharding)
    return jax.make_array_from_callback(value.shape, sharding, lambda i: value[i])


def _fetch(tree: Any) -> list[np.ndarray]:
    leaves = jax.tree.leaves(tree)
    if all(a.is_fully_addressable for a in leaves):
        return [np.asarray(a) for a in leaves]
    from jax.experimental import multihost_utils

    return [np.asarray(multihost_utils.process_allgather(a, tiled=True)) for a in leaves]


# --------------------------------------------------------------------------------------------
# results


@dataclasses.dataclass
class SweepStats:
    """What a sweep did. ``steps`` counts ``num_steps`` per combination when given."""

    num_combinations: int
    chunk_size: int
    num_chunks: int
    chunks_computed: int
    chunks_loaded: int
    combinations_computed: int
    num_devices: int
    memory_budget: int
    estimated_bytes_per_combination: int
    compile_seconds: float
    wall_seconds: float
    num_steps: int | None = None
    folder: str | None = None

    @property
    def steps(self) -> int | None:
        return None if self.num_steps is None else self.num_combinations * self.num_steps

    @property
    def steps_per_second(self) -> float | None:
        """Steps computed in this run per second of running (compile time excluded)."""
        if self.num_steps is None:
            return None
        seconds = max(self.wall_seconds - self.compile_seconds, 1e-9)
        return self.combinations_computed * self.num_steps / seconds

    def summary_line(self, name: str = "sweep") -> str:
        """One line: combinations, steps, steps per second, wall time, compile time."""
        parts = [f"{name}: {self.num_combinations} combinations"]
        if self.chunks_loaded:
            parts.append(
                f"({self.combinations_computed} computed, "
                f"{self.num_combinations - self.combinations_computed} resumed)"
            )
        parts.append(
            f"in {self.num_chunks} chunk(s) of {self.chunk_size} on {self.num_devices} device(s)"
        )
        if self.num_steps is not None:
            parts.append(f"| {self.steps:.3g} steps, {self.steps_per_second:.3g} steps/s")
        parts.append(f"| wall {self.wall_seconds:.2f} s, compile {self.compile_seconds:.2f} s")
        return " ".join(parts)


@dataclasses.dataclass
class SweepResult:
    """The outputs of every combination, with named axes.

    Attributes:
      outputs: ``fn``'s output pytree; each leaf has the axes :attr:`axes` first (``seed``,
        each hyperparameter axis, ``task`` when tasks were given), then ``fn``'s own shape.
      axes: the axis names.
      coords: axis name -> its values (``seed``: ``0..num_seeds-1``; ``task``: ``0..T-1``; a
        hyperparameter axis: its values, a pytree with a leading axis).
      stats: a :class:`SweepStats`.
    """

    outputs: Any
    axes: tuple[str, ...]
    coords: dict[str, Any]
    stats: SweepStats

    def axis(self, name: str) -> int:
        """The position of the axis ``name``."""
        if name not in self.axes:
            raise InputError(f"axis must be one of {list(self.axes)}, got {name!r}")
        return self.axes.index(name)

    def _reduce(self, fn: Callable, axis: str) -> Any:
        where = self.axis(axis)
        return jax.tree.map(lambda a: fn(np.asarray(a), where), self.outputs)

    def mean(self, axis: str = "seed") -> Any:
        """Mean over ``axis`` (default: seeds) of every output."""
        return self._reduce(lambda a, i: a.mean(axis=i), axis)

    def std(self, axis: str = "seed") -> Any:
        """Standard deviation (ddof 0) over ``axis`` of every output."""
        return self._reduce(lambda a, i: a.std(axis=i), axis)

    def quantile(self, q: float | Sequence[float], axis: str = "seed") -> Any:
        """Quantile(s) ``q`` over ``axis``; a sequence of ``q`` adds a leading axis."""
        return self._reduce(lambda a, i: np.quantile(a, q, axis=i), axis)

    def summary(self, quantiles: Sequence[float] = (0.1, 0.5, 0.9)) -> dict[str, Any]:
        """Mean, std and quantiles over seeds: ``{"mean", "std", "quantiles", "q"}``."""
        return {
            "mean": self.mean(),
            "std": self.std(),
            "quantiles": self.quantile(list(quantiles)),
            "q": list(quantiles),
        }

    def best(self, metric: str | Callable[[Any], Any], *, minimize: bool = True) -> dict[str, Any]:
        """The hyperparameter combination with the best mean over seeds (and tasks).

        Args:
          metric: a key of a dict output, or ``outputs -> array`` with one value per
            combination (shape :attr:`axes` sizes), e.g. ``lambda o: o["loss"][..., -1]``.
          minimize: the smaller the better (default) or the larger.

        Returns:
          ``{"index": {axis: i}, "params": {axis: value}, "value": mean metric}``.
        """
        values = self.outputs[metric] if isinstance(metric, str) else metric(self.outputs)
        values = np.asarray(values, dtype=np.float64)
        sizes = tuple(
            len(self.coords["seed"]) if a == "seed" else _axis_len(self.coords[a])
            for a in self.axes
        )
        if values.shape != sizes:
            raise InputError(
                f"metric must give one value per combination, shape {sizes}, got shape "
                f"{values.shape}; select a final value, e.g. lambda o: o['loss'][..., -1]"
            )
        reduce_axes = tuple(i for i, a in enumerate(self.axes) if a in ("seed", "task"))
        score = values.mean(axis=reduce_axes)
        hyper = [a for a in self.axes if a not in ("seed", "task")]
        if not hyper:
            return {"index": {}, "params": {}, "value": float(score)}
        flat = np.nanargmin(score) if minimize else np.nanargmax(score)
        where = np.unravel_index(flat, score.shape)
        index = {a: int(i) for a, i in zip(hyper, where)}
        params = {
            a: jax.tree.map(lambda v, i=i: np.asarray(v)[i], self.coords[a])
            for a, i in index.items()
        }
        return {"index": index, "params": params, "value": float(score[where])}


def _axis_len(values: Any) -> int:
    return int(np.shape(jax.tree.leaves(values)[0])[0])


# --------------------------------------------------------------------------------------------
# the store


def _file_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def _atomic_write(path: Path, write: Callable[[Any], None], binary: bool) -> None:
    """Writes ``path`` all or nothing: a temporary file in the same folder, fsync, os.replace."""
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=path.suffix, dir=path.parent)
    try:
        os.fchmod(fd, _file_mode())
        with os.fdopen(fd, "wb" if binary else "w") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _atomic_savez(path: Path, arrays: Mapping[str, np.ndarray]) -> None:
    _atomic_write(path, lambda f: np.savez(f, **arrays), binary=True)


def _atomic_json(path: Path, value: Any) -> None:
    _atomic_write(
        path, lambda f: json.dump(value, f, indent=2, sort_keys=True, default=repr), binary=False
    )


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("._") or "sweep"


def _open_store(out_dir: Path, name: str, digest: str, manifest: dict, writer: bool) -> Path:
    """The chunk folder for this configuration (created by the writer)."""
    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise InputError(f"out_dir {str(out_dir)!r} exists and is not a folder")
    own = out_dir / _MANIFEST
    folder = out_dir if own.exists() else out_dir / f"{_safe(name)}-{digest[:16]}"
    path = folder / _MANIFEST
    if path.exists():
        try:
            held = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise InputError(f"{str(path)!r} is not a readable sweep manifest ({exc})") from exc
        if held.get("hash") != digest:
            raise InputError(
                f"out_dir {str(folder)!r} holds another sweep configuration (hash "
                f"{str(held.get('hash'))[:16]}, fn {held.get('fn')!r}) than this one (hash "
                f"{digest[:16]}); nothing was written. Point out_dir at the parent folder of "
                "sweeps, or at a new folder."
            )
    elif writer:
        folder.mkdir(parents=True, exist_ok=True)
        _atomic_json(path, manifest)
    return folder


def _chunk_files(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if _CHUNK_RE.match(p.name))


def _load_chunks(folder: Path, total: int, leaves: list[np.ndarray], done: np.ndarray) -> int:
    """Scatters every finished chunk of ``folder`` into ``leaves``; returns their count."""
    count = 0
    for path in _chunk_files(folder):
        try:
            with np.load(path, allow_pickle=False) as z:
                index = z["index"]
                values = [z[f"out{i}"] for i in range(len(leaves))]
        except Exception as exc:
            raise InputError(
                f"chunk file {str(path)!r} cannot be read ({exc}); move it away to recompute it"
            ) from exc
        ok = index.ndim == 1 and index.size and index.min() >= 0 and index.max() < total
        ok = ok and all(
            v.shape == (index.size,) + leaf.shape[1:] and v.dtype == leaf.dtype
            for v, leaf in zip(values, leaves)
        )
        if not ok:
            raise InputError(
                f"chunk file {str(path)!r} does not match this sweep's combinations or output "
                "shapes; move it away to recompute it"
            )
        for leaf, value in zip(leaves, values):
            leaf[index] = value
        done[index] = True
        count += 1
    return count


# --------------------------------------------------------------------------------------------
# the engine


def _mesh(devices: int | Sequence[Any] | None) -> Mesh:
    available = jax.devices()
    if devices is None:
        chosen = available
    elif isinstance(devices, (int, np.integer)) and not isinstance(devices, bool):
        if not 1 <= devices <= len(available):
            raise InputError(
                f"devices must be in [1, {len(available)}] (the available devices), got {devices}"
            )
        chosen = available[: int(devices)]
    else:
        chosen = list(devices)
        if not chosen:
            raise InputError("devices is an empty list")
    return Mesh(np.asarray(chosen), (BATCH_AXIS,))


def _keys(key: Any, num_seeds: int) -> jax.Array:
    if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
        key = jax.random.key(int(key))
    if not isinstance(key, jax.Array):
        key = jnp.asarray(key)
    typed = jnp.issubdtype(key.dtype, jax.dtypes.prng_key)
    if (typed and key.shape != ()) or (not typed and key.shape != (2,)):
        raise InputError(f"key must be one PRNG key (jax.random.key(0)), got shape {key.shape}")
    return jax.random.split(key, num_seeds)


def sweep(
    fn: Callable[[Any, Any, jax.Array], Any],
    grid: Any = None,
    *,
    num_seeds: int,
    key: Any,
    tasks: Any = None,
    data: Any = None,
    memory_budget: float | None = None,
    chunk_size: int | None = None,
    devices: int | Sequence[Any] | None = None,
    out_dir: str | os.PathLike | None = None,
    resume: bool = True,
    progress: bool = True,
    name: str | None = None,
    config: Any = None,
    num_steps: int | None = None,
    on_chunk: Callable[[dict[str, Any]], None] | None = None,
    compiler_options: Mapping[str, Any] | None = None,
) -> SweepResult:
    """Evaluates ``fn(params, data, key)`` on every (seed, hyperparameter, task) combination.

    The combinations are vmapped in chunks; each chunk is one call of a function compiled once::

        out[s, h_1, ..., h_k, t] = fn(params[h_1, ..., h_k], tasks[t] (or data), keys[s])
        keys = jax.random.split(key, num_seeds)

    Args:
      fn: ``(params, data, key) -> pytree of arrays`` for ONE combination (static: it keys the
        compile cache; define it once, not in a loop). ``params`` is a dict of the product
        axes' values, the stacked pytree's slice, or ``None`` without a grid.
      grid: ``None`` (seeds only), a ``dict`` ``name -> values with a leading axis`` expanded
        as a Cartesian product, or a pytree with a leading axis (one axis ``"grid"``; name it
        with :func:`stacked`).
      num_seeds: number of seeds, ``>= 1``.
      key: a PRNG key (or an int seed) split into ``num_seeds`` keys.
      tasks: optional pytree with a leading task axis; ``fn`` gets one task's slice.
      data: optional data shared by every combination (not with ``tasks``).
      memory_budget: bytes one device may use for a chunk (default: half a GPU's memory, or a
        quarter of the host memory split among the CPU devices). The chunk size is the budget
        over an estimate of one combination's peak bytes (a liveness walk over ``fn``'s jaxpr),
        refined once from the compiled program's memory analysis.
      chunk_size: combinations per chunk (overrides the budget; rounded up to a multiple of
        the number of devices).
      devices: shard over the first ``devices`` devices (default all), or a list of devices.
      out_dir: folder for the chunk files (``out_dir/NAME-HASH/``) and resume; ``None`` keeps
        everything in memory.
      resume: load finished chunks of the same configuration (default); ``False`` recomputes
        them (and replaces that configuration's files).
      progress: a progress bar over chunks on stderr and a one-line summary at the end.
      name: a label for the progress bar and the chunk folder (default ``fn.__name__``).
      config: anything else that decides the numbers and is not visible in ``fn``'s code,
        closures or arguments (JSON-able or plain values); it enters the configuration hash.
      num_steps: steps per combination, for the summary's steps per second.
      on_chunk: optional ``(info) -> None`` called after each computed chunk is stored, with
        ``info = {"chunk", "computed", "total", "indices", "path"}``.
      compiler_options: XLA compiler options for the chunk program (e.g.
        ``{"xla_backend_optimization_level": 1}``, which compiles long scans several times
        faster on CPU); they do not change the numbers, so they are not in the hash.

    Returns:
      A :class:`SweepResult` (numpy arrays with named axes, summaries, stats).

    Raises:
      InputError: an empty grid or axis, leading sizes that differ, ``num_seeds < 1``, a budget
        too small for one combination, ``out_dir`` holding another configuration (nothing is
        written then).

    Examples:
      >>> import jax, jax.numpy as jnp
      >>> from ojax import losses, oco, run_oco, sweep
      >>> def final_loss(params, data, key):
      ...     zs = jax.random.normal(key, (50, 3))
      ...     p = oco.OGDParams(params["learning_rate"], jnp.array(1.0))
      ...     _, trace = run_oco(oco.ogd(), p, jnp.zeros(3), zs, losses.linear_objective)
      ...     return trace.loss.mean()
      >>> res = sweep.sweep(final_loss, {"learning_rate": jnp.array([0.01, 0.1, 1.0])},
      ...                   num_seeds=4, key=jax.random.key(0), progress=False)
      >>> res.axes, res.outputs.shape
      (('seed', 'learning_rate'), (4, 3))
      >>> print(res.best(lambda o: o)["index"])
      {'learning_rate': 1}
    """
    start = time.perf_counter()
    options = tuple(sorted((compiler_options or {}).items()))
    if not callable(fn):
        raise InputError(f"fn must be callable, got {fn!r}")
    if isinstance(num_seeds, bool) or not isinstance(num_seeds, (int, np.integer)):
        raise InputError(f"num_seeds must be an integer >= 1, got {num_seeds!r}")
    if num_seeds < 1:
        raise InputError(f"num_seeds must be an integer >= 1, got {num_seeds}")
    if tasks is not None and data is not None:
        raise InputError("give either tasks (one slice per combination) or data (shared)")
    if chunk_size is not None and (
        isinstance(chunk_size, bool)
        or not isinstance(chunk_size, (int, np.integer))
        or chunk_size < 1
    ):
        raise InputError(f"chunk_size must be an integer >= 1, got {chunk_size!r}")
    if memory_budget is not None and not (
        isinstance(memory_budget, (int, float, np.number)) and memory_budget > 0
    ):
        raise InputError(f"memory_budget must be a positive number of bytes, got {memory_budget!r}")
    if num_steps is not None and (not isinstance(num_steps, (int, np.integer)) or num_steps < 1):
        raise InputError(f"num_steps must be an integer >= 1, got {num_steps!r}")
    name = name or getattr(fn, "__name__", None) or "sweep"

    kind, axes = _grid_axes(grid)
    hyper = (
        {a.name: a.values for a in axes}
        if kind == "product"
        else (axes[0].values if axes else None)
    )
    num_tasks = None
    if tasks is not None:
        tasks = _as_arrays("tasks", tasks)
        num_tasks = _leading("tasks", tasks)
    if data is not None:
        data = _as_arrays("data", data)
    keys = _keys(key, int(num_seeds))
    layout = _Layout(
        (int(num_seeds), *(a.size for a in axes), *(() if num_tasks is None else (num_tasks,))),
        kind,
        tuple(a.name for a in axes),
        tasks is not None,
    )
    total = math.prod(layout.sizes)
    if total >= 2**31:
        raise InputError(f"a sweep holds at most 2**31 - 1 combinations, got {total}")
    axis_names = ("seed", *layout.names, *(("task",) if tasks is not None else ()))

    # One combination's shapes: the output structure and a memory estimate.
    def one(tree):
        return jax.tree.map(lambda a: jax.ShapeDtypeStruct(a.shape[1:], a.dtype), tree)

    one_params = None if kind == "none" else one(hyper)
    one_data = (
        one(tasks)
        if tasks is not None
        else jax.tree.map(lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype), data)
    )
    per_combination, out_struct, compile_seconds = _estimate(fn, one_params, one_data, one(keys))
    out_leaves_spec, out_treedef = jax.tree.flatten(out_struct)
    shared = _tree_bytes(hyper) + _tree_bytes(tasks) + _tree_bytes(data) + _tree_bytes(keys)

    mesh = _mesh(devices)
    n_dev = mesh.devices.size
    budget = (
        int(memory_budget)
        if memory_budget is not None
        else _default_budget(list(mesh.devices.flat))
    )
    if chunk_size is None:
        per_device = (budget - shared) // per_combination
        if per_device < 1:
            raise InputError(
                f"memory_budget={budget} bytes ({_fmt_bytes(budget)}) is too small for one "
                f"combination: it needs about {_fmt_bytes(per_combination)} plus "
                f"{_fmt_bytes(shared)} of shared inputs per device"
            )
        chunk = int(min(per_device * n_dev, total))
        derived = True
    else:
        chunk = int(min(chunk_size, total))
        derived = False
    chunk = -(-chunk // n_dev) * n_dev  # a multiple of the devices

    leaves = [np.empty((total, *s.shape), s.dtype) for s in out_leaves_spec]
    done = np.zeros(total, bool)
    writer = jax.process_index() == 0
    folder = None
    loaded = 0
    if out_dir is not None:
        # The configuration hash: everything that decides the numbers.
        description = {
            "fn": _describe(fn),
            "config": _describe(config),
            "grid_kind": kind,
            "axes": [[a.name, _describe(a.values)] for a in axes],
            "tasks": _describe(tasks),
            "data": _describe(data),
            "num_seeds": int(num_seeds),
            "key": _array_digest(keys),
            "output": [str(out_treedef), [[list(s.shape), str(s.dtype)] for s in out_leaves_spec]],
            "jax": jax.__version__,
            "ojax": _ojax_version(),
            "ojax_source": _ojax_source_digest(),
            "fn_source": _source_digest(fn),
            "x64": bool(jax.config.jax_enable_x64),
        }
        digest = _digest(description)
        manifest = {
            "hash": digest,
            "name": name,
            "fn": f"{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', repr(fn))}",
            "axes": list(axis_names),
            "sizes": list(layout.sizes),
            "num_combinations": total,
            "output": description["output"],
            "jax": jax.__version__,
            "ojax": description["ojax"],
            "ojax_source": description["ojax_source"],
            "fn_source": description["fn_source"],
            "parts": {k: _digest(v)[:16] for k, v in description.items()},
            "x64": description["x64"],
            "config": _jsonable(config),
        }
        folder = _open_store(Path(out_dir), name, digest, manifest, writer)
        if writer:
            for stale in folder.glob(".tmp-*"):  # left by a killed writer; never renamed
                stale.unlink(missing_ok=True)
        if resume:
            loaded = _load_chunks(folder, total, leaves, done)
        elif writer:
            for old in _chunk_files(folder):
                old.unlink()
    if jax.process_count() > 1:  # every process computes the same pending combinations
        from jax.experimental import multihost_utils

        done = np.asarray(multihost_utils.broadcast_one_to_all(done))
    pending = np.flatnonzero(~done).astype(np.int32)
    batches = [pending[i : i + chunk] for i in range(0, pending.size, chunk)]

    if batches:
        batch_sharding = NamedSharding(mesh, PartitionSpec(BATCH_AXIS))
        replicated = NamedSharding(mesh, PartitionSpec())
        put = functools.partial(jax.device_put, device=replicated)
        if not replicated.is_fully_addressable:  # pragma: no cover - several hosts
            put = functools.partial(_put, sharding=replicated)
        args = jax.tree.map(put, (hyper, tasks, data, keys))
        (compiled, used), more = _compile(fn, layout, mesh, chunk, *args, options)
        compile_seconds += more
        if derived and chunk > n_dev:
            if used > budget:  # the estimate was short: shrink once and recompile
                per_device = max(1, int(chunk // n_dev * budget / used * 0.9))
                chunk = per_device * n_dev
                batches = [pending[i : i + chunk] for i in range(0, pending.size, chunk)]
                (compiled, used), more = _compile(fn, layout, mesh, chunk, *args, options)
                compile_seconds += more
    else:
        batch_sharding = None

    bar = None
    if progress and writer:
        from tqdm.auto import tqdm

        bar = tqdm(
            total=loaded + len(batches),
            initial=loaded,
            desc=name,
            unit="chunk",
            file=sys.stderr,
            dynamic_ncols=True,
            leave=False,
        )

    def finish(batch, out, number):
        values = _fetch(out)
        for leaf, value in zip(leaves, values):
            leaf[batch] = value[: batch.size]
        path = None
        if folder is not None and writer:
            path = folder / f"chunk-{int(batch[0]):010d}.npz"
            arrays = {"index": batch.astype(np.int64)}
            arrays.update({f"out{i}": v[: batch.size] for i, v in enumerate(values)})
            _atomic_savez(path, arrays)
        if bar is not None:
            bar.update(1)
        if on_chunk is not None:
            on_chunk(
                {
                    "chunk": number,
                    "computed": number + 1,
                    "total": len(batches),
                    "indices": batch,
                    "path": path,
                }
            )

    try:
        in_flight = None
        for number, batch in enumerate(batches):
            padded = np.full(chunk, batch[-1], np.int32)
            padded[: batch.size] = batch
            if batch_sharding.is_fully_addressable:
                index = jax.device_put(padded, batch_sharding)
            else:  # pragma: no cover - several hosts
                index = _put(padded, batch_sharding)
            out = compiled(index, *args)  # dispatched; overlaps with storing the previous chunk
            if in_flight is not None:
                finish(*in_flight)
            in_flight = (batch, out, number)
        if in_flight is not None:
            finish(*in_flight)
    finally:
        if bar is not None:
            bar.close()

    outputs = jax.tree.unflatten(
        out_treedef, [leaf.reshape(layout.sizes + leaf.shape[1:]) for leaf in leaves]
    )
    coords: dict[str, Any] = {"seed": np.arange(num_seeds)}
    for a in axes:
        coords[a.name] = jax.tree.map(np.asarray, a.values)
    if tasks is not None:
        coords["task"] = np.arange(num_tasks)
    stats = SweepStats(
        num_combinations=total,
        chunk_size=chunk,
        num_chunks=loaded + len(batches),
        chunks_computed=len(batches),
        chunks_loaded=loaded,
        combinations_computed=int(pending.size),
        num_devices=n_dev,
        memory_budget=budget,
        estimated_bytes_per_combination=int(per_combination),
        compile_seconds=compile_seconds,
        wall_seconds=time.perf_counter() - start,
        num_steps=None if num_steps is None else int(num_steps),
        folder=None if folder is None else str(folder),
    )
    if progress and writer:
        print(stats.summary_line(name), file=sys.stderr)
    return SweepResult(outputs, axis_names, coords, stats)


def _ojax_version() -> str:
    import ojax

    return ojax.__version__


@functools.lru_cache(maxsize=1)
def _ojax_source_digest() -> str:
    """A digest of ojax's own source files: a changed library never reuses old chunks."""
    root = Path(__file__).resolve().parent
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        h.update(str(path.relative_to(root)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def _source_digest(fn: Any) -> str | None:
    """A digest of the file that defines ``fn`` (a user's script or notebook cell)."""
    import inspect

    try:
        target = inspect.unwrap(getattr(fn, "func", fn))
        path = inspect.getsourcefile(target)
        return hashlib.sha256(Path(path).read_bytes()).hexdigest() if path else None
    except (TypeError, OSError):
        return None


def _jsonable(value: Any) -> Any:
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return repr(value)


# --------------------------------------------------------------------------------------------
# experiments


def sweep_experiment(
    config: Any,
    fn: Callable[[Any, Any, jax.Array], Any],
    grid: Any = None,
    *,
    key: Any,
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

    Honours the :class:`~ojax.experiments.output.ExperimentConfig`: ``config.seeds`` seeds,
    ``config.devices``, ``config.memory_budget``, ``config.resume`` and ``config.quiet``; the
    chunk files go under ``config.out/.sweep/``.

    Args:
      config: the experiment's configuration.
      fn: ``(params, data, key) -> pytree`` for one seed (and hyperparameter / task).
      grid, tasks, data, num_steps, chunk_size: as in :func:`sweep`.
      key: the cell's PRNG key (or an int seed).
      name: a label (default: ``fn.__name__``); it names the chunk folder.
      settings: anything else that decides the numbers (enters the configuration hash with
        the experiment's name, ``quick`` and ``x64``).
      num_seeds: overrides ``config.seeds``; e.g. ``1`` when the seeds' data are already
        drawn and passed as ``tasks`` (a leading seed axis), which then is the ``task`` axis.
      compiler_options: as in :func:`sweep`.

    Returns:
      The :class:`SweepResult`; its ``outputs`` have the seed axis first.
    """
    return sweep(
        fn,
        grid,
        num_seeds=int(config.seeds if num_seeds is None else num_seeds),
        key=key,
        tasks=tasks,
        data=data,
        memory_budget=config.memory_budget,
        chunk_size=chunk_size,
        devices=config.devices,
        out_dir=Path(config.out) / ".sweep",
        resume=config.resume,
        progress=not config.quiet,
        name=name,
        config={
            "experiment": config.name,
            "quick": bool(config.quick),
            "x64": bool(config.x64),
            "settings": _describe(settings),
        },
        num_steps=num_steps,
        compiler_options=compiler_options,
    )


# --------------------------------------------------------------------------------------------
# a registered learner on its synthetic stream (``ojax sweep``)


def _checkpoints(num_steps: int, count: int = 200) -> np.ndarray:
    return np.unique(np.linspace(1, num_steps, min(count, num_steps)).round().astype(np.int64))


def _with(base: Any, overrides: Mapping[str, Any]) -> Any:
    if hasattr(base, "_replace"):
        return base._replace(**overrides)
    return {**base, **overrides}


def _fields(base: Any) -> tuple[str, ...]:
    if hasattr(base, "_fields"):
        return tuple(base._fields)
    if isinstance(base, Mapping):
        return tuple(base)
    return ()


def sweep_learner(
    name: str,
    grid: Mapping[str, Sequence[float]] | None = None,
    *,
    num_seeds: int = 10,
    num_steps: int = 1000,
    dim: int = 10,
    key: Any = 0,
    x0: str = "auto",
    memory_budget: float | None = None,
    chunk_size: int | None = None,
    devices: int | Sequence[Any] | None = None,
    out_dir: str | os.PathLike | None = None,
    resume: bool = True,
    progress: bool = True,
) -> tuple[Any, SweepResult]:
    """Sweeps a registered learner (:data:`ojax.core.LEARNERS`) over seeds and a grid of its
    hyperparameters on its own synthetic stream; what ``ojax sweep`` runs.

    Each combination draws a stream ``entry.make_stream(key_seed, num_steps, dim)``, plays it
    (``run_oco`` on ``entry.objective`` for OCO learners, ``run`` on the loss ``entry.objective``
    for predictors) with the default params where the grid overrides some fields, and records
    the average and cumulative loss at up to 200 checkpoints.

    Args:
      name: the learner's registry name.
      grid: ``field -> values`` (fields of ``entry.default_params()``), a Cartesian product;
        ``None`` runs the default params over seeds only.
      num_seeds, num_steps, dim: seeds, stream length and dimension.
      key: PRNG key or int seed.
      x0: OCO anchor: ``"zeros"``, ``"uniform"`` (``1 / dim``, a simplex prior) or ``"auto"``
        (zeros unless the learner's ``check_start`` rejects them, then uniform).
      memory_budget, chunk_size, devices, out_dir, resume, progress: as in :func:`sweep`.

    Returns:
      ``(ExperimentResult, SweepResult)``: the INTERFACE.md rows (dataset: the stream's name,
      method ``NAME@field=value,...``, metrics ``average_loss`` and ``cumulative_loss``),
      curves, figures, and the raw sweep.
    """
    from ojax import losses, metrics
    from ojax.core import LEARNERS
    from ojax.experiments.output import ExperimentResult
    from ojax.run import run, run_oco

    if name not in LEARNERS:
        raise InputError(
            f"unknown learner {name!r}; choose one of: {', '.join(sorted(LEARNERS)) or '(none)'}"
        )
    entry = LEARNERS[name]
    for label, value, low in (("num_steps", num_steps, 1), ("dim", dim, 1)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
            raise InputError(f"{label} must be an integer >= {low}, got {value!r}")
    if x0 not in ("auto", "zeros", "uniform"):
        raise InputError(f"x0 must be one of ['auto', 'zeros', 'uniform'], got {x0!r}")
    learner = entry.make(dim)
    base = entry.default_params()
    fields = _fields(base)
    axes: dict[str, jax.Array] = {}
    for field, values in (grid or {}).items():
        if field not in fields:
            raise InputError(
                f"grid: {field!r} is not a hyperparameter of {name}; its fields are "
                f"{list(fields) or '(none)'}"
            )
        current = jnp.asarray(base[field] if isinstance(base, Mapping) else getattr(base, field))
        arr = np.asarray(values, dtype=np.float64)
        if arr.ndim != 1 or arr.size == 0:
            raise InputError(f"grid: {field!r} needs a non-empty list of values, got {values!r}")
        axes[field] = jnp.asarray(arr, current.dtype)
    if axes:
        check = jax.tree.map(jnp.asarray, _with(base, axes))
        learner.check_params(check)  # on the concrete grid, before tracing

    if entry.kind == "oco":
        objective = losses.OBJECTIVES[entry.objective]
        probe_x = entry.make_stream(jax.random.key(0), 1, dim)[0]
        zeros = jnp.zeros(probe_x.shape[1:], probe_x.dtype)
        start_point = zeros
        if x0 == "auto":  # zeros unless the learner's domain excludes them (a simplex prior)
            try:
                learner.check_start(zeros)
            except InputError:
                x0 = "uniform"
        if x0 == "uniform":
            start_point = jnp.full(zeros.shape, 1.0 / zeros.shape[-1], zeros.dtype)
        # a NumPy constant: the runner's checks on concrete values also work under our trace
        start_point = np.asarray(start_point)
    else:
        loss = losses.LOSSES[entry.objective]
    marks = _checkpoints(num_steps)
    take = jnp.asarray(marks - 1)

    def learner_run(params, data, key):
        p = _with(base, params or {})
        xs, ys = entry.make_stream(key, num_steps, dim)
        if entry.kind == "oco":
            _, trace = run_oco(learner, p, start_point, xs, objective)
        else:
            _, trace = run(learner, p, xs, ys, loss)
        values = trace.loss.astype(jnp.result_type(float))
        return {
            "average_loss": metrics.average_loss(values)[take],
            "cumulative_loss": metrics.cumulative_loss(values)[take],
        }

    res = sweep(
        learner_run,
        axes or None,
        num_seeds=num_seeds,
        key=key,
        memory_budget=memory_budget,
        chunk_size=chunk_size,
        devices=devices,
        out_dir=out_dir,
        resume=resume,
        progress=progress,
        name=f"sweep-{name}",
        num_steps=num_steps,
        config={"learner": name, "num_steps": num_steps, "dim": dim},
    )

    dataset = getattr(entry.make_stream, "__name__", "stream").removesuffix("_stream")
    result = ExperimentResult()
    names = list(axes)
    grid_shape = tuple(int(axes[f].shape[0]) for f in names)
    methods = {}
    for where in np.ndindex(*grid_shape):
        label = ",".join(f"{f}={float(axes[f][i]):g}" for f, i in zip(names, where))
        method = f"{name}@{label}" if label else name
        methods[method] = where
        for metric in ("average_loss", "cumulative_loss"):
            curves = np.asarray(res.outputs[metric])[(slice(None), *where)]
            result.add(dataset, method, metric, curves)
    from ojax.plotting import band, curves_figure

    result.figures["average_loss.png"] = curves_figure(
        marks,
        {m: result.curves[f"{dataset}/{m}/average_loss"] for m in methods},
        title=f"{name} on {dataset} (d={dim}, {num_seeds} seeds)",
        xlabel="step t",
        ylabel="average loss",
        logx=True,
    )
    if len(names) == 1:
        import matplotlib.pyplot as plt

        values = np.asarray(axes[names[0]], dtype=np.float64)
        final = np.asarray(res.outputs["average_loss"])[..., -1]  # (seeds, k)
        fig, ax = plt.subplots(figsize=(5, 4))
        band(ax, values, final, f"final average loss, T={num_steps}", marker="o")
        if values.min() > 0 and values.max() / values.min() > 10:
            ax.set_xscale("log")
        ax.set(xlabel=names[0], ylabel="average loss", title=f"{name}: sensitivity")
        ax.grid(alpha=0.3)
        fig.tight_layout()
        result.figures["sensitivity.png"] = fig
    best = res.best(lambda o: o["average_loss"][..., -1]) if names else None
    result.compile_seconds = res.stats.compile_seconds
    result.extra_config = {
        "learner": name,
        "kind": entry.kind,
        "objective": entry.objective,
        "grid": {f: np.asarray(v).tolist() for f, v in axes.items()},
        "num_steps": num_steps,
        "dim": dim,
        "best": None
        if best is None
        else {
            "params": {k: float(v) for k, v in best["params"].items()},
            "average_loss": best["value"],
        },
        "sweep": dataclasses.asdict(res.stats),
    }
    return result, res


__all__ = [
    "BATCH_AXIS",
    "Stacked",
    "SweepResult",
    "SweepStats",
    "stacked",
    "sweep",
    "sweep_experiment",
    "sweep_learner",
]
