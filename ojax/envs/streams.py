"""Simple seeded, jittable streams: ``(key, num_steps, dim) -> (xs, ys)``.

Used by the learner registry (tests, ``ojax sweep``) and the quickstart.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ojax.core import Array


def unit_ball_stream(key: Array, num_steps: int, dim: int) -> tuple[Array, Array]:
    """Loss data ``z_t`` uniform in direction with norms uniform in [0, 1]."""
    k1, k2 = jax.random.split(key)
    z = jax.random.normal(k1, (num_steps, dim))
    z = z / jnp.linalg.norm(z, axis=1, keepdims=True)
    return z * jax.random.uniform(k2, (num_steps, 1)), jnp.zeros(num_steps)


def expert_losses_stream(key: Array, num_steps: int, dim: int) -> tuple[Array, Array]:
    """Losses in [0, 1] of ``dim`` experts, each with its own mean."""
    k1, k2 = jax.random.split(key)
    means = jax.random.uniform(k1, (dim,))
    p = jnp.broadcast_to(means, (num_steps, dim))
    return jax.random.bernoulli(k2, p).astype(jnp.float32), jnp.zeros(num_steps)


def realizable_advice_stream(key: Array, num_steps: int, dim: int) -> tuple[Array, Array]:
    """Binary advice of ``dim`` experts; the labels are those of expert 0 (realizable)."""
    advice = jax.random.bernoulli(key, 0.5, (num_steps, dim)).astype(jnp.int32)
    return advice, advice[:, 0]


def linear_regression_stream(key: Array, num_steps: int, dim: int) -> tuple[Array, Array]:
    """``y = <w*, x> + noise`` with ``x ~ N(0, I / dim)``, ``w* ~ N(0, I)``."""
    k1, k2, k3 = jax.random.split(key, 3)
    w_star = jax.random.normal(k1, (dim,))
    xs = jax.random.normal(k2, (num_steps, dim)) / jnp.sqrt(dim)
    return xs, xs @ w_star + 0.1 * jax.random.normal(k3, (num_steps,))
