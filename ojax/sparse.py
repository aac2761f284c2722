"""Sparse rows and shuffled streams over one shared dataset.

Sparse inputs are padded index / value arrays, one row per example: row `i` holds its
non-zeros in `indices[i, :nnz_i]` / `values[i, :nnz_i]` and padding `(0, 0.0)` after them.
A dot product is a gather, an update a scatter-add, so a step costs `O(k)` (`k` the widest
row) instead of `O(d)`; padding contributes `w[0] * 0` and adds `0` to `w[0]`.

Many streams that are shuffles of one dataset share its single copy: :func:`run_orders` runs
:func:`ojax.run` with each stream's row `order` (step `t` gathers row `order[t]`), vmapped
over the orders, so memory is one dataset plus `S n` integers, not `S` copies of the data.
`ojax.transfer.linear_pa(dim, sparse=True)` is linear PA-I on such rows. SciPy is imported only
when a sparse matrix is met (:func:`issparse`, :func:`scipy_sparse`): its import is ~0.2 s of
every `ojax` command that never reads one.
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ojax.core import Array, Params, Predictor, Trace
from ojax.losses import Loss
from ojax.runner import Record, run
from ojax.validation import InputError, check_finite, check_int, check_range


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


def _check_orders(orders: Any, n: int) -> tuple[Array, bool]:
    """`orders` as int32 and whether one order `(m,)` was given (a traced order's range is
    checked under :func:`ojax.checked` only)."""
    if orders is not None and not isinstance(orders, (jax.Array, jax.core.Tracer)):
        orders = np.asarray(orders)
    single = orders is None or jnp.ndim(orders) == 1
    orders = jnp.arange(n, dtype=jnp.int32) if orders is None else orders
    dtype = jnp.result_type(orders)
    if jnp.ndim(orders) not in (1, 2) or not jnp.issubdtype(dtype, jnp.integer):
        raise InputError(
            f"orders must be an integer array of shape (m,) or (S, m) of rows of the {n} "
            f"examples, got shape {jnp.shape(orders)} and dtype {dtype}"
        )
    if 0 in jnp.shape(orders):
        raise InputError(f"orders must hold at least one row index, got shape {jnp.shape(orders)}")
    check_range("orders", orders, 0, n - 1)
    orders = jnp.asarray(orders, jnp.int32)
    return orders, single


def run_orders(
    predictor: Predictor,
    params: Params,
    xs: Any,
    ys: Array,
    loss: Loss,
    orders: Array | None = None,
    *,
    record: Record | None = None,
    keep_predictions: bool = True,
    unroll: int = 1,
) -> tuple[Any, Trace]:
    """Progressive validation of `predictor` on streams that are row orders of one dataset.

    Stream `s` visits the rows `orders[s, 0], orders[s, 1], ...` of the shared `(xs, ys)`:
    at each step it predicts, records `loss` of the prediction, then updates. A thin wrapper
    of :func:`ojax.run` with `order`, vmapped over the orders: the data is read by every
    stream and never copied per stream (memory: one dataset plus `S m` integers).

    Args:
      predictor: a :class:`~ojax.core.Predictor` taking one row of `xs` (static).
      params: its hyperparameters (shared by the streams).
      xs: `(n, ...)` rows: dense rows, :class:`SparseRows` (e.g. for
        `ojax.transfer.linear_pa(dim, sparse=True)`) or any pytree with a leading example
        axis (the kernel points of `ojax.transfer.kernel_pool`).
      ys: `(n, ...)` labels.
      loss: the loss recorded for each prediction (static).
      orders: `(m,)` one order or `(S, m)` one per stream, integers in `[0, n)`
        (0-based; default: the rows in their given order).
      record: static `Step -> pytree` recorded at every step (see :func:`ojax.run`).
      keep_predictions: store the predictions in `Trace.prediction`.
      unroll: steps per iteration of the compiled loop (see :func:`ojax.run`).

    Returns:
      The final states and the :class:`~ojax.core.Trace`, with a leading stream axis when
      `orders` has one.

    Raises:
      InputError: on orders that are not integers of rows of `xs` (named `orders`), and
        on anything :func:`ojax.run` refuses.

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax import losses
      >>> from ojax.transfer import LinearPAParams, linear_pa
      >>> xs, ys = jnp.array([[1.0, 0.0], [0.0, 1.0]]), jnp.array([1.0, -1.0])
      >>> _, trace = run_orders(linear_pa(2), LinearPAParams(jnp.array(1.0)), xs, ys,
      ...                       losses.zero_one, jnp.array([[0, 1, 0], [1, 0, 1]]))
      >>> print(trace.loss)
      [[0. 1. 0.]
       [1. 0. 0.]]
    """
    leaves = jax.tree.leaves(xs)
    if not leaves or jnp.ndim(leaves[0]) < 1:
        raise InputError("xs must be (n, d) rows or SparseRows with a leading example axis")
    n = jnp.shape(leaves[0])[0]
    if isinstance(xs, SparseRows):
        if not jnp.issubdtype(jnp.result_type(xs.indices), jnp.integer):
            raise InputError(
                f"xs.indices must be integers, got dtype {jnp.result_type(xs.indices)}"
            )
        check_range("xs.indices", xs.indices, 0)
    orders, single = _check_orders(orders, n)

    def one(order: Array) -> tuple[Any, Trace]:
        return run(
            predictor,
            params,
            xs,
            ys,
            loss,
            order=order,
            record=record,
            keep_predictions=keep_predictions,
            unroll=unroll,
        )

    return one(orders) if single else jax.vmap(one)(orders)


__all__ = ["SparseRows", "run_orders", "sparse_dot", "sparse_rows"]
