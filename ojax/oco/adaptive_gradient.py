"""Diagonal AdaGrad: composite mirror descent with the per-coordinate metric of the past gradients.

    s_{t,i} = ||g_{1:t,i}||_2,   H_t = delta I + diag(s_t),
    x_{t+1} = argmin_{x in X} eta <g_t, x> + 0.5 (x - x_t)' H_t (x - x_t)
            = P_X^{H_t}(x_t - eta H_t^-1 g_t)

(Duchi et al. 2011, Algorithm 1 with the composite mirror-descent update (4) and phi the
indicator of `X`). The projection is in the norm of `H_t`: on the box `[-r, r]^d` it is
coordinate-wise clipping (`H_t` is diagonal, so the problem separates); on the L2 ball it is
:func:`ojax.projections.l2_ball_in_metric` (a Newton solve on the Lagrange multiplier; it needs
`delta > 0` so that `H_t` is positive definite). With `delta = 0` a coordinate whose
gradients have all been 0 does not move (the pseudo-inverse `0 / 0 = 0`, as the paper takes).

Regret (Duchi et al. 2011, Theorem 5, the mirror-descent update, `delta = 0`): for every
`x*` in `X`,

    R(T) <= (1 / (2 eta)) max_{t <= T} ||x* - x_t||_inf^2 sum_i ||g_{1:T,i}||_2
            + eta sum_i ||g_{1:T,i}||_2,

so `R(T) <= sqrt(2) D_inf sum_i ||g_{1:T,i}||_2` at `eta = D_inf / sqrt(2)`, with `D_inf`
the `L_inf` diameter of `X` (`2 r` for the box).

References:
  Duchi, J., Hazan, E., Singer, Y. (2011). Adaptive subgradient methods for online learning and
  stochastic optimization. JMLR 12.
  McMahan, H. B., Streeter, M. (2010). Adaptive bound optimization for online convex
  optimization. COLT.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax.numpy as jnp

from ojax import projections
from ojax.core import Array, OCOLearner, learner_factory, scalars
from ojax.validation import check_choice, check_nonnegative, check_positive

ADAGRAD_SETS = ("none", "box", "l2_ball")


class AdaGradParams(NamedTuple):
    """The hyperparameters of AdaGrad: a pytree of arrays passed at call time.

    Attributes:
      learning_rate: eta > 0, shape ()
      delta: delta >= 0 (> 0 on the L2 ball), shape ()
      radius: size of the feasible set, shape ()
    """

    learning_rate: Array  # eta > 0, shape ()
    delta: Array  # delta >= 0 (> 0 on the L2 ball), shape ()
    radius: Array  # size of the feasible set, shape ()

    @classmethod
    def default(cls, dtype: Any = None) -> AdaGradParams:
        """`learning_rate = sqrt(2)` (`D_inf / sqrt(2)` on the box `[-1, 1]^d`),
        `delta = 0`, `radius = 1`."""
        return cls(*scalars(2**0.5, 0.0, 1.0, dtype=dtype))


class AdaGradState(NamedTuple):
    """The state of AdaGrad: a pytree of arrays, carried from step to step.

    Attributes:
      point: x_t, shape (d,)
      sum_squares: sum_{s <= t} g_s^2 per coordinate, shape (d,)
    """

    point: Array  # x_t, shape (d,)
    sum_squares: Array  # sum_{s <= t} g_s^2 per coordinate, shape (d,)


@learner_factory
def adagrad(feasible_set: str = "box") -> OCOLearner:
    """Diagonal AdaGrad (composite mirror descent), projected in the metric `H_t`.

    Args:
      feasible_set: `"none"`, `"box"` (`[-radius, radius]^d`, clipping) or `"l2_ball"`
        (the projection in the `H_t` norm; `delta > 0`) (static).

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax import losses, oco, run_oco
      >>> params = oco.AdaGradParams(jnp.array(1.0), jnp.array(0.0), jnp.array(1.0))
      >>> _, tr = run_oco(oco.adagrad(), params, jnp.zeros(2),
      ...                 jnp.array([[1.0, 0.0], [1.0, -2.0], [-1.0, 0.0]]),
      ...                 losses.linear_objective, store_iterates=True)
      >>> print(tr.prediction)
      [[ 0.  0.]
       [-1.  0.]
       [-1.  1.]]
    """
    check_choice("feasible_set", feasible_set, ADAGRAD_SETS)

    def init(params: AdaGradParams, x0: Array) -> AdaGradState:
        return AdaGradState(x0, jnp.zeros_like(x0))

    def iterate(state: AdaGradState, params: AdaGradParams) -> Array:
        return state.point

    def update(state: AdaGradState, params: AdaGradParams, grad: Array) -> AdaGradState:
        sums = state.sum_squares + grad**2
        metric = params.delta + jnp.sqrt(sums)  # the diagonal of H_t
        step = grad / jnp.where(metric > 0, metric, 1.0)  # 0 / 0 = 0: the pseudo-inverse
        point = state.point - params.learning_rate * step
        if feasible_set == "box":
            point = projections.box(point, params.radius)
        elif feasible_set == "l2_ball":
            point = projections.l2_ball_in_metric(point, metric, params.radius)
        return AdaGradState(point, sums)

    def check_params(params: AdaGradParams) -> None:
        check_positive("learning_rate", params.learning_rate)
        check_positive("radius", params.radius)
        if feasible_set == "l2_ball":
            check_positive("delta (the L2 ball's projection needs H_t > 0)", params.delta)
        else:
            check_nonnegative("delta", params.delta)

    check_start = projections.start_in_set(feasible_set)

    return OCOLearner(init, iterate, update, check_params, check_start)


__all__ = ["ADAGRAD_SETS", "AdaGradParams", "AdaGradState", "adagrad"]
