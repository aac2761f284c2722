"""Euclidean projections onto the feasible sets of the OCO learners.

Wrappers over `optax.projections` (the simplex is written here, see :func:`simplex`) with the set
chosen by a static name and its size a
runtime value (so it can be vmapped):

* `"none"`: the identity (unconstrained);
* `"l2_ball"`: `{w : ||w|| <= radius}`, `P(u) = u / max(1, ||u|| / radius)`;
* `"box"`: `[-radius, radius]^d`;
* `"simplex"`: `{w >= 0 : sum(w) = radius}` (the probability simplex at radius 1).

References:
  Duchi, J., Shalev-Shwartz, S., Singer, Y., Chandra, T. (2008). Efficient projections onto the
  l1-ball for learning in high dimensions.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import optax.projections as op

from ojax.validation import InputError, check_choice

Array = jax.Array

SETS = ("none", "l2_ball", "box", "simplex")


def l2_ball(w: Array, radius: Array | float = 1.0) -> Array:
    """Projection onto the L2 ball of `radius` centred at 0."""
    return op.projection_l2_ball(w, radius)


def box(w: Array, radius: Array | float = 1.0) -> Array:
    """Projection onto the box `[-radius, radius]^d` (coordinate-wise clipping)."""
    return op.projection_box(w, -radius, radius)


def simplex(w: Array, radius: Array | float = 1.0) -> Array:
    """Projection onto `{w >= 0 : sum(w) = radius}` (sort-based, Duchi et al. 2008).

    `P(w) = max(w - theta, 0)` with `theta = (sum_{i<=k} u_i - radius) / k`, `u` the
    sorted `w` (descending) and `k` the largest index with `u_k > theta_k`. Written here
    rather than taken from optax so that it is clean under strict dtype promotion.
    """
    u = jnp.sort(w)[::-1]
    index = jnp.arange(1, w.shape[-1] + 1, dtype=w.dtype)
    thresholds = (jnp.cumsum(u) - radius) / index
    k = jnp.sum(u > thresholds) - 1
    return jnp.maximum(w - thresholds[k], 0.0)


def project(kind: str, w: Array, radius: Array | float = 1.0) -> Array:
    """Projects `w` onto the set named `kind` (static) of size `radius` (runtime)."""
    if kind == "none":
        return w
    if kind == "l2_ball":
        return l2_ball(w, radius)
    if kind == "box":
        return box(w, radius)
    if kind == "simplex":
        return simplex(w, radius)
    check_choice("projection", kind, SETS)
    raise AssertionError  # unreachable


def check_member(name: str, kind: str, w: Array, radius: Array | float = 1.0) -> None:
    """Raises :class:`~ojax.validation.InputError` unless `w` lies in the set `kind` of size
    `radius` (up to a relative `1e-5`); skipped on tracers. A start point outside its set
    would make the first iterate infeasible."""
    if isinstance(w, jax.core.Tracer) or isinstance(radius, jax.core.Tracer) or kind == "none":
        return
    with jax.ensure_compile_time_eval():  # concrete even inside an outer trace
        distance, norm = (float(v) for v in _distance(kind, jnp.asarray(w), radius))
    if distance > 1e-5 * max(1.0, norm):
        raise InputError(
            f"{name} must lie in the feasible set {kind!r} of radius {float(radius):g}, got a "
            f"point at distance {distance:.3g} from it"
        )


@functools.partial(jax.jit, static_argnums=0)
def _distance(kind: str, w: Array, radius: Array | float) -> tuple[Array, Array]:
    """`(||P(w) - w||, ||w||)` for the set `kind` of size `radius`: one program per set and
    shape (eager, its few operations would each compile one)."""
    return jnp.linalg.norm(project(kind, w, radius) - w), jnp.linalg.norm(w)


def start_in_set(feasible_set: str) -> Callable[[Any, Array], None]:
    """The `check_start` of a projected learner whose params hold a `radius`: `x0` must lie
    in `feasible_set` of that radius (:func:`check_member`; a grid of radii is checked point
    by point by vmap)."""

    def check_start(params: Any, x0: Array) -> None:
        if jnp.ndim(params.radius) == 0:
            check_member("x0", feasible_set, x0, params.radius)

    return check_start


METRIC_ITERATIONS = 30
"""Newton steps on the Lagrange multiplier in :func:`l2_ball_in_metric` (a fixed count)."""


def l2_ball_in_metric(coords: Array, eigenvalues: Array, radius: Array | float = 1.0) -> Array:
    """Projection onto the ball `||x|| <= radius` in the norm of `A`: the minimizer of
    `(x - y)' A (x - y)` over the ball.

    Written in an orthonormal eigenbasis of `A` (`A = Q diag(eigenvalues) Q'`, all
    eigenvalues > 0): `coords = Q' y`, and the result is `Q' x` (for a diagonal `A` the
    basis is the identity and `coords = y`). Outside the ball the minimizer is `x(mu) =
    (A + mu I)^-1 A y` with `mu > 0` the root of `phi(mu) = 1 / ||x(mu)|| - 1 / radius`,
    increasing and concave in `mu` (the trust-region secular equation): Newton's method from
    `mu = 0` climbs to the root without overshooting, :data:`METRIC_ITERATIONS` steps (a fixed
    count, so the loop has a static length); the point is then rescaled onto the sphere to remove
    the last rounding.
    """
    inside = jnp.sum(coords**2) <= radius**2

    def newton(_, mu: Array) -> Array:
        x = eigenvalues * coords / (eigenvalues + mu)
        norm = jnp.sqrt(jnp.sum(x**2))
        safe = jnp.where(norm > 0, norm, 1.0)
        slope = jnp.sum(x**2 / (eigenvalues + mu)) / safe**3
        step = (1.0 / safe - 1.0 / radius) / jnp.where(slope > 0, slope, 1.0)
        return jnp.maximum(mu - step, 0.0)

    mu = jax.lax.fori_loop(0, METRIC_ITERATIONS, newton, jnp.zeros((), coords.dtype))
    x = eigenvalues * coords / (eigenvalues + mu)
    x = x * jnp.minimum(1.0, radius / jnp.maximum(jnp.sqrt(jnp.sum(x**2)), radius))
    return jnp.where(inside, coords, x)


__all__ = [
    "METRIC_ITERATIONS",
    "SETS",
    "box",
    "check_member",
    "l2_ball",
    "l2_ball_in_metric",
    "project",
    "simplex",
    "start_in_set",
]
