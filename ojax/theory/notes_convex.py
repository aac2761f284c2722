"""Checks of the online learning notes' convex analysis (spec: online_learning_basics): the
Fenchel conjugates of the notes' examples, the Fenchel-Young inequality, and strong convexity
of `psi` against smoothness of `psi*` (the theorem behind the mirror maps of
:mod:`ojax.oco.mirror`).

The examples: `psi = (lambda/2) ||w||^2` (`psi* = ||theta||^2 / (2 lambda)`), `psi = 0.5
w'Aw` (`0.5 theta' A^-1 theta`), the negative entropy `sum_i w_i log w_i` on `w > 0`
(`sum_i exp(theta_i - 1)`), and the indicator of the ball of radius `r` (its support
function `r ||theta||`). Every supremum is computed from the definition by a generic optimizer
(:func:`scipy.optimize.minimize`, BFGS), never from the closed form. Float64 throughout (NumPy
and SciPy; the mirror maps' gradients are the library's, in float64).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ojax.oco import mirror
from ojax.theory.base import IDENTITY_TOLERANCE, Check, CheckConfig, Outcome, as_measured

DIM = 5
LAMBDA = 2.0  # the squared norm's lambda
RADIUS = 1.5  # the ball's radius
Q = 1.5  # the p-norm map's q


def _matrix() -> np.ndarray:
    """A fixed SPD matrix with eigenvalues 0.5 .. 4 (the quadratic example's A)."""
    basis = np.linalg.qr(np.random.default_rng(0).normal(size=(DIM, DIM)))[0]
    return basis @ np.diag(np.linspace(0.5, 4.0, DIM)) @ basis.T


class Example(NamedTuple):
    """`psi` on the parametrization `w = point(v)` of its domain, and the notes' `psi*`."""

    psi: Callable[[np.ndarray], float]
    point: Callable[[np.ndarray], np.ndarray]
    conjugate: Callable[[np.ndarray], float]
    maximizer: Callable[[np.ndarray], np.ndarray]  # the closed-form argmax (grad psi*)
    penalty: Callable[[np.ndarray], float] = lambda v: 0.0  # on the parameter only


def _examples() -> dict[str, Example]:
    a = _matrix()
    a_inv = np.linalg.inv(a)

    def sphere(v):  # the sup of a linear function over the ball is on its sphere
        return RADIUS * v / np.linalg.norm(v)

    return {
        "squared-norm": Example(
            lambda w: LAMBDA / 2 * w @ w,
            lambda v: v,
            lambda t: t @ t / (2 * LAMBDA),
            lambda t: t / LAMBDA,
        ),
        "quadratic": Example(
            lambda w: 0.5 * w @ a @ w,
            lambda v: v,
            lambda t: 0.5 * t @ a_inv @ t,
            lambda t: a_inv @ t,
        ),
        "entropy": Example(
            lambda w: float(np.sum(w * np.log(w))),
            np.exp,  # w > 0
            lambda t: float(np.sum(np.exp(t - 1.0))),
            lambda t: np.exp(t - 1.0),
        ),
        "ball-indicator": Example(
            lambda w: 0.0,
            sphere,
            lambda t: RADIUS * float(np.linalg.norm(t)),
            lambda t: RADIUS * t / np.linalg.norm(t),
            # w(v) does not depend on ||v||: a penalty on ||v|| alone (it changes no value of
            # w) keeps BFGS from drifting outwards, where the gradient vanishes like 1/||v||
            lambda v: (v @ v - 1.0) ** 2,
        ),
    }


def numerical_conjugate(example: Example, theta: np.ndarray, start: np.ndarray) -> float:
    """`sup_w <w, theta> - psi(w)` by BFGS over the parametrization, from `start`."""

    def negative(v):
        w = example.point(v)
        return -(w @ theta - example.psi(w)) + example.penalty(v)

    from scipy import optimize  # here: SciPy's import is paid only by what uses it

    found = optimize.minimize(negative, start, method="BFGS", options={"gtol": 1e-11})
    w = example.point(found.x)
    return float(w @ theta - example.psi(w))


def _points(config: CheckConfig, stream: int, size: int) -> np.ndarray:
    """`(seeds, size, d)` test points `theta` (standard normal)."""
    rng = np.random.default_rng([config.seed, stream])
    return rng.normal(size=(config.num_seeds, size, DIM))


def _counts(config: CheckConfig) -> np.ndarray:
    return 2 ** np.arange(1, 5 if config.quick else 6)  # 2 .. 16 / 32 points


@functools.cache
def _conjugates(config: CheckConfig) -> Outcome:
    counts = _counts(config)
    thetas = _points(config, 0, int(counts[-1]))
    starts = _points(config, 1, int(counts[-1]))
    methods = {}
    for name, example in _examples().items():
        errors = np.array(
            [
                [
                    abs(example.conjugate(t) - numerical_conjugate(example, t, s))
                    for t, s in zip(ts, ss)
                ]
                for ts, ss in zip(thetas, starts)
            ]
        )
        largest = np.maximum.accumulate(errors, axis=1)[:, counts - 1]
        methods[name] = as_measured(largest, np.full(len(counts), IDENTITY_TOLERANCE))
    return Outcome(counts, methods)


def _fenchel_young(config: CheckConfig) -> Outcome:
    """Per seed one `theta`; candidates `w_j` around the closed-form maximizer (scales
    from 1 down to 1e-6); measured: `max_{j <= N} <w_j, theta> - psi(w_j)`, bound
    `psi*(theta)`. Falsifier: the squared norm with `lambda = 1/4` against `psi` itself
    in place of `psi*` (self-conjugate only at lambda = 1)."""
    counts = 4 ** np.arange(0, 4 if config.quick else 6)  # 1 .. 64 / 1024 candidates
    size = int(counts[-1])
    rng = np.random.default_rng([config.seed, 2])
    thetas = rng.normal(size=(config.num_seeds, DIM))
    noise = rng.normal(size=(config.num_seeds, size, DIM)) * np.geomspace(1.0, 1e-6, size)[:, None]
    examples = _examples()
    quarter = Example(lambda w: w @ w / 8, lambda v: v, lambda t: t @ t / 8, lambda t: 4 * t)
    cases = {**{k: (v, v.conjugate) for k, v in examples.items()}, "falsifier:psi*=psi": (
        quarter, quarter.psi)}  # fmt: skip
    methods = {}
    for name, (example, conjugate) in cases.items():
        measured, bound = np.empty((config.num_seeds, len(counts))), np.empty(config.num_seeds)
        for s, theta in enumerate(thetas):
            best = example.maximizer(theta)
            if name == "ball-indicator":  # candidates in the ball: shrink onto it
                w = best + noise[s]
                w = w * np.minimum(1.0, RADIUS / np.linalg.norm(w, axis=-1, keepdims=True))
            elif name == "entropy":
                w = best * np.exp(noise[s])  # positive
            else:
                w = best + noise[s]
            values = np.array([wj @ theta - example.psi(wj) for wj in w])
            measured[s] = np.maximum.accumulate(values)[counts - 1]
            bound[s] = conjugate(theta)
        methods[name] = as_measured(measured, np.repeat(bound[:, None], len(counts), 1))
    return Outcome(counts, methods)


MAPS = {  # the library's mirror maps and their parameter (sigma = 1 in map_norm)
    "p_norm": Q,
    "quadratic": None,
    "entropy": 1.0,
}


def _dual_norm(name: str, v: np.ndarray, parameter) -> np.ndarray:
    if name == "p_norm":
        return np.sum(np.abs(v) ** (Q / (Q - 1)), axis=-1) ** ((Q - 1) / Q)
    if name == "quadratic":
        return np.sqrt(np.einsum("...i,ij,...j->...", v, np.linalg.inv(parameter), v))
    return np.max(np.abs(v), axis=-1)


def _psi(name: str, w: np.ndarray, parameter) -> np.ndarray:
    if name == "p_norm":
        return np.sum(np.abs(w) ** Q, axis=-1) ** (2 / Q) / (2 * (Q - 1))
    if name == "quadratic":
        return 0.5 * np.einsum("...i,ij,...j->...", w, parameter, w)
    return np.sum(w * np.log(w), axis=-1)


def _pairwise(fn: Callable, name: str, arg: jax.Array, points: np.ndarray) -> np.ndarray:
    """`fn(name, p, arg)` of the library's mirror maps over `(S, N, d)` points, float64."""
    return np.asarray(jax.vmap(jax.vmap(lambda p: fn(name, p, arg)))(jnp.asarray(points)))


def _map_ratios(name: str, parameter, theta: np.ndarray, other: np.ndarray, scale: float):
    """Both directions of the theorem for one mirror map (its `psi` scaled by `scale`,
    measured in the unscaled map's norms): the smoothness ratios of `psi*` and the strong
    convexity ratios of `psi` (only at `scale = 1`), `(S, N)` each."""
    base = jnp.asarray(parameter, jnp.float64)
    arg = base * scale  # the quadratic map's A (the others are not scaled)
    gap = _pairwise(mirror.mirror_inverse, name, arg, theta) - _pairwise(
        mirror.mirror_inverse, name, arg, other
    )
    smooth = _pairwise(mirror.map_norm, name, base, gap) / _dual_norm(
        name, theta - other, parameter
    )
    w = _pairwise(mirror.mirror_inverse, name, base, theta)
    w2 = _pairwise(mirror.mirror_inverse, name, base, other)
    grad = _pairwise(mirror.mirror_gradient, name, base, w)
    # B_psi(w2, w); the entropy's dropped constant 1 cancels on the simplex
    bregman = _psi(name, w2, parameter) - _psi(name, w, parameter)
    bregman = bregman - np.sum(grad * (w2 - w), axis=-1)
    convex = 0.5 * _pairwise(mirror.map_norm, name, base, w2 - w) ** 2 / bregman
    return smooth, convex


def _smoothness(config: CheckConfig) -> Outcome:
    """`psi` 1-strongly convex w.r.t. `||.||` <=> `psi*` 1-smooth w.r.t. `||.||_*`,
    both directions on random pairs: `sup ||grad psi*(t) - grad psi*(t')|| / ||t - t'||_*`
    and `sup 0.5 ||w - w'||^2 / B_psi(w', w)`, each at most 1. The falsifier: the quadratic
    map with `A / 4` in `A`'s norms."""
    counts = 4 ** np.arange(1, 5 if config.quick else 7)  # 4 .. 256 / 4096 pairs
    size = int(counts[-1])
    rng = np.random.default_rng([config.seed, 3])
    methods = {}
    with jax.enable_x64(True):
        for name, given in MAPS.items():
            parameter = _matrix() if given is None else np.asarray(given)
            theta = rng.normal(size=(config.num_seeds, size, DIM))
            scale = 10.0 ** rng.uniform(-2.0, 0.0, (*theta.shape[:2], 1))  # 1e-2 .. 1
            other = theta + rng.normal(size=theta.shape) * scale  # (B_psi cancels below 1e-2)
            smooth, convex = _map_ratios(name, parameter, theta, other, 1.0)
            for label, ratios in (("psi* smooth", smooth), ("psi strongly convex", convex)):
                measured = np.maximum.accumulate(ratios, axis=1)[:, counts - 1]
                methods[f"{name}: {label}"] = as_measured(measured, np.ones(len(counts)))
            if name == "quadratic":
                smooth, _ = _map_ratios(name, parameter, theta, other, 0.25)
                measured = np.maximum.accumulate(smooth, axis=1)[:, counts - 1]
                methods[f"falsifier:{name}/4: psi* smooth"] = as_measured(
                    measured, np.ones(len(counts))
                )
    return Outcome(counts, methods)


CHECKS: tuple[Check, ...] = (
    Check(
        "notes-conjugates",
        "notes",
        "examples of Fenchel conjugates",
        "(lambda/2)||w||^2 -> ||theta||^2/(2 lambda); 0.5 w'Aw -> 0.5 theta'A^-1 theta; "
        "sum w_i log w_i -> sum exp(theta_i - 1); indicator of the r-ball -> r ||theta||",
        "d = 5, lambda = 2, A SPD (eigenvalues .5 .. 4), r = 1.5; standard normal theta; the "
        "supremum of the definition by BFGS (w = exp(v) for the entropy, w on the sphere for "
        "the ball); measured: the largest |closed form - supremum| over the first N points",
        "identity",
        "N (test points)",
        _conjugates,
        note="an identity (float64, tolerance 1e-9): no falsifier needed. The ball is not one "
        "of the notes' displayed examples; its conjugate (the support function) is the one "
        "behind FTRL and OGD on a ball",
    ),
    Check(
        "notes-fenchel-young",
        "notes",
        "Fenchel-Young inequality",
        "<w, theta> <= psi(w) + psi*(theta) for every w, theta (equality at w = grad psi*(theta))",
        "the four examples of notes-conjugates; one standard normal theta per seed; N "
        "candidates w around grad psi*(theta) (perturbations from 1 down to 1e-6); measured: "
        "max_{j <= N} <w_j, theta> - psi(w_j), bound psi*(theta): attained as N grows",
        "bound",
        "N (candidates)",
        _fenchel_young,
        falsifier="psi = (1/8)||w||^2 (lambda = 1/4) with psi itself in place of psi* (the "
        "squared norm is self-conjugate only at lambda = 1): the supremum 2||theta||^2 is 16 "
        "times the wrong right-hand side",
    ),
    Check(
        "notes-strong-convexity",
        "notes",
        "strong convexity and smoothness (theorem)",
        "psi mu-strongly convex w.r.t. ||.|| <=> psi* (1/mu)-smooth w.r.t. ||.||_*: "
        "||grad psi*(t) - grad psi*(t')|| <= ||t - t'||_* / mu, and B_psi(w', w) >= (mu/2)"
        "||w' - w||^2",
        "the library's mirror maps (ojax.oco.mirror, mu = 1): p-norm (q = 1.5, ||.||_q / "
        "||.||_p), quadratic (A SPD, ||.||_A / ||.||_{A^-1}), entropy on the simplex (||.||_1 / "
        "||.||_inf); random pairs (theta, theta + a perturbation of scale 1e-2 .. 1), w = grad "
        "psi*(theta); measured: the largest ratio over the first N pairs, both directions",
        "bound",
        "N (pairs)",
        _smoothness,
        falsifier="the quadratic map with A / 4 measured in A's norms (only 1/4-strongly "
        "convex there): its conjugate's gradient 4 A^-1 theta has ratio 4 on every pair",
        note="the notes write strong convexity as B_psi(w, u) >= mu ||w - u||^2 (without the "
        "1/2), which contradicts their own Hessian form H_psi >= mu I; checked is the standard "
        "(mu/2) form, the one the theorem needs. The quadratic map attains both ratios (1 on "
        "every pair); the entropy's ratios approach 1 near the simplex's centre (Pinsker)",
    ),
)
