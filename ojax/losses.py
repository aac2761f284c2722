"""Losses of a scalar prediction, with a subgradient and a Lipschitz bound; OCO objectives.

A :class:`Loss` is `l(y_hat, y)` with `grad(y_hat, y)` a subgradient in `y_hat`; a linear
predictor `y_hat = <w, x>` then has the gradient `grad(y_hat, y) * x` in `w`.
`lipschitz(bound)` is a Lipschitz constant in `y_hat` when `|y_hat|, |y| <= bound`
(classification labels are +-1).

An :class:`Objective` is an OCO loss `f(w; z)` of the played point itself (the examples of the
online learning notes): linear `<w, z>` and quadratic `0.5 ||w - z||^2`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp

from ojax.validation import InputError

Array = jax.Array


class Loss(NamedTuple):
    """A convex (or 0-1) loss of a scalar prediction."""

    name: str
    value: Callable[[Array, Array], Array]
    grad: Callable[[Array, Array], Array]
    lipschitz: Callable[[float], float]


def _square_value(y_hat: Array, y: Array) -> Array:
    return 0.5 * (y_hat - y) ** 2


def _square_grad(y_hat: Array, y: Array) -> Array:
    return y_hat - y


def _absolute_value(y_hat: Array, y: Array) -> Array:
    return jnp.abs(y - y_hat)


def _absolute_grad(y_hat: Array, y: Array) -> Array:
    # +1 if y < y_hat, else -1: the tie goes to -1 (Denevi et al.'s convention).
    return jnp.where(y < y_hat, 1.0, -1.0).astype(jnp.result_type(y_hat, y))


def _hinge_value(y_hat: Array, y: Array) -> Array:
    return jnp.maximum(0.0, 1.0 - y * y_hat)


def _hinge_grad(y_hat: Array, y: Array) -> Array:
    return jnp.where(y * y_hat < 1.0, -y, jnp.zeros_like(y))


def _logistic_value(y_hat: Array, y: Array) -> Array:
    return jnp.logaddexp(0.0, -y * y_hat)


def _logistic_grad(y_hat: Array, y: Array) -> Array:
    return -y * jax.nn.sigmoid(-y * y_hat)


def _linear_value(y_hat: Array, y: Array) -> Array:
    return -y * y_hat


def _linear_grad(y_hat: Array, y: Array) -> Array:
    return -y * jnp.ones_like(y_hat)


def _zero_one_value(y_hat: Array, y: Array) -> Array:
    label = jnp.where(y_hat >= 0, 1.0, -1.0)  # sign with sign(0) = +1
    return (label != y).astype(jnp.result_type(y_hat, y))


def _zero_one_grad(y_hat: Array, y: Array) -> Array:
    return jnp.zeros_like(y_hat * y)


square = Loss("square", _square_value, _square_grad, lambda bound: 2.0 * bound)
"""``0.5 (y_hat - y)^2``; gradient ``y_hat - y``; Lipschitz ``2 B`` on ``[-B, B]``."""

absolute = Loss("absolute", _absolute_value, _absolute_grad, lambda bound: 1.0)
"""``|y - y_hat|``; subgradient ``+1`` if ``y < y_hat`` else ``-1`` (ties to -1); Lipschitz 1."""

hinge = Loss("hinge", _hinge_value, _hinge_grad, lambda bound: 1.0)
"""``max(0, 1 - y y_hat)`` for ``y`` in +-1; subgradient ``-y`` on a margin error; Lipschitz 1."""

logistic = Loss("logistic", _logistic_value, _logistic_grad, lambda bound: 1.0)
"""``log(1 + exp(-y y_hat))`` for ``y`` in +-1; Lipschitz 1."""

linear = Loss("linear", _linear_value, _linear_grad, lambda bound: bound)
"""``-y y_hat`` (a negated reward); gradient ``-y``; Lipschitz ``B``."""

zero_one = Loss("zero_one", _zero_one_value, _zero_one_grad, lambda bound: float("inf"))
"""``1[sign(y_hat) != y]`` with ``sign(0) = +1``; not convex, its gradient is 0."""


def _mismatch_value(y_hat: Array, y: Array) -> Array:
    return (y_hat != y).astype(jnp.float32)


mismatch = Loss("mismatch", _mismatch_value, _zero_one_grad, lambda bound: float("inf"))
"""``1[y_hat != y]`` for discrete predictions (experts' 0/1 labels); its gradient is 0."""

LOSSES: dict[str, Loss] = {
    loss.name: loss for loss in (square, absolute, hinge, logistic, linear, zero_one, mismatch)
}


def check_loss(loss: object) -> Loss:
    """`loss` itself if it is a :class:`Loss`, else an :class:`~ojax.InputError` saying what is
    (a function alone has no gradient or Lipschitz bound for the learners to use)."""
    if not isinstance(loss, Loss):
        raise InputError(
            f"loss: a Predictor is scored with an ojax.losses.Loss (one of {sorted(LOSSES)}, or "
            f"Loss(name, value, grad, lipschitz) of one's own), got {type(loss).__name__}"
        )
    return loss


class Objective(NamedTuple):
    """An OCO loss `f(w; z)` of the played point `w`."""

    name: str
    value: Callable[[Array, Array], Array]
    grad: Callable[[Array, Array], Array]


linear_objective = Objective("linear", lambda w, z: jnp.vdot(w, z), lambda w, z: z)
"""``f(w) = <w, z>``; gradient ``z``."""

quadratic_objective = Objective(
    "quadratic", lambda w, z: 0.5 * jnp.sum((w - z) ** 2), lambda w, z: w - z
)
"""``f(w) = 0.5 ||w - z||^2``; gradient ``w - z``."""

OBJECTIVES: dict[str, Objective] = {o.name: o for o in (linear_objective, quadratic_objective)}


__all__ = [
    "LOSSES",
    "Loss",
    "OBJECTIVES",
    "Objective",
    "absolute",
    "check_loss",
    "hinge",
    "linear",
    "linear_objective",
    "logistic",
    "mismatch",
    "quadratic_objective",
    "square",
    "zero_one",
]
