"""The registry table of :mod:`ojax.averaging`: least-squares SGD, plain, regularized and with
geometric averaging, on the well-conditioned regression stream `"regression"`.

One :class:`~ojax.core.LearnerEntry` per learner, by keyword; defaults come from the params
classes' `default()`, data from :data:`ojax.envs.STREAMS` by name.
"""

from __future__ import annotations

import jax.numpy as jnp

from ojax.averaging.averagers import AveragedParams, GeometricParams, geometric_averager
from ojax.averaging.least_squares import (
    RidgeSGDParams,
    SGDParams,
    least_squares_ridge_sgd,
    least_squares_sgd,
)
from ojax.core import LearnerEntry, grid_axis, register_learner

ENTRIES = [
    LearnerEntry(
        name="least_squares_sgd",
        kind="predictor",
        make=lambda dim, dtype=jnp.float32: least_squares_sgd(jnp.zeros(dim, dtype)),
        default_params=SGDParams.default,
        params_grid=lambda: SGDParams(grid_axis(0.01, 0.05, 0.1)),
        stream="regression",
        objective="square",
        dtyped=True,
    ),
    LearnerEntry(
        name="least_squares_ridge_sgd",
        kind="predictor",
        make=lambda dim, dtype=jnp.float32: least_squares_ridge_sgd(jnp.zeros(dim, dtype)),
        default_params=RidgeSGDParams.default,
        params_grid=lambda: RidgeSGDParams(grid_axis(0.02, 0.05, 0.08), grid_axis(0.0, 0.1, 1.0)),
        stream="regression",
        objective="square",
        dtyped=True,
    ),
    LearnerEntry(
        name="least_squares_sgd_geometric",
        kind="predictor",
        make=lambda dim, dtype=jnp.float32: least_squares_sgd(
            jnp.zeros(dim, dtype), geometric_averager()
        ),
        default_params=lambda: AveragedParams(SGDParams.default(), GeometricParams.default()),
        params_grid=lambda: AveragedParams(
            SGDParams(grid_axis(0.02, 0.05, 0.08)), GeometricParams(grid_axis(0.0, -0.01, -0.5))
        ),
        stream="regression",
        objective="square",
        dtyped=True,
    ),
]
"""The registry table of this family (one ``LearnerEntry`` per learner)."""

for _entry in ENTRIES:
    register_learner(_entry)


__all__ = ["ENTRIES"]
