"""Independent float64 NumPy loops of the bandit learners and of OGD under delayed feedback,
written from the papers (Auer et al. 2002 Fig. 1 in loss form; Neu 2015 Algorithm 1).

The randomness (the arms drawn) is an input: each loop replays the arms ``I_t`` and the losses
``z_{t, I_t}`` of a run and returns the distributions ``p_1..p_n`` it would play.
"""

from __future__ import annotations

import numpy as np


def _softmax(v: np.ndarray) -> np.ndarray:
    e = np.exp(v - v.max())
    return e / e.sum()


def exp3(arms: np.ndarray, paid: np.ndarray, num_arms: int, eta: float, gamma: float):
    """p_t = (1 - gamma) q_t + gamma / K, q_t ∝ exp(-eta L^_{t-1});
    l^_{t,i} = l_{t,i} 1[I_t = i] / p_{t,i}."""
    total, out = np.zeros(num_arms), []
    for arm, loss in zip(arms, paid):
        p = (1 - gamma) * _softmax(-eta * total) + gamma / num_arms
        out.append(p)
        total[arm] += loss / p[arm]
    return np.array(out)


def exp3_ix(arms: np.ndarray, paid: np.ndarray, num_arms: int, eta: float, gamma: float):
    """p_t ∝ exp(-eta L^_{t-1}); l^_{t,i} = l_{t,i} 1[I_t = i] / (p_{t,i} + gamma)."""
    total, out = np.zeros(num_arms), []
    for arm, loss in zip(arms, paid):
        p = _softmax(-eta * total)
        out.append(p)
        total[arm] += loss / (p[arm] + gamma)
    return np.array(out)


def delayed_ogd(zs: np.ndarray, eta: float, radius: float, delay: int) -> np.ndarray:
    """Linear losses <w, z_t>: w_1 = 0, w_{t+1} = P_ball(w_t - eta z_{t-d}) (w_{t+1} = w_t for
    t <= d: nothing has arrived yet)."""
    w, out = np.zeros(zs.shape[1]), []
    for t in range(len(zs)):
        out.append(w.copy())
        if t >= delay:
            u = w - eta * zs[t - delay]
            norm = np.linalg.norm(u)
            w = u if norm <= radius else u * radius / norm
    return np.array(out)
