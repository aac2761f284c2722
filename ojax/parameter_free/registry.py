"""Registry entries of the parameter-free baselines (COCOB, per-coordinate KT, DoG, Prodigy,
D-Adaptation SGD, Mechanic on OGD, Schedule-Free SGD)."""

from __future__ import annotations

import jax.numpy as jnp

from ojax.core import Array, LearnerEntry, register_learner
from ojax.envs.streams import unit_ball_stream
from ojax.oco.ogd import OGDParams, ogd
from ojax.parameter_free.betting import CoinBettingParams, coin_betting
from ojax.parameter_free.cocob import CocobParams, cocob
from ojax.parameter_free.distance import (
    DAdaptParams,
    DoGParams,
    ProdigyParams,
    dadapt_sgd,
    dog,
    prodigy,
)
from ojax.parameter_free.mechanic import BETAS, MechanicParams, mechanic
from ojax.parameter_free.schedule_free import ScheduleFreeParams, schedule_free_sgd


def _array(*values: float) -> Array:
    return jnp.asarray(values, jnp.float32)


def _scalar(value: float) -> Array:
    return jnp.asarray(value, jnp.float32)


def _mechanic_params(ogd_step, s_init, decay, betas) -> MechanicParams:
    base = OGDParams(ogd_step, jnp.ones_like(ogd_step))  # radius unused: no projection
    return MechanicParams(base, s_init, decay, betas)


ENTRIES = [
    LearnerEntry(
        "cocob",
        "oco",
        lambda d: cocob(),
        lambda: CocobParams(_scalar(100.0)),
        lambda: CocobParams(_array(10.0, 100.0)),
        unit_ball_stream,
        "quadratic",
    ),
    LearnerEntry(
        "kt_coordinate",
        "oco",
        lambda d: coin_betting("kt"),
        lambda: CoinBettingParams(_scalar(1.0), _scalar(1.0)),
        lambda: CoinBettingParams(_array(0.1, 2.0), _array(1.0, 0.7)),
        unit_ball_stream,
        "linear",
    ),
    LearnerEntry(
        "dog",
        "oco",
        lambda d: dog(),
        lambda: DoGParams(_scalar(1e-4)),
        lambda: DoGParams(_array(1e-4, 1e-2)),
        unit_ball_stream,
        "quadratic",
    ),
    LearnerEntry(
        "prodigy",
        "oco",
        lambda d: prodigy(),
        lambda: ProdigyParams(
            _scalar(1e-6), _scalar(1.0), _scalar(0.9), _scalar(0.999), _scalar(1e-8)
        ),
        lambda: ProdigyParams(
            _array(1e-6, 1e-3),
            _array(1.0, 0.5),
            _array(0.9, 0.8),
            _array(0.999, 0.99),
            _array(1e-8, 1e-8),
        ),
        unit_ball_stream,
        "quadratic",
    ),
    LearnerEntry(
        "dadapt_sgd",
        "oco",
        lambda d: dadapt_sgd(),
        lambda: DAdaptParams(_scalar(1e-6), _scalar(1.0)),
        lambda: DAdaptParams(_array(1e-6, 1e-3), _array(1.0, 0.5)),
        unit_ball_stream,
        "quadratic",
    ),
    LearnerEntry(
        "mechanic",
        "oco",
        lambda d: mechanic(ogd("none")),
        lambda: _mechanic_params(_scalar(1.0), _scalar(1e-8), _scalar(0.01), _array(*BETAS)),
        lambda: _mechanic_params(
            _array(1.0, 0.1),
            _array(1e-8, 1e-4),
            _array(0.01, 0.0),
            jnp.tile(_array(*BETAS), (2, 1)),
        ),
        unit_ball_stream,
        "quadratic",
    ),
    LearnerEntry(
        "schedule_free_sgd",
        "oco",
        lambda d: schedule_free_sgd(),
        lambda: ScheduleFreeParams(_scalar(0.5), _scalar(0.9), _scalar(0.0)),
        lambda: ScheduleFreeParams(_array(0.5, 0.1), _array(0.9, 0.5), _array(0.0, 10.0)),
        unit_ball_stream,
        "quadratic",
    ),
]
"""The registry entries of the parameter-free baselines (one ``LearnerEntry`` each; KT / ONS
coin betting and the direction-magnitude learners are registered in
:mod:`ojax.parameter_free.betting`)."""

for _entry in ENTRIES:
    register_learner(_entry)
