"""Running the learners of :mod:`ojax.meta` over task blocks with :func:`ojax.run`, and the
paper's metrics.

Everything here is a thin wrapper of :func:`ojax.run`: the task blocks of a :class:`TaskBlock`
are its `xs` / `ys` / `mask`, the held-out points its `task_data`, and record functions
give what the paper measures:

* :func:`task_summary` (a `task_record`): after each task, the test error of the task's
  averaged iterate `w_bar` on its held-out points and the bias after the task;
* :func:`weights_record` (a per-step `record`): the prediction vector of every step.

:func:`run_meta` returns the :class:`ojax.core.Trace` (`loss`: the online errors `(T, n)`;
`task`: a :class:`TaskSummary` per task). The meta-test of a bias runs the fixed-bias learner
(:func:`~ojax.meta.biased_within_task`) on unseen tasks (:func:`meta_test_error`); a tuned grid
is one vmap of :func:`grid_score`. Everything traces, so seeds and grids are the caller's
`jax.vmap`::

    jax.vmap(lambda t: meta.run_meta(learner, params, t))(tasks_by_seed)
    jax.vmap(lambda p: meta.run_meta(learner, p, tasks))(grid)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from ojax import losses as _losses
from ojax.core import (
    Array,
    MultiTaskLearner,
    OCOLearner,
    Params,
    Step,
    TaskInfo,
    Trace,
    learner_factory,
)
from ojax.meta.learners import FixedBiasParams, params_dtype
from ojax.runner import run
from ojax.tasks import TaskBlock, TestPoints, check_task_block
from ojax.validation import InputError, check_shape


class TaskSummary(NamedTuple):
    """What :func:`task_summary` records after each task."""

    test_error: Array  # () mean loss of w_bar on the task's held-out points
    bias: Array  # (d,) the bias after the task


def task_average(state: Any) -> Array:
    """`w_bar`: the mean of the current task's pre-update prediction vectors `w_1..w_n`
    (`w_1` included, the final post-update state excluded; the bias if the task has no
    points). `state` is the state of a learner of :mod:`ojax.meta`."""
    task = state.task
    mean = task.sum_iterates / jnp.maximum(task.count, 1).astype(task.sum_iterates.dtype)
    return jnp.where(task.count > 0, mean, state.bias)


def test_error(w: Array, points: TestPoints, loss: _losses.Loss = _losses.absolute) -> Array:
    """Mean loss of the linear predictor `w` on the real held-out points (0 if none)."""
    values = jnp.where(points.mask, loss.value(points.x @ w, points.y), 0.0)
    return jnp.sum(values) / jnp.maximum(jnp.sum(points.mask), 1).astype(values.dtype)


test_error.__test__ = False  # type: ignore[attr-defined]  # not a pytest test


@learner_factory
def task_summary(
    loss: _losses.Loss = _losses.absolute,
) -> Callable[[Any, Params, TaskInfo], TaskSummary]:
    """A `task_record` for :func:`ojax.run`: :class:`TaskSummary` of each task, with
    `TaskInfo.data` the task's :class:`TestPoints` (equal losses give equal records: one
    compilation)."""

    def record(state: Any, params: Params, task: TaskInfo) -> TaskSummary:
        return TaskSummary(test_error(task_average(state), task.data, loss), state.bias)

    return record


@learner_factory
def weights_record(within: OCOLearner) -> Callable[[Step], Array]:
    """A per-step `record` for :func:`ojax.run`: the prediction vector `w = u + theta` of
    each step (`within`: the learner's within-task OCO learner)."""

    def record(step: Step) -> Array:
        return within.iterate(step.state.within, step.params.within) + step.state.bias

    return record


def initial_bias(learner: MultiTaskLearner, params: Params) -> Array:
    """The bias before the first task, `(d,)`."""
    return learner.init(params).bias


def bias_path(learner: MultiTaskLearner, params: Params, trace: Trace) -> Array:
    """`(T + 1, d)`: the bias before the first task and after each task of a
    :func:`run_meta` trace."""
    return jnp.concatenate([initial_bias(learner, params)[None], trace.task.bias])


def check_coins_bounded(params: Params, tasks: TaskBlock, loss: _losses.Loss) -> None:
    """The bettors need coins in `[-1, 1]`: `gradient_scale * L * max ||x|| <= 1` (else the
    wealth goes negative and the run fills with NaN). Checked on concrete values only, for the
    roles whose params have a `gradient_scale`."""
    roles = [params] + [getattr(params, f, None) for f in ("within", "meta")]
    scales = [getattr(p, "gradient_scale", None) for p in roles if p is not None]
    scales = [s for s in scales if s is not None and not isinstance(s, jax.core.Tracer)]
    if not scales or isinstance(tasks.x_train, jax.core.Tracer):
        return
    mask = np.asarray(tasks.mask_train)
    norms = np.where(mask, np.linalg.norm(np.asarray(tasks.x_train), axis=-1), 0.0)
    bound = float(np.max(np.abs(np.where(mask, np.asarray(tasks.y_train), 0.0))))
    scale = max(float(np.max(np.asarray(s))) for s in scales)
    largest = scale * loss.lipschitz(bound) * float(np.max(norms))
    if largest > 1.0 + 1e-5:
        raise InputError(
            f"gradient_scale * L * max ||x|| must be <= 1 (the coins must lie in [-1, 1]), got "
            f"{largest:.4g} (gradient_scale {scale:.4g}, max ||x|| {float(np.max(norms)):.4g}); "
            "use gradient_scale = 1 / (L max ||x||)"
        )


def run_meta(
    learner: MultiTaskLearner,
    params: Params,
    tasks: TaskBlock,
    loss: _losses.Loss = _losses.absolute,
    *,
    record: Callable[[Step], Any] | None = None,
    task_sums: bool = False,
    independent_tasks: bool = False,
) -> Trace:
    """Runs a multi-task learner over a :class:`TaskBlock` with :func:`ojax.run`.

    Args:
      learner: a learner of :mod:`ojax.meta` (static).
      params: its hyperparameters.
      tasks: `T` padded tasks.
      loss: the loss of the online errors and test errors (static).
      record: an optional per-step record (e.g. :func:`weights_record`).
      task_sums: record each task's summed online error, `(T,)`, instead of every point's
        (memory of big grids).
      independent_tasks: the learner carries nothing across tasks (a fixed bias): tasks run in
        parallel.

    Returns:
      The :class:`~ojax.core.Trace`: `loss` `(T, n)` online errors (0 on padding) or
      `(T,)` sums, `mask` the real points, `task` a :class:`TaskSummary` per task.

    Raises:
      InputError: a malformed or empty block, params out of their domain or not in the data's
        dtype, coins that the bettors cannot take (see :func:`check_coins_bounded`).
    """
    check_task_block("tasks", tasks)
    if params_dtype(params) != jnp.result_type(tasks.x_train):
        raise InputError(
            f"params: their dtype {params_dtype(params)} (the learner's state follows it) does "
            f"not match the tasks' dtype {jnp.result_type(tasks.x_train)}; build the params in "
            "the data's dtype, e.g. MetaParams.paper(dtype=tasks.dtype)"
        )
    check_coins_bounded(params, tasks, loss)
    _, trace = run(
        learner,
        params,
        tasks.x_train,
        tasks.y_train,
        loss,
        mask=tasks.mask_train,
        record=record,
        task_data=tasks.test_points(),
        task_record=task_summary(loss),
        task_sums=task_sums,
        independent_tasks=independent_tasks,
        keep_predictions=False,
    )
    return trace


def meta_test_error(
    fixed: MultiTaskLearner,
    params: FixedBiasParams,
    tasks: TaskBlock,
    loss: _losses.Loss = _losses.absolute,
) -> Array:
    """Meta-test error of a bias on unseen tasks: the fixed-bias learner `fixed`
    (:func:`~ojax.meta.biased_within_task`) runs with `params.bias` on every task's online
    part; the test error of its averaged iterate on the held-out part, averaged over the tasks.
    """
    trace = run_meta(fixed, params, tasks, loss, task_sums=True, independent_tasks=True)
    return jnp.mean(trace.task.test_error)


def meta_test_curve(
    fixed: MultiTaskLearner,
    params: FixedBiasParams,
    biases: Array,
    tasks: TaskBlock,
    loss: _losses.Loss = _losses.absolute,
) -> Array:
    """:func:`meta_test_error` of each bias of `biases` `(C, d)` (one vmap): `(C,)`."""
    check_shape("biases", biases, (None, tasks.x_train.shape[-1]))
    return jax.vmap(lambda b: meta_test_error(fixed, params._replace(bias=b), tasks, loss))(
        jnp.asarray(biases)
    )


class GridScore(NamedTuple):
    """The scores of one entry of a tuning grid."""

    cumulative: Array  # () final cumulative error on the training tasks
    validation: Array  # () meta-test error of the final bias on validation tasks (NaN if none)


def grid_score(
    learner: MultiTaskLearner,
    fixed: MultiTaskLearner,
    params: Params,
    tasks: TaskBlock,
    validation: TaskBlock | None = None,
    loss: _losses.Loss = _losses.absolute,
) -> GridScore:
    """Final cumulative error of `learner` on `tasks` and the meta-test error of its final
    bias on `validation` (with `fixed`, params `params.frozen(bias)`). Only per-task sums
    are kept, so a big grid is one vmap: `jax.vmap(lambda p: grid_score(...))(grid)`."""
    trace = run_meta(learner, params, tasks, loss, task_sums=True)
    final = jnp.sum(trace.loss) / jnp.sum(trace.mask).astype(trace.loss.dtype)
    if validation is None:
        return GridScore(final, jnp.full((), jnp.nan, final.dtype))
    frozen = FixedBiasParams(params.within, trace.task.bias[-1])
    return GridScore(final, meta_test_error(fixed, frozen, validation, loss))


def cumulative_error(
    errors: ArrayLike, mask: ArrayLike, points: ArrayLike | None = None
) -> np.ndarray:
    """The cumulative error curve (Denevi et al., 2020's name for it; a mean, not a sum): the
    running mean of the online errors of the real points, concatenated over tasks in order
    (`(..., T, n)` -> `(..., N)`, `N` real points), in float64; with `points` (1-based
    numbers of real points, increasing), only its values there (`(..., len(points))`: the
    same numbers, less memory for many runs).

    Every batch element must have the same number of real points. Host (NumPy) code: its
    length is the number of real points, a value, so it cannot run inside `jax.jit` or
    `jax.vmap` (a traced argument raises :class:`InputError`); call it on the run's outputs
    (`jax.device_get` of the losses and mask), or, inside a trace, take
    `jnp.cumsum(jnp.where(mask, errors, 0.0).ravel()) / jnp.maximum(jnp.cumsum(mask.ravel(),
    dtype=errors.dtype), 1.0)` (one value per slot, padding included).

    Examples:
      >>> import numpy as np
      >>> from ojax import meta
      >>> errors = np.array([[1.0, 3.0], [2.0, 0.0]])
      >>> print(meta.cumulative_error(errors, np.array([[True, True], [True, False]])))
      [1. 2. 2.]
      >>> print(meta.cumulative_error(errors, np.ones((2, 2), bool), points=[2, 4]))
      [2.  1.5]
    """
    given = {"errors": errors, "mask": mask, "points": points}
    traced = [name for name, value in given.items() if isinstance(value, jax.core.Tracer)]
    if traced:
        raise InputError(
            f"meta.cumulative_error: {', '.join(traced)} is traced (inside jax.jit / jax.vmap); "
            "it is NumPy code whose length is the number of real points: call it outside the "
            "trace, on concrete arrays"
        )
    errors = np.asarray(errors)
    mask = np.broadcast_to(np.asarray(mask, bool), errors.shape)
    lead = errors.shape[:-2]
    flat_e = errors.reshape(-1, math.prod(errors.shape[-2:]))
    flat_m = mask.reshape(flat_e.shape)
    counts = flat_m.sum(axis=1)
    if counts.size and not np.all(counts == counts.flat[0]):
        raise InputError(f"every run must have as many real points, got counts {counts[:4]}...")
    total = int(counts.flat[0]) if counts.size else 0
    take = None if points is None else np.asarray(points, np.int64) - 1
    if take is not None and take.size and (take.min() < 0 or take.max() >= total):
        raise InputError(f"points must lie in 1..{total}, got {np.asarray(points)[:4]}...")
    width = total if take is None else take.size
    out = np.empty((flat_e.shape[0], width))
    step = max(1, 2**24 // max(1, flat_e.shape[1]))  # rows per block: bounded temporaries
    for start in range(0, flat_e.shape[0], step):
        block = slice(start, start + step)
        picked = flat_e[block][flat_m[block]].astype(np.float64).reshape(-1, total)
        curve = np.cumsum(picked, axis=-1) / np.arange(1, total + 1)
        out[block] = curve if take is None else curve[:, take]
    return out.reshape(lead + (width,))


def test_error_curve(test_errors: Array) -> np.ndarray:
    """The multi-task test error curve: after `t` tasks, `mean(test_1..test_t)`.

    Examples:
      >>> from ojax import meta
      >>> print(meta.test_error_curve([3.0, 1.0, 2.0]))
      [3. 2. 2.]
    """
    tests = np.asarray(test_errors, np.float64)
    return np.cumsum(tests, axis=-1) / np.arange(1, tests.shape[-1] + 1)


test_error_curve.__test__ = False  # type: ignore[attr-defined]  # not a pytest test


def best_bias_in_hindsight(
    tasks: TaskBlock, num_iterations: int = 200, epsilon: float = 1e-6
) -> Array:
    """The mean over tasks of the least-absolute-error solutions of each task's online part.

    Each task's `argmin_w sum_i |y_i - <x_i, w>|` is found by iteratively reweighted least
    squares (weights `1 / max(|r_i|, epsilon)`), each step a least-squares solve of the
    weighted rows (the minimum-norm solution where a task has fewer points than dimensions).

    Args:
      tasks: the training tasks (leading batch axes allowed).
      num_iterations: IRLS iterations (static).
      epsilon: floor of the residuals in the weights.

    Returns:
      `(..., d)` the bias.
    """

    def solve(x, y, mask):
        def step(w, _):
            r = jnp.abs(y - x @ w)
            root = jnp.where(mask, jax.lax.rsqrt(jnp.maximum(r, epsilon)), 0.0)
            return jnp.linalg.lstsq(x * root[:, None], y * root)[0], None

        w0 = jnp.zeros(x.shape[-1], x.dtype)
        return jax.lax.scan(step, w0, None, length=num_iterations)[0]

    sols = solve
    for _ in range(tasks.x_train.ndim - 2):
        sols = jax.vmap(sols)
    w = sols(tasks.x_train, tasks.y_train, tasks.mask_train)
    return jnp.mean(w, axis=-2)


__all__ = [
    "GridScore",
    "TaskSummary",
    "best_bias_in_hindsight",
    "bias_path",
    "check_coins_bounded",
    "cumulative_error",
    "grid_score",
    "initial_bias",
    "meta_test_curve",
    "meta_test_error",
    "run_meta",
    "task_average",
    "task_summary",
    "test_error",
    "test_error_curve",
    "weights_record",
]
