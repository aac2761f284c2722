"""Prediction with expert advice over a finite class, binary labels in {0, 1}.

The input at each step is the vector of the m experts' predictions `x in {0, 1}^m`.

* Follow the best expert: predict as the expert with the fewest mistakes so far (ties to the
  lowest index). In the realizable case it makes at most `m - 1` mistakes.
* Halving (majority vote of the consistent experts): predict the majority label of the experts
  that have made no mistake (ties to 1); each mistake at least halves that set, so in the
  realizable case it makes at most `log2 m` mistakes.

References:
  Shalev-Shwartz, S. (2012). Online learning and online convex optimization, sec. 1.2.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax.numpy as jnp

from ojax.core import Array, Predictor, learner_factory


class ExpertsParams(NamedTuple):
    """No hyperparameters (a placeholder so every learner takes params)."""

    @classmethod
    def default(cls, dtype: Any = None) -> ExpertsParams:
        """No hyperparameters."""
        return cls()


class FollowBestExpertState(NamedTuple):
    """The state of FollowBestExpert: a pytree of arrays, carried from step to step.

    Attributes:
      mistakes: mistakes of each expert so far, shape (m,), int32
    """

    mistakes: Array  # mistakes of each expert so far, shape (m,), int32


class HalvingState(NamedTuple):
    """The state of Halving: a pytree of arrays, carried from step to step.

    Attributes:
      consistent: experts with no mistake so far, shape (m,), bool
    """

    consistent: Array  # experts with no mistake so far, shape (m,), bool


@learner_factory
def follow_best_expert(num_experts: int) -> Predictor:
    """Follow the best expert of a finite class of `num_experts` (static).

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax import losses, oco, run
      >>> advice = jnp.array([[0, 1, 1], [0, 1, 0], [1, 0, 0]])
      >>> _, tr = run(oco.follow_best_expert(3), oco.ExpertsParams(), advice,
      ...                 advice[:, 2], losses.mismatch)
      >>> print(tr.loss)
      [1. 1. 0.]
    """

    def init(params: ExpertsParams) -> FollowBestExpertState:
        return FollowBestExpertState(jnp.zeros(num_experts, jnp.int32))

    def predict(state: FollowBestExpertState, params: ExpertsParams, x: Array) -> Array:
        return x[jnp.argmin(state.mistakes)]

    def update(state, params, x, y) -> FollowBestExpertState:
        return FollowBestExpertState(state.mistakes + (x != y).astype(jnp.int32))

    return Predictor(init, predict, update)


@learner_factory
def halving(num_experts: int) -> Predictor:
    """The halving algorithm (majority vote of the consistent experts) over `num_experts`.

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax import losses, oco, run
      >>> advice = jnp.array([[0, 1, 1], [0, 1, 0], [1, 0, 0]])
      >>> _, tr = run(oco.halving(3), oco.ExpertsParams(), advice, advice[:, 2],
      ...                 losses.mismatch)
      >>> print(tr.loss)
      [0. 1. 0.]
    """

    def init(params: ExpertsParams) -> HalvingState:
        return HalvingState(jnp.ones(num_experts, bool))

    def predict(state: HalvingState, params: ExpertsParams, x: Array) -> Array:
        ones = jnp.sum(state.consistent & (x == 1))
        zeros = jnp.sum(state.consistent & (x == 0))
        return jnp.where(ones >= zeros, 1, 0).astype(x.dtype)

    def update(state: HalvingState, params: ExpertsParams, x: Array, y: Array) -> HalvingState:
        return HalvingState(state.consistent & (x == y))

    return Predictor(init, predict, update)


__all__ = [
    "ExpertsParams",
    "FollowBestExpertState",
    "HalvingState",
    "follow_best_expert",
    "halving",
]
