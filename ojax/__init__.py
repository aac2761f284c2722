"""ojax: a JAX library and vectorized simulator for online learning."""

__version__ = "0.1.0"

from ojax import (  # noqa: E402  # noqa: E402
    adapters,
    averaging,
    envs,
    losses,
    meta,
    metrics,
    oco,
    parameter_free,
    projections,
    sweep,  # noqa: E402  (the module: ojax.sweep.sweep, sweep_experiment)
    transfer,
)
from ojax.adapters import linear_predictor, linear_weights, optax_learner  # noqa: E402
from ojax.core import (  # noqa: E402
    LEARNERS,
    LearnerEntry,
    MultiTaskLearner,
    OCOLearner,
    Predictor,
    Trace,
    register_learner,
)
from ojax.run import run, run_oco, run_tasks  # noqa: E402
from ojax.validation import InputError  # noqa: E402

__all__ = [
    "LEARNERS",
    "InputError",
    "LearnerEntry",
    "MultiTaskLearner",
    "OCOLearner",
    "Predictor",
    "Trace",
    "adapters",
    "averaging",
    "envs",
    "linear_predictor",
    "linear_weights",
    "losses",
    "meta",
    "metrics",
    "oco",
    "optax_learner",
    "parameter_free",
    "projections",
    "register_learner",
    "run",
    "run_oco",
    "run_tasks",
    "sweep",
    "transfer",
]
