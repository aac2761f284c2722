"""An exact solver of small convex quadratic programs (the KKT system of every active set), for
checks that must not depend on a solver's stopping rule (:mod:`ojax.theory.zhao_hoi`)."""

from __future__ import annotations

import itertools
from typing import NamedTuple

import numpy as np


class QP(NamedTuple):
    """`min 1/2 z^T P z + q^T z` subject to `G z <= b`."""

    P: np.ndarray
    q: np.ndarray
    G: np.ndarray
    b: np.ndarray

    def objective(self, z: np.ndarray) -> float:
        return float(0.5 * z @ self.P @ z + self.q @ z)


def _kkt_point(qp: QP, active: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray] | None:
    """The KKT point of `qp` with the constraints `active` held as equalities, or None when
    it is not unique. `P` is diagonal: the curved variables are eliminated
    (`z_i = -(q_i + (G_A^T lam)_i) / P_ii`), leaving a system in the multipliers and the
    uncurved variables (a few unknowns: no large LAPACK call)."""
    curvature = np.diag(qp.P)
    curved = curvature > 0
    g = qp.G[list(active)]
    g_s, g_z = g[:, curved], g[:, ~curved]
    inv = 1.0 / curvature[curved]
    count, flat = len(active), int((~curved).sum())
    matrix = np.block([[-(g_s * inv) @ g_s.T, g_z], [g_z.T, np.zeros((flat, flat))]])
    rhs = np.concatenate([qp.b[list(active)] + (g_s * inv) @ qp.q[curved], -qp.q[~curved]])
    if matrix.size == 0 or np.linalg.matrix_rank(matrix) < count + flat:
        return None
    sol = np.linalg.solve(matrix, rhs)
    multipliers = sol[:count]
    z = np.empty_like(qp.q)
    z[curved] = -(qp.q[curved] + g_s.T @ multipliers) * inv
    z[~curved] = sol[count:]
    return z, multipliers


def solve_qp(qp: QP, tol: float = 1e-12) -> np.ndarray:
    """The exact minimizer of a convex QP with a diagonal `P >= 0` and few constraints: the
    KKT system of every active set, keeping the feasible points with non-negative multipliers,
    and the best of those (any KKT point of a convex QP is a minimizer)."""
    if not np.array_equal(qp.P, np.diag(np.diag(qp.P))) or np.any(np.diag(qp.P) < 0):
        raise ValueError("solve_qp: P must be diagonal with non-negative entries")
    best, best_value = None, np.inf
    scale = 1.0 + np.abs(qp.b).max()
    for count in range(qp.b.shape[0] + 1):
        for active in itertools.combinations(range(qp.b.shape[0]), count):
            point = _kkt_point(qp, active)
            if point is None:
                continue  # singular: this active set has no unique KKT point
            z, multipliers = point
            feasible = np.all(qp.G @ z <= qp.b + tol * scale)
            if feasible and np.all(multipliers >= -tol * scale):
                value = qp.objective(z)
                if value < best_value:
                    best, best_value = z, value
    if best is None:
        raise ValueError("solve_qp: no active set gives a KKT point")
    return best


__all__ = ["QP", "solve_qp"]
