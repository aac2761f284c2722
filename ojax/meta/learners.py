"""Online-within-online learners of a bias: Aggressive, Lazy, ITL / Oracle, tuned OGD.

Every learner here predicts ``y_hat = <x, w>`` with ``w = u + theta``: a within-task part ``u``
reset at the start of every task and a bias ``theta`` shared across tasks. They share one
protocol, :class:`MetaLearner` (the shape of :class:`ojax.core.MultiTaskLearner`, with the size
of the task passed to ``begin_task`` and three extra functions for the metrics):

* ``bias(state, params)``: the current bias ``theta`` (what a new task would start from);
* ``task_average(state, params)``: ``w_bar``, the mean of the current task's pre-update prediction
  vectors (it includes ``w_1 = theta`` and excludes the final post-update state);
* ``fixed`` / ``freeze(params, bias)``: the same within-task learner with the bias frozen, and its
  params (for the meta-test error on unseen tasks). A fixed-bias learner has ``fixed=None``.

Parameter-free learners (the inner and meta magnitudes are KT or ONS bettors, a static choice):

* :func:`biased_within_task` (Alg. 3): fixed bias; ITL (bias 0) and the Oracle (the true mean).
* :func:`aggressive` (Alg. 4): the meta learner takes every within-task gradient.
* :func:`lazy` (Alg. 5): the meta learner takes the task's average gradient at its end.

Tuned online gradient descent (not parameter-free; the "_SS" baselines):
:func:`aggressive_ogd`, :func:`lazy_ogd` and :func:`ogd_within_task` (fixed bias).

References:
  Denevi, G., Stamos, D. and Pontil, M. (2020). Online parameter-free learning of multiple low
  variance tasks. UAI.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import jax.numpy as jnp

from ojax import losses as _losses
from ojax.core import Array
from ojax.parameter_free.betting import (
    BETTORS,
    DirectionMagnitudeParams,
    DirectionMagnitudeState,
    dm_init,
    dm_iterate,
    dm_update,
)
from ojax.core import tree_where  # padded steps change nothing
from ojax.validation import check_choice, check_finite, check_positive, check_shape

COUNTERS = ("global", "authors")


class MetaLearner(NamedTuple):
    """A learner over a sequence of tasks (see the module docstring).

    Attributes:
      init: ``(params) -> state``.
      begin_task: ``(state, params, task_size) -> state`` before the task's first point
        (``task_size`` is the number of real points, an int32 scalar).
      predict: ``(state, params, x) -> y_hat``.
      update: ``(state, params, x, y) -> state`` (after ``predict`` on the same point).
      end_task: ``(state, params) -> state`` after the task's last real point.
      bias: ``(state, params) -> theta``.
      task_average: ``(state, params) -> w_bar`` of the current task (the bias if it has no
        points).
      freeze: ``(params, bias) -> params of fixed`` (identity-like for fixed learners).
      fixed: the within-task learner with a frozen bias, or ``None`` for a fixed learner.
      check_params: ``(params) -> None`` on concrete values.
    """

    init: Callable[..., Any]
    begin_task: Callable[..., Any]
    predict: Callable[..., Array]
    update: Callable[..., Any]
    end_task: Callable[..., Any]
    bias: Callable[..., Array]
    task_average: Callable[..., Array]
    freeze: Callable[..., Any]
    fixed: Any
    check_params: Callable[..., None]


class WithinTask(NamedTuple):
    """Bookkeeping of the current task shared by every learner's state."""

    size: Array  # n_t, real points of the current task, shape (), int32
    count: Array  # i, real points seen in the current task, shape (), int32
    sum_iterates: Array  # sum of the pre-update prediction vectors w_i, shape (d,)
    sum_grads: Array  # G = sum of the within-task gradients g_i, shape (d,)


def _within_init(dim: int, dtype) -> WithinTask:
    zero = jnp.zeros((), jnp.int32)
    return WithinTask(zero, zero, jnp.zeros(dim, dtype), jnp.zeros(dim, dtype))


def _within_step(task: WithinTask, w: Array, g: Array) -> WithinTask:
    return WithinTask(task.size, task.count + 1, task.sum_iterates + w, task.sum_grads + g)


def _task_average(task: WithinTask, bias: Array) -> Array:
    """``w_bar``: the mean of the task's pre-update prediction vectors (``bias`` if none)."""
    mean = task.sum_iterates / jnp.maximum(task.count, 1).astype(task.sum_iterates.dtype)
    return jnp.where(task.count > 0, mean, bias)


def _grad(loss: _losses.Loss, w: Array, x: Array, y: Array) -> Array:
    return loss.grad(jnp.vdot(x, w), y) * x


# ----------------------------------------------------------------------------------------------
# Parameter-free learners.


class FixedBiasParams(NamedTuple):
    bias: Array  # theta, shape (d,)
    inner_wealth: Array  # initial wealth of the within-task bettor (> 0), shape ()
    gradient_scale: Array  # 1 / (L R) (> 0), shape ()


class MetaParams(NamedTuple):
    inner_wealth: Array  # initial wealth of the within-task bettor (> 0), shape ()
    meta_wealth: Array  # initial wealth of the meta bettor (> 0), shape ()
    gradient_scale: Array  # 1 / (L R) (> 0), shape (); the same for inner and meta learners


class FixedBiasState(NamedTuple):
    inner: DirectionMagnitudeState  # the within-task direction-magnitude learner (anchor 0)
    task: WithinTask


class MetaState(NamedTuple):
    meta: DirectionMagnitudeState  # the meta learner of the bias (anchor 0), never reset
    inner: DirectionMagnitudeState  # the within-task learner (anchor 0), reset every task
    task: WithinTask
    num_tasks: Array  # tasks finished, shape (), int32
    num_points: Array  # real points seen over all tasks, shape (), int32


def _inner_params(params) -> DirectionMagnitudeParams:
    return DirectionMagnitudeParams(params.inner_wealth, params.gradient_scale)


def _meta_params(params: MetaParams) -> DirectionMagnitudeParams:
    return DirectionMagnitudeParams(params.meta_wealth, params.gradient_scale)


def _check_fixed(params: FixedBiasParams, dim: int) -> None:
    check_bias("bias", params.bias, dim)
    check_positive("inner_wealth", params.inner_wealth)
    check_positive("gradient_scale", params.gradient_scale)


def _check_meta(params: MetaParams) -> None:
    check_positive("inner_wealth", params.inner_wealth)
    check_positive("meta_wealth", params.meta_wealth)
    check_positive("gradient_scale", params.gradient_scale)


def biased_within_task(
    dim: int, bettor: str = "ons", loss: _losses.Loss = _losses.absolute, dtype=jnp.float32
) -> MetaLearner:
    """The biased within-task learner (Alg. 3) with a fixed bias: ITL (0) or the Oracle.

    ::

        w_i = m_i v_i + theta                      (prediction vector of point i)
        g_i = loss'(<x_i, w_i>, y_i) x_i           (absolute loss: s x_i, s = +1 if y_i < <x_i, w_i>
                                                    else -1)
        (v, m) <- direction-magnitude step on g_i with count i (reset every task)
        w_bar = mean(w_1..w_n)                     (the task's estimator)

    Args:
      dim: the input dimension d (static).
      bettor: ``"kt"`` or ``"ons"`` (static).
      loss: a convex Lipschitz loss (static; the experiments use the absolute loss).
      dtype: float dtype of the state.

    Returns:
      A :class:`MetaLearner` with params :class:`FixedBiasParams`.

    References:
      Denevi, G., Stamos, D. and Pontil, M. (2020). Online parameter-free learning of multiple
      low variance tasks.

    Examples:
      >>> import jax, jax.numpy as jnp
      >>> from ojax import envs, meta
      >>> key = jax.random.key(0)
      >>> tasks, _ = envs.low_variance_tasks(key, num_tasks=3, num_points=6, dim=2,
      ...                                    num_train=3)
      >>> params = meta.FixedBiasParams(jnp.zeros(2), jnp.array(1.0), jnp.array(1.0))
      >>> out = meta.run_meta(meta.biased_within_task(2), params, tasks)
      >>> print(out.errors.shape, out.test_errors.shape)
      (3, 3) (3,)
    """
    check_choice("bettor", bettor, BETTORS)
    zeros = jnp.zeros(dim, dtype)

    def init(params: FixedBiasParams) -> FixedBiasState:
        return FixedBiasState(dm_init(_inner_params(params), zeros), _within_init(dim, dtype))

    def begin_task(state, params, task_size):
        task = _within_init(dim, dtype)._replace(size=jnp.asarray(task_size, jnp.int32))
        return FixedBiasState(dm_init(_inner_params(params), zeros), task)

    def weights(state, params):
        return dm_iterate(state.inner) + params.bias

    def predict(state, params, x):
        return jnp.vdot(x, weights(state, params))

    def update(state, params, x, y):
        w = weights(state, params)
        g = _grad(loss, w, x, y)
        inner = dm_update(bettor, state.inner, _inner_params(params), g)
        return FixedBiasState(inner, _within_step(state.task, w, g))

    def end_task(state, params):
        return state

    def bias(state, params):
        return params.bias

    def task_average(state, params):
        return _task_average(state.task, bias(state, params))

    def freeze(params, theta):
        return params._replace(bias=theta)

    return MetaLearner(
        init,
        begin_task,
        predict,
        update,
        end_task,
        bias,
        task_average,
        freeze,
        None,
        functools.partial(_check_fixed, dim=dim),
    )


def _meta_learner(dim, bettor, loss, dtype, lazy_update: bool, counter: str) -> MetaLearner:
    check_choice("bettor", bettor, BETTORS)
    check_choice("counter", counter, COUNTERS)
    zeros = jnp.zeros(dim, dtype)
    fixed = biased_within_task(dim, bettor, loss, dtype)

    def init(params: MetaParams) -> MetaState:
        zero = jnp.zeros((), jnp.int32)
        return MetaState(
            dm_init(_meta_params(params), zeros),
            dm_init(_inner_params(params), zeros),
            _within_init(dim, dtype),
            zero,
            zero,
        )

    def begin_task(state, params, task_size):
        task = _within_init(dim, dtype)._replace(size=jnp.asarray(task_size, jnp.int32))
        return state._replace(inner=dm_init(_inner_params(params), zeros), task=task)

    def weights(state, params):
        return dm_iterate(state.inner) + dm_iterate(state.meta)

    def predict(state, params, x):
        return jnp.vdot(x, weights(state, params))

    def update(state, params, x, y):
        w = weights(state, params)
        g = _grad(loss, w, x, y)
        inner = dm_update(bettor, state.inner, _inner_params(params), g)
        num_points = state.num_points + 1
        meta = state.meta
        if not lazy_update:
            if counter == "global":
                k = num_points
            else:  # the authors' (t - 1) n_t + i, exact only when all tasks have n_t points
                k = state.num_tasks * state.task.size + state.task.count + 1
            meta = dm_update(bettor, meta, _meta_params(params), g, k)
        return MetaState(meta, inner, _within_step(state.task, w, g), state.num_tasks, num_points)

    def end_task(state, params):
        meta = state.meta
        if lazy_update:
            n = jnp.maximum(state.task.count, 1).astype(dtype)
            meta = dm_update(bettor, meta, _meta_params(params), state.task.sum_grads / n)
            meta = tree_where(state.task.count > 0, meta, state.meta)
        return state._replace(meta=meta, num_tasks=state.num_tasks + 1)

    def bias(state, params):
        return dm_iterate(state.meta)

    def task_average(state, params):
        return _task_average(state.task, bias(state, params))

    def freeze(params, theta):
        return FixedBiasParams(theta, params.inner_wealth, params.gradient_scale)

    return MetaLearner(
        init, begin_task, predict, update, end_task, bias, task_average, freeze, fixed, _check_meta
    )


def aggressive(
    dim: int,
    bettor: str = "ons",
    loss: _losses.Loss = _losses.absolute,
    dtype=jnp.float32,
    counter: str = "global",
) -> MetaLearner:
    """Aggressive (Alg. 4): the bias is a parameter-free learner fed every within-task gradient.

    ::

        theta = m_meta v_meta;  w = m_in v_in + theta;  g = loss'(<x, w>, y) x
        inner (v_in, m_in) <- step on g with count i (reset every task)
        meta (v_meta, m_meta) <- step on g with count k (never reset)

    ``k`` is the global index of the point over all tasks (``counter="global"``), or the authors'
    ``(t - 1) n_t + i`` (``counter="authors"``), which equals it only when all tasks have the
    same size (it matters on Schools).

    Args:
      dim: the input dimension (static).
      bettor: ``"kt"`` or ``"ons"`` for both magnitudes (static).
      loss: the loss (static).
      dtype: float dtype of the state.
      counter: ``"global"`` or ``"authors"`` (static).

    Returns:
      A :class:`MetaLearner` with params :class:`MetaParams`.

    References:
      Denevi, G., Stamos, D. and Pontil, M. (2020). Online parameter-free learning of multiple
      low variance tasks.

    Examples:
      >>> import jax, jax.numpy as jnp
      >>> from ojax import envs, meta
      >>> key = jax.random.key(0)
      >>> tasks, _ = envs.low_variance_tasks(key, num_tasks=40, num_points=10, dim=3,
      ...                                    num_train=5)
      >>> params = meta.MetaParams(jnp.array(1.0), jnp.array(1.0), jnp.array(1.0))
      >>> out = meta.run_meta(meta.aggressive(3), params, tasks)
      >>> print(bool(jnp.linalg.norm(out.biases[-1]) > 1.0))
      True
    """
    return _meta_learner(dim, bettor, loss, dtype, False, counter)


def lazy(
    dim: int, bettor: str = "ons", loss: _losses.Loss = _losses.absolute, dtype=jnp.float32
) -> MetaLearner:
    """Lazy (Alg. 5): the bias is updated once per task with the task's average gradient.

    ::

        theta_t = m_meta v_meta (frozen during task t); inner learner as in Alg. 3
        at the end of task t: G = sum_i g_i,  c = <G / n_t, v_meta>,
        v_meta <- P(v_meta - sqrt(2/t) G / n_t),  meta bettor step with count t

    Args:
      dim: the input dimension (static).
      bettor: ``"kt"`` or ``"ons"`` (static).
      loss: the loss (static).
      dtype: float dtype of the state.

    Returns:
      A :class:`MetaLearner` with params :class:`MetaParams`.

    References:
      Denevi, G., Stamos, D. and Pontil, M. (2020). Online parameter-free learning of multiple
      low variance tasks (Appendix D).

    Examples:
      >>> import jax, jax.numpy as jnp
      >>> from ojax import envs, meta
      >>> key = jax.random.key(0)
      >>> tasks, _ = envs.low_variance_tasks(key, num_tasks=40, num_points=10, dim=3,
      ...                                    num_train=5)
      >>> params = meta.MetaParams(jnp.array(1.0), jnp.array(1.0), jnp.array(1.0))
      >>> out = meta.run_meta(meta.lazy(3), params, tasks)
      >>> print(out.biases.shape)
      (41, 3)
    """
    return _meta_learner(dim, bettor, loss, dtype, True, "global")


# ----------------------------------------------------------------------------------------------
# Tuned online gradient descent (the "_SS" baselines).


class OGDFixedParams(NamedTuple):
    bias: Array  # theta, shape (d,)
    inner_step: Array  # eta_in > 0, shape ()


class OGDMetaParams(NamedTuple):
    inner_step: Array  # eta_in > 0, shape ()
    meta_step: Array  # eta_meta > 0, shape ()


class OGDState(NamedTuple):
    theta: Array  # the bias, shape (d,) (constant for the fixed-bias learner)
    inner: Array  # u, reset to 0 every task, shape (d,)
    task: WithinTask


def _check_ogd_fixed(params: OGDFixedParams, dim: int) -> None:
    check_bias("bias", params.bias, dim)
    check_positive("inner_step", params.inner_step)


def _check_ogd_meta(params: OGDMetaParams) -> None:
    check_positive("inner_step", params.inner_step)
    check_positive("meta_step", params.meta_step)


def _ogd_learner(dim, loss, dtype, mode: str) -> MetaLearner:
    zeros = jnp.zeros(dim, dtype)
    fixed = None if mode == "fixed" else _ogd_learner(dim, loss, dtype, "fixed")

    def init(params):
        theta = params.bias if mode == "fixed" else zeros
        return OGDState(jnp.asarray(theta, dtype), zeros, _within_init(dim, dtype))

    def begin_task(state, params, task_size):
        task = _within_init(dim, dtype)._replace(size=jnp.asarray(task_size, jnp.int32))
        return OGDState(state.theta, zeros, task)

    def predict(state, params, x):
        return jnp.vdot(x, state.inner + state.theta)

    def update(state, params, x, y):
        w = state.inner + state.theta
        g = _grad(loss, w, x, y)
        theta = state.theta - params.meta_step * g if mode == "aggressive" else state.theta
        return OGDState(theta, state.inner - params.inner_step * g, _within_step(state.task, w, g))

    def end_task(state, params):
        if mode == "lazy":
            return state._replace(theta=state.theta - params.meta_step * state.task.sum_grads)
        return state

    def bias(state, params):
        return state.theta

    def task_average(state, params):
        return _task_average(state.task, bias(state, params))

    def freeze(params, theta):
        if mode == "fixed":
            return params._replace(bias=theta)
        return OGDFixedParams(theta, params.inner_step)

    check = functools.partial(_check_ogd_fixed, dim=dim) if mode == "fixed" else _check_ogd_meta
    return MetaLearner(
        init, begin_task, predict, update, end_task, bias, task_average, freeze, fixed, check
    )


def ogd_within_task(
    dim: int, loss: _losses.Loss = _losses.absolute, dtype=jnp.float32
) -> MetaLearner:
    """Unprojected within-task OGD around a fixed bias: ``w = u + theta``, ``u <- u - eta_in g``.

    Args:
      dim: the input dimension (static).
      loss: the loss (static).
      dtype: float dtype of the state.

    Returns:
      A :class:`MetaLearner` with params :class:`OGDFixedParams`.

    Examples:
      >>> import jax, jax.numpy as jnp
      >>> from ojax import envs, meta
      >>> key = jax.random.key(0)
      >>> tasks, _ = envs.low_variance_tasks(key, num_tasks=2, num_points=5, dim=2,
      ...                                    num_train=2)
      >>> out = meta.run_meta(meta.ogd_within_task(2),
      ...                     meta.OGDFixedParams(jnp.zeros(2), jnp.array(0.1)), tasks)
      >>> print(out.errors.shape)
      (2, 2)
    """
    return _ogd_learner(dim, loss, dtype, "fixed")


def aggressive_ogd(
    dim: int, loss: _losses.Loss = _losses.absolute, dtype=jnp.float32
) -> MetaLearner:
    """Aggressive_SS: after each point ``theta <- theta - eta_meta g`` and ``u <- u - eta_in g``.

    ``w = u + theta`` with ``theta = 0`` at the start and ``u`` reset to 0 every task; not
    parameter-free: the two steps are tuned on a grid (see :func:`ojax.meta.run_grid`).

    Args:
      dim: the input dimension (static).
      loss: the loss (static).
      dtype: float dtype of the state.

    Returns:
      A :class:`MetaLearner` with params :class:`OGDMetaParams`.

    References:
      Denevi, G., Stamos, D. and Pontil, M. (2020). Online parameter-free learning of multiple
      low variance tasks (the "_SS" baselines of its experiments).

    Examples:
      >>> import jax, jax.numpy as jnp
      >>> from ojax import envs, meta
      >>> key = jax.random.key(0)
      >>> tasks, _ = envs.low_variance_tasks(key, num_tasks=2, num_points=5, dim=2,
      ...                                    num_train=2)
      >>> out = meta.run_meta(meta.aggressive_ogd(2),
      ...                     meta.OGDMetaParams(jnp.array(0.1), jnp.array(0.1)), tasks)
      >>> print(out.biases.shape)
      (3, 2)
    """
    return _ogd_learner(dim, loss, dtype, "aggressive")


def lazy_ogd(dim: int, loss: _losses.Loss = _losses.absolute, dtype=jnp.float32) -> MetaLearner:
    """Lazy_SS: ``u <- u - eta_in g`` per point, ``theta <- theta - eta_meta sum_i g_i`` per task.

    Args:
      dim: the input dimension (static).
      loss: the loss (static).
      dtype: float dtype of the state.

    Returns:
      A :class:`MetaLearner` with params :class:`OGDMetaParams`.

    Examples:
      >>> import jax, jax.numpy as jnp
      >>> from ojax import envs, meta
      >>> key = jax.random.key(0)
      >>> tasks, _ = envs.low_variance_tasks(key, num_tasks=2, num_points=5, dim=2,
      ...                                    num_train=2)
      >>> out = meta.run_meta(meta.lazy_ogd(2),
      ...                     meta.OGDMetaParams(jnp.array(0.1), jnp.array(0.1)), tasks)
      >>> print(out.test_errors.shape)
      (2,)
    """
    return _ogd_learner(dim, loss, dtype, "lazy")


def check_bias(name: str, bias: Array, dim: int) -> None:
    """Checks a bias vector: shape ``(dim,)`` (or ``(..., dim)`` when batched) and finite."""
    check_shape(name, bias, (*jnp.shape(bias)[:-1], dim))
    check_finite(name, bias)
