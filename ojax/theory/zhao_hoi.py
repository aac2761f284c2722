"""Checks of Zhao & Hoi (ICML 2010), OTL: a framework of online transfer learning.

Statements read against the paper's text (displays partly lost; the proofs in its appendix pin
the constants) and the algorithms as implemented in :mod:`ojax.transfer`:

* `zhao-hoi-prop1` (bound): Proposition 1, the exponentially weighted ensemble's squared
  loss (`eta = 1/2`, losses `(z - y)^2` on `[0, 1]`): `sum_t (w1 Pi(h) + w2 Pi(f) -
  Pi(y))^2 <= 2 ln 2 + min(S_h, S_f)`, `S_g = sum_t (Pi(g(x_t)) - Pi(y_t))^2`;
* `zhao-hoi-thm1` (bound): Theorem 1, OTL's mistakes `M <= 4 min(S_h, S_f) + 8 ln 2` (a
  mistake costs the ensemble at least 1/4, then Proposition 1);
* `zhao-hoi-thm2` (bound): COTL's mistake bound `M <= (1/rho) (gamma1 ||f1 - h||^2 + gamma2
  ||f2||^2 + 2 C sum_t l_t(f1, f2))` for any comparator `(f1, f2)`, `rho = min(C, 4 gamma1
  gamma2 / (gamma2 R1^2 + gamma1 R2^2))` (Gaussian kernels: `R1 = R2 = 1`), on the mushrooms
  heterogeneous split, the comparator the best multiple of COTL's own final classifier;
* `zhao-hoi-prop2` (identity): COTL's closed-form update solves the co-regularized problem (5)
  `min gamma1/2 ||f1 - f1_t||^2 + gamma2/2 ||f2 - f2_t||^2 + C xi` subject to
  `1 - y (f1(x1) + f2(x2)) / 2 <= xi`, `xi >= 0`: with linear kernels (finite-dimensional
  `f`), the library's update against the problem's exact solution (KKT system, every active
  set).

* `zhao-hoi-lemma1` (bound): Lemma 1, the co-regularized update's progress, `sum_t tau_t
  (l_t - l_t(g) - (k1/(8 gamma1) + k2/(8 gamma2)) tau_t) <= gamma1/2 ||h - g1||^2 + gamma2/2
  ||g2||^2` for every comparator `g = (g1, g2)` (the step Theorem 2's proof sums);
* `zhao-hoi-remark` (bound): the remark after Theorem 1, `M <= min(M_h, M_f) + 8 ln 2`, where
  `M_h`, `M_f` are the mistakes of `sign(h)` and `sign(f)`.

The OTL results are checked on usenet2 (the paper's data) and on a homogeneous split of the
mushrooms file. On usenet2 the source classifier is confident and often wrong: over the 1200
target rows of the paper's split, the median `|Pi(h) - 1/2|` is about 0.31 (5% of the rows lie
within 0.1 of 1/2) and `sign(h)` errs on 34% of them, so `S_h` is about `T/4` through
confident errors, Theorem 1's bound `4 S_h + 8 ln 2` is about `T` and OTL follows `h` (weight
on `h` near 1, the mistakes of `sign(h)`): there the non-learners stay under the bounds (the
checks' `vacuous:...@usenet2` rows). On mushrooms `h` is confident and right, the informative
instance, where the falsifiers break them (tests/test_theory_papers.py asserts these facts).
"""

from __future__ import annotations

import functools
import itertools
import math
from typing import Any, Final, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ojax import programs, transfer
from ojax.datasets import transfer as transfer_data
from ojax.theory.base import IDENTITY_TOLERANCE, Check, CheckConfig, Outcome, as_measured
from ojax.theory.qp import QP, solve_qp
from ojax.transfer import COTLParams

DOCUMENT: Final = "zhao-hoi2010"
SOURCE_SIZE = 300  # usenet2's source block (the paper's); the mushrooms source in quick mode
HETEROGENEOUS = "mushrooms"  # COTL's instance: a learnable split, so Theorem 2 is not vacuous


def doubling_horizons(length: int, start: int = 8) -> np.ndarray:
    """`start, 2 start, 4 start, ...` below `length`, then `length` itself."""
    grid = start * 2 ** np.arange(int(math.log2(max(length // start, 1))) + 1)
    return np.unique(np.append(grid[grid < length], length)).astype(np.int64)


def _dtype(config: CheckConfig) -> Any:
    return jnp.float64 if config.x64 else jnp.float32


def _projection(z: Any) -> np.ndarray:
    """`Pi(z) = max(0, min(1, (z + 1) / 2))`."""
    return np.clip((np.asarray(z, np.float64) + 1.0) / 2.0, 0.0, 1.0)


# ------------------------------------------------------------------------------ OTL (Prop 1, Thm 1)


def otl_target(quick: bool) -> int:
    """The target stream's length of the OTL checks (both datasets): 400 (quick) / 1200."""
    return 400 if quick else 1200


@functools.lru_cache(maxsize=4)
def homogeneous_mushrooms(quick: bool) -> transfer_data.Split:
    """A homogeneous split of the KEEL mushroom stand-in (per-row scaling, every feature on
    both sides): random rows, a source of 300 (quick) or 2084 (the heterogeneous split's
    size) and a target of :func:`otl_target` rows."""
    x, y = transfer_data.load_dataset(HETEROGENEOUS)
    x = transfer_data.scale(x, "rows")
    rows = np.random.default_rng(0).permutation(x.shape[0])
    source = SOURCE_SIZE if quick else transfer_data.HETEROGENEOUS[HETEROGENEOUS][1]
    src, tgt = rows[:source], rows[source : source + otl_target(quick)]
    return transfer_data.Split(x[src], y[src], x[tgt], y[tgt], x.shape[1])


class OTLRun(NamedTuple):
    """OTL on one split, per target order `(P, T)`: the projected label `Pi(y)`, the two
    experts' projected outputs `Pi(h)` and `Pi(f)` (f: exactly the PA run), OTL's weights
    `(w_h, w_f)` used at each step `(P, T, 2)`, and the mistakes of OTL and of PA."""

    y: np.ndarray
    h: np.ndarray
    f: np.ndarray
    weights: np.ndarray
    otl_mistakes: np.ndarray
    pa_mistakes: np.ndarray


@functools.lru_cache(maxsize=8)
def otl_run(dataset: str, quick: bool, x64: bool, num_seeds: int, seed: int) -> OTLRun:
    """OTL and PA (the paper's params) on `"usenet2"` (the paper's split: the first 300 rows
    the source, the next 400 (quick) / 1200 the target) or `"mushrooms"`
    (:func:`homogeneous_mushrooms`), one random target order per seed."""
    if dataset == "usenet2":
        split = transfer_data.homogeneous_split("usenet2", target_size=otl_target(quick))
    else:
        split = homogeneous_mushrooms(quick)
    with jax.enable_x64(x64):
        setup = transfer.prepare_transfer(
            split.source_x,
            split.source_y,
            split.target_x,
            split.target_y,
            methods=("PA", "OTL"),
            dtype=jnp.float64 if x64 else jnp.float32,
        )
        target = split.target_y.shape[0]
        orders = transfer.permutations(jax.random.key(seed), num_seeds, target)
        otl, pa = setup.methods["OTL"], setup.methods["PA"]
        _, otl_trace = otl.run(orders, record=transfer.weights_record)
        _, pa_trace = pa.run(orders)  # OTL's f is exactly this PA run (same C and width)
    rows = np.asarray(orders)
    after = np.asarray(otl_trace.record, np.float64)  # the weights after each update
    weights = np.concatenate([np.full((rows.shape[0], 1, 2), 0.5), after[:, :-1]], axis=1)
    return OTLRun(
        _projection(np.asarray(otl.ys)[rows]),
        _projection(np.asarray(otl.xs.offset)[rows]),
        _projection(pa_trace.prediction),
        weights,
        np.asarray(otl_trace.loss, np.float64),
        np.asarray(pa_trace.loss, np.float64),
    )


OTL_DATASETS = ("usenet2", "mushrooms")


def majority_label(y: np.ndarray) -> float:
    """The label (`+-1`) of the majority of `y`'s first row (ties to +1): a constant
    predictor's."""
    return 1.0 if np.sum(y[0] > 0) >= y.shape[1] / 2 else -1.0


def _otl_check(which: str):
    """Prop. 1 (`"prop1"`: the ensemble's squared loss), Thm. 1 (`"thm1"`: mistakes) or the
    remark after it (`"remark"`) on both datasets; the non-learners are falsifiers on
    mushrooms and `vacuous:` rows on usenet2, where they stay under the bounds."""

    def compute(config: CheckConfig) -> Outcome:
        methods = {}
        horizons = doubling_horizons(otl_target(config.quick))
        for dataset in OTL_DATASETS:
            r = otl_run(dataset, config.quick, config.x64, config.num_seeds, config.seed)
            s_h, s_f = np.cumsum((r.h - r.y) ** 2, 1), np.cumsum((r.f - r.y) ** 2, 1)
            labels = 2.0 * r.y - 1.0
            constant = np.cumsum(labels != majority_label(labels), 1).astype(np.float64)
            pick = horizons - 1
            if which == "prop1":
                bound = 2.0 * math.log(2.0) + np.minimum(s_h, s_f)
                ensemble = r.weights[..., 0] * r.h + r.weights[..., 1] * r.f
                uniform = 0.5 * (r.h + r.f)  # OTL(fixed)'s combination
                measured = {
                    "OTL": np.cumsum((ensemble - r.y) ** 2, 1),
                    "uniform": np.cumsum((uniform - r.y) ** 2, 1),
                }
            elif which == "thm1":
                bound = 4.0 * np.minimum(s_h, s_f) + 8.0 * math.log(2.0)
                measured = {
                    "OTL": np.cumsum(r.otl_mistakes, 1),
                    "PA": np.cumsum(r.pa_mistakes, 1),
                    "majority-label": constant,
                }
            else:
                m_h = np.cumsum(np.where(r.h >= 0.5, 1.0, 0.0) != r.y, 1)  # sign(h), 0 -> +1
                m_f = np.cumsum(r.pa_mistakes, 1)
                bound = np.minimum(m_h, m_f) + 8.0 * math.log(2.0)
                measured = {"OTL": np.cumsum(r.otl_mistakes, 1), "majority-label": constant}
            for name, values in measured.items():
                prefix = "" if name == "OTL" else "falsifier:"
                if prefix and dataset == "usenet2":
                    prefix = "vacuous:"  # the document's own data: no non-learner breaks it
                methods[f"{prefix}{name}@{dataset}"] = as_measured(values[:, pick], bound[:, pick])
        return Outcome(horizons, methods)

    return compute


# ------------------------------------------------------------------------------ COTL (Thm 2)


class _Hetero(NamedTuple):
    split: transfer_data.Split
    cotl: transfer.MethodRun  # COTL with the paper's params, Gaussian kernels, pool layout


@functools.lru_cache(maxsize=4)
def _hetero(quick: bool, x64: bool) -> _Hetero:
    """The mushrooms heterogeneous split (2084 + 3560, or 300 + 400 quick) and COTL."""
    source, target = (SOURCE_SIZE, 400) if quick else (None, None)
    split = transfer_data.heterogeneous_split(HETEROGENEOUS, source_size=source, target_size=target)
    with jax.enable_x64(x64):
        setup = transfer.prepare_transfer(
            split.source_x,
            split.source_y,
            split.target_x,
            split.target_y,
            methods=("COTL",),
            dtype=jnp.float64 if x64 else jnp.float32,
        )
    return _Hetero(split, setup.methods["COTL"])


def cotl_rho(params: COTLParams) -> float:
    """`min(C, 4 gamma1 gamma2 / (gamma2 R1^2 + gamma1 R2^2))` with `R1 = R2 = 1`: the
    progress per mistake of the co-regularized update (Theorem 2) when `k1(x, x), k2(x, x) <=
    1`."""
    g1, g2 = float(params.gamma1), float(params.gamma2)
    return min(float(params.C), 4.0 * g1 * g2 / (g1 + g2))


COMPARATOR_SCALES = tuple(np.round(np.arange(41) * 0.1, 1))  # 0, 0.1, .., 4


DUAL_ITERATIONS = 300  # FISTA steps on the comparator's dual (any iterate gives a comparator)


@functools.partial(jax.jit, static_argnames="iterations")
def _dual_ascent(q: jax.Array, b: jax.Array, cap: jax.Array, iterations: int) -> jax.Array:
    """FISTA on `max_{0 <= a <= cap} <a, b> - a' Q a` (projected gradient, step `1 /
    (2 ||Q||)`, the norm by power iteration)."""

    def power(_, v):
        v = q @ v
        return v / jnp.linalg.norm(v)

    v = jax.lax.fori_loop(0, 50, power, jnp.ones_like(b) / jnp.sqrt(b.shape[0]))
    step = 1.0 / (2.0 * (v @ q @ v) * 1.01)

    def fista(_, carry):
        a, z, t = carry
        new = jnp.clip(z + step * (b - 2.0 * q @ z), 0.0, cap)
        t_new = (1.0 + jnp.sqrt(1.0 + 4.0 * t * t)) / 2.0
        return new, new + (t - 1.0) / t_new * (new - a), t_new

    zero = jnp.zeros_like(b)
    return jax.lax.fori_loop(0, iterations, fista, (zero, zero, jnp.asarray(1.0, b.dtype)))[0]


def dual_comparator(method: transfer.MethodRun) -> tuple[np.ndarray, np.ndarray]:
    """A comparator `(g1, g2) = (h + sum_j alpha_j k1(x_j, .), sum_j beta_j k2(x_j, .))` over
    the target pool, near the minimizer of the bound's right-hand side on the whole stream
    (the same for every order): the dual of `min gamma1 ||g1 - h||^2 + gamma2 ||g2||^2 + 2 C
    sum_t l_t(g)` is `max_{0 <= a <= 2C} sum_t a_t (1 - y_t h_t / 2) - (1/16) a' Y (K1 /
    gamma1 + K2 / gamma2) Y a`, with `alpha = a y / (4 gamma1)`, `beta = a y / (4
    gamma2)`. Returns `(alpha, beta)`, each `(N,)`."""
    view1, view2 = method.xs
    params = method.params
    g1, g2, c_reg = float(params.gamma1), float(params.gamma2), float(params.C)
    with jax.enable_x64(True):
        k1, k2 = (jnp.asarray(v.row, jnp.float64) for v in (view1, view2))
        y = jnp.asarray(method.ys, jnp.float64)
        h = jnp.asarray(view1.offset, jnp.float64)
        q = (y[:, None] * y[None, :]) * (k1 / g1 + k2 / g2) / 16.0
        a = np.asarray(
            _dual_ascent(q, 1.0 - y * h / 2.0, jnp.float64(2.0 * c_reg), DUAL_ITERATIONS)
        )
    labels = np.asarray(method.ys, np.float64)
    return a * labels / (4.0 * g1), a * labels / (4.0 * g2)


class Comparator(NamedTuple):
    """A comparator `g = (g1, g2)` of the COTL bounds on every order: `norm` `(P,)` is
    `gamma1 ||g1 - h||^2 + gamma2 ||g2||^2`, `moved` `(P, T)` is `(g1 - h)(x1_t) + g2(x2_t)`
    along the order."""

    name: str
    norm: np.ndarray
    moved: np.ndarray


def comparators(method: transfer.MethodRun, states: Any, orders: Any) -> list[Comparator]:
    """The comparators of :func:`cotl_bound`: `(h + c (f1_T - h), c f2_T)` for every `c` of
    :data:`COMPARATOR_SCALES`, `(f1_T, f2_T)` COTL's final classifier on each order, and
    :func:`dual_comparator`."""
    view1, view2 = method.xs
    k1, k2 = np.asarray(view1.row, np.float64), np.asarray(view2.row, np.float64)
    alpha = np.asarray(states.buffer1.coef, np.float64)  # (P, N): f1_T - h
    beta = np.asarray(states.buffer2.coef, np.float64)  # (P, N): f2_T
    g1, g2 = float(method.params.gamma1), float(method.params.gamma2)
    norms = g1 * np.einsum("pi,ij,pj->p", alpha, k1, alpha)
    norms += g2 * np.einsum("pi,ij,pj->p", beta, k2, beta)
    rows = np.asarray(orders)
    moved = np.take_along_axis(alpha @ k1 + beta @ k2, rows, axis=1)  # (P, T)
    out = [Comparator(f"{c:g} x final", c**2 * norms, c * moved) for c in COMPARATOR_SCALES]
    a, b = dual_comparator(method)
    norm = g1 * a @ k1 @ a + g2 * b @ k2 @ b
    out.append(Comparator("dual", np.full(rows.shape[0], norm), (a @ k1 + b @ k2)[rows]))
    return out


def comparator_losses(method: transfer.MethodRun, orders: Any, comparator: Comparator):
    """`l_t(g) = max(0, 1 - y_t (g1(x1_t) + g2(x2_t)) / 2)` along each order, `(P, T)`."""
    rows = np.asarray(orders)
    y = np.asarray(method.ys, np.float64)[rows]
    h = np.asarray(method.xs[0].offset, np.float64)[rows]
    return np.maximum(0.0, 1.0 - y * (h + comparator.moved) / 2.0)


def cotl_bound(method: transfer.MethodRun, states: Any, orders: Any) -> np.ndarray:
    """The right-hand side of the COTL mistake bound on every prefix, `(P, T)`, minimized over
    :func:`comparators` (a bound for every comparator: the smallest of these is one)."""
    c_reg = float(method.params.C)
    best = np.full(np.shape(orders), np.inf)
    for comparator in comparators(method, states, orders):
        losses = comparator_losses(method, orders, comparator)
        rhs = comparator.norm[:, None] + 2.0 * c_reg * np.cumsum(losses, axis=1)
        best = np.minimum(best, rhs / cotl_rho(method.params))
    return best


class COTLRun(NamedTuple):
    """COTL on the heterogeneous split over random orders: its final states, the orders,
    its mistakes `(P, T)` and scores `s_t = (f1_t(x1_t) + f2_t(x2_t)) / 2` before each update."""

    states: Any
    orders: np.ndarray
    mistakes: np.ndarray
    scores: np.ndarray


@functools.lru_cache(maxsize=4)
def cotl_run(quick: bool, x64: bool, num_seeds: int, seed: int) -> COTLRun:
    """COTL (the paper's params) on :func:`_hetero`'s split, one random order per seed."""
    method = _hetero(quick, x64).cotl
    with jax.enable_x64(x64):
        orders = transfer.permutations(jax.random.key(seed), num_seeds, method.ys.shape[0])
        states, trace = method.run(orders)
    return COTLRun(
        states,
        np.asarray(orders),
        np.asarray(trace.loss, np.float64),
        np.asarray(trace.prediction, np.float64),
    )


def _thm2(config: CheckConfig) -> Outcome:
    method = _hetero(config.quick, config.x64).cotl
    r = cotl_run(config.quick, config.x64, config.num_seeds, config.seed)
    mistakes = np.cumsum(r.mistakes, axis=1)
    bound = cotl_bound(method, r.states, r.orders)
    horizons = doubling_horizons(mistakes.shape[1])
    pick = horizons - 1
    labels = np.asarray(method.ys, np.float64)[r.orders]
    constant = np.cumsum(labels != majority_label(labels), axis=1).astype(np.float64)
    return Outcome(
        horizons,
        {
            "COTL": as_measured(mistakes[:, pick], bound[:, pick]),
            "falsifier:majority-label": as_measured(constant[:, pick], bound[:, pick]),
        },
    )


def lemma1_sums(
    method: transfer.MethodRun, orders: Any, scores: np.ndarray, comparator: Comparator
) -> np.ndarray:
    """Lemma 1's left-hand side on every prefix, `(P, T)`: `sum_t tau_t (l_t - l_t(g) -
    (k1/(8 gamma1) + k2/(8 gamma2)) tau_t)` for a learner whose scores before each update are
    `scores`, `l_t = max(0, 1 - y_t s_t)`, `tau_t = min(C, 4 gamma1 gamma2 l_t / (gamma2 k1 +
    gamma1 k2))`, `k1 = k2 = 1` (Gaussian kernels)."""
    params = method.params
    g1, g2, c_reg = float(params.gamma1), float(params.gamma2), float(params.C)
    y = np.asarray(method.ys, np.float64)[np.asarray(orders)]
    loss = np.maximum(0.0, 1.0 - y * scores)
    tau = np.minimum(c_reg, 4.0 * g1 * g2 * loss / (g2 + g1))
    shrink = 1.0 / (8.0 * g1) + 1.0 / (8.0 * g2)
    steps = tau * (loss - comparator_losses(method, orders, comparator) - shrink * tau)
    return np.cumsum(steps, axis=1)


def _lemma1(config: CheckConfig) -> Outcome:
    """Lemma 1 for COTL against two comparators (its own final classifier, where the bound is
    nearly attained, and the dual near-minimizer of Theorem 2's right-hand side); the
    falsifier: the same sums for the classifier frozen at its start `(h, 0)` (no update)."""
    method = _hetero(config.quick, config.x64).cotl
    r = cotl_run(config.quick, config.x64, config.num_seeds, config.seed)
    horizons = doubling_horizons(r.scores.shape[1])
    pick = horizons - 1
    frozen = np.asarray(method.xs[0].offset, np.float64)[r.orders] / 2.0  # s_t = h(x1_t) / 2
    methods = {}
    for comparator in comparators(method, r.states, r.orders):
        if comparator.name not in ("1 x final", "dual"):
            continue
        bound = np.broadcast_to(comparator.norm[:, None] / 2.0, r.scores.shape)
        for name, scores in (("COTL", r.scores), ("falsifier:frozen (h, 0)", frozen)):
            sums = lemma1_sums(method, r.orders, scores, comparator)
            methods[f"{name}, g={comparator.name}"] = as_measured(sums[:, pick], bound[:, pick])
    return Outcome(horizons, methods)


# ------------------------------------------------------------------------------ Proposition 2


def cotl_problem(
    params: COTLParams, u1: Any, u2: Any, x1: Any, x2: Any, offset: float, y: float
) -> QP:
    """Problem (5) with linear kernels: `z = (u1', u2', xi)` for `f_i = <u_i', .>` (plus
    `h`'s `offset` on the first view), from the current weights `(u1, u2)`."""
    g1, g2, c_reg = float(params.gamma1), float(params.gamma2), float(params.C)
    u1, u2, x1, x2 = (np.asarray(a, np.float64) for a in (u1, u2, x1, x2))
    d1, d2 = u1.shape[0], u2.shape[0]
    size = d1 + d2 + 1
    p = np.diag(np.concatenate([np.full(d1, g1), np.full(d2, g2), [0.0]]))
    q = np.concatenate([-g1 * u1, -g2 * u2, [c_reg]])
    margin = np.concatenate([-0.5 * y * x1, -0.5 * y * x2, [-1.0]])  # 1 - y s <= xi
    slack = np.zeros(size)
    slack[-1] = -1.0  # xi >= 0
    return QP(p, q, np.stack([margin, slack]), np.array([0.5 * y * offset - 1.0, 0.0]))


def linear_cotl_steps(
    num_steps: int, num_orders: int, seed: int, quick: bool, x64: bool = True
) -> dict:
    """Linear-kernel COTL (the paper's params, `h` on the first view as the offset) run step
    by step over random orders of the mushrooms target rows, float64.

    Returns a dict of `(P, T, ...)` arrays: the weights before and after each step (`u1`,
    `u2`, `new1`, `new2`), the views `x1`, `x2`, `offset` and labels `y`.
    """
    data = _hetero(quick, x64)  # the split and h's outputs (shared with zhao-hoi-thm2)
    with jax.enable_x64(True):
        k = data.split.num_source_features
        x = np.asarray(data.split.target_x, np.float64)
        x1, x2 = x[:, :k], x[:, k:]
        offset = np.asarray(data.cotl.xs[0].offset, np.float64)
        learner = transfer.cotl(num_steps, mode="direct", kernel="linear", dims=(k, x2.shape[1]))
        params = COTLParams.paper(jnp.float64)
        orders = np.asarray(
            transfer.permutations(jax.random.key(seed), num_orders, num_steps, x.shape[0])
        )

        def weights(buffer):
            return jnp.einsum("...c,...cd->...d", buffer.coef, buffer.keys)

        @programs.jit
        @functools.partial(jax.vmap, in_axes=(0, 0, 0, 0, 0))
        def step(state, a1, a2, off, y):
            point = (transfer.KernelPoint(a1, None, off), transfer.KernelPoint(a2, None, off * 0))
            new = learner.update(state, params, point, y)
            return new, [weights(s.buffer1) for s in (state, new)] + [
                weights(s.buffer2) for s in (state, new)
            ]

        state = jax.vmap(lambda _: learner.init(params))(jnp.arange(num_orders))
        steps = []  # per step: u1 before, u1 after, u2 before, u2 after, each (P, d_i)
        for t in range(num_steps):
            rows = orders[:, t]
            state, out = step(state, x1[rows], x2[rows], offset[rows], data.split.target_y[rows])
            steps.append([np.asarray(a) for a in out])
    u1, new1, u2, new2 = (np.stack([s[i] for s in steps], axis=1) for i in range(4))
    return dict(
        u1=u1,
        u2=u2,
        new1=new1,
        new2=new2,
        x1=x1[orders],
        x2=x2[orders],
        offset=offset[orders],
        y=np.asarray(data.split.target_y, np.float64)[orders],
        params=params,
    )


def _prop2(config: CheckConfig) -> Outcome:
    num_steps = 64 if config.quick else 256
    run = linear_cotl_steps(num_steps, config.num_seeds, config.seed, config.quick, config.x64)
    errors = np.zeros((config.num_seeds, num_steps))
    for p, t in itertools.product(range(config.num_seeds), range(num_steps)):
        qp = cotl_problem(
            run["params"],
            run["u1"][p, t],
            run["u2"][p, t],
            run["x1"][p, t],
            run["x2"][p, t],
            float(run["offset"][p, t]),
            float(run["y"][p, t]),
        )
        z = solve_qp(qp)
        new = np.concatenate([run["new1"][p, t], run["new2"][p, t]])
        errors[p, t] = np.max(np.abs(z[: new.shape[0]] - new))
    worst = np.maximum.accumulate(errors, axis=1)
    horizons = doubling_horizons(num_steps, start=1)
    bound = np.full(len(horizons), IDENTITY_TOLERANCE)
    return Outcome(horizons, {"COTL": as_measured(worst[:, horizons - 1], bound)})


_OTL_INSTANCE = (
    "usenet2, the paper's split (first 300 rows the source, the next 400 (quick) / 1200 rows "
    "the target), and a homogeneous split of the mushrooms file (KEEL stand-in, random rows: "
    "300 (quick) / 2084 source, 400 / 1200 target), per-row min-max scaling, paper params "
    "(C = 5, widths 4 / 8, eta = 1/2); one random target order per seed (one vmap); f's "
    "outputs are PA's (OTL's f is exactly the PA run)"
)
_USENET2 = (
    " On usenet2 (the paper's data) the source classifier is confident and wrong on about a "
    "third of the target: Pi(h) is far from 1/2 on most rows, and its confident errors make "
    "S_h about T/4 (the module docstring gives the figures), so Theorem 1's bound is about T "
    "and OTL follows h: the non-learners stay under the bounds there (the vacuous:...@usenet2 "
    "rows); on mushrooms h is confident and right, the informative instance."
)

CHECKS: tuple[Check, ...] = (
    Check(
        name="zhao-hoi-prop1",
        document=DOCUMENT,
        result="Proposition 1",
        statement=(
            "square loss on [0, 1], exponential weights with eta = 1/2: sum_t (w1_t Pi(h(x_t)) "
            "+ w2_t Pi(f_t(x_t)) - Pi(y_t))^2 <= 2 ln 2 + min(S_h, S_f), S_g = sum_t "
            "(Pi(g(x_t)) - Pi(y_t))^2, Pi(z) = max(0, min(1, (z + 1)/2)), on every prefix"
        ),
        instance=_OTL_INSTANCE + "; OTL's weights as the library's run records them",
        kind="bound",
        horizon="T (target examples)",
        compute=_otl_check("prop1"),
        falsifier=(
            "the uniform ensemble (w1 = w2 = 1/2, OTL(fixed)'s combination: the weights not "
            "learned) on mushrooms: its loss is about the mean of S_h and S_f, far above the "
            "better expert's when one expert is good"
        ),
        note=(
            "The square loss (z - y)^2 on [0, 1] is 1/2-exp-concave, so the exponentially "
            "weighted average at eta = 1/2 has regret at most ln(2)/eta = 2 ln 2 (the paper: "
            "'following the similar technique described at Section 3.3' of Cesa-Bianchi & "
            "Lugosi)." + _USENET2
        ),
        shares="zhao-hoi-otl",
    ),
    Check(
        name="zhao-hoi-thm1",
        document=DOCUMENT,
        result="Theorem 1",
        statement=(
            "OTL (eta = 1/2): M <= 4 min(S_h, S_f) + 8 ln 2, S_g as in Proposition 1, on every "
            "prefix"
        ),
        instance=_OTL_INSTANCE,
        kind="bound",
        horizon="T (target examples)",
        compute=_otl_check("thm1"),
        falsifier=(
            "on mushrooms, the majority label (a constant predictor) and PA alone (sign(f): "
            "the target learner without the transfer): each errs more often than 4 S_h + 8 ln 2 "
            "allows when the source classifier is good"
        ),
        note=(
            "The proof: a mistake means |w1 Pi(h) + w2 Pi(f) - Pi(y)| >= 1/2, a squared loss "
            "of at least 1/4, so M / 4 <= 2 ln 2 + min(S_h, S_f) by Proposition 1. A "
            "deterministic bound for any sequence. tests/test_transfer.py checks the same "
            "inequality at the full horizon on usenet2, spambase and usenet1." + _USENET2
        ),
        shares="zhao-hoi-otl",
    ),
    Check(
        name="zhao-hoi-remark",
        document=DOCUMENT,
        result="the remark after Theorem 1",
        statement=(
            "if S_h <= M_h / 4 and S_f <= M_f / 4, OTL's mistakes M <= min(M_h, M_f) + 8 ln 2, "
            "M_h and M_f the mistakes of sign(h) and sign(f) (f: the PA run), on every prefix"
        ),
        instance=_OTL_INSTANCE,
        kind="bound",
        horizon="T (target examples)",
        compute=_otl_check("remark"),
        falsifier=(
            "the majority label (a constant predictor) on mushrooms, where h errs on a few "
            "rows: it errs on every minority row"
        ),
        note=(
            "The remark's premise fails on both instances: a mistake costs (Pi(g) - Pi(y))^2 >= "
            "1/4, so S_g >= M_g / 4, with equality only when Pi(g) is exactly 1/2 on every "
            "mistake and right elsewhere; here S_h and S_f are several times M_h / 4 and M_f / "
            "4 (tests/test_theory_papers.py asserts it). Checked is the conclusion, which "
            "Theorem 1 does not imply without the premise: OTL keeps to it on both instances "
            "(on usenet2 it makes the mistakes of sign(h), nearly attaining min(M_h, M_f) = "
            "M_h)." + _USENET2
        ),
        shares="zhao-hoi-otl",
    ),
    Check(
        name="zhao-hoi-lemma1",
        document=DOCUMENT,
        result="Lemma 1",
        statement=(
            "COTL, for every g = (g1, g2): sum_t tau_t (l_t - l_t(g) - (k1(x1_t, x1_t) / (8 "
            "gamma1) + k2(x2_t, x2_t) / (8 gamma2)) tau_t) <= gamma1/2 ||h - g1||^2 + gamma2/2 "
            "||g2||^2, l_t = max(0, 1 - y_t (f1_t(x1_t) + f2_t(x2_t))/2), l_t(g) the same of g, "
            "on every prefix"
        ),
        instance=(
            "as zhao-hoi-thm2 (the mushrooms heterogeneous split, Gaussian kernels: k1 = k2 = "
            "1, C = 5, gamma1 = gamma2 = 1); two comparators per order: COTL's own final "
            "classifier (the bound nearly attained) and the dual near-minimizer of Theorem 2's "
            "right-hand side; tau_t and l_t from COTL's scores before each update"
        ),
        kind="bound",
        horizon="T (target examples)",
        compute=_lemma1,
        falsifier=(
            "the classifier frozen at its start (f1 = h, f2 = 0: no update), its tau_t and l_t "
            "from its own scores: its margin errors recur, so the sum grows linearly in T "
            "against a fixed right-hand side"
        ),
        note=(
            "The statement is read from the appendix's proof (the display is partly lost): "
            "Delta_t = gamma1/2 (||f1_t - g1||^2 - ||f1_{t+1} - g1||^2) + gamma2/2 (...) >= "
            "tau_t (l_t - l_t(g)) - (k1/(8 gamma1) + k2/(8 gamma2)) tau_t^2 (its inequality "
            "(10)), summed: the differences telescope to the right-hand side minus the final "
            "distances."
        ),
        shares="zhao-hoi-cotl",
    ),
    Check(
        name="zhao-hoi-thm2",
        document=DOCUMENT,
        result="Theorem 2",
        statement=(
            "COTL: M <= (1/rho) (gamma1 ||h - f1||^2 + gamma2 ||f2||^2 + 2 C sum_t "
            "l_t(f1, f2)) for every comparator (f1, f2), rho = min(C, 4 gamma1 gamma2 / "
            "(gamma2 R1^2 + gamma1 R2^2)), l_t = max(0, 1 - y_t (f1(x1_t) + f2(x2_t))/2), "
            "k_i(x, x) <= R_i^2 = 1"
        ),
        instance=(
            "the mushrooms heterogeneous split (KEEL stand-in, per-row scaling, the source "
            "sees the first 49 of 98 features; random 300 + 400 rows (quick) / 2084 + 3560, "
            "the paper's 3000 + 5124 scaled to the file), Gaussian kernels of width 4, C = 5, "
            "gamma1 = gamma2 = 1 (rho = 2); one random target order per seed; the comparator: "
            "the best of (h + c (f1_T - h), c f2_T), c in 0, .1, .., 4, from COTL's final "
            "classifier on that order, and of the near-minimizer of the right-hand side over "
            "the whole pool (300 FISTA steps on its dual, zhao_hoi.dual_comparator): the bound "
            "holds for every comparator at once. On "
            "spambase (per-row scaling) COTL errs on about half of the stream and the bound "
            "exceeds T there"
        ),
        kind="bound",
        horizon="T (target examples)",
        compute=_thm2,
        falsifier=(
            "the majority label of the order's stream (a constant predictor, no learning) "
            "against the same right-hand side: it errs on every minority example"
        ),
        note=(
            "The proof in the appendix: when a mistake occurs l_t >= 1, so tau_t l_t >= "
            "min(C, 4 gamma1 gamma2 / (k1 gamma2 + k2 gamma1)) >= rho; with Lemma 1, (1/2) M "
            "rho <= (gamma1/2) ||h - g1||^2 + (gamma2/2) ||g2||^2 + C sum_t l_t(g), and 'the "
            "theorem follows directly by multiplying 2/rho on both sides'."
        ),
        shares="zhao-hoi-cotl",
    ),
    Check(
        name="zhao-hoi-prop2",
        document=DOCUMENT,
        result="Proposition 2",
        statement=(
            "the COTL update tau = min(C, 4 g1 g2 l / (g2 k1(x1, x1) + g1 k2(x2, x2))), f_i <- "
            "f_i + tau y k_i(x_i, .)/(2 g_i), solves problem (5): min g1/2 ||f1 - f1_t||^2 + "
            "g2/2 ||f2 - f2_t||^2 + C xi s.t. 1 - y (f1(x1) + f2(x2))/2 <= xi, xi >= 0"
        ),
        instance=(
            "linear kernels (f_i = <u_i, .>, finite-dimensional, so (5) is a QP in (u1, u2, "
            "xi)) on the mushrooms heterogeneous target rows (49 + 49 features), h's outputs "
            "as the first view's offset, C = 5, g1 = g2 = 1; every step of 64 (quick) / 256 on "
            "one random order per seed; measured: the largest absolute difference of the "
            "weights, the library's update against the QP's exact solution, over the steps so "
            "far (float64)"
        ),
        kind="identity",
        horizon="t (updates)",
        compute=_prop2,
        note=(
            "An identity: no falsifier needed (tests/test_theory_papers.py shows a wrong step is "
            "caught). The QP is solved exactly through its KKT system for every active set (the "
            "curved variables eliminated; the closed form is not used), so the check does "
            "not depend on a solver's stopping rule. tests/test_theory_papers.py also runs "
            "scipy's SLSQP (ftol 1e-15, started at the current weights) on these steps: it "
            "lands within about 1e-12 of the closed form and never beats its objective "
            "beyond its own feasibility slack; trust-constr stops at 1e-7 to 1e-10."
        ),
        shares="zhao-hoi-cotl",
    ),
)

__all__ = [
    "CHECKS",
    "COMPARATOR_SCALES",
    "QP",
    "cotl_bound",
    "cotl_problem",
    "cotl_rho",
    "linear_cotl_steps",
    "doubling_horizons",
    "solve_qp",
]
