"""The synthetic low-variance task environment of Denevi et al. (2020), seeded and jittable.

Per task `t`::

    X: n rows drawn N(0, I_d), each scaled to unit norm (uniform on the sphere)
    w_t = task_mean * 1 + task_spread * N(0, I_d)
    clean = X w_t;   e ~ N(0, I_n);   s = sqrt(var(clean) / var(e))  (ddof 0, over the n points)
    y = clean + s e                   (the empirical signal-to-noise ratio is exactly 1)

and the `n` points are split at random into `num_train` online points (in the order of the
random split) and `n - num_train` held-out points. Task `t` draws from
`jax.random.fold_in(key, t)`, so validation and test tasks (indices after the training tasks)
are generated after them and never overlap.

References:
  Denevi, G., Stamos, D. and Pontil, M. (2020). Online parameter-free learning of multiple low
  variance tasks (Section 6).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ojax.core import Array
from ojax.tasks import TaskBlock, task_slice
from ojax.validation import InputError, check_finite, check_int, check_nonnegative


class LowVarianceParams(NamedTuple):
    """The hyperparameters of LowVariance: a pytree of arrays passed at call time.

    Attributes:
      task_mean: every coordinate of the mean task vector (4 in the paper), shape ()
      task_spread: std of the task vectors around their mean (1 in the paper), shape ()
    """

    task_mean: Array  # every coordinate of the mean task vector (4 in the paper), shape ()
    task_spread: Array  # std of the task vectors around their mean (1 in the paper), shape ()


def default_low_variance_params(dtype=jnp.float32) -> LowVarianceParams:
    """The paper's environment: `w_t = 4 * 1 + N(0, I)`."""
    return LowVarianceParams(jnp.asarray(4.0, dtype), jnp.asarray(1.0, dtype))


def _one_task(
    key: Array, params: LowVarianceParams, num_points: int, dim: int, num_train: int, dtype
):
    # Two draws per task (one normal vector, one uniform vector): few random ops compile fast.
    k_normal, k_split = jax.random.split(key)
    z = jax.random.normal(k_normal, (num_points * dim + dim + num_points,), dtype)
    x = z[: num_points * dim].reshape(num_points, dim)
    x = x / jnp.linalg.norm(x, axis=1, keepdims=True)
    w = params.task_mean + params.task_spread * z[num_points * dim : num_points * dim + dim]
    noise = z[num_points * dim + dim :]
    clean = x @ w
    scale = jnp.sqrt(jnp.var(clean) / jnp.var(noise))
    y = clean + scale * noise
    order = jnp.argsort(jax.random.uniform(k_split, (num_points,), dtype))  # a random split
    train, test = order[:num_train], order[num_train:]
    return x[train], y[train], x[test], y[test], w


@functools.partial(
    jax.jit, static_argnames=("num_tasks", "num_points", "dim", "num_train", "dtype")
)
def _tasks(key, params, num_tasks, num_points, dim, num_train, first_task, dtype):
    # first_task is traced: later blocks of tasks reuse the compiled function.
    indices = jnp.asarray(first_task, jnp.int32) + jnp.arange(num_tasks, dtype=jnp.int32)
    keys = jax.vmap(lambda t: jax.random.fold_in(key, t))(indices)
    return jax.vmap(lambda k: _one_task(k, params, num_points, dim, num_train, dtype))(keys)


def _block(drawn: tuple[Array, ...], ones: Callable[..., Any]) -> tuple[TaskBlock, Array]:
    """The drawn arrays as a block, every point real (`ones`: `np.ones` inside a trace, where
    a NumPy mask stays known to :func:`ojax.run`, which then steps without a select)."""
    x_tr, y_tr, x_te, y_te, w = drawn
    return TaskBlock(x_tr, y_tr, ones(y_tr.shape, bool), x_te, y_te, ones(y_te.shape, bool)), w


def low_variance_tasks_core(
    key: Array,
    params: LowVarianceParams,
    num_tasks: int,
    num_points: int = 50,
    dim: int = 10,
    num_train: int = 25,
    first_task: int = 0,
    dtype=jnp.float32,
) -> tuple[TaskBlock, Array]:
    """The traceable body of :func:`low_variance_tasks` (no checks; vmap it over keys)."""
    return _block(
        _tasks(key, params, num_tasks, num_points, dim, num_train, first_task, dtype), np.ones
    )


def low_variance_tasks(
    key: Array,
    params: LowVarianceParams | None = None,
    num_tasks: int = 400,
    num_points: int = 50,
    dim: int = 10,
    num_train: int = 25,
    first_task: int = 0,
    dtype=jnp.float32,
) -> tuple[TaskBlock, Array]:
    """Tasks `first_task .. first_task + num_tasks - 1` of the low-variance environment.

    Args:
      key: a PRNG key (the environment's seed).
      params: the task mean and spread (default: the paper's 4 and 1).
      num_tasks: number of tasks T (static).
      num_points: points per task n (static).
      dim: input dimension d (static).
      num_train: online points per task; the rest are held out (static).
      first_task: index of the first task (a runtime value; validation / test tasks come after the
        training tasks).
      dtype: float dtype.

    Returns:
      `(tasks, task_vectors)`: a :class:`~ojax.meta.TaskBlock` (all masks True) and the true
      `(T, d)` task vectors.

    Examples:
      >>> import jax, jax.numpy as jnp
      >>> from ojax import envs
      >>> tasks, w = envs.low_variance_tasks(jax.random.key(0), num_tasks=3)
      >>> print(tasks.x_train.shape, round(float(jnp.linalg.norm(w.mean(axis=0))), 2))
      (3, 25, 10) 12.63
    """
    num_tasks = check_int("num_tasks", num_tasks, 1)
    num_points = check_int("num_points", num_points, 2)
    dim = check_int("dim", dim, 1)
    num_train = check_int("num_train", num_train, 1, num_points - 1)
    first_task = check_int("first_task", first_task, 0)
    if params is None:
        params = default_low_variance_params(dtype)
    check_finite("task_mean", params.task_mean)
    check_nonnegative("task_spread", params.task_spread)
    if not isinstance(key, jax.Array):
        raise InputError(f"key must be a jax PRNG key, got {type(key).__name__}")
    drawn = _tasks(key, params, num_tasks, num_points, dim, num_train, first_task, dtype)
    return _block(drawn, jnp.ones)


class SyntheticSplit(NamedTuple):
    """Training, validation and test tasks of one seed, and the true training task vectors."""

    train: TaskBlock
    validation: TaskBlock
    test: TaskBlock
    task_vectors: Array  # (T, d) of the training tasks


def synthetic_split(
    key: Array,
    params: LowVarianceParams,
    num_tasks: int = 400,
    num_validation: int = 20,
    num_test: int = 50,
    num_points: int = 50,
    dim: int = 10,
    num_train: int = 25,
    dtype=jnp.float32,
) -> SyntheticSplit:
    """Training tasks, then validation tasks, then test tasks of one seed (traceable).

    All tasks come from one call (task indices `0 .. T + V + T' - 1`), then are sliced: one
    batch of random draws compiles much faster than three.
    """
    total = num_tasks + num_validation + num_test
    tasks, w = low_variance_tasks_core(key, params, total, num_points, dim, num_train, 0, dtype)
    return SyntheticSplit(
        task_slice(tasks, 0, num_tasks),
        task_slice(tasks, num_tasks, num_tasks + num_validation),
        task_slice(tasks, num_tasks + num_validation, total),
        w[:num_tasks],
    )


def task_block_stream(key: Array, num_steps: int, dim: int) -> tuple[Array, Array, Array]:
    """Small ragged task blocks `(xs, ys, mask)` of the low-variance environment (the
    registry's `make_stream` for multi-task learners).

    About `num_steps` online points in `T = max(2, num_steps // 8)` tasks of up to 8 slots,
    each task with a random number (1 to 8) of real points first and padding after them.

    Examples:
      >>> import jax
      >>> from ojax.envs import multitask
      >>> xs, ys, mask = multitask.task_block_stream(jax.random.key(0), 40, 3)
      >>> print(xs.shape, mask.sum(axis=1))
      (5, 8, 3) [7 7 1 8 4]
    """
    num_steps = check_int("num_steps", num_steps, 1)
    dim = check_int("dim", dim, 1)
    slots, num_tasks = 8, max(2, num_steps // 8)
    k_tasks, k_sizes = jax.random.split(key)
    params = default_low_variance_params(jnp.float32)
    x, y, *_ = _tasks(k_tasks, params, num_tasks, 2 * slots, dim, slots, 0, jnp.float32)
    sizes = jax.random.randint(k_sizes, (num_tasks,), 1, slots + 1)
    mask = jnp.arange(slots)[None, :] < sizes[:, None]
    return x, y, mask


__all__ = [
    "LowVarianceParams",
    "SyntheticSplit",
    "default_low_variance_params",
    "low_variance_tasks",
    "low_variance_tasks_core",
    "synthetic_split",
    "task_block_stream",
]
