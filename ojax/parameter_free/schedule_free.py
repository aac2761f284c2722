"""Schedule-Free SGD: gradient steps on `z`, an average `x`, gradients taken between them.

::

    y_t     = (1 - beta) z_t + beta x_t                (the point played: gradients are taken here)
    z_{t+1} = z_t - gamma_t g_t,                       gamma_t = gamma min(1, t / T_warmup)
    x_{t+1} = (1 - c_{t+1}) x_t + c_{t+1} z_{t+1}

from `x_1 = z_1 = x0`, with `c_{t+1} = 1 / (t + 1)` (`"uniform"`: `x_{T}` is the mean of
`z_1 .. z_T`, the form of the paper's Theorem 1) or `c_{t+1} = gamma_t^2 / sum_{i<=t}
gamma_i^2` (`"weighted"`: the warmup-weighted average of the paper's Algorithm 1, which gives
`z_1` no weight). `T_warmup = 0` means no warmup. The OCO learner plays `y_t`; `x_t`, the
sequence the paper evaluates, is :func:`schedule_free_average` of the state.

`optax.contrib.schedule_free_sgd` is the `"weighted"` form (they agree to rounding without
warmup); with a warmup its SGD step reads the schedule one step early (`gamma_{t-1}`, 0 at the
first step) while its weights read `gamma_t`: here both use the paper's `gamma_t`.

References:
  Defazio, A., Yang, X. A., Mehta, H., Mishchenko, K., Khaled, A. and Cutkosky, A. (2024).
  The road less scheduled. NeurIPS (Section 2, Schedule-Free SGD; Algorithm 1; Theorem 1).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax.numpy as jnp

from ojax.core import Array, OCOLearner, learner_factory, scalars
from ojax.validation import check_choice, check_nonnegative, check_positive, check_range

AVERAGING = ("uniform", "weighted")


class ScheduleFreeParams(NamedTuple):
    """The hyperparameters of ScheduleFree: a pytree of arrays passed at call time.

    Attributes:
      learning_rate: gamma > 0, shape ()
      beta: in [0, 1], shape (): the interpolation weight of x in y (0.9)
      warmup_steps: t_warmup >= 0, shape () (0: no warmup)
    """

    learning_rate: Array  # gamma > 0, shape ()
    beta: Array  # in [0, 1], shape (): the interpolation weight of x in y (0.9)
    warmup_steps: Array  # T_warmup >= 0, shape () (0: no warmup)

    @classmethod
    def default(cls, dtype: Any = None) -> ScheduleFreeParams:
        """`learning_rate = 0.5`, `beta = 0.9`, no warmup."""
        return cls(*scalars(0.5, 0.9, 0.0, dtype=dtype))


class ScheduleFreeState(NamedTuple):
    """The state of ScheduleFree: a pytree of arrays, carried from step to step.

    Attributes:
      z: the gradient-step sequence z_t, shape (d,)
      x: the average x_t, shape (d,)
      weight_sum: sum_{i<t} gamma_i^2 ("weighted"), shape ()
      count: shadows tuple.count
    """

    z: Array  # the gradient-step sequence z_t, shape (d,)
    x: Array  # the average x_t, shape (d,)
    weight_sum: Array  # sum_{i<t} gamma_i^2 ("weighted"), shape ()
    # number of updates made, shape (), int32
    count: Array  # type: ignore[assignment]  # shadows tuple.count


def schedule_free_average(state: ScheduleFreeState) -> Array:
    """`x_t`, the averaged sequence (the point the paper evaluates and its theorem bounds)."""
    return state.x


@learner_factory
def schedule_free_sgd(averaging: str = "uniform") -> OCOLearner:
    """Schedule-Free SGD (Defazio et al. 2024), see the module docstring.

    Args:
      averaging: `"uniform"` (`c_{t+1} = 1 / (t + 1)`) or `"weighted"` (`gamma_t^2 /
        sum gamma_i^2`, the averaging of `optax.contrib.schedule_free`) (static).

    Returns:
      An :class:`~ojax.core.OCOLearner` with params :class:`ScheduleFreeParams`.

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax import losses, parameter_free, run_oco
      >>> params = parameter_free.ScheduleFreeParams(jnp.array(0.5), jnp.array(0.9),
      ...                                            jnp.array(0.0))
      >>> zs = jnp.tile(jnp.array([[0.3, -0.4]]), (200, 1))  # f(w) = ||w - z||^2 / 2
      >>> state, tr = run_oco(parameter_free.schedule_free_sgd(), params, jnp.zeros(2), zs,
      ...                     losses.quadratic_objective)
      >>> print(round(float(tr.loss.mean()), 4))  # mean loss over the run
      0.0013
      >>> print(parameter_free.schedule_free_average(state).round(3))  # x_T
      [ 0.3 -0.4]
    """
    check_choice("averaging", averaging, AVERAGING)

    def init(params: ScheduleFreeParams, x0: Array) -> ScheduleFreeState:
        x0 = jnp.asarray(x0)
        return ScheduleFreeState(x0, x0, jnp.zeros((), x0.dtype), jnp.zeros((), jnp.int32))

    def iterate(state: ScheduleFreeState, params: ScheduleFreeParams) -> Array:
        return (1 - params.beta) * state.z + params.beta * state.x

    def update(state: ScheduleFreeState, params: ScheduleFreeParams, grad: Array):
        count = state.count + 1
        t = count.astype(grad.dtype)
        warm = params.warmup_steps > 0
        ramp = jnp.minimum(1.0, t / jnp.where(warm, params.warmup_steps, 1.0))
        gamma = params.learning_rate * jnp.where(warm, ramp, 1.0)
        z = state.z - gamma * grad
        weight_sum = state.weight_sum + gamma**2
        c = 1.0 / (t + 1.0) if averaging == "uniform" else gamma**2 / weight_sum
        x = (1 - c) * state.x + c * z
        return ScheduleFreeState(z, x, weight_sum, count)

    def check_params(params: ScheduleFreeParams) -> None:
        check_positive("learning_rate", params.learning_rate)
        check_range("beta", params.beta, 0.0, 1.0)
        check_nonnegative("warmup_steps", params.warmup_steps)

    return OCOLearner(init, iterate, update, check_params)


__all__ = [
    "AVERAGING",
    "ScheduleFreeParams",
    "ScheduleFreeState",
    "schedule_free_average",
    "schedule_free_sgd",
]
