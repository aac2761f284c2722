"""The set-up of a transfer split as one compiled program: the source classifier `h`, its
outputs on the target pool and the target's Gram matrices.

:func:`setup_arrays` computes in one `jit` (one program per input shapes, dtypes and Gram
views; a second split of the same shapes reuses it) what :func:`~ojax.transfer.train_source`,
:func:`~ojax.transfer.source_outputs` and :func:`~ojax.transfer.gram_matrix` compute one
operation at a time:

* the source rows' squared distances, their Gram matrix at the source width and the averaged
  kernel PA-I over the source order (one `lax.scan`): `h`;
* `h(x)` on every target row (the target's source view against the source rows);
* the target's squared distances per view (`whole`; or `view1`, `view2` and `whole =
  view1 + view2` for a heterogeneous split) and their Gram matrices at the widths asked.

Dense features enter the program as they are (their products are computed inside); for scipy
sparse features (newsgroup4, the LIBSVM files) the cross products and squared norms are
computed on the host first (:func:`pair`), so the program never sees the 62061-word rows.
The operations are those of the eager functions, in the same order and dtypes.

Sparse targets (a7a, w7a, newsgroup4) are set up in bounded memory: `h` and `h(x)` in the
program above (without the target), then the Gram matrices :data:`BLOCK_ROWS` target rows at a
time (:func:`sparse_grams`): the host forms one block's cross products per view (float64, cast
to `dtype`), a donated program writes that block's rows of every Gram matrix in place. Every
entry is elementwise in its products, so the matrices are those of the one-program set-up bit
for bit; the peak is the Gram matrices built plus one block. :func:`~ojax.transfer.prepare_transfer`
builds a sparse target's matrices per view when a method needs them
(:mod:`ojax.transfer.staged`: at most two at once for the heterogeneous methods; a7a, float32:
0.75 GiB of matrices, the whole run's peak 1.16 GiB, was 2.07 GiB with the three matrices and
4.1 GiB with every distance matrix and the host's float64 products).
"""

from __future__ import annotations

import ctypes
import functools
import gc
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ojax import programs
from ojax.core import Array
from ojax.losses import zero_one
from ojax.runner import run
from ojax.sparse import issparse
from ojax.transfer.kernels import (
    KernelPoint,
    SVBuffer,
    cross_products,
    distances_from_products,
    gram_matrix,
    squared_norms,
)
from ojax.transfer.pa import KernelPAParams, averaged_kernel_pa, source_classifier

BLOCK_ROWS = 128
"""Rows per block of the host products (:func:`pair`) and of :func:`sparse_grams` (whose last
block ends at the last row)."""


class Dense(NamedTuple):
    """Dense rows `a` against `b` (`None`: against themselves); products in the program."""

    a: Any
    b: Any = None


class Products(NamedTuple):
    """Sparse rows, reduced on the host: `<a_i, b_j>` and the squared norms (`norms_b`
    `None`: the rows against themselves)."""

    cross: Any
    norms_a: Any
    norms_b: Any = None


def pair(a: Any, b: Any = None, dtype: Any = np.float64) -> Dense | Products:
    """What the program needs of the squared distances of `a`'s rows to `b`'s (default
    `a`'s own): the dense features, or for scipy sparse input the products computed on the
    host (in float64, then cast to `dtype` as :func:`~ojax.transfer.squared_distances` does;
    :data:`BLOCK_ROWS` rows at a time, each entry as the whole product gives it)."""
    if issparse(a) or (b is not None and issparse(b)):
        other = a if b is None else b
        cross = np.empty((a.shape[0], other.shape[0]), dtype)
        for start in range(0, a.shape[0], BLOCK_ROWS):  # float64 one block at a time
            cross[start : start + BLOCK_ROWS] = cross_products(a[start : start + BLOCK_ROWS], other)
        norms_b = None if b is None else np.asarray(squared_norms(b), dtype)
        return Products(cross, np.asarray(squared_norms(a), dtype), norms_b)
    return Dense(a, b)


def distances(p: Dense | Products, dtype: Any) -> Array:
    """The squared distances of a :func:`pair` (traceable), as
    :func:`~ojax.transfer.squared_distances` computes them."""
    if isinstance(p, Products):
        same = p.norms_b is None
        na = p.norms_a
        return distances_from_products(p.cross, na, na if same else p.norms_b, same, dtype)
    same = p.b is None
    a = jnp.asarray(p.a)
    b = a if same else jnp.asarray(p.b)
    cross = jnp.matmul(a, b.T, precision=jax.lax.Precision.HIGHEST)
    na = jnp.sum(a * a, axis=1)
    nb = na if same else jnp.sum(b * b, axis=1)
    return distances_from_products(cross, na, nb, same, dtype)


class SetupArrays(NamedTuple):
    """The outputs of :func:`setup_arrays`."""

    h: SVBuffer  # the source classifier: source-row indices, averaged coefficients, |SV(h)|
    h_out: Array  # (N,) h on every target row
    grams: tuple[Array, ...]  # (N, N) each, in the order of the views and widths asked
    finite: Array  # (), bool: every Gram matrix, h and h_out finite


class _Inputs(NamedTuple):
    source: Dense | Products  # source rows against themselves
    cross: Dense | Products  # the target's source view against the source rows
    target: dict[str, Dense | Products]  # "whole", or "view1" and "view2"
    source_y: Any
    order: Any  # (S,) int32 source rows in the order h learns them
    params: KernelPAParams  # h's C and width, in dtype
    widths: tuple[Any, ...]  # one per Gram matrix asked


@functools.lru_cache(maxsize=16)
def _setup_program(views: tuple[str, ...], dtype: str) -> Callable[[_Inputs], SetupArrays]:
    """The jitted set-up of these Gram views in `dtype`, kept traced on disk beside the
    compilation cache (:func:`ojax.programs.jit`): a warm process neither traces nor
    lowers it."""
    return programs.jit(functools.partial(_program, views=views, dtype=dtype))


def _program(inputs: _Inputs, views: tuple[str, ...], dtype: Any) -> SetupArrays:
    source_gram = gram_matrix(distances(inputs.source, dtype), inputs.params.width)
    n_source = source_gram.shape[0]
    pool = KernelPoint(
        jnp.arange(n_source, dtype=jnp.int32), source_gram, jnp.zeros((n_source,), dtype)
    )
    learner = averaged_kernel_pa(inputs.order.shape[0], mode="gram")
    ys = jnp.asarray(inputs.source_y, dtype)
    state, _ = run(
        learner, inputs.params, pool, ys, zero_one, order=inputs.order, keep_predictions=False
    )
    h = source_classifier(state)
    # h(x) = K(x, keys) @ coef as the eager functions compute it, bit for bit: the kernel of
    # the gathered distances (exp commutes with the gather; the gather keeps XLA from fusing
    # exp into the product that made the distances, a fusion that rounds exp differently),
    # then a product of its own (a gather fused into it would sum in another order)
    to_keys = gram_matrix(distances(inputs.cross, dtype)[:, h.keys], inputs.params.width)
    h_out = jax.lax.optimization_barrier(to_keys) @ h.coef
    dist = {view: distances(p, dtype) for view, p in inputs.target.items()}
    if "view1" in dist:
        dist["whole"] = dist["view1"] + dist["view2"]
    grams = tuple(gram_matrix(dist[v], w) for v, w in zip(views, inputs.widths))
    finite = jnp.all(jnp.isfinite(h_out)) & jnp.all(jnp.isfinite(h.coef))
    for g in grams:
        finite = finite & jnp.all(jnp.isfinite(g))
    return SetupArrays(h, h_out, grams, finite)


def setup_arrays(
    source_x: Any,
    source_y: Any,
    target_x: Any,
    source_order: np.ndarray,
    source_params: KernelPAParams,
    grams: tuple[tuple[str, float], ...],
    dtype: Any,
) -> SetupArrays:
    """`h`, `h` on the target rows and the Gram matrices `grams` (`(view, width)`
    pairs; views `"whole"`, `"view1"`, `"view2"`) of a split, in one compiled program.

    Args:
      source_x: `(S, k)` source rows (dense or scipy sparse).
      source_y: their labels in {-1, +1}.
      target_x: `(N, d)` target rows: `k == d` homogeneous, else the source saw the first
        `k` features (heterogeneous: views `view1 = [:, :k]`, `view2 = [:, k:]`).
      source_order: `(S',)` int source rows in the order `h` learns them (checked by the
        caller).
      source_params: `h`'s params, in `dtype`.
      grams: the Gram matrices to build.
      dtype: the floating dtype of everything.

    Returns:
      :class:`SetupArrays` (device arrays; nothing is checked here: see `finite`).
    """
    k, d = source_x.shape[1], target_x.shape[1]
    dtype = np.dtype(dtype)
    if issparse(target_x):  # bounded: h first, then the Gram matrices block by block
        source_view = target_x if k == d else target_x[:, :k]
        source = _source_only(source_x, source_y, source_view, source_order, source_params, dtype)
        jax.block_until_ready(source)  # its inputs (host products, reference cycles) freed
        gc.collect()  # now, before the Gram matrices are built
        _trim_host_heap()
        if not grams:
            return SetupArrays(source.h, source.h_out, (), source.finite)
        built, finite = sparse_grams(sparse_views(target_x, k, grams), grams, dtype)
        return SetupArrays(source.h, source.h_out, built, source.finite & finite)
    if k == d:
        target = {"whole": pair(target_x, dtype=dtype)}
        source_view = target_x
    else:
        source_view = target_x[:, :k]
        target = {
            "view1": pair(source_view, dtype=dtype),
            "view2": pair(target_x[:, k:], dtype=dtype),
        }
    inputs = _Inputs(
        pair(source_x, dtype=dtype),
        pair(source_view, source_x, dtype),
        target,
        np.asarray(source_y),
        np.asarray(source_order, np.int32),
        source_params,
        tuple(np.asarray(w, dtype) for _, w in grams),
    )
    return _setup_program(tuple(v for v, _ in grams), dtype.name)(inputs)


def _source_only(source_x, source_y, source_view, source_order, source_params, dtype):
    """:func:`_program` without target views: `h` and `h(x)`. The host products go to the
    device one at a time (each host copy, and its float64 original, freed before the next)."""

    def on_device(p: Dense | Products) -> Dense | Products:
        return (
            p
            if isinstance(p, Dense)
            else Products(*(a if a is None else jax.device_put(a) for a in p))
        )

    inputs = _Inputs(
        on_device(pair(source_x, dtype=dtype)),
        on_device(pair(source_view, source_x, dtype)),
        {},
        np.asarray(source_y),
        np.asarray(source_order, np.int32),
        source_params,
        (),
    )
    return _setup_program((), dtype.name)(inputs)


def sparse_views(target_x: Any, k: int, grams: tuple[tuple[str, float], ...]) -> dict[str, Any]:
    """The views of the target rows `target_x` that the Gram matrices `grams` need, for
    :func:`sparse_grams`: `"whole"` (`k` its width: homogeneous), or those of `"view1"`
    (its first `k` features) and `"view2"` (the rest) that `grams` use, both for `"whole"`."""
    if k == target_x.shape[1]:
        return {"whole": target_x}
    used = {view for view, _ in grams}
    if "whole" in used:
        used |= {"view1", "view2"}
    return {
        view: target_x[:, :k] if view == "view1" else target_x[:, k:]
        for view in ("view1", "view2")
        if view in used
    }


def sparse_grams(
    views: dict[str, Any], grams: tuple[tuple[str, float], ...], dtype: Any
) -> tuple[tuple[Array, ...], Array]:
    """The Gram matrices `grams` (`(view, width)` pairs) of the sparse target rows
    `views` (`"whole"`, or `"view1"` and `"view2"`; `whole = view1 + view2` in
    distance), :data:`BLOCK_ROWS` rows at a time, and whether every entry is finite.

    Each block's cross products are formed on the host (float64, cast to `dtype` as
    :func:`pair` does); a donated program turns them into the block's rows of every matrix in
    place. Memory: the matrices plus one block."""
    dtype = np.dtype(dtype)
    n = next(iter(views.values())).shape[0]
    rows = min(BLOCK_ROWS, n)
    norms = {v: np.asarray(squared_norms(x), dtype) for v, x in views.items()}
    starts = list(range(0, n - rows + 1, rows))
    if starts[-1] != n - rows:  # the last block ends at the last row (its rows overlap)
        starts.append(n - rows)
    program = _block_program(tuple(v for v, _ in grams), tuple(views), dtype.name)
    widths = tuple(np.asarray(w, dtype) for _, w in grams)
    built = tuple(jnp.zeros((n, n), dtype) for _ in grams)
    finite = jnp.asarray(True)
    for start in starts:
        cross = {
            v: np.asarray(cross_products(x[start : start + rows], x), dtype)
            for v, x in views.items()
        }
        built, ok = program(built, cross, norms, np.int32(start), widths)
        jax.block_until_ready(finite)  # the block before: at most two blocks' products held
        finite = finite & ok
    jax.block_until_ready(finite)
    del cross
    _trim_host_heap()
    return built, finite


def _trim_host_heap() -> None:
    """Hands the host heap's free pages back to the system (glibc's `malloc_trim`; nothing
    elsewhere): the blocks' freed products (tens of MB each, below glibc's mmap threshold once
    one was freed) otherwise stay resident beside the Gram matrices."""
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):  # not glibc
        pass


@functools.lru_cache(maxsize=16)
def _block_program(grams: tuple[str, ...], views: tuple[str, ...], dtype: str) -> Callable:
    """The jitted, donated block step of :func:`sparse_grams`."""
    del views  # part of the cache key only (the inputs' structure)
    return jax.jit(functools.partial(_block, grams=grams, dtype=dtype), donate_argnums=0)


def _block(built, cross, norms, start, widths, grams: tuple[str, ...], dtype: Any):
    """Rows `start:start + b` of every Gram matrix, written into `built`: the operations
    of :func:`distances` (the rows against themselves) and :func:`_program`, per entry."""
    n = next(iter(norms.values())).shape[0]
    rows = next(iter(cross.values())).shape[0]
    ids = start + jnp.arange(rows, dtype=jnp.int32)
    eye = (ids[:, None] == jnp.arange(n, dtype=jnp.int32)[None, :]).astype(dtype)
    dist = {}
    for view, products in cross.items():
        na = jax.lax.dynamic_slice_in_dim(jnp.asarray(norms[view], dtype), start, rows)
        nb = jnp.asarray(norms[view], dtype)
        block = jnp.maximum(na[:, None] + nb[None, :] - 2.0 * jnp.asarray(products, dtype), 0.0)
        dist[view] = block * (1.0 - eye)
    if "view1" in dist:
        dist["whole"] = dist["view1"] + dist["view2"]
    out, finite = [], jnp.asarray(True)
    for matrix, view, width in zip(built, grams, widths):
        gram = gram_matrix(dist[view], width)
        finite = finite & jnp.all(jnp.isfinite(gram))
        out.append(jax.lax.dynamic_update_slice(matrix, gram, (start, jnp.int32(0))))
    return tuple(out), finite


__all__ = [
    "BLOCK_ROWS",
    "Dense",
    "Products",
    "SetupArrays",
    "distances",
    "pair",
    "setup_arrays",
    "sparse_grams",
    "sparse_views",
]
