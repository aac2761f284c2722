"""Contextual bandits: a learner sees a context, plays a distribution over `K` arms, and is told
only the loss of the arm drawn from it (:func:`ojax.run_env` with `feedback="bandit"` and a
:class:`~ojax.core.Predictor` whose prediction is the distribution; the label it is told is a
:class:`~ojax.game.BanditFeedback`).

* :mod:`~ojax.contextual.supervised`: any multiclass `(X, y)` (or costs per class) as a
  contextual bandit, and :func:`run_contextual`;
* :mod:`~ojax.contextual.oracle`: greedy, epsilon-greedy and SquareCB over a regression oracle
  (any ojax OCO learner);
* :mod:`~ojax.contextual.linear`: LinUCB and linear Thompson sampling;
* :mod:`~ojax.contextual.policies`: EXP4 over a finite class of policies.
"""

from ojax.contextual import linear, oracle, policies, registry, supervised
from ojax.contextual.linear import (
    LinearTSParams,
    LinUCBParams,
    RidgeArmsState,
    linear_thompson,
    linucb,
)
from ojax.contextual.oracle import (
    EpsilonGreedyParams,
    GreedyParams,
    OracleState,
    SquareCBParams,
    epsilon_greedy,
    greedy,
    inverse_gap_weights,
    squarecb,
)
from ojax.contextual.policies import EXP4Params, EXP4State, exp4
from ojax.contextual.supervised import (
    ContextualData,
    class_costs,
    contextual_data,
    cost_matrix_costs,
    run_contextual,
    supervised_env,
)

__all__ = [
    "ContextualData",
    "EXP4Params",
    "EXP4State",
    "EpsilonGreedyParams",
    "GreedyParams",
    "LinUCBParams",
    "LinearTSParams",
    "OracleState",
    "RidgeArmsState",
    "SquareCBParams",
    "class_costs",
    "contextual_data",
    "cost_matrix_costs",
    "epsilon_greedy",
    "exp4",
    "greedy",
    "inverse_gap_weights",
    "linear",
    "linear_thompson",
    "linucb",
    "oracle",
    "policies",
    "registry",
    "run_contextual",
    "squarecb",
    "supervised",
    "supervised_env",
]
