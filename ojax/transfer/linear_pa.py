"""Linear Passive-Aggressive (PA-I) classifier, an :class:`~ojax.core.Predictor`.

    predict  sign(<w, x>)  (sign(0) = +1; ``predict`` returns the score <w, x>)
    l = max(0, 1 - y <w, x>),  tau = min(C, l / ||x||^2),  w <- w + tau y x

A zero input (``||x|| = 0``) leaves ``w`` unchanged.

References:
  Crammer, K., Dekel, O., Keshet, J., Shalev-Shwartz, S., Singer, Y. (2006). Online
  passive-aggressive algorithms.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from ojax.core import Array, LearnerEntry, Predictor, learner_factory, register_learner
from ojax.losses import hinge
from ojax.validation import check_int, check_positive


class LinearPAParams(NamedTuple):
    C: Array  # aggressiveness C > 0, shape ()


class LinearPAState(NamedTuple):
    weights: Array  # w, shape (d,)


@learner_factory
def linear_pa(dim: int, sparse: bool = False) -> Predictor:
    """Linear PA-I over ``dim`` features (static), on dense rows or on sparse rows.

    With ``sparse=True`` an input is one row ``(indices, values)`` of
    :class:`ojax.sparse.SparseRows` (padded with ``(0, 0.0)``): the score is a gather and the
    update a scatter-add, ``O(non-zeros)`` per step instead of ``O(dim)``, with the same results.

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax import losses, run
      >>> from ojax.transfer import LinearPAParams, linear_pa
      >>> xs = jnp.array([[1.0, 0.0], [0.0, 2.0], [2.0, 1.0]])
      >>> ys = jnp.array([1.0, -1.0, -1.0])
      >>> _, tr = run(linear_pa(2), LinearPAParams(jnp.array(0.5)), xs, ys, losses.hinge)
      >>> print([float(v) for v in tr.prediction])
      [0.0, 0.0, 0.5]
    """
    check_int("dim", dim, 1)

    def values_of(x, dtype) -> Array:
        return (x[1] if sparse else x).astype(dtype)

    def score(weights: Array, x) -> Array:
        if sparse:
            return jnp.dot(weights[x[0]], values_of(x, weights.dtype))
        return jnp.dot(weights, x)

    def init(params: LinearPAParams) -> LinearPAState:
        return LinearPAState(jnp.zeros((dim,), jnp.asarray(params.C).dtype))

    def predict(state: LinearPAState, params: LinearPAParams, x) -> Array:
        return score(state.weights, x)

    def update(state: LinearPAState, params: LinearPAParams, x, y: Array):
        values = values_of(x, state.weights.dtype)
        loss = hinge.value(score(state.weights, x), y)
        norm2 = jnp.dot(values, values)
        tau = jnp.where(
            norm2 > 0, jnp.minimum(params.C, loss / jnp.where(norm2 > 0, norm2, 1.0)), 0.0
        )
        if sparse:
            return LinearPAState(state.weights.at[x[0]].add((tau * y) * values))
        return LinearPAState(state.weights + (tau * y) * values)

    def check_params(params: LinearPAParams) -> None:
        check_positive("C", params.C)

    return Predictor(init, predict, update, check_params)


def classification_stream(key: Array, num_steps: int, dim: int) -> tuple[Array, Array]:
    """Gaussian inputs labelled by a random hyperplane, 10% of the labels flipped (+-1)."""
    k1, k2, k3 = jax.random.split(key, 3)
    w_star = jax.random.normal(k1, (dim,))
    xs = jax.random.normal(k2, (num_steps, dim))
    ys = jnp.where(xs @ w_star >= 0, 1.0, -1.0)
    flip = jax.random.bernoulli(k3, 0.1, (num_steps,))
    return xs, jnp.where(flip, -ys, ys)


def _register() -> None:
    def grid(*values: float) -> Array:
        return jnp.asarray(values, jnp.float32)

    register_learner(
        LearnerEntry(
            "linear_pa",
            "predictor",
            linear_pa,
            lambda: LinearPAParams(jnp.asarray(1.0)),
            lambda: LinearPAParams(grid(0.01, 0.2)),
            classification_stream,
            "hinge",
        )
    )


_register()

__all__ = ["LinearPAParams", "LinearPAState", "classification_stream", "linear_pa"]
