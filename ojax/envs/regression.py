"""Least-squares regression problems and streams: Gaussian inputs with a chosen covariance.

A problem fixes the covariance `Sigma = R diag(eigenvalues) R^T` (`R` a random rotation, or
the identity), the target `w*` and the noise level; examples are

    x = R (sqrt(eigenvalues) * z),   z ~ N(0, I),   y = <w*, x> + noise_std * e,   e ~ N(0, 1)

so `E[x x^T] = Sigma`, `E[x y] = Sigma w*` and the excess risk of `w` is the quadratic form
`Delta(w) = ||Sigma^{1/2} (w - w*)||^2`. Sampling is seeded and jittable (`num_samples` is
static); :func:`sample_block` draws block `b` of a stream from `fold_in(key, b)`, so a long
stream can be generated inside a scan without ever being stored.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

from ojax.core import Array
from ojax.validation import (
    InputError,
    check_finite,
    check_int,
    check_nonnegative,
    check_positive,
    check_range,
)

ILL_CONDITIONED_EIGENVALUES = (1.0, 0.5, 0.2, 0.05, 0.01)


class RegressionProblem(NamedTuple):
    """A linear-Gaussian least-squares problem (a pytree of arrays, so it can be vmapped)."""

    eigenvalues: Array  # eigenvalues of Sigma, shape (d,)
    rotation: Array  # orthogonal matrix whose columns are Sigma's eigenvectors, shape (d, d)
    w_star: Array  # the population minimizer w*, shape (d,)
    noise_std: Array  # standard deviation of the label noise, shape ()


def make_problem(
    key: Array,
    eigenvalues: ArrayLike | Sequence[float],
    *,
    noise_std: float = 1.0,
    w_star: ArrayLike | None = None,
    w_star_norm: float = 1.0,
    rotate: bool = True,
    dtype: jnp.dtype | None = None,
) -> RegressionProblem:
    """A problem with covariance eigenvalues `eigenvalues` under a random rotation.

    Args:
      key: PRNG key (rotation and, when `w_star` is None, the direction of `w*`).
      eigenvalues: `(d,)` positive eigenvalues of `Sigma`.
      noise_std: label noise standard deviation (>= 0).
      w_star: optional `(d,)` target; default a random direction of norm `w_star_norm`.
      w_star_norm: norm of the random target.
      rotate: False keeps `Sigma` diagonal (cheaper sampling for very large `d`).
      dtype: float dtype (default: float32, or float64 under `jax_enable_x64`).

    Returns:
      A :class:`RegressionProblem`.
    """
    eig = jnp.asarray(eigenvalues, dtype=dtype or jnp.result_type(float))
    if eig.ndim != 1 or eig.shape[0] < 1:
        raise InputError(f"eigenvalues must be a non-empty vector, got shape {eig.shape}")
    check_positive("eigenvalues", eig)
    check_range("noise_std", noise_std, 0.0, None)
    d = eig.shape[0]
    target = None
    if w_star is not None:
        target = jnp.asarray(w_star, eig.dtype)
        if target.shape != (d,):
            raise InputError(f"w_star must have shape ({d},), got shape {target.shape}")
        check_finite("w_star", target)
    check_nonnegative("w_star_norm", w_star_norm)
    norm = jnp.asarray(w_star_norm, eig.dtype)
    return _make_problem(key, eig, target, norm, jnp.asarray(noise_std, eig.dtype), rotate)


@functools.partial(jax.jit, static_argnames=("rotate",))
def _make_problem(key, eig, target, w_star_norm, noise_std, rotate):
    """The numeric part of :func:`make_problem`, one compiled function (not one per eager op)."""
    d = eig.shape[0]
    k_rot, k_w = jax.random.split(key)
    if rotate:
        q, r = jnp.linalg.qr(jax.random.normal(k_rot, (d, d), eig.dtype))
        rotation = q * jnp.where(jnp.diag(r) < 0, -1.0, 1.0).astype(eig.dtype)[None, :]
    else:
        rotation = jnp.eye(d, dtype=eig.dtype)
    if target is None:
        u = jax.random.normal(k_w, (d,), eig.dtype)
        target = u * (w_star_norm / jnp.linalg.norm(u))
    return RegressionProblem(eig, rotation, target, noise_std)


def ill_conditioned_problem(
    key: Array,
    eigenvalues: ArrayLike | Sequence[float] = ILL_CONDITIONED_EIGENVALUES,
    *,
    noise_std: float = 1.0,
    dtype: jnp.dtype | None = None,
) -> RegressionProblem:
    """The spec's ill-conditioned problem: eigenvalues `1, .5, .2, .05, .01` rotated."""
    return make_problem(key, eigenvalues, noise_std=noise_std, dtype=dtype)


def well_conditioned_problem(
    key: Array,
    dim: int,
    *,
    low: float = 0.5,
    high: float = 1.0,
    noise_std: float = 1.0,
    rotate: bool = True,
    dtype: jnp.dtype | None = None,
) -> RegressionProblem:
    """A well-conditioned problem: `dim` eigenvalues evenly spaced in `[low, high]`."""
    dim = check_int("dim", dim, 1)
    check_positive("low", low)
    check_range("high", high, low, None)
    eig = jnp.linspace(high, low, dim, dtype=dtype or jnp.result_type(float))
    return make_problem(key, eig, noise_std=noise_std, rotate=rotate, dtype=dtype)


def covariance(problem: RegressionProblem) -> Array:
    """`Sigma = R diag(eigenvalues) R^T`, shape `(d, d)`."""
    r = problem.rotation
    return (r * problem.eigenvalues[None, :]) @ r.T


def cross_moment(problem: RegressionProblem) -> Array:
    """`E[x y] = Sigma w*`, shape `(d,)`."""
    return covariance(problem) @ problem.w_star


def excess_risk(w: Array, problem: RegressionProblem) -> Array:
    """`Delta(w) = ||Sigma^{1/2} (w - w*)||^2` over the last axis of `w` (any batch)."""
    w = jnp.asarray(w)
    target = problem.w_star.reshape((1,) * (w.ndim - 1) + (-1,))
    coords = (w - target) @ problem.rotation  # coordinates in the eigenbasis
    eig = problem.eigenvalues.reshape((1,) * (coords.ndim - 1) + (-1,))
    return jnp.sum(eig * coords**2, axis=-1)


@functools.partial(jax.jit, static_argnames=("num_samples",))
def sample(key: Array, problem: RegressionProblem, num_samples: int) -> tuple[Array, Array]:
    """Draws `num_samples` i.i.d. examples: `xs (n, d)`, `ys (n,)`.

    Examples:
      >>> import jax
      >>> from ojax.envs import regression
      >>> problem = regression.ill_conditioned_problem(jax.random.key(0))
      >>> xs, ys = regression.sample(jax.random.key(1), problem, 4)
      >>> print(xs.shape, [round(v, 2) for v in ys.tolist()])
      (4, 5) [-0.38, -0.73, -1.69, -1.77]
    """
    k_x, k_e = jax.random.split(key)
    dtype = problem.eigenvalues.dtype
    d = problem.eigenvalues.shape[0]
    z = jax.random.normal(k_x, (num_samples, d), dtype) * jnp.sqrt(problem.eigenvalues)[None, :]
    xs = z @ problem.rotation.T
    noise = jax.random.normal(k_e, (num_samples,), dtype)
    ys = xs @ problem.w_star + problem.noise_std * noise
    return xs, ys


def sample_block(
    key: Array, problem: RegressionProblem, block_index: Array, block_size: int
) -> tuple[Array, Array]:
    """Block `block_index` of an endless stream: `sample(fold_in(key, block_index), ...)`.

    Jittable with a traced `block_index` (`block_size` static), for streams generated inside
    a scan and never stored.
    """
    return sample(jax.random.fold_in(key, block_index), problem, block_size)


def regression_stream(key: Array, num_steps: int, dim: int) -> tuple[Array, Array]:
    """A well-conditioned least-squares stream (the registry's `make_stream`)."""
    k_p, k_s = jax.random.split(key)
    return sample(k_s, well_conditioned_problem(k_p, dim), num_steps)


__all__ = [
    "ILL_CONDITIONED_EIGENVALUES",
    "RegressionProblem",
    "covariance",
    "cross_moment",
    "excess_risk",
    "ill_conditioned_problem",
    "make_problem",
    "regression_stream",
    "sample",
    "sample_block",
    "well_conditioned_problem",
]
