"""Registry entries of the online learning basics, the classic adaptive baselines (AdaGrad,
FTRL-Proximal, Online Newton Step, AdaHedge, Squint), and two optax optimizers via the adapter."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import optax

from ojax.adapters import linear_predictor, optax_learner
from ojax.core import Array, LearnerEntry, register_learner
from ojax.envs.streams import (
    expert_losses_stream,
    linear_regression_stream,
    realizable_advice_stream,
    unit_ball_stream,
)
from ojax.losses import square
from ojax.oco.adagrad import AdaGradParams, adagrad
from ojax.oco.adahedge import AdaHedgeParams, adahedge
from ojax.oco.experts import ExpertsParams, follow_best_expert, halving
from ojax.oco.ftl import FTLParams, ftl
from ojax.oco.ftrl import FTRLParams, ftrl
from ojax.oco.ftrl_proximal import FTRLProximalParams, ftrl_proximal
from ojax.oco.hedge import HedgeParams, hedge
from ojax.oco.mirror import OMDParams, mirror_descent
from ojax.oco.ogd import OGDParams, ogd
from ojax.oco.online_newton import OnlineNewtonParams, online_newton
from ojax.oco.squint import SquintParams, squint
from ojax.validation import check_positive


def _array(*values: float) -> Array:
    return jnp.asarray(values, jnp.float32)


def _check_lr(params: dict) -> None:
    check_positive("learning_rate", params["learning_rate"])


# numpy, not jnp: importing ojax must not start a JAX backend (jax takes a numpy scalar for an
# Array leaf; its stubs do not)
one: Array = np.float32(1.0)  # type: ignore[assignment]
ENTRIES = [
    LearnerEntry(
        "ftl_quadratic",
        "oco",
        lambda d: ftl("quadratic"),
        lambda: FTLParams(one),
        lambda: FTLParams(_array(0.5, 2.0)),
        unit_ball_stream,
        "quadratic",
    ),
    LearnerEntry(
        "ftl_linear",
        "oco",
        lambda d: ftl("linear"),
        lambda: FTLParams(one),
        lambda: FTLParams(_array(0.5, 2.0)),
        unit_ball_stream,
        "linear",
    ),
    LearnerEntry(
        "ftrl",
        "oco",
        lambda d: ftrl(),
        lambda: FTRLParams(jnp.asarray(10.0), one),
        lambda: FTRLParams(_array(3.0, 30.0), _array(0.7, 1.5)),
        unit_ball_stream,
        "linear",
    ),
    LearnerEntry(
        "ogd",
        "oco",
        lambda d: ogd(),
        lambda: OGDParams(jnp.asarray(0.1), one),
        lambda: OGDParams(_array(0.01, 0.3), _array(0.7, 1.5)),
        unit_ball_stream,
        "linear",
    ),
    LearnerEntry(
        "ogd_decaying",
        "oco",
        lambda d: ogd(schedule="inverse_sqrt"),
        lambda: OGDParams(jnp.asarray(0.1), one),
        lambda: OGDParams(_array(0.01, 0.3), _array(0.7, 1.5)),
        unit_ball_stream,
        "linear",
    ),
    LearnerEntry(
        "hedge",
        "oco",
        lambda d: hedge(),
        lambda: HedgeParams(jnp.asarray(0.5)),
        lambda: HedgeParams(_array(0.1, 2.0)),
        expert_losses_stream,
        "linear",
        start="uniform",
    ),
    LearnerEntry(
        "omd_pnorm",
        "oco",
        lambda d: mirror_descent("p_norm", "ball"),
        lambda: OMDParams(jnp.asarray(0.1), one, np.float32(1.5)),  # type: ignore[arg-type]
        lambda: OMDParams(_array(0.01, 0.3), _array(0.7, 1.5), _array(1.3, 1.8)),
        unit_ball_stream,
        "linear",
    ),
    LearnerEntry(
        "omd_quadratic",
        "oco",
        lambda d: mirror_descent("quadratic", "ball"),
        lambda: OMDParams(jnp.asarray(0.1), one, np.float32(2.0)),  # type: ignore[arg-type]
        lambda: OMDParams(_array(0.01, 0.3), _array(0.7, 1.5), _array(0.5, 2.0)),
        unit_ball_stream,
        "linear",
    ),
    LearnerEntry(
        "omd_entropy",
        "oco",
        lambda d: mirror_descent("entropy"),
        lambda: OMDParams(jnp.asarray(0.5), one, one),
        lambda: OMDParams(_array(0.1, 2.0), _array(1.0, 1.0), _array(1.0, 1.0)),
        expert_losses_stream,
        "linear",
        start="uniform",
    ),
    LearnerEntry(
        "optax_sgd",
        "oco",
        lambda d: optax_learner(optax.sgd, _check_lr),
        lambda: {"learning_rate": jnp.asarray(0.1)},
        lambda: {"learning_rate": _array(0.01, 0.3)},
        unit_ball_stream,
        "quadratic",
    ),
    LearnerEntry(
        "optax_cocob",
        "oco",
        lambda d: optax_learner(optax.contrib.cocob, _check_lr),
        lambda: {"learning_rate": jnp.asarray(1.0), "alpha": jnp.asarray(100.0)},
        lambda: {"learning_rate": _array(0.5, 1.0), "alpha": _array(10.0, 100.0)},
        unit_ball_stream,
        "quadratic",
    ),
    LearnerEntry(
        "ogd_square",
        "predictor",
        lambda d, dtype=jnp.float32: linear_predictor(ogd("none"), square, jnp.zeros(d, dtype)),
        lambda: OGDParams(jnp.asarray(0.1), one),
        lambda: OGDParams(_array(0.05, 0.5), _array(1.0, 2.0)),
        linear_regression_stream,
        "square",
        dtyped=True,
    ),
    LearnerEntry(
        "follow_best_expert",
        "predictor",
        follow_best_expert,
        ExpertsParams,
        ExpertsParams,
        realizable_advice_stream,
        "mismatch",
    ),
    LearnerEntry(
        "halving",
        "predictor",
        halving,
        ExpertsParams,
        ExpertsParams,
        realizable_advice_stream,
        "mismatch",
    ),
    # the classic adaptive baselines (issue 22)
    LearnerEntry(
        "adagrad",
        "oco",
        lambda d: adagrad("box"),
        lambda: AdaGradParams(jnp.asarray(2**0.5), jnp.asarray(0.0), one),
        lambda: AdaGradParams(_array(0.1, 1.0), _array(0.0, 0.5), _array(0.7, 1.5)),
        unit_ball_stream,
        "linear",
    ),
    LearnerEntry(
        "ftrl_proximal",
        "oco",
        lambda d: ftrl_proximal(),
        lambda: FTRLProximalParams(jnp.asarray(0.5), one, jnp.asarray(0.01), jnp.asarray(0.01)),
        lambda: FTRLProximalParams(
            _array(0.1, 1.0), _array(0.5, 1.0), _array(0.0, 0.05), _array(0.0, 0.1)
        ),
        unit_ball_stream,
        "quadratic",
    ),
    LearnerEntry(
        "online_newton",
        "oco",
        lambda d: online_newton(),
        # Theorem 2's settings for 0.5 ||x - z||^2 on the unit ball: G = D = 2, alpha = 1/4
        lambda: OnlineNewtonParams(jnp.asarray(1 / 32), jnp.asarray(256.0), one),
        lambda: OnlineNewtonParams(_array(1 / 32, 1 / 8), _array(256.0, 16.0), _array(1.0, 1.5)),
        unit_ball_stream,
        "quadratic",
    ),
    LearnerEntry(
        "adahedge",
        "oco",
        lambda d: adahedge(),
        AdaHedgeParams,
        AdaHedgeParams,
        expert_losses_stream,
        "linear",
        start="uniform",
    ),
    LearnerEntry(
        "squint",
        "oco",
        lambda d: squint(),
        SquintParams,
        SquintParams,
        expert_losses_stream,
        "linear",
        start="uniform",
    ),
]
"""The registry entries of this family (a table: one ``LearnerEntry`` per learner)."""

for _entry in ENTRIES:
    register_learner(_entry)
