"""Follow the regularized leader with `psi(w) = (lambda / 2) ||w - x0||^2` on linearized losses.

    w_{t+1} = P_S(x0 - (1 / lambda) sum_{s <= t} g_s)

Lazy projection: the point is computed from the anchor `x0` and the sum of gradients, never
from the previous point (so it is not a projected gradient step). With `||u|| <= B` and
`||g_s|| <= M`: `Regret(u) <= (lambda / 2) ||u - x0||^2 + (1 / lambda) sum ||g_s||^2`; at
`lambda = (M / B) sqrt(2 T)` this is `M B sqrt(2 T)`.

References:
  Orabona, F. (2019). A Modern Introduction to Online Learning, ch. 7.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ojax import projections
from ojax.core import Array, OCOLearner, learner_factory, scalars
from ojax.validation import check_choice, check_positive


class FTRLParams(NamedTuple):
    """The hyperparameters of FTRL: a pytree of arrays passed at call time.

    Attributes:
      regularization: lambda > 0, shape ()
      radius: size of the feasible set, shape ()
    """

    regularization: Array  # lambda > 0, shape ()
    radius: Array  # size of the feasible set, shape ()

    @classmethod
    def default(cls, dtype: Any = None) -> FTRLParams:
        """`regularization = 10`, `radius = 1`."""
        return cls(*scalars(10.0, 1.0, dtype=dtype))


class FTRLState(NamedTuple):
    """The state of FTRL: a pytree of arrays, carried from step to step.

    Attributes:
      anchor: x0, shape (d,)
      sum_grads: sum of the gradients seen, shape (d,)
    """

    anchor: Array  # x0, shape (d,)
    sum_grads: Array  # sum of the gradients seen, shape (d,)


@learner_factory
def ftrl(feasible_set: str = "l2_ball") -> OCOLearner:
    """FTRL with the squared-norm regularizer on linearized losses (lazy projection).

    Args:
      feasible_set: one of :data:`ojax.projections.SETS` (static).

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax import losses, oco, run_oco
      >>> zs = jnp.array([[-0.5], [1.0], [-1.0], [1.0]])
      >>> params = oco.FTRLParams(jnp.array(4.0), jnp.array(1.0))
      >>> _, tr = run_oco(oco.ftrl(), params, jnp.zeros(1), zs, losses.linear_objective)
      >>> print(tr.loss)
      [-0.     0.125  0.125  0.125]
    """
    check_choice("feasible_set", feasible_set, projections.SETS)

    def init(params: FTRLParams, x0: Array) -> FTRLState:
        return FTRLState(x0, 0.0 * x0)

    def iterate(state: FTRLState, params: FTRLParams) -> Array:
        point = state.anchor - state.sum_grads / params.regularization
        return projections.project(feasible_set, point, params.radius)

    def update(state: FTRLState, params: FTRLParams, grad: Array) -> FTRLState:
        return FTRLState(state.anchor, state.sum_grads + grad)

    def check_params(params: FTRLParams) -> None:
        check_positive("regularization", params.regularization)
        check_positive("radius", params.radius)

    return OCOLearner(init, iterate, update, check_params)


__all__ = ["FTRLParams", "FTRLState", "ftrl"]
