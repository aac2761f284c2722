"""Contextual bandits over an online regression oracle: greedy, epsilon-greedy, SquareCB.

The oracle predicts the loss of every arm with a linear model per arm, `y^_a(x) = <W_a, x>`,
whose weights `W` (K x d, flattened) are the iterate of any ojax OCO learner (`ogd`,
`adagrad`, a parameter-free one such as `cocob`): after arm `a` was played on `x` with loss
`l`, the oracle takes the gradient of the square loss `(1/2) (<W_a, x> - l)^2`, i.e.
`(<W_a, x> - l) x` in row `a` and 0 elsewhere. With `b = argmin_a y^_a(x)` (ties to the lowest
index) the learners play:

* greedy: `p = e_b`;
* epsilon-greedy: `p = (1 - eps) e_b + eps / K` (Langford, Zhang (2007), The epoch-greedy
  algorithm for contextual multi-armed bandits; as run in Bietti, Agarwal, Langford (2021),
  A contextual bandit bake-off, JMLR 22, Algorithm 2);
* SquareCB (inverse gap weighting): `p_a = 1 / (mu + gamma_t (y^_a - y^_b))` for `a != b`,
  `p_b = 1 - sum_{a != b} p_a`, with `mu = K`. Foster, D., Rakhlin, A. (2020), Beyond UCB:
  optimal and efficient contextual bandits with regression oracles, ICML, Algorithm 1; its
  Theorem 1 bounds the regret by `O(sqrt(K T Reg_Sq(T)))` at the constant
  `gamma_t = gamma = sqrt(K T / Reg_Sq(T))`, `Reg_Sq` the oracle's square-loss regret. With
  `power` set, `gamma_t = gamma t^power` at round `t = 1, 2, ...` (an anytime schedule; `power
  = 1/2` follows `sqrt(K t / Reg_Sq(t))` for an oracle of bounded regret, and is Vowpal
  Wabbit's `--squarecb` default form, `gamma_scale t^gamma_exponent`).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from ojax.core import Array, OCOLearner, Predictor, learner_factory, scalars
from ojax.validation import InputError, check_positive, check_range


class OracleState(NamedTuple):
    """The state of a learner over a regression oracle.

    Attributes:
      oracle: the OCO learner's state over the flattened weights `W`, shape (K d,)
      count: the rounds played so far, int32, shape ()
    """

    oracle: Any  # the OCO learner's state over W (K d,)
    count: Array  # type: ignore[assignment]  # int32 shape (), shadows tuple.count


class GreedyParams(NamedTuple):
    """The hyperparameters of greedy.

    Attributes:
      oracle: the OCO learner's params
    """

    oracle: Any  # the OCO learner's params

    @classmethod
    def default(cls, oracle: Any) -> GreedyParams:
        """The oracle's params."""
        return cls(oracle)


class EpsilonGreedyParams(NamedTuple):
    """The hyperparameters of epsilon-greedy.

    Attributes:
      epsilon: the uniform exploration in [0, 1], shape ()
      oracle: the OCO learner's params
    """

    epsilon: Array  # in [0, 1], shape ()
    oracle: Any  # the OCO learner's params

    @classmethod
    def default(cls, oracle: Any, dtype: Any = None) -> EpsilonGreedyParams:
        """`epsilon = 0.05`."""
        return cls(scalars(0.05, dtype=dtype)[0], oracle)


class SquareCBParams(NamedTuple):
    """The hyperparameters of SquareCB.

    Attributes:
      gamma: the learning rate of inverse gap weighting > 0, shape ()
      oracle: the OCO learner's params
      power: `None` (the constant `gamma`), or the exponent `>= 0` of the schedule
        `gamma_t = gamma t^power`, shape ()
    """

    gamma: Array  # > 0, shape ()
    oracle: Any  # the OCO learner's params
    power: Array | None = None  # >= 0, shape (); None: gamma_t = gamma

    @classmethod
    def default(cls, oracle: Any, dtype: Any = None) -> SquareCBParams:
        """`gamma = 10`, constant."""
        return cls(scalars(10.0, dtype=dtype)[0], oracle)


def predicted_losses(oracle: OCOLearner, state: OracleState, params: Any, x: Array) -> Array:
    """`y^_a(x) = <W_a, x>` for every arm, shape (K,)."""
    w = oracle.iterate(state.oracle, params.oracle)
    return w.reshape(-1, x.shape[-1]) @ x


def inverse_gap_weights(y_hat: Array, gamma: Array) -> Array:
    """SquareCB's distribution (`mu = K`) from the predicted losses `y_hat` (K,)."""
    k = y_hat.shape[-1]
    best = jnp.argmin(y_hat)
    others = 1.0 / (k + gamma * (y_hat - y_hat[best]))
    others = jnp.where(jnp.arange(k) == best, 0.0, others)
    return others.at[best].set(1.0 - jnp.sum(others)).astype(y_hat.dtype)


def _factory(dim: int, num_arms: int, oracle: OCOLearner, dtype: Any, play, check) -> Predictor:
    for name, value in (("dim", dim), ("num_arms", num_arms)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise InputError(f"{name} must be an int >= 1, got {value!r}")
    if not isinstance(oracle, OCOLearner):
        raise InputError(f"oracle must be an ojax OCOLearner, got {type(oracle).__name__}")

    def init(params: Any) -> OracleState:
        w0 = jnp.zeros(num_arms * dim, dtype)
        return OracleState(oracle.init(params.oracle, w0), jnp.zeros((), jnp.int32))

    def predict(state: OracleState, params: Any, x: Array) -> Array:
        return play(predicted_losses(oracle, state, params, x), params, state.count + 1)

    def update(state: OracleState, params: Any, x: Array, told: Any) -> OracleState:
        y_hat = predicted_losses(oracle, state, params, x)
        residual = y_hat[told.arm] - told.loss
        grad = jax.nn.one_hot(told.arm, num_arms, dtype=x.dtype)[:, None] * (residual * x)[None, :]
        return OracleState(
            oracle.update(state.oracle, params.oracle, grad.reshape(-1)), state.count + 1
        )

    def check_params(params: Any) -> None:
        check(params)
        oracle.check_params(params.oracle)

    return Predictor(init, predict, update, check_params)


@learner_factory
def greedy(dim: int, num_arms: int, oracle: OCOLearner, dtype: Any = jnp.float32) -> Predictor:
    """Greedy over the regression oracle `oracle` (contexts of dimension `dim`, `num_arms`
    arms); see the module doc."""

    def play(y_hat: Array, params: GreedyParams, t: Array) -> Array:
        return jax.nn.one_hot(jnp.argmin(y_hat), y_hat.shape[-1], dtype=y_hat.dtype)

    return _factory(dim, num_arms, oracle, dtype, play, lambda params: None)


@learner_factory
def epsilon_greedy(
    dim: int, num_arms: int, oracle: OCOLearner, dtype: Any = jnp.float32
) -> Predictor:
    """Epsilon-greedy over the regression oracle `oracle`; see the module doc."""

    def play(y_hat: Array, params: EpsilonGreedyParams, t: Array) -> Array:
        k = y_hat.shape[-1]
        best = jax.nn.one_hot(jnp.argmin(y_hat), k, dtype=y_hat.dtype)
        return (1 - params.epsilon) * best + params.epsilon / k

    def check(params: EpsilonGreedyParams) -> None:
        check_range("epsilon", params.epsilon, 0.0, 1.0)

    return _factory(dim, num_arms, oracle, dtype, play, check)


@learner_factory
def squarecb(dim: int, num_arms: int, oracle: OCOLearner, dtype: Any = jnp.float32) -> Predictor:
    """SquareCB over the regression oracle `oracle`; see the module doc.

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax.contextual import inverse_gap_weights
      >>> p = inverse_gap_weights(jnp.array([0.2, 0.5, 0.9]), jnp.float32(10.0))
      >>> print([round(float(v), 4) for v in p])
      [0.7333, 0.1667, 0.1]
    """

    def play(y_hat: Array, params: SquareCBParams, t: Array) -> Array:
        gamma = params.gamma
        if params.power is not None:  # gamma t^power, t = 1, 2, ...
            gamma = gamma * t.astype(gamma.dtype) ** params.power
        return inverse_gap_weights(y_hat, gamma)

    def check(params: SquareCBParams) -> None:
        check_positive("gamma", params.gamma)
        if params.power is not None:
            check_range("power", params.power, 0.0)

    return _factory(dim, num_arms, oracle, dtype, play, check)


__all__ = [
    "EpsilonGreedyParams",
    "GreedyParams",
    "OracleState",
    "SquareCBParams",
    "epsilon_greedy",
    "greedy",
    "inverse_gap_weights",
    "predicted_losses",
    "squarecb",
]
