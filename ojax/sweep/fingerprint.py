"""The fingerprint of a sweep: a digest of everything that decides its numbers.

`fn` (module, qualified name, code, closure values, defaults; a learner or cell that a
:func:`~ojax.learner_factory` built, by its factory and arguments), the user's `config`, the grid,
tasks, data, number of seeds, key data, output shapes and dtypes, the versions of jax and ojax,
and digests of ojax's source files and of the file defining `fn`: an edited library or script
never reuses old chunks. The chunk size and the devices change no number and are left out.
"""

from __future__ import annotations

from typing import Any

import jax

from ojax.programs.identity import (
    array_digest,
    describe,
    digest,
    jsonable,
    ojax_source_digest,
    ojax_version,
    shape_signature,
    source_digest,
)

__all__ = [  # the description itself lives in ojax.programs.identity (below the algorithms)
    "array_digest",
    "configuration",
    "describe",
    "digest",
    "jsonable",
    "manifest",
    "ojax_source_digest",
    "ojax_version",
    "shape_signature",
    "source_digest",
]


def configuration(
    fn: Any,
    config: Any,
    kind: str,
    axes: list,
    inputs: tuple[Any, Any, Any],
    num_seeds: int,
    output: list,
) -> dict[str, Any]:
    """The description whose :func:`digest` names a sweep's chunk folder.

    `axes` are the grid's :class:`~ojax.sweep.grid.Axis`; `inputs` are `(tasks, data,
    keys)`; `output` is `[treedef, [[shape, dtype], ...]]` of one combination's output.
    """
    tasks, data, keys = inputs
    return {
        "fn": describe(fn),
        "config": describe(config),
        "grid_kind": kind,
        "axes": [[a.name, describe(a.values)] for a in axes],
        "tasks": describe(tasks),
        "data": describe(data),
        "num_seeds": int(num_seeds),
        "key": array_digest(keys),
        "output": output,
        "jax": jax.__version__,
        "ojax": ojax_version(),
        "ojax_source": ojax_source_digest(),
        "fn_source": source_digest(fn),
        # jax sets its flags on Config at run time: its stubs do not know jax_enable_x64
        "x64": bool(jax.config.jax_enable_x64),  # type: ignore[attr-defined]
    }


def manifest(description: dict[str, Any], name: str, fn: Any, config: Any, layout: Any) -> dict:
    """The `sweep.json` of a chunk folder: the hash, the layout and what it was made of."""
    return {
        "hash": digest(description),
        "name": name,
        "fn": f"{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', repr(fn))}",
        "axes": list(layout.axis_names),
        "sizes": list(layout.sizes),
        "num_combinations": layout.total,
        "output": description["output"],
        "jax": jax.__version__,
        "ojax": description["ojax"],
        "ojax_source": description["ojax_source"],
        "fn_source": description["fn_source"],
        "parts": {k: digest(v)[:16] for k, v in description.items()},
        "x64": description["x64"],
        "config": jsonable(config),
    }
