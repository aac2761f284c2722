"""Mechanic: a learned scale for the displacement of any ojax OCO learner.

The base learner runs unchanged from `x_ref = x_1` on the gradients at Mechanic's points; its
displacement `Delta_t = (base iterate) - x_ref` is played scaled by `sum_i s_{t,i}`, where
each `s_i` is a one-dimensional bettor with its own decay `beta_i` fed the coin
`h_t = <Delta_t, g_t + lambda (sum_i s_{t,i}) ||g_t|| x_t / ||x_t||>`::

    x_t     = x_ref + (sum_i s_{t,i}) Delta_t
    m_t     = max(beta m_{t-1}, |h_t|)
    v_t     = beta^2 v_{t-1} + h_t^2
    r_t     = max(0, beta r_{t-1} - s_t h_t)
    W_t     = s_init m_t / n + r_t
    s_{t+1} = W_t / (sqrt(v_t) + eps)

(vectors over the `n` betas, coordinate-wise) from `s_1 = m_0 = v_0 = r_0 = 0`, so the first
point is `x_ref` and the scale starts near `s_init` at the second step. The weight-decay term
is taken as 0 where `x_t = 0`.

This follows the paper's Algorithm 1. `optax.contrib.mechanize` (the authors' JAX code) adds
later conventions: `s_1 = s_init` per beta (so it moves at the first step), the coin clipped to
`[-m_{t-1}, m_{t-1}]` in the reward, the reward kept unclipped in its state, `|h| + eps` in
`m` and `eps` in the recomputed `Delta` and the weight-decay term
(`tests/test_parameter_free_parity.py` pins each).

References:
  Cutkosky, A., Defazio, A. and Mehta, H. (2023). Mechanic: a learning rate tuner. NeurIPS
  (Algorithm 1).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax.numpy as jnp
import numpy as np

from ojax.core import Array, OCOLearner, State, float_dtype, learner_factory, scalars
from ojax.validation import check_nonnegative, check_positive, check_range

BETAS = (0.9, 0.99, 0.999, 0.9999, 0.99999, 0.999999)
"""The paper's default decays ``beta`` (one bettor each)."""


def default_betas() -> np.ndarray:
    """The paper's six decays as a float32 array (the `betas` field of the params)."""
    return np.asarray(BETAS, np.float32)


class MechanicParams(NamedTuple):
    """The hyperparameters of Mechanic: a pytree of arrays passed at call time.

    Attributes:
      base: the base learner's params
      s_init: > 0, shape (): the initial scale (the paper's 1e-8)
      weight_decay: lambda >= 0, shape () (the paper's 0.01)
      betas: each in [0, 1), shape (n,): one bettor per decay (see BETAS)
    """

    base: Any  # the base learner's params
    s_init: Array  # > 0, shape (): the initial scale (the paper's 1e-8)
    weight_decay: Array  # lambda >= 0, shape () (the paper's 0.01)
    betas: Array  # each in [0, 1), shape (n,): one bettor per decay (see BETAS)

    @classmethod
    def default(cls, base: Any, dtype: Any = None) -> MechanicParams:
        """The paper's `s_init = 1e-8`, `weight_decay = 0.01` and :data:`BETAS` on top of
        the base learner's params `base`."""
        s_init, weight_decay = scalars(1e-8, 0.01, dtype=dtype)
        return cls(base, s_init, weight_decay, jnp.asarray(BETAS, float_dtype(dtype)))


class MechanicState(NamedTuple):
    """The state of Mechanic: a pytree of arrays, carried from step to step.

    Attributes:
      anchor: x_ref, shape (d,)
      base: the base learner's state
      scale: s, shape (n,)
      max_product: m, shape (n,)
      sum_squares: v, shape (n,)
      reward: r, shape (n,)
    """

    anchor: Array  # x_ref, shape (d,)
    base: State  # the base learner's state
    scale: Array  # s, shape (n,)
    max_product: Array  # m, shape (n,)
    sum_squares: Array  # v, shape (n,)
    reward: Array  # r, shape (n,)


@learner_factory
def mechanic(base: OCOLearner, eps: float = 1e-8) -> OCOLearner:
    """Mechanic (Cutkosky, Defazio & Mehta 2023, Algorithm 1) on top of `base`.

    See the module docstring for the update. The params are :class:`MechanicParams`, whose
    `base` field holds the base learner's params (e.g. OGD with step 1: Mechanic learns the
    scale); the base learner is started at the same `x0`.

    Args:
      base: any :class:`~ojax.core.OCOLearner` (static).
      eps: the paper's `epsilon` (static).

    Returns:
      An :class:`~ojax.core.OCOLearner` with params :class:`MechanicParams`.

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax import losses, oco, parameter_free, run_oco
      >>> learner = parameter_free.mechanic(oco.ogd("none"))
      >>> base = oco.OGDParams(jnp.array(1.0), jnp.array(1.0))
      >>> params = parameter_free.MechanicParams(
      ...     base, jnp.array(1e-8), jnp.array(0.01), parameter_free.default_betas())
      >>> zs = jnp.tile(jnp.array([[0.3, -0.4]]), (200, 1))  # f(w) = ||w - z||^2 / 2
      >>> _, tr = run_oco(learner, params, jnp.zeros(2), zs, losses.quadratic_objective)
      >>> print(round(float(tr.loss.mean()), 3))  # mean loss over the run
      0.03
    """

    def init(params: MechanicParams, x0: Array) -> MechanicState:
        x0 = jnp.asarray(x0)
        zeros = jnp.zeros(jnp.shape(params.betas), x0.dtype)
        return MechanicState(x0, base.init(params.base, x0), zeros, zeros, zeros, zeros)

    def displacement(state: MechanicState, params: MechanicParams) -> Array:
        return base.iterate(state.base, params.base) - state.anchor

    def iterate(state: MechanicState, params: MechanicParams) -> Array:
        return state.anchor + jnp.sum(state.scale) * displacement(state, params)

    def update(state: MechanicState, params: MechanicParams, grad: Array) -> MechanicState:
        delta = displacement(state, params)
        total = jnp.sum(state.scale)
        point = state.anchor + total * delta
        point_norm = jnp.linalg.norm(point)
        ok = point_norm > 0
        decay = params.weight_decay * total * jnp.linalg.norm(grad) / jnp.where(ok, point_norm, 1)
        h = jnp.vdot(delta, grad + jnp.where(ok, decay, 0.0) * point)
        betas = jnp.asarray(params.betas, grad.dtype)
        m = jnp.maximum(betas * state.max_product, jnp.abs(h))
        v = betas**2 * state.sum_squares + h**2
        r = jnp.maximum(0.0, betas * state.reward - state.scale * h)
        wealth = params.s_init * m / betas.shape[-1] + r
        scale = wealth / (jnp.sqrt(v) + eps)
        new_base = base.update(state.base, params.base, grad)
        return MechanicState(state.anchor, new_base, scale, m, v, r)

    def check_params(params: MechanicParams) -> None:
        base.check_params(params.base)
        check_positive("s_init", params.s_init)
        check_nonnegative("weight_decay", params.weight_decay)
        check_range("betas", params.betas, 0.0, 1.0, high_open=True)

    def check_start(params: MechanicParams, x0: Array) -> None:
        base.check_start(params.base, x0)

    return OCOLearner(init, iterate, update, check_params, check_start)


__all__ = ["BETAS", "MechanicParams", "MechanicState", "default_betas", "mechanic"]
