"""Saving a learner's state and reading it back in another process: arrays and a JSON
description, nothing executable.

A run continues from a saved state (`ojax.run(..., state=load_state(path, like=...))`) as if it
had never stopped, bit for bit. The file (format version 1) is a zip archive of

* `state.json`: `{"format": "ojax-state", "format_version": 1, "ojax_version": ...,
  "learner": ..., "tree": NODE, "leaves": [{"name", "dtype", "shape"}, ...]}`, where
  `learner` is the learner's identity (the `repr` of its :class:`~ojax.core.FactoryKey`,
  e.g. `"ojax.oco.gradient_descent.ogd(projection='none')"`) or `null`, and a `NODE` is
  one of `{"kind": "leaf", "index": i}`, `{"kind": "none"}`, `{"kind": "tuple" | "list",
  "items": [NODE, ...]}`, `{"kind": "dict", "keys": [str, ...], "items": [...]}` and
  `{"kind": "namedtuple", "type": "module.QualName", "fields": [str, ...], "items": [...]}`;
* one `.npy` member per leaf (`leaf_00000.npy` ...), written with `allow_pickle=False`.

Reading never unpickles, never imports nor looks up a name the file gives: the state is read
into a template the caller gives (`like=`, e.g. `jax.eval_shape(learner.init, params)`), whose
structure, dtypes and shapes the file's description must equal; the leaves are then put into
the template's own structure. Each member is read alone and checked
(:func:`ojax.datasets.npz.read_arrays`: no object arrays, declared sizes bounded). Every
problem is a :class:`StateFileError` naming the file and what differs.
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ojax.core import factory_key, is_prng_key
from ojax.datasets.npz import read_arrays
from ojax.datasets.paths import DataError
from ojax.fileio import atomic_write, open_zip
from ojax.programs.identity import ojax_version

FORMAT = "ojax-state"
FORMAT_VERSION = 1
DESCRIPTION = "state.json"
MAX_DESCRIPTION_BYTES = 1 << 24  # 16 MiB of JSON
MAX_LEAVES = 100_000
DTYPES = frozenset(
    ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
    + ["float16", "float32", "float64", "complex64", "complex128"]
)
"""The dtypes a saved leaf may have (plain numeric ``.npy`` dtypes)."""


class StateFileError(DataError):
    """A state file that cannot be read, or is not the state asked for."""


def learner_identity(learner: Any) -> str | None:
    """What a learner is equal by, as text that is the same in every process (`None` for a
    learner no :func:`~ojax.core.learner_factory` built): the factory and its arguments,
    functions among them by qualified name."""
    key = factory_key(learner)
    return None if key is None else repr(key)


# ---------------------------------------------------------------------------------------------
# the description of a pytree


def _describe(node: Any, leaves: list[Any], where: str) -> dict:
    if node is None:
        return {"kind": "none"}
    if isinstance(node, tuple) and hasattr(node, "_fields"):
        cls = type(node)
        items = [_describe(v, leaves, f"{where}.{f}") for f, v in zip(cls._fields, node)]
        name = f"{cls.__module__}.{cls.__qualname__}"
        return {"kind": "namedtuple", "type": name, "fields": list(cls._fields), "items": items}
    if type(node) in (tuple, list):
        items = [_describe(v, leaves, f"{where}[{i}]") for i, v in enumerate(node)]
        return {"kind": type(node).__name__, "items": items}
    if type(node) is dict:
        if not all(isinstance(k, str) for k in node):
            raise StateFileError(f"state{where}: dict keys must be strings, got {list(node)}")
        keys = sorted(node)
        return {
            "kind": "dict",
            "keys": keys,
            "items": [_describe(node[k], leaves, f"{where}[{k!r}]") for k in keys],
        }
    if jax.tree_util.all_leaves([node]):
        leaves.append((where, node))
        return {"kind": "leaf", "index": len(leaves) - 1}
    raise StateFileError(
        f"state{where}: a {type(node).__name__} node cannot be saved (states are NamedTuples, "
        "tuples, lists, dicts of str and arrays)"
    )


def _leaf_array(where: str, leaf: Any) -> np.ndarray:
    if isinstance(leaf, jax.core.Tracer):
        raise StateFileError(f"state{where}: a traced value cannot be saved (save outside jit)")
    if is_prng_key(leaf):
        raise StateFileError(
            f"state{where}: a PRNG key array cannot be saved; keep jax.random.key_data(key) in "
            "the state"
        )
    arr = np.asarray(leaf)
    if arr.dtype.name not in DTYPES:
        raise StateFileError(
            f"state{where}: dtype {arr.dtype} cannot be saved (allowed: {sorted(DTYPES)})"
        )
    return arr


def save_state(path: str | Path, state: Any, *, learner: Any = None) -> Path:
    """Writes `state` (a learner's state pytree) to `path` in the format of the module doc.

    Args:
      path: the file to write (conventionally `*.ojax-state`; replaced if it exists, a link
        there replaced, never written through; its folder must exist).
      state: NamedTuples, tuples, lists, dicts of `str` and `None` over arrays.
      learner: the learner the state belongs to (built by an ojax.learner_factory: anything
        else, its name included, is refused): its identity is recorded, and
        :func:`load_state` given another learner refuses the file.

    Returns:
      The path written.
    """
    path = Path(path)
    identity = None if learner is None else learner_identity(learner)
    if learner is not None and identity is None:
        raise StateFileError(
            f"learner: {type(learner).__name__} {str(learner)[:80]!r} has no identity to "
            "record (only a learner built by an ojax.learner_factory, e.g. ojax.oco.ogd(), "
            "carries one; a name is not a learner): pass the learner itself, or learner=None"
        )
    leaves: list[tuple[str, Any]] = []
    tree = _describe(state, leaves, "")
    arrays = [_leaf_array(where, leaf) for where, leaf in leaves]
    description = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "ojax_version": ojax_version(),
        "learner": identity,
        "tree": tree,
        "leaves": [
            {"name": f"leaf_{i:05d}", "dtype": a.dtype.name, "shape": list(a.shape)}
            for i, a in enumerate(arrays)
        ],
    }

    def write(f: Any) -> None:
        with zipfile.ZipFile(f, "w", zipfile.ZIP_STORED) as archive:
            archive.writestr(DESCRIPTION, json.dumps(description, indent=1))
            for i, arr in enumerate(arrays):
                buffer = io.BytesIO()
                np.lib.format.write_array(buffer, np.asarray(arr, order="C"), allow_pickle=False)
                archive.writestr(f"leaf_{i:05d}.npy", buffer.getvalue())

    # a fresh temporary file renamed over `path`: a reader never sees half a file, and a
    # link planted at the path or beside it is never written through
    return atomic_write(path, write, prefix=f".{path.name}.partial-")


# ---------------------------------------------------------------------------------------------
# reading


def _fail(path: Path, message: str) -> StateFileError:
    return StateFileError(f"{str(path)!r}: {message}")


def _read_description(path: Path) -> dict:
    try:
        with open_zip(path, what="state file") as archive:
            info = archive.getinfo(DESCRIPTION)
            if info.file_size > MAX_DESCRIPTION_BYTES:
                raise _fail(path, f"{DESCRIPTION} declares {info.file_size} bytes (limit 16 MiB)")
            text = archive.read(info)
    except KeyError:
        raise _fail(path, f"not an ojax state file (no {DESCRIPTION} member)") from None
    except StateFileError:
        raise
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise _fail(path, f"not an ojax state file ({exc})") from None
    try:
        description = json.loads(text.decode("utf-8"))
    except (ValueError, RecursionError) as exc:
        raise _fail(path, f"{DESCRIPTION} is not valid JSON ({type(exc).__name__})") from None
    if not isinstance(description, dict) or description.get("format") != FORMAT:
        raise _fail(path, f"not an ojax state file ({DESCRIPTION} has no format {FORMAT!r})")
    return description


def _check_header(path: Path, description: dict, learner: Any, check_version: bool) -> None:
    version = description.get("format_version")
    if version != FORMAT_VERSION:
        raise _fail(
            path,
            f"format version {version!r}, this ojax reads version {FORMAT_VERSION} (ojax "
            f"{ojax_version()}; the file was written by ojax {description.get('ojax_version')!r})",
        )
    if check_version and description.get("ojax_version") != ojax_version():
        raise _fail(
            path,
            f"written by ojax {description.get('ojax_version')!r}, this is ojax {ojax_version()}; "
            "pass check_version=False to read it anyway",
        )
    if learner is not None:
        want, got = learner_identity(learner), description.get("learner")
        if got is not None and want is not None and got != want:
            raise _fail(path, f"a state of the learner {got}, not of {want}")
        if got is None or want is None:
            raise _fail(
                path,
                f"the learner cannot be compared (file: {got}, given: {want}); only learners "
                "built by an ojax.learner_factory carry an identity: pass learner=None",
            )


def _leaf_specs(path: Path, description: dict) -> list[tuple[str, str, tuple[int, ...]]]:
    specs = description.get("leaves")
    if not isinstance(specs, list) or len(specs) > MAX_LEAVES:
        raise _fail(path, f"{DESCRIPTION}: 'leaves' must be a list of at most {MAX_LEAVES}")
    out = []
    for i, spec in enumerate(specs):
        ok = (
            isinstance(spec, dict)
            and spec.get("name") == f"leaf_{i:05d}"
            and spec.get("dtype") in DTYPES
            and isinstance(spec.get("shape"), list)
            and all(type(n) is int and n >= 0 for n in spec["shape"])
        )
        if not ok:
            raise _fail(
                path,
                f"{DESCRIPTION}: leaf {i} must be {{'name': 'leaf_{i:05d}', 'dtype': one of "
                f"{sorted(DTYPES)}, 'shape': [n, ...]}}, got {str(spec)[:200]}",
            )
        if jax.dtypes.canonicalize_dtype(spec["dtype"]) != np.dtype(spec["dtype"]):
            raise _fail(
                path,
                f"leaf_{i:05d}.npy holds {spec['dtype']}, which JAX would narrow to "
                f"{jax.dtypes.canonicalize_dtype(spec['dtype']).name}: enable float64 first "
                '(jax.config.update("jax_enable_x64", True))',
            )
        out.append((spec["name"], spec["dtype"], tuple(spec["shape"])))
    return out


def _compare(path: Path, got: dict, want: dict, where: str = "state") -> None:
    """Raises on the first place the file's description differs from `like`'s."""
    for key in ("kind", "type", "fields", "keys", "index"):
        if got.get(key) != want.get(key):
            raise _fail(
                path,
                f"{where}: the file holds {key} {got.get(key)!r}, the structure asked for has "
                f"{want.get(key)!r}",
            )
    items, wanted = got.get("items", []), want.get("items", [])
    if len(items) != len(wanted):
        raise _fail(path, f"{where}: {len(items)} items in the file, {len(wanted)} asked for")
    labels = want.get("fields") or want.get("keys") or range(len(wanted))
    for label, g, w in zip(labels, items, wanted):
        _compare(path, g, w, f"{where}.{label}" if isinstance(label, str) else f"{where}[{label}]")


def load_state(
    path: str | Path, *, like: Any, learner: Any = None, check_version: bool = True
) -> Any:
    """Reads a state written by :func:`save_state` (see the module doc for the format).

    Args:
      path: the file.
      like: the template to read into (e.g. `jax.eval_shape(learner.init, params)`, or a
        state of the same learner): the file's tree, dtypes and shapes must be its own, and
        the state comes back in its structure (nothing the file names is looked up).
      learner: refuse a file saved for another learner (compared by identity, see
        :func:`learner_identity`).
      check_version: refuse a file written by another ojax version (default True).

    Returns:
      The state, its leaves as JAX arrays of the saved dtypes.

    Raises:
      StateFileError: naming the file and what differs.
    """
    path = Path(path)
    description = _read_description(path)
    _check_header(path, description, learner, check_version)
    specs = _leaf_specs(path, description)
    tree = description.get("tree")
    want_leaves: list[tuple[str, Any]] = []
    _compare(path, tree if isinstance(tree, dict) else {}, _describe(like, want_leaves, ""))
    if len(want_leaves) != len(specs):
        raise _fail(path, f"{len(specs)} leaves in the file, {len(want_leaves)} asked for")
    for (where, want), (_, dtype, shape) in zip(want_leaves, specs):
        if (tuple(np.shape(want)), np.dtype(want.dtype).name) != (shape, dtype):
            raise _fail(
                path,
                f"state{where}: the file holds {dtype}{list(shape)}, the structure asked "
                f"for {np.dtype(want.dtype).name}{list(np.shape(want))}",
            )
    try:
        arrays = read_arrays(path, [name for name, _, _ in specs])
    except DataError as exc:
        raise StateFileError(str(exc)) from None
    leaves = []
    for name, dtype, shape in specs:
        arr = arrays.get(name)
        if arr is None:
            raise _fail(path, f"the member {name}.npy is missing")
        if (arr.dtype.name, arr.shape) != (dtype, shape):
            raise _fail(
                path,
                f"{name}.npy holds {arr.dtype.name}{list(arr.shape)}, {DESCRIPTION} declares "
                f"{dtype}{list(shape)}",
            )
        leaves.append(jnp.asarray(arr))
    return jax.tree.unflatten(jax.tree.structure(like), leaves)


__all__ = [
    "DTYPES",
    "FORMAT_VERSION",
    "StateFileError",
    "learner_identity",
    "load_state",
    "save_state",
]
