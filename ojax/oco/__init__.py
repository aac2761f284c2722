"""Online learning basics: FTL, FTRL, OGD, Hedge / EG, and prediction with expert advice; the
classic adaptive baselines: AdaGrad, FTRL-Proximal, Online Newton Step, AdaHedge, Squint."""

from ojax.oco import registry as _registry  # noqa: F401  (registers the learners)
from ojax.oco.adagrad import AdaGradParams, AdaGradState, adagrad
from ojax.oco.adahedge import AdaHedgeParams, AdaHedgeState, adahedge
from ojax.oco.experts import (
    ExpertsParams,
    FollowBestExpertState,
    HalvingState,
    follow_best_expert,
    halving,
)
from ojax.oco.ftl import FTLParams, FTLState, ftl
from ojax.oco.ftrl import FTRLParams, FTRLState, ftrl
from ojax.oco.ftrl_proximal import FTRLProximalParams, FTRLProximalState, ftrl_proximal
from ojax.oco.hedge import HedgeParams, HedgeState, exponentiated_gradient, hedge
from ojax.oco.mirror import OMDParams, OMDState, mirror_descent
from ojax.oco.ogd import OGDParams, OGDState, ogd
from ojax.oco.online_newton import OnlineNewtonParams, OnlineNewtonState, online_newton
from ojax.oco.squint import SquintParams, SquintState, squint

__all__ = [
    "AdaGradParams",
    "AdaGradState",
    "AdaHedgeParams",
    "AdaHedgeState",
    "ExpertsParams",
    "FTLParams",
    "FTLState",
    "FTRLParams",
    "FTRLProximalParams",
    "FTRLProximalState",
    "FTRLState",
    "FollowBestExpertState",
    "HalvingState",
    "HedgeParams",
    "HedgeState",
    "OGDParams",
    "OGDState",
    "OMDParams",
    "OMDState",
    "OnlineNewtonParams",
    "OnlineNewtonState",
    "SquintParams",
    "SquintState",
    "adagrad",
    "adahedge",
    "exponentiated_gradient",
    "follow_best_expert",
    "ftl",
    "ftrl",
    "ftrl_proximal",
    "halving",
    "hedge",
    "mirror_descent",
    "ogd",
    "online_newton",
    "squint",
]
