"""The registry table of the non-stationary learners.

Registered: Fixed Share in its three mixing schemes (`fixed_share`, `fixed_share_herbster_
warmuth`, `mixing_past_posteriors`) and `ada_normal_hedge` on the switching-experts stream;
`ader_ogd` (4 OGD step sizes under Hedge), `saol_ogd` and `ada_normal_hedge_cover_ogd` (OGD
with a decaying step on the geometric cover), `restarted_ogd`, `discounted_ogd` on the unit
ball; `flh_ons` (the pruned FLH over online Newton steps, a predictor) on piecewise-stationary
regression.
"""

from __future__ import annotations

import jax.numpy as jnp

from ojax.core import LearnerEntry, grid_axis, register_learner, scalars
from ojax.losses import square
from ojax.nonstationary.cover import CoverParams, ada_normal_hedge_cover, saol
from ojax.nonstationary.dynamic import AderParams, ader
from ojax.nonstationary.experts import (
    AdaNormalHedgeParams,
    FixedShareParams,
    ada_normal_hedge,
    fixed_share,
)
from ojax.nonstationary.history import FLHParams, flh
from ojax.nonstationary.restarts import (
    DiscountedOGDParams,
    RestartedOGDParams,
    discounted_ogd,
    restarted_ogd,
)
from ojax.oco.exponential_weights import HedgeParams, hedge
from ojax.oco.gradient_descent import OGDParams, ogd
from ojax.oco.newton_step import OnlineNewtonParams, online_newton

POOL = 4  # ader_ogd's experts
LEVELS = 6  # the cover's levels: rounds < 64
HORIZON = 64  # flh_ons's horizon


def _ader_default() -> AderParams:
    steps = jnp.asarray([0.05, 0.1, 0.2, 0.4], jnp.float32)
    return AderParams(OGDParams(steps, jnp.ones(POOL, jnp.float32)), HedgeParams.default())


def _ader_grid() -> AderParams:
    steps = jnp.asarray([[0.02, 0.04, 0.08, 0.16], [0.1, 0.2, 0.4, 0.8]], jnp.float32)
    return AderParams(
        OGDParams(steps, jnp.ones((2, POOL), jnp.float32)), HedgeParams(grid_axis(0.5, 4.0))
    )


def _cover_default() -> CoverParams:
    (scale,) = scalars(0.5)
    return CoverParams(OGDParams.default(), scale)


def _cover_grid() -> CoverParams:
    return CoverParams(OGDParams(grid_axis(0.05, 0.5), grid_axis(1.0, 0.7)), grid_axis(0.5, 0.25))


def _flh_default() -> FLHParams:
    (alpha,) = scalars(0.1)
    return FLHParams(OnlineNewtonParams.default(), alpha)


def _flh_grid() -> FLHParams:
    ons = OnlineNewtonParams(grid_axis(1 / 32, 1 / 8), grid_axis(256.0, 16.0), grid_axis(1.0, 1.5))
    return FLHParams(ons, grid_axis(0.05, 0.5))


def _fixed_share_entry(name: str, scheme: str) -> LearnerEntry:
    return LearnerEntry(
        name=name,
        kind="oco",
        make=lambda d: fixed_share(scheme),
        default_params=FixedShareParams.default,
        params_grid=lambda: FixedShareParams(grid_axis(0.3, 2.0), grid_axis(0.01, 0.2)),
        stream="switching_experts",
        objective="linear",
        start="uniform",
    )


ENTRIES = [
    _fixed_share_entry("fixed_share", "start"),
    _fixed_share_entry("fixed_share_herbster_warmuth", "herbster_warmuth"),
    _fixed_share_entry("mixing_past_posteriors", "uniform_past"),
    LearnerEntry(
        name="ada_normal_hedge",
        kind="oco",
        make=lambda d: ada_normal_hedge(),
        default_params=AdaNormalHedgeParams.default,
        params_grid=AdaNormalHedgeParams,
        stream="switching_experts",
        objective="linear",
        start="uniform",
    ),
    LearnerEntry(
        name="ader_ogd",
        kind="oco",
        make=lambda d: ader(ogd(), hedge(), POOL),
        default_params=_ader_default,
        params_grid=_ader_grid,
        stream="unit_ball",
        objective="linear",
    ),
    LearnerEntry(
        name="saol_ogd",
        kind="oco",
        make=lambda d: saol(ogd(schedule="inverse_sqrt"), LEVELS),
        default_params=_cover_default,
        params_grid=_cover_grid,
        stream="unit_ball",
        objective="linear",
    ),
    LearnerEntry(
        name="ada_normal_hedge_cover_ogd",
        kind="oco",
        make=lambda d: ada_normal_hedge_cover(ogd(schedule="inverse_sqrt"), LEVELS),
        default_params=_cover_default,
        params_grid=_cover_grid,
        stream="unit_ball",
        objective="linear",
    ),
    LearnerEntry(
        name="restarted_ogd",
        kind="oco",
        make=lambda d: restarted_ogd(),
        default_params=RestartedOGDParams.default,
        params_grid=lambda: RestartedOGDParams(
            grid_axis(0.05, 0.3), grid_axis(0.7, 1.5), jnp.asarray([5, 12], jnp.int32)
        ),
        stream="unit_ball",
        objective="linear",
    ),
    LearnerEntry(
        name="discounted_ogd",
        kind="oco",
        make=lambda d: discounted_ogd(),
        default_params=DiscountedOGDParams.default,
        params_grid=lambda: DiscountedOGDParams(
            grid_axis(0.05, 0.3), grid_axis(0.7, 1.5), grid_axis(0.9, 0.6)
        ),
        stream="unit_ball",
        objective="linear",
    ),
    LearnerEntry(
        name="flh_ons",
        kind="predictor",
        make=lambda d, dtype=jnp.float32: flh(
            online_newton(), square, jnp.zeros(d, dtype), HORIZON
        ),
        default_params=_flh_default,
        params_grid=_flh_grid,
        stream="piecewise_regression",
        objective="square",
        dtyped=True,
    ),
]
"""The registry table of this family (one ``LearnerEntry`` per learner)."""

for _entry in ENTRIES:
    register_learner(_entry)


__all__ = ["ENTRIES", "HORIZON", "LEVELS", "POOL"]
