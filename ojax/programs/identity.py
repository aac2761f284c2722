"""A stable description of functions and values, and its digest: what names a stored program
(:mod:`ojax.programs`) and a sweep's chunk folder (:mod:`ojax.sweep.fingerprint`).

A function is described by its module, qualified name, code, closure values and defaults; a
learner or cell that a :func:`~ojax.learner_factory` built, by its factory and arguments; an
array by its dtype, shape and a digest of its bytes.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import inspect
import json
import sys
import types
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jax
import numpy as np

from ojax.core import FactoryKey, array_digest, factory_key


def _describe_function(obj: types.FunctionType, depth: int) -> list:
    cells = []
    for cell in obj.__closure__ or ():
        try:
            cells.append(describe(cell.cell_contents, depth))
        except ValueError:  # an empty cell
            cells.append(None)
    return [
        "function",
        obj.__module__,
        obj.__qualname__,
        describe(obj.__code__, depth),
        describe(obj.__defaults__, depth),
        describe(obj.__kwdefaults__, depth),
        cells,
    ]


def _describe_code(obj: types.CodeType, depth: int) -> list:
    consts = [describe(c, depth) for c in obj.co_consts]
    return [
        "code",
        obj.co_name,
        hashlib.sha256(obj.co_code).hexdigest(),
        consts,
        list(obj.co_names),
    ]


def _describe_key(key: FactoryKey, depth: int) -> list:
    """A factory-built object by its key: the factory (an ojax factory by its name, its code
    being in ojax's source digest; another by its code) and the normalized arguments."""
    factory = key.factory
    module = getattr(factory, "__module__", "") or ""
    if module == "ojax" or module.startswith("ojax."):
        named = ["named", module, factory.__qualname__]
    else:
        named = describe(getattr(factory, "__wrapped__", factory), depth)
    return ["keyed", named, [[name, describe(value, depth)] for name, value in key.arguments]]


def _describe_container(obj: Any, depth: int) -> Any:
    """Named tuples, lists, tuples, mappings and partials; `None` for anything else."""
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return [type(obj).__qualname__, {f: describe(getattr(obj, f), depth) for f in obj._fields}]
    if isinstance(obj, (list, tuple)):
        return [type(obj).__name__, [describe(v, depth) for v in obj]]
    if isinstance(obj, Mapping):
        return ["dict", sorted([str(k), describe(v, depth)] for k, v in obj.items())]
    if isinstance(obj, functools.partial):
        return [
            "partial",
            describe(obj.func, depth),
            describe(obj.args, depth),
            describe(obj.keywords, depth),
        ]
    return None


def _describe_object(obj: Any, depth: int) -> Any:
    """Dataclasses, objects with a stable repr, or their attributes."""
    if dataclasses.is_dataclass(obj):
        return [
            type(obj).__qualname__,
            {f.name: describe(getattr(obj, f.name), depth) for f in dataclasses.fields(obj)},
        ]
    text = repr(obj)
    if " at 0x" not in text:
        return ["repr", type(obj).__qualname__, text]
    if hasattr(obj, "__dict__"):
        return [type(obj).__qualname__, describe(vars(obj), depth)]
    if type(obj) is object:  # a sentinel (`jax.vmap`'s wrapper closes over one): no state
        return ["sentinel"]
    return ["object", type(obj).__module__, type(obj).__qualname__]


def describe(obj: Any, depth: int = 0) -> Any:
    """A JSON-able description of `obj` that changes when its behaviour may change."""
    if depth > 8:
        return ["deep", type(obj).__qualname__]
    nxt = depth + 1
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    key = obj if isinstance(obj, FactoryKey) else factory_key(obj)
    if key is not None:  # no closure walk: the key says what the object is
        return _describe_key(key, nxt)
    if isinstance(obj, (np.ndarray, np.generic, jax.Array)):
        return array_digest(obj)
    if isinstance(obj, Path):
        return ["path", str(obj)]
    container = _describe_container(obj, nxt)
    if container is not None:
        return container
    if isinstance(obj, types.CodeType):
        return _describe_code(obj, nxt)
    if isinstance(obj, types.FunctionType):
        return _describe_function(obj, nxt)
    if isinstance(obj, types.MethodType):
        return ["method", describe(obj.__func__, nxt), describe(obj.__self__, nxt)]
    wrapped = getattr(obj, "__wrapped__", None)
    if wrapped is not None and wrapped is not obj:  # jax.jit / functools.wraps
        return ["wrapped", type(obj).__qualname__, describe(wrapped, nxt)]
    if isinstance(obj, (type, types.BuiltinFunctionType, types.ModuleType)):
        return ["named", getattr(obj, "__module__", ""), getattr(obj, "__qualname__", repr(obj))]
    return _describe_object(obj, nxt)


def digest(description: Any) -> str:
    """The sha256 of a description's canonical JSON."""
    text = json.dumps(description, sort_keys=True, separators=(",", ":"), default=repr)
    return hashlib.sha256(text.encode()).hexdigest()


def shape_signature(tree: Any) -> tuple:
    """`(treedef, ((shape, dtype), ...))`: what a trace or a compilation depends on."""
    leaves, treedef = jax.tree.flatten(tree)
    return (str(treedef), tuple((tuple(a.shape), str(a.dtype)) for a in leaves))


def ojax_version() -> str:
    """The installed ojax's version."""
    from ojax import __version__  # the package imports this module: read it when needed

    return __version__


ROOT = Path(__file__).resolve().parents[1]
"""The ojax package folder (`ojax/`), whose sources :func:`ojax_source_digest` digests."""


def _file_state(path: Path) -> tuple[int, int, str]:
    """`(modification time, size, SHA-256 of the bytes)` of a source file."""
    stat = path.stat()
    return stat.st_mtime_ns, stat.st_size, hashlib.sha256(path.read_bytes()).hexdigest()


# the sources when this process imported ojax (150 files, ~3 ms): relative path -> state
_IMPORTED = {
    path.relative_to(ROOT).as_posix(): _file_state(path) for path in sorted(ROOT.rglob("*.py"))
}
_IMPORTED_DIGEST = digest({name: sha for name, (_, _, sha) in _IMPORTED.items()})
_PROCESS_TOKEN = uuid.uuid4().hex
CHANGED = "changed-"
"""The start of :func:`ojax_source_digest` in a process whose loaded ojax sources changed."""


@functools.cache
def _source_name(file: str) -> str | None:
    """A module file's path relative to :data:`ROOT` (`None`: not a source file of ojax)."""
    path = Path(file).resolve()
    return (
        path.relative_to(ROOT).as_posix() if path.suffix == ".py" and ROOT in path.parents else None
    )


def changed_sources() -> list[str]:
    """The source files of ojax's loaded modules that differ from what they were when this
    process imported ojax (a library edited while it runs, `importlib.reload` or a notebook's
    autoreload included: the code in memory may not be what the digest names). A file whose
    time and size are unchanged is not read again."""
    changed = []
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None) if name.split(".")[0] == "ojax" else None
        relative = _source_name(file) if isinstance(file, str) else None
        if relative is None:
            continue
        path = ROOT / relative
        recorded = _IMPORTED.get(relative)
        try:
            stat = path.stat()
            if recorded is not None and (stat.st_mtime_ns, stat.st_size) == recorded[:2]:
                continue
            same = recorded is not None and _file_state(path)[2] == recorded[2]
        except OSError:  # gone or unreadable now: not what was imported
            same = False
        if not same:
            changed.append(relative)
    return sorted(changed)


def ojax_source_digest() -> str:
    """A digest of ojax's own source files (every `*.py` of the package) as they were when
    this process imported ojax: a changed library never reuses old programs or chunks. When a
    loaded module's file has changed since (:func:`changed_sources`), a digest of this process
    alone: what it traces is neither stored for nor taken from any other process's code."""
    if changed_sources():
        return f"{CHANGED}{_PROCESS_TOKEN}"
    return _IMPORTED_DIGEST


def source_digest(fn: Any) -> str | None:
    """A digest of the file that defines `fn` (a user's script or notebook cell)."""
    try:
        target = inspect.unwrap(getattr(fn, "func", fn))
        path = inspect.getsourcefile(target)
        return hashlib.sha256(Path(path).read_bytes()).hexdigest() if path else None
    except (TypeError, OSError):
        return None


def jsonable(value: Any) -> Any:
    """`value` as JSON can hold it: paths as text, mappings and sequences element by element,
    NumPy scalars and arrays as Python numbers and lists."""
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return value


__all__ = [
    "CHANGED",
    "ROOT",
    "changed_sources",
    "describe",
    "digest",
    "jsonable",
    "ojax_source_digest",
    "ojax_version",
    "shape_signature",
    "source_digest",
]
