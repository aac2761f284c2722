"""Non-stationary environments: switching experts, piecewise-stationary regression, and a
comparator drifting as a random walk with a set path length.

Each is seeded and jittable (the sizes are static; the switch times may be given, drawn at
random, or equally spaced), so a batch of seeds is one `jax.vmap`:

* :func:`switch_times`: `S` switches in `1 .. T-1` (0-based rounds where a new stage starts);
* :func:`switching_experts`: `N` experts with Bernoulli losses; in each of the `S + 1`
  stages one expert (another than the previous stage's) has the low mean;
* :func:`piecewise_regression`: `y_t = <w*_s, x_t> + noise` with `x_t` uniform in the ball of
  radius `feature_radius` and, per stage `s`, `w*_s` of uniform direction and norm
  `radius * U(0, 1)` (PyNOL's `LinearRegressionGenerator`, by the switch times);
* :func:`random_walk`: `u_1` uniform in the ball of `radius`, then steps of length exactly
  `P / (T - 1) <= radius` in uniform directions, a step that would leave the ball taken
  toward the centre instead, so the path length `sum_t ||u_{t+1} - u_t||` is `P` exactly.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ojax.core import Array
from ojax.envs.streams import standard_normal, uniform
from ojax.validation import InputError, check_int, check_range


class SwitchingExperts(NamedTuple):
    """A switching-experts sequence."""

    losses: Array  # (T, N) in {0, 1}
    best: Array  # (T,) int32, the stage's good expert at each round
    times: Array  # (S,) int32, the rounds (0-based) where a new stage starts


class PiecewiseRegression(NamedTuple):
    """A piecewise-stationary regression stream."""

    xs: Array  # (T, d)
    ys: Array  # (T,)
    comparators: Array  # (T, d): the stage's w* at each round
    times: Array  # (S,) int32


def switch_times(key: Array | None, num_steps: int, num_switches: int, times: Any = None) -> Array:
    """`(S,)` sorted int32 rounds in `1 .. T-1` where a new stage starts: `times` as given
    (checked), else drawn at random without replacement from `key`, else (`key` None) equally
    spaced (`ceil(T / (S + 1))` rounds per stage, PyNOL's split)."""
    num_steps = check_int("num_steps", num_steps, low=1)
    num_switches = check_int("num_switches", num_switches, low=0, high=num_steps - 1)
    if times is not None:
        given = np.asarray(times)
        if given.shape != (num_switches,) or not np.issubdtype(given.dtype, np.integer):
            raise InputError(f"times must be {num_switches} integers, got {given!r}")
        if num_switches and (np.any(np.diff(given) <= 0) or given[0] < 1 or given[-1] >= num_steps):
            raise InputError(f"times must increase within [1, {num_steps - 1}], got {given!r}")
        return jnp.asarray(given, jnp.int32)
    if key is None:
        stage = -(-num_steps // (num_switches + 1))
        return jnp.arange(1, num_switches + 1, dtype=jnp.int32) * stage
    drawn = jax.random.choice(key, num_steps - 1, (num_switches,), replace=False) + 1
    return jnp.sort(drawn).astype(jnp.int32)


def stages(num_steps: int, times: Array) -> Array:
    """`(T,)` int32: the stage of each round (the switches at or before it)."""
    return jnp.searchsorted(times, jnp.arange(num_steps, dtype=jnp.int32), side="right").astype(
        jnp.int32
    )


def _in_ball(key: Array, shape: tuple[int, ...], radius: float, dtype: Any) -> Array:
    """Uniform in the ball of `radius` (direction Gaussian, norm `radius U^(1/d)`)."""
    k1, k2 = jax.random.split(key)
    z = standard_normal(k1, shape, dtype)
    z = z / jnp.linalg.norm(z, axis=-1, keepdims=True)
    return z * radius * uniform(k2, (*shape[:-1], 1), dtype) ** (1.0 / shape[-1])


def switching_experts(
    key: Array,
    num_steps: int,
    num_experts: int,
    num_switches: int,
    *,
    times: Any = None,
    random_times: bool = False,
    good: float = 0.2,
    bad: float = 0.7,
    dtype: Any = jnp.float32,
) -> SwitchingExperts:
    """Bernoulli losses of `num_experts` experts, the good one (mean `good`, the others
    `bad`) changing at `num_switches` switches (`times`, or random with `random_times`, or
    equally spaced)."""
    num_experts = check_int("num_experts", num_experts, low=2)
    check_range("good", good, 0.0, 1.0)
    check_range("bad", bad, 0.0, 1.0)
    k1, k2, k3, k4 = jax.random.split(key, 4)
    when = switch_times(k1 if random_times else None, num_steps, num_switches, times)
    moves = 1 + jax.random.randint(k2, (num_switches,), 0, num_experts - 1)
    first = jax.random.randint(k3, (1,), 0, num_experts)
    per_stage = jnp.cumsum(jnp.concatenate([first, moves])) % num_experts
    best = per_stage[stages(num_steps, when)].astype(jnp.int32)
    means = jnp.where(jnp.arange(num_experts, dtype=jnp.int32)[None, :] == best[:, None], good, bad)
    draws = uniform(k4, (num_steps, num_experts), dtype)
    return SwitchingExperts((draws < means).astype(dtype), best, when)


def piecewise_regression(
    key: Array,
    num_steps: int,
    dim: int,
    num_switches: int,
    *,
    times: Any = None,
    random_times: bool = False,
    radius: float = 1.0,
    feature_radius: float = 1.0,
    noise: float = 0.05,
    dtype: Any = jnp.float32,
) -> PiecewiseRegression:
    """`y_t = <w*_s, x_t> + noise e_t` with a new `w*_s` at each of `num_switches` switches
    (see the module docstring)."""
    dim = check_int("dim", dim, low=1)
    k1, k2, k3, k4, k5 = jax.random.split(key, 5)
    when = switch_times(k1 if random_times else None, num_steps, num_switches, times)
    xs = _in_ball(k2, (num_steps, dim), feature_radius, dtype)
    direction = standard_normal(k3, (num_switches + 1, dim), dtype)
    direction = direction / jnp.linalg.norm(direction, axis=-1, keepdims=True)
    targets = direction * radius * uniform(k4, (num_switches + 1, 1), dtype)
    comparators = targets[stages(num_steps, when)]
    ys = jnp.sum(xs * comparators, axis=-1) + noise * standard_normal(k5, (num_steps,), dtype)
    return PiecewiseRegression(xs, ys, comparators, when)


def random_walk(
    key: Array,
    num_steps: int,
    dim: int,
    path_length: Array | float,
    *,
    radius: float = 1.0,
    dtype: Any = jnp.float32,
) -> Array:
    """`(T, d)` comparators in the ball of `radius` with path length exactly `path_length`
    (at most `radius (T - 1)`: steps no longer than the radius; see the module docstring).
    `path_length` may be traced (a vmap over a grid of path lengths)."""
    num_steps = check_int("num_steps", num_steps, low=2)
    if not isinstance(path_length, jax.core.Tracer):
        check_range("path_length", path_length, 0.0, radius * (num_steps - 1))
    k1, k2 = jax.random.split(key)
    start = _in_ball(k1, (dim,), radius, dtype)
    step = jnp.asarray(path_length, dtype) / (num_steps - 1)
    directions = standard_normal(k2, (num_steps - 1, dim), dtype)
    directions = directions / jnp.linalg.norm(directions, axis=-1, keepdims=True)

    def move(u: Array, direction: Array) -> tuple[Array, Array]:
        ahead = u + step * direction
        norm = jnp.linalg.norm(u)
        inward = u - step * u / jnp.where(norm > 0, norm, 1.0)
        nxt = jnp.where(jnp.linalg.norm(ahead) <= radius, ahead, inward)
        return nxt, nxt

    _, rest = jax.lax.scan(move, start, directions)
    return jnp.concatenate([start[None], rest])


def switching_experts_stream(key: Array, num_steps: int, dim: int) -> tuple[Array, Array]:
    """The registry's stream: :func:`switching_experts` of `dim` experts with 3 equally
    spaced switches; `(losses, zeros)`."""
    data = switching_experts(key, num_steps, dim, min(3, num_steps - 1))
    return data.losses, jnp.zeros(num_steps, data.losses.dtype)


def piecewise_regression_stream(key: Array, num_steps: int, dim: int) -> tuple[Array, Array]:
    """The registry's stream: :func:`piecewise_regression` with 3 equally spaced switches;
    `(xs, ys)`."""
    data = piecewise_regression(key, num_steps, dim, min(3, num_steps - 1))
    return data.xs, data.ys


__all__ = [
    "PiecewiseRegression",
    "SwitchingExperts",
    "piecewise_regression",
    "piecewise_regression_stream",
    "random_walk",
    "stages",
    "switch_times",
    "switching_experts",
    "switching_experts_stream",
]
