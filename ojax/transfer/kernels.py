"""Kernels, the Gram matrix, and a kernel expansion in a fixed-capacity support-vector buffer.

A kernel classifier is `f(x) = sum_j alpha_j k(x_j, x)`. To run under `jit` / `scan` /
`vmap` the expansion lives in a :class:`SVBuffer` of static capacity with a count of the
support vectors added so far (unused slots hold a zero coefficient, so they add nothing).

Three modes give the kernel values `k(x_j, x)` of the buffer against the current example:

* `"gram"`: the stream fits in memory. The squared distances of the whole pool are computed
  once with ONE matrix product, `D_ij = n_i + n_j - 2 <x_i, x_j>` with `n_i = ||x_i||^2`
  (:func:`squared_distances`), the Gram matrix `K = exp(-D / (2 sigma^2))` once per width
  (:func:`gram_matrix`), and both are shared by every permutation and every method. An example
  is then its row index in the pool; the buffer stores indices and reads `K[i, keys]`.
* `"pool"`: the Gram matrix as in `"gram"`, with the expansion stored by POOL INDEX: the
  buffer's capacity is the pool size `N`, slot `j` is pool row `j` (`keys = arange(N)`)
  and `coef` is a dense vector over the pool, so `f(x_i) = K[i, :] @ coef` is a contiguous
  row read and a dot product, and an update is `coef[i] += value`. There is no budget (the
  whole pool fits); an example met twice accumulates in its slot, which is the same expansion.
  This is the fast layout when the whole stream is known in advance.
* `"direct"`: kernel values are computed on the fly from the stored vectors (the buffer
  stores `(capacity, d)` features). Use it when the pool does not fit in memory.

Budget (`"gram"` and `"direct"` modes): `capacity` may be smaller than the stream. What
happens when the buffer is full is a static choice (`when_full`):

* `"replace_oldest"` (default): the new support vector overwrites the oldest one (a ring
  buffer), so the expansion keeps the `capacity` most recent support vectors;
* `"discard"`: the buffer stops accepting; later updates leave the expansion unchanged.

Either way `count` keeps counting every support vector ever added and the number held is
`min(count, capacity)` (:func:`held`). With `capacity >= stream length` (the default of the
experiments) the budget never binds and the expansion is exact.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from ojax.core import Array
from ojax.sparse import issparse
from ojax.validation import InputError, check_choice, check_int, check_positive

KERNELS = ("gaussian", "linear")
MODES = ("gram", "pool", "direct")
WHEN_FULL = ("replace_oldest", "discard")


def gaussian_kernel(a: Array, b: Array, width: Array) -> Array:
    """`exp(-||a - b||^2 / (2 width^2))` along the last axis (broadcasting leading axes).

    Examples:
      >>> import jax.numpy as jnp
      >>> print(round(float(gaussian_kernel(jnp.zeros(2), jnp.ones(2), jnp.array(1.0))), 4))
      0.3679
    """
    sq = jnp.sum((a - b) ** 2, axis=-1)
    return jnp.exp(-sq / (2.0 * width**2))


def linear_kernel(a: Array, b: Array, width: Array | None = None) -> Array:
    """`<a, b>` along the last axis (`width` is ignored; kept for a uniform signature)."""
    del width
    return jnp.sum(a * b, axis=-1)


def kernel_function(kernel: str):
    """The kernel `(a, b, width) -> k(a, b)` named `kernel` (`"gaussian"` / `"linear"`)."""
    check_choice("kernel", kernel, KERNELS)
    return gaussian_kernel if kernel == "gaussian" else linear_kernel


def cross_products(a: Any, b: Any | None = None) -> np.ndarray | Array:
    """`<a_i, b_j>` for all rows, as one matrix product (dense, JAX or scipy sparse inputs)."""
    b = a if b is None else b
    if issparse(a) or issparse(b):
        prod = a @ b.T
        prod = prod.toarray() if issparse(prod) else np.asarray(prod)
        return prod
    a = jnp.asarray(a)
    b = jnp.asarray(b)
    return jnp.matmul(a, b.T, precision=jax.lax.Precision.HIGHEST)


def squared_norms(a: Any) -> np.ndarray | Array:
    """`||a_i||^2` for every row."""
    if issparse(a):
        return np.asarray(a.multiply(a).sum(axis=1)).ravel()
    a = jnp.asarray(a)
    return jnp.sum(a * a, axis=1)


def squared_distances(a: Any, b: Any | None = None, dtype: Any = None) -> Array:
    """All pairwise `||a_i - b_j||^2` from one matrix product: `n_a + n_b - 2 a b^T`.

    Rounding can make an entry slightly negative; it is clipped at 0 (and the diagonal of
    `squared_distances(a)` is set to exactly 0).

    Args:
      a: `(n, d)` rows (NumPy, JAX, or a scipy sparse matrix: the product then stays sparse
        until the `(n, m)` result, which is what makes the 62061-word newsgroup4 cheap).
      b: `(m, d)` rows, default `a`.
      dtype: the result's floating dtype (default: JAX's default float).

    Returns:
      `(n, m)` squared distances as a JAX array.

    Examples:
      >>> import numpy as np
      >>> print(squared_distances(np.array([[0.0, 0.0], [3.0, 4.0]]))[0, 1])
      25.0
    """
    same = b is None
    b_rows = a if same else b
    cross = cross_products(a, b_rows)
    na = squared_norms(a)
    nb = na if same else squared_norms(b_rows)
    return distances_from_products(cross, na, nb, same, dtype)


def distances_from_products(
    cross: Any, norms_a: Any, norms_b: Any, same: bool, dtype: Any = None
) -> Array:
    """`max(n_a + n_b - 2 <a, b>, 0)` from the cross products and squared norms, in
    `dtype` (the diagonal set to exactly 0 when `same`: the rows against themselves).
    Traceable: :func:`squared_distances` calls it eagerly, the set-up program of
    :mod:`ojax.transfer.prepare` under `jit`."""
    if dtype is None:
        dtype = jnp.zeros(()).dtype  # float32 unless x64 is on
    cross = jnp.asarray(cross, dtype)
    na = jnp.asarray(norms_a, dtype)
    nb = jnp.asarray(norms_b, dtype)
    dist = jnp.maximum(na[:, None] + nb[None, :] - 2.0 * cross, 0.0)
    if same:
        dist = dist * (1.0 - jnp.eye(dist.shape[0], dtype=dist.dtype))
    return dist


def gram_matrix(sq_dist: Array, width: ArrayLike, kernel: str = "gaussian") -> Array:
    """`K = exp(-D / (2 width^2))` from precomputed squared distances (Gaussian kernel).

    For the linear kernel use :func:`cross_products` directly (`kernel="linear"` raises).
    """
    if kernel != "gaussian":
        raise InputError(f"kernel: gram_matrix builds Gaussian Gram matrices, got {kernel!r}")
    check_positive("width", width)
    sq_dist = jnp.asarray(sq_dist)
    width = jnp.asarray(width, sq_dist.dtype)
    return jnp.exp(-sq_dist / (2.0 * width**2))


class KernelPoint(NamedTuple):
    """One example as the kernel learners see it.

    Attributes:
      key: `"gram"` mode: the example's row index in the pool (int32, shape ()); `"direct"`
        mode: its features, shape `(d,)`.
      row: `"gram"` mode: the Gram row `K[key, :]` at this learner's width, shape `(N,)`;
        `None` in `"direct"` mode.
      offset: the output of a frozen source classifier at this example (0 when there is none),
        shape (). It is computed once for the whole pool because the source classifier never
        changes (:func:`expansion_outputs`).
    """

    key: Array
    row: Array | None
    offset: Array


class SVBuffer(NamedTuple):
    """A kernel expansion `f(x) = sum_j coef_j k(key_j, x)` of static capacity."""

    keys: Array  # (capacity,) int32 pool indices ("gram") or (capacity, d) vectors ("direct")
    coef: Array  # (capacity,) float coefficients alpha_j; 0 in unused slots
    # (), int32: support vectors added so far (held: min(count, capacity))
    count: Array  # type: ignore[assignment]  # shadows tuple.count


def as_point(x: Any) -> KernelPoint:
    """`x` itself if it is a :class:`KernelPoint`, else the `"direct"` point of features `x`
    with no offset."""
    if isinstance(x, KernelPoint):
        return x
    x = jnp.asarray(x)
    return KernelPoint(x, None, jnp.zeros((), x.dtype))


def one_view(x: Any, learner: str) -> KernelPoint:
    """The single view of an example (a :class:`KernelPoint` or raw features); a pair of views
    raises a clear :class:`~ojax.validation.InputError` (it is met while the runner checks the
    data against the learner, before anything runs)."""
    if isinstance(x, (tuple, list)) and not isinstance(x, KernelPoint):
        raise InputError(
            f"xs: {learner} takes one view per example (a KernelPoint or features), got "
            f"{len(x)} views (a mismatched view split)"
        )
    return as_point(x)


def two_views(x: Any, learner: str) -> tuple[KernelPoint, KernelPoint]:
    """The two views `(x1, x2)` of an example; anything else raises a clear
    :class:`~ojax.validation.InputError` (a mismatched view split)."""
    if isinstance(x, KernelPoint) or not isinstance(x, (tuple, list)) or len(x) != 2:
        views = len(x) if isinstance(x, (tuple, list)) and not isinstance(x, KernelPoint) else 1
        raise InputError(
            f"xs: {learner} takes 2 views per example (a pair of KernelPoints), got {views} "
            "(a mismatched view split)"
        )
    return as_point(x[0]), as_point(x[1])


def empty_buffer(capacity: int, mode: str, dim: int | None = None, dtype: Any = None) -> SVBuffer:
    """An empty buffer (`dim` is needed in `"direct"` mode)."""
    dtype = jnp.zeros(()).dtype if dtype is None else dtype
    if mode == "gram":
        keys = jnp.zeros((capacity,), jnp.int32)
    elif mode == "pool":
        keys = jnp.arange(capacity, dtype=jnp.int32)  # slot j holds pool row j
    else:
        keys = jnp.zeros((capacity, dim), dtype)
    return SVBuffer(keys, jnp.zeros((capacity,), dtype), jnp.zeros((), jnp.int32))


def held(buffer: SVBuffer) -> Array:
    """Number of support vectors held: `min(count, capacity)`."""
    return jnp.minimum(buffer.count, buffer.coef.shape[0])


def kernel_values(
    buffer: SVBuffer, point: KernelPoint, width: Array, mode: str, kernel: str
) -> Array:
    """`k(key_j, x)` for every slot, shape `(capacity,)`."""
    if mode == "pool":
        _check_pool(buffer, point)  # refuses a point without its Gram row
        assert point.row is not None
        return point.row
    if mode == "gram":
        assert point.row is not None  # a "gram" point carries its Gram row
        return point.row[buffer.keys]
    return kernel_function(kernel)(buffer.keys, point.key[None, :], width)


def self_kernel(point: KernelPoint, width: Array, mode: str, kernel: str) -> Array:
    """`k(x, x)` (1 for the Gaussian kernel)."""
    if mode in ("gram", "pool"):
        assert point.row is not None  # a "gram" / "pool" point carries its Gram row
        return point.row[point.key]
    return kernel_function(kernel)(point.key, point.key, width)


def evaluate(buffer: SVBuffer, point: KernelPoint, width: Array, mode: str, kernel: str) -> Array:
    """`f(x) = sum_j coef_j k(key_j, x)` (without the point's offset)."""
    return jnp.dot(buffer.coef, kernel_values(buffer, point, width, mode, kernel))


def _check_pool(buffer: SVBuffer, point: KernelPoint) -> None:
    """The `"pool"` layout needs one slot per pool row (a static shape check at trace time)."""
    if point.row is None or point.row.shape[-1] != buffer.coef.shape[-1]:
        size = None if point.row is None else point.row.shape[-1]
        raise InputError(
            f"capacity: the 'pool' mode needs capacity equal to the pool size (Gram rows of "
            f"length N), got capacity={buffer.coef.shape[-1]} and N={size}"
        )


def add(
    buffer: SVBuffer,
    point: KernelPoint,
    value: Array,
    accept: Array,
    when_full: str,
    mode: str = "gram",
) -> SVBuffer:
    """Adds `value * k(x, .)` to the expansion when `accept` (a traced bool).

    `"gram"` / `"direct"`: the slot is `count` while there is room; when the buffer is
    full, `"replace_oldest"` overwrites slot `count % capacity` (the oldest) and
    `"discard"` drops the new term. `"pool"`: `coef[key] += value` (`when_full` does not
    apply).
    """
    if mode == "pool":
        coef = buffer.coef.at[point.key].add(
            jnp.where(accept, value, 0.0).astype(buffer.coef.dtype)
        )
        return SVBuffer(buffer.keys, coef, buffer.count + accept.astype(jnp.int32))
    capacity = buffer.coef.shape[0]
    if when_full == "replace_oldest":
        slot = jnp.remainder(buffer.count, capacity)
        write = accept
    else:
        slot = jnp.minimum(buffer.count, capacity - 1)
        write = accept & (buffer.count < capacity)
    key = point.key if point.key.ndim == 0 else point.key.astype(buffer.keys.dtype)
    keys = buffer.keys.at[slot].set(jnp.where(write, key, buffer.keys[slot]))
    coef = buffer.coef.at[slot].set(
        jnp.where(write, value.astype(buffer.coef.dtype), buffer.coef[slot])
    )
    count = buffer.count + accept.astype(jnp.int32)
    return SVBuffer(keys, coef, count)


def expansion_outputs(
    keys: Any,
    coef: Any,
    sq_dist_to_keys: Array | None = None,
    width: Any = None,
    *,
    features: Any = None,
    kernel: str = "gaussian",
) -> Array:
    """Outputs `sum_j coef_j k(key_j, x_i)` of a frozen expansion at many points at once.

    Either pass the squared distances of the points to the support vectors
    (`sq_dist_to_keys`, `(n, capacity)`) or, for `"direct"` keys, the points'
    `features` `(n, d)`.
    """
    coef = jnp.asarray(coef)
    if sq_dist_to_keys is not None:
        if kernel == "linear":
            raise InputError("kernel: pass features for the linear kernel")
        return gram_matrix(sq_dist_to_keys, width) @ coef
    feats = jnp.asarray(features, coef.dtype)
    keys = jnp.asarray(keys, coef.dtype)
    if kernel == "linear":
        return (feats @ keys.T) @ coef
    return gram_matrix(squared_distances(feats, keys, dtype=coef.dtype), width) @ coef


def check_common(
    capacity: int, mode: str, kernel: str, when_full: str, dim: int | None = None
) -> None:
    """Validates the static options of a kernel learner factory."""
    check_int("capacity", capacity, 1)
    check_choice("mode", mode, MODES)
    check_choice("kernel", kernel, KERNELS)
    check_choice("when_full", when_full, WHEN_FULL)
    if mode == "direct" and dim is None:
        raise InputError("dim: the 'direct' mode needs the feature dimension, got None")


__all__ = [
    "KERNELS",
    "KernelPoint",
    "MODES",
    "SVBuffer",
    "WHEN_FULL",
    "add",
    "as_point",
    "check_common",
    "cross_products",
    "distances_from_products",
    "empty_buffer",
    "evaluate",
    "expansion_outputs",
    "gaussian_kernel",
    "gram_matrix",
    "held",
    "kernel_function",
    "kernel_values",
    "linear_kernel",
    "one_view",
    "self_kernel",
    "squared_distances",
    "squared_norms",
    "two_views",
]
