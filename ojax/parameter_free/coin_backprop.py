"""COCOB-Backprop: coordinate-wise continuous coin betting with no learning rate.

Each coordinate `i` bets on its own coin, the negative gradient `-g_{t,i}`, keeping the
largest gradient seen `L`, the sum of absolute gradients `G`, the reward `R` (clipped at 0)
and the sum of negative gradients `theta`; the iterate is anchored at the start `w_1`::

    L_t     = max(L_{t-1}, |g_t|)
    G_t     = G_{t-1} + |g_t|
    R_t     = max(R_{t-1} - g_t (w_t - w_1), 0)
    theta_t = theta_{t-1} - g_t
    w_{t+1} = w_1 + theta_t / (L_t max(G_t + L_t, alpha L_t)) (L_t + R_t)

from `L_0 = G_0 = R_0 = theta_0 = 0` (all per coordinate). A coordinate that has only seen
zero gradients has `L = 0` and `theta = 0`: its bet is the limit 0 (`w = w_1`). The
authors' code and `optax.contrib.cocob` start `L` at `1e-8` instead, which changes the
iterate only where a coordinate's gradients have all stayed below `1e-8` in magnitude
(`tests/test_parameter_free_parity.py` pins the difference).

References:
  Orabona, F. and Tommasi, T. (2017). Training deep networks without learning rates through
  coin betting. NeurIPS (Algorithm 2, COCOB-Backprop).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax.numpy as jnp

from ojax.core import Array, OCOLearner, learner_factory, scalars
from ojax.validation import check_positive


class CocobParams(NamedTuple):
    """The hyperparameters of Cocob: a pytree of arrays passed at call time.

    Attributes:
      alpha: alpha > 0, shape (): the bet is at most theta / (alpha L) early on (100)
    """

    alpha: Array  # alpha > 0, shape (): the bet is at most theta / (alpha L) early on (100)

    @classmethod
    def default(cls, dtype: Any = None) -> CocobParams:
        """The paper's `alpha = 100`."""
        return cls(*scalars(100.0, dtype=dtype))


class CocobState(NamedTuple):
    """The state of Cocob: a pytree of arrays, carried from step to step.

    Attributes:
      anchor: w_1, shape (d,)
      scale: l: the largest |g| seen per coordinate, shape (d,)
      abs_sum: g: the sum of |g| per coordinate, shape (d,)
      reward: r >= 0 per coordinate, shape (d,)
      neg_sum: theta: the sum of -g per coordinate, shape (d,)
    """

    anchor: Array  # w_1, shape (d,)
    scale: Array  # L: the largest |g| seen per coordinate, shape (d,)
    abs_sum: Array  # G: the sum of |g| per coordinate, shape (d,)
    reward: Array  # R >= 0 per coordinate, shape (d,)
    neg_sum: Array  # theta: the sum of -g per coordinate, shape (d,)


def _bet(state: CocobState, alpha: Array) -> Array:
    """`theta (L + R) / (L max(G + L, alpha L))`, 0 where `L = 0`."""
    scale = state.scale
    seen = scale > 0
    denominator = scale * jnp.maximum(state.abs_sum + scale, alpha * scale)
    return jnp.where(
        seen, state.neg_sum * (scale + state.reward) / jnp.where(seen, denominator, 1.0), 0.0
    )


@learner_factory
def cocob() -> OCOLearner:
    """COCOB-Backprop (Orabona & Tommasi 2017, Algorithm 2) as an OCO learner.

    See the module docstring for the update. The only hyperparameter, `alpha`, caps the early
    bets (the paper's default is 100); there is no step size.

    Returns:
      An :class:`~ojax.core.OCOLearner` with params :class:`CocobParams`.

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax import losses, parameter_free, run_oco
      >>> zs = jnp.tile(jnp.array([[0.3, -0.4]]), (300, 1))  # f(w) = ||w - z||^2 / 2
      >>> params = parameter_free.CocobParams(jnp.array(100.0))
      >>> _, tr = run_oco(parameter_free.cocob(), params, jnp.zeros(2), zs,
      ...                 losses.quadratic_objective)
      >>> print(round(float(tr.loss.mean()), 4))  # mean loss over the run
      0.0041
    """

    def init(params: CocobParams, x0: Array) -> CocobState:
        x0 = jnp.asarray(x0)
        zeros = jnp.zeros_like(x0)
        return CocobState(x0, zeros, zeros, zeros, zeros)

    def iterate(state: CocobState, params: CocobParams) -> Array:
        return state.anchor + _bet(state, params.alpha)

    def update(state: CocobState, params: CocobParams, grad: Array) -> CocobState:
        moved = _bet(state, params.alpha)  # w_t - w_1
        size = jnp.abs(grad)
        return CocobState(
            state.anchor,
            jnp.maximum(state.scale, size),
            state.abs_sum + size,
            jnp.maximum(state.reward - grad * moved, 0.0),
            state.neg_sum - grad,
        )

    def check_params(params: CocobParams) -> None:
        check_positive("alpha", params.alpha)

    return OCOLearner(init, iterate, update, check_params)


__all__ = ["CocobParams", "CocobState", "cocob"]
