"""The program store, kept here under its former name: it lives in :mod:`ojax.programs` (below
the algorithms, which use it too)."""

from ojax.programs import (
    FOLDER,
    entry_name,
    exported_program,
    folder,
    jit,
    load_exported,
    load_value,
    save_exported,
    save_value,
    shapes_from_data,
    shapes_to_data,
    tree_from_data,
    tree_to_data,
)

__all__ = [
    "FOLDER",
    "entry_name",
    "exported_program",
    "folder",
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
