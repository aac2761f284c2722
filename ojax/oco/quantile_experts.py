"""Squint with the improper prior on learning rates, in closed form (Koolen & van Erven 2015).

With `r_{t,k} = h_t - l_{t,k}` the instantaneous regret to expert `k` (`h_t = <w_t, l_t>`),
`R_{t,k} = sum_{s <= t} r_{s,k}`, `V_{t,k} = sum_{s <= t} r_{s,k}^2` and `pi` the prior over
experts (`x0`), Squint plays

    w_{t+1,k} proportional to pi_k E_{gamma(eta)}[eta exp(eta R_{t,k} - eta^2 V_{t,k})],
    eta in [0, 1/2].

The prior on learning rates is the paper's improper `gamma(eta) = 1 / eta` on `[0, 1/2]`:
the factor `eta` cancels and the evidence has a closed form with the error function,

    int_0^{1/2} exp(eta R - eta^2 V) deta
        = sqrt(pi) exp(R^2 / (4 V)) (erf(b) - erf(a)) / (2 sqrt(V)),
    a = -R / (2 sqrt(V)),  b = (V - R) / (2 sqrt(V)),

computed in log space (`log_ndtr` for the tails, so nothing overflows). For small `V` the
two erf values cancel; there (below `(30 eps)^(2/3)`, eps the dtype's resolution) the evidence
is `(1/2) exp(R/4 - V/16) sinh(u) / u` with `u = (V - 2R) / 8` (the closed form with the
integrand's `exp(-s^2)` dropped over its window of half-width `sqrt(V) / 4`: relative error
at most `V / 16`). This prior is chosen (rather than
a grid of rates) because it is the paper's closed-form algorithm (its Theorem 4): no grid size
to pick and one evaluation per expert. The potential `sum_k pi_k int_0^{1/2} (exp(eta R_k -
eta^2 V_k) - 1) / eta deta` never increases from 0 (the paper's Lemma 1), which bounds the regret
to every expert in terms of `V_{T,k}` and `pi_k` (losses in `[0, 1]`).

References:
  Koolen, W. M., van Erven, T. (2015). Second-order quantile methods for experts and
  combinatorial games. COLT.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import jax.numpy as jnp
from jax.scipy.special import log_ndtr, logsumexp, ndtr

from ojax.core import Array, OCOLearner, learner_factory
from ojax.validation import check_positive


class SquintParams(NamedTuple):
    """No hyperparameters: the prior over experts is `x0`, the one over rates is fixed."""

    @classmethod
    def default(cls, dtype: Any = None) -> SquintParams:
        """No hyperparameters."""
        return cls()


class SquintState(NamedTuple):
    """The state of Squint: a pytree of arrays, carried from step to step.

    Attributes:
      log_prior: log pi, shape (K,)
      regret: r_{t,k}, shape (K,)
      variance: v_{t,k}, shape (K,)
    """

    log_prior: Array  # log pi, shape (K,)
    regret: Array  # R_{t,k}, shape (K,)
    variance: Array  # V_{t,k}, shape (K,)


def _log1mexp(d: Array) -> Array:
    """`log(1 - exp(d))` for `d <= 0`, accurate near 0 and far below it."""
    return jnp.where(d > -math.log(2.0), jnp.log(-jnp.expm1(d)), jnp.log1p(-jnp.exp(d)))


def _log_ndtr_difference(x: Array, y: Array) -> Array:
    """`log(ndtr(y) - ndtr(x))` for `x < y`, without cancellation in either tail."""
    lower = log_ndtr(y) + _log1mexp(log_ndtr(x) - log_ndtr(y))  # used where y <= 0
    upper = log_ndtr(-x) + _log1mexp(log_ndtr(-y) - log_ndtr(-x))  # used where x >= 0
    middle = jnp.log(ndtr(y) - ndtr(x))
    return jnp.where(y <= 0, lower, jnp.where(x >= 0, upper, middle))


def _log_sinhc(u: Array) -> Array:
    """`log(sinh(u) / u)` (even; its series near 0)."""
    a = jnp.abs(u)
    big = a > 1e-2
    safe = jnp.where(big, a, 1.0)
    far = safe + _log1mexp(-2.0 * safe) - jnp.log(2.0 * safe)
    return jnp.where(big, far, a**2 / 6.0 - a**4 / 180.0)


def log_evidence(regret: Array, variance: Array) -> Array:
    """`log int_0^{1/2} exp(eta R - eta^2 V) deta` elementwise (the improper prior's weight)."""
    eps = float(jnp.finfo(jnp.result_type(variance)).eps)
    small = variance < (30.0 * eps) ** (2.0 / 3.0)
    v = jnp.where(small, 1.0, variance)
    root = jnp.sqrt(v)
    a, b = -regret / (2.0 * root), (v - regret) / (2.0 * root)
    # erf(b) - erf(a) = 2 (ndtr(b sqrt 2) - ndtr(a sqrt 2))
    closed = (
        regret**2 / (4.0 * v)
        + 0.5 * math.log(math.pi)
        - jnp.log(root)
        + _log_ndtr_difference(a * math.sqrt(2.0), b * math.sqrt(2.0))
    )
    near = (
        regret / 4.0 - variance / 16.0 - math.log(2.0) + _log_sinhc((variance - 2.0 * regret) / 8.0)
    )
    return jnp.where(small, near, closed)


@learner_factory
def squint() -> OCOLearner:
    """Squint over `K` experts with losses in `[0, 1]` (`x0` is the prior over experts).

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax import losses, oco, run_oco
      >>> zs = jnp.tile(jnp.array([[0.2, 0.8, 0.5]]), (50, 1))
      >>> _, tr = run_oco(oco.squint(), oco.SquintParams(), jnp.full(3, 1 / 3), zs,
      ...                 losses.linear_objective, store_iterates=True)
      >>> print(" ".join(f"{w:.3f}" for w in tr.prediction[-1]))
      0.936 0.018 0.046
    """

    def init(params: SquintParams, x0: Array) -> SquintState:
        return SquintState(jnp.log(x0), jnp.zeros_like(x0), jnp.zeros_like(x0))

    def iterate(state: SquintState, params: SquintParams) -> Array:
        scores = state.log_prior + log_evidence(state.regret, state.variance)
        return jnp.exp(scores - logsumexp(scores))

    def update(state: SquintState, params: SquintParams, grad: Array) -> SquintState:
        r = jnp.vdot(iterate(state, params), grad) - grad
        return SquintState(state.log_prior, state.regret + r, state.variance + r**2)

    def check_start(params: SquintParams, x0: Array) -> None:
        check_positive("x0 (the prior over experts)", x0)

    return OCOLearner(init, iterate, update, check_start=check_start)


__all__ = ["SquintParams", "SquintState", "log_evidence", "squint"]
