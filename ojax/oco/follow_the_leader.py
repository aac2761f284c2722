"""Follow the leader (FTL) on linear or quadratic losses, in closed form.

    w_{t+1} = argmin_{w in S} sum_{s <= t} f_s(w)

* quadratic `f_s(w) = 0.5 ||w - z_s||^2`: `w_{t+1} = P_S(mean(z_1..z_t))` (the running mean);
  `z_s` is recovered from the gradient at the played point, `z_s = w_s - g_s`;
* linear `f_s(w) = <w, g_s>`: the minimizer of `<w, G_t>` over `S` with `G_t = sum g_s`
  (`-radius G / ||G||` on the ball, `-radius sign(G)` on the box, the vertex of the smallest
  coordinate on the simplex); while `G_t = 0` every point is a leader and FTL stays at `x0`.

Before the first loss FTL plays `x0`.

References:
  Orabona, F. (2019). A Modern Introduction to Online Learning, ch. 2 (FTL on quadratics and
  its failure on linear losses).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from ojax import projections
from ojax.core import Array, OCOLearner, learner_factory, scalars
from ojax.validation import check_choice, check_positive


class FTLParams(NamedTuple):
    """The hyperparameters of FTL: a pytree of arrays passed at call time.

    Attributes:
      radius: size of the feasible set, shape ()
    """

    radius: Array  # size of the feasible set, shape ()

    @classmethod
    def default(cls, dtype: Any = None) -> FTLParams:
        """`radius = 1`."""
        return cls(*scalars(1.0, dtype=dtype))


class FTLState(NamedTuple):
    """The state of FTL: a pytree of arrays, carried from step to step.

    Attributes:
      anchor: x0, shape (d,)
      sum_targets: sum of z_s (quadratic) or of g_s (linear), shape (d,)
      count: shadows tuple.count
    """

    anchor: Array  # x0, shape (d,)
    sum_targets: Array  # sum of z_s (quadratic) or of g_s (linear), shape (d,)
    # number of losses seen, shape (), int32
    count: Array  # type: ignore[assignment]  # shadows tuple.count


@learner_factory
def ftl(objective: str = "quadratic", feasible_set: str = "l2_ball") -> OCOLearner:
    """Follow the leader.

    Args:
      objective: `"quadratic"` or `"linear"` (static).
      feasible_set: `"l2_ball"`, `"box"` or `"simplex"` (linear); any of
        :data:`ojax.projections.SETS` (quadratic).

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax import losses, oco, run_oco
      >>> zs = jnp.array([[-0.5], [1.0], [-1.0], [1.0]])
      >>> _, tr = run_oco(oco.ftl("linear"), oco.FTLParams(jnp.array(1.0)), jnp.zeros(1),
      ...                     zs, losses.linear_objective)
      >>> print(tr.loss)
      [-0.  1.  1.  1.]
    """
    check_choice("objective", objective, ("quadratic", "linear"))
    sets = projections.SETS if objective == "quadratic" else ("l2_ball", "box", "simplex")
    check_choice("feasible_set", feasible_set, sets)

    def init(params: FTLParams, x0: Array) -> FTLState:
        return FTLState(x0, jnp.zeros_like(x0), jnp.zeros((), jnp.int32))

    def leader(state: FTLState, params: FTLParams) -> Array:
        total = state.sum_targets
        if objective == "quadratic":
            return projections.project(
                feasible_set, total / state.count.astype(total.dtype), params.radius
            )
        if feasible_set == "l2_ball":
            norm = jnp.linalg.norm(total)
            return -params.radius * total / jnp.where(norm > 0, norm, 1.0)
        if feasible_set == "box":
            return -params.radius * jnp.sign(total)
        return params.radius * jax.nn.one_hot(jnp.argmin(total), total.shape[0], dtype=total.dtype)

    def iterate(state: FTLState, params: FTLParams) -> Array:
        undecided = state.count == 0
        if objective == "linear":
            undecided |= jnp.all(state.sum_targets == 0)
        return jnp.where(undecided, state.anchor, leader(state, params))

    def update(state: FTLState, params: FTLParams, grad: Array) -> FTLState:
        target = iterate(state, params) - grad if objective == "quadratic" else grad
        return FTLState(state.anchor, state.sum_targets + target, state.count + 1)

    def check_params(params: FTLParams) -> None:
        check_positive("radius", params.radius)

    return OCOLearner(init, iterate, update, check_params)


__all__ = ["FTLParams", "FTLState", "ftl"]
