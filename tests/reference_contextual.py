"""Independent float64 NumPy loops of the contextual bandit learners, written from the papers'
pseudo-code: Li et al. (2010) Algorithm 1 (LinUCB, disjoint), Agrawal & Goyal (2013)
Algorithm 1 (linear Thompson sampling, one block per arm), Auer et al. (2002) Exp4 in loss
form, Foster & Rakhlin (2020) Algorithm 1 (SquareCB), epsilon-greedy and greedy, the last three
over an online gradient descent regression oracle.

The randomness is an input: each loop replays the contexts ``x_t``, the arms ``I_t`` and the
losses ``l_{t, I_t}`` of a run (and, for Thompson sampling, the standard normals of its draws)
and returns the distributions ``p_1..p_n`` it would play.
"""

from __future__ import annotations

import numpy as np


def _one_hot(i: int, k: int) -> np.ndarray:
    out = np.zeros(k)
    out[i] = 1.0
    return out


def linucb(xs, arms, paid, num_arms: int, alpha: float) -> np.ndarray:
    """A_a = I_d, b_a = 0; p_{t,a} = theta_a^T x + alpha sqrt(x^T A_a^{-1} x),
    theta_a = A_a^{-1} b_a; play argmax; A_a += x x^T, b_a += r x with r = 1 - l."""
    d = xs.shape[1]
    big_a = [np.eye(d) for _ in range(num_arms)]
    b = [np.zeros(d) for _ in range(num_arms)]
    out = []
    for x, arm, loss in zip(xs, arms, paid):
        ucb = []
        for a in range(num_arms):
            inv = np.linalg.inv(big_a[a])
            ucb.append(inv @ b[a] @ x + alpha * np.sqrt(x @ inv @ x))
        out.append(_one_hot(int(np.argmax(ucb)), num_arms))
        big_a[arm] = big_a[arm] + np.outer(x, x)
        b[arm] = b[arm] + (1 - loss) * x
    return np.array(out)


def linear_thompson(xs, arms, paid, normals, num_arms: int, v: float) -> np.ndarray:
    """B_a = I_d, f_a = 0, mu^_a = B_a^{-1} f_a; the score <mu~_a, x> of mu~_a ~ N(mu^_a,
    v^2 B_a^{-1}) drawn as mu^_a . x + v sqrt(x^T B_a^{-1} x) z_a; play the argmax; B_a += x
    x^T, f_a += r x with r = 1 - l."""
    d = xs.shape[1]
    big_b = [np.eye(d) for _ in range(num_arms)]
    f = [np.zeros(d) for _ in range(num_arms)]
    out = []
    for x, arm, loss, z in zip(xs, arms, paid, normals):
        scores = []
        for a in range(num_arms):
            inv = np.linalg.inv(big_b[a])
            scores.append(inv @ f[a] @ x + v * np.sqrt(x @ inv @ x) * z[a])
        out.append(_one_hot(int(np.argmax(scores)), num_arms))
        big_b[arm] = big_b[arm] + np.outer(x, x)
        f[arm] = f[arm] + (1 - loss) * x
    return np.array(out)


def exp4(xs, arms, paid, policies, eta: float, gamma: float) -> np.ndarray:
    """q_t ∝ exp(-eta L~), p_t = (1 - gamma) sum_j q_j xi_j + gamma / K; l~ = l e_I / p_I;
    L~_j += xi_j . l~; xi_j(x) = e_{argmax_a P_{j,a} x}."""
    num, k, _ = policies.shape
    total, out = np.zeros(num), []
    for x, arm, loss in zip(xs, arms, paid):
        xi = np.array([_one_hot(int(np.argmax(policies[j] @ x)), k) for j in range(num)])
        q = np.exp(-eta * (total - total.min()))
        q /= q.sum()
        p = (1 - gamma) * q @ xi + gamma / k
        out.append(p)
        total += xi[:, arm] * loss / p[arm]
    return np.array(out)


def oracle_learner(xs, arms, paid, num_arms: int, rate: float, play) -> np.ndarray:
    """W = 0 (K, d); at round t = 1, 2, ...: y^ = W x; p = play(y^, t); W_I -= rate (W_I x - l) x
    (OGD on the square loss of the played arm)."""
    w = np.zeros((num_arms, xs.shape[1]))
    out = []
    for t, (x, arm, loss) in enumerate(zip(xs, arms, paid), start=1):
        out.append(play(w @ x, t))
        w[arm] = w[arm] - rate * (w[arm] @ x - loss) * x
    return np.array(out)


def greedy_play(y_hat: np.ndarray, t: int = 1) -> np.ndarray:
    """e_b, b = argmin y^ (lowest index on ties)."""
    return _one_hot(int(np.argmin(y_hat)), y_hat.size)


def epsilon_greedy_play(epsilon: float):
    """(1 - eps) e_b + eps / K."""
    return lambda y_hat, t: (1 - epsilon) * greedy_play(y_hat) + epsilon / y_hat.size


def squarecb_play(gamma: float, power: float | None = None):
    """p_a = 1 / (K + gamma_t (y^_a - y^_b)) for a != b, p_b = 1 - the rest; gamma_t = gamma,
    or gamma t^power."""

    def play(y_hat: np.ndarray, t: int) -> np.ndarray:
        k, b = y_hat.size, int(np.argmin(y_hat))
        g = gamma if power is None else gamma * t**power
        p = np.array([1.0 / (k + g * (y_hat[a] - y_hat[b])) for a in range(k)])
        p[b] = 0.0
        p[b] = 1.0 - p.sum()
        return p

    return play
