"""Checks of the online learning notes' convex analysis (spec: online_learning_basics; the
notes number none of their results: each is cited by the name the notes give it): the Fenchel
conjugates of the notes' examples, the gradient of the conjugate (`grad psi* = (grad psi)^-1`),
the double conjugate (`psi** = psi` for convex `psi`, its convex envelope otherwise), the
Fenchel-Young inequality, and strong convexity of `psi` against smoothness of `psi*` (the
theorem behind the mirror maps of :mod:`ojax.oco.mirror`).

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

from ojax import programs
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
    return 2 ** np.arange(1, 4 if config.quick else 6)  # 2 .. 8 / 32 points


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
    """Per seed `N` pairs: `theta` standard normal and `w` a random point of the example's
    domain. Measured: the largest of the equality gap `|<w*, theta> - psi(w*) - psi*(theta)|`
    at `w* = grad psi*(theta)` (the closed-form maximizer) and the inequality's violation
    `max(0, <w, theta> - psi(w) - psi*(theta))` over the first `N` pairs. Variant: the
    squared norm with `lambda = 1/4` and `psi` itself in place of `psi*` (self-conjugate only at
    lambda = 1)."""
    counts = 4 ** np.arange(0, 4 if config.quick else 6)  # 1 .. 64 / 1024 pairs
    size = int(counts[-1])
    rng = np.random.default_rng([config.seed, 2])
    thetas = rng.normal(size=(config.num_seeds, size, DIM))
    points = rng.normal(size=(config.num_seeds, size, DIM))
    quarter = Example(lambda w: w @ w / 8, lambda v: v, lambda t: t @ t / 8, lambda t: 4 * t)
    cases = {**{k: (v, v.conjugate) for k, v in _examples().items()},
             "variant:psi*=psi": (quarter, quarter.psi)}  # fmt: skip
    methods = {}
    for name, (example, conjugate) in cases.items():
        gaps = np.empty((config.num_seeds, size))
        for s, i in np.ndindex(config.num_seeds, size):
            theta, w = thetas[s, i], example.point(points[s, i])
            best = example.maximizer(theta)
            equality = abs(best @ theta - example.psi(best) - conjugate(theta))
            gaps[s, i] = max(equality, w @ theta - example.psi(w) - conjugate(theta))
        measured = np.maximum.accumulate(gaps, axis=1)[:, counts - 1]
        methods[name] = as_measured(measured, np.full(len(counts), IDENTITY_TOLERANCE))
    return Outcome(counts, methods)


def _lower_hull(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The lower convex envelope of the points `(x_i, y_i)` (`x` increasing) at the `x_i`:
    Andrew's monotone chain, then linear interpolation between the hull's vertices."""
    hull: list[int] = []
    for i in range(len(x)):
        while len(hull) >= 2:
            a, b = hull[-2], hull[-1]
            if (y[b] - y[a]) * (x[i] - x[a]) >= (y[i] - y[a]) * (x[b] - x[a]):
                hull.pop()  # b lies on or above the chord from a to i
            else:
                break
        hull.append(i)
    return np.interp(x, x[hull], y[hull])


def biconjugate_on_points(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """`psi**` at the points `x` of the function that is `y_i` at `x_i` (`+inf` elsewhere),
    from the definition twice: `psi*(theta) = max_i x_i theta - y_i`, then
    `psi**(x_k) = sup_theta x_k theta - psi*(theta)`, the supremum over every slope between
    two points (where a concave piecewise-linear function attains it). The slopes go in
    blocks (the same maxima: `N^2 / 2` slopes times `N` points in one array took a gigabyte
    at `N = 513`)."""
    if len(x) < 2:  # no slope: the supremum below would be over nothing
        raise ValueError(f"x must hold at least 2 points, got {len(x)}")
    i, j = np.triu_indices(len(x), 1)
    slopes = (y[j] - y[i]) / (x[j] - x[i])
    twice, block = np.full(len(x), -np.inf), 1024
    for start in range(0, len(slopes), block):
        theta = slopes[start : start + block]
        conjugate = np.max(x[None, :] * theta[:, None] - y[None, :], axis=1)
        twice = np.maximum(twice, np.max(x[:, None] * theta[None, :] - conjugate[None, :], axis=1))
    return twice


ONE_DIMENSIONAL = {  # psi on [-2, 2] (the entropy on (0, 2]), convex or not
    "convex: x^2 / 2": (lambda x: 0.5 * x**2, True),
    "convex: |x| + exp(x)": (lambda x: np.abs(x) + np.exp(x), True),
    "convex: x log x": (lambda x: x * np.log(x), True),
    "non-convex: (x^2 - 1)^2": (lambda x: (x**2 - 1) ** 2, False),
    "non-convex: sin(3x) + x^2 / 4": (lambda x: np.sin(3 * x) + x**2 / 4, False),
}


def _biconjugate(config: CheckConfig) -> Outcome:
    """`psi**` on nested grids of `N` points against `psi` (convex) or its lower convex
    envelope (Andrew's monotone chain, not the conjugate); the variant: the non-convex
    functions against `psi` itself. Deterministic: one row."""
    counts = 2 ** np.arange(3, 8 if config.quick else 10) + 1  # 9 .. 129 / 513 points
    methods: dict[str, list[float]] = {}
    for n in counts:
        for name, (psi, convex) in ONE_DIMENSIONAL.items():
            x = np.linspace(1e-3, 2.0, n) if "log" in name else np.linspace(-2.0, 2.0, n)
            y, twice = psi(x), biconjugate_on_points(x, psi(x))
            target = y if convex else _lower_hull(x, y)
            methods.setdefault(name, []).append(float(np.max(np.abs(twice - target))))
            if not convex:
                key = f"variant:psi**=psi, {name}"
                methods.setdefault(key, []).append(float(np.max(np.abs(twice - y))))
    bound = np.full(len(counts), IDENTITY_TOLERANCE)
    return Outcome(counts, {k: as_measured(v, bound) for k, v in methods.items()})


def _jax_examples() -> dict[str, tuple[Callable, Callable, Callable]]:
    """The notes' examples in JAX: `(psi, psi*, a random point of dom psi from a normal v)`."""
    a = jnp.asarray(_matrix())
    a_inv = jnp.linalg.inv(a)
    return {
        "squared-norm": (lambda w: LAMBDA / 2 * w @ w, lambda t: t @ t / (2 * LAMBDA), lambda v: v),
        "quadratic": (lambda w: 0.5 * w @ a @ w, lambda t: 0.5 * t @ a_inv @ t, lambda v: v),
        "entropy": (
            lambda w: jnp.sum(w * jnp.log(w)),
            lambda t: jnp.sum(jnp.exp(t - 1.0)),
            jnp.exp,
        ),  # fmt: skip
    }


def _notes_gap(name: str, theta: jax.Array, v: jax.Array) -> jax.Array:
    """`max(|grad psi(grad psi*(theta)) - theta|, |grad psi*(grad psi(w)) - w|)` for the notes'
    example `name`, `w` its domain's point of `v`."""
    psi, conjugate, domain = _jax_examples()[name]
    grad, grad_star, w = jax.grad(psi), jax.grad(conjugate), domain(v)
    return jnp.maximum(jnp.max(jnp.abs(grad(grad_star(theta)) - theta)),
                       jnp.max(jnp.abs(grad_star(grad(w)) - w)))  # fmt: skip


def _map_gap(name: str, theta: jax.Array, v: jax.Array) -> jax.Array:
    """The same for the library's mirror map `name` (:data:`MAPS`); the entropy's gradient on
    the simplex up to the constant its normalization drops."""
    given = MAPS[name]
    arg = jnp.asarray(_matrix() if given is None else given, theta.dtype)
    back = mirror.mirror_gradient(name, mirror.mirror_inverse(name, theta, arg), arg)
    u = mirror.mirror_inverse(name, v, arg)  # a point of the map's domain
    again = mirror.mirror_inverse(name, mirror.mirror_gradient(name, u, arg), arg)
    if name == "entropy":
        back, theta = back - jnp.mean(back), theta - jnp.mean(theta)
    return jnp.maximum(jnp.max(jnp.abs(back - theta)), jnp.max(jnp.abs(again - u)))


GRADIENT_CASES = (
    *(f"notes: {name}" for name in ("squared-norm", "quadratic", "entropy")),
    *(f"ojax.oco.mirror: {name}" for name in ("p_norm", "quadratic", "entropy")),
)


@functools.cache
def _gradient_gaps():
    """A jitted `(thetas, points) (S, N, d) -> (cases, S, N)` of every case's gap."""

    def gaps(thetas: jax.Array, points: jax.Array) -> jax.Array:
        out = []
        for case in GRADIENT_CASES:
            source, name = case.split(": ")
            gap = _notes_gap if source == "notes" else _map_gap
            out.append(jax.vmap(jax.vmap(functools.partial(gap, name)))(thetas, points))
        return jnp.stack(out)

    return programs.jit(gaps)


def _conjugate_gradient(config: CheckConfig) -> Outcome:
    """`grad psi*` and `grad psi` (autodiff of the notes' closed forms, float64) are inverse
    maps: the largest of `|grad psi(grad psi*(theta)) - theta|` and `|grad psi*(grad psi(w)) -
    w|` over the first `N` random points; and the library's mirror maps
    (:func:`ojax.oco.mirror.mirror_gradient`, :func:`~ojax.oco.mirror.mirror_inverse`)."""
    counts = 4 ** np.arange(1, 4 if config.quick else 6)  # 4 .. 64 / 1024 points
    size = int(counts[-1])
    rng = np.random.default_rng([config.seed, 4])
    with jax.enable_x64(True):
        thetas = jnp.asarray(rng.normal(size=(config.num_seeds, size, DIM)))
        points = jnp.asarray(rng.normal(size=(config.num_seeds, size, DIM)))
        gaps = np.asarray(_gradient_gaps()(thetas, points))
    largest = np.maximum.accumulate(gaps, axis=-1)[..., counts - 1]
    bound = np.full(len(counts), IDENTITY_TOLERANCE)
    methods = {case: as_measured(gap, bound) for case, gap in zip(GRADIENT_CASES, largest)}
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


@functools.cache
def _map_quantities(name: str):
    """A jitted `(theta, other, base, arg) -> (||grad psi*(theta) - grad psi*(other)||, w, w2,
    grad psi(w), ||w2 - w||)` over `(S, N, d)` pairs for the library's mirror map `name`:
    `grad psi*` at the map's parameter `arg`, the rest at `base` (float64, one program)."""

    def each(fn, points, arg):
        return jax.vmap(jax.vmap(lambda p: fn(name, p, arg)))(points)

    def quantities(theta, other, base, arg):
        inverse = mirror.mirror_inverse
        gap = each(inverse, theta, arg) - each(inverse, other, arg)
        w, w2 = each(inverse, theta, base), each(inverse, other, base)
        return (each(mirror.map_norm, gap, base), w, w2, each(mirror.mirror_gradient, w, base),
                each(mirror.map_norm, w2 - w, base))  # fmt: skip

    return jax.jit(quantities)


def _map_ratios(name: str, parameter, theta: np.ndarray, other: np.ndarray, scale: float):
    """Both directions of the theorem for one mirror map (its `psi` scaled by `scale`,
    measured in the unscaled map's norms): the smoothness ratios of `psi*` and the strong
    convexity ratios of `psi` (only at `scale = 1`), `(S, N)` each."""
    base = jnp.asarray(parameter, jnp.float64)
    gap_norm, w, w2, grad, chord = (
        np.asarray(a)
        for a in _map_quantities(name)(jnp.asarray(theta), jnp.asarray(other), base, base * scale)
    )
    smooth = gap_norm / _dual_norm(name, theta - other, parameter)
    # B_psi(w2, w); the entropy's dropped constant 1 cancels on the simplex
    bregman = _psi(name, w2, parameter) - _psi(name, w, parameter)
    bregman = bregman - np.sum(grad * (w2 - w), axis=-1)
    convex = 0.5 * chord**2 / bregman
    return smooth, convex


def _smoothness(config: CheckConfig) -> Outcome:
    """`psi` 1-strongly convex w.r.t. `||.||` <=> `psi*` 1-smooth w.r.t. `||.||_*`,
    both directions on random pairs: `sup ||grad psi*(t) - grad psi*(t')|| / ||t - t'||_*`
    and `sup 0.5 ||w - w'||^2 / B_psi(w', w)`, each at most 1. The variant: the quadratic
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
                methods[f"variant:{name}/4: psi* smooth"] = as_measured(
                    measured, np.ones(len(counts))
                )
    return Outcome(counts, methods)


CHECKS: tuple[Check, ...] = (
    Check(
        "notes-conjugates",
        "notes",
        "some examples of Fenchel conjugate",
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
        "notes-conjugate-gradient",
        "notes",
        "proposition: gradient of the Fenchel conjugate",
        "for convex differentiable psi, grad psi*(theta) = argmax_w <w, theta> - psi(w) = "
        "(grad psi)^-1(theta): grad psi(grad psi*(theta)) = theta and grad psi*(grad psi(w)) = w",
        "d = 5: the notes' examples ((lambda/2)||w||^2 with lambda = 2, 0.5 w'Aw with A SPD, "
        "the negative entropy on w > 0), both gradients by autodiff of their closed forms; the "
        "library's mirror maps (p-norm q = 1.5, quadratic, entropy on the simplex: there "
        "grad psi up to the constant its normalization drops); standard normal theta and "
        "points w (w = exp(v) for the entropy, w = grad psi*(v) for the maps); measured: the "
        "largest coordinate difference over the first N points, float64",
        "identity",
        "N (test points)",
        _conjugate_gradient,
        note="an identity (tolerance 1e-9): no falsifier needed. The argmax form is "
        "notes-fenchel-young's equality case",
        lapack=True,
    ),
    Check(
        "notes-biconjugate",
        "notes",
        "proposition: Fenchel conjugate of convex functions",
        "psi** = psi for convex psi; for non-convex psi, psi** is the convex envelope of psi",
        "one dimension, N equally spaced points of [-2, 2] ((0, 2] for x log x): psi is its "
        "values there (+inf elsewhere), psi* and psi** from the definition (every supremum "
        "over the slopes between two points, where it is attained: exact), against psi "
        "(convex: x^2/2, |x| + exp(x), x log x) or its lower convex envelope (non-convex: "
        "(x^2 - 1)^2, sin(3x) + x^2/4; Andrew's monotone chain, no conjugate); measured: the "
        "largest difference at the N points, float64, one row",
        "identity",
        "N (points)",
        _biconjugate,
        variant="the convex statement psi** = psi applied to the non-convex functions: their "
        "biconjugate differs from them by up to 1 (x = 0 of the double well), far above the "
        "tolerance",
        note="an identity (tolerance 1e-9). On finitely many points the statement is exact: the "
        "function through them is closed, its biconjugate its lower convex envelope",
    ),
    Check(
        "notes-fenchel-young",
        "notes",
        "proposition: Fenchel-Young inequality",
        "<w, theta> <= psi(w) + psi*(theta) for every w, theta (equality at w = grad psi*(theta))",
        "the four examples of notes-conjugates (closed-form psi* and maximizer grad psi*); per "
        "seed N pairs of a standard normal theta and a random w of the domain (w = exp(v) for "
        "the entropy, w on the sphere for the ball); measured: the largest of the equality gap "
        "at w = grad psi*(theta) and the inequality's violation max(0, <w, theta> - psi(w) - "
        "psi*(theta)) over the first N pairs, float64",
        "identity",
        "N (pairs)",
        _fenchel_young,
        variant="psi = (1/8)||w||^2 (lambda = 1/4) with psi itself in place of psi* (a wrong "
        "formula: the squared norm is self-conjugate only at lambda = 1): its equality gap at "
        "grad psi*(theta) = 4 theta is 1.5 ||theta||^2",
        note="an identity (tolerance 1e-9): the inequality has no slack to hide in at its "
        "equality case",
    ),
    Check(
        "notes-strong-convexity",
        "notes",
        "theorem: strong convexity and smoothness",
        "psi mu-strongly convex w.r.t. ||.|| <=> psi* (1/mu)-smooth w.r.t. ||.||_*: "
        "||grad psi*(t) - grad psi*(t')|| <= ||t - t'||_* / mu, and B_psi(w', w) >= (mu/2)"
        "||w' - w||^2",
        "the library's mirror maps (ojax.oco.mirror, mu = 1): p-norm (q = 1.5, ||.||_q / "
        "||.||_p), quadratic (A SPD, ||.||_A / ||.||_{A^-1}), entropy on the simplex (||.||_1 / "
        "||.||_inf); random pairs (theta, theta + a perturbation of scale 1e-2 .. 1), w = grad "
        "psi*(theta); measured: the largest ratio over the first N pairs, both directions",
        "inequality",
        "N (pairs)",
        _smoothness,
        variant="the quadratic map with A / 4 measured in A's norms (outside the hypothesis: "
        "only 1/4-strongly convex there): its conjugate's gradient 4 A^-1 theta has ratio 4 on "
        "every pair",
        note="the notes write strong convexity as B_psi(w, u) >= mu ||w - u||^2 (without the "
        "1/2), which contradicts their own Hessian form H_psi >= mu I; checked is the standard "
        "(mu/2) form, the one the theorem needs. The quadratic map attains both ratios (1 on "
        "every pair); the entropy's ratios approach 1 near the simplex's centre (Pinsker)",
        lapack=True,
    ),
)


__all__ = [
    "CHECKS",
    "DIM",
    "Example",
    "GRADIENT_CASES",
    "LAMBDA",
    "MAPS",
    "ONE_DIMENSIONAL",
    "Q",
    "RADIUS",
    "biconjugate_on_points",
    "numerical_conjugate",
]
