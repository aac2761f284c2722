"""The registry table of the online learning basics, the classic adaptive baselines (AdaGrad,
FTRL-Proximal, Online Newton Step, AdaHedge, Squint), and two optax optimizers via the adapter.

One :class:`~ojax.core.LearnerEntry` per learner, by keyword; defaults come from the params
classes' `default()`, data from :data:`ojax.envs.STREAMS` by name.
"""

from __future__ import annotations

import jax.numpy as jnp
import optax

from ojax.adapters import linear_predictor, optax_learner
from ojax.core import LearnerEntry, grid_axis, register_learner, scalars
from ojax.losses import square
from ojax.oco.adaptive_gradient import AdaGradParams, adagrad
from ojax.oco.adaptive_hedge import AdaHedgeParams, adahedge
from ojax.oco.bandits import EXP3IXParams, EXP3Params, exp3, exp3_ix
from ojax.oco.doubling import ogd_doubling
from ojax.oco.experts import ExpertsParams, follow_best_expert, halving
from ojax.oco.exponential_weights import HedgeParams, hedge
from ojax.oco.follow_the_leader import FTLParams, ftl
from ojax.oco.gradient_descent import OGDParams, ogd
from ojax.oco.mirror import OMDParams, mirror_descent
from ojax.oco.newton_step import OnlineNewtonParams, online_newton
from ojax.oco.proximal_leader import FTRLProximalParams, ftrl_proximal
from ojax.oco.quantile_experts import SquintParams, squint
from ojax.oco.regularized_leader import FTRLParams, ftrl
from ojax.validation import check_positive


def _check_lr(params: dict) -> None:
    check_positive("learning_rate", params["learning_rate"])


def _optax_sgd_default() -> dict:
    (learning_rate,) = scalars(0.1)
    return {"learning_rate": learning_rate}


def _optax_cocob_default() -> dict:
    learning_rate, alpha = scalars(1.0, 100.0)  # optax.contrib.cocob's defaults
    return {"learning_rate": learning_rate, "alpha": alpha}


ENTRIES = [
    LearnerEntry(
        name="ftl_quadratic",
        kind="oco",
        make=lambda d: ftl("quadratic"),
        default_params=FTLParams.default,
        params_grid=lambda: FTLParams(grid_axis(0.5, 2.0)),
        stream="unit_ball",
        objective="quadratic",
    ),
    LearnerEntry(
        name="ftl_linear",
        kind="oco",
        make=lambda d: ftl("linear"),
        default_params=FTLParams.default,
        params_grid=lambda: FTLParams(grid_axis(0.5, 2.0)),
        stream="unit_ball",
        objective="linear",
    ),
    LearnerEntry(
        name="ftrl",
        kind="oco",
        make=lambda d: ftrl(),
        default_params=FTRLParams.default,
        params_grid=lambda: FTRLParams(grid_axis(3.0, 30.0), grid_axis(0.7, 1.5)),
        stream="unit_ball",
        objective="linear",
    ),
    LearnerEntry(
        name="ogd",
        kind="oco",
        make=lambda d: ogd(),
        default_params=OGDParams.default,
        params_grid=lambda: OGDParams(grid_axis(0.01, 0.3), grid_axis(0.7, 1.5)),
        stream="unit_ball",
        objective="linear",
    ),
    LearnerEntry(
        name="ogd_decaying",
        kind="oco",
        make=lambda d: ogd(schedule="inverse_sqrt"),
        default_params=OGDParams.default,
        params_grid=lambda: OGDParams(grid_axis(0.01, 0.3), grid_axis(0.7, 1.5)),
        stream="unit_ball",
        objective="linear",
    ),
    LearnerEntry(
        name="ogd_doubling",
        kind="oco",
        make=lambda d: ogd_doubling(),
        default_params=OGDParams.default,
        params_grid=lambda: OGDParams(grid_axis(0.01, 0.3), grid_axis(0.7, 1.5)),
        stream="unit_ball",
        objective="linear",
    ),
    LearnerEntry(
        name="hedge",
        kind="oco",
        make=lambda d: hedge(),
        default_params=HedgeParams.default,
        params_grid=lambda: HedgeParams(grid_axis(0.1, 2.0)),
        stream="expert_losses",
        objective="linear",
        start="uniform",
    ),
    LearnerEntry(
        name="omd_pnorm",
        kind="oco",
        make=lambda d: mirror_descent("p_norm", "ball"),
        default_params=OMDParams.default,
        params_grid=lambda: OMDParams(
            grid_axis(0.01, 0.3), grid_axis(0.7, 1.5), grid_axis(1.3, 1.8)
        ),
        stream="unit_ball",
        objective="linear",
    ),
    LearnerEntry(
        name="omd_quadratic",
        kind="oco",
        make=lambda d: mirror_descent("quadratic", "ball"),
        default_params=OMDParams.default,
        params_grid=lambda: OMDParams(
            grid_axis(0.01, 0.3), grid_axis(0.7, 1.5), grid_axis(0.5, 2.0)
        ),
        stream="unit_ball",
        objective="linear",
    ),
    LearnerEntry(
        name="omd_entropy",
        kind="oco",
        make=lambda d: mirror_descent("entropy"),
        default_params=OMDParams.default,
        params_grid=lambda: OMDParams(
            grid_axis(0.1, 2.0), grid_axis(1.0, 1.0), grid_axis(1.0, 1.0)
        ),
        stream="expert_losses",
        objective="linear",
        start="uniform",
    ),
    LearnerEntry(
        name="optax_sgd",
        kind="oco",
        make=lambda d: optax_learner(optax.sgd, _check_lr),
        default_params=_optax_sgd_default,
        params_grid=lambda: {"learning_rate": grid_axis(0.01, 0.3)},
        stream="unit_ball",
        objective="quadratic",
    ),
    LearnerEntry(
        name="optax_cocob",
        kind="oco",
        make=lambda d: optax_learner(optax.contrib.cocob, _check_lr),
        default_params=_optax_cocob_default,
        params_grid=lambda: {"learning_rate": grid_axis(0.5, 1.0), "alpha": grid_axis(10.0, 100.0)},
        stream="unit_ball",
        objective="quadratic",
    ),
    LearnerEntry(
        name="ogd_square",
        kind="predictor",
        make=lambda d, dtype=jnp.float32: linear_predictor(
            ogd("none"), square, jnp.zeros(d, dtype)
        ),
        default_params=OGDParams.default,
        params_grid=lambda: OGDParams(grid_axis(0.05, 0.5), grid_axis(1.0, 2.0)),
        stream="linear_regression",
        objective="square",
        dtyped=True,
    ),
    LearnerEntry(
        name="follow_best_expert",
        kind="predictor",
        make=follow_best_expert,
        default_params=ExpertsParams.default,
        params_grid=ExpertsParams,
        stream="realizable_advice",
        objective="mismatch",
    ),
    LearnerEntry(
        name="halving",
        kind="predictor",
        make=halving,
        default_params=ExpertsParams.default,
        params_grid=ExpertsParams,
        stream="realizable_advice",
        objective="mismatch",
    ),
    # the classic adaptive baselines (issue 22)
    LearnerEntry(
        name="adagrad",
        kind="oco",
        make=lambda d: adagrad("box"),
        default_params=AdaGradParams.default,
        params_grid=lambda: AdaGradParams(
            grid_axis(0.1, 1.0), grid_axis(0.0, 0.5), grid_axis(0.7, 1.5)
        ),
        stream="unit_ball",
        objective="linear",
    ),
    LearnerEntry(
        name="ftrl_proximal",
        kind="oco",
        make=lambda d: ftrl_proximal(),
        default_params=FTRLProximalParams.default,
        params_grid=lambda: FTRLProximalParams(
            grid_axis(0.1, 1.0), grid_axis(0.5, 1.0), grid_axis(0.0, 0.05), grid_axis(0.0, 0.1)
        ),
        stream="unit_ball",
        objective="quadratic",
    ),
    LearnerEntry(
        name="online_newton",
        kind="oco",
        make=lambda d: online_newton(),
        default_params=OnlineNewtonParams.default,
        params_grid=lambda: OnlineNewtonParams(
            grid_axis(1 / 32, 1 / 8), grid_axis(256.0, 16.0), grid_axis(1.0, 1.5)
        ),
        stream="unit_ball",
        objective="quadratic",
    ),
    LearnerEntry(
        name="adahedge",
        kind="oco",
        make=lambda d: adahedge(),
        default_params=AdaHedgeParams.default,
        params_grid=AdaHedgeParams,
        stream="expert_losses",
        objective="linear",
        start="uniform",
    ),
    LearnerEntry(
        name="squint",
        kind="oco",
        make=lambda d: squint(),
        default_params=SquintParams.default,
        params_grid=SquintParams,
        stream="expert_losses",
        objective="linear",
        start="uniform",
    ),
    LearnerEntry(  # checked with full information here; bandit feedback: ojax.run_env
        name="exp3",
        kind="oco",
        make=lambda d: exp3(),
        default_params=EXP3Params.default,
        params_grid=lambda: EXP3Params(grid_axis(0.05, 0.5), grid_axis(0.05, 0.2)),
        stream="expert_losses",
        objective="linear",
        start="uniform",
    ),
    LearnerEntry(
        name="exp3_ix",
        kind="oco",
        make=lambda d: exp3_ix(),
        default_params=EXP3IXParams.default,
        params_grid=lambda: EXP3IXParams(grid_axis(0.05, 0.5), grid_axis(0.025, 0.25)),
        stream="expert_losses",
        objective="linear",
        start="uniform",
    ),
]
"""The registry table of this family (one ``LearnerEntry`` per learner)."""

for _entry in ENTRIES:
    register_learner(_entry)


__all__ = ["ENTRIES"]
