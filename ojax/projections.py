"""Euclidean projections onto the feasible sets of the OCO learners.

Thin wrappers over ``optax.projections`` with the set chosen by a static name and its size a
runtime value (so it can be vmapped):

* ``"none"``: the identity (unconstrained);
* ``"l2_ball"``: ``{w : ||w|| <= radius}``, ``P(u) = u / max(1, ||u|| / radius)``;
* ``"box"``: ``[-radius, radius]^d``;
* ``"simplex"``: ``{w >= 0 : sum(w) = radius}`` (the probability simplex at radius 1).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax.projections as op

from ojax.validation import check_choice

Array = jax.Array

SETS = ("none", "l2_ball", "box", "simplex")


def l2_ball(w: Array, radius: Array | float = 1.0) -> Array:
    """Projection onto the L2 ball of ``radius`` centred at 0."""
    return op.projection_l2_ball(w, radius)


def box(w: Array, radius: Array | float = 1.0) -> Array:
    """Projection onto the box ``[-radius, radius]^d`` (coordinate-wise clipping)."""
    return op.projection_box(w, -radius, radius)


def simplex(w: Array, radius: Array | float = 1.0) -> Array:
    """Projection onto ``{w >= 0 : sum(w) = radius}``."""
    return op.projection_simplex(w, radius)


def project(kind: str, w: Array, radius: Array | float = 1.0) -> Array:
    """Projects ``w`` onto the set named ``kind`` (static) of size ``radius`` (runtime)."""
    if kind == "none":
        return w
    if kind == "l2_ball":
        return l2_ball(w, radius)
    if kind == "box":
        return box(w, radius)
    if kind == "simplex":
        return simplex(w, radius)
    check_choice("projection", kind, SETS)
    raise AssertionError  # unreachable

