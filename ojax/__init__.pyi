"""The public names of ojax (this stub is also what `ojax/__init__.py` loads lazily)."""

from . import (
    adapters,
    averaging,
    contextual,
    envs,
    losses,
    meta,
    metrics,
    nonstationary,
    oco,
    parameter_free,
    projections,
    results,
    sweep,
    transfer,
)
from .adapters import OCOParams, linear_predictor, linear_weights, oco_predictor, optax_learner
from .core import (
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
from .datasets.streaming import BlockReader, run_blocks, run_drawn
from .game import run_env
from .programs.cache import enable_compilation_cache
from .runner import run, run_entry, run_oco
from .state_io import load_state, save_state
from .validation import InputError, checked

__version__: str
