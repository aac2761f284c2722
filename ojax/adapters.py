"""Adapters: an OCO learner plus a loss as a linear predictor; an optax optimizer as an OCO learner.

* :func:`oco_predictor` plays an OCO learner as a predictor of its own iterate (what
  :func:`ojax.run_oco` runs), and :func:`objective_loss` its objective as the runner's loss.
* :func:`linear_predictor` plays `y_hat = <w_t, x_t>` with `w_t` the learner's iterate and
  feeds it the gradient `loss.grad(y_hat, y) * x`.
* :func:`optax_learner` runs any optax `GradientTransformation` (sgd, adam, and the
  parameter-free `optax.contrib` optimizers cocob, dog, prodigy, mechanize) as an OCO learner,
  so it takes part in ojax's runners, sweeps and regret metrics beside ojax's own learners.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import jax.numpy as jnp
import optax

from ojax.core import Array, OCOLearner, Params, Predictor, State, Step, learner_factory
from ojax.losses import Loss, Objective
from ojax.sparse import SparseRows, sparse_dot


class LinearPredictorState(NamedTuple):
    """The state of LinearPredictor: a pytree of arrays, carried from step to step.

    Attributes:
      learner: the OCO learner's state
    """

    learner: Any  # the OCO learner's state


@learner_factory
def linear_predictor(learner: OCOLearner, loss: Loss, x0: Array) -> Predictor:
    """A linear predictor `y_hat = <w, x>` driven by an OCO learner on `loss`.

    `x` is a dense row `(d,)` or a sparse one (:class:`~ojax.sparse.SparseRows`' row, what
    :func:`ojax.run` makes of a SciPy sparse matrix): `<w, x>` is then a gather and the
    gradient a scatter into a dense `(d,)` vector.

    Args:
      learner: the OCO learner; its params are the predictor's params.
      loss: the convex loss whose subgradient `loss.grad(y_hat, y) * x` feeds the learner.
      x0: `(d,)` the learner's anchor (static: it is part of the predictor).

    Returns:
      A :class:`~ojax.core.Predictor`.
    """
    x0 = jnp.asarray(x0)

    def init(params: Params) -> LinearPredictorState:
        return LinearPredictorState(learner.init(params, x0))

    def predict(state: LinearPredictorState, params: Params, x: Array) -> Array:
        w = learner.iterate(state.learner, params)
        return sparse_dot(w, *x) if isinstance(x, SparseRows) else jnp.vdot(w, x)

    def update(state: LinearPredictorState, params: Params, x: Array, y: Array):
        g = loss.grad(predict(state, params, x), y)
        if isinstance(x, SparseRows):  # the gradient g x as a dense vector (a scatter)
            grad = jnp.zeros_like(x0).at[x.indices].add(g * x.values.astype(x0.dtype))
        else:
            grad = g * x
        return LinearPredictorState(learner.update(state.learner, params, grad))

    return Predictor(init, predict, update, learner.check_params)


class OCOParams(NamedTuple):
    """The params of an OCO learner played as a predictor: its own params and its start."""

    params: Params
    x0: Array  # the anchor / first point, shape (d,)


@learner_factory
def oco_predictor(learner: OCOLearner, objective: Objective) -> Predictor:
    """An OCO learner as a predictor of its own iterate (what :func:`ojax.run_oco` runs).

    `predict` plays `w_t = iterate(state)`; `update` feeds it `grad f(w_t; z_t)`;
    `predict_update` does both from one `iterate` (the runner's step). Its params are
    :class:`OCOParams` (the learner's params and `x0`: new start points never recompile).
    Equal learners and objectives give equal predictors (one compilation).
    """

    def init(params: OCOParams) -> State:
        return learner.init(params.params, params.x0)

    def predict(state: State, params: OCOParams, z: Array) -> Array:
        return learner.iterate(state, params.params)

    def predict_update(state: State, params: OCOParams, z: Array, _: Array):
        w = learner.iterate(state, params.params)
        return w, learner.update(state, params.params, objective.grad(w, z))

    def update(state: State, params: OCOParams, z: Array, y: Array) -> State:
        return predict_update(state, params, z, y)[1]

    def check_params(params: OCOParams) -> None:
        learner.check_params(params.params)

    return Predictor(init, predict, update, check_params, predict_update)


def _unbounded(bound: float) -> float:
    return float("inf")


def objective_loss(objective: Objective) -> Loss:
    """An OCO objective `f(w; z)` as the runner's loss of the played point `w` (equal
    objectives give equal losses: one compilation)."""
    return Loss(objective.name, objective.value, objective.grad, _unbounded)


@learner_factory
def linear_weights(learner: OCOLearner) -> Callable[[Step], Array]:
    """A `record` function for :func:`ojax.runner.run`: the weights `w_t` of a linear predictor
    that the prediction of step `t` was made with (before the update)."""

    def weights(step: Step) -> Array:
        return learner.iterate(step.state.learner, step.params)

    return weights


class OptaxState(NamedTuple):
    """The state of Optax: a pytree of arrays, carried from step to step.

    Attributes:
      point: the current iterate, shape (d,)
      opt_state: the optax optimizer's state
    """

    point: Array  # the current iterate, shape (d,)
    opt_state: Any  # the optax optimizer's state


@learner_factory
def optax_learner(
    make: Callable[..., optax.GradientTransformation],
    check_params: Callable[[Params], None] | None = None,
) -> OCOLearner:
    """An OCO learner from an optax optimizer factory.

    The optimizer is rebuilt from `make(**params)` at every call, so its hyperparameters are
    runtime values in a params dict: `jax.vmap` over `{"learning_rate": grid}` works and a
    new value never recompiles.

    Args:
      make: e.g. `optax.sgd` or `optax.contrib.cocob` (static).
      check_params: optional domain check of the params dict.

    Returns:
      An :class:`~ojax.core.OCOLearner` whose params are a dict of keyword arguments of `make`.

    Examples:
      >>> import jax.numpy as jnp, optax
      >>> from ojax import adapters, losses, run_oco
      >>> sgd = adapters.optax_learner(optax.sgd)
      >>> zs = jnp.ones((3, 2))
      >>> _, trace = run_oco(sgd, {"learning_rate": 0.5}, jnp.zeros(2), zs,
      ...                        losses.quadratic_objective)
      >>> print(trace.loss.round(4))
      [1.     0.25   0.0625]
    """

    def init(params: Params, x0: Array) -> OptaxState:
        return OptaxState(x0, make(**params).init(x0))

    def iterate(state: OptaxState, params: Params) -> Array:
        return state.point

    def update(state: OptaxState, params: Params, grad: Array) -> OptaxState:
        updates, opt_state = make(**params).update(grad, state.opt_state, state.point)
        return OptaxState(optax.apply_updates(state.point, updates), opt_state)

    return OCOLearner(init, iterate, update, check_params or (lambda params: None))


__all__ = [
    "OCOParams",
    "linear_predictor",
    "linear_weights",
    "objective_loss",
    "oco_predictor",
    "optax_learner",
]
