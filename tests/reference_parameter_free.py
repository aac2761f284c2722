"""Float64 NumPy per-step loops of the parameter-free baselines, written from each paper's
pseudo-code (not from ojax's code), for the step-by-step tests.

Each function plays the losses ``f_t`` given by ``zs`` (``"linear"``: ``<w, z>``, gradient ``z``;
``"quadratic"``: ``||w - z||^2 / 2``, gradient ``w - z``) and returns the played points
``(n, d)``, the point of step ``t`` being the one the gradient of ``f_t`` is taken at.

Where a peer (``optax.contrib``) follows other conventions than the paper, a keyword switches
the loop to the peer's convention, so that the parity tests can show the two agree once the
convention is mapped and that the difference is exactly that convention.
"""

from __future__ import annotations

import math

import numpy as np


def gradient(objective: str, w: np.ndarray, z: np.ndarray) -> np.ndarray:
    return z.copy() if objective == "linear" else w - z


def cocob(zs, objective, x0, alpha, initial_scale=0.0):
    """COCOB-Backprop (Orabona & Tommasi 2017, Algorithm 2), one coordinate at a time, with
    the paper's negative gradients. ``initial_scale``: ``L_0`` (the paper: 0; the authors' code
    and optax: 1e-8)."""
    n, d = zs.shape
    w1 = np.array(x0, np.float64)
    w = w1.copy()
    big_l = np.full(d, float(initial_scale))
    big_g, reward, theta = np.zeros(d), np.zeros(d), np.zeros(d)
    out = np.zeros((n, d))
    for t in range(n):
        out[t] = w
        neg = -gradient(objective, w, zs[t])  # the paper's (negative) stochastic subgradient
        for i in range(d):
            big_l[i] = max(big_l[i], abs(neg[i]))
            big_g[i] += abs(neg[i])
            reward[i] = max(reward[i] + (w[i] - w1[i]) * neg[i], 0.0)
            theta[i] += neg[i]
            if big_l[i] > 0:
                den = big_l[i] * max(big_g[i] + big_l[i], alpha * big_l[i])
                w[i] = w1[i] + theta[i] / den * (big_l[i] + reward[i])
    return out


def kt_coordinate(zs, objective, x0, epsilon, scale):
    """Krichevsky-Trofimov coin betting per coordinate (Orabona & Pal 2016): coins
    ``c = -g scale``, wealth ``eps + sum c_i x_i``, bet ``x_t = (sum_{i<t} c_i / t) W_{t-1}``."""
    n, d = zs.shape
    x0 = np.array(x0, np.float64)
    wealth, coin_sum = np.full(d, float(epsilon)), np.zeros(d)
    out = np.zeros((n, d))
    for t in range(1, n + 1):
        bet = coin_sum / t * wealth
        out[t - 1] = x0 + bet
        coin = -gradient(objective, x0 + bet, zs[t - 1]) * scale
        wealth = wealth + coin * bet
        coin_sum = coin_sum + coin
    return out


def dog(zs, objective, x0, r_eps, eps=0.0):
    """DoG (Ivgi, Hinder & Carmon 2023, Algorithm 1). ``eps``: optax's term under the root."""
    n, d = zs.shape
    x0 = np.array(x0, np.float64)
    x, r_bar, g_sum = x0.copy(), float(r_eps), 0.0
    out = np.zeros((n, d))
    for t in range(n):
        out[t] = x
        g = gradient(objective, x, zs[t])
        r_bar = max(r_bar, math.sqrt(float(np.sum((x - x0) ** 2))))
        g_sum += float(g @ g)
        eta = r_bar / math.sqrt(g_sum + eps) if g_sum + eps > 0 else 0.0
        x = x - eta * g
    return out


def dadapt_sgd(zs, objective, x0, d0, gamma, growth_rate=math.inf):
    """SGD with D-Adaptation (Defazio & Mishchenko 2023, Algorithm 3 of the preprint); with
    a finite ``growth_rate``, d grows at most that factor a step (the authors' DAdaptSGD)."""
    n, dim = zs.shape
    x = np.array(x0, np.float64)
    s, d, lam_sq_sum, g0_norm = np.zeros(dim), float(d0), 0.0, None
    out = np.zeros((n, dim))
    for k in range(n):
        out[k] = x
        g = gradient(objective, x, zs[k])
        if g0_norm is None:
            g0_norm = math.sqrt(float(g @ g))
        if g0_norm == 0:  # "if g_0 = 0, exit with x_0"
            continue
        lam = d * gamma / g0_norm
        s = s + lam * g
        x = x - lam * g
        lam_sq_sum += lam**2 * float(g @ g)
        s_norm = math.sqrt(float(s @ s))
        if s_norm > 0:
            d = max(d, min((s_norm**2 - lam_sq_sum) / s_norm, d * growth_rate))
    return out


def prodigy(zs, objective, x0, d0, gamma, beta1, beta2, eps, optax_conventions=False):
    """Prodigy, Adam version (Mishchenko & Defazio 2024). ``optax_conventions``: Adam's bias
    correction ``sqrt(1 - beta2^k) / (1 - beta1^k)`` multiplies gamma at step k (in r, s and
    the step), and the step's ``d eps`` uses the new ``d_{k+1}`` (as ``optax.contrib.prodigy``)."""
    n, dim = zs.shape
    x0 = np.array(x0, np.float64)
    x, m, v, s = x0.copy(), np.zeros(dim), np.zeros(dim), np.zeros(dim)
    r, d = 0.0, float(d0)
    root = math.sqrt(beta2)
    out = np.zeros((n, dim))
    for k in range(n):
        out[k] = x
        g = gradient(objective, x, zs[k])
        gk = gamma
        if optax_conventions:
            gk = gamma * math.sqrt(1 - beta2 ** (k + 1)) / (1 - beta1 ** (k + 1))
        m = beta1 * m + (1 - beta1) * d * g
        v = beta2 * v + (1 - beta2) * d**2 * g**2
        r = root * r + (1 - root) * gk * d**2 * float(g @ (x0 - x))
        s = root * s + (1 - root) * gk * d**2 * g
        l1 = float(np.sum(np.abs(s)))
        d_next = max(d, r / l1) if l1 > 0 else d
        d_eps = d_next if optax_conventions else d
        step = np.zeros(dim)
        for i in range(dim):  # a coordinate with v = 0 has m = 0: no move
            if v[i] > 0:
                step[i] = m[i] / (math.sqrt(v[i]) + d_eps * eps)
        x = x - gk * d * step
        d = d_next
    return out


def mechanic_sgd(zs, objective, x0, eta, s_init, lam, betas, eps=1e-8, optax_conventions=False):
    """Mechanic (Cutkosky, Defazio & Mehta 2023, Algorithm 1) on SGD with step ``eta``.

    ``optax_conventions``: as ``optax.contrib.mechanize``: ``s_1 = s_init`` per beta (the
    paper: 0), the coin is clipped to ``[-m_{t-1}, m_{t-1}]`` in the reward, the reward is kept
    unclipped (only the wealth uses ``max(0, r)``), ``m`` takes ``|h| + eps``, ``Delta_t`` is
    recomputed as ``(x_t - x_ref) / (sum s + eps)`` and the weight-decay term divides by
    ``||x_t|| + eps``."""
    n, dim = zs.shape
    betas = np.asarray(betas, np.float64)
    nb = len(betas)
    x_ref = np.array(x0, np.float64)
    delta = np.zeros(dim)
    s = np.full(nb, float(s_init)) if optax_conventions else np.zeros(nb)
    m, v, r = np.zeros(nb), np.zeros(nb), np.zeros(nb)
    x = x_ref.copy()
    out = np.zeros((n, dim))
    for t in range(n):
        out[t] = x
        g = gradient(objective, x, zs[t])
        total = float(np.sum(s))
        x_norm = math.sqrt(float(x @ x))
        if optax_conventions:
            delta = (x - x_ref) / (total + eps)
            wd = lam * total * math.sqrt(float(g @ g)) / (x_norm + eps) * x
        else:
            wd = lam * total * math.sqrt(float(g @ g)) / x_norm * x if x_norm > 0 else 0 * x
        h = float(delta @ (g + wd))
        delta = delta - eta * g  # the base (SGD) adds its update to Delta
        for i in range(nb):
            coin = min(max(h, -m[i]), m[i]) if optax_conventions else h
            m[i] = max(betas[i] * m[i], abs(h) + (eps if optax_conventions else 0.0))
            v[i] = betas[i] ** 2 * v[i] + h**2
            r[i] = betas[i] * r[i] - s[i] * coin
            if not optax_conventions:  # optax keeps r unclipped and clips it in the wealth only
                r[i] = max(0.0, r[i])
        wealth = s_init * m / nb + np.maximum(r, 0.0)
        s = wealth / (np.sqrt(v) + eps)
        x = x_ref + float(np.sum(s)) * delta
    return out


def schedule_free_sgd(
    zs, objective, x0, gamma, beta, warmup=0, averaging="uniform", lag=False, schedule=None
):
    """Schedule-Free SGD (Defazio et al. 2024): returns the played ``y`` and the averages ``x``
    (both ``(n, d)``, before each step's update). ``averaging``: ``c_{t+1} = 1 / (t + 1)``
    (``"uniform"``) or ``gamma_t^2 / sum gamma_i^2`` (``"weighted"``). ``lag``: the z-step uses
    ``gamma_{t-1}`` (``gamma_0 = 0``) while the weights use ``gamma_t``, as
    ``optax.contrib.schedule_free_sgd`` does with a warmup. ``schedule``: ``t -> gamma_t`` in
    place of the warmup formula (e.g. a peer's own schedule, with its rounding)."""
    n, dim = zs.shape
    z = np.array(x0, np.float64)
    x = z.copy()
    weights = 0.0
    ys, xs = np.zeros((n, dim)), np.zeros((n, dim))

    def rate(t):
        if schedule is not None:
            return schedule(t)
        return gamma * (min(1.0, t / warmup) if warmup > 0 else 1.0)

    for t in range(1, n + 1):
        y = (1 - beta) * z + beta * x
        ys[t - 1], xs[t - 1] = y, x
        g = gradient(objective, y, zs[t - 1])
        z = z - (rate(t - 1) if lag else rate(t)) * g
        weights += rate(t) ** 2
        c = 1.0 / (t + 1) if averaging == "uniform" else rate(t) ** 2 / weights
        x = (1 - c) * x + c * z
    return ys, xs
