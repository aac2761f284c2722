"""Independent float64 NumPy per-step loops of the non-stationary learners, written from the
papers' pseudo-code (plain weights, Python lists of experts, explicit intervals and alive
sets; no logarithms, no slots).

The OCO learners take ``grad_of(t, w)`` (the gradient at the played point of round ``t``,
0-based) and return the played points ``(T, d)``; the expert learners take the loss matrix.
"""

from __future__ import annotations

import math

import numpy as np


def ball(u: np.ndarray, radius: float) -> np.ndarray:
    norm = np.linalg.norm(u)
    return u if norm <= radius else u * (radius / norm)


# ----------------------------------------------------------------------------- experts


def fixed_share(losses: np.ndarray, eta: float, alpha: float, scheme: str) -> np.ndarray:
    """Herbster & Warmuth (1998) Fixed Share / Bousquet & Warmuth (2002) Figure 1 with
    v_0 = uniform: the weights played at each round."""
    n = losses.shape[1]
    start = np.full(n, 1.0 / n)
    w, posteriors, out = start.copy(), [start.copy()], []
    for t, loss in enumerate(losses, start=1):
        out.append(w.copy())
        v = w * np.exp(-eta * loss)
        v = v / v.sum()
        if scheme == "herbster_warmuth":
            pool = alpha * v.sum()
            w = np.array([(1 - alpha) * v[i] + (pool - alpha * v[i]) / (n - 1) for i in range(n)])
        elif scheme == "start":
            w = (1 - alpha) * v + alpha * start
        else:  # uniform past: beta(q) = alpha / t for q = 0..t-1
            w = (1 - alpha) * v + sum(alpha / t * p for p in posteriors)
        posteriors.append(v)
    return np.array(out)


def _phi(r: float, c: float) -> float:
    return math.exp(max(r, 0.0) ** 2 / (3 * c))


def normal_weight(r: float, c: float) -> float:
    """Luo & Schapire (2015): w(R, C) = (Phi(R + 1, C + 1) - Phi(R - 1, C + 1)) / 2."""
    return 0.5 * (_phi(r + 1, c + 1) - _phi(r - 1, c + 1))


def ada_normal_hedge(losses: np.ndarray) -> np.ndarray:
    """AdaNormalHedge (Algorithm 1), uniform prior, every expert awake."""
    n = losses.shape[1]
    regret, variation, out = np.zeros(n), np.zeros(n), []
    for loss in losses:
        w = np.array([normal_weight(regret[i], variation[i]) / n for i in range(n)])
        p = w / w.sum() if w.sum() > 0 else np.full(n, 1.0 / n)
        out.append(p)
        r = p @ loss - loss
        regret, variation = regret + r, variation + np.abs(r)
    return np.array(out)


# ----------------------------------------------------------------------------- OCO meta


def ader(grad_of, dim: int, num_steps: int, steps, beta: float, radius: float) -> np.ndarray:
    """Improved Ader (Zhang, Lu & Zhou 2018, Algorithms 3-4): OGD experts on the surrogate
    loss <g_t, x - x_t>, Hedge from the prior (1 + 1/N) / (i (i + 1))."""
    n = len(steps)
    w = np.array([(1 + 1 / n) / (i * (i + 1)) for i in range(1, n + 1)])
    experts = [np.zeros(dim) for _ in range(n)]
    out = []
    for t in range(num_steps):
        x = sum(w[i] * experts[i] for i in range(n))
        out.append(x)
        g = grad_of(t, x)
        surrogate = np.array([g @ (experts[i] - x) for i in range(n)])
        w = w * np.exp(-beta * surrogate)
        w = w / w.sum()
        experts = [ball(experts[i] - steps[i] * g, radius) for i in range(n)]
    return np.array(out)


def _cover(grad_of, dim, num_steps, levels, eta, radius, scale, meta):
    """SAOL (Daniely et al. 2015, Algorithm 1) or sleeping AdaNormalHedge (Luo & Schapire
    2015) over OGD with step eta / sqrt(s) (s: updates since its interval began) restarted on
    the geometric cover [i 2^k, (i + 1) 2^k - 1]."""
    point = [np.zeros(dim) for _ in range(levels)]
    done = [0] * levels
    weight = [0.0] * levels  # SAOL's w_t(I)
    regret, variation = [0.0] * levels, [0.0] * levels
    out = []
    for t in range(1, num_steps + 1):
        active = [k for k in range(levels) if t >= 2**k]
        for k in active:
            if t % 2**k == 0:  # a new interval of level k starts at t
                point[k], done[k] = np.zeros(dim), 0
                weight[k] = min(0.5, 1 / math.sqrt(2**k))
                regret[k], variation[k] = 0.0, 0.0
        if meta == "saol":
            total = sum(weight[k] for k in active)
            p = {k: weight[k] / total for k in active}
        else:
            raw = {k: normal_weight(regret[k], variation[k]) / levels for k in active}
            total = sum(raw.values())
            p = {k: (raw[k] / total if total > 0 else 1 / len(active)) for k in active}
        x = sum(p[k] * point[k] for k in active)
        out.append(x)
        g = grad_of(t - 1, x)
        meta_loss = scale * (g @ x)
        for k in active:
            r = meta_loss - scale * (g @ point[k])
            if meta == "saol":
                weight[k] *= 1 + min(0.5, 1 / math.sqrt(2**k)) * r
            else:
                regret[k] += r
                variation[k] += abs(r)
        for k in range(levels):  # every copy takes the gradient (inactive ones restart later)
            done[k] += 1
            point[k] = ball(point[k] - eta / math.sqrt(done[k]) * g, radius)
    return np.array(out)


def saol(grad_of, dim, num_steps, levels, eta, radius, scale) -> np.ndarray:
    return _cover(grad_of, dim, num_steps, levels, eta, radius, scale, "saol")


def ada_normal_hedge_cover(grad_of, dim, num_steps, levels, eta, radius, scale) -> np.ndarray:
    return _cover(grad_of, dim, num_steps, levels, eta, radius, scale, "anh")


def lifetime(i: int) -> int:
    """Hazan & Seshadhri (2009): i = r 2^k (r odd) lives 2^(k+2) + 1 rounds."""
    k = (i & -i).bit_length() - 1
    return 2 ** (k + 2) + 1


def flh(xs, ys, eta: float, radius: float, alpha: float, pruned: bool) -> np.ndarray:
    """Follow-the-Leading-History (FLH1; FLH2 with pruning) over projected OGD with a constant
    step, on the square loss 0.5 (<w, x> - y)^2 of a linear model: the predictions."""
    dim = xs.shape[1]
    experts = {1: np.zeros(dim)}
    v = {1: 1.0}
    out = []
    for t, (x, y) in enumerate(zip(xs, ys), start=1):
        point = sum(v[j] * experts[j] for j in v)
        out.append(point @ x)
        f = {j: 0.5 * (experts[j] @ x - y) ** 2 for j in v}
        total = sum(v[j] * math.exp(-alpha * f[j]) for j in v)
        v_hat = {j: v[j] * math.exp(-alpha * f[j]) / total for j in v}
        for j in v:
            experts[j] = ball(experts[j] - eta * (experts[j] @ x - y) * x, radius)
        v = {j: (1 - 1 / (t + 1)) * v_hat[j] for j in v_hat}
        v[t + 1], experts[t + 1] = 1 / (t + 1), np.zeros(dim)
        if pruned:
            alive = {j for j in v if j <= t + 1 <= j + lifetime(j) - 1}
            total = sum(v[j] for j in alive)
            v = {j: v[j] / total for j in alive}
    return np.array(out)


# ----------------------------------------------------------------------------- baselines


def restarted_ogd(grad_of, dim, num_steps, eta, radius, period) -> np.ndarray:
    """OGD sent back to 0 after every `period` updates."""
    w, out = np.zeros(dim), []
    for t in range(1, num_steps + 1):
        out.append(w.copy())
        w = np.zeros(dim) if t % period == 0 else ball(w - eta * grad_of(t - 1, w), radius)
    return np.array(out)


def discounted_ogd(grad_of, dim, num_steps, eta, radius, discount) -> np.ndarray:
    """w_{t+1} = P(lambda w_t - eta g_t) (anchor 0)."""
    w, out = np.zeros(dim), []
    for t in range(num_steps):
        out.append(w.copy())
        w = ball(discount * w - eta * grad_of(t, w), radius)
    return np.array(out)
