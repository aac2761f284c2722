"""Float64 NumPy per-sample reference loops for iterate averaging, written from the spec.

Independent of ``ojax.averaging``: plain loops, ``rho ** t`` in float64 (its underflow to 0 is
harmless in float64 at the sizes used), no chunking and no merge rule. Reused by
``scripts/bench_regpath.py`` as the NumPy baseline.
"""

from __future__ import annotations

import numpy as np


def sgd_iterates(xs, ys, eta, w0=None):
    """w_t = w_{t-1} - eta (<w_{t-1}, x_t> - y_t) x_t, t = 1..n; returns w_0..w_n (n+1, d)."""
    xs = np.asarray(xs, np.float64)
    ys = np.asarray(ys, np.float64)
    n, d = xs.shape
    w = np.zeros(d) if w0 is None else np.array(w0, np.float64)
    out = np.empty((n + 1, d))
    out[0] = w
    for t in range(n):
        w = w - eta * (w @ xs[t] - ys[t]) * xs[t]
        out[t + 1] = w
    return out


def ridge_sgd(xs, ys, gamma, lam, w0=None):
    """v_t = v_{t-1} - gamma (<v, x_t> - y_t) x_t - gamma lam (v_{t-1} - w_0); returns v_0..v_n."""
    xs = np.asarray(xs, np.float64)
    ys = np.asarray(ys, np.float64)
    n, d = xs.shape
    anchor = np.zeros(d) if w0 is None else np.array(w0, np.float64)
    v = anchor.copy()
    out = np.empty((n + 1, d))
    out[0] = v
    for t in range(n):
        v = v - gamma * (v @ xs[t] - ys[t]) * xs[t] - gamma * lam * (v - anchor)
        out[t + 1] = v
    return out


def geometric_average(iterates, rho):
    """c_n sum_{t=0..n} rho^t w_t with c_n = (1 - rho) / (1 - rho^{n+1}), 1/(n+1) at rho = 1."""
    ws = np.asarray(iterates, np.float64)
    total = np.zeros(ws.shape[1])
    mass = 0.0
    for t in range(ws.shape[0]):
        weight = rho**t
        total += weight * ws[t]
        mass += weight
    return total / mass


def prefix_geometric_averages(iterates, rho):
    """Row t: the geometric average of w_0..w_t (serial loop)."""
    ws = np.asarray(iterates, np.float64)
    out = np.empty_like(ws)
    total = np.zeros(ws.shape[1])
    mass = 0.0
    for t in range(ws.shape[0]):
        weight = rho**t
        total = total + weight * ws[t]
        mass += weight
        out[t] = total / mass
    return out


def polyak_average(iterates):
    ws = np.asarray(iterates, np.float64)
    total = np.zeros(ws.shape[1])
    for t in range(ws.shape[0]):
        total += ws[t]
    return total / ws.shape[0]


def tail_average(iterates, tau):
    """Mean of w_{tau+1}..w_n."""
    ws = np.asarray(iterates, np.float64)
    n = ws.shape[0] - 1
    total = np.zeros(ws.shape[1])
    for t in range(tau + 1, n + 1):
        total += ws[t]
    return total / (n - tau)


def prefix_tail_averages(iterates, tau):
    """Row k: mean of w_{tau+1}..w_k if k > tau, else w_k (the streaming tail averager)."""
    ws = np.asarray(iterates, np.float64)
    out = np.empty_like(ws)
    total = np.zeros(ws.shape[1])
    for k in range(ws.shape[0]):
        if k > tau:
            total += ws[k]
            out[k] = total / (k - tau)
        else:
            out[k] = ws[k]
    return out


def expected_sgd(cov, cross, eta, w0, n):
    """E[w_0..w_n] from E w_t = (I - eta Sigma) E w_{t-1} + eta E[x y]."""
    m = np.array(w0, np.float64)
    out = [m.copy()]
    for _ in range(n):
        m = m - eta * (cov @ m - cross)
        out.append(m.copy())
    return np.array(out)


def expected_ridge_sgd(cov, cross, gamma, lam, w0, n):
    """E[v_n] from E v_t = E v_{t-1} - gamma (Sigma E v_{t-1} - E[x y] + lam (E v_{t-1} - w_0))."""
    m = np.array(w0, np.float64)
    for _ in range(n):
        m = m - gamma * (cov @ m - cross + lam * (m - w0))
    return m


def ridge(cov, cross, lam, w0):
    """(Sigma + lam I)^{-1} (E[x y] + lam w_0)."""
    d = cov.shape[0]
    return np.linalg.solve(cov + lam * np.eye(d), cross + lam * np.asarray(w0, np.float64))


def rho_exact(eta, lam):
    """rho = 1 / (1 + eta lam) (the exact convention)."""
    return 1.0 / (1.0 + eta * lam)


def rho_paper(eta, lam):
    """rho = 1 - eta lam (the paper's written weights)."""
    return 1.0 - eta * lam


def path_numpy(xs, ys, eta, rhos, w0=None):
    """The NumPy baseline of the regularization path: one SGD loop, then weights @ iterates."""
    ws = sgd_iterates(xs, ys, eta, w0)
    n1 = ws.shape[0]
    t = np.arange(n1)
    rows = []
    for rho in rhos:
        if rho == 1.0:
            rows.append(np.full(n1, 1.0 / n1))
        else:
            r = rho**t
            rows.append(r * (1 - rho) / (1 - rho**n1))
    return np.array(rows) @ ws
