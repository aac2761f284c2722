"""Independent float64 NumPy per-sample loops of the basics learners, written from the spec.

Each returns the played points ``w_1..w_n`` (``(n, d)``) for a stream of loss data ``zs``.
"""

from __future__ import annotations

import numpy as np


def ball(u: np.ndarray, radius: float) -> np.ndarray:
    norm = np.sqrt(np.sum(u * u))
    return u if norm <= radius else u * (radius / norm)


def ftl_quadratic(zs: np.ndarray, radius: float) -> np.ndarray:
    """w_1 = 0; w_{t+1} = P_ball(mean(z_1..z_t))."""
    out, total = [], np.zeros(zs.shape[1])
    w = np.zeros(zs.shape[1])
    for t, z in enumerate(zs, start=1):
        out.append(w.copy())
        total = total + z
        w = ball(total / t, radius)
    return np.array(out)


def ftl_linear_ball(zs: np.ndarray, radius: float) -> np.ndarray:
    """w_1 = 0; w_{t+1} = argmin_{||w|| <= r} <w, sum z> = -r S / ||S|| (0 while S = 0)."""
    out, total = [], np.zeros(zs.shape[1])
    for z in zs:
        norm = np.linalg.norm(total)
        out.append(np.zeros_like(total) if norm == 0 else -radius * total / norm)
        total = total + z
    return np.array(out)


def ftrl(zs: np.ndarray, lam: float, radius: float) -> np.ndarray:
    """w_{t+1} = P_ball(-(1/lambda) sum_{s<=t} z_s), lazy projection from x0 = 0."""
    out, total = [], np.zeros(zs.shape[1])
    for z in zs:
        out.append(ball(-total / lam, radius))
        total = total + z
    return np.array(out)


def ogd(grads_of, dim: int, n: int, alpha: float, radius: float, decaying: bool) -> np.ndarray:
    """w_1 = 0; w_{t+1} = P(w_t - alpha_t g_t) with alpha_t = alpha or alpha / sqrt(t);
    ``grads_of(t, w)`` gives the gradient at the played point."""
    out, w = [], np.zeros(dim)
    for t in range(1, n + 1):
        out.append(w.copy())
        step = alpha / np.sqrt(t) if decaying else alpha
        w = ball(w - step * grads_of(t - 1, w), radius)
    return np.array(out)


def hedge(zs: np.ndarray, eta: float) -> np.ndarray:
    """w_{t,i} proportional to exp(-eta L_{t-1,i}) (uniform prior), one expert at a time."""
    m = zs.shape[1]
    cumulative = np.zeros(m)
    out = []
    for z in zs:
        weights = np.array([np.exp(-eta * (cumulative[i] - cumulative.min())) for i in range(m)])
        out.append(weights / weights.sum())
        cumulative = cumulative + z
    return np.array(out)
