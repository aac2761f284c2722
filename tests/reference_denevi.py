"""Plain float64 NumPy per-sample loops of Denevi, Stamos & Pontil (2020), written from the
Denevi et al. spec independently of ojax: the oracle of the tests and the baseline of
scripts/bench_denevi.py.

A task is a tuple ``(x_train (n_t, d), y_train (n_t,), x_test (m_t, d), y_test (m_t,))`` of real
points only (no padding). Every function returns per-point records so that tests can compare step
by step.
"""

from __future__ import annotations

import math

import numpy as np

ONS_STEP = 2.0 / (2.0 - math.log(3.0))


class Magnitude:
    """One-dimensional bettor: wealth W, betting fraction beta, KT sum of coins, ONS sum A."""

    def __init__(self, kind: str, wealth: float):
        self.kind = kind
        self.wealth = float(wealth)
        self.beta = 0.0
        self.coins = 0.0
        self.a = 1.0

    def value(self) -> float:
        return self.beta * self.wealth

    def step(self, coin: float, k: int) -> None:
        m_prev = self.beta * self.wealth
        self.wealth = self.wealth - coin * m_prev
        if self.kind == "kt":
            self.coins += coin
            self.beta = -self.coins / k
        else:
            z = coin / (1.0 - coin * self.beta)
            self.a += z * z
            self.beta = min(0.5, max(-0.5, self.beta - ONS_STEP * z / self.a))


class DirectionMagnitude:
    """Direction on the unit ball (projected OGD, step sqrt(2/k) scale) times a bettor."""

    def __init__(self, kind: str, dim: int, wealth: float, scale: float = 1.0):
        self.v = np.zeros(dim)
        self.mag = Magnitude(kind, wealth)
        self.scale = scale

    def point(self) -> np.ndarray:
        return self.mag.value() * self.v

    def step(self, g: np.ndarray, k: int) -> None:
        coin = float(g @ self.v) * self.scale
        u = self.v - math.sqrt(2.0 / k) * self.scale * g
        self.v = u / max(1.0, float(np.linalg.norm(u)))
        self.mag.step(coin, k)


def subgradient(x: np.ndarray, y: float, w: np.ndarray) -> np.ndarray:
    pred = float(x @ w)
    s = 1.0 if y < pred else -1.0  # the tie goes to -1
    return s * x


def test_error(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> float:
    return float(np.mean(np.abs(y - x @ w))) if len(y) else 0.0


def run_pf(
    tasks,
    kind: str,
    mode: str,
    bias=None,
    inner_wealth=1.0,
    meta_wealth=1.0,
    scale=1.0,
    counter="global",
):
    """Parameter-free learners: mode "fixed" (Alg. 3 with ``bias``), "aggressive", "lazy".

    Returns a dict with per-task lists ``errors``, ``iterates`` (pre-update prediction vectors),
    arrays ``test`` (per task), ``biases`` ((T + 1, d): before the first task, after each).
    """
    d = tasks[0][0].shape[1]
    meta = DirectionMagnitude(kind, d, meta_wealth, scale)
    fixed = np.zeros(d) if bias is None else np.asarray(bias, float)
    out = {"errors": [], "iterates": [], "test": [], "biases": []}

    def current_bias():
        return fixed if mode == "fixed" else meta.point()

    out["biases"].append(current_bias().copy())
    k_global = lazy_updates = 0
    for t, (x, y, x_test, y_test) in enumerate(tasks):
        inner = DirectionMagnitude(kind, d, inner_wealth, scale)
        n_t = len(y)
        errs, ws, g_sum = [], [], np.zeros(d)
        for i in range(n_t):
            w = inner.point() + current_bias()
            errs.append(abs(y[i] - float(x[i] @ w)))
            ws.append(w.copy())
            g = subgradient(x[i], y[i], w)
            g_sum += g
            inner.step(g, i + 1)
            k_global += 1
            if mode == "aggressive":
                k = k_global if counter == "global" else t * n_t + i + 1
                meta.step(g, k)
        w_bar = np.mean(ws, axis=0) if ws else current_bias().copy()
        out["test"].append(test_error(x_test, y_test, w_bar))
        if mode == "lazy" and n_t > 0:
            lazy_updates += 1
            meta.step(g_sum / n_t, lazy_updates)
        out["errors"].append(np.asarray(errs))
        out["iterates"].append(np.asarray(ws))
        out["biases"].append(current_bias().copy())
    out["test"] = np.asarray(out["test"])
    out["biases"] = np.asarray(out["biases"])
    return out


def run_ss(tasks, mode: str, eta_in: float, eta_meta: float = 0.0, bias=None):
    """Tuned OGD: mode "fixed" (``bias``), "aggressive" or "lazy"; same outputs as run_pf."""
    d = tasks[0][0].shape[1]
    theta = np.zeros(d) if bias is None else np.asarray(bias, float).copy()
    out = {"errors": [], "iterates": [], "test": [], "biases": [theta.copy()]}
    for x, y, x_test, y_test in tasks:
        u = np.zeros(d)
        errs, ws, g_sum = [], [], np.zeros(d)
        for i in range(len(y)):
            w = u + theta
            errs.append(abs(y[i] - float(x[i] @ w)))
            ws.append(w.copy())
            g = subgradient(x[i], y[i], w)
            g_sum += g
            u = u - eta_in * g
            if mode == "aggressive":
                theta = theta - eta_meta * g
        w_bar = np.mean(ws, axis=0) if ws else theta.copy()
        out["test"].append(test_error(x_test, y_test, w_bar))
        if mode == "lazy":
            theta = theta - eta_meta * g_sum
        out["errors"].append(np.asarray(errs))
        out["iterates"].append(np.asarray(ws))
        out["biases"].append(theta.copy())
    out["test"] = np.asarray(out["test"])
    out["biases"] = np.asarray(out["biases"])
    return out


def meta_test(tasks, bias, kind=None, inner_wealth=1.0, eta_in=None, scale=1.0) -> float:
    """Mean test error over ``tasks`` of the within-task learner with ``bias`` frozen."""
    if eta_in is None:
        return float(np.mean(run_pf(tasks, kind, "fixed", bias, inner_wealth, 1.0, scale)["test"]))
    return float(np.mean(run_ss(tasks, "fixed", eta_in, 0.0, bias)["test"]))


def cumulative_curve(errors_per_task) -> np.ndarray:
    flat = np.concatenate([np.asarray(e, float) for e in errors_per_task])
    return np.cumsum(flat) / np.arange(1, len(flat) + 1)


def test_curve(tests) -> np.ndarray:
    tests = np.asarray(tests, float)
    return np.cumsum(tests) / np.arange(1, len(tests) + 1)


def tasks_from_block(block, index=()) -> list:
    """Real points of a padded block (NumPy arrays of a TaskBlock) as a list of task tuples."""
    arrays = [np.asarray(a)[index] for a in block]
    x, y, m, xt, yt, mt = arrays
    return [(x[t][m[t]], y[t][m[t]], xt[t][mt[t]], yt[t][mt[t]]) for t in range(len(x))]
