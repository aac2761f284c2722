"""The set-up of a transfer split as one compiled program: the source classifier ``h``, its
outputs on the target pool and the target's Gram matrices.

:func:`setup_arrays` computes in one ``jit`` (one program per input shapes, dtypes and Gram
views; a second split of the same shapes reuses it) what :func:`~ojax.transfer.train_source`,
:func:`~ojax.transfer.source_outputs` and :func:`~ojax.transfer.gram_matrix` compute one
operation at a time:

* the source rows' squared distances, their Gram matrix at the source width and the averaged
  kernel PA-I over the source order (one ``lax.scan``): ``h``;
* ``h(x)`` on every target row (the target's source view against the source rows);
* the target's squared distances per view (``whole``; or ``view1``, ``view2`` and ``whole =
  view1 + view2`` for a heterogeneous split) and their Gram matrices at the widths asked.

Dense features enter the program as they are (their products are computed inside); for scipy
sparse features (newsgroup4, the LIBSVM files) the cross products and squared norms are
computed on the host first (:func:`pair`), so the program never sees the 62061-word rows.
The operations are those of the eager functions, in the same order and dtypes.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import scipy.sparse as sp

from ojax.core import Array
from ojax.losses import zero_one
from ojax.runner import run
from ojax.transfer.kernels import (
    KernelPoint,
    SVBuffer,
    cross_products,
    distances_from_products,
    gram_matrix,
    squared_norms,
)
from ojax.transfer.pa import KernelPAParams, averaged_kernel_pa, source_classifier


class Dense(NamedTuple):
    """Dense rows ``a`` against ``b`` (``None``: against themselves); products in the program."""

    a: Any
    b: Any = None


class Products(NamedTuple):
    """Sparse rows, reduced on the host: ``<a_i, b_j>`` and the squared norms (``norms_b``
    ``None``: the rows against themselves)."""

    cross: Any
    norms_a: Any
    norms_b: Any = None


def pair(a: Any, b: Any = None, dtype: Any = np.float64) -> Dense | Products:
    """What the program needs of the squared distances of ``a``'s rows to ``b``'s (default
    ``a``'s own): the dense features, or for scipy sparse input the products computed on the
    host (in float64, then cast to ``dtype`` as :func:`~ojax.transfer.squared_distances` does)."""
    if sp.issparse(a) or (b is not None and sp.issparse(b)):
        cross = np.asarray(cross_products(a, a if b is None else b), dtype)
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
    """The jitted set-up of these Gram views in ``dtype``, kept traced on disk beside the
    compilation cache (:func:`ojax.sweep.programs.jit`): a warm process neither traces nor
    lowers it."""
    from ojax.sweep import programs

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
    """``h``, ``h`` on the target rows and the Gram matrices ``grams`` (``(view, width)``
    pairs; views ``"whole"``, ``"view1"``, ``"view2"``) of a split, in one compiled program.

    Args:
      source_x: ``(S, k)`` source rows (dense or scipy sparse).
      source_y: their labels in {-1, +1}.
      target_x: ``(N, d)`` target rows: ``k == d`` homogeneous, else the source saw the first
        ``k`` features (heterogeneous: views ``view1 = [:, :k]``, ``view2 = [:, k:]``).
      source_order: ``(S',)`` int source rows in the order ``h`` learns them (checked by the
        caller).
      source_params: ``h``'s params, in ``dtype``.
      grams: the Gram matrices to build.
      dtype: the floating dtype of everything.

    Returns:
      :class:`SetupArrays` (device arrays; nothing is checked here: see ``finite``).
    """
    k, d = source_x.shape[1], target_x.shape[1]
    dtype = np.dtype(dtype)
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


__all__ = ["Dense", "Products", "SetupArrays", "distances", "pair", "setup_arrays"]
