"""EXP3 and EXP3-IX: exponential weights over K arms from bandit feedback.

Both are OCO learners whose iterate `p_t` is a distribution over the arms; under
`ojax.run_env(..., feedback="bandit")` the runner draws the arm `I_t ~ p_t` and tells the
learner only the played arm's loss, as the vector `g_t = l_{t,I_t} e_{I_t}`. The learner turns
it into an importance-weighted estimate of the whole loss vector and runs exponential weights on
the estimates (with `L^_t` the cumulative estimates, `x0` the prior, uniform by default):

* EXP3 (loss form): `l^_{t,i} = g_{t,i} / p_{t,i}` (unbiased), `q_t ∝ x0 exp(-eta L^_{t-1})`,
  `p_t = (1 - gamma) q_t + gamma / K`. Auer, Cesa-Bianchi, Freund, Schapire (2002), The
  nonstochastic multiarmed bandit problem, SIAM J. Comput. 32(1), Fig. 1 (Exp3; written there for
  rewards with `eta = gamma / K`). With `gamma = 0` and losses in `[0, 1]` the expected
  (pseudo-)regret is at most `ln K / eta + eta K T / 2`, `sqrt(2 T K ln K)` at
  `eta = sqrt(2 ln K / (T K))`: Bubeck, Cesa-Bianchi (2012), Regret analysis of stochastic and
  nonstochastic multi-armed bandit problems, Theorem 3.1.
* EXP3-IX: `l^_{t,i} = g_{t,i} / (p_{t,i} + gamma)` (implicit exploration: biased low, never
  above `1 / gamma`), `p_t ∝ x0 exp(-eta L^_{t-1})`. Neu (2015), Explore no more: improved
  high-probability regret bounds for non-stochastic bandits, NIPS, Algorithm 1; Theorem 1: at
  `eta = 2 gamma = sqrt(2 ln K / (K T))`, with probability at least `1 - delta` the regret
  against the best arm is at most `2 sqrt(2 K T ln K) + (sqrt(2 K T / ln K) + 1) ln(2 / delta)`.

Played with full information (`g_t` the whole loss vector) the same update is a valid OCO
learner on the simplex (what the common checks run), its estimates those of a bandit learner
that saw every arm; EXP3 then needs `gamma > 0` (its default) to keep `1 / p_t` bounded.
Use `hedge` for full information.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from ojax.core import Array, OCOLearner, learner_factory, scalars
from ojax.validation import check_positive, check_range


class EXP3Params(NamedTuple):
    """The hyperparameters of EXP3: a pytree of arrays passed at call time.

    Attributes:
      learning_rate: eta > 0, shape ()
      exploration: gamma in [0, 1], shape (): the uniform mixing
    """

    learning_rate: Array  # eta > 0, shape ()
    exploration: Array  # gamma in [0, 1], shape (): the uniform mixing

    @classmethod
    def default(cls, dtype: Any = None) -> EXP3Params:
        """`learning_rate = 0.1`, `exploration = 0.1` (`p_t >= gamma / K`: every
        estimate at most `K / gamma`)."""
        return cls(*scalars(0.1, 0.1, dtype=dtype))


class EXP3IXParams(NamedTuple):
    """The hyperparameters of EXP3IX: a pytree of arrays passed at call time.

    Attributes:
      learning_rate: eta > 0, shape ()
      implicit_exploration: gamma >= 0, shape (): added to p in the estimate
    """

    learning_rate: Array  # eta > 0, shape ()
    implicit_exploration: Array  # gamma >= 0, shape (): added to p in the estimate

    @classmethod
    def default(cls, dtype: Any = None) -> EXP3IXParams:
        """`learning_rate = 0.1`, `implicit_exploration = 0.05` (`eta = 2 gamma`)."""
        return cls(*scalars(0.1, 0.05, dtype=dtype))


class BanditState(NamedTuple):
    """The state of Bandit: a pytree of arrays, carried from step to step.

    Attributes:
      log_prior: log x0, shape (K,)
      sum_estimates: cumulative loss estimates L^_t, shape (K,)
    """

    log_prior: Array  # log x0, shape (K,)
    sum_estimates: Array  # cumulative loss estimates L^_t, shape (K,)


def _weights(state: BanditState, eta: Array) -> Array:
    return jax.nn.softmax(state.log_prior - eta * state.sum_estimates)


def _estimate(feedback: Array, p: Array) -> Array:
    """`g / p` on the played arm, 0 on the others (also where an arm's `p` underflowed to
    0: never `0 / 0`)."""
    seen = feedback != 0
    return jnp.where(seen, feedback / jnp.where(seen, p, 1.0), 0.0).astype(feedback.dtype)


def _init(params: Any, x0: Array) -> BanditState:
    return BanditState(jnp.log(x0), jnp.zeros_like(x0))


def _check_prior(params: Any, x0: Array) -> None:
    check_positive("x0 (the prior over arms)", x0)


@learner_factory
def exp3() -> OCOLearner:
    """EXP3 over K arms (`x0` the prior, its length K); see the module doc.

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax import oco
      >>> learner, params = oco.exp3(), oco.EXP3Params(jnp.float32(1.0), jnp.float32(0.0))
      >>> state = learner.init(params, jnp.full(2, 0.5))
      >>> state = learner.update(state, params, jnp.array([0.0, 1.0]))  # arm 1 paid 1
      >>> p = learner.iterate(state, params)  # arm 1's estimate: 1 / 0.5 = 2
      >>> print([round(float(v), 4) for v in p])
      [0.8808, 0.1192]
    """

    def iterate(state: BanditState, params: EXP3Params) -> Array:
        q = _weights(state, params.learning_rate)
        gamma = params.exploration
        return (1 - gamma) * q + gamma / q.shape[-1]

    def update(state: BanditState, params: EXP3Params, feedback: Array) -> BanditState:
        p = iterate(state, params)
        return BanditState(state.log_prior, state.sum_estimates + _estimate(feedback, p))

    def check_params(params: EXP3Params) -> None:
        check_positive("learning_rate", params.learning_rate)
        check_range("exploration", params.exploration, 0.0, 1.0)

    return OCOLearner(_init, iterate, update, check_params, _check_prior)


@learner_factory
def exp3_ix() -> OCOLearner:
    """EXP3-IX over K arms (`x0` the prior, its length K); see the module doc."""

    def iterate(state: BanditState, params: EXP3IXParams) -> Array:
        return _weights(state, params.learning_rate)

    def update(state: BanditState, params: EXP3IXParams, feedback: Array) -> BanditState:
        p = iterate(state, params)
        estimate = _estimate(feedback, p + params.implicit_exploration)
        return BanditState(state.log_prior, state.sum_estimates + estimate)

    def check_params(params: EXP3IXParams) -> None:
        check_positive("learning_rate", params.learning_rate)
        check_range("implicit_exploration", params.implicit_exploration, 0.0)

    return OCOLearner(_init, iterate, update, check_params, _check_prior)


__all__ = ["BanditState", "EXP3IXParams", "EXP3Params", "exp3", "exp3_ix"]
