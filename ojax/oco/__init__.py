"""Online learning basics: FTL, FTRL, OGD, Hedge / EG, and prediction with expert advice."""

from ojax.oco import registry as _registry  # noqa: F401  (registers the learners)
from ojax.oco.experts import (
    ExpertsParams,
    FollowBestExpertState,
    HalvingState,
    follow_best_expert,
    halving,
)
from ojax.oco.ftl import FTLParams, FTLState, ftl
from ojax.oco.ftrl import FTRLParams, FTRLState, ftrl
from ojax.oco.hedge import HedgeParams, HedgeState, exponentiated_gradient, hedge
from ojax.oco.mirror import OMDParams, OMDState, mirror_descent
from ojax.oco.ogd import OGDParams, OGDState, ogd

__all__ = [
    "ExpertsParams",
    "FTLParams",
    "FTLState",
    "FTRLParams",
    "FTRLState",
    "FollowBestExpertState",
    "HalvingState",
    "HedgeParams",
    "HedgeState",
    "OGDParams",
    "OGDState",
    "OMDParams",
    "OMDState",
    "exponentiated_gradient",
    "follow_best_expert",
    "ftl",
    "ftrl",
    "halving",
    "hedge",
    "mirror_descent",
    "ogd",
]
