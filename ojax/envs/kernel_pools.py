"""Streams of the registered kernel learners: a pool of Gram rows and an order of pool rows.

Each stream is a pool of :data:`ojax.transfer.registry.POOL_SIZE` examples (Gram rows of a
Gaussian kernel, one or two views, a frozen "source" classifier's outputs as offsets where the
method carries one) and an order of pool rows: `(pool_xs, pool_ys, None, order)`, what
:func:`ojax.run_entry` gives :func:`ojax.run`.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ojax.core import Array
from ojax.transfer.kernels import gram_matrix, squared_distances
from ojax.transfer.registry import POOL_SIZE
from ojax.transfer.runner import kernel_pool


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
    """`num_steps` pool rows: permutations of the pool, one after the other."""
    rounds = -(-num_steps // POOL_SIZE)
    keys = jax.random.split(key, rounds)
    perms = jax.vmap(lambda k: jax.random.permutation(k, POOL_SIZE))(keys)
    return perms.reshape(-1)[:num_steps].astype(jnp.int32)


def _gram(x: Array) -> Array:
    return gram_matrix(squared_distances(x), float(max(x.shape[1], 1)) ** 0.5)


def _one_view(key: Array, num_steps: int, dim: int, with_source: bool) -> tuple:
    k_data, k_order = jax.random.split(key)
    x, y, h = _data(k_data, dim)
    xs, ys = kernel_pool(y, grams=_gram(x), offsets=h if with_source else None)
    return xs, ys, None, _order(k_order, num_steps)


def _two_views(key: Array, num_steps: int, dim: int, with_source: bool) -> tuple:
    k_data, k_order = jax.random.split(key)
    x, y, h = _data(k_data, max(dim, 2))
    k = max(dim // 2, 1)
    offsets = (h if with_source else jnp.zeros_like(h), jnp.zeros_like(h))
    xs, ys = kernel_pool(y, grams=(_gram(x[:, :k]), _gram(x[:, k:])), offsets=offsets)
    return xs, ys, None, _order(k_order, num_steps)


def kernel_pool_stream(key: Array, num_steps: int, dim: int) -> tuple:
    """One view, offsets zero (PA)."""
    return _one_view(key, num_steps, dim, False)


def kernel_pool_source_stream(key: Array, num_steps: int, dim: int) -> tuple:
    """One view, offsets the source classifier's outputs (PAIO, OTL, HomOTL-II)."""
    return _one_view(key, num_steps, dim, True)


def kernel_two_views_stream(key: Array, num_steps: int, dim: int) -> tuple:
    """Two views (the first `dim // 2` features, at least one, are the source's view; the
    others the second; `dim >= 2`), offsets zero (COTL0)."""
    return _two_views(key, num_steps, dim, False)


def kernel_two_views_source_stream(key: Array, num_steps: int, dim: int) -> tuple:
    """Two views, the source classifier's outputs as the first view's offsets (COTL, SCT)."""
    return _two_views(key, num_steps, dim, True)


__all__ = [
    "kernel_pool_source_stream",
    "kernel_pool_stream",
    "kernel_two_views_source_stream",
    "kernel_two_views_stream",
]
