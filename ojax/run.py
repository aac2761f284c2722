"""Runners: one ``jax.lax.scan`` over a stream, or over a sequence of masked task blocks.

Every runner uses progressive validation (as river and Vowpal Wabbit report it): at each step
the learner predicts on the unseen example, the loss of that prediction is recorded, then the
learner updates. Each runner checks its inputs on concrete values, then calls a jitted scan that
compiles once per static configuration (learner, loss, flags, shapes and dtypes): other
hyperparameter values, other data of the same shape or another seed never recompile.

vmap recipes (``in_axes`` follow the argument order ``(learner, params, data...)``)::

    # a grid of hyperparameters (leaves of `grid` carry a leading axis)
    jax.vmap(lambda p: run(predictor, p, xs, ys, loss))(grid)
    # seeds: streams stacked on a leading axis
    jax.vmap(lambda x, y: run(predictor, params, x, y, loss))(xs_by_seed, ys_by_seed)
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import jax
import jax.numpy as jnp

from ojax.core import Array, MultiTaskLearner, OCOLearner, Params, Predictor, State, Trace
from ojax.losses import Loss, Objective
from ojax.validation import InputError, check_finite, check_shape


def _select(keep: Array, new: State, old: State) -> State:
    """``new`` where ``keep`` else ``old``, leaf by leaf (masked steps change nothing)."""
    return jax.tree.map(lambda a, b: jnp.where(keep, a, b), new, old)


def _progressive_step(learner, params: Params, loss: Loss, record):
    """One scan step of progressive validation for anything with ``predict`` / ``update``:
    predict on the unseen example, record its loss (0 on padding), then learn (padding inert)."""

    def step(state, example):
        x, y, real = example
        y_hat = learner.predict(state, params, x)
        value = jnp.where(real, loss.value(y_hat, y), 0.0)
        seen = None if record is None else record(state, params)
        new = _select(real, learner.update(state, params, x, y), state)
        return new, (value, y_hat, seen)

    return step


def _check_stream(xs: Array, ys: Array, mask: Array | None) -> None:
    if jnp.ndim(xs) < 1:
        raise InputError(f"xs must have a leading time axis, got shape {jnp.shape(xs)}")
    n = jnp.shape(xs)[0]
    check_shape("ys", ys, (n,) + tuple(jnp.shape(ys)[1:]))
    if mask is not None:
        check_shape("mask", mask, (n,))
    check_finite("xs", xs)
    check_finite("ys", ys)


@functools.partial(jax.jit, static_argnames=("predictor", "loss", "record"))
def _run(
    predictor: Predictor,
    params: Params,
    xs: Array,
    ys: Array,
    mask: Array,
    loss: Loss,
    record: Callable[[State, Params], Array] | None,
) -> tuple[State, Trace]:
    step = _progressive_step(predictor, params, loss, record)
    state, (losses, preds, seen) = jax.lax.scan(step, predictor.init(params), (xs, ys, mask))
    return state, Trace(losses, preds, seen, mask)


def run(
    predictor: Predictor,
    params: Params,
    xs: Array,
    ys: Array,
    loss: Loss,
    *,
    mask: Array | None = None,
    record: Callable[[State, Params], Array] | None = None,
) -> tuple[State, Trace]:
    """Runs ``predictor`` over the stream ``(xs, ys)`` in one ``lax.scan``.

    Args:
      predictor: a :class:`~ojax.core.Predictor` (static: hashing it keys the compile cache).
      params: its hyperparameters (a pytree of arrays).
      xs: ``(n, ...)`` inputs; ``ys``: ``(n, ...)`` labels.
      loss: the loss recorded for each prediction (static).
      mask: optional ``(n,)`` bool; False steps are padding: they change nothing and count 0.
      record: optional static ``(state, params) -> array`` recorded before each update (e.g. the
        weights of a linear predictor); stored in ``Trace.iterate``.

    Returns:
      The final state and the :class:`~ojax.core.Trace`.
    """
    _check_stream(xs, ys, mask)
    predictor.check_params(params)
    if mask is None:
        mask = jnp.ones(jnp.shape(xs)[:1], bool)
    return _run(predictor, params, xs, ys, jnp.asarray(mask, bool), loss, record)


@functools.partial(jax.jit, static_argnames=("learner", "objective", "store_iterates"))
def _run_oco(learner, params, x0, zs, objective, store_iterates):
    def step(state, z):
        w = learner.iterate(state, params)
        value = objective.value(w, z)
        new = learner.update(state, params, objective.grad(w, z))
        return new, (value, w if store_iterates else None)

    state, (losses, ws) = jax.lax.scan(step, learner.init(params, x0), zs)
    return state, Trace(losses, None, ws, jnp.ones(losses.shape, bool))


def run_oco(
    learner: OCOLearner,
    params: Params,
    x0: Array,
    zs: Array,
    objective: Objective,
    *,
    store_iterates: bool = False,
) -> tuple[State, Trace]:
    """Plays the OCO game: at step t the learner plays ``w_t``, pays ``f(w_t; z_t)``, and
    receives the gradient ``grad f(w_t; z_t)``.

    Args:
      learner: an :class:`~ojax.core.OCOLearner` (static).
      params: its hyperparameters.
      x0: ``(d,)`` the anchor / first point.
      zs: ``(n, d)`` the data of the losses (static ``objective`` says which family).
      objective: e.g. :data:`ojax.losses.linear_objective` (static).
      store_iterates: also return the played points ``(n, d)`` (memory: ``n d``).

    Returns:
      The final state and a :class:`~ojax.core.Trace` whose ``loss`` is ``f_t(w_t)``.
    """
    check_shape("zs", zs, (None,) + tuple(jnp.shape(x0)))
    check_finite("x0", x0)
    check_finite("zs", zs)
    learner.check_start(x0)
    learner.check_params(params)
    return _run_oco(learner, params, jnp.asarray(x0), zs, objective, store_iterates)


@functools.partial(jax.jit, static_argnames=("learner", "loss", "record"))
def _run_tasks(learner, params, xs, ys, mask, loss, record):
    point = _progressive_step(learner, params, loss, record)

    def task(state, block):
        state = learner.begin_task(state, params)
        state, out = jax.lax.scan(point, state, block)
        return learner.end_task(state, params), out

    state, (losses, preds, seen) = jax.lax.scan(task, learner.init(params), (xs, ys, mask))
    return state, Trace(losses, preds, seen, mask)


def run_tasks(
    learner: MultiTaskLearner,
    params: Params,
    xs: Array,
    ys: Array,
    mask: Array,
    loss: Loss,
    *,
    record: Callable[[State, Params], Array] | None = None,
) -> tuple[State, Trace]:
    """Runs a multi-task learner over padded task blocks: a scan over tasks of scans over points.

    Args:
      learner: a :class:`~ojax.core.MultiTaskLearner` (static).
      params: its hyperparameters.
      xs: ``(num_tasks, max_points, ...)``; ``ys``: ``(num_tasks, max_points)``.
      mask: ``(num_tasks, max_points)`` bool, True on real points. Padded points change nothing
        and count nothing (they may sit anywhere in a row).
      loss: the loss recorded per prediction (static).
      record: as in :func:`run`.

    Returns:
      The final state and a :class:`~ojax.core.Trace` with ``(num_tasks, max_points)`` leaves.
    """
    if jnp.ndim(xs) < 2:
        raise InputError(f"xs must be (num_tasks, max_points, ...), got shape {jnp.shape(xs)}")
    check_shape("ys", ys, tuple(jnp.shape(xs)[:2]))
    check_shape("mask", mask, tuple(jnp.shape(xs)[:2]))
    check_finite("xs", xs)
    check_finite("ys", ys)
    learner.check_params(params)
    return _run_tasks(learner, params, xs, ys, jnp.asarray(mask, bool), loss, record)
