"""The kernel learners of :mod:`ojax.transfer` in the learner registry (kind ``"kernel"``).

Each entry's stream is a pool of :data:`POOL_SIZE` examples (Gram rows of a Gaussian kernel, one
or two views, a frozen "source" classifier's outputs as offsets where the method carries one)
and an order of pool rows: ``(pool_xs, pool_ys, None, order)``, what
:func:`ojax.run_entry` gives :func:`ojax.run`. The recorded loss is the mistake
(:data:`ojax.losses.zero_one`).
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp

from ojax.core import Array, LearnerEntry, register_learner
from ojax.transfer import heterogeneous, homogeneous
from ojax.transfer.kernels import gram_matrix, squared_distances
from ojax.transfer.pa import KernelPAParams, kernel_pa
from ojax.transfer.runner import kernel_pool

POOL_SIZE = 64
"""Examples in a registered kernel learner's pool (its ``"pool"`` layout capacity)."""


def _data(key: Array, dim: int) -> tuple[Array, Array, Array]:
    """Features, labels of a noisy hyperplane, and the outputs of a source classifier of an
    unrelated hyperplane (a hard transfer case)."""
    k1, k2, k3, k4 = jax.random.split(key, 4)
    w_star = jax.random.normal(k1, (dim,))
    x = jax.random.normal(k2, (POOL_SIZE, dim))
    y = jnp.where(x @ w_star >= 0, 1.0, -1.0)
    y = jnp.where(jax.random.bernoulli(k3, 0.15, (POOL_SIZE,)), -y, y)
    w_source = jax.random.normal(k4, (dim,))  # a source unrelated to the target
    return x, y, 0.5 * jnp.tanh(x @ w_source)


def _order(key: Array, num_steps: int) -> Array:
    """``num_steps`` pool rows: permutations of the pool, one after the other."""
    rounds = -(-num_steps // POOL_SIZE)
    keys = jax.random.split(key, rounds)
    perms = jax.vmap(lambda k: jax.random.permutation(k, POOL_SIZE))(keys)
    return perms.reshape(-1)[:num_steps].astype(jnp.int32)


def _gram(x: Array) -> Array:
    return gram_matrix(squared_distances(x), float(max(x.shape[1], 1)) ** 0.5)


def one_view_stream(with_source: bool) -> Callable[[Array, int, int], tuple]:
    """A ``make_stream`` for one-view learners (offsets: the source outputs or zeros)."""

    def make_stream(key: Array, num_steps: int, dim: int) -> tuple:
        k_data, k_order = jax.random.split(key)
        x, y, h = _data(k_data, dim)
        xs, ys = kernel_pool(y, grams=_gram(x), offsets=h if with_source else None)
        return xs, ys, None, _order(k_order, num_steps)

    return make_stream


def two_view_stream(with_source: bool) -> Callable[[Array, int, int], tuple]:
    """A ``make_stream`` for two-view learners: the first ``dim // 2`` features (at least one)
    are the source's view, the others the second view; ``dim >= 2``."""

    def make_stream(key: Array, num_steps: int, dim: int) -> tuple:
        k_data, k_order = jax.random.split(key)
        x, y, h = _data(k_data, max(dim, 2))
        k = max(dim // 2, 1)
        offsets = (h if with_source else jnp.zeros_like(h), jnp.zeros_like(h))
        xs, ys = kernel_pool(y, grams=(_gram(x[:, :k]), _gram(x[:, k:])), offsets=offsets)
        return xs, ys, None, _order(k_order, num_steps)

    return make_stream


def _grid(*rows: tuple[float, ...]) -> list[Array]:
    return [jnp.asarray(column, jnp.float32) for column in zip(*rows)]


def _entry(name: str, factory, params_class, default, grid, stream) -> None:
    register_learner(
        LearnerEntry(
            name,
            "kernel",
            lambda dim: factory(POOL_SIZE, "pool"),
            lambda: params_class(*(jnp.asarray(v, jnp.float32) for v in default)),
            lambda: params_class(*_grid(*grid)),
            stream,
            "zero_one",
        )
    )


def _register() -> None:
    one, one_h = one_view_stream(False), one_view_stream(True)
    two, two_h = two_view_stream(False), two_view_stream(True)
    pa_grid = ((0.02, 1.0), (5.0, 1.0))
    _entry("kernel_pa", kernel_pa, KernelPAParams, (5.0, 2.0), pa_grid, one)
    _entry("paio", kernel_pa, KernelPAParams, (5.0, 2.0), pa_grid, one_h)
    otl_grid = ((0.02, 1.0, 0.1), (5.0, 1.0, 4.0))
    _entry("otl", homogeneous.otl, homogeneous.OTLParams, (5.0, 2.0, 0.5), otl_grid, one_h)
    _entry(
        "otl_fixed", homogeneous.otl_fixed, homogeneous.OTLParams, (5.0, 2.0, 0.5), otl_grid, one_h
    )
    _entry(
        "homotl2",
        homogeneous.homotl2,
        homogeneous.HomOTL2Params,
        (5.0, 2.0, 0.9),
        ((0.02, 1.0, 0.5), (5.0, 1.0, 0.95)),
        one_h,
    )
    cotl_grid = ((0.02, 1.0, 1.0, 1.0, 1.0), (5.0, 1.0, 1.0, 0.5, 2.0))
    cotl_default = (5.0, 2.0, 2.0, 1.0, 1.0)
    _entry("cotl", heterogeneous.cotl, heterogeneous.COTLParams, cotl_default, cotl_grid, two_h)
    _entry("cotl0", heterogeneous.cotl0, heterogeneous.COTLParams, cotl_default, cotl_grid, two)
    sct_grid = ((0.02, 1.0, 1.0), (5.0, 1.0, 1.0))
    _entry("sct", heterogeneous.sct, heterogeneous.SCTParams, (5.0, 2.0, 2.0), sct_grid, two_h)


_register()

__all__ = ["POOL_SIZE", "one_view_stream", "two_view_stream"]
