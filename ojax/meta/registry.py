"""The registry table of the meta-learners (kind `"multi_task"`).

Registered: `biased_within_task_{ons,kt,ogd}` (a fixed bias), `aggressive_{ons,kt,ogd}` and
`lazy_{ons,kt,ogd}` (the direction-magnitude learner with the ONS or KT bettor, or online
gradient descent, in both roles). Their stream is `"task_blocks"`
(:func:`ojax.envs.multitask.task_block_stream`): ragged blocks of low-variance tasks
`(xs, ys, mask)`. Defaults compose the roles' `default()`.
"""

from __future__ import annotations

import jax.numpy as jnp

from ojax.core import LearnerEntry, Params, register_learner
from ojax.meta.learners import (
    FixedBiasParams,
    MetaParams,
    aggressive,
    biased_within_task,
    lazy,
)
from ojax.oco.gradient_descent import OGDParams, ogd
from ojax.parameter_free.betting import DirectionMagnitudeParams, direction_magnitude

_F32 = jnp.float32
INSIDE = ("ons", "kt", "ogd")
"""The OCO learners in the roles: the direction-magnitude learner's bettor, or OGD."""


def _learner(inside: str):
    return ogd("none") if inside == "ogd" else direction_magnitude(inside)


def _default(inside: str) -> Params:
    return OGDParams.default() if inside == "ogd" else DirectionMagnitudeParams.default()


def _grid(inside: str, which: int) -> Params:
    """A role's grid of two distinct points (built when asked for, never at import: importing
    ojax starts no JAX backend)."""
    if inside == "ogd":
        step = jnp.asarray(([0.1, 0.5], [0.05, 0.01])[which], _F32)
        return OGDParams(step, jnp.ones_like(step))
    wealth = jnp.asarray(([0.5, 3.0], [2.0, 0.3])[which], _F32)
    return DirectionMagnitudeParams(wealth, jnp.asarray([1.0, 0.7], _F32))


def _entries(inside: str) -> list[LearnerEntry]:
    def meta_grid() -> MetaParams:
        return MetaParams(_grid(inside, 0), _grid(inside, 1))

    return [
        LearnerEntry(
            name=f"biased_within_task_{inside}",
            kind="multi_task",
            make=lambda d: biased_within_task(d, _learner(inside)),
            default_params=lambda: FixedBiasParams.default(_default(inside)),
            params_grid=lambda: FixedBiasParams(_grid(inside, 0), jnp.asarray([0.0, 1.0], _F32)),
            stream="task_blocks",
            objective="absolute",
        ),
        LearnerEntry(
            name=f"aggressive_{inside}",
            kind="multi_task",
            make=lambda d: aggressive(d, _learner(inside), _learner(inside)),
            default_params=lambda: MetaParams(_default(inside), _default(inside)),
            params_grid=meta_grid,
            stream="task_blocks",
            objective="absolute",
        ),
        LearnerEntry(
            name=f"lazy_{inside}",
            kind="multi_task",
            make=lambda d: lazy(d, _learner(inside), _learner(inside)),
            default_params=lambda: MetaParams(_default(inside), _default(inside)),
            params_grid=meta_grid,
            stream="task_blocks",
            objective="absolute",
        ),
    ]


ENTRIES = [entry for inside in INSIDE for entry in _entries(inside)]
"""The registry table of this family (one ``LearnerEntry`` per learner)."""

for _entry in ENTRIES:
    register_learner(_entry)


__all__ = ["ENTRIES", "INSIDE"]
