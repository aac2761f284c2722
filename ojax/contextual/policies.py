"""EXP4: exponential weights over a finite class of policies from bandit feedback.

The class holds `N` linear policies `pi_j(x) = argmax_a <P_{j,a}, x>` (`P` of shape
(N, K, d), static), whose advice is `xi_j(x) = e_{pi_j(x)}`. With `L~_j` the cumulative
estimated losses of the policies:

    q_t ∝ exp(-eta L~_{t-1}),   p_t = (1 - gamma) sum_j q_{t,j} xi_j(x_t) + gamma / K,
    l~_{t,a} = l_{t,I_t} 1[a = I_t] / p_{t,I_t},   L~_{t,j} = L~_{t-1,j} + <xi_j(x_t), l~_t>.

Auer, P., Cesa-Bianchi, N., Freund, Y., Schapire, R. (2002), The nonstochastic multiarmed
bandit problem, SIAM J. Comput. 32(1), Section 7, Fig. 5 (Exp4, written there for rewards
with `eta = gamma / K`). In the loss form with `gamma = 0` and losses in [0, 1], the expected
regret against the best policy is at most `ln N / eta + eta K T / 2`, i.e. `sqrt(2 T K ln N)`
at `eta = sqrt(2 ln N / (T K))`: Bubeck, S., Cesa-Bianchi, N. (2012), Regret analysis of
stochastic and nonstochastic multi-armed bandit problems, Theorem 4.2.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ojax.core import Array, Predictor, learner_factory, scalars
from ojax.validation import InputError, check_positive, check_range


class EXP4Params(NamedTuple):
    """The hyperparameters of EXP4.

    Attributes:
      learning_rate: eta > 0, shape ()
      exploration: gamma in [0, 1], shape ()
    """

    learning_rate: Array  # eta > 0, shape ()
    exploration: Array  # gamma in [0, 1], shape ()

    @classmethod
    def default(cls, dtype: Any = None) -> EXP4Params:
        """`learning_rate = 0.1`, `exploration = 0`."""
        return cls(*scalars(0.1, 0.0, dtype=dtype))


class EXP4State(NamedTuple):
    """The state of EXP4.

    Attributes:
      sum_estimates: `L~_t`, the policies' cumulative estimated losses, shape (N,)
    """

    sum_estimates: Array  # L~_t, shape (N,)


def advice(policies: Array, x: Array) -> Array:
    """`xi_j(x) = e_{argmax_a <P_{j,a}, x>}`: shape (N, K)."""
    scores = jnp.einsum("nkd,d->nk", policies.astype(x.dtype), x)
    return jax.nn.one_hot(jnp.argmax(scores, axis=1), policies.shape[1], dtype=x.dtype)


def random_policies(seed: int, num_policies: int, num_arms: int, dim: int) -> np.ndarray:
    """`N` linear policies with standard normal `P` (N, K, d) drawn from NumPy's `seed`."""
    return np.random.default_rng(seed).standard_normal((num_policies, num_arms, dim))


@learner_factory
def exp4(policies: Any, dtype: Any = jnp.float32) -> Predictor:
    """EXP4 over the linear policies `policies` (N, K, d); see the module doc."""
    table = np.asarray(policies)
    if table.ndim != 3 or min(table.shape) < 1 or not np.all(np.isfinite(table)):
        raise InputError(f"policies must be a finite (N, K, d) array, got shape {table.shape}")
    num = table.shape[0]

    def init(params: EXP4Params) -> EXP4State:
        return EXP4State(jnp.zeros(num, dtype))

    def predict(state: EXP4State, params: EXP4Params, x: Array) -> Array:
        q = jax.nn.softmax(-params.learning_rate * state.sum_estimates)
        k = table.shape[1]
        return (1 - params.exploration) * (q @ advice(jnp.asarray(table), x)) + (
            params.exploration / k
        )

    def update(state: EXP4State, params: EXP4Params, x: Array, told: Any) -> Any:
        xi = advice(jnp.asarray(table), x)
        estimate = xi[:, told.arm] * (told.loss / told.probability)
        return EXP4State(state.sum_estimates + estimate.astype(state.sum_estimates.dtype))

    def check_params(params: EXP4Params) -> None:
        check_positive("learning_rate", params.learning_rate)
        check_range("exploration", params.exploration, 0.0, 1.0)

    return Predictor(init, predict, update, check_params)


__all__ = ["EXP4Params", "EXP4State", "advice", "exp4", "random_policies"]
