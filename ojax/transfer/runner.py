"""Running kernel learners over permuted target streams: one ``lax.scan``, permutations vmapped.

A :class:`KernelStream` holds a pool of examples (labels, the Gram matrix of each view or the
features, and the frozen source outputs) and an ``order`` picks the stream: step ``t`` sees the
pool row ``order[t]``. Every permutation of the same pool shares the same Gram matrices, so
:func:`run_permutations` vmaps over the orders only (``in_axes=(None, None, None, 0)``) and the
Gram matrices are read, never copied. Mistakes are counted before the update (progressive
validation), with ``sign(0) = +1``.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ojax.core import Array
from ojax.transfer.kernels import KernelPoint
from ojax.transfer.learners import KernelLearner
from ojax.validation import InputError, check_finite, check_labels, check_shape


class KernelStream(NamedTuple):
    """A pool of examples for the kernel learners (one or two views).

    Attributes:
      labels: ``(N,)`` labels in {-1, +1}.
      grams: ``"gram"`` mode: a tuple with one ``(N, N)`` Gram matrix per view (at the width
        the method uses on that view); ``None`` in ``"direct"`` mode.
      features: ``"direct"`` mode: a tuple with one ``(N, d_v)`` array per view; else ``None``.
      offsets: a tuple with one ``(N,)`` array per view: the frozen source classifier's output
        on each example (zeros for a view without one).
      base_support_vectors: ``()`` int32, the support vectors of the frozen source classifier
        that this method counts (``|SV(h)|`` for PAIO, OTL, COTL, SCT; 0 for PA, COTL0); ``(H,)``
        (one per head) for a multi-head learner.
    """

    labels: Array
    grams: tuple[Array, ...] | None
    features: tuple[Array, ...] | None
    offsets: tuple[Array, ...]
    base_support_vectors: Array


class KernelTrace(NamedTuple):
    """Per-step record of a run (time on the last axis; a multi-head learner adds a trailing
    head axis)."""

    score: Array  # (T,) the score s_t; the prediction is sign(s_t) with sign(0) = +1
    mistake: Array  # (T,) 1.0 where sign(s_t) != y_t (counted before the update), else 0.0
    support_vectors: Array  # (T,) int32 support vectors after step t (h's included)


def kernel_stream(
    labels: Any,
    *,
    grams: Any = None,
    features: Any = None,
    offsets: Any = None,
    base_support_vectors: int | tuple[int, ...] = 0,
    dtype: Any = None,
) -> KernelStream:
    """Builds and validates a :class:`KernelStream` (call it on concrete arrays).

    Args:
      labels: ``(N,)`` in {-1, +1}.
      grams: one ``(N, N)`` Gram matrix or a tuple of them (one per view), or ``None``.
      features: one ``(N, d)`` array or a tuple of them, or ``None`` (exactly one of
        ``grams`` / ``features``).
      offsets: one ``(N,)`` array or a tuple, default zeros for every view.
      base_support_vectors: ``|SV(h)|`` counted by the method (>= 0); a sequence of them, one
        per head, for a learner whose ``predict`` returns several scores
        (:func:`~ojax.transfer.learners.homogeneous_methods`).
      dtype: floating dtype of the arrays (default: JAX's default float).

    Raises:
      InputError: on labels outside {-1, +1}, NaN / Inf, or shapes that do not match.
    """
    dtype = jnp.zeros(()).dtype if dtype is None else dtype
    check_labels("labels", labels)
    labels = jnp.asarray(labels, dtype)
    if labels.ndim != 1:
        raise InputError(f"labels must have shape (N,), got shape {labels.shape}")
    n = labels.shape[0]
    if (grams is None) == (features is None):
        raise InputError("kernel_stream: pass exactly one of grams (Gram mode) or features")

    def views(name: str, value: Any) -> tuple[Array, ...] | None:
        if value is None:
            return None
        items = tuple(value) if isinstance(value, (tuple, list)) else (value,)
        out = []
        for v, item in enumerate(items):
            arr = jnp.asarray(item, dtype)
            check_finite(f"{name}[{v}]", arr)
            out.append(arr)
        return tuple(out)

    grams_t = views("grams", grams)
    feats_t = views("features", features)
    num_views = len(grams_t if grams_t is not None else feats_t)
    if grams_t is not None:
        for v, g in enumerate(grams_t):
            check_shape(f"grams[{v}]", g, (n, n))
    else:
        for v, f in enumerate(feats_t):
            check_shape(f"features[{v}]", f, (n, None))
    if offsets is None:
        offsets_t = tuple(jnp.zeros((n,), dtype) for _ in range(num_views))
    else:
        offsets_t = views("offsets", offsets)
        if len(offsets_t) != num_views:
            raise InputError(
                f"offsets: expected {num_views} view(s) like the kernels, got {len(offsets_t)}"
            )
        for v, o in enumerate(offsets_t):
            check_shape(f"offsets[{v}]", o, (n,))
    if num_views not in (1, 2):
        raise InputError(f"kernel_stream: 1 or 2 views are supported, got {num_views}")
    base = np.asarray(base_support_vectors)
    if base.ndim > 1 or not np.issubdtype(base.dtype, np.integer) or np.any(base < 0):
        raise InputError(
            "base_support_vectors must be an int >= 0 (or one per head of a multi-head learner), "
            f"got {base_support_vectors!r}"
        )
    return KernelStream(labels, grams_t, feats_t, offsets_t, jnp.asarray(base, jnp.int32))


def _point(stream: KernelStream, view: int, index: Array) -> KernelPoint:
    offset = stream.offsets[view][index]
    if stream.grams is not None:
        return KernelPoint(index, stream.grams[view][index], offset)
    return KernelPoint(stream.features[view][index], None, offset)


def _example(stream: KernelStream, index: Array) -> Any:
    points = tuple(_point(stream, v, index) for v in range(len(stream.offsets)))
    return points[0] if len(points) == 1 else points


def _scan(learner: KernelLearner, params: Any, stream: KernelStream, order: Array):
    def step(state, index):
        x = _example(stream, index)
        y = stream.labels[index]
        score = learner.predict(state, params, x)
        label = jnp.where(score >= 0, 1.0, -1.0).astype(y.dtype)
        mistake = (label != y).astype(y.dtype)
        state = learner.update(state, params, x, y)
        svs = learner.support_vectors(state) + stream.base_support_vectors
        return state, (score, mistake, svs.astype(jnp.int32))

    state, (scores, mistakes, svs) = jax.lax.scan(step, learner.init(params), order)
    return state, KernelTrace(scores, mistakes, svs)


@functools.partial(jax.jit, static_argnames=("learner",))
def _run_kernel(learner, params, stream, order):
    return _scan(learner, params, stream, order)


@functools.partial(jax.jit, static_argnames=("learner", "final_state"))
def _run_permutations(learner, params, stream, orders, final_state):
    state, trace = jax.vmap(_scan, in_axes=(None, None, None, 0))(learner, params, stream, orders)
    return (state if final_state else None), trace


def _check_order(name: str, order: Any, n: int, ndim: int) -> Array:
    arr = np.asarray(order)
    if arr.ndim != ndim or not np.issubdtype(arr.dtype, np.integer):
        raise InputError(
            f"{name} must be an integer array with {ndim} axis/axes, got dtype {arr.dtype} and "
            f"shape {arr.shape}"
        )
    if arr.size and (arr.min() < 0 or arr.max() >= n):
        raise InputError(
            f"{name} must index the pool of {n} examples, got values in [{arr.min()}, {arr.max()}]"
        )
    return jnp.asarray(arr, jnp.int32)


def _check_views(learner: KernelLearner, stream: KernelStream) -> None:
    views = len(stream.offsets)
    if views != learner.num_views:
        raise InputError(
            f"stream: the learner takes {learner.num_views} view(s) per example, the stream "
            f"has {views} (a mismatched view split)"
        )


def run_kernel(
    learner: KernelLearner, params: Any, stream: KernelStream, order: Any
) -> tuple[Any, KernelTrace]:
    """Runs ``learner`` over the pool rows ``order`` (one ``lax.scan``, jitted).

    Args:
      learner: a :class:`~ojax.transfer.learners.KernelLearner` (static).
      params: its params (arrays; new values never recompile).
      stream: the pool (:func:`kernel_stream`).
      order: ``(T,)`` int pool indices, the stream's order.

    Returns:
      The final state and the :class:`KernelTrace`.
    """
    learner.check_params(params)
    _check_views(learner, stream)
    order = _check_order("order", order, stream.labels.shape[0], 1)
    return _run_kernel(learner, params, stream, order)


def run_permutations(
    learner: KernelLearner,
    params: Any,
    stream: KernelStream,
    orders: Any,
    *,
    final_state: bool = False,
) -> tuple[Any, KernelTrace]:
    """Runs ``learner`` over several orders of the same pool in one vmap (one compilation).

    Args:
      orders: ``(P, T)`` int pool indices, one stream per row (e.g. 20 permutations).
      final_state: also return the final states (memory: ``P`` buffers).

    Returns:
      ``(states or None, trace)`` with trace leaves of shape ``(P, T)``.
    """
    learner.check_params(params)
    _check_views(learner, stream)
    orders = _check_order("orders", orders, stream.labels.shape[0], 2)
    return _run_permutations(learner, params, stream, orders, final_state)


def permutations(key: Array, num: int, length: int, pool: int | None = None) -> Array:
    """``num`` random orders: each a permutation of ``range(pool)`` cut to ``length``."""
    pool = length if pool is None else pool
    keys = jax.random.split(key, num)
    return jax.vmap(lambda k: jax.random.permutation(k, pool)[:length])(keys).astype(jnp.int32)
