"""Folding blocks of consecutive iterates into running path averages (jittable, no checks).

The chunked walk of stored iterates and the streamed SGD pass of :mod:`ojax.averaging.path`
both cut `w_0..w_n` into blocks and fold each block into

* the `L` geometric averages so far (:func:`fold_geometric`): the block's local average
  `(rho^j @ block) / Z(length)` uses a precomputed table `rho^j` (:func:`discount_table`)
  and is merged by the associative rule of :mod:`ojax.averaging.reduction`;
* the `T + 1` sums of the segments between consecutive sorted tail starts
  (:func:`fold_tail_segments`), turned into tail averages by suffix sums at the end
  (:func:`tail_averages`; never differences of prefix sums).
"""

from __future__ import annotations

import jax.numpy as jnp

from ojax.averaging.weights import inverse_mass, merge_weights
from ojax.core import Array


def discount_table(log_discount: Array, size: int) -> Array:
    """The un-normalized weights `rho^j`, `j < size`, one row per discount: `(L, size)`."""
    return jnp.exp(jnp.arange(size, dtype=log_discount.dtype)[None, :] * log_discount[:, None])


def fold_geometric(
    average: Array,
    table: Array,
    log_discount: Array,
    block: Array,
    offset,
    length,
    masked: bool = True,
) -> Array:
    """Folds the block `w_offset..w_{offset+length-1}` (rows of `block`) into `average`.

    The block's local average is `(rho^j @ block) / Z(length)`: one `(L, B) @ (B, d)` product
    with the precomputed `table` (no per-block weight matrix is formed), then one scale per
    row. `masked` (static) zeroes the rows past `length` first; pass False when those rows
    are already zero (zero-padded stored iterates) or when every block is full.

    Args:
      average: `(L, d)` the averages of `w_0..w_{offset-1}`.
      table: `(L, >= B)` from :func:`discount_table`.
      log_discount: `(L,)`.
      block: `(B, d)`; offset: index of its first iterate; length: its real rows.
      masked: static, see above.

    Returns:
      `(L, d)` the averages of `w_0..w_{offset+length-1}`.

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax.averaging import blocks
      >>> log_discount = jnp.zeros(1)  # rho = 1: the plain mean
      >>> table = blocks.discount_table(log_discount, 2)
      >>> mean = blocks.fold_geometric(jnp.array([[1.5]]), table, log_discount,
      ...                              jnp.array([[6.0], [0.0]]), 2, 1)
      >>> print(mean)  # the mean of 0, 3 and 6
      [[3.]]
    """
    scale = inverse_mass(log_discount, length)
    size = block.shape[0]
    if masked:
        j = jnp.arange(size, dtype=jnp.int32)
        real = j[:, None] < jnp.asarray(length, jnp.int32)
        block = jnp.where(real, block, jnp.zeros((), block.dtype))
    local = (table[:, :size].astype(block.dtype) @ block) * scale[:, None].astype(block.dtype)
    a, b = merge_weights(log_discount, offset, length)
    return a[:, None] * average + b[:, None] * local


def fold_tail_segments(
    segment_sums: Array, sorted_tail_start: Array, block: Array, offset, length
) -> Array:
    """Adds the block's real rows to the sums of the segments between consecutive tail starts.

    Segment `k` holds the iterates `w_t` with exactly `k` sorted tail starts `< t`;
    `segment_sums` is `(T + 1, d)`.
    """
    size = block.shape[0]
    j = jnp.arange(size, dtype=jnp.int32)
    t = jnp.asarray(offset, jnp.int32) + j
    ids = jnp.searchsorted(sorted_tail_start, t, side="left").astype(jnp.int32)
    segments = jnp.arange(segment_sums.shape[0], dtype=jnp.int32)
    onehot = (ids[None, :] == segments[:, None]) & (j[None, :] < jnp.asarray(length, jnp.int32))
    return segment_sums + onehot.astype(block.dtype) @ block


def tail_averages(
    segment_sums: Array, sorted_tail_start: Array, order: Array, num_steps: int
) -> Array:
    """`(T, d)` tail averages of `w_0..w_n` from the segment sums (suffix sums).

    `order` is the `argsort` that sorted the tail starts; the result is in the original
    order. `num_steps` is `n`.
    """
    suffix = jnp.cumsum(segment_sums[::-1], axis=0)[::-1]  # suffix[k] = sum of segments k..T
    tails = suffix[1:] / (num_steps - sorted_tail_start).astype(segment_sums.dtype)[:, None]
    return tails[jnp.argsort(order)]


__all__ = ["discount_table", "fold_geometric", "fold_tail_segments", "tail_averages"]
