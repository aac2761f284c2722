"""Independent float64 NumPy per-step loops of the classic baselines, written from the papers'
pseudo-code (not from the JAX code): AdaGrad (Duchi et al. 2011, Algorithm 1 with the composite
mirror-descent update), FTRL-Proximal (McMahan et al. 2013, Algorithm 1, logistic regression on
sparse examples), Online Newton Step (Hazan et al. 2007), AdaHedge (de Rooij et al. 2014, the
paper's ``mix`` routine on cumulative losses) and Squint (Koolen & van Erven 2015, the
evidence integral by quadrature).

Each returns the played points, one row per step.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import integrate, optimize


def metric_ball(y: np.ndarray, a: np.ndarray, radius: float) -> np.ndarray:
    """argmin_{||x|| <= radius} (x - y)' A (x - y) for a symmetric positive definite ``A``:
    ``y`` if it is inside, else ``x = (A + mu I)^-1 A y`` with ``||x|| = radius``, ``mu`` found by
    Brent's method (a linear solve per evaluation; no eigendecomposition)."""
    if np.linalg.norm(y) <= radius:
        return y
    eye = np.eye(len(y))

    def point(mu: float) -> np.ndarray:
        return np.linalg.solve(a + mu * eye, a @ y)

    high = 1.0
    while np.linalg.norm(point(high)) > radius:
        high *= 2.0
    mu = optimize.brentq(
        lambda m: np.linalg.norm(point(m)) - radius, 0.0, high, xtol=1e-300, rtol=1e-15
    )
    return point(mu)


def adagrad(grad_of, x1, n: int, eta: float, delta: float, radius: float, domain: str):
    """x_{t+1} = argmin_{x in X} eta <g_t, x> + 0.5 (x - x_t)' H_t (x - x_t), with
    H_t = delta I + diag(||g_{1:t,i}||_2); the pseudo-inverse where H_t,ii = 0."""
    x, history, out, projected = np.array(x1, np.float64), [], [], 0
    for t in range(n):
        out.append(x.copy())
        g = np.asarray(grad_of(t, x), np.float64)
        history.append(g)
        s = np.sqrt(np.sum(np.array(history) ** 2, axis=0))  # ||g_{1:t,i}||_2
        h = delta + s
        y = x.copy()
        for i in range(len(x)):
            if h[i] > 0:
                y[i] = x[i] - eta * g[i] / h[i]
        if domain == "box":
            x = np.clip(y, -radius, radius)
        elif domain == "l2_ball":
            x = metric_ball(y, np.diag(h), radius)
        else:
            x = y
        projected += int(not np.allclose(x, y, rtol=0, atol=1e-14))
    return np.array(out), projected


def _sigmoid(p: float) -> float:
    return 1.0 / (1.0 + math.exp(-p))


def ftrl_proximal(xs: np.ndarray, ys01: np.ndarray, alpha, beta, lambda1, lambda2):
    """McMahan et al. 2013, Algorithm 1 (logistic regression, labels in {0, 1}), looping over
    the nonzero features of each example; returns the weight vector w_t used at each step."""
    d = xs.shape[1]
    z, n, out = np.zeros(d), np.zeros(d), []

    def weight(i: int) -> float:
        if abs(z[i]) <= lambda1:
            return 0.0
        return -(z[i] - np.sign(z[i]) * lambda1) / ((beta + math.sqrt(n[i])) / alpha + lambda2)

    for x, y in zip(xs, ys01):
        out.append(np.array([weight(i) for i in range(d)]))
        features = [i for i in range(d) if x[i] != 0]
        w = {i: weight(i) for i in features}
        p = _sigmoid(sum(x[i] * w[i] for i in features))
        for i in features:
            g = (p - y) * x[i]
            sigma = (math.sqrt(n[i] + g * g) - math.sqrt(n[i])) / alpha
            z[i] += g - sigma * w[i]
            n[i] += g * g
    return np.array(out)


def online_newton(grad_of, x1, n: int, gamma: float, epsilon: float, radius: float | None):
    """A_t = epsilon I + sum_{s<=t} g_s g_s'; x_{t+1} = Pi^{A_t}(x_t - (1/gamma) A_t^-1 g_t)."""
    x = np.array(x1, np.float64)
    a = epsilon * np.eye(len(x))
    out, projected = [], 0
    for t in range(n):
        out.append(x.copy())
        g = np.asarray(grad_of(t, x), np.float64)
        a = a + np.outer(g, g)
        y = x - np.linalg.solve(a, g) / gamma
        x = y if radius is None else metric_ball(y, a, radius)
        projected += int(radius is not None and np.linalg.norm(y) > radius)
    return np.array(out), projected


def _mix(eta: float, cumulative: np.ndarray, prior: np.ndarray):
    """The paper's ``mix``: the weights and the mix loss M = min L - ln(sum pi e^{-eta (L -
    min L)}) / eta of the cumulative losses (eta = inf: the leaders, M = min L)."""
    low = cumulative.min()
    if math.isinf(eta):
        w = prior * (cumulative == low)
        return w / w.sum(), low
    w = prior * np.exp(-eta * (cumulative - low))
    total = w.sum()
    return w / total, low - math.log(total) / eta


def adahedge(losses: np.ndarray, prior: np.ndarray | None = None):
    """AdaHedge as the paper's pseudo-code: eta = ln K / Delta, the weights and the mix loss
    from the cumulative losses, Delta += max(0, h - (M_t - M_{t-1})). Returns the weights,
    the Hedge losses h_t and the gaps Delta_t."""
    steps, k = losses.shape
    prior = np.full(k, 1.0 / k) if prior is None else np.asarray(prior, np.float64)
    prior = prior / prior.sum()
    cumulative, gap = np.zeros(k), 0.0
    weights, hedge, gaps = [], [], []
    for t in range(steps):
        eta = math.inf if gap == 0 else math.log(k) / gap
        w, before = _mix(eta, cumulative, prior)
        h = float(w @ losses[t])
        cumulative = cumulative + losses[t]
        _, after = _mix(eta, cumulative, prior)
        gap += max(0.0, h - (after - before))
        weights.append(w)
        hedge.append(h)
        gaps.append(gap)
    return np.array(weights), np.array(hedge), np.array(gaps)


def squint_evidence(regret: float, variance: float) -> float:
    """log of int_0^{1/2} exp(eta R - eta^2 V) d eta by adaptive quadrature (the exponent's
    maximum over [0, 1/2] taken out first, so nothing overflows)."""
    etas = np.array([0.0, 0.5, min(max(regret / (2 * variance), 0.0), 0.5) if variance else 0.0])
    top = float(np.max(etas * regret - etas**2 * variance))
    value, _ = integrate.quad(
        lambda eta: math.exp(eta * regret - eta * eta * variance - top),
        0.0,
        0.5,
        epsabs=0.0,
        epsrel=1e-13,
        limit=200,
        points=[float(etas[2])] if 0 < etas[2] < 0.5 else None,
    )
    return top + math.log(value)


def squint(losses: np.ndarray, prior: np.ndarray | None = None):
    """Squint, improper prior 1/eta on [0, 1/2]: w_{t+1,k} proportional to
    pi_k int exp(eta R_k - eta^2 V_k) d eta, r_{t,k} = <w_t, l_t> - l_{t,k}."""
    steps, k = losses.shape
    prior = np.full(k, 1.0 / k) if prior is None else np.asarray(prior, np.float64)
    regret, variance, out = np.zeros(k), np.zeros(k), []
    for t in range(steps):
        scores = np.array(
            [math.log(prior[j]) + squint_evidence(regret[j], variance[j]) for j in range(k)]
        )
        w = np.exp(scores - scores.max())
        w = w / w.sum()
        out.append(w)
        r = w @ losses[t] - losses[t]
        regret, variance = regret + r, variance + r * r
    return np.array(out)
