"""Constant-step SGD for least squares, regularized SGD and closed-form ridge (comparators).

SGD from `w_0` on examples `(x_t, y_t)`, `t = 1..n`, and regularized SGD shrinking
towards `w_0`:

    w_t = w_{t-1} - eta (<w_{t-1}, x_t> - y_t) x_t
    v_t = v_{t-1} - gamma (<v_{t-1}, x_t> - y_t) x_t - gamma lambda (v_{t-1} - w_0)

With `rho = 1 - gamma lambda` and `eta = gamma / (1 - gamma lambda)` (equivalently
`gamma = eta / (1 + eta lambda)`, :func:`~ojax.averaging.linked_step_size`), for every `n`:

    E[v_n] = (1 - rho^{n+1}) E[w_tilde_n] + rho^{n+1} E[w_n]

and both tend to ridge regression `(Sigma + lambda I)^{-1} (E[x y] + lambda w_0)`.

The learners (:func:`sgd`, :func:`ridge_sgd`) are :class:`~ojax.core.OCOLearner` s; with
:func:`ojax.adapters.linear_predictor` and the square loss `0.5 (<w, x> - y)^2` they are the
least-squares predictors :func:`least_squares_sgd` / :func:`least_squares_ridge_sgd`. The fast
paths of whole passes are :func:`sgd_iterates` (stored `w_0..w_n`, opt-in memory `(n+1) d`),
:func:`sgd_final` and :func:`ridge_sgd_runs` (many `(gamma, lambda)` in one scan).

References:
  Neu, G. and Rosasco, L. (2018). Iterate averaging as regularization for stochastic gradient
  descent. COLT.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from ojax import losses
from ojax.adapters import linear_predictor
from ojax.averaging.averagers import (
    Averager,
    averaged,
)
from ojax.averaging.weights import check_regularization
from ojax.core import Array, OCOLearner, Predictor, Step, learner_factory, scalars
from ojax.oco.gradient_descent import OGDParams, OGDState, ogd
from ojax.runner import OCOParams, run
from ojax.validation import InputError, check_finite, check_positive, check_range, check_shape


class SGDParams(NamedTuple):
    """The hyperparameters of SGD: a pytree of arrays passed at call time.

    Attributes:
      learning_rate: eta > 0, shape ()
    """

    learning_rate: Array  # eta > 0, shape ()

    @classmethod
    def default(cls, dtype: Any = None) -> SGDParams:
        """`learning_rate = 0.05`."""
        return cls(*scalars(0.05, dtype=dtype))


SGDState = OGDState
"""The state of :func:`sgd`: ``oco.ogd("none")``'s (``point`` ``w_t``, ``count``)."""


class RidgeSGDParams(NamedTuple):
    """The hyperparameters of RidgeSGD: a pytree of arrays passed at call time.

    Attributes:
      learning_rate: gamma > 0, shape ()
      regularization: lambda >= 0 with gamma lambda < 1, shape ()
    """

    learning_rate: Array  # gamma > 0, shape ()
    regularization: Array  # lambda >= 0 with gamma lambda < 1, shape ()

    @classmethod
    def default(cls, dtype: Any = None) -> RidgeSGDParams:
        """`learning_rate = 0.05`, `regularization = 0.1`."""
        return cls(*scalars(0.05, 0.1, dtype=dtype))


class RidgeSGDState(NamedTuple):
    """The state of RidgeSGD: a pytree of arrays, carried from step to step.

    Attributes:
      point: v_t, shape (d,)
      anchor: w_0, the point shrunk towards, shape (d,)
      count: shadows tuple.count
    """

    point: Array  # v_t, shape (d,)
    anchor: Array  # w_0, the point shrunk towards, shape (d,)
    # number of updates t, shape (), int32
    count: Array  # type: ignore[assignment]  # shadows tuple.count


@learner_factory
def sgd() -> OCOLearner:
    """Unconstrained gradient descent with a constant step: `w_t = w_{t-1} - eta g_t`.

    It is :func:`ojax.oco.ogd` on `"none"` (nothing projected: one implementation of the
    step), with params :class:`SGDParams` (no radius). On the square loss of a linear predictor
    this is least-squares SGD (see :func:`least_squares_sgd`).

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax import averaging, losses, run_oco
      >>> p = averaging.SGDParams(jnp.float32(0.5))
      >>> _, tr = run_oco(averaging.sgd(), p, jnp.zeros(1), jnp.ones((2, 1)),
      ...                 losses.quadratic_objective)
      >>> print(tr.loss)
      [0.5   0.125]
    """
    descent = ogd("none")

    def ogd_params(params: SGDParams, dtype: Any = None) -> OGDParams:
        eta = jnp.asarray(params.learning_rate)
        eta = eta if dtype is None else eta.astype(dtype)
        return OGDParams(eta, jnp.ones_like(eta))  # the radius of "none" is never read

    def init(params: SGDParams, x0: Array) -> OGDState:
        return descent.init(ogd_params(params), x0)

    def iterate(state: OGDState, params: SGDParams) -> Array:
        return state.point

    def update(state: OGDState, params: SGDParams, grad: Array) -> OGDState:
        return descent.update(state, ogd_params(params, grad.dtype), grad)

    def check_params(params: SGDParams) -> None:
        check_positive("learning_rate", params.learning_rate)

    return OCOLearner(init, iterate, update, check_params)


@learner_factory
def ridge_sgd() -> OCOLearner:
    """Regularized gradient descent shrinking towards the start `w_0`.

        v_t = v_{t-1} - gamma g_t - gamma lambda (v_{t-1} - w_0)

    Params: :class:`RidgeSGDParams` (`lambda` in `[0, 1/gamma)`).

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax import averaging, losses, run_oco
      >>> p = averaging.RidgeSGDParams(jnp.float32(0.5), jnp.float32(1.0))
      >>> st, _ = run_oco(averaging.ridge_sgd(), p, jnp.zeros(1), jnp.ones((1, 1)),
      ...                 losses.quadratic_objective)
      >>> print(st.point)
      [0.5]
    """

    def init(params: RidgeSGDParams, x0: Array) -> RidgeSGDState:
        return RidgeSGDState(x0, x0, jnp.zeros((), jnp.int32))

    def iterate(state: RidgeSGDState, params: RidgeSGDParams) -> Array:
        return state.point

    def update(state: RidgeSGDState, params: RidgeSGDParams, grad: Array) -> RidgeSGDState:
        gamma = jnp.asarray(params.learning_rate).astype(grad.dtype)
        lam = jnp.asarray(params.regularization).astype(grad.dtype)
        point = state.point - gamma * grad - gamma * lam * (state.point - state.anchor)
        return RidgeSGDState(point, state.anchor, state.count + 1)

    def check_params(params: RidgeSGDParams) -> None:
        check_positive("learning_rate", params.learning_rate)
        check_ridge(params.learning_rate, params.regularization)

    return OCOLearner(init, iterate, update, check_params)


def check_ridge(learning_rate: ArrayLike, regularization: ArrayLike) -> None:
    """Raises unless `0 <= lambda < 1/gamma` (the shrinkage factor `1 - gamma lambda > 0`)."""
    check_regularization(learning_rate, regularization, "paper")


def least_squares_sgd(initial_point: ArrayLike, averager: Averager | None = None) -> Predictor:
    """Least-squares SGD as a predictor `y_hat = <w_{t-1}, x_t>` (params :class:`SGDParams`).

    With `averager` the state also carries that average of `w_0, w_1, ...` and the params
    are :class:`~ojax.averaging.AveragedParams` `(SGDParams, averager params)`; read it with
    `ojax.averaging.average_of(state.learner)`. The iterates themselves are recorded with
    `ojax.run(..., record=ojax.linear_weights(learner))` (`w_0..w_{n-1}`; `w_n` is in the
    final state), or faster with :func:`sgd_iterates`.
    """
    learner = sgd() if averager is None else averaged(sgd(), averager)
    return linear_predictor(learner, losses.square, jnp.asarray(initial_point))


def least_squares_ridge_sgd(initial_point: ArrayLike) -> Predictor:
    """Regularized least-squares SGD shrinking towards `initial_point`.

    Params: :class:`RidgeSGDParams`.
    """
    return linear_predictor(ridge_sgd(), losses.square, jnp.asarray(initial_point))


# ---------------------------------------------------------------------------------------------
# whole passes (one jitted scan each)
# ---------------------------------------------------------------------------------------------


def sgd_step(w: Array, x: Array, y: Array, eta: Array) -> Array:
    """One least-squares SGD step `w - eta (<w, x> - y) x`."""
    return w - (eta * (jnp.dot(w, x) - y)) * x


@learner_factory
def least_squares_pass() -> Predictor:
    """Least-squares SGD (:func:`sgd` on the square loss of `y_hat = <w, x>`) as a predictor
    whose start is a param: params :class:`~ojax.runner.OCOParams` `(SGDParams, w_0)`, so a
    pass from a traced `w_0` (a block of a streamed path) runs in :func:`ojax.run`."""
    learner = sgd()

    def init(params: OCOParams) -> OGDState:
        return learner.init(params.params, params.x0)

    def predict(state: OGDState, params: OCOParams, x: Array) -> Array:
        return jnp.vdot(state.point, x)

    def update(state: OGDState, params: OCOParams, x: Array, y: Array) -> OGDState:
        grad = losses.square.grad(predict(state, params, x), y) * x
        return learner.update(state, params.params, grad)

    def check_params(params: OCOParams) -> None:
        learner.check_params(params.params)

    return Predictor(init, predict, update, check_params)


def _point_after(step: Step) -> Array:
    return step.new_state.point


def sgd_scan(
    xs: Array,
    ys: Array,
    learning_rate: Array,
    initial_point: Array,
    *,
    store: bool = False,
    num_valid: Array | None = None,
) -> tuple[Array, Array | None]:
    """One least-squares SGD pass, :func:`ojax.run` of :func:`least_squares_pass`: every SGD
    pass of this package runs it.

    A traceable building block without input checks (the checked entry points are
    :func:`sgd_iterates` and :func:`sgd_final`; the streamed path calls it once per block).

    Args:
      xs: `(n, d)`; ys: `(n,)`; learning_rate: `eta`; initial_point: `w_0` `(d,)`.
      store: static; also return the iterate after each step, `w_1..w_n`.
      num_valid: None, or the number of real examples (may be traced): the steps past it leave
        `w` unchanged (padded rows, the runner's mask).

    Returns:
      `(w_n, w_1..w_n (n, d) or None)`.

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax import averaging
      >>> last, after = averaging.sgd_scan(jnp.ones((3, 1)), jnp.ones(3), 0.5, jnp.zeros(1),
      ...                                  store=True, num_valid=2)
      >>> print(after.ravel(), last)  # the third step is padding: w stays at w_2
      [0.5  0.75 0.75] [0.75]
    """
    eta = jnp.asarray(learning_rate, xs.dtype)
    mask = None if num_valid is None else jnp.arange(xs.shape[0], dtype=jnp.int32) < num_valid
    params = OCOParams(SGDParams(eta), initial_point)
    state, trace = run(
        least_squares_pass(),
        params,
        xs,
        ys,
        losses.square,
        mask=mask,
        record=_point_after if store else None,
        keep_predictions=False,
    )
    return state.point, trace.record


@functools.partial(jax.jit, static_argnames=("store",))
def sgd_pass(xs: Array, ys: Array, eta: Array, w0: Array, store: bool) -> Array:
    """One unchecked, jitted SGD pass: the iterates `w_0..w_n` `(n+1, d)` when `store`,
    else `w_n`."""
    last, after = sgd_scan(xs, ys, eta, w0, store=store)
    if after is None:
        return last
    return jnp.concatenate([w0[None, :], after], axis=0)


def check_data(
    xs: ArrayLike, ys: ArrayLike, initial_point: ArrayLike | None = None
) -> tuple[Array, Array, Array]:
    """Checks a least-squares sample and returns `(xs, ys, w_0)` as arrays of `xs`'s dtype.

    Raises :class:`~ojax.validation.InputError` unless `xs` is `(n, d)`, `ys` is `(n,)`
    and `initial_point` (default zeros) is `(d,)`, all finite (values checked when concrete).
    """
    if np.ndim(xs) != 2:
        raise InputError(f"xs must have shape (n, d), got shape {np.shape(xs)}")
    n, d = np.shape(xs)
    check_shape("ys", ys, (n,))
    check_finite("xs", xs)
    check_finite("ys", ys)
    xs = jnp.asarray(xs)
    ys = jnp.asarray(ys, xs.dtype)
    if initial_point is None:
        w0 = jnp.zeros((d,), xs.dtype)
    else:
        check_shape("initial_point", initial_point, (d,))
        check_finite("initial_point", initial_point)
        w0 = jnp.asarray(initial_point, xs.dtype)
    return xs, ys, w0


def sgd_iterates(
    xs: ArrayLike, ys: ArrayLike, learning_rate: ArrayLike, initial_point: ArrayLike | None = None
) -> Array:
    """The stored SGD iterates `w_0..w_n` of one pass, `(n+1, d)` (memory `(n+1) d`).

    Checks its input when concrete; safe inside `jit` / `vmap`.

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax import averaging
      >>> ws = averaging.sgd_iterates(jnp.ones((2, 1)), jnp.ones(2), 0.5)
      >>> print(ws.ravel())
      [0.   0.5  0.75]
    """
    xs, ys, w0 = check_data(xs, ys, initial_point)
    check_positive("learning_rate", learning_rate)
    return sgd_pass(xs, ys, jnp.asarray(learning_rate, xs.dtype), w0, True)


def sgd_final(
    xs: ArrayLike, ys: ArrayLike, learning_rate: ArrayLike, initial_point: ArrayLike | None = None
) -> Array:
    """The last SGD iterate `w_n` of one pass (nothing stored); safe inside `jit` / `vmap`.

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax import averaging
      >>> print(averaging.sgd_final(jnp.ones((3, 1)), jnp.ones(3), 0.5))
      [0.875]
    """
    xs, ys, w0 = check_data(xs, ys, initial_point)
    check_positive("learning_rate", learning_rate)
    return sgd_pass(xs, ys, jnp.asarray(learning_rate, xs.dtype), w0, False)


@functools.partial(jax.jit, static_argnames=("unroll", "average"))
def _ridge_runs(xs, ys, gamma, lam, w0, unroll=4, average=False):
    def step(v, example):
        x, y = example
        residual = v @ x - y  # (L,)
        shrink = (gamma * lam)[:, None] * (v - w0[None, :])
        v = v - (gamma * residual)[:, None] * x[None, :] - shrink
        return v, None

    v0 = jnp.broadcast_to(w0, (gamma.shape[0], w0.shape[0]))
    if not average:
        v, _ = jax.lax.scan(step, v0, (xs, ys), unroll=unroll)
        return v

    def step_and_sum(carry, example):
        v, total = carry
        v, _ = step(v, example)
        return (v, total + v), None

    (_, total), _ = jax.lax.scan(step_and_sum, (v0, v0), (xs, ys), unroll=unroll)
    return total / (xs.shape[0] + 1)


def ridge_sgd_runs(
    xs: ArrayLike,
    ys: ArrayLike,
    learning_rate: ArrayLike,
    regularization: ArrayLike,
    initial_point: ArrayLike | None = None,
    *,
    average: bool = False,
) -> Array:
    """`L` regularized SGD runs (one per `(gamma_l, lambda_l)`) batched in one scan.

    `v_t = v_{t-1} - gamma (<v_{t-1}, x_t> - y_t) x_t - gamma lambda (v_{t-1} - w_0)`.

    Args:
      xs: `(n, d)`; ys: `(n,)`.
      learning_rate: `gamma`, scalar or `(L,)`.
      regularization: `lambda`, `(L,)` (or scalar), each in `[0, 1/gamma)`.
      initial_point: `w_0` (default 0), the start and the point shrunk towards.
      average: static; return the Polyak-Ruppert average `(1/(n+1)) sum_{t=0..n} v_t` (the
        averaged regularized SGD that Neu & Rosasco (2018) compare geometric averaging with,
        after Dieuleveut et al. 2017) instead of the last iterate `v_n`.

    Returns:
      `(L, d)` the final iterates or their averages (`(d,)` when both are scalars). Checks
      its input when concrete; safe inside `jit` / `vmap`.

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax import averaging
      >>> v = averaging.ridge_sgd_runs(jnp.ones((2, 1)), jnp.ones(2), 0.5, jnp.array([0.0, 1.0]))
      >>> print(v.ravel())  # lambda = 0 is plain SGD; lambda = 1 shrinks towards w_0 = 0
      [0.75 0.5 ]
      >>> v = averaging.ridge_sgd_runs(jnp.ones((2, 1)), jnp.ones(2), 0.5, 0.0, average=True)
      >>> print(f"{float(v[0]):.6f}")  # the average of w_0, w_1, w_2 = 0, 0.5, 0.75
      0.416667
    """
    xs, ys, w0 = check_data(xs, ys, initial_point)
    check_positive("learning_rate", learning_rate)
    check_ridge(learning_rate, regularization)
    scalar = np.ndim(learning_rate) == 0 and np.ndim(regularization) == 0
    gamma, lam = jnp.broadcast_arrays(
        jnp.atleast_1d(jnp.asarray(learning_rate, xs.dtype)),
        jnp.atleast_1d(jnp.asarray(regularization, xs.dtype)),
    )
    if gamma.ndim != 1:
        raise InputError(f"learning_rate and regularization must be vectors, got {gamma.shape}")
    v = _ridge_runs(xs, ys, gamma, lam, w0, average=bool(average))
    return v[0] if scalar else v


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


@jax.jit
def _known_covariance(xs, ys, cov, eta, w0):
    def step(w, example):
        x, y = example
        w = w - eta * (cov @ w - y * x)
        return w, w

    _, after = jax.lax.scan(step, w0, (xs, ys))
    return jnp.concatenate([w0[None, :], after], axis=0)


def ridge_regression(
    xs: ArrayLike,
    ys: ArrayLike,
    regularization: ArrayLike,
    initial_point: ArrayLike | None = None,
) -> Array:
    """Closed-form ridge `(X^T X / n + lambda I)^{-1} (X^T y / n + lambda w_0)` for many lambdas.

    One eigendecomposition of the empirical covariance serves the whole vector of lambdas.
    Checks its input when concrete; safe inside `jit` / `vmap`.

    Returns:
      `(L, d)` for `regularization` of shape `(L,)` (`(d,)` for a scalar).

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax import averaging
      >>> print(averaging.ridge_regression(jnp.ones((4, 1)), 2 * jnp.ones(4), 1.0))
      [1.]
    """
    xs, ys, w0 = check_data(xs, ys, initial_point)
    check_range("regularization", regularization, 0.0, None)
    lam = jnp.asarray(regularization, xs.dtype)
    out = _ridge_closed(xs, ys, jnp.atleast_1d(lam), w0)
    return out[0] if lam.ndim == 0 else out


@jax.jit
def _ridge_closed(xs, ys, lam, w0):
    n = xs.shape[0]
    cov = xs.T @ xs / n
    cross = xs.T @ ys / n
    return ridge_solution(cov, cross, lam, w0)


def ridge_solution(cov: Array, cross: Array, regularization: Array, anchor: Array) -> Array:
    """`(cov + lambda I)^{-1} (cross + lambda anchor)` for `lambda` of shape `(L,)`.

    Jittable; uses one `eigh` of `cov` (symmetric positive semi-definite).
    """
    evals, evecs = jnp.linalg.eigh(cov)
    lam = regularization[:, None]
    rhs = (cross[None, :] + lam * anchor[None, :]) @ evecs  # (L, d) in the eigenbasis
    return (rhs / (evals[None, :] + lam)) @ evecs.T


# ---------------------------------------------------------------------------------------------
# exact means: the deterministic recursions of E[w_t] and E[v_t]
# ---------------------------------------------------------------------------------------------


@functools.partial(jax.jit, static_argnames=("num_steps",))
def expected_sgd_iterates(
    cov: Array, cross: Array, learning_rate: Array, initial_point: Array, num_steps: int
) -> Array:
    """`E[w_0..w_n]` `(n+1, d)`: `E w_t = E w_{t-1} - eta (Sigma E w_{t-1} - E[x y])`.

    Exact for i.i.d. examples (`w_{t-1}` is independent of `x_t`).
    """

    def step(m, _):
        new = m - learning_rate * (cov @ m - cross)
        return new, new

    _, ms = jax.lax.scan(step, initial_point, None, length=num_steps)
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
    """`E[v_n]` of regularized SGD (`(d,)`; vmap over `(gamma, lambda)` for a path)."""

    def step(m, _):
        grad = cov @ m - cross + regularization * (m - initial_point)
        return m - learning_rate * grad, None

    m, _ = jax.lax.scan(step, initial_point, None, length=num_steps)
    return m


__all__ = [
    "RidgeSGDParams",
    "RidgeSGDState",
    "SGDParams",
    "SGDState",
    "check_data",
    "check_ridge",
    "expected_ridge_sgd",
    "expected_sgd_iterates",
    "least_squares_pass",
    "least_squares_ridge_sgd",
    "known_covariance_iterates",
    "least_squares_sgd",
    "ridge_regression",
    "ridge_sgd",
    "ridge_sgd_runs",
    "ridge_solution",
    "sgd",
    "sgd_final",
    "sgd_iterates",
    "sgd_pass",
    "sgd_scan",
    "sgd_step",
]
