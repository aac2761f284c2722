"""Kernel learners over a pool of examples visited in orders, through :func:`ojax.run`.

A pool (:func:`kernel_pool`) is the pytree of every example of the target stream as the kernel
learners see it, with a leading pool axis: per view a
:class:`~ojax.transfer.kernels.KernelPoint` of the row indices, the Gram matrix at the width the
method uses on that view (or the features) and the frozen source classifier's outputs. An
`order` of pool rows is the stream: :func:`ojax.run` with `order` gathers row `order[t]`
at step `t`, so every permutation of the pool reads the same Gram matrices (never copied) and
:func:`run_kernel` vmaps over the orders only.

Per-step outputs come out of one :class:`~ojax.core.Trace`:

* `loss`: the mistakes, :data:`ojax.losses.zero_one` of the score (`sign(0) = +1`), counted
  before the update;
* `prediction`: the scores;
* `record`: what a `record` function returns: the support vectors after each update
  (:func:`support_vectors_record`, which adds the source classifier's `|SV(h)|`), the weights
  (:func:`weights_record`), or anything read off :class:`~ojax.core.Step`.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ojax.core import Array, Params, Predictor, Step, Trace, learner_factory
from ojax.losses import Loss, zero_one
from ojax.runner import Record, run
from ojax.sparse import SparseRows
from ojax.transfer.homogeneous import HomOTL2State, homotl2_weights
from ojax.transfer.kernels import KernelPoint
from ojax.validation import (
    InputError,
    check_finite,
    check_int,
    check_labels,
    check_range,
    check_shape,
)


def _views(name: str, value: Any, dtype: Any) -> tuple[Array, ...] | None:
    if value is None:
        return None
    items = tuple(value) if isinstance(value, (tuple, list)) else (value,)
    out = []
    for v, item in enumerate(items):
        arr = jnp.asarray(item, dtype)
        check_finite(f"{name}[{v}]", arr)
        out.append(arr)
    return tuple(out)


def _check_pool_shapes(n: int, grams, features, offsets) -> None:
    if grams is not None:
        for v, g in enumerate(grams):
            check_shape(f"grams[{v}]", g, (n, n))
    else:
        for v, f in enumerate(features):
            check_shape(f"features[{v}]", f, (n, None))
    views = len(grams if grams is not None else features)
    if views not in (1, 2):
        raise InputError(f"kernel_pool: 1 or 2 views are supported, got {views}")
    if offsets is not None:
        if len(offsets) != views:
            raise InputError(
                f"offsets: expected {views} view(s) like the kernels, got {len(offsets)}"
            )
        for v, o in enumerate(offsets):
            check_shape(f"offsets[{v}]", o, (n,))


def kernel_pool(
    labels: Any,
    *,
    grams: Any = None,
    features: Any = None,
    offsets: Any = None,
    heads: int | None = None,
    dtype: Any = None,
) -> tuple[Any, Array]:
    """The pool `(xs, ys)` of a kernel learner, for :func:`ojax.run` with `order`.

    Args:
      labels: `(N,)` in {-1, +1}.
      grams: one `(N, N)` Gram matrix or a tuple of them (one per view, at the width the
        method uses on that view), or `None`.
      features: one `(N, d)` array or a tuple of them (`"direct"` mode), or `None`
        (exactly one of `grams` / `features`).
      offsets: one `(N,)` array or a tuple (one per view): the frozen source classifier's
        output on each example; default zeros.
      heads: for a learner with several scores per example
        (:func:`~ojax.transfer.homogeneous_methods`: 4), the labels repeated to `(N, heads)`.
      dtype: floating dtype of the arrays (default: JAX's default float).

    Returns:
      `(xs, ys)`: `xs` a :class:`~ojax.transfer.kernels.KernelPoint` with a leading pool
      axis (`key` the row indices, `row` the Gram matrix or `key` the features,
      `offset`), or a pair of them for two views; `ys` the labels.

    Raises:
      InputError: on labels outside {-1, +1}, NaN / Inf, shapes that do not match, or not
        exactly one of `grams` / `features`.

    Examples:
      >>> import numpy as np
      >>> xs, ys = kernel_pool(np.array([1.0, -1.0]), grams=np.eye(2), offsets=np.array([0.5, 0]))
      >>> print(xs.key, xs.row[1], xs.offset, ys)
      [0 1] [0. 1.] [0.5 0. ] [ 1. -1.]
    """
    dtype = jnp.zeros(()).dtype if dtype is None else dtype
    check_labels("labels", labels)
    ys = jnp.asarray(labels, dtype)
    if ys.ndim != 1:
        raise InputError(f"labels must have shape (N,), got shape {ys.shape}")
    n = ys.shape[0]
    if (grams is None) == (features is None):
        raise InputError("kernel_pool: pass exactly one of grams (Gram mode) or features")
    grams_t, feats_t = _views("grams", grams, dtype), _views("features", features, dtype)
    offsets_t = _views("offsets", offsets, dtype)
    _check_pool_shapes(n, grams_t, feats_t, offsets_t)
    pool_t = grams_t if grams_t is not None else feats_t
    assert pool_t is not None  # exactly one of grams / features (checked above)
    views = len(pool_t)
    if offsets_t is None:
        offsets_t = tuple(jnp.zeros((n,), dtype) for _ in range(views))
    if grams_t is not None:
        keys = jnp.arange(n, dtype=jnp.int32)
        points = tuple(KernelPoint(keys, g, o) for g, o in zip(grams_t, offsets_t))
    else:
        points = tuple(KernelPoint(f, None, o) for f, o in zip(pool_t, offsets_t))
    if heads is not None:
        ys = jnp.repeat(ys[:, None], check_int("heads", heads, 1), axis=1)
    return (points[0] if views == 1 else points), ys


def support_vectors(state: Any) -> Array:
    """The support vectors a kernel learner's state holds (its `support_vectors` property:
    one count, or one per head); `|SV(h)|` of a frozen source classifier is not included."""
    try:
        return state.support_vectors
    except AttributeError:
        raise InputError(
            f"state: a {type(state).__name__} has no support_vectors (a state of the kernel "
            "learners of ojax.transfer has)"
        ) from None


def _base(base: Any) -> int | tuple[int, ...]:
    arr = np.asarray(base)
    if arr.ndim > 1 or not np.issubdtype(arr.dtype, np.integer) or np.any(arr < 0):
        raise InputError(
            "base_support_vectors must be an int >= 0 (or one per head of a multi-head learner), "
            f"got {base!r}"
        )
    return int(arr) if arr.ndim == 0 else tuple(int(v) for v in arr)


@learner_factory
def _support_vectors_record(base: int | tuple[int, ...]) -> Record:
    def record(step: Step) -> Array:
        count = support_vectors(step.new_state) + jnp.asarray(base, jnp.int32)
        return count.astype(jnp.int32)

    return record


def support_vectors_record(base_support_vectors: int | tuple[int, ...] = 0) -> Record:
    """A `record` function of :func:`ojax.run`: the support vectors after each update, plus
    `base_support_vectors` (the frozen source classifier's `|SV(h)|` that the method counts:
    PAIO, OTL, COTL, SCT; 0 for PA and COTL0; one per head for a multi-head learner).

    The same `base_support_vectors` gives the same function (one compilation).

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax import losses, run
      >>> from ojax.transfer import KernelPAParams, kernel_pa, kernel_pool
      >>> xs, ys = kernel_pool(jnp.array([1.0, -1.0, 1.0]), grams=jnp.eye(3))
      >>> _, trace = run(kernel_pa(3, "pool"), KernelPAParams.paper(), xs, ys, losses.zero_one,
      ...                order=jnp.array([0, 1, 0]), record=support_vectors_record(10))
      >>> print(trace.record)
      [11 12 12]
    """
    return _support_vectors_record(_base(base_support_vectors))


def weights_record(step: Step) -> Array:
    """A `record` function of :func:`ojax.run`: the normalized weights `(w_h, w_f)` after
    each update (OTL, OTL(fixed), HomOTL-II; OTL's for `homogeneous_methods`)."""
    state = step.new_state
    if isinstance(state, HomOTL2State):
        return homotl2_weights(state, step.params)
    if not hasattr(state, "weights"):
        raise InputError(
            f"record: a {type(state).__name__} has no weights (OTL, OTL(fixed), HomOTL-II and "
            "homogeneous_methods have)"
        )
    return state.weights


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


def run_kernel(
    learner: Predictor,
    params: Params,
    xs: Any,
    ys: Array,
    orders: Any,
    *,
    base_support_vectors: int | tuple[int, ...] = 0,
    record: Record | None = None,
    keep_predictions: bool = True,
) -> tuple[Any, Trace]:
    """Runs a kernel learner over orders of a pool: :func:`run_orders` with the
    mistakes as the loss and the support vectors recorded.

    Args:
      learner: a kernel :class:`~ojax.core.Predictor` (static).
      params: its params (arrays; new values never recompile).
      xs: the pool's inputs (:func:`kernel_pool`).
      ys: the pool's labels.
      orders: `(T,)` or `(P, T)` int pool rows (0-based): one stream per row, all in one
        vmap that shares the pool.
      base_support_vectors: the source classifier's support vectors counted by the method.
      record: the per-step record (default :func:`support_vectors_record` of
        `base_support_vectors`).
      keep_predictions: keep the scores in `Trace.prediction`.

    Returns:
      The final state(s) and the :class:`~ojax.core.Trace`: `loss` the mistakes (1.0 where
      `sign(score) != y`), `prediction` the scores, `record` the support vectors after
      each step; leaves `(T, ...)` or `(P, T, ...)`.

    Raises:
      InputError: on orders outside the pool (named `orders`), a view split that does not fit
        the learner, bad params or data; before anything runs.
    """
    record = support_vectors_record(base_support_vectors) if record is None else record
    return run_orders(
        learner,
        params,
        xs,
        ys,
        zero_one,
        orders,
        record=record,
        keep_predictions=keep_predictions,
    )


def permutations(key: Array, num: int, length: int, pool: int | None = None) -> Array:
    """`num` random orders: each a permutation of `range(pool)` cut to `length`.

    Examples:
      >>> import jax
      >>> print(permutations(jax.random.key(0), 2, 3).sum(axis=1))
      [3 3]
    """
    pool = length if pool is None else pool
    keys = jax.random.split(key, num)
    return jax.vmap(lambda k: jax.random.permutation(k, pool)[:length])(keys).astype(jnp.int32)


__all__ = [
    "kernel_pool",
    "permutations",
    "run_kernel",
    "run_orders",
    "support_vectors",
    "support_vectors_record",
    "weights_record",
]
