"""Linear contextual bandits with a ridge model per arm: LinUCB and linear Thompson sampling.

Both keep, per arm `a`, `A_a = I_d + sum x x^T` and `b_a = sum r x` over the rounds `a` was
played (rewards `r = 1 - l`, losses `l` in [0, 1]), and `theta_a = A_a^{-1} b_a`. `A_a^{-1}` is
kept up to date by the Sherman-Morrison formula. Both play one arm (`p = e_{a_t}`, ties to the
lowest index):

* LinUCB (disjoint): `a_t = argmax_a <theta_a, x> + alpha sqrt(x^T A_a^{-1} x)`. Li, L., Chu,
  W., Langford, J., Schapire, R. (2010), A contextual-bandit approach to personalized news
  article recommendation, WWW, Algorithm 1.
* Linear Thompson sampling: `mu~_a ~ N(theta_a, v^2 A_a^{-1})`, `a_t = argmax_a <mu~_a, x>`.
  Agrawal, S., Goyal, N. (2013), Thompson sampling for contextual bandits with linear payoffs,
  ICML, Algorithm 1, with the arms' contexts `b_a(t) = e_a (x) x_t` (one block per arm: `B`
  stays block diagonal, the blocks `A_a`, and the posterior draws of the arms are independent).
  Only the scores `<mu~_a, x> ~ N(<theta_a, x>, v^2 x^T A_a^{-1} x)`, independent over the
  arms, decide the play, so the learner draws them, not the vectors:
  `<theta_a, x> + v sqrt(x^T A_a^{-1} x) z_a` (the same law of the played arm, K normals and no
  factorization a round), `z` the K standard normals of
  `jax.random.fold_in(jax.random.PRNGKey(0), t)`: the learner's own stream (each order of the
  data gives other draws).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from ojax.core import Array, Predictor, learner_factory, scalars
from ojax.validation import InputError, check_positive


class LinUCBParams(NamedTuple):
    """The hyperparameters of LinUCB.

    Attributes:
      alpha: the width of the confidence bonus > 0, shape ()
    """

    alpha: Array  # > 0, shape ()

    @classmethod
    def default(cls, dtype: Any = None) -> LinUCBParams:
        """`alpha = 1`."""
        return cls(*scalars(1.0, dtype=dtype))


class LinearTSParams(NamedTuple):
    """The hyperparameters of linear Thompson sampling.

    Attributes:
      scale: v > 0, the posterior's standard deviation scale, shape ()
    """

    scale: Array  # v > 0, shape ()

    @classmethod
    def default(cls, dtype: Any = None) -> LinearTSParams:
        """`v = 0.5`."""
        return cls(*scalars(0.5, dtype=dtype))


class RidgeArmsState(NamedTuple):
    """The per-arm ridge statistics.

    Attributes:
      inverse: `A_a^{-1}`, shape (K, d, d)
      moment: `b_a = sum r x`, shape (K, d)
      theta: `theta_a = A_a^{-1} b_a`, shape (K, d) (kept, so that a round reads `A^{-1}` once)
      count: rounds played, int32 shape ()
    """

    inverse: Array  # A_a^{-1}, shape (K, d, d)
    moment: Array  # b_a, shape (K, d)
    theta: Array  # A_a^{-1} b_a, shape (K, d)
    count: Array  # type: ignore[assignment]  # int32 shape (), shadows tuple.count


def _check_sizes(dim: int, num_arms: int) -> None:
    for name, value in (("dim", dim), ("num_arms", num_arms)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise InputError(f"{name} must be an int >= 1, got {value!r}")


def _ridge(dim: int, num_arms: int, dtype: Any) -> tuple:
    """`init` and `update` of the per-arm ridge statistics."""
    _check_sizes(dim, num_arms)

    def init(params: Any) -> RidgeArmsState:
        eye = jnp.broadcast_to(jnp.eye(dim, dtype=dtype), (num_arms, dim, dim))
        zeros = jnp.zeros((num_arms, dim), dtype)
        return RidgeArmsState(eye, zeros, zeros, jnp.zeros((), jnp.int32))

    def update(state: RidgeArmsState, params: Any, x: Array, told: Any) -> RidgeArmsState:
        inv = state.inverse[told.arm]
        ax = inv @ x
        inv = inv - jnp.outer(ax, ax) / (1 + x @ ax)
        moment = state.moment[told.arm] + (1 - told.loss) * x
        return RidgeArmsState(
            state.inverse.at[told.arm].set(inv),
            state.moment.at[told.arm].set(moment),
            state.theta.at[told.arm].set(inv @ moment),
            state.count + 1,
        )

    return init, update


def _play(scores: Array) -> Array:
    """`e_a` of the highest score (ties to the lowest index)."""
    return jax.nn.one_hot(jnp.argmax(scores), scores.shape[-1], dtype=scores.dtype)


def _widths(state: RidgeArmsState, x: Array) -> Array:
    """`x^T A_a^{-1} x` for every arm, shape (K,)."""
    return jnp.maximum(jnp.einsum("kij,j->ki", state.inverse, x) @ x, 0.0)


@learner_factory
def linucb(dim: int, num_arms: int, dtype: Any = jnp.float32) -> Predictor:
    """LinUCB with disjoint linear models (contexts of dimension `dim`, `num_arms` arms); see
    the module doc."""

    init, update = _ridge(dim, num_arms, dtype)

    def predict(state: RidgeArmsState, params: LinUCBParams, x: Array) -> Array:
        return _play(state.theta @ x + params.alpha * jnp.sqrt(_widths(state, x)))

    def check_params(params: LinUCBParams) -> None:
        check_positive("alpha", params.alpha)

    return Predictor(init, predict, update, check_params)


def posterior_normals(count: Array, num_arms: int, dtype: Any) -> Array:
    """The standard normals `z` (K,) of linear Thompson sampling's draw at round `count`."""
    key = jax.random.fold_in(jax.random.PRNGKey(0), count)
    return jax.random.normal(key, (num_arms,), dtype)


@learner_factory
def linear_thompson(dim: int, num_arms: int, dtype: Any = jnp.float32) -> Predictor:
    """Linear Thompson sampling with one block per arm; see the module doc."""

    init, update = _ridge(dim, num_arms, dtype)

    def predict(state: RidgeArmsState, params: LinearTSParams, x: Array) -> Array:
        z = posterior_normals(state.count, num_arms, x.dtype)
        return _play(state.theta @ x + params.scale * jnp.sqrt(_widths(state, x)) * z)

    def check_params(params: LinearTSParams) -> None:
        check_positive("scale", params.scale)

    return Predictor(init, predict, update, check_params)


__all__ = [
    "LinUCBParams",
    "LinearTSParams",
    "RidgeArmsState",
    "linear_thompson",
    "linucb",
    "posterior_normals",
]
