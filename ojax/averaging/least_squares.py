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
:func:`sgd_final` and :func:`ridge_sgd_runs` (many `(gamma, lambda)` in one scan). Every pass
is :func:`ojax.run` of :func:`least_squares_pass` (the learner on the square loss, its start a
param): this module has no scan of its own; the batched runs are a `vmap` of the runner over
`(gamma, lambda)` with `unroll=4` (the runner's keyword: the same numbers, less loop overhead).
SGD with the covariance known and the exact means are in :mod:`ojax.averaging.expected`.

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
from ojax.adapters import OCOParams, linear_predictor
from ojax.averaging.averagers import AveragedParams, Averager, averaged, polyak_averager
from ojax.averaging.weights import check_regularization
from ojax.core import Array, OCOLearner, Predictor, Step, learner_factory, scalars
from ojax.oco.gradient_descent import OGDParams, OGDState, ogd
from ojax.runner import run
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


@learner_factory
def least_squares_pass(learner: OCOLearner | None = None) -> Predictor:
    """An OCO learner (default :func:`sgd`) on the square loss of `y_hat = <w, x>`, as a
    predictor whose start is a param: params :class:`~ojax.adapters.OCOParams` `(the learner's
    params, w_0)`, so a pass from a traced `w_0` (a block of a streamed path) or a batch of
    params (a `vmap`) runs in :func:`ojax.run`. The gradient fed to the learner is
    `(<w, x> - y) x`; :func:`sgd` then steps `w - eta (<w, x> - y) x`."""
    inner = sgd() if learner is None else learner

    def init(params: OCOParams) -> Any:
        return inner.init(params.params, params.x0)

    def predict(state: Any, params: OCOParams, x: Array) -> Array:
        return jnp.vdot(inner.iterate(state, params.params), x)

    def update(state: Any, params: OCOParams, x: Array, y: Array) -> Any:
        grad = losses.square.grad(predict(state, params, x), y) * x
        return inner.update(state, params.params, grad)

    def check_params(params: OCOParams) -> None:
        inner.check_params(params.params)

    return Predictor(init, predict, update, check_params)


def point_after(step: Step) -> Array:
    """A `record` hook of :func:`ojax.run`: the iterate after the step."""
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
        record=point_after if store else None,
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
    """The `L` runs: :func:`ojax.run` of :func:`ridge_sgd` (carrying the running sum of its
    iterates when `average`) vmapped over `(gamma, lambda)`; `unroll` steps per loop
    iteration (speed). The average is :func:`polyak_averager`'s running sum (one add per step:
    its merge weights would double the cost of a small batch of runs)."""
    averager = polyak_averager(running_sum=True)
    learner = averaged(ridge_sgd(), averager) if average else ridge_sgd()
    predictor = least_squares_pass(learner)

    def one(g, r):
        inner = RidgeSGDParams(g, r)
        params = OCOParams(AveragedParams(inner, ()) if average else inner, w0)
        state, _ = run(
            predictor, params, xs, ys, losses.square, keep_predictions=False, unroll=unroll
        )
        return averager.average(state.averager, ()) if average else state.point

    return jax.vmap(one)(gamma, lam)


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


__all__ = [
    "RidgeSGDParams",
    "RidgeSGDState",
    "SGDParams",
    "SGDState",
    "check_data",
    "check_ridge",
    "least_squares_pass",
    "least_squares_ridge_sgd",
    "least_squares_sgd",
    "point_after",
    "ridge_regression",
    "ridge_sgd",
    "ridge_sgd_runs",
    "ridge_solution",
    "sgd",
    "sgd_final",
    "sgd_iterates",
    "sgd_pass",
    "sgd_scan",
]
