"""The meta-learners in the learner registry (kind ``"multi_task"``), with small task blocks.

Registered: ``biased_within_task_{ons,kt,ogd}`` (a fixed bias), ``aggressive_{ons,kt,ogd}`` and
``lazy_{ons,kt,ogd}`` (the direction-magnitude learner with the ONS or KT bettor, or online
gradient descent, in both roles). Their stream is
:func:`ojax.envs.multitask.task_block_stream`: ragged blocks of low-variance tasks
``(xs, ys, mask)``.
"""

from __future__ import annotations

import jax.numpy as jnp

from ojax.core import LearnerEntry, register_learner
from ojax.meta.learners import (
    FixedBiasParams,
    MetaParams,
    aggressive,
    biased_within_task,
    lazy,
)
from ojax.oco.ogd import OGDParams, ogd
from ojax.parameter_free.betting import DirectionMagnitudeParams, direction_magnitude

_F32 = jnp.float32


def _stream(key, num_steps: int, dim: int) -> tuple:
    from ojax.envs.multitask import task_block_stream  # the envs import ojax.meta

    return task_block_stream(key, num_steps, dim)


def _learner(inside: str):
    return ogd("none") if inside == "ogd" else direction_magnitude(inside)


def _params(inside: str, grid: bool, which: int = 0):
    """A role's params: one point, or a grid of two distinct points (built when asked for,
    never at import: importing ojax starts no JAX backend)."""
    if inside == "ogd":
        steps = ([0.1, 0.5], [0.05, 0.01])[which]
        step = jnp.asarray(steps if grid else steps[0], _F32)
        return OGDParams(step, jnp.ones_like(step))
    wealths = ([0.5, 3.0], [2.0, 0.3])[which]
    wealth = jnp.asarray(wealths if grid else 1.0, _F32)
    scale = jnp.asarray([1.0, 0.7] if grid else 1.0, _F32)
    return DirectionMagnitudeParams(wealth, scale)


def _entries(inside: str) -> list[LearnerEntry]:
    within = meta = _learner(inside)

    def fixed_params(grid: bool):
        bias = [0.0, 1.0] if grid else 0.0
        return lambda: FixedBiasParams(_params(inside, grid), jnp.asarray(bias, _F32))

    def meta_params(grid: bool):
        return lambda: MetaParams(_params(inside, grid), _params(inside, grid, 1))

    makes = {
        "biased_within_task": (lambda d: biased_within_task(d, within), fixed_params),
        "aggressive": (lambda d: aggressive(d, within, meta), meta_params),
        "lazy": (lambda d: lazy(d, within, meta), meta_params),
    }
    return [
        LearnerEntry(
            f"{name}_{inside}",
            "multi_task",
            make,
            params(False),
            params(True),
            _stream,
            "absolute",
        )
        for name, (make, params) in makes.items()
    ]


for _inside in ("ons", "kt", "ogd"):
    for _entry in _entries(_inside):
        register_learner(_entry)
