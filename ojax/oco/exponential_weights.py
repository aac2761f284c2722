"""Hedge / exponentiated gradient: online mirror descent with the negative entropy on the simplex,
in dual-averaging form.

    theta_t = -sum_{s < t} g_s,   w_t = grad psi*(eta theta_t) = softmax(log x0 + eta theta_t)

With `psi(w) = sum w_i log w_i` the conjugate is `sum exp(theta_i - 1)`; normalizing onto the
simplex gives the softmax, so `w_t` is proportional to `x0 * exp(-eta L_t)` with `L_t` the
cumulative losses. Over m experts with losses in [0, 1] and `x0` uniform:
`Regret <= ln(m) / eta + eta T / 8`, `sqrt(T ln(m) / 2)` at `eta = sqrt(8 ln(m) / T)`.

References:
  Freund, Y., Schapire, R. (1997). A decision-theoretic generalization of on-line learning.
  Kivinen, J., Warmuth, M. (1997). Exponentiated gradient versus gradient descent.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from ojax.core import Array, OCOLearner, learner_factory, scalars
from ojax.validation import check_positive


class HedgeParams(NamedTuple):
    """The hyperparameters of Hedge: a pytree of arrays passed at call time.

    Attributes:
      learning_rate: eta > 0, shape ()
    """

    learning_rate: Array  # eta > 0, shape ()

    @classmethod
    def default(cls, dtype: Any = None) -> HedgeParams:
        """`learning_rate = 0.5`."""
        return cls(*scalars(0.5, dtype=dtype))


class HedgeState(NamedTuple):
    """The state of Hedge: a pytree of arrays, carried from step to step.

    Attributes:
      log_prior: log x0, shape (m,)
      sum_grads: cumulative losses L_t, shape (m,)
    """

    log_prior: Array  # log x0, shape (m,)
    sum_grads: Array  # cumulative losses L_t, shape (m,)


@learner_factory
def hedge() -> OCOLearner:
    """Hedge / exponentiated gradient over the probability simplex (`x0` is the prior).

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax import losses, oco, run_oco
      >>> zs = jnp.array([[1.0, 0.0], [1.0, 0.0]])
      >>> _, tr = run_oco(oco.hedge(), oco.HedgeParams(jnp.array(1.0)), jnp.full(2, 0.5),
      ...                     zs, losses.linear_objective, store_iterates=True)
      >>> print(tr.prediction[:, 0].round(4))
      [0.5    0.2689]
    """

    def init(params: HedgeParams, x0: Array) -> HedgeState:
        return HedgeState(jnp.log(x0), jnp.zeros_like(x0))

    def iterate(state: HedgeState, params: HedgeParams) -> Array:
        return jax.nn.softmax(state.log_prior - params.learning_rate * state.sum_grads)

    def update(state: HedgeState, params: HedgeParams, grad: Array) -> HedgeState:
        return HedgeState(state.log_prior, state.sum_grads + grad)

    def check_params(params: HedgeParams) -> None:
        check_positive("learning_rate", params.learning_rate)

    def check_start(params: HedgeParams, x0: Array) -> None:
        check_positive("x0 (the prior over experts)", x0)

    return OCOLearner(init, iterate, update, check_params, check_start)


exponentiated_gradient = hedge
"""Alias: EG on the simplex is Hedge with the gradients as the experts' losses."""


__all__ = ["HedgeParams", "HedgeState", "hedge"]
