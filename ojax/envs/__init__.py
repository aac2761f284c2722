"""Synthetic environments and data streams (seeded, jittable)."""

from ojax.envs import streams  # noqa: F401

from ojax.envs import regression  # noqa: E402,F401
from ojax.envs.multitask import LowVarianceParams, low_variance_tasks, synthetic_split  # noqa: E402,F401,E501
