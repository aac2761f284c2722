"""Strongly adaptive learners on the geometric cover: SAOL and sleeping AdaNormalHedge.

The geometric cover (Daniely, Gonen & Shalev-Shwartz 2015) is the set of intervals
`[i 2^k, (i + 1) 2^k - 1]`, `i >= 1`, of every level `k >= 0`: at round `t` the level `k` is
active when `t >= 2^k` and a new interval of it starts when `2^k` divides `t`. Each level
runs a copy of a base OCO learner, restarted at `x0` at the start of each of its intervals;
a meta-learner over the active levels (sleeping experts: a level sleeps before `2^k`) plays
`x_t = sum_k p_{t,k} x_{t,k}`. With one gradient per round the levels' losses are the
linearized `l_t(x) = s <g_t, x>` with `s = 1 / (G D)` (:class:`CoverParams`'s
`loss_scale`), so that `r_{t,k} = l_t(x_t) - l_t(x_{t,k})` lies in `[-1, 1]`; the play is
the weighted mean (the papers' randomized choice in expectation: exact for linear losses).

* :func:`saol` (Daniely et al. 2015, Algorithm 1, SAOL)::

      eta_k = min(1/2, 2^(-k/2)),   w_k = eta_k at the start of each interval,
      p_{t,k} = w_{t,k} / sum_{active} w_{t,j},   w_{t+1,k} = w_{t,k} (1 + eta_k r_{t,k})

* :func:`ada_normal_hedge_cover`: the meta-learner is AdaNormalHedge with sleeping experts
  (Luo & Schapire 2015, Section 5): `p_{t,k}` proportional to `q_k I_{t,k} w(R_k, C_k)`,
  `R_k, C_k` reset to 0 at each new interval of level `k`, `q` uniform over the levels.

`num_levels` levels cover the rounds `t < 2^num_levels` (:func:`cover_levels`); beyond them
the top level keeps restarting every `2^(num_levels - 1)` rounds.

References:
  Daniely, A., Gonen, A., Shalev-Shwartz, S. (2015). Strongly adaptive online learning. ICML.
  Luo, H., Schapire, R. E. (2015). Achieving all with no parameters: AdaNormalHedge. COLT.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from ojax.core import Array, OCOLearner, Params, learner_factory, tree_where
from ojax.nonstationary.experts import normal_step, normal_weights
from ojax.validation import check_choice, check_int, check_positive

METAS = ("saol", "ada_normal_hedge")


def cover_levels(num_steps: int) -> int:
    """`floor(log2 T) + 1`: the levels whose intervals cover rounds `1..T`."""
    return int(math.floor(math.log2(check_int("num_steps", num_steps, low=1)))) + 1


class CoverParams(NamedTuple):
    """The params of the cover learners.

    Attributes:
      base: the base learner's params (every level's copy)
      loss_scale: s = 1 / (G D) > 0, shape (): the linearized losses' scale
    """

    base: Params  # the base learner's params (every level's copy)
    loss_scale: Array  # s = 1 / (G D) > 0, shape (): the linearized losses' scale


class CoverState(NamedTuple):
    """The state of a cover learner: a pytree of arrays, carried from step to step.

    Attributes:
      anchor: x0, where every restart starts, shape (d,)
      base: the levels' base states (a leading axis of num_levels)
      log_weight: SAOL: log w_k; AdaNormalHedge: log q_k, shape (num_levels,)
      regret: AdaNormalHedge's R_k (0 for SAOL), shape (num_levels,)
      variation: AdaNormalHedge's C_k (0 for SAOL), shape (num_levels,)
      count: rounds played, shape (), int32
    """

    anchor: Array  # x0, shape (d,)
    base: Any  # the levels' base states, leading axis num_levels
    log_weight: Array  # SAOL: log w_k; AdaNormalHedge: log q_k, shape (L,)
    regret: Array  # AdaNormalHedge's R_k, shape (L,)
    variation: Array  # AdaNormalHedge's C_k, shape (L,)
    count: Array  # type: ignore[assignment]  # rounds played, shape (), int32


def _cover(base: OCOLearner, num_levels: int, meta: str) -> OCOLearner:
    check_choice("meta", meta, METAS)
    num_levels = check_int("num_levels", num_levels, low=1, high=30)
    sizes = [2**k for k in range(num_levels)]

    def rates(dtype: Any) -> Array:  # SAOL's eta_k = min(1/2, 1 / sqrt(2^k))
        return jnp.asarray([min(0.5, 1 / math.sqrt(s)) for s in sizes], dtype)

    def fresh(dtype: Any) -> tuple[Array, Array, Array]:
        if meta == "saol":
            log_weight = jnp.log(rates(dtype))
        else:
            log_weight = jnp.full((num_levels,), -math.log(num_levels), dtype)
        zeros = jnp.zeros((num_levels,), dtype)
        return log_weight, zeros, zeros

    def init(params: CoverParams, x0: Array) -> CoverState:
        states = jax.vmap(lambda _: base.init(params.base, x0))(jnp.arange(num_levels))
        return CoverState(x0, states, *fresh(x0.dtype), jnp.zeros((), jnp.int32))

    def active(count: Array) -> Array:
        return count + 1 >= jnp.asarray(sizes, jnp.int32)

    def weights(state: CoverState) -> Array:
        awake = active(state.count)
        if meta == "saol":
            return jax.nn.softmax(jnp.where(awake, state.log_weight, -jnp.inf))
        return normal_weights(state.log_weight, state.regret, state.variation, awake)

    def points(state: CoverState, params: CoverParams) -> Array:
        return jax.vmap(lambda s: base.iterate(s, params.base))(state.base)  # (L, d)

    def iterate(state: CoverState, params: CoverParams) -> Array:
        return weights(state) @ points(state, params)

    def update(state: CoverState, params: CoverParams, grad: Array) -> CoverState:
        awake, p, experts = active(state.count), weights(state), points(state, params)
        losses = params.loss_scale * (experts @ grad)  # s <g_t, x_{t,k}>
        log_weight, regret, variation = state.log_weight, state.regret, state.variation
        if meta == "saol":
            r = jnp.vdot(p, losses) - losses
            log_weight = jnp.where(awake, log_weight + jnp.log1p(rates(grad.dtype) * r), log_weight)
        else:
            regret, variation = normal_step(regret, variation, p, losses, awake)
        states = jax.vmap(lambda s: base.update(s, params.base, grad))(state.base)
        count = state.count + 1
        restart = (count + 1) % jnp.asarray(sizes, jnp.int32) == 0  # a new interval at t + 1
        again = base.init(params.base, state.anchor)  # one fresh state, where a level restarts
        states = jax.vmap(tree_where, (0, None, 0))(restart, again, states)
        start = fresh(grad.dtype)
        log_weight = jnp.where(restart, start[0], log_weight)
        regret, variation = jnp.where(restart, 0.0, regret), jnp.where(restart, 0.0, variation)
        return CoverState(state.anchor, states, log_weight, regret, variation, count)

    def check_params(params: CoverParams) -> None:
        base.check_params(params.base)
        check_positive("loss_scale", params.loss_scale)

    def check_start(params: CoverParams, x0: Array) -> None:
        base.check_start(params.base, x0)

    return OCOLearner(init, iterate, update, check_params, check_start)


@learner_factory
def saol(base: OCOLearner, num_levels: int) -> OCOLearner:
    """SAOL (Daniely, Gonen & Shalev-Shwartz 2015, Algorithm 1) over `base` restarted on the
    geometric cover (see the module docstring for the update).

    Args:
      base: the OCO learner of every interval (static), e.g. OGD with a decaying step.
      num_levels: the cover's levels (static): :func:`cover_levels` of the horizon.

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax import losses, nonstationary, oco, run_oco
      >>> learner = nonstationary.saol(oco.ogd(schedule="inverse_sqrt"), 3)
      >>> params = nonstationary.CoverParams(oco.OGDParams(jnp.array(1.0), jnp.array(1.0)),
      ...                                    jnp.array(0.5))
      >>> _, tr = run_oco(learner, params, jnp.zeros(1), jnp.ones((4, 1)),
      ...                 losses.quadratic_objective)
      >>> print(tr.loss.round(4))
      [0.5   0.5   0.125 0.5  ]
    """
    return _cover(base, num_levels, "saol")


@learner_factory
def ada_normal_hedge_cover(base: OCOLearner, num_levels: int) -> OCOLearner:
    """AdaNormalHedge with sleeping experts (Luo & Schapire 2015, Section 5) over `base`
    restarted on the geometric cover: a level sleeps until `2^k`, and its `R, C` restart with
    each of its intervals (see the module docstring).

    Args:
      base: the OCO learner of every interval (static).
      num_levels: the cover's levels (static): :func:`cover_levels` of the horizon.

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax import losses, nonstationary, oco, run_oco
      >>> learner = nonstationary.ada_normal_hedge_cover(oco.ogd(schedule="inverse_sqrt"), 3)
      >>> params = nonstationary.CoverParams(oco.OGDParams(jnp.array(1.0), jnp.array(1.0)),
      ...                                    jnp.array(0.5))
      >>> _, tr = run_oco(learner, params, jnp.zeros(1), jnp.ones((4, 1)),
      ...                 losses.quadratic_objective)
      >>> print(tr.loss.round(4))
      [0.5   0.5   0.125 0.5  ]
    """
    return _cover(base, num_levels, "ada_normal_hedge")


__all__ = [
    "METAS",
    "CoverParams",
    "CoverState",
    "ada_normal_hedge_cover",
    "cover_levels",
    "saol",
]
