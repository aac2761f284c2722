"""The registry rows of the contextual bandit learners (kind `"contextual"`), on the stream
`"linear_classes"`: contexts of dimension `dim` and :data:`NUM_ARMS` classes (the arms), played
with bandit feedback by :func:`ojax.contextual.run_contextual`; the recorded loss is the
drawn arm's, `1[a != y]` (`"mismatch"`)."""

from __future__ import annotations

import jax.numpy as jnp

from ojax.contextual.linear import LinearTSParams, LinUCBParams, linear_thompson, linucb
from ojax.contextual.oracle import (
    EpsilonGreedyParams,
    GreedyParams,
    SquareCBParams,
    epsilon_greedy,
    greedy,
    squarecb,
)
from ojax.contextual.policies import EXP4Params, exp4, random_policies
from ojax.core import LearnerEntry, grid_axis, register_learner
from ojax.oco.gradient_descent import OGDParams, ogd

NUM_ARMS = 3
"""The number of arms (classes) of the registry rows' stream."""

NUM_POLICIES = 8
"""The size of EXP4's policy class in its registry row."""

ORACLE = ogd("none")
"""The regression oracle of the registry rows: unprojected OGD."""


def _ogd(*rates: float) -> OGDParams:
    rate = grid_axis(*rates)
    return OGDParams(rate, jnp.ones_like(rate))


ENTRIES = [
    LearnerEntry(
        name="cb_greedy",
        kind="contextual",
        make=lambda d, dtype=jnp.float32: greedy(d, NUM_ARMS, ORACLE, dtype),
        default_params=lambda: GreedyParams.default(OGDParams.default()),
        params_grid=lambda: GreedyParams(_ogd(0.05, 0.5)),
        stream="linear_classes",
        objective="mismatch",
        dtyped=True,
    ),
    LearnerEntry(
        name="cb_epsilon_greedy",
        kind="contextual",
        make=lambda d, dtype=jnp.float32: epsilon_greedy(d, NUM_ARMS, ORACLE, dtype),
        default_params=lambda: EpsilonGreedyParams.default(OGDParams.default()),
        params_grid=lambda: EpsilonGreedyParams(grid_axis(0.02, 0.3), _ogd(0.05, 0.5)),
        stream="linear_classes",
        objective="mismatch",
        dtyped=True,
    ),
    LearnerEntry(
        name="squarecb",
        kind="contextual",
        make=lambda d, dtype=jnp.float32: squarecb(d, NUM_ARMS, ORACLE, dtype),
        default_params=lambda: SquareCBParams.default(OGDParams.default()),
        params_grid=lambda: SquareCBParams(grid_axis(3.0, 30.0), _ogd(0.05, 0.5)),
        stream="linear_classes",
        objective="mismatch",
        dtyped=True,
    ),
    LearnerEntry(
        name="linucb",
        kind="contextual",
        make=lambda d, dtype=jnp.float32: linucb(d, NUM_ARMS, dtype),
        default_params=LinUCBParams.default,
        params_grid=lambda: LinUCBParams(grid_axis(0.1, 2.0)),
        stream="linear_classes",
        objective="mismatch",
        dtyped=True,
    ),
    LearnerEntry(
        name="linear_thompson",
        kind="contextual",
        make=lambda d, dtype=jnp.float32: linear_thompson(d, NUM_ARMS, dtype),
        default_params=LinearTSParams.default,
        params_grid=lambda: LinearTSParams(grid_axis(0.1, 2.0)),
        stream="linear_classes",
        objective="mismatch",
        dtyped=True,
    ),
    LearnerEntry(
        name="exp4",
        kind="contextual",
        make=lambda d, dtype=jnp.float32: exp4(
            random_policies(0, NUM_POLICIES, NUM_ARMS, d), dtype
        ),
        default_params=EXP4Params.default,
        params_grid=lambda: EXP4Params(grid_axis(0.05, 1.0), grid_axis(0.0, 0.2)),
        stream="linear_classes",
        objective="mismatch",
        dtyped=True,
    ),
]
"""The registry table of this family (one ``LearnerEntry`` per learner)."""

for _entry in ENTRIES:
    register_learner(_entry)

__all__ = ["ENTRIES", "NUM_ARMS", "NUM_POLICIES", "ORACLE"]
