"""Averages of iterates: Polyak-Ruppert, geometric and tail, streaming or from stored iterates.

For iterates `w_0..w_n` (`w_0` included in every average):

    Polyak-Ruppert:  w_bar_n   = (1/(n+1)) sum_{t=0..n} w_t
    geometric:       w_tilde_n = c_n sum_{t=0..n} rho^t w_t,  c_n = (1-rho)/(1-rho^{n+1})
    tail (tau):      (1/(n-tau)) sum_{t=tau+1..n} w_t,       0 <= tau < n

The geometric average weights EARLY iterates (it is a regularizer: it converges to ridge
regression, see :mod:`ojax.averaging.least_squares`); an exponential moving average weights
late ones.

A streaming :class:`Averager` is a `NamedTuple` of pure functions whose state any learner can
carry: `init(params, w0)`, `update(state, params, w)` (one more iterate), `average(state,
params)`. Its update is the pairwise merge of the spec with a chunk of length one, its weights
derived from the iterate count (never accumulated), so it survives `10^7` float32 steps.
:func:`averaged` wraps any :class:`~ojax.core.OCOLearner` so that its state carries an averager.

References:
  Polyak, B. T. and Juditsky, A. B. (1992). Acceleration of stochastic approximation by
  averaging. Neu, G. and Rosasco, L. (2018). Iterate averaging as regularization for stochastic
  gradient descent. Jain, P., Kakade, S., Kidambi, R., Netrapalli, P. and Sidford, A. (2018).
  Parallelizing stochastic gradient descent for least squares regression.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from ojax.averaging.weights import (
    check_log_discount,
    geometric_weights,
    merge_weights,
    tail_weights,
)
from ojax.core import Array, OCOLearner, Params, State, learner_factory, scalars
from ojax.validation import InputError, check_finite, check_range


def _no_check(params: Params) -> None:
    del params


class Averager(NamedTuple):
    """A streaming average of a sequence of iterates `w_0, w_1, ...`.

    Attributes:
      init: `(params, w0) -> state` (`w_0` is the first iterate of the average).
      update: `(state, params, w) -> state`, folding in the next iterate.
      average: `(state, params) -> (d,)`, the average of the iterates so far.
      check_params: raises :class:`~ojax.validation.InputError` on bad params (concrete values).
    """

    init: Callable[[Params, Array], State]
    update: Callable[[State, Params, Array], State]
    average: Callable[[State, Params], Array]
    check_params: Callable[[Params], None] = _no_check


class AveragerState(NamedTuple):
    """The state of Averager: a pytree of arrays, carried from step to step.

    Attributes:
      average: the current average, shape (d,)
      count: shadows tuple.count
    """

    average: Array  # the current average, shape (d,)
    # number of iterates folded in (w_0 included), shape (), int32
    count: Array  # type: ignore[assignment]  # shadows tuple.count


class RunningSumState(NamedTuple):
    """The state of :func:`polyak_averager` `(running_sum=True)`: the sum, not the average
    (read the average with the averager's `average` or :func:`average_of`).

    Attributes:
      total: `w_0 + ... + w_k`, shape (d,)
      count: `k + 1`, shape (), int32
    """

    total: Array  # w_0 + ... + w_k, shape (d,)
    count: Array  # type: ignore[assignment]  # k + 1, shape (), int32; shadows tuple.count


class GeometricParams(NamedTuple):
    """The hyperparameters of Geometric: a pytree of arrays passed at call time.

    Attributes:
      log_discount: log rho <= 0, shape (); 0 is Polyak-Ruppert
    """

    log_discount: Array  # log rho <= 0, shape (); 0 is Polyak-Ruppert

    @classmethod
    def default(cls, dtype: Any = None) -> GeometricParams:
        """`log_discount = -0.01` (`rho = e^-0.01`)."""
        return cls(*scalars(-0.01, dtype=dtype))


class TailParams(NamedTuple):
    """The hyperparameters of Tail: a pytree of arrays passed at call time.

    Attributes:
      tail_start: tau >= 0, shape (), int32: the average of w_{tau+1}, w_{tau+2}, ...
    """

    tail_start: Array  # tau >= 0, shape (), int32: the average of w_{tau+1}, w_{tau+2}, ...


def _init(params: Params, w0: Array) -> AveragerState:
    return AveragerState(w0, jnp.ones((), jnp.int32))


def _average(state: AveragerState, params: Params) -> Array:
    return state.average


def _merge_one(state: AveragerState, log_discount: Array, w: Array) -> AveragerState:
    a, b = merge_weights(log_discount, state.count, 1)
    a, b = a.astype(w.dtype), b.astype(w.dtype)
    return AveragerState(a * state.average + b * w, state.count + 1)


def _sum_init(params: Params, w0: Array) -> RunningSumState:
    return RunningSumState(w0, jnp.ones((), jnp.int32))


def _sum_update(state: RunningSumState, params: Params, w: Array) -> RunningSumState:
    return RunningSumState(state.total + w, state.count + 1)


def _sum_average(state: RunningSumState, params: Params) -> Array:
    return state.total / state.count.astype(state.total.dtype)


@learner_factory
def polyak_averager(running_sum: bool = False) -> Averager:
    """Polyak-Ruppert averaging, `w_bar_k = w_bar_{k-1} + (w_k - w_bar_{k-1}) / (k + 1)`.

    `running_sum=True`: the same average as a running sum divided when read (the state is a
    :class:`RunningSumState` holding `w_0 + ... + w_k`): one add per step, for short passes
    where the merge weights would cost about as much as a small batch of runs' whole update;
    in float32 the sum loses digits on long streams, which the default form does not.

    Params: `()` (none).

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax import averaging
      >>> avg = averaging.polyak_averager()
      >>> s = avg.init((), jnp.zeros(1))
      >>> for w in (1.0, 2.0, 3.0):
      ...     s = avg.update(s, (), jnp.array([w]))
      >>> print(avg.average(s, ()))
      [1.5]
    """
    if running_sum:
        return Averager(_sum_init, _sum_update, _sum_average)

    def update(state: AveragerState, params: Params, w: Array) -> AveragerState:
        return _merge_one(state, jnp.zeros((), w.dtype), w)

    return Averager(_init, update, _average)


@learner_factory
def geometric_averager() -> Averager:
    """Geometric averaging with discount `rho = exp(log_discount)`, streamed.

        w_tilde_k = a_k w_tilde_{k-1} + b_k w_k,
        a_k = expm1(k log rho) / expm1((k+1) log rho)
        b_k = exp(k log rho) expm1(log rho) / expm1((k+1) log rho)

    (`b_k = rho^k / sum_{j<=k} rho^j`, computed from `k` alone.)

    Params: :class:`GeometricParams`.

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax import averaging
      >>> avg = averaging.geometric_averager()
      >>> p = averaging.GeometricParams(jnp.log(jnp.float32(0.5)))
      >>> s = avg.init(p, jnp.zeros(1))
      >>> s = avg.update(s, p, jnp.ones(1) * 3.0)  # (1 * 0 + 0.5 * 3) / 1.5
      >>> print(avg.average(s, p))
      [1.]
    """

    def update(state: AveragerState, params: GeometricParams, w: Array) -> AveragerState:
        return _merge_one(state, jnp.asarray(params.log_discount).astype(w.dtype), w)

    def check_params(params: GeometricParams) -> None:
        check_log_discount("log_discount", params.log_discount)

    return Averager(_init, update, _average, check_params)


@learner_factory
def tail_averager() -> Averager:
    """Tail averaging: the mean of `w_{tau+1}, ..., w_k` once `k > tau`.

    Before the tail starts (`k <= tau`) the average is the latest iterate `w_k`.

    Params: :class:`TailParams`.

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax import averaging
      >>> avg = averaging.tail_averager()
      >>> p = averaging.TailParams(jnp.int32(1))
      >>> s = avg.init(p, jnp.zeros(1))
      >>> for w in (1.0, 2.0, 6.0):
      ...     s = avg.update(s, p, jnp.array([w]))
      >>> print(avg.average(s, p))  # mean of w_2 = 2 and w_3 = 6
      [4.]
    """

    def update(state: AveragerState, params: TailParams, w: Array) -> AveragerState:
        index = state.count  # the index k of the incoming iterate w_k
        in_tail = index - jnp.asarray(params.tail_start, jnp.int32)  # = number of tail iterates
        step = 1.0 / jnp.maximum(in_tail, 1).astype(w.dtype)
        new = state.average + step * (w - state.average)
        return AveragerState(jnp.where(in_tail > 0, new, w), state.count + 1)

    def check_params(params: TailParams) -> None:
        check_range("tail_start", params.tail_start, 0.0, None)

    return Averager(_init, update, _average, check_params)


# ---------------------------------------------------------------------------------------------
# any OCO learner carrying an averager in its state
# ---------------------------------------------------------------------------------------------


class AveragedParams(NamedTuple):
    """The hyperparameters of Averaged: a pytree of arrays passed at call time.

    Attributes:
      learner: the inner learner's params
      averager: the averager's params
    """

    learner: Any  # the inner learner's params
    averager: Any  # the averager's params


class AveragedState(NamedTuple):
    """The state of Averaged: a pytree of arrays, carried from step to step.

    Attributes:
      learner: the inner learner's state
      averager: the running average of the inner iterates w_0, w_1, ...
    """

    learner: Any  # the inner learner's state
    averager: AveragerState  # the running average of the inner iterates w_0, w_1, ...


@learner_factory
def averaged(learner: OCOLearner, averager: Averager) -> OCOLearner:
    """`learner` whose state also carries `averager` over its iterates `w_0, w_1, ...`.

    The wrapped learner plays the inner iterates unchanged; the average is read with
    :func:`average_of`. Params: :class:`AveragedParams` `(learner, averager)`.

    Args:
      learner: any :class:`~ojax.core.OCOLearner`.
      averager: e.g. :func:`geometric_averager` ().

    Returns:
      An :class:`~ojax.core.OCOLearner` with state :class:`AveragedState`.
    """

    def init(params: AveragedParams, x0: Array) -> AveragedState:
        inner = learner.init(params.learner, x0)
        w0 = learner.iterate(inner, params.learner)
        return AveragedState(inner, averager.init(params.averager, w0))

    def iterate(state: AveragedState, params: AveragedParams) -> Array:
        return learner.iterate(state.learner, params.learner)

    def update(state: AveragedState, params: AveragedParams, grad: Array) -> AveragedState:
        inner = learner.update(state.learner, params.learner, grad)
        w = learner.iterate(inner, params.learner)
        return AveragedState(inner, averager.update(state.averager, params.averager, w))

    def check_params(params: AveragedParams) -> None:
        learner.check_params(params.learner)
        averager.check_params(params.averager)

    return OCOLearner(init, iterate, update, check_params)


def average_of(state: AveragedState) -> Array:
    """The running average carried by an :func:`averaged` learner's state."""
    if isinstance(state.averager, RunningSumState):
        return _sum_average(state.averager, ())
    return state.averager.average


# ---------------------------------------------------------------------------------------------
# functions of stored iterates (n+1, d)
# ---------------------------------------------------------------------------------------------


def check_iterates(iterates: ArrayLike) -> None:
    """Raises unless `iterates` is a finite `(n+1, d)` array with `n + 1 >= 1`."""
    shape = np.shape(iterates)
    if len(shape) != 2 or shape[0] < 1:
        raise InputError(f"iterates must have shape (n+1, d) with n+1 >= 1, got shape {shape}")
    check_finite("iterates", iterates)


def check_tail_start(tail_start: ArrayLike, num_iterates: int) -> None:
    """Raises unless every tail start is an integer `0 <= tau < n` (`n = num_iterates - 1`).

    The values are checked when concrete only (a traced `tail_start` passes: free under jit).
    """
    n = num_iterates - 1
    if n < 1:
        raise InputError(f"a tail average needs n >= 1 steps (n + 1 iterates), got n = {n}")
    if isinstance(tail_start, jax.core.Tracer):
        return
    arr = np.asarray(tail_start)
    if not (np.issubdtype(arr.dtype, np.integer) or np.all(np.mod(arr, 1) == 0)):
        raise InputError(f"tail_start must hold integers, got {arr.ravel()[:4].tolist()}")
    check_range("tail_start", arr, 0, n, high_open=True)


@jax.jit
def _geometric(iterates: Array, log_discount: Array) -> Array:
    w = geometric_weights(log_discount.astype(iterates.dtype), iterates.shape[0])
    return w @ iterates


def geometric_average(iterates: ArrayLike, log_discount: ArrayLike) -> Array:
    """The geometric average `c_n sum_t rho^t w_t` of stored iterates.

    Args:
      iterates: `(n+1, d)` the iterates `w_0..w_n`.
      log_discount: `log rho <= 0`, scalar or `(L,)` (then the result is `(L, d)`).

    Returns:
      `(d,)` or `(L, d)`.

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax import averaging
      >>> ws = jnp.array([[0.0], [3.0]])
      >>> print(averaging.geometric_average(ws, jnp.log(jnp.float32(0.5))))
      [1.]
    """
    check_iterates(iterates)
    check_log_discount("log_discount", log_discount)
    iterates = jnp.asarray(iterates)
    return _geometric(iterates, jnp.asarray(log_discount, iterates.dtype))


def polyak_average(iterates: ArrayLike) -> Array:
    """The Polyak-Ruppert average `(1/(n+1)) sum_t w_t` of stored iterates `(n+1, d)`."""
    check_iterates(iterates)
    iterates = jnp.asarray(iterates)
    return _geometric(iterates, jnp.zeros((), iterates.dtype))


@jax.jit
def _tail(iterates: Array, tail_start: Array) -> Array:
    w = tail_weights(tail_start, iterates.shape[0], iterates.dtype)
    return w @ iterates


def tail_average(iterates: ArrayLike, tail_start: ArrayLike) -> Array:
    """The tail average `(1/(n-tau)) sum_{t>tau} w_t` of stored iterates `(n+1, d)`.

    `tail_start` is a scalar or `(T,)` integers in `[0, n)`. For a whole path of tail starts
    on long iterates, :func:`ojax.averaging.tail_path` uses suffix sums instead.
    """
    check_iterates(iterates)
    check_tail_start(tail_start, np.shape(iterates)[0])
    return _tail(jnp.asarray(iterates), jnp.asarray(tail_start, jnp.int32))


__all__ = [
    "AveragedParams",
    "AveragedState",
    "Averager",
    "AveragerState",
    "GeometricParams",
    "TailParams",
    "average_of",
    "averaged",
    "check_iterates",
    "check_tail_start",
    "geometric_average",
    "geometric_averager",
    "polyak_average",
    "polyak_averager",
    "tail_average",
    "tail_averager",
]
