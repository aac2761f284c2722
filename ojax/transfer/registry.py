"""The registry table of :mod:`ojax.transfer`: the kernel learners (kind `"kernel"`) and
linear PA-I (a `"predictor"`).

A kernel learner's stream is a pool of :data:`POOL_SIZE` examples (Gram rows of a Gaussian
kernel, one or two views, a frozen "source" classifier's outputs as offsets where the method
carries one) and an order of pool rows (:mod:`ojax.envs.kernel_pools`): `"kernel_pool"`,
`"kernel_pool_source"`, `"kernel_two_views"`, `"kernel_two_views_source"`. The recorded
loss is the mistake (:data:`ojax.losses.zero_one`). Defaults are the paper's
(`KernelPAParams.default()` is :meth:`~ojax.transfer.KernelPAParams.paper`: the width only
matters in `"direct"` mode, the pool's Gram matrices carry theirs).
"""

from __future__ import annotations

import jax.numpy as jnp

from ojax.core import LearnerEntry, grid_axis, register_learner
from ojax.transfer import heterogeneous, homogeneous
from ojax.transfer.linear_passive_aggressive import LinearPAParams, linear_pa
from ojax.transfer.pa import KernelPAParams, kernel_pa

POOL_SIZE = 64
"""Examples in a registered kernel learner's pool (its ``"pool"`` layout capacity)."""


def _grid(params_class, *rows: tuple[float, ...]):
    """`params_class` over the grid points `rows` (one tuple of field values each)."""
    return lambda: params_class(*(jnp.asarray(column, jnp.float32) for column in zip(*rows)))


_PA_GRID = _grid(KernelPAParams, (0.02, 1.0), (5.0, 1.0))
_OTL_GRID = _grid(homogeneous.OTLParams, (0.02, 1.0, 0.1), (5.0, 1.0, 4.0))
_COTL_GRID = _grid(heterogeneous.COTLParams, (0.02, 1.0, 1.0, 1.0, 1.0), (5.0, 1.0, 1.0, 0.5, 2.0))

ENTRIES = [
    LearnerEntry(
        name="kernel_pa",
        kind="kernel",
        make=lambda dim: kernel_pa(POOL_SIZE, "pool"),
        default_params=KernelPAParams.default,
        params_grid=_PA_GRID,
        stream="kernel_pool",
        objective="zero_one",
    ),
    LearnerEntry(
        name="paio",
        kind="kernel",
        make=lambda dim: kernel_pa(POOL_SIZE, "pool"),
        default_params=KernelPAParams.default,
        params_grid=_PA_GRID,
        stream="kernel_pool_source",
        objective="zero_one",
    ),
    LearnerEntry(
        name="otl",
        kind="kernel",
        make=lambda dim: homogeneous.otl(POOL_SIZE, "pool"),
        default_params=homogeneous.OTLParams.default,
        params_grid=_OTL_GRID,
        stream="kernel_pool_source",
        objective="zero_one",
    ),
    LearnerEntry(
        name="otl_fixed",
        kind="kernel",
        make=lambda dim: homogeneous.otl_fixed(POOL_SIZE, "pool"),
        default_params=homogeneous.OTLParams.default,
        params_grid=_OTL_GRID,
        stream="kernel_pool_source",
        objective="zero_one",
    ),
    LearnerEntry(
        name="homotl2",
        kind="kernel",
        make=lambda dim: homogeneous.homotl2(POOL_SIZE, "pool"),
        default_params=homogeneous.HomOTL2Params.default,
        params_grid=_grid(homogeneous.HomOTL2Params, (0.02, 1.0, 0.5), (5.0, 1.0, 0.95)),
        stream="kernel_pool_source",
        objective="zero_one",
    ),
    LearnerEntry(
        name="cotl",
        kind="kernel",
        make=lambda dim: heterogeneous.cotl(POOL_SIZE, "pool"),
        default_params=heterogeneous.COTLParams.default,
        params_grid=_COTL_GRID,
        stream="kernel_two_views_source",
        objective="zero_one",
    ),
    LearnerEntry(
        name="cotl0",
        kind="kernel",
        make=lambda dim: heterogeneous.cotl0(POOL_SIZE, "pool"),
        default_params=heterogeneous.COTLParams.default,
        params_grid=_COTL_GRID,
        stream="kernel_two_views",
        objective="zero_one",
    ),
    LearnerEntry(
        name="sct",
        kind="kernel",
        make=lambda dim: heterogeneous.sct(POOL_SIZE, "pool"),
        default_params=heterogeneous.SCTParams.default,
        params_grid=_grid(heterogeneous.SCTParams, (0.02, 1.0, 1.0), (5.0, 1.0, 1.0)),
        stream="kernel_two_views_source",
        objective="zero_one",
    ),
    LearnerEntry(
        name="linear_pa",
        kind="predictor",
        make=linear_pa,
        default_params=LinearPAParams.default,
        params_grid=lambda: LinearPAParams(grid_axis(0.01, 0.2)),
        stream="classification",
        objective="hinge",
    ),
]
"""The registry table of this family (one ``LearnerEntry`` per learner)."""

for _entry in ENTRIES:
    register_learner(_entry)

__all__ = ["ENTRIES", "POOL_SIZE"]
