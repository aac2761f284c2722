"""Online mirror descent with a general mirror map (p-norm, quadratic, negative entropy).

    grad psi(w'_{t+1}) = grad psi(w_t) - eta g_t,   w_{t+1} = argmin_{w in S} B_psi(w, w'_{t+1})

`B_psi(u, w) = psi(u) - psi(w) - <grad psi(w), u - w>` is the Bregman divergence. The maps:

* `"p_norm"`: `psi(w) = ||w||_q^2 / (2 (q - 1))`, `q` in (1, 2]: 1-strongly convex w.r.t.
  `||.||_q`, whose dual norm is `||.||_p` with `1/p + 1/q = 1`; `grad psi*(theta) =
  sign(theta) |theta|^(p-1) / ((p - 1) ||theta||_p^(p-2))`. `q = 2` is gradient descent.
* `"quadratic"`: `psi(w) = 0.5 w'Aw`, `A` symmetric positive definite (a scalar `a`
  for `a I`, a diagonal `(d,)` or a matrix `(d, d)`): 1-strongly convex w.r.t. `||w||_A =
  sqrt(w'Aw)`, dual norm `||g||_{A^-1}`; the step is `w - eta A^-1 g`.
* `"entropy"`: `psi(w) = sum_i w_i log w_i` on the probability simplex: 1-strongly convex
  w.r.t. `||.||_1` (Pinsker), dual norm `||.||_inf`; the Bregman projection normalizes, so
  `w_{t+1}` is proportional to `w_t exp(-eta g_t)`: exponentiated gradient / Hedge
  (:func:`ojax.oco.hedge` computes the same points in dual-averaging form).

Domains: the whole space (`"none"`) or, for `p_norm` and `quadratic`, the ball of the
map's own norm (`"ball"`: `||w||_q <= radius` or `||w||_A <= radius`), where the Bregman
projection is the rescaling `w min(1, radius / ||w||)`; the simplex for `entropy`. From any
`w_1` in the domain, for every `u` in it and a sigma-strongly convex `psi` (sigma = 1 here):

    Regret(u) <= B_psi(u, w_1) / eta + (eta / (2 sigma)) sum_t ||g_t||_*^2

The state holds `grad psi(w_t)` (the dual point; for the entropy `log w_t`); both maps'
gradients are 1-homogeneous, so the projection rescales the dual point by the same factor.

References:
  Nemirovski, A., Yudin, D. (1983). Problem complexity and method efficiency in optimization.
  Beck, A., Teboulle, M. (2003). Mirror descent and nonlinear projected subgradient methods.
  Orabona, F. (2019). A Modern Introduction to Online Learning, ch. 6.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ojax.core import Array, OCOLearner, learner_factory, scalars
from ojax.validation import InputError, check_choice, check_positive, check_range

MIRROR_MAPS = ("p_norm", "quadratic", "entropy")
DOMAINS = {"p_norm": ("none", "ball"), "quadratic": ("none", "ball"), "entropy": ("simplex",)}


class OMDParams(NamedTuple):
    """The hyperparameters of OMD: a pytree of arrays passed at call time.

    Attributes:
      learning_rate: eta > 0, shape ()
      radius: radius of the "ball" domain (unused otherwise), shape ()
      mirror: q in (1, 2] (p_norm); A: (), (d,) or (d, d) (quadratic); unused (entropy)
    """

    learning_rate: Array  # eta > 0, shape ()
    radius: Array  # radius of the "ball" domain (unused otherwise), shape ()
    mirror: Array  # q in (1, 2] (p_norm); A: (), (d,) or (d, d) (quadratic); unused (entropy)

    @classmethod
    def default(cls, dtype: Any = None) -> OMDParams:
        """`learning_rate = 0.1`, `radius = 1`, `mirror = 1.5` (the p-norm map's `q`;
        a scalar `A` of the quadratic map; unused by the entropy)."""
        return cls(*scalars(0.1, 1.0, 1.5, dtype=dtype))


class OMDState(NamedTuple):
    """The state of OMD: a pytree of arrays, carried from step to step.

    Attributes:
      dual: grad psi(w_t) (entropy: log w_t), shape (d,)
    """

    dual: Array  # grad psi(w_t) (entropy: log w_t), shape (d,)


def _power_map(v: Array, r: Array) -> Array:
    """`sign(v) |v|^(r-1) / ||v||_r^(r-2)` (the gradient of `0.5 ||v||_r^2`), scaled by
    `max |v|` so that no power overflows; 0 at `v = 0`."""
    top = jnp.max(jnp.abs(v))
    safe = jnp.where(top > 0, top, 1.0)
    a = jnp.abs(v) / safe
    norm = jnp.sum(a**r) ** (1.0 / r)
    return jnp.where(top > 0, jnp.sign(v) * safe * a ** (r - 1.0) / norm ** (r - 2.0), 0.0)


def _norm(v: Array, r: Array) -> Array:
    top = jnp.max(jnp.abs(v))
    safe = jnp.where(top > 0, top, 1.0)
    return top * jnp.sum((jnp.abs(v) / safe) ** r) ** (1.0 / r)


def _a_times(a: Array, v: Array) -> Array:
    return a @ v if jnp.ndim(a) == 2 else a * v


def _a_solve(a: Array, v: Array) -> Array:
    return jnp.linalg.solve(a, v) if jnp.ndim(a) == 2 else v / a


def mirror_gradient(mirror_map: str, w: Array, mirror: Array) -> Array:
    """`grad psi(w)` (for the entropy `log w`, the constant 1 dropped)."""
    if mirror_map == "p_norm":
        return _power_map(w, mirror) / (mirror - 1.0)
    if mirror_map == "quadratic":
        return _a_times(mirror, w)
    return jnp.log(w)


def mirror_inverse(mirror_map: str, theta: Array, mirror: Array) -> Array:
    """`grad psi*(theta)` (for the entropy the softmax: the simplex's normalization)."""
    if mirror_map == "p_norm":
        p = mirror / (mirror - 1.0)
        return _power_map(theta, p) / (p - 1.0)
    if mirror_map == "quadratic":
        return _a_solve(mirror, theta)
    return jax.nn.softmax(theta)


def map_norm(mirror_map: str, w: Array, mirror: Array) -> Array:
    """The norm psi is strongly convex in: `||w||_q`, `||w||_A` or `||w||_1`."""
    if mirror_map == "p_norm":
        return _norm(w, mirror)
    if mirror_map == "quadratic":
        return jnp.sqrt(jnp.vdot(w, _a_times(mirror, w)))
    return jnp.sum(jnp.abs(w))


def _check_matrix(a: np.ndarray) -> None:
    """A positive scalar or diagonal (ndim <= 1), or SPD matrices on the last two axes."""
    if a.ndim <= 1:
        check_positive("mirror (A)", a)
        return
    if a.shape[-1] != a.shape[-2] or not np.allclose(a, np.swapaxes(a, -1, -2), rtol=1e-6):
        raise InputError(f"mirror (A) must be a symmetric matrix, got shape {a.shape}")
    low = float(np.linalg.eigvalsh(a.astype(np.float64)).min())
    if not low > 0:
        raise InputError(f"mirror (A) must be positive definite, got smallest eigenvalue {low!r}")


def _concrete(*values: object) -> bool:
    return not any(isinstance(v, jax.core.Tracer) for v in values)


@learner_factory
def mirror_descent(mirror_map: str = "p_norm", feasible_set: str | None = None) -> OCOLearner:
    """Online mirror descent (greedy form, Bregman projection) with the given mirror map.

    Args:
      mirror_map: one of :data:`MIRROR_MAPS` (static).
      feasible_set: `"none"` (default) or `"ball"` for `p_norm` / `quadratic`;
        `"simplex"` (default) for `entropy` (static).

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax import losses, oco, run_oco
      >>> params = oco.OMDParams(jnp.array(1.0), jnp.array(1.0), jnp.array(2.0))
      >>> _, tr = run_oco(oco.mirror_descent("p_norm"), params, jnp.zeros(2),
      ...                 jnp.array([[1.0, 0.0], [0.0, 1.0]]), losses.linear_objective,
      ...                 store_iterates=True)
      >>> print(tr.prediction)
      [[ 0.  0.]
       [-1.  0.]]
    """
    check_choice("mirror_map", mirror_map, MIRROR_MAPS)
    domain = DOMAINS[mirror_map][0] if feasible_set is None else feasible_set
    check_choice(f"feasible_set (mirror map {mirror_map!r})", domain, DOMAINS[mirror_map])

    def init(params: OMDParams, x0: Array) -> OMDState:
        return OMDState(mirror_gradient(mirror_map, x0, jnp.asarray(params.mirror, x0.dtype)))

    def iterate(state: OMDState, params: OMDParams) -> Array:
        return mirror_inverse(mirror_map, state.dual, jnp.asarray(params.mirror, state.dual.dtype))

    def update(state: OMDState, params: OMDParams, grad: Array) -> OMDState:
        theta = state.dual - params.learning_rate * grad
        if mirror_map == "entropy":
            return OMDState(theta - jax.scipy.special.logsumexp(theta))
        if domain == "ball":
            mirror = jnp.asarray(params.mirror, theta.dtype)
            norm = map_norm(mirror_map, mirror_inverse(mirror_map, theta, mirror), mirror)
            theta = theta * (params.radius / jnp.maximum(norm, params.radius))
        return OMDState(theta)

    def check_params(params: OMDParams) -> None:
        check_positive("learning_rate", params.learning_rate)
        check_positive("radius", params.radius)
        if mirror_map == "p_norm":
            check_range("mirror (q of the p-norm map)", params.mirror, 1.0, 2.0, low_open=True)
        elif mirror_map == "quadratic" and _concrete(params.mirror):
            _check_matrix(np.asarray(params.mirror))

    def check_start(params: OMDParams, x0: Array) -> None:
        if not _concrete(x0, params.mirror, params.radius):
            return  # a grid is checked point by point by vmap
        w, a = np.asarray(x0, np.float64), np.asarray(params.mirror, np.float64)
        if mirror_map == "entropy":
            check_positive("x0 (a point of the simplex)", w)
            if abs(float(w.sum()) - 1.0) > 1e-5:
                raise InputError(f"x0 must lie on the simplex (sum 1), got sum {float(w.sum())!r}")
            return
        if mirror_map == "quadratic" and a.ndim >= 1 and a.shape[-1] != w.shape[-1]:
            raise InputError(f"mirror (A) has shape {a.shape}; x0 has shape {w.shape}")
        if (
            domain != "ball"
            or np.ndim(params.radius) != 0
            or a.ndim > (0 if mirror_map == "p_norm" else 2)
        ):
            return  # grids: checked point by point under vmap
        if mirror_map == "p_norm":
            norm = float(np.sum(np.abs(w) ** a) ** (1.0 / a))
        else:
            norm = float(np.sqrt(w @ (a @ w if a.ndim == 2 else a * w)))
        if norm > float(params.radius) * (1 + 1e-5):
            raise InputError(
                f"x0 must lie in the ball of radius {float(params.radius)!r} of the mirror map's "
                f"norm, got norm {norm!r}"
            )

    return OCOLearner(init, iterate, update, check_params, check_start)


__all__ = [
    "DOMAINS",
    "MIRROR_MAPS",
    "OMDParams",
    "OMDState",
    "map_norm",
    "mirror_descent",
    "mirror_gradient",
    "mirror_inverse",
]
