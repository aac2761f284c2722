"""Ader: a meta-learner over a pool of base learners (OGD step sizes), for dynamic regret.

The improved Ader (Zhang, Lu & Zhou 2018, Algorithms 3 and 4: one gradient per round) runs
`N` copies of a base OCO learner, each with its own params (OGD with the step sizes
`eta_i = 2^(i-1) eta_1`), on the linearized (surrogate) loss
`l_t(x) = <g_t, x - x_t>` of the played point `x_t = sum_i p_{t,i} x_{t,i}`, and a
meta-learner over the simplex of the `N` experts that takes the vector of their surrogate
losses `(l_t(x_{t,1}), ..., l_t(x_{t,N}))` as its gradient, from the prior
`p_{1,i} = (1 + 1/N) / (i (i + 1))`. With :func:`ojax.oco.hedge` as the meta-learner::

    x_{t+1,i} = P(x_{t,i} - eta_i g_t),   p_{t+1,i} proportional to p_{t,i} exp(-beta l_t(x_{t,i}))

Both roles are arguments: any OCO learner (optax's through :func:`ojax.optax_learner`) can be
the base, any simplex learner (:func:`~ojax.nonstationary.fixed_share`,
:func:`~ojax.oco.adahedge`, ...) the meta-learner.

References:
  Zhang, L., Lu, S., Zhou, Z.-H. (2018). Adaptive online learning in dynamic environments.
  NeurIPS.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ojax.core import Array, OCOLearner, Params, float_dtype, learner_factory
from ojax.oco.exponential_weights import HedgeParams
from ojax.oco.gradient_descent import OGDParams
from ojax.validation import InputError, check_int


def ader_pool_size(num_steps: int) -> int:
    """`N = ceil(log2(1 + 4 T / 7) / 2) + 1`: the step sizes of Theorem 3's grid (the largest
    is at least the step tuned for the largest path length `T D`)."""
    num_steps = check_int("num_steps", num_steps, low=1)
    return math.ceil(0.5 * math.log2(1 + 4 * num_steps / 7)) + 1


def ader_prior(num_experts: int) -> np.ndarray:
    """`p_{1,i} = (1 + 1/N) / (i (i + 1))`, `i = 1..N` (sums to 1), float64."""
    i = np.arange(1, check_int("num_experts", num_experts, low=1) + 1, dtype=np.float64)
    return (1 + 1 / num_experts) / (i * (i + 1))


class AderParams(NamedTuple):
    """The params of :func:`ader`: the pool's and the meta-learner's."""

    base: Params  # the base learner's params, every leaf with a leading axis of N (the pool)
    meta: Params  # the meta-learner's params

    @classmethod
    def theory(
        cls,
        num_steps: int,
        diameter: float,
        lipschitz: float,
        radius: float,
        *,
        dtype: Any = None,
    ) -> AderParams:
        """Theorem 3's settings for OGD experts on the ball of `radius` (diameter `D`,
        gradients bounded by `G = lipschitz`) and Hedge as the meta-learner:
        `eta_i = 2^(i-1) (D / G) sqrt(7 / (2 T))`, `i = 1..N` (:func:`ader_pool_size`), and
        the meta rate `beta = sqrt(8 / T) / (G D)` (the surrogate losses of one round lie in
        an interval of width `G D`)."""
        dtype = float_dtype(dtype)
        pool = ader_pool_size(num_steps)
        steps = 2.0 ** np.arange(pool) * diameter / lipschitz * math.sqrt(7 / (2 * num_steps))
        base = OGDParams(jnp.asarray(steps, dtype), jnp.full((pool,), radius, dtype))
        beta = math.sqrt(8 / num_steps) / (lipschitz * diameter)
        return cls(base, HedgeParams(jnp.asarray(beta, dtype)))


class AderState(NamedTuple):
    """The state of Ader: a pytree of arrays, carried from step to step.

    Attributes:
      base: the N base learners' states (a leading axis of N)
      meta: the meta-learner's state over the N experts
    """

    base: Any  # the N base learners' states (a leading axis of N)
    meta: Any  # the meta-learner's state over the N experts


@learner_factory
def ader(base: OCOLearner, meta: OCOLearner, num_experts: int) -> OCOLearner:
    """The improved Ader (one gradient per round) over `num_experts` copies of `base`.

    Args:
      base: the experts' OCO learner (static); its params in :class:`AderParams` carry a
        leading axis of `num_experts` (one point of the pool each, e.g. OGD's step sizes).
      meta: the OCO learner over the simplex of the experts (static), started at
        :func:`ader_prior`; :func:`ojax.oco.hedge` is the paper's.
      num_experts: `N` (static).

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax import losses, nonstationary, oco, run_oco
      >>> learner = nonstationary.ader(oco.ogd(), oco.hedge(), 3)
      >>> pool = oco.OGDParams(jnp.array([0.1, 0.2, 0.4]), jnp.ones(3))
      >>> params = nonstationary.AderParams(pool, oco.HedgeParams(jnp.array(1.0)))
      >>> _, tr = run_oco(learner, params, jnp.zeros(1), jnp.ones((3, 1)),
      ...                 losses.quadratic_objective)
      >>> print(tr.loss.round(4))
      [0.5    0.3565 0.2435]
    """
    num_experts = check_int("num_experts", num_experts, low=1)
    prior = ader_prior(num_experts)

    def points(state: AderState, params: AderParams) -> Array:
        return jax.vmap(base.iterate)(state.base, params.base)  # (N, d)

    def init(params: AderParams, x0: Array) -> AderState:
        states = jax.vmap(base.init, in_axes=(0, None))(params.base, x0)
        return AderState(states, meta.init(params.meta, jnp.asarray(prior, x0.dtype)))

    def iterate(state: AderState, params: AderParams) -> Array:
        return meta.iterate(state.meta, params.meta) @ points(state, params)

    def update(state: AderState, params: AderParams, grad: Array) -> AderState:
        experts = points(state, params)
        played = meta.iterate(state.meta, params.meta) @ experts
        surrogate = experts @ grad - jnp.vdot(grad, played)  # l_t(x_{t,i}) = <g, x_{t,i} - x_t>
        states = jax.vmap(base.update, in_axes=(0, 0, None))(state.base, params.base, grad)
        return AderState(states, meta.update(state.meta, params.meta, surrogate))

    def check_params(params: AderParams) -> None:
        for leaf in jax.tree.leaves(params.base):
            if jnp.shape(leaf)[:1] != (num_experts,):
                raise InputError(
                    f"params.base: every leaf needs a leading axis of num_experts = "
                    f"{num_experts} (one per expert), got shape {jnp.shape(leaf)}"
                )
        base.check_params(params.base)
        meta.check_params(params.meta)

    def check_start(params: AderParams, x0: Array) -> None:
        meta.check_start(params.meta, jnp.asarray(prior, x0.dtype))
        for i in range(num_experts):
            base.check_start(jax.tree.map(lambda leaf, i=i: leaf[i], params.base), x0)

    return OCOLearner(init, iterate, update, check_params, check_start)


__all__ = ["AderParams", "AderState", "ader", "ader_pool_size", "ader_prior"]
