"""Synthetic environments and data streams (seeded, jittable)."""

from ojax.envs import regression, streams
from ojax.envs.multitask import LowVarianceParams, low_variance_tasks, synthetic_split

__all__ = [
    "LowVarianceParams",
    "low_variance_tasks",
    "regression",
    "streams",
    "synthetic_split",
]
