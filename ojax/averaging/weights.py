"""Discounts and averaging weights in forms that survive float32 and long horizons.

The geometric average of the iterates `w_0..w_n` with discount `rho = exp(log_discount)`,
`log_discount <= 0`, is

    w_tilde_n = c_n sum_{t=0..n} rho^t w_t,   c_n = (1 - rho) / (1 - rho^{n+1})  (1/(n+1) at rho=1)

Numerical rules (each a measured float32 pitfall): the discount is carried as `log rho` and
formed with `log1p` (at `eta lambda = 2e-7`, `1 - eta lambda` in float32 is 19% off the
intended regularization); `rho^t = exp(t log rho)`, never a running product; weight masses
`sum_{j<L} rho^j = expm1(L log rho) / expm1(log rho)` come from counts and `expm1`, never from
accumulation; a chunk is normalized by its OWN mass (its first weight is 1), never by the global
one, so underflow of `rho^t` (`rho = 0.03` underflows after ~25 steps in float32) gives exact
zeros and never `0/0`.

Two conventions link a discount to a ridge parameter `lambda` for SGD with step `eta`:

* `"exact"` (the default): `rho = 1 / (1 + eta lambda)`; then regularized SGD with step
  `gamma = eta / (1 + eta lambda)` and `rho = 1 - gamma lambda` satisfies the expectation
  identity of Neu & Rosasco exactly, and the limit is ridge with `lambda` itself;
* `"paper"`: the paper's written weights `rho = 1 - eta lambda` (needs `0 <= lambda <
  1/eta`); the limit is ridge with `lambda / (1 - eta lambda)`.

References:
  Neu, G. and Rosasco, L. (2018). Iterate averaging as regularization for stochastic gradient
  descent. COLT.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from ojax.core import Array
from ojax.validation import InputError, check_choice, check_positive, check_range

CONVENTIONS = ("exact", "paper")


def check_log_discount(name: str, log_discount: ArrayLike) -> None:
    """Raises unless every value is a finite `log rho <= 0` (`rho` in `(0, 1]`)."""
    check_range(name, log_discount, None, 0.0)


def log_discount_from_regularization(
    learning_rate: ArrayLike, regularization: ArrayLike, convention: str = "exact"
) -> Array:
    """`log rho` for SGD step `eta` and ridge parameter `lambda` (float32-safe).

        exact:  log rho = -log1p(eta lambda)        (lambda in [0, inf))
        paper:  log rho =  log1p(-eta lambda)       (lambda in [0, 1/eta))

    Args:
      learning_rate: SGD step `eta > 0` (broadcasts against `regularization`).
      regularization: `lambda` (any shape).
      convention: `"exact"` (default) or `"paper"`.

    Returns:
      `log_discount` with the broadcast shape (`<= 0`).

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax import averaging
      >>> log_discount = averaging.log_discount_from_regularization(
      ...     jnp.float32(0.1), jnp.float32(2e-6)
      ... )
      >>> print(f"{float(averaging.regularization_from_log_discount(0.1, log_discount)):.6e}")
      2.000000e-06
    """
    check_choice("convention", convention, CONVENTIONS)
    check_positive("learning_rate", learning_rate)
    check_regularization(learning_rate, regularization, convention)
    eta = jnp.asarray(learning_rate)
    lam = jnp.asarray(regularization)
    dtype = jnp.result_type(eta, lam)
    x = eta.astype(dtype) * lam.astype(dtype)
    return -jnp.log1p(x) if convention == "exact" else jnp.log1p(-x)


def regularization_from_log_discount(
    learning_rate: ArrayLike, log_discount: ArrayLike, convention: str = "exact"
) -> Array:
    """Inverse of :func:`log_discount_from_regularization`.

    exact:  lambda = expm1(-log rho) / eta      paper:  lambda = -expm1(log rho) / eta
    """
    check_choice("convention", convention, CONVENTIONS)
    check_positive("learning_rate", learning_rate)
    check_log_discount("log_discount", log_discount)
    log_discount = jnp.asarray(log_discount)
    eta = jnp.asarray(learning_rate).astype(log_discount.dtype)
    if convention == "exact":
        return jnp.expm1(-log_discount) / eta
    return -jnp.expm1(log_discount) / eta


def effective_regularization(learning_rate: ArrayLike, log_discount: ArrayLike) -> Array:
    """The ridge parameter that geometric averaging with `log_discount` converges to:
    `(1/rho - 1) / eta = expm1(-log rho) / eta` (whatever convention produced `rho`)."""
    return regularization_from_log_discount(learning_rate, log_discount, "exact")


def linked_step_size(learning_rate: ArrayLike, regularization: ArrayLike) -> Array:
    """The regularized-SGD step `gamma = eta / (1 + eta lambda)` linked to SGD step `eta`.

    With it, `rho = 1 - gamma lambda = 1 / (1 + eta lambda)` and
    `eta = gamma / (1 - gamma lambda)`: the exact-convention pairing of the identity.
    """
    eta = jnp.asarray(learning_rate)
    lam = jnp.asarray(regularization)
    dtype = jnp.result_type(eta, lam)
    eta = eta.astype(dtype)
    return eta / (1 + eta * lam.astype(dtype))


def check_regularization(
    learning_rate: ArrayLike, regularization: ArrayLike, convention: str = "exact"
) -> None:
    """Raises unless `lambda >= 0` (and, for `"paper"`, `eta lambda < 1`: `rho > 0`).

    Checked on concrete values only (free under `jit` / `vmap`).
    """
    if convention == "exact":
        check_range("regularization", regularization, 0.0, None)
        return
    if isinstance(learning_rate, jax.core.Tracer) or isinstance(regularization, jax.core.Tracer):
        return
    eta = np.asarray(learning_rate, dtype=np.float64)
    lam = np.asarray(regularization, dtype=np.float64)
    check_range("regularization", lam, 0.0, None)
    bad = ~(np.broadcast_to(lam * eta, np.broadcast(lam, eta).shape) < 1.0)
    if bad.any():
        top = float(np.min(1.0 / np.broadcast_to(eta, bad.shape)[bad]))
        raise InputError(
            "regularization must lie in [0, 1/learning_rate) = [0, "
            f"{top!r}) so that 1 - learning_rate * regularization > 0, got "
            f"{lam[bad].ravel()[:4].tolist()}"
        )


# ---------------------------------------------------------------------------------------------
# weight formulas (jittable; log_discount may be any shape, lengths broadcast against it)
# ---------------------------------------------------------------------------------------------


def _safe(log_discount: Array) -> tuple[Array, Array]:
    """`(is_zero, log_discount with zeros replaced by -1)` to keep unselected branches finite."""
    zero = log_discount == 0
    return zero, jnp.where(zero, -1.0, log_discount).astype(log_discount.dtype)


def mass(log_discount: Array, length: Array) -> Array:
    """`Z(L) = sum_{j<L} rho^j = expm1(L log rho) / expm1(log rho)` (`L` at `rho = 1`)."""
    zero, log_discount = _safe(jnp.asarray(log_discount))
    length = jnp.asarray(length).astype(log_discount.dtype)
    zero, log_discount, length = jnp.broadcast_arrays(zero, log_discount, length)
    return jnp.where(zero, length, jnp.expm1(length * log_discount) / jnp.expm1(log_discount))


def inverse_mass(log_discount: Array, length: Array) -> Array:
    """`1 / Z(max(L, 1)) = expm1(log rho) / expm1(L log rho)` (`1 / L` at `rho = 1`).

    The scale that turns `sum_{j<L} rho^j w_j` into a local average (an empty block gets 1).
    """
    zero, log_discount = _safe(jnp.asarray(log_discount))
    length = jnp.maximum(jnp.asarray(length).astype(log_discount.dtype), 1.0)
    return jnp.where(zero, 1.0 / length, jnp.expm1(log_discount) / jnp.expm1(length * log_discount))


def local_weights(log_discount: Array, block_size: int, length: ArrayLike) -> Array:
    """Normalized local weights `rho^j / Z(L)` for `j = 0..block_size-1` (0 for `j >= L`).

    Args:
      log_discount: `(...,)` discounts.
      block_size: static number of slots.
      length: number of real iterates in the block (broadcasts against `log_discount`).

    Returns:
      `(..., block_size)` weights summing to 1 over the real slots (all 0 when `L = 0`).

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax.averaging import weights
      >>> w = weights.local_weights(jnp.log(0.5), 4, 2)  # (1, 0.5) / 1.5, then empty slots
      >>> print(w.round(4))
      [0.6667 0.3333 0.     0.    ]
    """
    zero, log_discount = _safe(jnp.asarray(log_discount))
    length = jnp.asarray(length).astype(log_discount.dtype)
    zero, log_discount, length = jnp.broadcast_arrays(zero, log_discount, length)
    log_discount, zero, length = log_discount[..., None], zero[..., None], length[..., None]
    shape = (1,) * (log_discount.ndim - 1) + (block_size,)
    j = jnp.arange(block_size, dtype=log_discount.dtype).reshape(shape)
    safe_len = jnp.maximum(length, 1.0)
    w = jnp.exp(j * log_discount) * (jnp.expm1(log_discount) / jnp.expm1(safe_len * log_discount))
    w = jnp.where(zero, 1.0 / safe_len, w)
    return jnp.where(j < length, w, jnp.zeros((), log_discount.dtype))


def merge_weights(log_discount: Array, left_length: ArrayLike, right_length: ArrayLike):
    """Weights `(a, b)` with `merged = a * A_left + b * A_right` for two adjacent chunks.

        a = Z(L) / Z(L + L') = expm1(L log rho) / expm1((L + L') log rho)
        b = rho^L Z(L') / Z(L + L') = exp(L log rho) expm1(L' log rho) / expm1((L + L') log rho)

    (`L / (L + L')` and `L' / (L + L')` at `rho = 1`; an empty chunk gets weight 0).
    """
    zero, log_discount = _safe(jnp.asarray(log_discount))
    left = jnp.asarray(left_length).astype(log_discount.dtype)
    right = jnp.asarray(right_length).astype(log_discount.dtype)
    zero, log_discount, left, right = jnp.broadcast_arrays(zero, log_discount, left, right)
    total = left + right
    empty = total == 0
    den = jnp.where(empty, -1.0, jnp.expm1(total * log_discount))
    a = jnp.expm1(left * log_discount) / den
    b = jnp.exp(left * log_discount) * jnp.expm1(right * log_discount) / den
    safe_total = jnp.where(empty, 1.0, total)
    a = jnp.where(zero, left / safe_total, a)
    b = jnp.where(zero, right / safe_total, b)
    nothing = jnp.zeros((), log_discount.dtype)
    return jnp.where(empty, nothing, a), jnp.where(empty, nothing, b)


def chunk_weight(
    log_discount: Array, start: ArrayLike, length: ArrayLike, total: ArrayLike
) -> Array:
    """`alpha_k = rho^{s_k} (1 - rho^{L_k}) / (1 - rho^{n+1})` of a chunk in the whole average.

        alpha_k = exp(s_k log rho) expm1(L_k log rho) / expm1((n+1) log rho)

    (`L_k / (n+1)` at `rho = 1`.)
    """
    zero, log_discount = _safe(jnp.asarray(log_discount))
    dtype = log_discount.dtype
    start = jnp.asarray(start).astype(dtype)
    length = jnp.asarray(length).astype(dtype)
    total = jnp.asarray(total).astype(dtype)
    zero, log_discount, start, length, total = jnp.broadcast_arrays(
        zero, log_discount, start, length, total
    )
    alpha = (
        jnp.exp(start * log_discount)
        * jnp.expm1(length * log_discount)
        / jnp.expm1(total * log_discount)
    )
    return jnp.where(zero, length / total, alpha)


def geometric_weights(log_discount: Array, num_iterates: int) -> Array:
    """The full weight rows `c_n rho^t`, `t = 0..n` (`num_iterates = n + 1`).

    Returns `(..., n+1)`.
    """
    return local_weights(jnp.asarray(log_discount), num_iterates, num_iterates)


def tail_weights(tail_start: Array, num_iterates: int, dtype: jnp.dtype) -> Array:
    """Rows `1{t > tau} / (n - tau)`, `t = 0..n`, for each tail start `tau`.

    Returns `(..., n+1)`.
    """
    tau = jnp.asarray(tail_start)[..., None]
    t = jnp.arange(num_iterates, dtype=tau.dtype).reshape((1,) * (tau.ndim - 1) + (-1,))
    count = (num_iterates - 1 - tau).astype(dtype)
    return jnp.where(t > tau, 1.0 / count, jnp.zeros((), dtype)).astype(dtype)


__all__ = [
    "CONVENTIONS",
    "check_log_discount",
    "check_regularization",
    "chunk_weight",
    "effective_regularization",
    "geometric_weights",
    "inverse_mass",
    "linked_step_size",
    "local_weights",
    "log_discount_from_regularization",
    "mass",
    "merge_weights",
    "regularization_from_log_discount",
    "tail_weights",
]
