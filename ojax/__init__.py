"""ojax: a JAX library and vectorized simulator for online learning."""

__version__ = "0.1.0"

from ojax import interrupt as _interrupt  # noqa: E402  (before JAX is imported)

_interrupt.install()  # the ojax command: Ctrl-C is one line and status 130, even now

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
    results,  # ojax.results.load(OUT): a finished run's table and curves
    sweep,  # noqa: E402  (the package: ojax.sweep.sweep, sweep_experiment)
    transfer,
)
from ojax.adapters import linear_predictor, linear_weights, optax_learner  # noqa: E402
from ojax.cache import enable_compilation_cache  # noqa: E402
from ojax.core import (  # noqa: E402
    LEARNER_KINDS,
    LEARNERS,
    Environment,
    LearnerEntry,
    MultiTaskLearner,
    OCOLearner,
    Predictor,
    Step,
    TaskInfo,
    Trace,
    learner_factory,
    register_learner,
    tree_where,
)
from ojax.game import run_env  # noqa: E402
from ojax.runner import OCOParams, oco_predictor, run, run_entry, run_oco  # noqa: E402
from ojax.state_io import load_state, save_state  # noqa: E402
from ojax.streaming import BlockReader, run_blocks, run_drawn  # noqa: E402
from ojax.validation import InputError, checked  # noqa: E402

__all__ = [
    "BlockReader",
    "LEARNERS",
    "LEARNER_KINDS",
    "Environment",
    "InputError",
    "LearnerEntry",
    "MultiTaskLearner",
    "OCOLearner",
    "OCOParams",
    "Predictor",
    "Step",
    "TaskInfo",
    "Trace",
    "adapters",
    "averaging",
    "envs",
    "learner_factory",
    "linear_predictor",
    "checked",
    "enable_compilation_cache",
    "linear_weights",
    "load_state",
    "losses",
    "meta",
    "metrics",
    "oco_predictor",
    "oco",
    "optax_learner",
    "parameter_free",
    "projections",
    "register_learner",
    "results",
    "run",
    "run_blocks",
    "run_drawn",
    "run_entry",
    "run_env",
    "run_oco",
    "save_state",
    "sweep",
    "transfer",
    "tree_where",
]
