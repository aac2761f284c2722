"""Traced programs kept on disk, so that a warm process skips tracing and lowering.

JAX's persistent compilation cache (:mod:`ojax.programs.cache`) spares XLA's work, but every process
still traces each sweep cell twice (once alone, for its output shapes; once vmapped, to build
the chunk program) and lowers it to StableHLO: seconds per cell, most of a warm run. Beside
that cache, in `ojax-programs/`, this module keeps for each chunk program its :mod:`jax.export`
serialization (and that of each cell on one combination, which gives its output shapes). A
process that finds them compiles the stored module directly, which the compilation cache then
serves.

The store holds data, never code: programs as :mod:`jax.export` serializations (their input and
output tree structures included), read back without `pickle`; a named tuple in a stored
structure is one of jax.export's registry, to which the `NamedTuple` classes of the ojax and
optax modules imported so far are added (:func:`register_named_tuples`): nothing a file names is
imported or looked up elsewhere. An entry that does not parse or check is ignored, traced again
and replaced.

An entry's name is the digest of everything the program depends on: the cell function as the
resume fingerprint describes it (:func:`ojax.programs.identity.describe`: code, closure values,
defaults), the digest of ojax's sources (every file of the package, as this process imported
them), the input shapes and dtypes, the layout and chunk size, JAX's version and the settings
that change a trace, the platform and the compiler options. Anything that cannot be described,
exported or read falls back to tracing as usual (the fallback is not an error); so does a process
whose loaded ojax modules no longer match their files (ojax edited while it runs:
:func:`ojax.programs.identity.changed_sources`). Only cells made of ojax's own functions are
kept (a function of a user's script or notebook may read globals its description does not hold);
multi-device meshes always trace. `OJAX_PROGRAM_CACHE=off` turns the store off.
"""

from __future__ import annotations

import functools
import hashlib
import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import jax

from ojax.fileio import DataError, atomic_write, open_regular
from ojax.programs.identity import CHANGED, describe, digest, ojax_source_digest

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
    source = ojax_source_digest()
    if source.startswith(CHANGED):  # ojax edited while this process runs: its programs are its own
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
            source,
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


_REGISTERED: set[type] = set()
_PACKAGES = ("ojax", "optax")  # whose named tuples a stored structure may hold


def register_named_tuples() -> None:
    """Registers for :mod:`jax.export`'s serialization, as `"module:QualName"`, every
    `NamedTuple` class of the ojax and optax modules imported so far (once each; a copy of
    `sys.modules` and of each module's names: another thread may be importing)."""
    _register(_snapshot(sys.modules))  # two threads at once: the second's ValueError is caught


def _snapshot(names: dict[str, Any]) -> dict[str, Any]:
    """A copy of `names` (`sys.modules`, a module's namespace) that another thread may change
    meanwhile: a copy that such a change interrupts (`RuntimeError`) is taken again."""
    for _ in range(99):
        try:
            return names.copy()
        except RuntimeError:  # changed while it was being copied
            continue
    return names.copy()


def _register(modules: dict[str, Any]) -> None:
    for name, module in modules.items():
        if module is None or name.split(".")[0] not in _PACKAGES:
            continue
        for value in _snapshot(vars(module)).values():
            if (
                isinstance(value, type)
                and value not in _REGISTERED
                and value.__module__ == name
                and issubclass(value, tuple)
                and isinstance(getattr(value, "_fields", None), tuple)
            ):
                _REGISTERED.add(value)
                try:
                    jax.export.register_namedtuple_serialization(
                        value, serialized_name=f"{name}:{value.__qualname__}"
                    )
                except ValueError:  # registered already (by its author, or another thread)
                    pass


def load_exported(name: str | None) -> jax.export.Exported | None:
    """A stored chunk program, or `None`."""
    data = _read(_path(name, "jaxexport"))
    if data is None:
        return None
    register_named_tuples()
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
    register_named_tuples()
    try:
        data = bytes(exported.serialize())
    except Exception:  # flatbuffers missing, a custom pytree class, an unserializable effect
        return
    _write(path, data)


def _signature(leaves: list) -> tuple:
    return tuple(
        (tuple(a.shape), str(a.dtype), bool(getattr(a, "weak_type", False)))
        for a in map(jax.typeof, leaves)
    )


def compiler_options(options: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The XLA options a program prefers (e.g. `{"xla_backend_optimization_level": 1}`), less
    those the process's `XLA_FLAGS` sets (`--NAME=VALUE`): an option given there holds for
    every program of the process, and a program's preference yields to it; `None` when none
    is left (what `compile(compiler_options=...)` and `jax.jit` take for none).

    Examples:
      >>> from ojax import programs
      >>> programs.compiler_options({"xla_cpu_enable_fast_math": False})  # not in XLA_FLAGS
      {'xla_cpu_enable_fast_math': False}
    """
    given = {flag.split("=", 1)[0].lstrip("-") for flag in os.environ.get("XLA_FLAGS", "").split()}
    kept = {name: value for name, value in (options or {}).items() if name not in given}
    return kept or None


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
    if "compiler_options" in options:  # those XLA_FLAGS sets are left to it
        options = {**options, "compiler_options": compiler_options(options["compiler_options"])}
    jitted = jax.jit(fn, **options)
    names: dict[tuple, str | None] = {}  # (treedef, signature) -> entry name: described once
    loaded: dict[str, Callable] = {}
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
            loaded[name] = jax.jit(stored.call, **options)
        return loaded[name](*args)

    return call


def exported_program(name: str, jitted: Any, args: tuple) -> jax.export.Exported | None:
    """The :mod:`jax.export` program of `jitted(*args)` (over the same pytrees): loaded from
    the store, else traced, exported and stored; `None` when it cannot be exported (e.g. a
    host callback): call `jitted` as usual then."""
    exported = load_exported(name)
    if exported is not None:
        return exported
    try:
        exported = jax.export.export(jitted)(*args)
    except Exception:
        return None
    save_exported(name, exported)
    return exported


__all__ = [
    "compiler_options",
    "entry_name",
    "exported_program",
    "folder",
    "jit",
    "load_exported",
    "register_named_tuples",
    "save_exported",
]
