"""Online (projected) gradient descent with a fixed or a decaying step.

    w_{t+1} = P_S(w_t - alpha_t g_t),   alpha_t = alpha (constant) or alpha / sqrt(t)

From `w_1 = x0 = 0` with a constant step: `Regret(u) <= ||u||^2 / (2 alpha)
+ (alpha / 2) sum ||g_t||^2`; for rho-Lipschitz losses, `||u|| <= B` and
`alpha = B / (rho sqrt(T))` this is `B rho sqrt(T)`.

References:
  Zinkevich, M. (2003). Online convex programming and generalized infinitesimal gradient ascent.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax.numpy as jnp

from ojax import projections
from ojax.core import Array, OCOLearner, learner_factory, scalars
from ojax.validation import check_choice, check_positive


class OGDParams(NamedTuple):
    """The hyperparameters of OGD: a pytree of arrays passed at call time.

    Attributes:
      learning_rate: alpha > 0, shape ()
      radius: size of the feasible set, shape ()
    """

    learning_rate: Array  # alpha > 0, shape ()
    radius: Array  # size of the feasible set, shape ()

    @classmethod
    def default(cls, dtype: Any = None) -> OGDParams:
        """`learning_rate = 0.1`, `radius = 1`."""
        return cls(*scalars(0.1, 1.0, dtype=dtype))


class OGDState(NamedTuple):
    """The state of OGD: a pytree of arrays, carried from step to step.

    Attributes:
      point: w_t, shape (d,)
      count: shadows tuple.count
    """

    point: Array  # w_t, shape (d,)
    # number of updates made, shape (), int32
    count: Array  # type: ignore[assignment]  # shadows tuple.count


@learner_factory
def ogd(feasible_set: str = "l2_ball", schedule: str = "constant") -> OCOLearner:
    """Projected online gradient descent.

    Args:
      feasible_set: one of :data:`ojax.projections.SETS` (static).
      schedule: `"constant"` (`alpha`) or `"inverse_sqrt"` (`alpha / sqrt(t)` at the
        t-th update) (static).

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax import losses, oco, run_oco
      >>> params = oco.OGDParams(jnp.array(0.5), jnp.array(10.0))
      >>> _, tr = run_oco(oco.ogd(), params, jnp.zeros(1), jnp.ones((3, 1)),
      ...                     losses.quadratic_objective)
      >>> print(tr.loss)
      [0.5     0.125   0.03125]
    """
    check_choice("feasible_set", feasible_set, projections.SETS)
    check_choice("schedule", schedule, ("constant", "inverse_sqrt"))

    def init(params: OGDParams, x0: Array) -> OGDState:
        return OGDState(x0, jnp.zeros((), jnp.int32))

    def iterate(state: OGDState, params: OGDParams) -> Array:
        return state.point

    def update(state: OGDState, params: OGDParams, grad: Array) -> OGDState:
        count = state.count + 1
        step = params.learning_rate
        if schedule == "inverse_sqrt":
            step = step / jnp.sqrt(count.astype(grad.dtype))
        point = projections.project(feasible_set, state.point - step * grad, params.radius)
        return OGDState(point, count)

    def check_params(params: OGDParams) -> None:
        check_positive("learning_rate", params.learning_rate)
        check_positive("radius", params.radius)

    check_start = projections.start_in_set(feasible_set)

    return OCOLearner(init, iterate, update, check_params, check_start)


__all__ = ["OGDParams", "OGDState", "ogd"]
