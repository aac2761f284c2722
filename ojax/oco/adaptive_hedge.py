"""AdaHedge: Hedge whose learning rate is tuned by the cumulative mixability gap.

With `L_{t-1}` the experts' cumulative losses and `pi` the prior (`x0`; the paper's is
uniform), at round `t`:

    eta_t = ln K / Delta_{t-1}    (eta = inf while Delta = 0: follow the leader),
    w_t proportional to pi exp(-eta_t L_{t-1})   (inf: pi restricted to the leaders),
    h_t = <w_t, l_t>,   m_t = -(1 / eta_t) ln <w_t, exp(-eta_t l_t)>   (inf: min over the
    support of w_t of l_t),
    Delta_t = Delta_{t-1} + max(0, h_t - m_t).

`h_t - m_t >= 0` is the mixability gap (`m_t` the mix loss); the `max` clips the rounding
that can make it negative, as the paper's code does. The state keeps `L - min L` (the
leaders' losses stay small numbers over long streams in float32). For losses in `[0, 1]` the
paper shows `R_T <= 2 Delta_T` and, with `V_T = sum_t Var_{k ~ w_t}(l_{t,k})`,

    R_T <= 2 sqrt(V_T ln K) + (4/3) ln K + 2.

References:
  de Rooij, S., van Erven, T., Grunwald, P. D., Koolen, W. M. (2014). Follow the leader if you
  can, hedge if you must. JMLR 15.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from ojax.core import Array, OCOLearner, learner_factory
from ojax.validation import check_positive


class AdaHedgeParams(NamedTuple):
    """No hyperparameters: the learning rate is set from the data."""

    @classmethod
    def default(cls, dtype: Any = None) -> AdaHedgeParams:
        """No hyperparameters."""
        return cls()


class AdaHedgeState(NamedTuple):
    """The state of AdaHedge: a pytree of arrays, carried from step to step.

    Attributes:
      log_prior: log pi, shape (K,)
      relative_loss: l_{t-1} - min_k L_{t-1,k}, shape (K,)
      gap: delta_{t-1}, the cumulative mixability gap, shape ()
    """

    log_prior: Array  # log pi, shape (K,)
    relative_loss: Array  # L_{t-1} - min_k L_{t-1,k}, shape (K,)
    gap: Array  # Delta_{t-1}, the cumulative mixability gap, shape ()


@learner_factory
def adahedge() -> OCOLearner:
    """AdaHedge over `K` experts (`x0` is the prior: uniform in the paper).

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax import losses, oco, run_oco
      >>> zs = jnp.array([[0.5, 0.0], [0.0, 1.0], [1.0, 0.0], [0.0, 1.0]])
      >>> _, tr = run_oco(oco.adahedge(), oco.AdaHedgeParams(), jnp.full(2, 0.5), zs,
      ...                 losses.linear_objective, store_iterates=True)
      >>> print(" ".join(f"{w:.3f}" for w in tr.prediction[:, 0]))  # eta = inf, then ln 2 / 0.25
      0.500 0.200 0.653 0.379
    """

    def rate(state: AdaHedgeState) -> tuple[Array, Array]:
        """(learning rate with inf replaced by 1, whether it is finite)."""
        finite = state.gap > 0
        size = state.log_prior.shape[-1]
        return math.log(size) / jnp.where(finite, state.gap, 1.0), finite

    def log_weights(state: AdaHedgeState) -> Array:
        eta, finite = rate(state)
        leaders = jnp.where(state.relative_loss <= 0, state.log_prior, -jnp.inf)
        scores = jnp.where(finite, state.log_prior - eta * state.relative_loss, leaders)
        return scores - jax.scipy.special.logsumexp(scores)

    def init(params: AdaHedgeParams, x0: Array) -> AdaHedgeState:
        return AdaHedgeState(jnp.log(x0), jnp.zeros_like(x0), jnp.zeros((), x0.dtype))

    def iterate(state: AdaHedgeState, params: AdaHedgeParams) -> Array:
        return jnp.exp(log_weights(state))

    def update(state: AdaHedgeState, params: AdaHedgeParams, grad: Array) -> AdaHedgeState:
        eta, finite = rate(state)
        log_w = log_weights(state)
        hedge_loss = jnp.vdot(jnp.exp(log_w), grad)
        support = jnp.isfinite(log_w)
        mix = -jax.scipy.special.logsumexp(jnp.where(support, log_w - eta * grad, -jnp.inf)) / eta
        mix = jnp.where(finite, mix, jnp.min(jnp.where(support, grad, jnp.inf)))
        total = state.relative_loss + grad
        gap = state.gap + jnp.maximum(0.0, hedge_loss - mix)
        return AdaHedgeState(state.log_prior, total - jnp.min(total), gap)

    def check_start(params: AdaHedgeParams, x0: Array) -> None:
        check_positive("x0 (the prior over experts)", x0)

    return OCOLearner(init, iterate, update, check_start=check_start)


__all__ = ["AdaHedgeParams", "AdaHedgeState", "adahedge"]
