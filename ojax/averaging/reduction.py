"""The parallel reduction of geometric averages: chunk statistics and their associative merge.

Cut the iterates `w_0..w_n` into contiguous chunks; chunk `k` starts at `s_k` and holds
`L_k` iterates. Its statistic is its LOCAL average with exponents restarting at 0,
`A_k = sum_{j<L_k} rho^j w_{s_k+j} / Z(L_k)`, `Z(L) = sum_{j<L} rho^j`, and its length. Then

    w_tilde_n = sum_k alpha_k A_k,
    alpha_k = exp(s_k log rho) expm1(L_k log rho) / expm1((n+1) log rho)   (L_k / (n+1) at rho = 1)

and, pairwise, `(A, L) + (A', L') = (a A + b A', L + L')` with `a = Z(L) / Z(L+L')` and
`b = rho^L Z(L') / Z(L+L')` (:func:`ojax.averaging.weights.merge_weights`; the spec's
`(A, Z, L)` triple with `Z` derived from `L`). The merge is associative, so the same rule
gives `jax.lax.associative_scan` over time (every prefix average at once,
:func:`prefix_averages`), chunked averaging on one device (:func:`chunked_geometric_average`)
and a reduction over the time axis sharded across devices (:func:`sharded_geometric_average`).

References:
  Neu, G. and Rosasco, L. (2018). Iterate averaging as regularization for stochastic gradient
  descent. COLT.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec
from jax.typing import ArrayLike

from ojax.averaging.averagers import check_iterates
from ojax.averaging.weights import check_log_discount, chunk_weight, local_weights, merge_weights
from ojax.core import Array
from ojax.validation import InputError, check_int


class ChunkStats(NamedTuple):
    """The statistic of a contiguous chunk of iterates (leaves may carry leading batch axes)."""

    average: Array  # local geometric average (exponents restart at 0), shape (..., d)
    length: Array  # number of iterates in the chunk, shape (...), int32


def chunk_stats(chunk: Array, log_discount: Array) -> ChunkStats:
    """The statistic `(A, L)` of a chunk `(L, d)` of consecutive iterates."""
    length = chunk.shape[0]
    w = local_weights(jnp.asarray(log_discount, chunk.dtype), length, length)
    return ChunkStats(w @ chunk, jnp.asarray(length, jnp.int32))


def merge(left: ChunkStats, right: ChunkStats, log_discount: Array) -> ChunkStats:
    """The associative merge of two adjacent chunks (`left` first in time)."""
    a, b = merge_weights(jnp.asarray(log_discount, left.average.dtype), left.length, right.length)
    average = a[..., None] * left.average + b[..., None] * right.average
    return ChunkStats(average, left.length + right.length)


def combine_chunks(stats: ChunkStats, log_discount: Array) -> Array:
    """`sum_k alpha_k A_k` for `K` chunk statistics stacked on a leading axis (in order)."""
    lengths = stats.length
    starts = jnp.cumsum(lengths) - lengths
    total = jnp.sum(lengths)
    alpha = chunk_weight(jnp.asarray(log_discount, stats.average.dtype), starts, lengths, total)
    return jnp.einsum("k,kd->d", alpha, stats.average)


@jax.jit
def _prefix(iterates: Array, log_discount: Array) -> Array:
    elems = ChunkStats(iterates, jnp.ones(iterates.shape[:1], jnp.int32))
    out = jax.lax.associative_scan(lambda a, b: merge(a, b, log_discount), elems)
    return out.average


def prefix_averages(iterates: ArrayLike, log_discount: ArrayLike) -> Array:
    """Every prefix geometric average `w_tilde_0..w_tilde_n` by `lax.associative_scan`.

    Args:
      iterates: `(n+1, d)`.
      log_discount: scalar `log rho <= 0` (vmap for several).

    Returns:
      `(n+1, d)`: row `t` is the geometric average of `w_0..w_t`.

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax import averaging
      >>> ws = jnp.array([[0.0], [3.0], [3.0]])
      >>> print(averaging.prefix_averages(ws, 0.0).ravel())
      [0.  1.5 2. ]
    """
    check_iterates(iterates)
    check_log_discount("log_discount", log_discount)
    if np.ndim(log_discount) != 0:
        raise InputError(f"log_discount must be a scalar, got shape {np.shape(log_discount)}")
    iterates = jnp.asarray(iterates)
    return _prefix(iterates, jnp.asarray(log_discount, iterates.dtype))


def _padded_chunks(iterates: Array, num_chunks: int) -> tuple[Array, Array]:
    total = iterates.shape[0]
    size = -(-total // num_chunks)
    pad = size * num_chunks - total
    padded = jnp.pad(iterates, ((0, pad), (0, 0)))
    starts = jnp.arange(num_chunks) * size
    lengths = jnp.clip(total - starts, 0, size).astype(jnp.int32)
    return padded.reshape(num_chunks, size, iterates.shape[1]), lengths


@functools.partial(jax.jit, static_argnames=("num_chunks",))
def _chunked(iterates: Array, log_discount: Array, num_chunks: int) -> Array:
    chunks, lengths = _padded_chunks(iterates, num_chunks)
    size = chunks.shape[1]

    def local(one_discount):  # (K, d) local averages for one discount
        w = local_weights(jnp.broadcast_to(one_discount, lengths.shape), size, lengths)
        return ChunkStats(jnp.einsum("kj,kjd->kd", w, chunks), lengths)

    def one(one_discount):
        return combine_chunks(local(one_discount), one_discount)

    return jax.vmap(one)(log_discount) if log_discount.ndim else one(log_discount)


def chunked_geometric_average(
    iterates: ArrayLike, log_discount: ArrayLike, num_chunks: int
) -> Array:
    """The geometric average from `num_chunks` local chunk averages and `alpha_k`.

    Args:
      iterates: `(n+1, d)`.
      log_discount: scalar or `(L,)`.
      num_chunks: `K >= 1` (static); the last chunks may be shorter or empty.

    Returns:
      `(d,)` or `(L, d)`, equal to :func:`ojax.averaging.geometric_average`.
    """
    check_iterates(iterates)
    check_log_discount("log_discount", log_discount)
    num_chunks = check_int("num_chunks", num_chunks, 1)
    iterates = jnp.asarray(iterates)
    return _chunked(iterates, jnp.asarray(log_discount, iterates.dtype), num_chunks)


def sharded_geometric_average(
    iterates: ArrayLike,
    log_discount: ArrayLike,
    mesh: Mesh | None = None,
    axis_name: str = "time",
) -> Array:
    """The geometric average with the time axis sharded across the devices of `mesh`.

    Each device computes the statistic of its own contiguous chunk of time; the weighted sum
    `sum_k alpha_k A_k` is one `psum` (an all-reduce tree across devices).

    Args:
      iterates: `(n+1, d)` (padded with empty chunks when `n+1` is not a multiple of the
        number of devices).
      log_discount: scalar or `(L,)`.
      mesh: a 1-D mesh (default: this process's devices on axis `axis_name`).
      axis_name: the mesh axis that carries time.

    Returns:
      `(d,)` or `(L, d)`, replicated.
    """
    check_iterates(iterates)
    check_log_discount("log_discount", log_discount)
    if mesh is None:
        mesh = Mesh(np.asarray(jax.local_devices()), (axis_name,))
    if axis_name not in mesh.axis_names:
        raise InputError(f"axis_name {axis_name!r} is not an axis of the mesh {mesh.axis_names}")
    iterates = jnp.asarray(iterates)
    log_discount = jnp.asarray(log_discount, iterates.dtype)
    num = mesh.shape[axis_name]
    total = iterates.shape[0]
    size = -(-total // num)
    padded = jnp.pad(iterates, ((0, size * num - total), (0, 0)))
    return _sharded_fn(mesh, axis_name, size, total, log_discount.ndim)(padded, log_discount)


@functools.lru_cache(maxsize=32)
def _sharded_fn(mesh: Mesh, axis_name: str, size: int, total: int, batched: int):
    def local(block, log_discount):
        k = jax.lax.axis_index(axis_name)
        start = k * size
        length = jnp.clip(total - start, 0, size)

        def one(one_discount):
            w = local_weights(one_discount, size, length)
            alpha = chunk_weight(one_discount, start, length, total)
            return alpha * (w @ block)

        part = jax.vmap(one)(log_discount) if batched else one(log_discount)
        return jax.lax.psum(part, axis_name)

    spec = PartitionSpec(axis_name, None)
    fn = jax.shard_map(
        local, mesh=mesh, in_specs=(spec, PartitionSpec()), out_specs=PartitionSpec()
    )
    return jax.jit(fn)


__all__ = [
    "ChunkStats",
    "chunk_stats",
    "chunked_geometric_average",
    "combine_chunks",
    "merge",
    "prefix_averages",
    "sharded_geometric_average",
]
