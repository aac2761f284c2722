"""What theory knows: iterations that use the distribution's moments `Sigma = E[x x^T]` and
`E[x y]`, as comparators of least-squares SGD (:mod:`ojax.averaging.least_squares`).

* :func:`known_covariance_iterates`: SGD over the data with the covariance known, `w_t = w_{t-1}
  - eta (Sigma w_{t-1} - y_t x_t)`. A learner stepping over data, so it runs in
  :func:`ojax.run`: :func:`known_covariance_pass` is :func:`~ojax.averaging.sgd` fed that
  gradient, recording the iterates.
* :func:`expected_sgd_iterates`, :func:`expected_ridge_sgd`: the exact means `E[w_t]` and `E[v_t]`
  for i.i.d. examples. These are deterministic recursions over no data (`num_steps` applications
  of one map), not learner runs, so each is its own `lax.scan`; the map is
  :func:`~ojax.averaging.sgd`'s own update applied to the expected gradient (no second SGD).

References:
  Neu, G. and Rosasco, L. (2018). Iterate averaging as regularization for stochastic gradient
  descent. COLT. Dieuleveut, A., Flammarion, N. and Bach, F. (2017). Harder, better, faster,
  stronger convergence rates for least-squares regression. JMLR.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

from ojax import losses
from ojax.averaging.least_squares import SGDParams, check_data, point_after, sgd
from ojax.core import Array, Predictor, learner_factory
from ojax.oco.gradient_descent import OGDState
from ojax.runner import run
from ojax.validation import check_finite, check_positive, check_shape


class KnownCovarianceParams(NamedTuple):
    """The params of :func:`known_covariance_pass`: SGD's step, the covariance and the start.

    Attributes:
      learning_rate: eta > 0, shape ()
      covariance: Sigma, shape (d, d)
      x0: w_0, shape (d,)
    """

    learning_rate: Array  # eta > 0, shape ()
    covariance: Array  # Sigma, shape (d, d)
    x0: Array  # w_0, shape (d,)


@learner_factory
def known_covariance_pass() -> Predictor:
    """:func:`~ojax.averaging.sgd` fed `Sigma w - y x` (the gradient of `0.5 w^T Sigma w -
    y <w, x>`: the square loss with its `x x^T` replaced by the known covariance), predicting
    `<w, x>`; params :class:`KnownCovarianceParams`. What :func:`known_covariance_iterates`
    runs in :func:`ojax.run`."""
    learner = sgd()

    def init(params: KnownCovarianceParams) -> OGDState:
        return learner.init(SGDParams(params.learning_rate), params.x0)

    def predict(state: OGDState, params: KnownCovarianceParams, x: Array) -> Array:
        return jnp.vdot(state.point, x)

    def update(state: OGDState, params: KnownCovarianceParams, x: Array, y: Array) -> OGDState:
        grad = params.covariance @ state.point - y * x
        return learner.update(state, SGDParams(params.learning_rate), grad)

    def check_params(params: KnownCovarianceParams) -> None:
        learner.check_params(SGDParams(params.learning_rate))

    return Predictor(init, predict, update, check_params)


@jax.jit
def _known_covariance(xs, ys, cov, eta, w0):
    params = KnownCovarianceParams(eta, cov, w0)
    _, trace = run(
        known_covariance_pass(), params, xs, ys, losses.square, record=point_after,
        keep_predictions=False,
    )  # fmt: skip
    return jnp.concatenate([w0[None, :], trace.record], axis=0)


def known_covariance_iterates(
    xs: ArrayLike,
    ys: ArrayLike,
    covariance: ArrayLike,
    learning_rate: ArrayLike,
    initial_point: ArrayLike | None = None,
) -> Array:
    """SGD with the covariance known (additive noise): `w_t = w_{t-1} - eta (Sigma w_{t-1} -
    y_t x_t)`, the iterates `w_0..w_n` `(n+1, d)`.

    The iteration Neu & Rosasco (2018, Appendix C) analyse for geometric averaging, the
    unregularized counterpart of Dieuleveut et al.'s (2017) Eq. (4): only of theoretical
    interest, since `Sigma` is not known in practice. Checks its input when concrete.

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax import averaging
      >>> w = averaging.known_covariance_iterates(jnp.ones((2, 1)), jnp.ones(2), jnp.eye(1), 0.5)
      >>> print(w.ravel())
      [0.   0.5  0.75]
    """
    xs, ys, w0 = check_data(xs, ys, initial_point)
    d = xs.shape[1]
    check_shape("covariance", covariance, (d, d))
    check_finite("covariance", covariance)
    check_positive("learning_rate", learning_rate)
    return _known_covariance(
        xs, ys, jnp.asarray(covariance, xs.dtype), jnp.asarray(learning_rate, xs.dtype), w0
    )


def _descent(
    cov: Array,
    cross: Array,
    learning_rate: Array,
    initial_point: Array,
    shift: Callable[[Array], Array] | None = None,
) -> tuple[OGDState, Callable[[OGDState], OGDState]]:
    """The start and the step `m -> m - eta (Sigma m - E[x y] + shift(m))` of a mean, made by
    :func:`~ojax.averaging.sgd`'s own update fed that gradient (no second SGD)."""
    learner, params = sgd(), SGDParams(learning_rate)

    def step(state: OGDState) -> OGDState:
        grad = cov @ state.point - cross
        return learner.update(state, params, grad if shift is None else grad + shift(state.point))

    return learner.init(params, initial_point), step


@functools.partial(jax.jit, static_argnames=("num_steps",))
def expected_sgd_iterates(
    cov: Array, cross: Array, learning_rate: Array, initial_point: Array, num_steps: int
) -> Array:
    """`E[w_0..w_n]` `(n+1, d)`: `E w_t = E w_{t-1} - eta (Sigma E w_{t-1} - E[x y])`.

    Exact for i.i.d. examples (`w_{t-1}` is independent of `x_t`): SGD's update applied to
    the expected gradient, a deterministic recursion (no data), hence its own scan.
    """
    start, step = _descent(cov, cross, learning_rate, initial_point)

    def body(state: OGDState, _: Any) -> tuple[OGDState, Array]:
        new = step(state)
        return new, new.point

    _, ms = jax.lax.scan(body, start, None, length=num_steps)
    return jnp.concatenate([initial_point[None, :], ms], axis=0)


@functools.partial(jax.jit, static_argnames=("num_steps",))
def expected_ridge_sgd(
    cov: Array,
    cross: Array,
    learning_rate: Array,
    regularization: Array,
    initial_point: Array,
    num_steps: int,
) -> Array:
    """`E[v_n]` of regularized SGD (`(d,)`; vmap over `(gamma, lambda)` for a path):
    `E v_t = E v_{t-1} - gamma (Sigma E v_{t-1} - E[x y] + lambda (E v_{t-1} - w_0))`, SGD's
    update on the gradient of the regularized risk (the map :func:`~ojax.averaging.ridge_sgd`
    steps, in expectation)."""

    def shift(m: Array) -> Array:
        return regularization * (m - initial_point)

    start, step = _descent(cov, cross, learning_rate, initial_point, shift)
    state, _ = jax.lax.scan(lambda s, _: (step(s), None), start, None, length=num_steps)
    return state.point


__all__ = [
    "KnownCovarianceParams",
    "expected_ridge_sgd",
    "expected_sgd_iterates",
    "known_covariance_iterates",
    "known_covariance_pass",
]
