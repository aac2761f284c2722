"""Non-stationary online learning: tracking the best expert (Fixed Share, Mixing Past
Posteriors, AdaNormalHedge), dynamic regret (Ader), adaptive regret (SAOL and sleeping
AdaNormalHedge on the geometric cover, Follow-the-Leading-History), restarted and discounted
OGD; and their metrics (dynamic regret with the path length, interval regret on a geometric
cover).

The meta-learners take their base (and meta) learners as arguments, as
:mod:`ojax.meta` does: any OCO learner, optax's included (:func:`ojax.optax_learner`), can be
the base. The environments are in :mod:`ojax.envs.switching`; the bounds are checked in
:mod:`ojax.theory.nonstationary`.
"""

from ojax.nonstationary import registry as _registry  # noqa: F401  (registers the learners)
from ojax.nonstationary.cover import (
    CoverParams,
    CoverState,
    ada_normal_hedge_cover,
    cover_levels,
    saol,
)
from ojax.nonstationary.dynamic import AderParams, AderState, ader, ader_pool_size, ader_prior
from ojax.nonstationary.experts import (
    SCHEMES,
    AdaNormalHedgeParams,
    AdaNormalHedgeState,
    FixedShareParams,
    FixedShareState,
    ada_normal_hedge,
    fixed_share,
)
from ojax.nonstationary.history import FLHParams, FLHState, flh, flh_slots
from ojax.nonstationary.metrics import (
    INTERVAL_KINDS,
    best_in_intervals,
    comparator_losses,
    dynamic_regret,
    geometric_cover,
    interval_regret,
    interval_sums,
    path_length,
)
from ojax.nonstationary.restarts import (
    DiscountedOGDParams,
    DiscountedOGDState,
    RestartedOGDParams,
    RestartedOGDState,
    discounted_ogd,
    restarted_ogd,
)

__all__ = [
    "INTERVAL_KINDS",
    "SCHEMES",
    "AdaNormalHedgeParams",
    "AdaNormalHedgeState",
    "AderParams",
    "AderState",
    "CoverParams",
    "CoverState",
    "DiscountedOGDParams",
    "DiscountedOGDState",
    "FLHParams",
    "FLHState",
    "FixedShareParams",
    "FixedShareState",
    "RestartedOGDParams",
    "RestartedOGDState",
    "ada_normal_hedge",
    "ada_normal_hedge_cover",
    "ader",
    "ader_pool_size",
    "ader_prior",
    "best_in_intervals",
    "comparator_losses",
    "cover_levels",
    "discounted_ogd",
    "dynamic_regret",
    "fixed_share",
    "flh",
    "flh_slots",
    "geometric_cover",
    "interval_regret",
    "interval_sums",
    "path_length",
    "restarted_ogd",
    "saol",
]
