"""Reading a user's `.npz` file as data: only the arrays asked for, each checked before it is
inflated (:func:`ojax.fileio.read_arrays`, the one reader of `.npz` files; re-exported here
beside the dataset loaders that use it)."""

from __future__ import annotations

from ojax.fileio import members, read_arrays, size_limit

__all__ = ["members", "read_arrays", "size_limit"]
