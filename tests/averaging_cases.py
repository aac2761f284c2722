"""Shared cases of the averaging tests: one cached sample, the discounts, the tolerances."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from ojax.envs import regression

RHOS = [1.0, 0.999, 0.9, 0.5, 0.03]
TOL = {"float64": 1e-12, "float32": 1e-5}
ETA = 0.05


def rel_err(a, b) -> float:
    """The relative max-norm error of ``a`` against ``b`` (fails on NaN / Inf in ``a``)."""
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    assert np.all(np.isfinite(a)), "NaN or Inf in the result"
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


N = 200  # one sample size wherever the check allows: the jitted functions compile once per dtype


@functools.cache
def _data(dtype_name, n, seed):
    with jax.enable_x64(dtype_name == "float64"):
        problem = regression.ill_conditioned_problem(jax.random.key(seed), dtype=dtype_name)
        xs, ys = regression.sample(jax.random.key(seed + 1), problem, n)
    return problem, xs, ys


def data(dtype, n=N, seed=0):
    """A cached ill-conditioned sample (shared by the tests; arrays are immutable)."""
    return _data(jnp.dtype(dtype).name, n, seed)


def log_rhos(dtype):
    """``log rho`` for every discount of ``RHOS``."""
    return jnp.log(jnp.asarray(RHOS, dtype))
