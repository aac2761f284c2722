"""Metrics of non-stationary runs, on device and vmappable: dynamic regret against a given
comparator sequence with its path length, and interval (adaptive) regret over the intervals
of a geometric cover against the best fixed point of each interval, in closed form.

Time is on the last axis of per-step losses (`(..., T)`) and on the second-to-last of
per-step data (`(..., T, d)`), as in :mod:`ojax.metrics`; extra leading axes (seeds, a grid)
pass through, so a batch of runs needs no `vmap` (and works under one).

Interval regret has a closed form where the best fixed point of an interval has one
(:data:`INTERVAL_KINDS`): linear losses over the L2 ball (`-R ||sum z||`) and the simplex
(`min_i sum z_i`), the quadratic `0.5 ||x - z||^2` unconstrained (or over a set holding the
interval's mean: the mean is optimal), and the square loss `0.5 (<w, x> - y)^2` of a linear
model unconstrained (least squares: `0.5 (sum y^2 - b' A^+ b)`, `A = sum x x'`,
`b = sum x y`). It has none for the square loss over a ball (a trust-region problem: the
unconstrained value is a lower bound of the constrained one, so the regret it gives is an
upper bound), nor for the absolute, hinge or logistic losses (a linear or convex program per
interval).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from ojax.core import Array
from ojax.losses import Objective
from ojax.metrics import regret
from ojax.validation import check_choice, check_int

INTERVAL_KINDS = ("linear_ball", "linear_simplex", "quadratic", "square")


def path_length(comparators: ArrayLike) -> Array:
    """`P_T = sum_{t >= 2} ||u_t - u_{t-1}||` of `(..., T, d)` comparators: `(...)`."""
    steps = jnp.diff(jnp.asarray(comparators), axis=-2)
    return jnp.sum(jnp.linalg.norm(steps, axis=-1), axis=-1)


def comparator_losses(objective: Objective, comparators: ArrayLike, zs: ArrayLike) -> Array:
    """`f_t(u_t) = objective.value(u_t, z_t)` per step: `(..., T)` from `(..., T, d)`."""
    value = objective.value
    for _ in range(jnp.ndim(zs) - 1):
        value = jax.vmap(value)
    return value(jnp.asarray(comparators), jnp.asarray(zs))


def dynamic_regret(
    losses: ArrayLike,
    zs: ArrayLike,
    comparators: ArrayLike,
    objective: Objective,
    mask: ArrayLike | None = None,
) -> tuple[Array, Array]:
    """`(sum_{s <= t} f_s(x_s) - f_s(u_s), P_T)`: the dynamic regret curve `(..., T)`
    against the comparators `u_t` (`(..., T, d)`, e.g. :func:`ojax.envs.switching.random_walk`)
    and their path length `(...)`.

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax import losses
      >>> from ojax.nonstationary import dynamic_regret
      >>> zs = jnp.array([[1.0], [0.0], [1.0]])
      >>> curve, length = dynamic_regret(jnp.array([0.5, 0.5, 0.5]), zs, zs,
      ...                                losses.quadratic_objective)
      >>> print(curve, length)
      [0.5 1.  1.5] 2.0
    """
    paid = comparator_losses(objective, comparators, zs)
    return regret(
        jnp.asarray(losses), paid, None if mask is None else jnp.asarray(mask)
    ), path_length(comparators)


def geometric_cover(num_steps: int) -> np.ndarray:
    """`(K, 2)` int32 rounds `[start, end]` (1-based, inclusive) of the geometric cover's
    intervals `[i 2^k, (i + 1) 2^k - 1]` that meet `1..T` (cut at `T`), level by level.

    Examples:
      >>> print(geometric_cover(5).tolist())
      [[1, 1], [2, 2], [3, 3], [4, 4], [5, 5], [2, 3], [4, 5], [4, 5]]
    """
    num_steps = check_int("num_steps", num_steps, low=1)
    rows = []
    k = 0
    while 2**k <= num_steps:
        size = 2**k
        for start in range(size, num_steps + 1, size):
            rows.append((start, min(start + size - 1, num_steps)))
        k += 1
    return np.asarray(rows, np.int32)


def interval_sums(values: ArrayLike, intervals: Any, axis: int = -1) -> Array:
    """Sums of `values` over each interval `[start, end]` (1-based rounds) along `axis`: the
    interval axis replaces the time axis."""
    values = jnp.moveaxis(jnp.asarray(values), axis, -1)
    intervals = np.asarray(intervals)
    zero = jnp.zeros(values.shape[:-1] + (1,), values.dtype)
    prefix = jnp.concatenate([zero, jnp.cumsum(values, axis=-1)], axis=-1)
    out = prefix[..., intervals[:, 1]] - prefix[..., intervals[:, 0] - 1]
    return jnp.moveaxis(out, -1, axis)


def best_in_intervals(kind: str, data: Any, intervals: Any, radius: float = 1.0) -> Array:
    """The loss of the best fixed point of each interval, `(..., K)`, in closed form.

    Args:
      kind: one of :data:`INTERVAL_KINDS`.
      data: `zs` `(..., T, d)` for the linear and quadratic kinds; `(xs, ys)` with
        `(..., T, d)` and `(..., T)` for `"square"`.
      intervals: `(K, 2)` rounds, e.g. :func:`geometric_cover`.
      radius: the ball's radius (`"linear_ball"`).
    """
    check_choice("kind", kind, INTERVAL_KINDS)
    if kind == "square":
        xs, ys = (jnp.asarray(a) for a in data)
        second = interval_sums(xs[..., :, None] * xs[..., None, :], intervals, axis=-3)
        cross = interval_sums(xs * ys[..., None], intervals, axis=-2)
        energy = interval_sums(ys**2, intervals)
        fit = jnp.linalg.pinv(second, hermitian=True) @ cross[..., None]
        return 0.5 * (energy - jnp.sum(cross * fit[..., 0], axis=-1))
    zs = jnp.asarray(data)
    sums = interval_sums(zs, intervals, axis=-2)
    if kind == "linear_ball":
        return -radius * jnp.linalg.norm(sums, axis=-1)
    if kind == "linear_simplex":
        return jnp.min(sums, axis=-1)
    sizes = jnp.asarray(np.asarray(intervals)[:, 1] - np.asarray(intervals)[:, 0] + 1, zs.dtype)
    energy = interval_sums(jnp.sum(zs**2, axis=-1), intervals)
    return 0.5 * (energy - jnp.sum(sums**2, axis=-1) / jnp.broadcast_to(sizes, energy.shape))


def interval_regret(
    losses: ArrayLike, kind: str, data: Any, intervals: Any, radius: float = 1.0
) -> Array:
    """Regret on each interval against its best fixed point: `(..., K)` (see
    :func:`best_in_intervals`). Its maximum over the cover is the (strongly) adaptive regret
    the cover measures.

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax.nonstationary import geometric_cover, interval_regret
      >>> zs = jnp.array([[0.0, 1.0], [0.0, 1.0], [1.0, 0.0], [1.0, 0.0]])
      >>> paid = jnp.array([0.0, 0.0, 0.0, 1.0])  # negative: better than any fixed expert
      >>> print(interval_regret(paid, "linear_simplex", zs, geometric_cover(4)))
      [ 0.  0.  0.  1. -1.  1.  1.]
    """
    paid = interval_sums(losses, intervals)
    return paid - best_in_intervals(kind, data, intervals, radius)


__all__ = [
    "INTERVAL_KINDS",
    "best_in_intervals",
    "comparator_losses",
    "dynamic_regret",
    "geometric_cover",
    "interval_regret",
    "interval_sums",
    "path_length",
]
