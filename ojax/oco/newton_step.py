"""Online Newton Step (ONS) for exp-concave losses, with the generalized projection in the A_t norm.

    A_0 = epsilon I,   A_t = A_{t-1} + g_t g_t',
    y_{t+1} = x_t - (1 / gamma) A_t^-1 g_t,
    x_{t+1} = argmin_{x in K} (x - y_{t+1})' A_t (x - y_{t+1})

with `g_t` the gradient at the played `x_t` (any `x_1` in `K`). `K` is the L2 ball of
`radius` (or the whole space). Each update takes one eigendecomposition `A_t = Q diag(lam) Q'`
(`jnp.linalg.eigh`): the Newton step is `Q diag(1 / lam) Q' g_t` and the projection is
:func:`ojax.projections.l2_ball_in_metric` in that basis (a fixed number of Newton steps on the
Lagrange multiplier `mu` of `x = (A_t + mu I)^-1 A_t y`). That is `O(d^3)` a step: at
`d = 3000` about one second a step on a 2-core CPU (`ojax.oco.adagrad`, diagonal, is `O(d)`).

For `alpha`-exp-concave losses with `||grad f_t|| <= G` on `K` of diameter `D`, the paper
sets `gamma = 1/2 min(1 / (4 G D), alpha)` and `epsilon = 1 / (gamma^2 D^2)`
(:meth:`OnlineNewtonParams.paper`) and proves (Hazan et al. 2007, Theorem 2)

    Regret_T <= 5 (1 / alpha + G D) n log T.

References:
  Hazan, E., Agarwal, A., Kale, S. (2007). Logarithmic regret algorithms for online convex
  optimization. Machine Learning 69.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax.numpy as jnp

from ojax import projections
from ojax.core import Array, OCOLearner, float_dtype, learner_factory
from ojax.validation import check_choice, check_positive


class OnlineNewtonParams(NamedTuple):
    """The hyperparameters of OnlineNewton: a pytree of arrays passed at call time.

    Attributes:
      gamma: the step's inverse scale gamma > 0, shape ()
      epsilon: a_0 = epsilon I, epsilon > 0, shape ()
      radius: radius of the L2 ball K, shape ()
    """

    gamma: Array  # the step's inverse scale gamma > 0, shape ()
    epsilon: Array  # A_0 = epsilon I, epsilon > 0, shape ()
    radius: Array  # radius of the L2 ball K, shape ()

    @classmethod
    def default(cls, dtype: Any = None) -> OnlineNewtonParams:
        """Theorem 2's settings for `0.5 ||x - z||^2` on the unit ball (`alpha = 1/4`,
        `G = D = 2`): `gamma = 1/32`, `epsilon = 256`, `radius = 1`."""
        return cls.paper(0.25, 2.0, 2.0, 1.0, dtype=float_dtype(dtype))

    @classmethod
    def paper(
        cls, alpha: float, lipschitz: float, diameter: float, radius: float, *, dtype: Any = None
    ) -> OnlineNewtonParams:
        """Theorem 2's settings for `alpha`-exp-concave losses with gradients bounded by
        `lipschitz` (G) on a set of `diameter` (D): `gamma = 1/2 min(1/(4 G D), alpha)`,
        `epsilon = 1 / (gamma^2 D^2)`."""
        gamma = 0.5 * min(1.0 / (4.0 * lipschitz * diameter), alpha)
        epsilon = 1.0 / (gamma**2 * diameter**2)
        return cls(*(jnp.asarray(v, dtype) for v in (gamma, epsilon, radius)))


class OnlineNewtonState(NamedTuple):
    """The state of OnlineNewton: a pytree of arrays, carried from step to step.

    Attributes:
      point: x_t, shape (d,)
      matrix: a_t (A_0 = epsilon I), shape (d, d)
    """

    point: Array  # x_t, shape (d,)
    matrix: Array  # A_t (A_0 = epsilon I), shape (d, d)


@learner_factory
def online_newton(feasible_set: str = "l2_ball") -> OCOLearner:
    """Online Newton Step with the generalized projection onto the L2 ball (or none).

    Args:
      feasible_set: `"l2_ball"` (`||x|| <= radius`, projection in the `A_t` norm) or
        `"none"` (static).

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax import losses, oco, run_oco
      >>> params = oco.OnlineNewtonParams.paper(alpha=0.25, lipschitz=2.0, diameter=2.0,
      ...                                        radius=1.0)
      >>> zs = jnp.tile(jnp.array([[0.6, -0.3]]), (200, 1))  # 0.5 ||x - z||^2, z fixed
      >>> _, tr = run_oco(oco.online_newton(), params, jnp.zeros(2), zs,
      ...                 losses.quadratic_objective)
      >>> print(round(float(tr.loss.sum()), 2))
      0.96
    """
    check_choice("feasible_set", feasible_set, ("none", "l2_ball"))

    def init(params: OnlineNewtonParams, x0: Array) -> OnlineNewtonState:
        eye = jnp.eye(x0.shape[-1], dtype=x0.dtype)
        return OnlineNewtonState(x0, params.epsilon * eye)

    def iterate(state: OnlineNewtonState, params: OnlineNewtonParams) -> Array:
        return state.point

    def update(state: OnlineNewtonState, params: OnlineNewtonParams, grad: Array):
        matrix = state.matrix + jnp.outer(grad, grad)
        lam, basis = jnp.linalg.eigh(matrix)
        coords = basis.T @ state.point - (basis.T @ grad) / (params.gamma * lam)  # Q' y_{t+1}
        if feasible_set == "l2_ball":
            coords = projections.l2_ball_in_metric(coords, lam, params.radius)
        return OnlineNewtonState(basis @ coords, matrix)

    def check_params(params: OnlineNewtonParams) -> None:
        check_positive("gamma", params.gamma)
        check_positive("epsilon", params.epsilon)
        check_positive("radius", params.radius)

    check_start = projections.start_in_set(feasible_set)

    return OCOLearner(init, iterate, update, check_params, check_start)


__all__ = ["OnlineNewtonParams", "OnlineNewtonState", "online_newton"]
