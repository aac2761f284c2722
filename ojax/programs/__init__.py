"""Traced programs kept on disk, so that a warm process skips tracing and lowering.

JAX's persistent compilation cache (:mod:`ojax.programs.cache`) spares XLA's work, but every process
still traces each sweep cell twice (once alone, to size the chunks; once vmapped, to build the
chunk program) and lowers it to StableHLO: seconds per cell, most of a warm run. Beside that
cache, in `ojax-programs/`, this module keeps for each chunk program its :mod:`jax.export`
serialization (and for each cell its output shapes and peak bytes). A process that finds them
compiles the stored module directly, which the compilation cache then serves.

The store holds data, never code: programs as :mod:`jax.export` serializations, tree structures
and shapes as JSON (:func:`tree_to_data`), read back without `pickle`; a named tuple in a
stored structure is looked up among the classes already imported (ojax's and JAX's only). An
entry that does not parse or check is ignored, traced again and replaced.

An entry's name is the digest of everything the program depends on: the cell function as the
resume fingerprint describes it (:func:`ojax.programs.identity.describe`: code, closure values,
defaults), the digest of ojax's sources, the input shapes
and dtypes, the layout and chunk size, JAX's version and the settings that change a trace, the
platform and the compiler options. Anything that cannot be described, exported or read falls back
to tracing as usual (the fallback is not an error). Only cells made of ojax's own functions are
kept (a function of a user's script or notebook may read globals its description does not hold);
multi-device meshes always trace. `OJAX_PROGRAM_CACHE=off` turns the store off.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jax
import numpy as np

from ojax.fileio import DataError, atomic_write, open_regular
from ojax.programs.identity import describe, digest, ojax_source_digest

FOLDER = "ojax-programs"
# JAX settings that change what a function traces to
_SETTINGS = (
    "jax_enable_x64",
    "jax_default_prng_impl",
    "jax_default_matmul_precision",
    "jax_threefry_partitionable",
    "jax_numpy_dtype_promotion",
    "jax_numpy_rank_promotion",
    "jax_enable_checks",
    "jax_debug_nans",
    "jax_debug_infs",
    "jax_disable_jit",
)


def folder() -> Path | None:
    """`ojax-programs/` inside JAX's persistent compilation cache folder (`None` when that
    cache is off: the programs are kept only where compiled programs are)."""
    base = jax.config.jax_compilation_cache_dir  # type: ignore[attr-defined]
    if not base or os.environ.get("OJAX_PROGRAM_CACHE", "").lower() in ("off", "0"):
        return None
    return Path(base) / FOLDER


_TRUSTED = ("ojax.", "jax.", "jax._src.")  # modules versioned by the key (sources, version)


def _ojax_only(description: Any) -> bool:
    """Every function in the description is ojax's or JAX's own (versioned by the key: ojax's
    source digest, JAX's version) and nothing was described only by its type or cut off by
    depth."""
    if isinstance(description, list) and description:
        head = description[0]
        if head == "function" and not str(description[1]).startswith(_TRUSTED):
            return False  # a user's function may read globals the description does not hold
        if head in ("deep", "object"):
            return False
        return all(_ojax_only(item) for item in description)
    if isinstance(description, dict):
        return all(_ojax_only(item) for item in description.values())
    return True


def entry_name(kind: str, fn: Any, parts: Any) -> str | None:
    """The digest naming `kind`'s entry for `fn`; `None` (trace as usual) when `fn`
    cannot be described fully or involves functions defined outside ojax."""
    if folder() is None:  # the store is off: nothing to name (and no description to walk)
        return None
    try:
        described = describe(fn)
        if not _ojax_only(described):
            return None
        settings = {name: str(getattr(jax.config, name, None)) for name in _SETTINGS}
        device = jax.devices()[0]
        description = [
            kind,
            described,
            ojax_source_digest(),
            jax.__version__,
            device.platform,
            getattr(device, "device_kind", ""),
            settings,
            parts,
        ]
        return digest(description)
    except Exception:  # an object the fingerprint does not know: trace as usual
        return None


def _path(name: str | None, suffix: str) -> Path | None:
    base = folder()
    return None if base is None or name is None else base / f"{name}.{suffix}"


def _write(path: Path, data: bytes) -> None:
    """Atomic: a concurrent reader sees the whole file or none."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, lambda f: f.write(hashlib.sha256(data).digest() + data))
    except OSError:  # a read-only or full disk: the programs are only a speed-up
        pass


def _read(path: Path | None) -> bytes | None:
    if path is None:
        return None
    try:
        with open_regular(path) as f:  # a pipe or a device planted there is never waited on
            raw = f.read()
    except (OSError, DataError):
        return None
    check, data = raw[:32], raw[32:]
    return data if hashlib.sha256(data).digest() == check else None  # a torn file: ignore


def load_value(name: str | None) -> Any:
    """A stored JSON value (e.g. a cell's output shapes and peak bytes), or `None`."""
    data = _read(_path(name, "json"))
    if data is None:
        return None
    try:
        return json.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None


def save_value(name: str | None, value: Any) -> None:
    """Stores `value` (JSON data: dicts, lists, strings, numbers) as JSON."""
    path = _path(name, "json")
    if path is None:
        return
    try:
        data = json.dumps(value, allow_nan=False).encode("utf-8")
    except (TypeError, ValueError, RecursionError):  # not JSON data: not kept
        return
    _write(path, data)
    path.with_suffix(".pkl").unlink(missing_ok=True)  # an entry of an older ojax: never read


# ------------------------------------------------------------ tree structures and shapes as JSON

_CONTAINERS = {type(None): "none", tuple: "tuple", list: "list", dict: "dict"}
_TRUSTED_CLASSES = ("ojax", "jax")  # packages whose named tuples a stored structure may name


def _named_tuple(kind: type) -> bool:
    return issubclass(kind, tuple) and isinstance(getattr(kind, "_fields", None), tuple)


def tree_to_data(tree: Any) -> Any:
    """A tree structure (`PyTreeDef`) as JSON data: `"*"` a leaf, `["none"]`,
    `["tuple", children]`, `["list", children]`, `["dict", keys, children]`,
    `["namedtuple", "module:QualName", fields, children]`; `ValueError` for any other node
    (e.g. a custom pytree class), which the store then does not keep."""
    node = tree.node_data()
    if node is None:
        return "*"
    kind, aux = node
    children = [tree_to_data(child) for child in tree.children()]
    if kind in _CONTAINERS:
        if kind is dict:
            if not all(isinstance(key, str) for key in aux):
                raise ValueError(f"dict keys {aux!r} are not all strings")
            return ["dict", list(aux), children]
        return [_CONTAINERS[kind], children]
    if _named_tuple(kind) and "<" not in kind.__qualname__:
        module = kind.__module__
        if module.split(".")[0] in _TRUSTED_CLASSES:
            return ["namedtuple", f"{module}:{kind.__qualname__}", list(kind._fields), children]
    raise ValueError(f"a {kind!r} node is not kept in the program store")


def imported_named_tuple(module_name: str, qualname: str, packages: tuple[str, ...]) -> type | None:
    """The named tuple class `qualname` of the module `module_name`, if that module belongs to
    one of `packages` and is already imported (nothing is imported here) and the class is
    defined there under that name; `None` otherwise. The one lookup of a class a file names
    (this store's structures, :mod:`ojax.state_io`'s state files)."""
    if module_name.split(".")[0] not in packages or module_name not in sys.modules:
        return None
    value: Any = sys.modules[module_name]
    for part in qualname.split("."):
        if not part.isidentifier():
            return None
        value = getattr(value, part, None)
    if not isinstance(value, type) or not _named_tuple(value):
        return None
    return value if (value.__module__, value.__qualname__) == (module_name, qualname) else None


def _trusted_class(where: Any, fields: Any) -> type[Any]:
    """The named tuple `module:QualName` of ojax or JAX (:func:`imported_named_tuple`) with
    these fields."""
    module_name, _, qualname = str(where).partition(":")
    value: Any = imported_named_tuple(module_name, qualname, _TRUSTED_CLASSES)
    if value is None:
        raise ValueError(f"{where!r} is not a named tuple of an imported ojax or JAX module")
    if list(value._fields) != fields:
        raise ValueError(f"{where!r} is not a named tuple with the fields {fields!r}")
    return value


def _example(data: Any, depth: int = 0) -> Any:
    """A pytree of `0` leaves with the structure `data` describes."""
    if depth > 64:
        raise ValueError("the structure is too deep")
    if data == "*":
        return 0
    if not isinstance(data, list) or not data or not isinstance(data[-1], list):
        raise ValueError(f"not a stored structure: {data!r:.80}")
    head, children = data[0], [_example(child, depth + 1) for child in data[-1]]
    if head == "none" and len(data) == 2 and not children:
        return None
    if head in ("tuple", "list") and len(data) == 2:
        return tuple(children) if head == "tuple" else children
    if head == "dict" and len(data) == 3 and isinstance(data[1], list):
        keys = data[1]
        if len(keys) != len(children) or not all(isinstance(k, str) for k in keys):
            raise ValueError("a stored dict's keys do not match its children")
        return dict(zip(keys, children))
    if head == "namedtuple" and len(data) == 4 and isinstance(data[2], list):
        cls = _trusted_class(data[1], data[2])
        if len(children) != len(data[2]):
            raise ValueError("a stored named tuple's children do not match its fields")
        return cls(*children)
    raise ValueError(f"not a stored structure: {data!r:.80}")


def tree_from_data(data: Any) -> Any:
    """The `PyTreeDef` of :func:`tree_to_data`'s `data`; `ValueError` on anything else."""
    return jax.tree.structure(_example(data))


def shapes_to_data(shapes: Any) -> dict[str, Any]:
    """A pytree of `jax.ShapeDtypeStruct` as JSON data (structure, then each leaf's shape,
    dtype and weak type)."""
    leaves, tree = jax.tree.flatten(shapes)
    if not all(isinstance(leaf, jax.ShapeDtypeStruct) for leaf in leaves):
        raise ValueError("not a pytree of jax.ShapeDtypeStruct")
    return {
        "tree": tree_to_data(tree),
        "leaves": [
            [[int(n) for n in leaf.shape], np.dtype(leaf.dtype).name, bool(leaf.weak_type)]
            for leaf in leaves
        ],
    }


def shapes_from_data(data: Any) -> Any:
    """The pytree of `jax.ShapeDtypeStruct` of :func:`shapes_to_data`; `ValueError` on
    anything else."""
    tree = tree_from_data(data["tree"])
    leaves = []
    for shape, dtype, weak in data["leaves"]:
        if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in shape):
            raise ValueError(f"not a shape: {shape!r}")
        kind = jax.numpy.dtype(str(dtype))
        if not (jax.numpy.issubdtype(kind, jax.numpy.number) or kind == np.bool_):
            raise ValueError(f"not an array dtype: {dtype!r}")
        leaves.append(jax.ShapeDtypeStruct(tuple(shape), kind, weak_type=bool(weak)))
    if len(leaves) != tree.num_leaves:
        raise ValueError("the stored leaves do not match the structure")
    return jax.tree.unflatten(tree, leaves)


def load_exported(name: str | None) -> jax.export.Exported | None:
    """A stored chunk program, or `None`."""
    data = _read(_path(name, "jaxexport"))
    if data is None:
        return None
    try:
        return jax.export.deserialize(bytearray(data))
    except Exception:
        return None


def save_exported(name: str | None, exported: jax.export.Exported) -> None:
    """Serializes `exported` into the store under `name` (nothing when `name` is `None`, the
    store is off, or the program cannot be serialized); a later process loads it instead of
    tracing."""
    path = _path(name, "jaxexport")
    if path is None:
        return
    try:
        data = bytes(exported.serialize())
    except Exception:  # e.g. flatbuffers missing, or an effect that cannot be serialized
        return
    _write(path, data)


def _signature(leaves: list) -> tuple:
    return tuple(
        (tuple(a.shape), str(a.dtype), bool(getattr(a, "weak_type", False)))
        for a in map(jax.typeof, leaves)
    )


def jit(fn: Callable, **options: Any) -> Callable:
    """`jax.jit(fn, **options)` whose programs a later process loads from the store instead
    of tracing and lowering them (the sweep engine's mechanism, for ojax's other jitted entry
    points). Arguments are positional pytrees of arrays (close over static values); a function
    the store does not keep (see :func:`entry_name`) runs as `jax.jit` would.

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax import programs
      >>> print(programs.jit(jnp.cumsum)(jnp.arange(3.0)))
      [0. 1. 3.]
    """
    jitted = jax.jit(fn, **options)
    names: dict[tuple, str | None] = {}  # (treedef, signature) -> entry name: described once
    loaded: dict[str, tuple[Callable, Any]] = {}
    storable = set(options) <= {"compiler_options"}  # static or donated arguments: as jax.jit

    @functools.wraps(fn)
    def call(*args: Any) -> Any:
        if not storable or folder() is None:
            return jitted(*args)
        leaves, tree = jax.tree.flatten(args)
        try:
            shapes = (str(tree), _signature(leaves))
        except Exception:  # not arrays: as jax.jit
            return jitted(*args)
        if shapes not in names:
            names[shapes] = entry_name(
                "jit", fn, [*shapes[:1], repr(shapes[1]), repr(sorted(options.items()))]
            )
        name = names[shapes]
        if name is None:
            return jitted(*args)
        if name not in loaded:
            stored = exported_program(name, jitted, args)
            if stored is None:
                return jitted(*args)
            loaded[name] = (jax.jit(stored[0].call, **options), stored[1])
        compiled, out_tree = loaded[name]
        return jax.tree.unflatten(out_tree, compiled(*leaves))

    return call


def exported_program(name: str, jitted: Callable, args: tuple) -> tuple[Any, Any] | None:
    """`(exported program over the leaves of args, output treedef)` of `jitted(*args)`:
    loaded from the store, else traced, exported and stored; `None` when it cannot be
    exported (e.g. a host callback): call `jitted` as usual then."""
    exported, out_tree = load_exported(name), _load_tree(name)
    if exported is not None and out_tree is not None:
        return exported, out_tree
    leaves, tree = jax.tree.flatten(args)
    seen: list = []

    def flat(*xs):
        out = jitted(*jax.tree.unflatten(tree, xs))
        seen.append(jax.tree.structure(out))
        return jax.tree.leaves(out)

    try:
        exported = jax.export.export(jax.jit(flat))(*leaves)
    except Exception:
        return None
    save_exported(name, exported)
    try:
        save_value(name, {"out_tree": tree_to_data(seen[-1])})
    except ValueError:  # a structure JSON does not hold (e.g. a custom pytree class): not kept
        pass
    return exported, seen[-1]


def _load_tree(name: str) -> Any:
    stored = load_value(name)
    try:
        return tree_from_data(stored["out_tree"])
    except Exception:  # missing, or not a structure of this ojax: traced again, replaced
        return None


__all__ = [
    "entry_name",
    "exported_program",
    "folder",
    "imported_named_tuple",
    "jit",
    "load_exported",
    "load_value",
    "save_exported",
    "save_value",
    "shapes_from_data",
    "shapes_to_data",
    "tree_from_data",
    "tree_to_data",
]
