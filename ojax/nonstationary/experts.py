"""Tracking the best expert: Fixed Share, Mixing Past Posteriors, AdaNormalHedge.

Every learner here is an :class:`~ojax.core.OCOLearner` over the probability simplex of `N`
experts: the gradient of the linear loss `<p, l_t>` is the experts' loss vector `l_t`
(losses in `[0, 1]`), so they run with :data:`ojax.losses.linear_objective` and `x0` the
prior, as :func:`ojax.oco.hedge` does. They also serve as the meta-learner of
:func:`ojax.nonstationary.ader` (any simplex learner does).

Weights are kept as logarithms: a share `alpha = 0` (Hedge) survives long streams in float32.

References:
  Herbster, M., Warmuth, M. K. (1998). Tracking the best expert. Machine Learning 32.
  Bousquet, O., Warmuth, M. K. (2002). Tracking a small set of experts by mixing past
  posteriors. JMLR 3.
  Luo, H., Schapire, R. E. (2015). Achieving all with no parameters: AdaNormalHedge. COLT.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
from jax.scipy.special import logsumexp

from ojax.core import Array, OCOLearner, learner_factory, scalars
from ojax.validation import InputError, check_choice, check_positive, check_range

SCHEMES = ("herbster_warmuth", "start", "uniform_past")
"""The mixing schemes of :func:`fixed_share`: Herbster & Warmuth's share among the others,
and Bousquet & Warmuth's mixing of past posteriors toward the start vector or uniformly over
the past posteriors."""


class FixedShareParams(NamedTuple):
    """The hyperparameters of Fixed Share.

    Attributes:
      learning_rate: eta > 0, shape ()
      share: alpha in [0, 1], shape () (0: Hedge)
    """

    learning_rate: Array  # eta > 0, shape ()
    share: Array  # alpha in [0, 1], shape () (0: Hedge)

    @classmethod
    def default(cls, dtype: Any = None) -> FixedShareParams:
        """`learning_rate = 0.5`, `share = 0.01`."""
        return cls(*scalars(0.5, 0.01, dtype=dtype))


class FixedShareState(NamedTuple):
    """The state of Fixed Share: a pytree of arrays, carried from step to step.

    Attributes:
      log_prior: log v_0 (the start vector x0), shape (N,)
      log_weights: log w_t, shape (N,)
      log_past: log of v_0 + ... + v_{t-1} (the past posteriors), shape (N,)
      count: updates made, shape (), int32
    """

    log_prior: Array  # log v_0 (the start vector x0), shape (N,)
    log_weights: Array  # log w_t, shape (N,)
    log_past: Array  # log (v_0 + ... + v_{t-1}), shape (N,)
    count: Array  # type: ignore[assignment]  # updates made, shape (), int32


def _log_mix(log_a: Array, log_b: Array, share: Array) -> Array:
    """`log((1 - share) a + share b)` from `log a`, `log b` (share 0 or 1 exactly)."""
    keep = jnp.where(share < 1, jnp.log1p(-share) + log_a, -jnp.inf)
    moved = jnp.where(share > 0, jnp.log(share) + log_b, -jnp.inf)
    return jnp.logaddexp(keep, moved)


@learner_factory
def fixed_share(scheme: str = "start") -> OCOLearner:
    """Fixed Share (Herbster & Warmuth 1998) and Mixing Past Posteriors (Bousquet & Warmuth
    2002) over `N` experts (`x0` is the start vector `v_0`, uniform in the papers).

    Loss update, then mixing update (Bousquet & Warmuth's Figure 1)::

        v_t = w_t exp(-eta l_t) / sum_i w_{t,i} exp(-eta l_{t,i})
        "herbster_warmuth":  w_{t+1,i} = (1 - alpha) v_{t,i} + alpha (1 - v_{t,i}) / (N - 1)
        "start":             w_{t+1}   = (1 - alpha) v_t + alpha v_0
        "uniform_past":      w_{t+1}   = (1 - alpha) v_t + (alpha / t) sum_{q < t} v_q

    `alpha = 0` is Hedge. Against every sequence of experts with `m` switches (losses in
    `[0, 1]`), "start" has regret at most `((m + 1) ln N + m ln(1 / alpha) + (T - m - 1)
    ln(1 / (1 - alpha))) / eta + eta T / 8` (checked in :mod:`ojax.theory.nonstationary`).

    Args:
      scheme: one of :data:`SCHEMES` (static).

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax import losses, nonstationary, run_oco
      >>> zs = jnp.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
      >>> params = nonstationary.FixedShareParams(jnp.array(2.0), jnp.array(0.1))
      >>> _, tr = run_oco(nonstationary.fixed_share(), params, jnp.full(2, 0.5), zs,
      ...                 losses.linear_objective, store_iterates=True)
      >>> print(tr.prediction[:, 0].round(4))
      [0.5    0.1573 0.0722]
    """
    check_choice("scheme", scheme, SCHEMES)

    def init(params: FixedShareParams, x0: Array) -> FixedShareState:
        log_prior = jnp.log(x0)
        return FixedShareState(log_prior, log_prior, log_prior, jnp.zeros((), jnp.int32))

    def iterate(state: FixedShareState, params: FixedShareParams) -> Array:
        return jnp.exp(state.log_weights)

    def update(state: FixedShareState, params: FixedShareParams, grad: Array) -> FixedShareState:
        scores = state.log_weights - params.learning_rate * grad
        log_v = scores - logsumexp(scores)
        count = state.count + 1
        if scheme == "herbster_warmuth":
            others = jnp.log1p(-jnp.minimum(jnp.exp(log_v), 1.0)) - jnp.log(grad.shape[-1] - 1.0)
            log_w = _log_mix(log_v, others.astype(log_v.dtype), params.share)
        elif scheme == "start":
            log_w = _log_mix(log_v, state.log_prior, params.share)
        else:
            past_mean = state.log_past - jnp.log(count.astype(log_v.dtype))
            log_w = _log_mix(log_v, past_mean, params.share)
        return FixedShareState(
            state.log_prior, log_w - logsumexp(log_w), jnp.logaddexp(state.log_past, log_v), count
        )

    def check_params(params: FixedShareParams) -> None:
        check_positive("learning_rate", params.learning_rate)
        check_range("share", params.share, 0.0, 1.0)

    def check_start(params: FixedShareParams, x0: Array) -> None:
        check_positive("x0 (the start vector over experts)", x0)
        if scheme == "herbster_warmuth" and x0.shape[-1] < 2:
            raise InputError("x0: herbster_warmuth shares among N >= 2 experts, got N = 1")

    return OCOLearner(init, iterate, update, check_params, check_start)


class AdaNormalHedgeParams(NamedTuple):
    """No hyperparameters (AdaNormalHedge is parameter-free)."""

    @classmethod
    def default(cls, dtype: Any = None) -> AdaNormalHedgeParams:
        """No hyperparameters."""
        return cls()


class AdaNormalHedgeState(NamedTuple):
    """The state of AdaNormalHedge: a pytree of arrays, carried from step to step.

    Attributes:
      log_prior: log q, shape (N,)
      regret: R_{t-1}, each expert's cumulative instantaneous regret, shape (N,)
      variation: C_{t-1}, the cumulative |r|, shape (N,)
    """

    log_prior: Array  # log q, shape (N,)
    regret: Array  # R_{t-1}, shape (N,)
    variation: Array  # C_{t-1}, shape (N,)


def normal_log_weight(regret: Array, variation: Array) -> Array:
    """`log w(R, C)` of AdaNormalHedge (`-inf` where `w = 0`)::

        Phi(R, C) = exp([R]_+^2 / (3 C)),   w(R, C) = (Phi(R + 1, C + 1) - Phi(R - 1, C + 1)) / 2

    computed as `a + log(1 - exp(b - a)) - log 2` with `a, b` the two exponents (no overflow:
    `R <= C`, so `exp(a)` alone would overflow float32 after a few hundred rounds)."""
    scale = 3.0 * (variation + 1.0)
    a = jnp.maximum(regret + 1.0, 0.0) ** 2 / scale
    b = jnp.maximum(regret - 1.0, 0.0) ** 2 / scale
    positive = a > b
    gap = jnp.where(positive, b - a, -1.0)
    return jnp.where(positive, a + jnp.log(-jnp.expm1(gap)) - jnp.log(2.0), -jnp.inf)


def normal_weights(log_prior: Array, regret: Array, variation: Array, awake: Array) -> Array:
    """AdaNormalHedge's distribution over the awake experts: `p_i` proportional to
    `q_i I_i w(R_i, C_i)`, or `q` restricted to the awake experts when every such weight is
    0 (the paper: "predict arbitrarily")."""
    scores = jnp.where(awake, log_prior + normal_log_weight(regret, variation), -jnp.inf)
    fallback = jnp.where(awake, log_prior, -jnp.inf)
    # both distributions, then the pick (the same numbers as the softmax of the picked scores):
    # under a vmap whose streams share `awake` (the cover's levels), picking the scores first
    # made XLA's loop 1.5x slower than a hand-written scan of the vmapped step
    some = jnp.any(jnp.isfinite(scores))
    # the scores' softmax shifted by 0 where none is finite: no NaN in the branch not taken
    exp = jnp.exp(scores - jnp.where(some, jnp.max(scores), 0.0))
    own = exp / jnp.where(some, jnp.sum(exp), 1.0)
    return jnp.where(some, own, jax.nn.softmax(fallback))


def normal_step(
    regret: Array, variation: Array, weights: Array, losses: Array, awake: Array
) -> tuple[Array, Array]:
    """`(R_t, C_t)` after the losses `l_t`: `r_{t,i} = I_i (<p_t, l_t> - l_{t,i})`,
    `R_t = R_{t-1} + r_t`, `C_t = C_{t-1} + |r_t|`."""
    r = jnp.where(awake, jnp.vdot(weights, losses) - losses, 0.0)
    return regret + r, variation + jnp.abs(r)


@learner_factory
def ada_normal_hedge() -> OCOLearner:
    """AdaNormalHedge (Luo & Schapire 2015, Algorithm 1) over `N` experts, every expert awake
    (`x0` is the prior `q`). The sleeping-experts form (Section 5) is
    :func:`ojax.nonstationary.ada_normal_hedge_cover`'s meta-learner.

    ::

        p_{t,i} proportional to q_i w(R_{t-1,i}, C_{t-1,i})
        r_{t,i} = <p_t, l_t> - l_{t,i},   R_{t,i} = R_{t-1,i} + r_{t,i},
        C_{t,i} = C_{t-1,i} + |r_{t,i}|

    with `w` of :func:`normal_log_weight`. Losses in `[0, 1]`.

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax import losses, nonstationary, run_oco
      >>> zs = jnp.array([[1.0, 0.0], [1.0, 0.0], [1.0, 0.0]])
      >>> _, tr = run_oco(nonstationary.ada_normal_hedge(), nonstationary.AdaNormalHedgeParams(),
      ...                 jnp.full(2, 0.5), zs, losses.linear_objective, store_iterates=True)
      >>> print(tr.prediction[:, 1].round(4))
      [0.5    0.9191 1.    ]
    """

    def init(params: AdaNormalHedgeParams, x0: Array) -> AdaNormalHedgeState:
        return AdaNormalHedgeState(jnp.log(x0), jnp.zeros_like(x0), jnp.zeros_like(x0))

    def iterate(state: AdaNormalHedgeState, params: AdaNormalHedgeParams) -> Array:
        awake = jnp.ones(state.regret.shape, bool)
        return normal_weights(state.log_prior, state.regret, state.variation, awake)

    def update(
        state: AdaNormalHedgeState, params: AdaNormalHedgeParams, grad: Array
    ) -> AdaNormalHedgeState:
        awake = jnp.ones(state.regret.shape, bool)
        weights = normal_weights(state.log_prior, state.regret, state.variation, awake)
        regret, variation = normal_step(state.regret, state.variation, weights, grad, awake)
        return AdaNormalHedgeState(state.log_prior, regret, variation)

    def check_start(params: AdaNormalHedgeParams, x0: Array) -> None:
        check_positive("x0 (the prior over experts)", x0)

    return OCOLearner(init, iterate, update, check_start=check_start)


__all__ = [
    "SCHEMES",
    "AdaNormalHedgeParams",
    "AdaNormalHedgeState",
    "FixedShareParams",
    "FixedShareState",
    "ada_normal_hedge",
    "fixed_share",
    "normal_log_weight",
    "normal_step",
    "normal_weights",
]
