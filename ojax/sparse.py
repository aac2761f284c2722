"""Sparse rows: SciPy matrices as padded index / value arrays.

Sparse inputs are padded index / value arrays, one row per example: row `i` holds its
non-zeros in `indices[i, :nnz_i]` / `values[i, :nnz_i]` and padding `(0, 0.0)` after them.
A dot product is a gather, an update a scatter-add, so a step costs `O(k)` (`k` the widest
row) instead of `O(d)`; padding contributes `w[0] * 0` and adds `0` to `w[0]`.

`ojax.transfer.linear_pa(dim, sparse=True)` is linear PA-I on such rows, and
:func:`ojax.transfer.run_orders` runs shuffles of one dataset over its single copy. SciPy is
imported only when a sparse matrix is met (:func:`issparse`, :func:`scipy_sparse`): its import
is ~0.2 s of every `ojax` command that never reads one.
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType
from typing import Any, NamedTuple

import jax.numpy as jnp
import numpy as np

from ojax.core import Array
from ojax.validation import InputError, check_finite, check_int


def issparse(x: Any) -> bool:
    """`scipy.sparse.issparse(x)`, without importing SciPy: an object can only be a SciPy
    sparse matrix once `scipy.sparse` is imported."""
    module = sys.modules.get("scipy.sparse")
    return module is not None and bool(module.issparse(x))


def scipy_sparse() -> ModuleType:
    """The `scipy.sparse` module (imported on first use)."""
    return importlib.import_module("scipy.sparse")


class SparseRows(NamedTuple):
    """Padded sparse rows (a pytree: index it with `rows[t]`-style `jax.tree.map`)."""

    indices: Array  # (n, k) int32 feature indices in [0, dim); padding 0
    values: Array  # (n, k) feature values; padding 0.0


def sparse_rows(x: Any, width: int | None = None, dtype: Any = jnp.float32) -> SparseRows:
    """Padded index / value arrays of a scipy sparse matrix or a dense `(n, d)` array.

    Args:
      x: `(n, d)` scipy sparse matrix or array-like; duplicate entries are summed.
      width: `k`, the padded row length (default: the largest number of non-zeros in a row).
      dtype: dtype of `values`.

    Returns:
      :class:`SparseRows` with `(n, k)` leaves.

    Examples:
      >>> import numpy as np
      >>> rows = sparse_rows(np.array([[0.0, 2.0, 0.0], [1.0, 0.0, 3.0]]))
      >>> print(rows.indices.tolist(), rows.values.tolist())
      [[1, 0], [0, 2]] [[2.0, 0.0], [1.0, 3.0]]
    """
    if issparse(x):
        csr = scipy_sparse().csr_matrix(x, copy=True)
    else:
        arr = np.asarray(x)
        if arr.ndim != 2:
            raise InputError(f"x must be a 2-d matrix (n, d), got shape {arr.shape}")
        csr = scipy_sparse().csr_matrix(arr)
    csr.sum_duplicates()
    csr.eliminate_zeros()
    check_finite("x", csr.data)
    n = csr.shape[0]
    counts = np.diff(csr.indptr)
    k = int(counts.max()) if n else 0
    if width is not None:
        width = check_int("width", width, 1)
        if width < k:
            raise InputError(f"width must be >= the largest row's non-zeros {k}, got {width}")
        k = width
    k = max(k, 1)
    indices = np.zeros((n, k), np.int32)
    values = np.zeros((n, k), np.float64)
    pos = np.arange(csr.nnz) - np.repeat(csr.indptr[:-1], counts)
    rows = np.repeat(np.arange(n), counts)
    indices[rows, pos] = csr.indices
    values[rows, pos] = csr.data
    return SparseRows(jnp.asarray(indices), jnp.asarray(values, dtype))


def sparse_dot(w: Array, indices: Array, values: Array) -> Array:
    """`<w, x>` for the sparse row `x` given by `indices` / `values`: a gather."""
    return jnp.dot(w[indices], values.astype(w.dtype))


__all__ = ["SparseRows", "sparse_dot", "sparse_rows"]
