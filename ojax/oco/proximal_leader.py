"""Per-coordinate FTRL-Proximal with L1 and L2 regularization (McMahan et al. 2013, Algorithm 1).

Per coordinate `i`, from `z_i = n_i = 0`:

    w_{t,i} = 0                                                  if |z_i| <= lambda1
            = -(z_i - sgn(z_i) lambda1) / ((beta + sqrt(n_i)) / alpha + lambda2)   otherwise
    sigma_i = (sqrt(n_i + g_i^2) - sqrt(n_i)) / alpha
    z_i <- z_i + g_i - sigma_i w_{t,i},   n_i <- n_i + g_i^2

with `g_t` the gradient at `w_t`. This is FTRL on the linearized losses with the proximal
regularizers `sum_s (sigma_{s,i} / 2) (w_i - w_{s,i})^2` (per-coordinate learning rates
`eta_{t,i} = alpha / (beta + sqrt(n_{t,i}))`) plus `lambda1 ||w||_1 + (lambda2 / 2) ||w||_2^2`,
in closed form. The paper's loop touches only the coordinates of the example's nonzero features;
a zero gradient coordinate changes neither `z_i` nor `n_i`, so running the update on every
coordinate gives the same points. At `lambda1 = lambda2 = 0` the points are those of
unconstrained diagonal AdaGrad (:func:`ojax.oco.adagrad`) with `eta = alpha` and
`delta = beta`. The paper (an engineering report) states no regret bound.

References:
  McMahan, H. B., Holt, G., Sculley, D., et al. (2013). Ad click prediction: a view from the
  trenches. KDD.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ojax.core import Array, OCOLearner, learner_factory, scalars
from ojax.validation import InputError, check_nonnegative, check_positive


class FTRLProximalParams(NamedTuple):
    """The hyperparameters of FTRLProximal: a pytree of arrays passed at call time.

    Attributes:
      alpha: alpha > 0 (the learning rate's scale), shape ()
      beta: beta >= 0, shape ()
      lambda1: l1 strength >= 0, shape ()
      lambda2: l2 strength >= 0, shape ()
    """

    alpha: Array  # alpha > 0 (the learning rate's scale), shape ()
    beta: Array  # beta >= 0, shape ()
    lambda1: Array  # L1 strength >= 0, shape ()
    lambda2: Array  # L2 strength >= 0, shape ()

    @classmethod
    def default(cls, dtype: Any = None) -> FTRLProximalParams:
        """`alpha = 0.5`, `beta = 1`, `lambda1 = lambda2 = 0.01`."""
        return cls(*scalars(0.5, 1.0, 0.01, 0.01, dtype=dtype))


class FTRLProximalState(NamedTuple):
    """The state of FTRLProximal: a pytree of arrays, carried from step to step.

    Attributes:
      z: z_i, shape (d,)
      n: n_i = sum of g_i^2, shape (d,)
    """

    z: Array  # z_i, shape (d,)
    n: Array  # n_i = sum of g_i^2, shape (d,)


@learner_factory
def ftrl_proximal() -> OCOLearner:
    """Per-coordinate FTRL-Proximal with L1 and L2 (unconstrained; it starts at `w = 0`).

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax import losses, oco, run_oco
      >>> params = oco.FTRLProximalParams(jnp.array(1.0), jnp.array(1.0), jnp.array(0.5),
      ...                                 jnp.array(0.0))
      >>> zs = jnp.array([[1.0, 0.2], [1.0, 0.2], [1.0, 0.2]])
      >>> _, tr = run_oco(oco.ftrl_proximal(), params, jnp.zeros(2), zs,
      ...                 losses.linear_objective, store_iterates=True)
      >>> print(tr.prediction[:, 1])  # the small coordinate stays exactly 0 (L1)
      [0. 0. 0.]
    """

    def init(params: FTRLProximalParams, x0: Array) -> FTRLProximalState:
        return FTRLProximalState(jnp.zeros_like(x0), jnp.zeros_like(x0))

    def iterate(state: FTRLProximalState, params: FTRLProximalParams) -> Array:
        z = state.z
        scale = (params.beta + jnp.sqrt(state.n)) / params.alpha + params.lambda2
        active = (jnp.abs(z) > params.lambda1) & (scale > 0)  # z != 0 implies n > 0
        shrunk = z - jnp.sign(z) * params.lambda1
        return jnp.where(active, -shrunk / jnp.where(active, scale, 1.0), 0.0)

    def update(state: FTRLProximalState, params: FTRLProximalParams, grad: Array):
        w = iterate(state, params)
        n = state.n + grad**2
        sigma = (jnp.sqrt(n) - jnp.sqrt(state.n)) / params.alpha
        return FTRLProximalState(state.z + grad - sigma * w, n)

    def check_params(params: FTRLProximalParams) -> None:
        check_positive("alpha", params.alpha)
        check_nonnegative("beta", params.beta)
        check_nonnegative("lambda1", params.lambda1)
        check_nonnegative("lambda2", params.lambda2)

    def check_start(params: FTRLProximalParams, x0: Array) -> None:
        if isinstance(x0, jax.core.Tracer):
            return
        w = np.asarray(x0)
        if np.any(w != 0):
            raise InputError(
                "x0 must be zeros for ftrl_proximal (Algorithm 1 starts at w = 0, z = n = 0), "
                f"got a point with {int(np.count_nonzero(w))} nonzero coordinate(s)"
            )

    return OCOLearner(init, iterate, update, check_params, check_start)


__all__ = ["FTRLProximalParams", "FTRLProximalState", "ftrl_proximal"]
