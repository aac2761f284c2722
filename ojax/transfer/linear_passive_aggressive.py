"""Linear Passive-Aggressive (PA-I) classifier, an :class:`~ojax.core.Predictor`.

    predict  sign(<w, x>)  (sign(0) = +1; `predict` returns the score <w, x>)
    l = max(0, 1 - y <w, x>),  tau = min(C, l / ||x||^2),  w <- w + tau y x

A zero input (`||x|| = 0`) leaves `w` unchanged.

References:
  Crammer, K., Dekel, O., Keshet, J., Shalev-Shwartz, S., Singer, Y. (2006). Online
  passive-aggressive algorithms.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax.numpy as jnp

from ojax.core import Array, Predictor, learner_factory, scalars
from ojax.losses import hinge
from ojax.validation import check_int, check_positive


class LinearPAParams(NamedTuple):
    """The hyperparameters of LinearPA: a pytree of arrays passed at call time.

    Attributes:
      C: aggressiveness C > 0, shape ()
    """

    C: Array  # aggressiveness C > 0, shape ()

    @classmethod
    def default(cls, dtype: Any = None) -> LinearPAParams:
        """`C = 1`."""
        return cls(*scalars(1.0, dtype=dtype))


class LinearPAState(NamedTuple):
    """The state of LinearPA: a pytree of arrays, carried from step to step.

    Attributes:
      weights: w, shape (d,)
    """

    weights: Array  # w, shape (d,)


@learner_factory
def linear_pa(dim: int, sparse: bool = False) -> Predictor:
    """Linear PA-I over `dim` features (static), on dense rows or on sparse rows.

    With `sparse=True` an input is one row `(indices, values)` of
    :class:`ojax.sparse.SparseRows` (padded with `(0, 0.0)`): the score is a gather and the
    update a scatter-add, `O(non-zeros)` per step instead of `O(dim)`, with the same results.

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


__all__ = ["LinearPAParams", "LinearPAState", "linear_pa"]
