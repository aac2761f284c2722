"""Step sizes from an estimate of the distance to the solution: DoG, D-Adaptation SGD, Prodigy.

Each learner moves like (stochastic) gradient descent and sets its step from a running lower
estimate of `D = ||x_0 - x*||` (the distance travelled for DoG, a correlation of the gradients
with the displacement for D-Adaptation and Prodigy), so no step size is tuned; what remains is
the tiny initial estimate (`r_eps` or `d_0`), which only delays the start.

References:
  Ivgi, M., Hinder, O. and Carmon, Y. (2023). DoG is SGD's best friend: a parameter-free
  dynamic step size schedule. ICML (Algorithm 1).
  Defazio, A. and Mishchenko, K. (2023). Learning-rate-free learning by D-Adaptation. ICML
  (Algorithm 3, SGD with D-Adaptation, of the arXiv preprint 2301.07733).
  Mishchenko, K. and Defazio, A. (2024). Prodigy: an expeditiously adaptive parameter-free
  learner. ICML (the Adam version of Prodigy).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import jax.numpy as jnp

from ojax.core import Array, OCOLearner, learner_factory, scalars
from ojax.validation import check_nonnegative, check_positive, check_range


def _safe_divide(numerator: Array, denominator: Array, default: Array) -> Array:
    """`numerator / denominator` where `denominator > 0`, else `default`."""
    ok = denominator > 0
    return jnp.where(ok, numerator / jnp.where(ok, denominator, 1.0), default)


# ----------------------------------------------------------------------------------------- DoG


class DoGParams(NamedTuple):
    """The hyperparameters of DoG: a pytree of arrays passed at call time.

    Attributes:
      initial_distance: r_eps > 0, shape (): the first step's "distance travelled"
    """

    initial_distance: Array  # r_eps > 0, shape (): the first step's "distance travelled"

    @classmethod
    def default(cls, dtype: Any = None) -> DoGParams:
        """`initial_distance = 1e-4`."""
        return cls(*scalars(1e-4, dtype=dtype))


class DoGState(NamedTuple):
    """The state of DoG: a pytree of arrays, carried from step to step.

    Attributes:
      anchor: x_0, shape (d,)
      point: x_t, shape (d,)
      max_distance: r_bar = max(r_eps, max_{i<t} ||x_i - x_0||), shape ()
      sum_squares: sum_{i<t} ||g_i||^2, shape ()
    """

    anchor: Array  # x_0, shape (d,)
    point: Array  # x_t, shape (d,)
    max_distance: Array  # r_bar = max(r_eps, max_{i<t} ||x_i - x_0||), shape ()
    sum_squares: Array  # sum_{i<t} ||g_i||^2, shape ()


@learner_factory
def dog() -> OCOLearner:
    """DoG, Distance over Gradients (Ivgi, Hinder & Carmon 2023, Algorithm 1).

    ::

        r_bar_t = max(r_eps, max_{i<=t} ||x_i - x_0||)
        eta_t   = r_bar_t / sqrt(sum_{i<=t} ||g_i||^2)
        x_{t+1} = x_t - eta_t g_t

    While every gradient so far is 0 the step is 0 (the ratio's limit; `optax.contrib.dog`
    adds `1e-8` under the root instead). The paper suggests `r_eps = 1e-6 (1 + ||x_0||)`
    and averaging the iterates (not done here: the learner plays `x_t`).

    Returns:
      An :class:`~ojax.core.OCOLearner` with params :class:`DoGParams`.

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax import losses, parameter_free, run_oco
      >>> zs = jnp.tile(jnp.array([[0.3, -0.4]]), (100, 1))  # f(w) = ||w - z||^2 / 2
      >>> params = parameter_free.DoGParams(jnp.array(1e-4))
      >>> _, tr = run_oco(parameter_free.dog(), params, jnp.zeros(2), zs,
      ...                 losses.quadratic_objective)
      >>> print(round(float(tr.loss.mean()), 4))  # mean loss over the run
      0.0384
    """

    def init(params: DoGParams, x0: Array) -> DoGState:
        x0 = jnp.asarray(x0)
        r_eps = jnp.asarray(params.initial_distance, x0.dtype)
        return DoGState(x0, x0, r_eps, jnp.zeros((), x0.dtype))

    def iterate(state: DoGState, params: DoGParams) -> Array:
        return state.point

    def update(state: DoGState, params: DoGParams, grad: Array) -> DoGState:
        distance = jnp.linalg.norm(state.point - state.anchor)
        max_distance = jnp.maximum(state.max_distance, distance)
        sum_squares = state.sum_squares + jnp.vdot(grad, grad)
        step = _safe_divide(max_distance, jnp.sqrt(sum_squares), jnp.zeros_like(sum_squares))
        return DoGState(state.anchor, state.point - step * grad, max_distance, sum_squares)

    def check_params(params: DoGParams) -> None:
        check_positive("initial_distance", params.initial_distance)

    return OCOLearner(init, iterate, update, check_params)


# ------------------------------------------------------------------------- D-Adaptation SGD


class DAdaptParams(NamedTuple):
    """The hyperparameters of DAdapt: a pytree of arrays passed at call time.

    Attributes:
      initial_d: d_0 > 0, shape (): the initial under-estimate of D (1e-6)
      learning_rate: gamma > 0, shape (): a multiplier of the adapted step (1)
    """

    initial_d: Array  # d_0 > 0, shape (): the initial under-estimate of D (1e-6)
    learning_rate: Array  # gamma > 0, shape (): a multiplier of the adapted step (1)

    @classmethod
    def default(cls, dtype: Any = None) -> DAdaptParams:
        """The paper's `d_0 = 1e-6` and `learning_rate = 1`."""
        return cls(*scalars(1e-6, 1.0, dtype=dtype))


class DAdaptState(NamedTuple):
    """The state of DAdapt: a pytree of arrays, carried from step to step.

    Attributes:
      point: x_k, shape (d,)
      grad_sum: s_k = sum_{i<k} lambda_i g_i, shape (d,)
      weighted_squares: sum_{i<k} lambda_i^2 ||g_i||^2, shape ()
      d: d_k, shape ()
      first_norm: ||g_0|| (0 before the first gradient), shape ()
      count: shadows tuple.count
    """

    point: Array  # x_k, shape (d,)
    grad_sum: Array  # s_k = sum_{i<k} lambda_i g_i, shape (d,)
    weighted_squares: Array  # sum_{i<k} lambda_i^2 ||g_i||^2, shape ()
    d: Array  # d_k, shape ()
    first_norm: Array  # ||g_0|| (0 before the first gradient), shape ()
    # number of updates made, shape (), int32
    count: Array  # type: ignore[assignment]  # shadows tuple.count


@learner_factory
def dadapt_sgd(growth_rate: float = math.inf) -> OCOLearner:
    """SGD with D-Adaptation (Defazio & Mishchenko 2023, Algorithm 3 of the preprint).

    ::

        lambda_k  = d_k gamma / ||g_0||
        s_{k+1}   = s_k + lambda_k g_k
        x_{k+1}   = x_k - lambda_k g_k
        d_hat     = (||s_{k+1}||^2 - sum_{i<=k} lambda_i^2 ||g_i||^2) / ||s_{k+1}||
        d_{k+1}   = max(d_k, min(d_hat, r d_k))          (r = growth_rate)

    (Algorithm 3 drops the factor 2 of the dual-averaging estimate of Algorithm 1, as the
    paper's Section 6 explains.) If `g_0 = 0` the algorithm exits at `x_0`: here every
    later step is 0. A step with `s_{k+1} = 0` keeps `d`. The paper's theory covers
    Algorithm 1, not this stochastic variant.

    Every step is scaled by `1 / ||g_0||`: where the first gradient is tiny the steps can
    blow up (at the defaults, 5 of 1000 `unit_ball` streams of the quadratic loss, whose
    first gradient is `-z_0` with `||z_0||` uniform in [0, 1], overflow within 30 steps).
    `growth_rate` caps the growth of `d` per step as the authors' `DAdaptSGD` does
    (`d = max(d, min(d_hat, d * growth_rate))`), their remedy for early divergence: at
    1.02 none of those streams overflows and a first gradient of norm 1e-4 still converges
    (a cap of 2 only delays the overflow there). The default `inf` is the paper's rule.

    Args:
      growth_rate: r in [1, inf] (static: another value compiles anew).

    Returns:
      An :class:`~ojax.core.OCOLearner` with params :class:`DAdaptParams`.

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax import losses, parameter_free, run_oco
      >>> zs = jnp.tile(jnp.array([[0.3, -0.4]]), (100, 1))  # f(w) = ||w - z||^2 / 2
      >>> params = parameter_free.DAdaptParams(jnp.array(1e-3), jnp.array(1.0))
      >>> _, tr = run_oco(parameter_free.dadapt_sgd(), params, jnp.zeros(2), zs,
      ...                 losses.quadratic_objective)
      >>> print(round(float(tr.loss.mean()), 4))  # mean loss over the run
      0.0133
    """

    check_range("growth_rate", growth_rate, 1.0, math.inf)
    growth = float(growth_rate)

    def init(params: DAdaptParams, x0: Array) -> DAdaptState:
        x0 = jnp.asarray(x0)
        zero = jnp.zeros((), x0.dtype)
        d0 = jnp.asarray(params.initial_d, x0.dtype)
        return DAdaptState(x0, jnp.zeros_like(x0), zero, d0, zero, jnp.zeros((), jnp.int32))

    def iterate(state: DAdaptState, params: DAdaptParams) -> Array:
        return state.point

    def update(state: DAdaptState, params: DAdaptParams, grad: Array) -> DAdaptState:
        first_norm = jnp.where(state.count == 0, jnp.linalg.norm(grad), state.first_norm)
        zero = jnp.zeros_like(first_norm)
        lam = _safe_divide(state.d * params.learning_rate, first_norm, zero)
        grad_sum = state.grad_sum + lam * grad
        weighted = state.weighted_squares + lam**2 * jnp.vdot(grad, grad)
        norm = jnp.linalg.norm(grad_sum)
        d_hat = _safe_divide(norm**2 - weighted, norm, state.d)
        if growth < math.inf:
            d_hat = jnp.minimum(d_hat, state.d * growth)
        return DAdaptState(
            state.point - lam * grad,
            grad_sum,
            weighted,
            jnp.maximum(state.d, d_hat),
            first_norm,
            state.count + 1,
        )

    def check_params(params: DAdaptParams) -> None:
        check_positive("initial_d", params.initial_d)
        check_positive("learning_rate", params.learning_rate)

    return OCOLearner(init, iterate, update, check_params)


# ------------------------------------------------------------------------------------ Prodigy


class ProdigyParams(NamedTuple):
    """The hyperparameters of Prodigy: a pytree of arrays passed at call time.

    Attributes:
      initial_d: d_0 > 0, shape () (1e-6)
      learning_rate: gamma > 0, shape (): a multiplier of the adapted step (1)
      beta1: in [0, 1), shape (): the first moment's decay (0.9)
      beta2: in [0, 1), shape (): the second moment's decay (0.999); r, s decay sqrt
      eps: >= 0, shape (): added to sqrt(v) as d_k eps (1e-8)
    """

    initial_d: Array  # d_0 > 0, shape () (1e-6)
    learning_rate: Array  # gamma > 0, shape (): a multiplier of the adapted step (1)
    beta1: Array  # in [0, 1), shape (): the first moment's decay (0.9)
    beta2: Array  # in [0, 1), shape (): the second moment's decay (0.999); r, s decay sqrt
    eps: Array  # >= 0, shape (): added to sqrt(v) as d_k eps (1e-8)

    @classmethod
    def default(cls, dtype: Any = None) -> ProdigyParams:
        """The paper's `d_0 = 1e-6`, `learning_rate = 1`, `beta1 = 0.9`,
        `beta2 = 0.999`, `eps = 1e-8`."""
        return cls(*scalars(1e-6, 1.0, 0.9, 0.999, 1e-8, dtype=dtype))


class ProdigyState(NamedTuple):
    """The state of Prodigy: a pytree of arrays, carried from step to step.

    Attributes:
      anchor: x_0, shape (d,)
      point: x_k, shape (d,)
      first_moment: m_k, shape (d,)
      second_moment: v_k, shape (d,)
      grad_sum: s_k, shape (d,)
      numerator: r_k, shape ()
      d: d_k, shape ()
    """

    anchor: Array  # x_0, shape (d,)
    point: Array  # x_k, shape (d,)
    first_moment: Array  # m_k, shape (d,)
    second_moment: Array  # v_k, shape (d,)
    grad_sum: Array  # s_k, shape (d,)
    numerator: Array  # r_k, shape ()
    d: Array  # d_k, shape ()


@learner_factory
def prodigy() -> OCOLearner:
    """Prodigy, Adam version (Mishchenko & Defazio 2024).

    ::

        m_{k+1} = beta1 m_k + (1 - beta1) d_k g_k
        v_{k+1} = beta2 v_k + (1 - beta2) d_k^2 g_k^2
        r_{k+1} = sqrt(beta2) r_k + (1 - sqrt(beta2)) gamma d_k^2 <g_k, x_0 - x_k>
        s_{k+1} = sqrt(beta2) s_k + (1 - sqrt(beta2)) gamma d_k^2 g_k
        d_{k+1} = max(d_k, r_{k+1} / ||s_{k+1}||_1)
        x_{k+1} = x_k - gamma d_k m_{k+1} / (sqrt(v_{k+1}) + d_k eps)

    coordinate-wise, without Adam's bias correction (as the paper's Adam version; the
    authors' package makes it optional, `optax.contrib.prodigy` always applies it). While
    `s = 0` (only zero gradients) `d` is kept.

    Returns:
      An :class:`~ojax.core.OCOLearner` with params :class:`ProdigyParams`.

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax import losses, parameter_free, run_oco
      >>> zs = jnp.tile(jnp.array([[0.3, -0.4]]), (200, 1))  # f(w) = ||w - z||^2 / 2
      >>> params = parameter_free.ProdigyParams(*map(jnp.array, (1e-3, 1.0, 0.9, 0.999, 1e-8)))
      >>> _, tr = run_oco(parameter_free.prodigy(), params, jnp.zeros(2), zs,
      ...                 losses.quadratic_objective)
      >>> print(round(float(tr.loss.mean()), 4))  # mean loss over the run
      0.0069
    """

    def init(params: ProdigyParams, x0: Array) -> ProdigyState:
        x0 = jnp.asarray(x0)
        zeros = jnp.zeros_like(x0)
        d0 = jnp.asarray(params.initial_d, x0.dtype)
        return ProdigyState(x0, x0, zeros, zeros, zeros, jnp.zeros((), x0.dtype), d0)

    def iterate(state: ProdigyState, params: ProdigyParams) -> Array:
        return state.point

    def update(state: ProdigyState, params: ProdigyParams, grad: Array) -> ProdigyState:
        d, gamma = state.d, params.learning_rate
        beta1, beta2 = params.beta1, params.beta2
        beta3 = jnp.sqrt(beta2)
        m = beta1 * state.first_moment + (1 - beta1) * d * grad
        v = beta2 * state.second_moment + (1 - beta2) * d**2 * grad**2
        weight = (1 - beta3) * gamma * d**2
        r = beta3 * state.numerator + weight * jnp.vdot(grad, state.anchor - state.point)
        s = beta3 * state.grad_sum + weight * grad
        d_new = jnp.maximum(d, _safe_divide(r, jnp.sum(jnp.abs(s)), d))
        # a coordinate with v = 0 has seen only zero gradients, so m = 0 too: no move
        step = _safe_divide(m, jnp.sqrt(v) + d * params.eps, jnp.zeros_like(m))
        point = state.point - gamma * d * step
        return ProdigyState(state.anchor, point, m, v, s, r, d_new)

    def check_params(params: ProdigyParams) -> None:
        check_positive("initial_d", params.initial_d)
        check_positive("learning_rate", params.learning_rate)
        check_range("beta1", params.beta1, 0.0, 1.0, high_open=True)
        check_range("beta2", params.beta2, 0.0, 1.0, high_open=True)
        check_nonnegative("eps", params.eps)

    return OCOLearner(init, iterate, update, check_params)


__all__ = [
    "DAdaptParams",
    "DAdaptState",
    "DoGParams",
    "DoGState",
    "ProdigyParams",
    "ProdigyState",
    "dadapt_sgd",
    "dog",
    "prodigy",
]
