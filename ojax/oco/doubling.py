"""Online gradient descent with the doubling trick: no horizon to know in advance.

OGD's step `alpha / sqrt(T)` needs the horizon `T`. The doubling trick runs epochs
`m = 0, 1, 2, ...`, epoch `m` over the `2^m` rounds `t = 2^m, ..., 2^(m+1) - 1`, each a
fresh run of OGD from `x0` tuned for its own length::

    w_t = x0                                   at the first round of an epoch (t = 2^m)
    w_{t+1} = P_S(w_t - alpha_m g_t),  alpha_m = alpha / sqrt(2^m)   within epoch m

If OGD tuned for `T` rounds has regret at most `c sqrt(T)` (`c = B rho` for rho-Lipschitz
losses, `||u|| <= B`, `alpha = B / rho`), the doubling trick has regret at most
`sqrt(2) / (sqrt(2) - 1) c sqrt(T)` at every `T` (the sum of the epochs' bounds).

References:
  Shalev-Shwartz, S. (2012). Online learning and online convex optimization. Foundations and
  Trends in Machine Learning 4(2), Section 2.3.1 (the doubling trick).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from ojax import projections
from ojax.core import Array, OCOLearner, learner_factory
from ojax.oco.gradient_descent import OGDParams, ogd


class DoublingState(NamedTuple):
    """The state of Doubling: a pytree of arrays, carried from step to step.

    Attributes:
      point: w_t, shape (d,)
      anchor: x0, where every epoch starts, shape (d,)
      count: shadows tuple.count
    """

    point: Array  # w_t, shape (d,)
    anchor: Array  # x0, where every epoch starts, shape (d,)
    # number of rounds played, shape (), int32
    count: Array  # type: ignore[assignment]  # shadows tuple.count


@learner_factory
def ogd_doubling(feasible_set: str = "l2_ball") -> OCOLearner:
    """Projected OGD with the doubling trick (see the module docstring).

    Params: :class:`~ojax.oco.OGDParams` (`learning_rate` is `alpha`, the step of a
    one-round epoch; `radius` the size of the feasible set).

    Args:
      feasible_set: one of :data:`ojax.projections.SETS` (static).

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax import losses, oco, run_oco
      >>> params = oco.OGDParams(jnp.array(1.0), jnp.array(10.0))
      >>> _, tr = run_oco(oco.ogd_doubling(), params, jnp.zeros(1), jnp.ones((4, 1)),
      ...                 losses.quadratic_objective, store_iterates=True)
      >>> print(tr.prediction[:, 0].round(4))  # rounds 1, 2 and 4 start an epoch at x0
      [0.     0.     0.7071 0.    ]
    """
    plain = ogd(feasible_set)  # checks feasible_set; its params' and start's checks are ours

    def init(params: OGDParams, x0: Array) -> DoublingState:
        return DoublingState(x0, x0, jnp.zeros((), jnp.int32))

    def iterate(state: DoublingState, params: OGDParams) -> Array:
        return state.point

    def update(state: DoublingState, params: OGDParams, grad: Array) -> DoublingState:
        t = state.count + 1  # the round just played, in epoch m = floor(log2 t)
        epoch = 31 - jax.lax.clz(t)
        step = params.learning_rate * jnp.exp2(-0.5 * epoch.astype(grad.dtype))
        moved = projections.project(feasible_set, state.point - step * grad, params.radius)
        restart = (t & (t + 1)) == 0  # t + 1 is a power of two: the next round starts an epoch
        return DoublingState(jnp.where(restart, state.anchor, moved), state.anchor, t)

    return OCOLearner(init, iterate, update, plain.check_params, plain.check_start)


__all__ = ["DoublingState", "ogd_doubling"]
