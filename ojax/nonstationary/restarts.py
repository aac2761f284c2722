"""Baselines for drifting data: OGD restarted every `period` rounds, and discounted OGD.

* :func:`restarted_ogd`: projected OGD with a constant step, sent back to `x0` after every
  `period` updates (Besbes, Gur & Zeevi 2015: restarting is minimax for a known variation
  budget)::

      w_{t+1} = x0                          if t is a multiple of period
      w_{t+1} = P(w_t - eta g_t)            otherwise

* :func:`discounted_ogd`: OGD whose past is discounted by `lambda` in (0, 1] toward the
  anchor `x0` (the discounted online gradient descent of Zhang, Bombara & Yang 2024)::

      w_{t+1} = P(x0 + lambda (w_t - x0) - eta g_t)

  (`lambda = 1` is OGD; unconstrained it is `w_{t+1} = x0 - eta sum_s lambda^(t-s) g_s`).

References:
  Besbes, O., Gur, Y., Zeevi, A. (2015). Non-stationary stochastic optimization. Operations
  Research 63.
  Zhang, Z., Bombara, D., Yang, H. (2024). Discounted adaptive online learning: towards better
  regularization. ICML.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax.numpy as jnp

from ojax import projections
from ojax.core import Array, OCOLearner, learner_factory, scalars
from ojax.validation import check_choice, check_positive, check_range


class RestartedOGDParams(NamedTuple):
    """The hyperparameters of restarted OGD.

    Attributes:
      learning_rate: eta > 0, shape ()
      radius: size of the feasible set, shape ()
      period: rounds between restarts >= 1, shape (), int32
    """

    learning_rate: Array  # eta > 0, shape ()
    radius: Array  # size of the feasible set, shape ()
    period: Array  # rounds between restarts >= 1, shape (), int32

    @classmethod
    def default(cls, dtype: Any = None) -> RestartedOGDParams:
        """`learning_rate = 0.1`, `radius = 1`, `period = 16`."""
        learning_rate, radius = scalars(0.1, 1.0, dtype=dtype)
        return cls(learning_rate, radius, jnp.asarray(16, jnp.int32))


class RestartedOGDState(NamedTuple):
    """The state of restarted OGD: a pytree of arrays, carried from step to step.

    Attributes:
      anchor: x0, shape (d,)
      point: w_t, shape (d,)
      count: updates made, shape (), int32
    """

    anchor: Array  # x0, shape (d,)
    point: Array  # w_t, shape (d,)
    count: Array  # type: ignore[assignment]  # updates made, shape (), int32


@learner_factory
def restarted_ogd(feasible_set: str = "l2_ball") -> OCOLearner:
    """Projected OGD with a constant step, restarted at `x0` every `period` rounds.

    Args:
      feasible_set: one of :data:`ojax.projections.SETS` (static).

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax import losses, nonstationary, run_oco
      >>> params = nonstationary.RestartedOGDParams(jnp.array(0.5), jnp.array(9.0), jnp.array(2))
      >>> _, tr = run_oco(nonstationary.restarted_ogd(), params, jnp.zeros(1), jnp.ones((4, 1)),
      ...                 losses.quadratic_objective, store_iterates=True)
      >>> print(tr.prediction[:, 0])
      [0.  0.5 0.  0.5]
    """
    check_choice("feasible_set", feasible_set, projections.SETS)

    def init(params: RestartedOGDParams, x0: Array) -> RestartedOGDState:
        return RestartedOGDState(x0, x0, jnp.zeros((), jnp.int32))

    def iterate(state: RestartedOGDState, params: RestartedOGDParams) -> Array:
        return state.point

    def update(
        state: RestartedOGDState, params: RestartedOGDParams, grad: Array
    ) -> RestartedOGDState:
        count = state.count + 1
        moved = projections.project(
            feasible_set, state.point - params.learning_rate * grad, params.radius
        )
        point = jnp.where(count % params.period == 0, state.anchor, moved)
        return RestartedOGDState(state.anchor, point, count)

    def check_params(params: RestartedOGDParams) -> None:
        check_positive("learning_rate", params.learning_rate)
        check_positive("radius", params.radius)
        check_range("period", params.period, 1, None)

    check_start = projections.start_in_set(feasible_set)

    return OCOLearner(init, iterate, update, check_params, check_start)


class DiscountedOGDParams(NamedTuple):
    """The hyperparameters of discounted OGD.

    Attributes:
      learning_rate: eta > 0, shape ()
      radius: size of the feasible set, shape ()
      discount: lambda in (0, 1], shape ()
    """

    learning_rate: Array  # eta > 0, shape ()
    radius: Array  # size of the feasible set, shape ()
    discount: Array  # lambda in (0, 1], shape ()

    @classmethod
    def default(cls, dtype: Any = None) -> DiscountedOGDParams:
        """`learning_rate = 0.1`, `radius = 1`, `discount = 0.95`."""
        return cls(*scalars(0.1, 1.0, 0.95, dtype=dtype))


class DiscountedOGDState(NamedTuple):
    """The state of discounted OGD: a pytree of arrays, carried from step to step.

    Attributes:
      anchor: x0, shape (d,)
      point: w_t, shape (d,)
    """

    anchor: Array  # x0, shape (d,)
    point: Array  # w_t, shape (d,)


@learner_factory
def discounted_ogd(feasible_set: str = "l2_ball") -> OCOLearner:
    """OGD with its past discounted toward `x0` (see the module docstring).

    Args:
      feasible_set: one of :data:`ojax.projections.SETS` (static).

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax import losses, nonstationary, run_oco
      >>> params = nonstationary.DiscountedOGDParams(jnp.array(0.5), jnp.array(9.0),
      ...                                            jnp.array(0.5))
      >>> _, tr = run_oco(nonstationary.discounted_ogd(), params, jnp.zeros(1), jnp.ones((3, 1)),
      ...                 losses.quadratic_objective, store_iterates=True)
      >>> print(tr.prediction[:, 0])
      [0.  0.5 0.5]
    """
    check_choice("feasible_set", feasible_set, projections.SETS)

    def init(params: DiscountedOGDParams, x0: Array) -> DiscountedOGDState:
        return DiscountedOGDState(x0, x0)

    def iterate(state: DiscountedOGDState, params: DiscountedOGDParams) -> Array:
        return state.point

    def update(
        state: DiscountedOGDState, params: DiscountedOGDParams, grad: Array
    ) -> DiscountedOGDState:
        pulled = state.anchor + params.discount * (state.point - state.anchor)
        point = projections.project(
            feasible_set, pulled - params.learning_rate * grad, params.radius
        )
        return DiscountedOGDState(state.anchor, point)

    def check_params(params: DiscountedOGDParams) -> None:
        check_positive("learning_rate", params.learning_rate)
        check_positive("radius", params.radius)
        check_range("discount", params.discount, 0.0, 1.0, low_open=True)

    check_start = projections.start_in_set(feasible_set)

    return OCOLearner(init, iterate, update, check_params, check_start)


__all__ = [
    "DiscountedOGDParams",
    "DiscountedOGDState",
    "RestartedOGDParams",
    "RestartedOGDState",
    "discounted_ogd",
    "restarted_ogd",
]
