"""The registry table of the parameter-free learners: KT / ONS coin betting and the
direction-magnitude reduction, and the baselines COCOB, per-coordinate KT, DoG, Prodigy,
D-Adaptation SGD, Mechanic on OGD, Schedule-Free SGD.

One :class:`~ojax.core.LearnerEntry` per learner, by keyword; defaults come from the params
classes' `default()`, data from :data:`ojax.envs.STREAMS` by name.
"""

from __future__ import annotations

import jax.numpy as jnp

from ojax.core import LearnerEntry, grid_axis, register_learner
from ojax.oco.gradient_descent import OGDParams, ogd
from ojax.parameter_free.betting import (
    BETTORS,
    CoinBettingParams,
    DirectionMagnitudeParams,
    coin_betting,
    direction_magnitude,
)
from ojax.parameter_free.coin_backprop import CocobParams, cocob
from ojax.parameter_free.distance import (
    DAdaptParams,
    DoGParams,
    ProdigyParams,
    dadapt_sgd,
    dog,
    prodigy,
)
from ojax.parameter_free.scale_tuner import BETAS, MechanicParams, mechanic
from ojax.parameter_free.schedule_free import ScheduleFreeParams, schedule_free_sgd


def _mechanic_grid() -> MechanicParams:
    step = grid_axis(1.0, 0.1)
    base = OGDParams(step, jnp.ones_like(step))  # radius unused: no projection
    return MechanicParams(
        base, grid_axis(1e-8, 1e-4), grid_axis(0.01, 0.0), jnp.tile(grid_axis(*BETAS), (2, 1))
    )


def _betting_entries(bettor: str) -> list[LearnerEntry]:
    """The KT or ONS bettor on its own (per coordinate) and in the direction-magnitude
    reduction."""
    return [
        LearnerEntry(
            name=f"direction_magnitude_{bettor}",
            kind="oco",
            make=lambda d: direction_magnitude(bettor),
            default_params=DirectionMagnitudeParams.default,
            params_grid=lambda: DirectionMagnitudeParams(grid_axis(0.5, 3.0), grid_axis(1.0, 0.7)),
            stream="unit_ball",
            objective="linear",
        ),
        LearnerEntry(
            name=f"coin_betting_{bettor}",
            kind="oco",
            make=lambda d: coin_betting(bettor),
            default_params=CoinBettingParams.default,
            params_grid=lambda: CoinBettingParams(grid_axis(0.5, 3.0), grid_axis(1.0, 0.7)),
            stream="unit_ball",
            objective="linear",
        ),
    ]


ENTRIES = [
    *(entry for bettor in BETTORS for entry in _betting_entries(bettor)),
    LearnerEntry(
        name="cocob",
        kind="oco",
        make=lambda d: cocob(),
        default_params=CocobParams.default,
        params_grid=lambda: CocobParams(grid_axis(10.0, 100.0)),
        stream="unit_ball",
        objective="quadratic",
    ),
    LearnerEntry(
        name="kt_coordinate",
        kind="oco",
        make=lambda d: coin_betting("kt"),
        default_params=CoinBettingParams.default,
        params_grid=lambda: CoinBettingParams(grid_axis(0.1, 2.0), grid_axis(1.0, 0.7)),
        stream="unit_ball",
        objective="linear",
    ),
    LearnerEntry(
        name="dog",
        kind="oco",
        make=lambda d: dog(),
        default_params=DoGParams.default,
        params_grid=lambda: DoGParams(grid_axis(1e-4, 1e-2)),
        stream="unit_ball",
        objective="quadratic",
    ),
    LearnerEntry(
        name="prodigy",
        kind="oco",
        make=lambda d: prodigy(),
        default_params=ProdigyParams.default,
        params_grid=lambda: ProdigyParams(
            grid_axis(1e-6, 1e-3),
            grid_axis(1.0, 0.5),
            grid_axis(0.9, 0.8),
            grid_axis(0.999, 0.99),
            grid_axis(1e-8, 1e-8),
        ),
        stream="unit_ball",
        objective="quadratic",
    ),
    LearnerEntry(
        name="dadapt_sgd",
        kind="oco",
        make=lambda d: dadapt_sgd(),
        default_params=DAdaptParams.default,
        params_grid=lambda: DAdaptParams(grid_axis(1e-6, 1e-3), grid_axis(1.0, 0.5)),
        stream="unit_ball",
        objective="quadratic",
    ),
    LearnerEntry(
        name="mechanic",
        kind="oco",
        make=lambda d: mechanic(ogd("none")),
        default_params=lambda: MechanicParams.default(OGDParams.default()),
        params_grid=_mechanic_grid,
        stream="unit_ball",
        objective="quadratic",
    ),
    LearnerEntry(
        name="schedule_free_sgd",
        kind="oco",
        make=lambda d: schedule_free_sgd(),
        default_params=ScheduleFreeParams.default,
        params_grid=lambda: ScheduleFreeParams(
            grid_axis(0.5, 0.1), grid_axis(0.9, 0.5), grid_axis(0.0, 10.0)
        ),
        stream="unit_ball",
        objective="quadratic",
    ),
]
"""The registry table of this family (one ``LearnerEntry`` per learner)."""

for _entry in ENTRIES:
    register_learner(_entry)


__all__ = ["ENTRIES"]
