"""Running the learners of :mod:`ojax.meta` over padded task blocks, with the paper's metrics.

:func:`run_meta` is one ``lax.scan`` over tasks of ``lax.scan`` over points (a fixed-bias learner
needs no scan over tasks: its tasks are independent, so they are one ``vmap``). Per task it
records the online errors, the test error of ``w_bar`` on the task's held-out points (computed
at the end of the task, inside the scan) and the bias after the task. Padded points change
nothing and count nothing.

The ``*_core`` functions are the traceable bodies, meant to be vmapped by the caller::

    # seeds: task blocks stacked on a leading axis
    jax.vmap(lambda t: run_meta_core(learner, params, t))(tasks_by_seed)
    # a grid of hyperparameters (leaves of `grid` carry a leading axis)
    jax.vmap(lambda p: run_meta_core(learner, p, tasks))(grid)
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ojax import losses as _losses
from ojax.core import Array, Params
from ojax.meta.learners import MetaLearner
from ojax.meta.tasks import TaskBlock, check_task_block
from ojax.core import tree_where  # padded steps change nothing
from ojax.validation import InputError, check_shape


class MetaTrace(NamedTuple):
    """What one run over ``T`` tasks records."""

    errors: Array | None  # (T, n) online error of each point (0 on padding); None if not kept
    task_errors: Array  # (T,) sum of the online errors of each task
    test_errors: Array  # (T,) test error of the task's w_bar on its held-out points
    biases: Array  # (T + 1, d) the bias before the first task and after each task; only the
    # first and the last, (2, d), when the errors are not recorded
    num_points: Array  # (T,) int32, real points of each task


def _masked_mean(values: Array, mask: Array) -> Array:
    total = jnp.sum(jnp.where(mask, values, 0.0))
    return total / jnp.maximum(jnp.sum(mask), 1).astype(values.dtype)


def _one_task(learner: MetaLearner, params: Params, loss: _losses.Loss, state, block):
    """Runs one task from ``state``; returns the state after ``end_task`` and the records."""
    x, y, mask, x_test, y_test, mask_test = block
    size = jnp.sum(mask, dtype=jnp.int32)
    state = learner.begin_task(state, params, size)

    def point(s, example):
        xi, yi, real = example
        err = jnp.where(real, loss.value(learner.predict(s, params, xi), yi), 0.0)
        return tree_where(real, learner.update(s, params, xi, yi), s), err

    state, errors = jax.lax.scan(point, state, (x, y, mask))
    w_bar = learner.task_average(state, params)
    test = _masked_mean(loss.value(x_test @ w_bar, y_test), mask_test)
    state = learner.end_task(state, params)
    return state, (errors, test, size)


def run_meta_core(
    learner: MetaLearner,
    params: Params,
    tasks: TaskBlock,
    loss: _losses.Loss = _losses.absolute,
    record_errors: bool = True,
) -> MetaTrace:
    """The traceable body of :func:`run_meta` (no checks; vmap it over seeds or params)."""
    blocks = tuple(tasks)
    if learner.fixed is None:  # a fixed bias: tasks are independent, one vmap
        state0 = learner.init(params)
        _, (errors, tests, sizes) = jax.vmap(
            lambda *b: _one_task(learner, params, loss, state0, b)
        )(*blocks)
        bias = learner.bias(state0, params)
        rows = tasks.x_train.shape[0] + 1 if record_errors else 2
        biases = jnp.broadcast_to(bias, (rows,) + bias.shape)
    else:

        def task(state, block):
            state, (errors, test, size) = _one_task(learner, params, loss, state, block)
            return state, (errors, test, size, learner.bias(state, params))

        def task_summary(state, block):
            state, (errors, test, size) = _one_task(learner, params, loss, state, block)
            return state, (jnp.sum(errors), test, size)

        state0 = learner.init(params)
        first = learner.bias(state0, params)[None]
        if not record_errors:  # keeps only the first and the final bias (memory of big grids)
            state, (errors, tests, sizes) = jax.lax.scan(task_summary, state0, blocks)
            biases = jnp.concatenate([first, learner.bias(state, params)[None]])
            return MetaTrace(None, errors, tests, biases, sizes)
        _, (errors, tests, sizes, after) = jax.lax.scan(task, state0, blocks)
        biases = jnp.concatenate([first, after])
    task_errors = jnp.sum(errors, axis=1)
    return MetaTrace(errors if record_errors else None, task_errors, tests, biases, sizes)


@functools.partial(jax.jit, static_argnames=("learner", "loss", "record_errors"))
def _run_meta(learner, params, tasks, loss, record_errors):
    return run_meta_core(learner, params, tasks, loss, record_errors)


def run_meta(
    learner: MetaLearner,
    params: Params,
    tasks: TaskBlock,
    loss: _losses.Loss = _losses.absolute,
    *,
    record_errors: bool = True,
) -> MetaTrace:
    """Runs a multi-task learner over a :class:`TaskBlock` (one jitted scan).

    Args:
      learner: a :class:`~ojax.meta.MetaLearner` (static).
      params: its hyperparameters.
      tasks: ``T`` padded tasks (see :class:`~ojax.meta.TaskBlock`).
      loss: the loss of the recorded errors and test errors (static).
      record_errors: keep the per-point errors (``(T, n)``); otherwise only per-task sums.

    Returns:
      A :class:`MetaTrace`.
    """
    check_task_block("tasks", tasks)
    learner.check_params(params)
    check_coins_bounded(params, tasks, loss)
    return _run_meta(learner, params, tasks, loss, record_errors)


def check_coins_bounded(params: Params, tasks: TaskBlock, loss: _losses.Loss) -> None:
    """The bettors need coins in ``[-1, 1]``: ``gradient_scale * L * max ||x|| <= 1`` (else the
    wealth goes negative and the run fills with NaN). Checked on concrete values only."""
    scale = getattr(params, "gradient_scale", None)
    if scale is None or isinstance(scale, jax.core.Tracer):
        return
    norms = jnp.where(tasks.mask_train, jnp.linalg.norm(tasks.x_train, axis=-1), 0.0)
    bound = float(jnp.max(jnp.abs(jnp.where(tasks.mask_train, tasks.y_train, 0.0))))
    largest = jnp.max(jnp.asarray(scale)) * loss.lipschitz(bound) * jnp.max(norms)
    if float(largest) > 1.0 + 1e-5:
        raise InputError(
            f"gradient_scale * L * max ||x|| must be <= 1 (the coins must lie in [-1, 1]), got "
            f"{float(largest):.4g} (gradient_scale {float(jnp.max(jnp.asarray(scale))):.4g}, "
            f"max ||x|| {float(jnp.max(norms)):.4g}); use gradient_scale = 1 / (L max ||x||)"
        )


def meta_test_core(
    learner: MetaLearner,
    params: Params,
    biases: Array,
    tasks: TaskBlock,
    loss: _losses.Loss = _losses.absolute,
) -> Array:
    """Meta-test error of each bias in ``biases`` ``(C, d)`` on unseen ``tasks``: ``(C,)``.

    For each bias the within-task learner runs with the bias frozen on every task's online part;
    the test error of the average of its iterates on the task's held-out part is averaged over
    the tasks.
    """
    fixed = learner if learner.fixed is None else learner.fixed

    def one(bias):
        fp = learner.freeze(params, bias)
        state0 = fixed.init(fp)
        _, (_, tests, _) = jax.vmap(lambda *b: _one_task(fixed, fp, loss, state0, b))(*tasks)
        return jnp.mean(tests)

    return jax.vmap(one)(biases)


@functools.partial(jax.jit, static_argnames=("learner", "loss"))
def _meta_test(learner, params, biases, tasks, loss):
    return meta_test_core(learner, params, biases, tasks, loss)


def meta_test_errors(
    learner: MetaLearner,
    params: Params,
    biases: Array,
    tasks: TaskBlock,
    loss: _losses.Loss = _losses.absolute,
) -> Array:
    """Checked, jitted :func:`meta_test_core`."""
    check_task_block("tasks", tasks)
    check_shape("biases", biases, (None, tasks.x_train.shape[-1]))
    learner.check_params(params)
    return _meta_test(learner, params, jnp.asarray(biases), tasks, loss)


def cumulative_error(errors: Array, mask: Array) -> np.ndarray:
    """The cumulative error curve: the running mean of the online errors of the real points,
    concatenated over tasks in order (``(..., T, n)`` -> ``(..., N)``, ``N`` real points).

    Every batch element must have the same number of real points.
    """
    errors = np.asarray(errors, np.float64)
    mask = np.asarray(mask, bool)
    lead = errors.shape[:-2]
    flat_e = errors.reshape(lead + (-1,))
    flat_m = mask.reshape(lead + (-1,))
    counts = flat_m.reshape(-1, flat_m.shape[-1]).sum(axis=1)
    if counts.size and not np.all(counts == counts.flat[0]):
        raise InputError(f"every run must have as many real points, got counts {counts[:4]}...")
    picked = flat_e[np.broadcast_to(flat_m, flat_e.shape)].reshape(lead + (-1,))
    return np.cumsum(picked, axis=-1) / np.arange(1, picked.shape[-1] + 1)


def test_error_curve(test_errors: Array) -> np.ndarray:
    """The multi-task test error curve: after ``t`` tasks, ``mean(test_1..test_t)``."""
    tests = np.asarray(test_errors, np.float64)
    return np.cumsum(tests, axis=-1) / np.arange(1, tests.shape[-1] + 1)


def grid_score_core(
    learner: MetaLearner,
    params: Params,
    tasks: TaskBlock,
    validation: TaskBlock | None,
    loss: _losses.Loss = _losses.absolute,
) -> tuple[Array, Array]:
    """Final cumulative error and validation error of one entry of a params grid.

    Returns:
      ``(cumulative, validation)`` scalars; the validation error is the meta-test error of the
      final bias on the ``validation`` tasks (NaN without validation tasks).
    """
    trace = run_meta_core(learner, params, tasks, loss, record_errors=False)
    final = jnp.sum(trace.task_errors) / jnp.sum(trace.num_points).astype(trace.task_errors.dtype)
    if validation is None:
        return final, jnp.full((), jnp.nan, final.dtype)
    return final, meta_test_core(learner, params, trace.biases[-1:], validation, loss)[0]


def grid_scores_core(
    learner: MetaLearner,
    grid: Params,
    tasks: TaskBlock,
    validation: TaskBlock | None,
    loss: _losses.Loss = _losses.absolute,
) -> tuple[Array, Array]:
    """:func:`grid_score_core` of every entry of a params grid (one vmap): ``(P,)`` each."""
    return jax.vmap(lambda p: grid_score_core(learner, p, tasks, validation, loss))(grid)


def best_bias_in_hindsight(
    tasks: TaskBlock, num_iterations: int = 200, epsilon: float = 1e-6
) -> Array:
    """The mean over tasks of the least-absolute-error solutions of each task's online part.

    Each task's ``argmin_w sum_i |y_i - <x_i, w>|`` is found by iteratively reweighted least
    squares (weights ``1 / max(|r_i|, epsilon)``, a small ridge for rank-deficient tasks).

    Args:
      tasks: the training tasks (leading batch axes allowed).
      num_iterations: IRLS iterations (static).
      epsilon: floor of the residuals in the weights.

    Returns:
      ``(..., d)`` the bias.
    """

    def solve(x, y, mask):
        d = x.shape[-1]
        ridge = 1e-8 * jnp.eye(d, dtype=x.dtype)

        def step(w, _):
            r = jnp.abs(y - x @ w)
            c = jnp.where(mask, 1.0 / jnp.maximum(r, epsilon), 0.0)
            a = (x * c[:, None]).T @ x + ridge
            return jnp.linalg.solve(a, (x * c[:, None]).T @ y), None

        w0 = jnp.zeros(d, x.dtype)
        return jax.lax.scan(step, w0, None, length=num_iterations)[0]

    sols = solve
    for _ in range(tasks.x_train.ndim - 2):
        sols = jax.vmap(sols)
    w = sols(tasks.x_train, tasks.y_train, tasks.mask_train)
    return jnp.mean(w, axis=-2)
