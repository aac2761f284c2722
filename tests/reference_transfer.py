"""Float64 NumPy per-sample loops of the online transfer learners, written from the spec.

Independent of ``ojax.transfer``: support vectors are Python lists of feature vectors, kernel
values are computed from the features one pair at a time (no Gram matrix, no buffer), labels are
predicted with sign(0) = +1 and mistakes are counted before the update. Used as the oracle of
tests/test_transfer.py and as the baseline of scripts/bench_transfer.py.
"""

from __future__ import annotations

import math

import numpy as np


def gaussian(a: np.ndarray, b: np.ndarray, sigma: float) -> float:
    d = a - b
    return math.exp(-float(d @ d) / (2.0 * sigma * sigma))


class Expansion:
    """f(x) = sum_j coef_j k(sv_j, x) with a Gaussian kernel of width sigma."""

    def __init__(self, sigma: float, svs=None, coef=None):
        self.sigma = sigma
        self.svs = [] if svs is None else list(svs)
        self.coef = [] if coef is None else list(coef)

    def __call__(self, x: np.ndarray) -> float:
        total = 0.0
        for sv, c in zip(self.svs, self.coef):
            total += c * gaussian(sv, x, self.sigma)
        return total

    def add(self, x: np.ndarray, c: float) -> None:
        self.svs.append(np.array(x, np.float64))
        self.coef.append(float(c))


def label(score: float) -> float:
    return 1.0 if score >= 0 else -1.0


def _trace(scores: list, mistakes: list, svs: list, **more) -> dict:
    """A reference run's result: its scores, 0/1 mistakes and #SV per step, and `more`."""
    return dict(
        scores=np.array(scores), mistakes=np.array(mistakes), support_vectors=np.array(svs), **more
    )


def pa_step(f: Expansion, x: np.ndarray, y: float, score: float, C: float) -> bool:
    loss = max(0.0, 1.0 - y * score)
    if loss > 0:
        kxx = gaussian(x, x, f.sigma)
        f.add(x, y * min(C, loss / kxx))
        return True
    return False


def kernel_pa(X, Y, C, sigma, init: Expansion | None = None):
    """PA-I (PAIO when ``init`` is the source classifier: its terms are kept, new ones appended).

    Returns a dict: scores, mistakes, support_vectors (after each step, init's included), f.
    """
    f = Expansion(sigma) if init is None else Expansion(sigma, init.svs, init.coef)
    scores, mistakes, svs = [], [], []
    for x, y in zip(np.asarray(X, np.float64), np.asarray(Y, np.float64)):
        s = f(x)
        scores.append(s)
        mistakes.append(float(label(s) != y))
        pa_step(f, x, y, s, C)
        svs.append(len(f.svs))
    return _trace(scores, mistakes, svs, f=f)


def averaged_pa(X, Y, C, sigma):
    """Averaged PA-I: returns (h, running expansion f, scores)."""
    f = Expansion(sigma)
    avg: list[float] = []
    scores = []
    for t, (x, y) in enumerate(zip(np.asarray(X, np.float64), np.asarray(Y, np.float64)), 1):
        s = f(x)
        scores.append(s)
        if pa_step(f, x, y, s, C):
            avg.append(0.0)  # the new support vector has a zero history
        avg = [((t - 1) / t) * a + c / t for a, c in zip(avg, f.coef)]
    return Expansion(sigma, f.svs, avg), f, np.array(scores)


def _pi(z: float) -> float:
    return max(0.0, min(1.0, (z + 1.0) / 2.0))


def otl(X, Y, h: Expansion, C, sigma2, eta=0.5, fixed=False):
    """Homogeneous OTL (Algorithm 1); OTL(fixed) when ``fixed``."""
    f = Expansion(sigma2)
    w1 = w2 = 0.5
    scores, mistakes, svs, weights, sum_h, sum_f = [], [], [], [], 0.0, 0.0
    for x, y in zip(np.asarray(X, np.float64), np.asarray(Y, np.float64)):
        hx, fx = h(x), f(x)
        s = w1 * _pi(hx) + w2 * _pi(fx) - 0.5
        scores.append(s)
        mistakes.append(float(label(s) != y))
        l1 = (_pi(hx) - _pi(y)) ** 2
        l2 = (_pi(fx) - _pi(y)) ** 2
        sum_h += l1
        sum_f += l2
        if not fixed:
            w1, w2 = w1 * math.exp(-eta * l1), w2 * math.exp(-eta * l2)
            w1, w2 = w1 / (w1 + w2), w2 / (w1 + w2)
        weights.append((w1, w2))
        pa_step(f, x, y, fx, C)
        svs.append(len(h.svs) + len(f.svs))
    return _trace(scores, mistakes, svs, weights=np.array(weights), f=f, sum_h=sum_h, sum_f=sum_f)


def homotl2(X, Y, h: Expansion, C, sigma2, beta):
    """HomOTL-II: Hedge over sign(h) and sign(f) with 0/1 mistake losses.

    The weights are kept unnormalized as beta^(mistakes) so that a tie is exact."""
    f = Expansion(sigma2)
    m1 = m2 = 0
    scores, mistakes, svs, weights = [], [], [], []
    for x, y in zip(np.asarray(X, np.float64), np.asarray(Y, np.float64)):
        hx, fx = h(x), f(x)
        w1, w2 = beta**m1, beta**m2
        s = (w1 * label(hx) + w2 * label(fx)) / (w1 + w2)
        scores.append(s)
        mistakes.append(float(label(s) != y))
        m1 += int(label(hx) != y)
        m2 += int(label(fx) != y)
        w1, w2 = beta**m1, beta**m2
        weights.append((w1 / (w1 + w2), w2 / (w1 + w2)))
        pa_step(f, x, y, fx, C)
        svs.append(len(h.svs) + len(f.svs))
    return _trace(scores, mistakes, svs, weights=np.array(weights), f=f)


def cotl(X1, X2, Y, h: Expansion | None, C, sigma1, sigma2, gamma1=1.0, gamma2=1.0):
    """COTL (Algorithm 2); COTL0 when ``h`` is None. #SV: |SV(h)| + updates."""
    f1 = Expansion(sigma1) if h is None else Expansion(sigma1, h.svs, h.coef)
    f2 = Expansion(sigma2)
    scores, mistakes, svs = [], [], []
    X1, X2 = np.asarray(X1, np.float64), np.asarray(X2, np.float64)
    for x1, x2, y in zip(X1, X2, np.asarray(Y, np.float64)):
        s = 0.5 * (f1(x1) + f2(x2))
        scores.append(s)
        mistakes.append(float(label(s) != y))
        loss = max(0.0, 1.0 - y * s)
        if loss > 0:
            k1, k2 = gaussian(x1, x1, sigma1), gaussian(x2, x2, sigma2)
            tau = min(C, 4 * gamma1 * gamma2 * loss / (gamma2 * k1 + gamma1 * k2))
            f1.add(x1, tau / (2 * gamma1) * y)
            f2.add(x2, tau / (2 * gamma2) * y)
        svs.append(len(f1.svs))
    return _trace(scores, mistakes, svs, f1=f1, f2=f2)


def sct(X1, X2, Y, h: Expansion, C, sigma1, sigma2):
    """SCT: PAIO on view 1 + PA on view 2, each updated on its own hinge loss."""
    f1 = Expansion(sigma1, h.svs, h.coef)
    f2 = Expansion(sigma2)
    scores, mistakes, svs = [], [], []
    X1, X2 = np.asarray(X1, np.float64), np.asarray(X2, np.float64)
    for x1, x2, y in zip(X1, X2, np.asarray(Y, np.float64)):
        a, b = f1(x1), f2(x2)
        s = a + b
        scores.append(s)
        mistakes.append(float(label(s) != y))
        pa_step(f1, x1, y, a, C)
        pa_step(f2, x2, y, b, C)
        svs.append(len(f1.svs) + len(f2.svs))
    return _trace(scores, mistakes, svs, f1=f1, f2=f2)


def linear_pa(X, Y, C):
    """Linear PA-I: returns (scores, weights after each step)."""
    X = np.asarray(X, np.float64)
    w = np.zeros(X.shape[1])
    scores, ws = [], []
    for x, y in zip(X, np.asarray(Y, np.float64)):
        s = float(w @ x)
        scores.append(s)
        loss = max(0.0, 1.0 - y * s)
        n2 = float(x @ x)
        if loss > 0 and n2 > 0:
            w = w + min(C, loss / n2) * y * x
        ws.append(w.copy())
    return np.array(scores), np.array(ws)
