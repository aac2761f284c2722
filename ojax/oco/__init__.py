"""Online learning basics: FTL, FTRL, OGD (also with the doubling trick), Hedge / EG, and
prediction with expert advice; the bandit learners EXP3 and EXP3-IX; the classic adaptive
baselines: AdaGrad, FTRL-Proximal, Online Newton Step, AdaHedge, Squint."""

from ojax.oco import registry as _registry  # noqa: F401  (registers the learners)
from ojax.oco.adaptive_gradient import AdaGradParams, AdaGradState, adagrad
from ojax.oco.adaptive_hedge import AdaHedgeParams, AdaHedgeState, adahedge
from ojax.oco.bandits import BanditState, EXP3IXParams, EXP3Params, exp3, exp3_ix
from ojax.oco.doubling import DoublingState, ogd_doubling
from ojax.oco.experts import (
    ExpertsParams,
    FollowBestExpertState,
    HalvingState,
    follow_best_expert,
    halving,
)
from ojax.oco.exponential_weights import HedgeParams, HedgeState, exponentiated_gradient, hedge
from ojax.oco.follow_the_leader import FTLParams, FTLState, ftl
from ojax.oco.gradient_descent import OGDParams, OGDState, ogd
from ojax.oco.mirror import OMDParams, OMDState, mirror_descent
from ojax.oco.newton_step import OnlineNewtonParams, OnlineNewtonState, online_newton
from ojax.oco.proximal_leader import FTRLProximalParams, FTRLProximalState, ftrl_proximal
from ojax.oco.quantile_experts import SquintParams, SquintState, squint
from ojax.oco.regularized_leader import FTRLParams, FTRLState, ftrl

__all__ = [
    "BanditState",
    "EXP3IXParams",
    "EXP3Params",
    "exp3",
    "exp3_ix",
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
    "DoublingState",
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
    "ogd_doubling",
    "online_newton",
    "squint",
]
