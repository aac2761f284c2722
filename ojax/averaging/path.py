"""The regularization path: every geometric (and tail) average of one SGD pass, in batch.

For `L` discounts (one per ridge parameter `lambda`) and `T` tail starts, all averages of
the iterates `w_0..w_n` of ONE SGD pass are computed together, in one of three ways:

* `"product"`: store the iterates and multiply: `(L, n+1)` weights `c_n rho^t` times the
  `(n+1, d)` iterates. Up to `8 * 512` iterates the weights are formed as `alpha_k rho^j /
  Z(B)` and multiplied at once; past that the product is evaluated in blocks of 512 rows: each
  block is one `(L, 512) @ (512, d)` GEMM with the same precomputed table `rho^j` (`L * 512`
  exponentials in all, never one per `(lambda, t)`), scaled by `1 / Z(B)` per row and merged
  with the step-count weights. It is GEMM-bound: `2 L n d` flops (2 GFLOP for n = 1e5,
  d = 100, L = 100);
* `"chunked"`: store the iterates but walk them in chunks of `chunk_size` (the weight matrix
  is never formed whole);
* `"stream"`: store nothing: the SGD scan runs in blocks of `block_size` steps and folds each
  block into the path as it is produced (memory `O((L + T) d + block_size d)`; the data may
  itself be generated block by block inside the scan, see :func:`stream_path`).

`"auto"` picks `"product"` when the iterates and the weight matrix fit `memory_budget`
(bytes), `"chunked"` when the iterates alone fit, else `"stream"`. Chunks and blocks are
merged with the associative rule of :mod:`ojax.averaging.reduction` (each block normalized by
its own mass, the running mass derived from the step count). Tail paths are suffix sums of the
segment sums between consecutive tail starts (never differences of prefix sums).
:func:`select_on_holdout` then picks `lambda` / `tau` on held-out data, in batch.

The SGD steps are :func:`ojax.run`'s (:func:`~ojax.averaging.sgd_pass` and, per streamed block,
:func:`~ojax.averaging.sgd_scan`). This module's own two scans step no learner: `"chunked"`
walks stored iterates, and `"stream"` walks blocks, carrying `w` from one block's run to the
next and folding each block's iterates into the path (as :func:`ojax.datasets.streaming.run_drawn`
walks drawn blocks).

References:
  Neu, G. and Rosasco, L. (2018). Iterate averaging as regularization for stochastic gradient
  descent. COLT.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from ojax.averaging.averagers import check_iterates, check_tail_start
from ojax.averaging.blocks import (
    discount_table,
    fold_geometric,
    fold_tail_segments,
    tail_averages,
)
from ojax.averaging.least_squares import check_data, sgd_pass, sgd_scan
from ojax.averaging.weights import (
    check_log_discount,
    chunk_weight,
    local_weights,
    log_discount_from_regularization,
)
from ojax.core import Array
from ojax.validation import (
    InputError,
    check_choice,
    check_finite,
    check_int,
    check_positive,
    check_shape,
)

MODES = ("auto", "product", "chunked", "stream")
DEFAULT_MEMORY_BUDGET = 1 << 30  # bytes
DEFAULT_BLOCK_SIZE = 1024


class PathResult(NamedTuple):
    """The averages of one SGD pass along a path of discounts and tail starts."""

    geometric: Array | None  # (L, d) geometric averages, in the order of log_discount
    tail: Array | None  # (T, d) tail averages, in the order of tail_start
    final: Array  # the last iterate w_n, (d,)
    mode: str  # "product", "chunked" or "stream" (the one used)


# ---------------------------------------------------------------------------------------------
# from stored iterates
# ---------------------------------------------------------------------------------------------


PRODUCT_BLOCK = 512  # rows of the factorized weight table


def _geometric_product(iterates: Array, log_discount: Array) -> Array:
    """`(L, n+1)` weights times `(n+1, d)` iterates: one matrix product.

    The weights `c_n rho^t` with `t = kB + j` are formed as `alpha_k * rho^j / Z(B)` (the
    chunk weight times the local weight): `L (B + K)` exponentials instead of `L (n + 1)`.
    """
    total, d = iterates.shape
    size = min(PRODUCT_BLOCK, total)
    num = total // size
    full = num * size
    table = local_weights(log_discount, size, size)  # (L, B), normalized by Z(B)
    starts = jnp.arange(num, dtype=jnp.int32) * size
    alpha = chunk_weight(log_discount[:, None], starts[None, :], size, total)  # (L, K)
    weight_rows = (alpha[:, :, None] * table[:, None, :]).reshape(log_discount.shape[0], full)
    geo = weight_rows @ iterates[:full]
    rest = total - full
    if rest:
        w_rest = local_weights(log_discount, rest, rest)  # (L, r)
        alpha_rest = chunk_weight(log_discount, full, rest, total)  # (L,)
        geo = geo + alpha_rest[:, None] * (w_rest @ iterates[full:])
    return geo


@jax.jit
def _product(iterates, log_discount, taus):
    total = iterates.shape[0]
    geo = None if log_discount is None else _geometric_product(iterates, log_discount)
    tail = None
    if taus is not None:
        order = jnp.argsort(taus)
        ts = taus[order]
        seg = fold_tail_segments(
            jnp.zeros((ts.shape[0] + 1, iterates.shape[1]), iterates.dtype),
            ts,
            iterates,
            0,
            total,
        )
        tail = tail_averages(seg, ts, order, total - 1)
    return geo, tail


@functools.partial(jax.jit, static_argnames=("chunk_size",))
def _chunked(iterates, log_discount, taus, chunk_size):
    """Walks the stored iterates in full chunks (a scan, no padding copy) plus one remainder."""
    total, d = iterates.shape
    size = min(chunk_size, total)
    num = total // size
    rest = total - num * size
    table = None if log_discount is None else discount_table(log_discount, size)
    order = None if taus is None else jnp.argsort(taus)
    ts = None if taus is None else taus[order]

    def fold(carry, chunk, offset, length):
        geo, seg = carry
        if geo is not None:  # every row of ``chunk`` is real: no mask needed
            geo = fold_geometric(geo, table, log_discount, chunk, offset, length, masked=False)
        if seg is not None:
            seg = fold_tail_segments(seg, ts, chunk, offset, length)
        return geo, seg

    def body(carry, k):
        offset = k * size
        chunk = jax.lax.dynamic_slice_in_dim(iterates, offset, size)
        return fold(carry, chunk, offset, size), None

    geo0 = None if log_discount is None else jnp.zeros((log_discount.shape[0], d), iterates.dtype)
    seg0 = None if taus is None else jnp.zeros((taus.shape[0] + 1, d), iterates.dtype)
    carry, _ = jax.lax.scan(body, (geo0, seg0), jnp.arange(num, dtype=jnp.int32))
    if rest:
        carry = fold(carry, iterates[num * size :], num * size, rest)
    geo, seg = carry
    tail = None if taus is None else tail_averages(seg, ts, order, total - 1)
    return geo, tail


def _prepare(
    num_iterates: int, log_discount, tail_start, dtype
) -> tuple[Array | None, Array | None]:
    """Checks the discounts and tail starts (when concrete) and converts them."""
    taus = None
    if log_discount is not None:
        check_log_discount("log_discount", log_discount)
        if np.ndim(log_discount) != 1:
            raise InputError(
                f"log_discount must be a vector (L,), got shape {np.shape(log_discount)}"
            )
        log_discount = jnp.asarray(log_discount, dtype)
    if tail_start is not None:
        if np.ndim(tail_start) != 1:
            raise InputError(f"tail_start must be a vector (T,), got shape {np.shape(tail_start)}")
        check_tail_start(tail_start, num_iterates)
        taus = jnp.asarray(tail_start, jnp.int32)
    return log_discount, taus


def path_of_iterates(
    iterates: ArrayLike,
    *,
    log_discount: ArrayLike | None = None,
    tail_start: ArrayLike | None = None,
    chunk_size: int | None = None,
) -> tuple[Array | None, Array | None]:
    """Geometric `(L, d)` and tail `(T, d)` averages of stored iterates in one call.

    Checks its input when concrete; safe inside `jit` / `vmap`.

    Args:
      iterates: `(n+1, d)`.
      log_discount: `(L,)` or None; tail_start: `(T,)` or None.
      chunk_size: None for one weight-matrix product, else the rows per chunk (static).

    Returns:
      `(geometric, tail)` (None where not asked for).

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax import averaging
      >>> ws = jnp.array([[0.0], [3.0], [6.0]])
      >>> geo, tail = averaging.path_of_iterates(
      ...     ws, log_discount=jnp.zeros(1), tail_start=jnp.array([0, 1])
      ... )
      >>> print(geo.ravel(), tail.ravel())  # mean of w_0..w_2; means of w_1..w_2 and of w_2
      [3.] [4.5 6. ]
    """
    check_iterates(iterates)
    iterates = jnp.asarray(iterates)
    if log_discount is None and tail_start is None:
        raise InputError("give log_discount and/or tail_start")
    log_discount, taus = _prepare(iterates.shape[0], log_discount, tail_start, iterates.dtype)
    if chunk_size is None:
        return _product(iterates, log_discount, taus)
    chunk_size = check_int("chunk_size", chunk_size, 1)
    return _chunked(iterates, log_discount, taus, chunk_size)


def geometric_path(
    iterates: ArrayLike, log_discount: ArrayLike, *, chunk_size: int | None = None
) -> Array:
    """Geometric averages of stored iterates for a vector of discounts, in one batch.

    Args:
      iterates: `(n+1, d)`.
      log_discount: `(L,)` values `<= 0`.
      chunk_size: None for one `(L, n+1) @ (n+1, d)` product; else walk the iterates in
        chunks of this many rows (static).

    Returns:
      `(L, d)`.

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax import averaging
      >>> ws = jnp.array([[0.0], [3.0]])
      >>> print(averaging.geometric_path(ws, jnp.log(jnp.array([1.0, 0.5]))).ravel())
      [1.5 1. ]
    """
    geometric = path_of_iterates(iterates, log_discount=log_discount, chunk_size=chunk_size)[0]
    assert geometric is not None  # asked for
    return geometric


def tail_path(
    iterates: ArrayLike, tail_start: ArrayLike, *, chunk_size: int | None = None
) -> Array:
    """Tail averages `mean(w_{tau+1..n})` of stored iterates for a vector of tail starts.

    Computed from suffix sums of the segment sums between sorted tail starts.

    Args:
      iterates: `(n+1, d)`.
      tail_start: `(T,)` integers in `[0, n)`.
      chunk_size: as in :func:`geometric_path`.

    Returns:
      `(T, d)`.

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax import averaging
      >>> ws = jnp.array([[0.0], [1.0], [2.0], [6.0]])
      >>> print(averaging.tail_path(ws, jnp.array([2, 0])).ravel())
      [6. 3.]
    """
    tail = path_of_iterates(iterates, tail_start=tail_start, chunk_size=chunk_size)[1]
    assert tail is not None  # asked for
    return tail


# ---------------------------------------------------------------------------------------------
# streamed during the SGD scan
# ---------------------------------------------------------------------------------------------


def array_blocks(data: tuple[Array, Array], block_index: Array, block_size: int):
    """`block_fn` for in-memory data: rows `block_index * block_size ...` of padded arrays."""
    xs, ys = data
    start = block_index * block_size
    x = jax.lax.dynamic_slice_in_dim(xs, start, block_size)
    y = jax.lax.dynamic_slice_in_dim(ys, start, block_size)
    return x, y


@functools.partial(jax.jit, static_argnames=("block_fn", "num_steps", "block_size"))
def _stream(block_fn, data, num_steps, block_size, eta, w0, log_discount, taus):
    n, size = num_steps, block_size
    num = -(-n // size)
    masked = n % size != 0  # static: when every block is full there is no mask
    table = None if log_discount is None else discount_table(log_discount, size)
    order = None if taus is None else jnp.argsort(taus)
    ts = None if taus is None else taus[order]

    def fold(geo, seg, iterates, offset, length, masked):
        if geo is not None:
            geo = fold_geometric(geo, table, log_discount, iterates, offset, length, masked)
        if seg is not None:
            seg = fold_tail_segments(seg, ts, iterates, offset, length)
        return geo, seg

    def block(carry, b):
        w, geo, seg = carry
        xs, ys = block_fn(data, b, size)
        length = jnp.clip(n - b * size, 0, size)  # the real steps of this block
        w, after = sgd_scan(  # the iterates after each step of the block
            xs.astype(w.dtype),
            ys.astype(w.dtype),
            eta,
            w,
            store=True,
            num_valid=length if masked else None,
        )
        geo, seg = fold(geo, seg, after, b * size + 1, length, masked)
        return (w, geo, seg), None

    d = w0.shape[0]
    geo0 = None if log_discount is None else jnp.zeros((log_discount.shape[0], d), w0.dtype)
    seg0 = None if taus is None else jnp.zeros((taus.shape[0] + 1, d), w0.dtype)
    geo0, seg0 = fold(geo0, seg0, w0[None, :], 0, 1, False)  # w_0: a block of one iterate
    blocks = jnp.arange(num, dtype=jnp.int32)
    (w, geo, seg), _ = jax.lax.scan(block, (w0, geo0, seg0), blocks)
    tail = None if seg is None else tail_averages(seg, ts, order, n)
    return geo, tail, w


def stream_path(
    block_fn: Callable[[Any, Array, int], tuple[Array, Array]],
    data: Any,
    num_steps: int,
    learning_rate: ArrayLike,
    *,
    log_discount: ArrayLike | None = None,
    tail_start: ArrayLike | None = None,
    initial_point: ArrayLike,
    block_size: int = DEFAULT_BLOCK_SIZE,
) -> PathResult:
    """The path of one SGD pass whose examples are produced block by block (nothing stored).

    Checks its input when concrete; safe inside `jit` / `vmap` (return a field of the
    result there: :attr:`PathResult.mode` is a string).

    Args:
      block_fn: static `(data, block_index, block_size) -> (xs (B, d), ys (B,))`; e.g.
        :func:`array_blocks`, or `lambda data, b, size: ojax.envs.regression.sample_block(
        data[0], data[1], b, size)` to generate a stream of any length inside the scan. Rows
        past `num_steps` in the last block are ignored.
      data: the pytree of arrays `block_fn` reads (passed at call time, not baked in).
      num_steps: `n` (static).
      learning_rate: `eta > 0`.
      log_discount: `(L,)` or None.
      tail_start: `(T,)` integers in `[0, n)` or None.
      initial_point: `w_0`, `(d,)` (fixes the dimension and the dtype).
      block_size: steps per block (static).

    Returns:
      A :class:`PathResult` with `mode="stream"`.

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax import averaging
      >>> data = (jnp.ones((4, 1)), jnp.ones(4))  # 3 steps padded to 2 blocks of 2
      >>> res = averaging.stream_path(averaging.array_blocks, data, 3, 0.5,
      ...                             log_discount=jnp.zeros(1), initial_point=jnp.zeros(1),
      ...                             block_size=2)
      >>> print(res.geometric.ravel(), res.final)  # mean of 0, .5, .75, .875
      [0.53125] [0.875]
    """
    num_steps = check_int("num_steps", num_steps, 1)
    block_size = check_int("block_size", block_size, 1)
    if block_fn is array_blocks:  # dynamic_slice would clamp, reading the wrong rows
        rows = -(-num_steps // block_size) * block_size
        for name, arr in zip(("data[0]", "data[1]"), data):
            if jnp.shape(arr)[0] < rows:
                raise InputError(
                    f"{name} must hold at least {rows} rows (num_steps={num_steps} padded to "
                    f"whole blocks of block_size={block_size}), got {jnp.shape(arr)[0]}"
                )
    check_positive("learning_rate", learning_rate)
    if np.ndim(initial_point) != 1:
        raise InputError(f"initial_point must have shape (d,), got shape {np.shape(initial_point)}")
    check_finite("initial_point", initial_point)
    w0 = jnp.asarray(initial_point)
    log_discount, taus = _prepare(num_steps + 1, log_discount, tail_start, w0.dtype)
    eta = jnp.asarray(learning_rate, w0.dtype)
    geo, tail, final = _stream(block_fn, data, num_steps, block_size, eta, w0, log_discount, taus)
    return PathResult(geo, tail, final, "stream")


def default_block_size(num_steps: int) -> int:
    """Steps per streamed block: the largest divisor of `n` in `[512, 1024]` (then there is
    no padding copy and no masked step), else `min(DEFAULT_BLOCK_SIZE, n)`.

    A `(B, d)` block of iterates stays in cache for its `(L, B) @ (B, d)` product; on the
    2-core CPU, for `n = 1e5, d = 100, L = 100`, blocks of 500 to 2000 steps cost the same
    within noise in float32, and 500 to 1000 were ~5% faster than 2000 in float64.
    """
    for size in range(min(1024, num_steps), 511, -1):
        if num_steps % size == 0:
            return size
    return min(DEFAULT_BLOCK_SIZE, num_steps)


def choose_mode(
    num_steps: int, dim: int, num_averages: int, itemsize: int, memory_budget: float
) -> str:
    """`"product"` if the iterates and the `(num_averages + 1, n + 1)` weights fit
    `memory_budget` (bytes), `"chunked"` if the iterates take at most 80% of it, else
    `"stream"`."""
    stored = (num_steps + 1) * dim * itemsize
    weight_bytes = (num_averages + 1) * (num_steps + 1) * itemsize
    if stored + weight_bytes <= memory_budget:
        return "product"
    if 1.25 * stored <= memory_budget:
        return "chunked"
    return "stream"


def _stream_arrays(xs, ys, eta, w0, log_discount, taus, block_size) -> PathResult:
    """The streamed path of in-memory data (padded once to whole blocks when needed)."""
    n = xs.shape[0]
    if block_size is None:
        size = default_block_size(n)
    else:
        size = min(check_int("block_size", block_size, 1), n)
    pad = -(-n // size) * size - n
    data = (xs, ys)
    if pad:  # copies the data once; default_block_size avoids it when n has a good divisor
        data = (jnp.pad(xs, ((0, pad), (0, 0))), jnp.pad(ys, (0, pad)))
    geo, tail, final = _stream(array_blocks, data, n, size, eta, w0, log_discount, taus)
    return PathResult(geo, tail, final, "stream")


def _stored(xs, ys, eta, w0, log_discount, taus, mode, memory_budget, chunk_size) -> PathResult:
    """The path from the stored iterates: one product, or walked in chunks."""
    n, d = xs.shape
    iterates = sgd_pass(xs, ys, eta, w0, True)
    if mode == "product" and n + 1 <= 8 * PRODUCT_BLOCK:
        geo, tail = _product(iterates, log_discount, taus)
    elif mode == "product":  # the same product evaluated block by block (cache-friendly)
        geo, tail = _chunked(iterates, log_discount, taus, PRODUCT_BLOCK)
    else:
        if chunk_size is None:  # the weight block takes what the iterates leave of the budget
            num_avg = sum(0 if a is None else a.shape[0] for a in (log_discount, taus))
            budget = DEFAULT_MEMORY_BUDGET if memory_budget is None else memory_budget
            spare = max(budget - (n + 1) * d * xs.dtype.itemsize, 0)
            chunk_size = int(max(1, min(n + 1, spare // ((num_avg + 1) * xs.dtype.itemsize))))
        chunk_size = check_int("chunk_size", chunk_size, 1)
        geo, tail = _chunked(iterates, log_discount, taus, chunk_size)
    return PathResult(geo, tail, iterates[-1], mode)


def regularization_path(
    xs: ArrayLike,
    ys: ArrayLike,
    learning_rate: ArrayLike,
    *,
    log_discount: ArrayLike | None = None,
    regularization: ArrayLike | None = None,
    convention: str = "exact",
    tail_start: ArrayLike | None = None,
    initial_point: ArrayLike | None = None,
    mode: str = "auto",
    memory_budget: float | None = None,
    block_size: int | None = None,
    chunk_size: int | None = None,
) -> PathResult:
    """All geometric averages (one per `lambda`) and tail averages of ONE SGD pass.

    Args:
      xs: `(n, d)` inputs; ys: `(n,)` labels.
      learning_rate: the SGD step `eta > 0`.
      log_discount: `(L,)` discounts `log rho <= 0`; or give `regularization` instead.
      regularization: `(L,)` ridge parameters, converted with `convention` (`"exact"`:
        `rho = 1/(1 + eta lambda)`, the default; `"paper"`: `rho = 1 - eta lambda`).
      tail_start: `(T,)` tail starts in `[0, n)` (optional).
      initial_point: `w_0` (default 0).
      mode: `"auto"`, `"product"`, `"chunked"` or `"stream"` (see the module doc).
      memory_budget: bytes for `"auto"` (default 1 GiB).
      block_size: steps per streamed block (default :func:`default_block_size`).
      chunk_size: rows per chunk of stored iterates (default: the weight block fills what the
        iterates leave of the budget).

    Returns:
      A :class:`PathResult`.

    Examples:
      >>> import jax
      >>> from ojax import averaging
      >>> from ojax.envs import regression
      >>> problem = regression.ill_conditioned_problem(jax.random.key(0))
      >>> xs, ys = regression.sample(jax.random.key(1), problem, 1000)
      >>> lams = jax.numpy.array([0.0, 0.1, 10.0])
      >>> path = averaging.regularization_path(xs, ys, 0.05, regularization=lams)
      >>> print(path.mode, regression.excess_risk(path.geometric, problem).round(3))
      product [0.004 0.013 0.356]
    """
    check_choice("mode", mode, MODES)
    xs, ys, w0 = check_data(xs, ys, initial_point)
    check_positive("learning_rate", learning_rate)
    n, d = xs.shape
    if log_discount is not None and regularization is not None:
        raise InputError("give either log_discount or regularization, not both")
    if regularization is not None:
        if np.ndim(regularization) != 1:
            raise InputError(
                f"regularization must be a vector (L,), got shape {np.shape(regularization)}"
            )
        log_discount = log_discount_from_regularization(
            jnp.asarray(learning_rate, xs.dtype), jnp.asarray(regularization, xs.dtype), convention
        )
    if log_discount is None and tail_start is None:
        raise InputError("give log_discount / regularization and/or tail_start")
    log_discount, taus = _prepare(n + 1, log_discount, tail_start, xs.dtype)
    if mode == "auto":
        budget = DEFAULT_MEMORY_BUDGET if memory_budget is None else memory_budget
        check_positive("memory_budget", budget)
        num_avg = sum(0 if a is None else a.shape[0] for a in (log_discount, taus))
        mode = choose_mode(n, d, num_avg, xs.dtype.itemsize, budget)
    eta = jnp.asarray(learning_rate, xs.dtype)
    if mode == "stream":
        return _stream_arrays(xs, ys, eta, w0, log_discount, taus, block_size)
    return _stored(xs, ys, eta, w0, log_discount, taus, mode, memory_budget, chunk_size)


@jax.jit
def _holdout(path, x_val, y_val):
    errors = jnp.mean((path @ x_val.T - y_val[None, :]) ** 2, axis=-1)
    index = jnp.argmin(errors)
    return path[index], index, errors


def select_on_holdout(path: ArrayLike, x_val: ArrayLike, y_val: ArrayLike):
    """Picks the point of a path with the least mean squared error on held-out data.

    Checks its input when concrete; safe inside `jit` / `vmap`.

    Args:
      path: `(L, d)` candidate weights (e.g. :attr:`PathResult.geometric`).
      x_val: `(m, d)`; y_val: `(m,)`.

    Returns:
      `(best (d,), index (), errors (L,))`; vmap over seeds for a batch of paths.

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax import averaging
      >>> best, index, errors = averaging.select_on_holdout(
      ...     jnp.array([[0.0], [1.0], [3.0]]), jnp.ones((2, 1)), jnp.array([1.0, 2.0])
      ... )
      >>> print(best, int(index), errors)
      [1.] 1 [2.5 0.5 2.5]
    """
    check_shape("path", path, (None, None))
    check_shape("x_val", x_val, (None, np.shape(path)[1]))
    check_shape("y_val", y_val, (np.shape(x_val)[0],))
    check_finite("x_val", x_val)
    check_finite("y_val", y_val)
    path = jnp.asarray(path)
    return _holdout(path, jnp.asarray(x_val, path.dtype), jnp.asarray(y_val, path.dtype))


__all__ = [
    "DEFAULT_BLOCK_SIZE",
    "DEFAULT_MEMORY_BUDGET",
    "MODES",
    "PRODUCT_BLOCK",
    "PathResult",
    "array_blocks",
    "choose_mode",
    "default_block_size",
    "geometric_path",
    "path_of_iterates",
    "regularization_path",
    "select_on_holdout",
    "stream_path",
    "tail_path",
]
