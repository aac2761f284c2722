"""Online multi-task / meta-learning of a bias: ITL / fixed bias, Aggressive, Lazy, tuned OGD.

The learners are :class:`ojax.core.MultiTaskLearner` compositions of OCO learners (the paper's
parameter-free direction-magnitude learner by default, online gradient descent for the tuned
baselines, any optax optimizer); :func:`run_meta` runs them with :func:`ojax.run` and records
what the paper measures.
"""

from ojax.meta import registry as _registry  # noqa: F401  (registers the learners)
from ojax.meta.learners import (
    COUNTERS,
    META_GRADIENTS,
    FixedBiasParams,
    FixedBiasState,
    MetaParams,
    MetaState,
    WithinTask,
    aggressive,
    aggressive_ogd,
    biased_within_task,
    check_bias,
    lazy,
    lazy_ogd,
    ogd_within_task,
    params_dtype,
)
from ojax.meta.simulate import (
    GridScore,
    TaskSummary,
    best_bias_in_hindsight,
    bias_path,
    check_coins_bounded,
    cumulative_error,
    grid_score,
    initial_bias,
    meta_test_curve,
    meta_test_error,
    run_meta,
    task_average,
    task_summary,
    test_error,
    test_error_curve,
    weights_record,
)
from ojax.tasks import TaskBlock, TestPoints, check_task_block, pad_tasks, task_slice  # re-exported

__all__ = [
    "COUNTERS",
    "META_GRADIENTS",
    "FixedBiasParams",
    "FixedBiasState",
    "GridScore",
    "MetaParams",
    "MetaState",
    "TaskBlock",
    "TaskSummary",
    "TestPoints",
    "WithinTask",
    "aggressive",
    "aggressive_ogd",
    "best_bias_in_hindsight",
    "bias_path",
    "biased_within_task",
    "check_bias",
    "check_coins_bounded",
    "check_task_block",
    "cumulative_error",
    "grid_score",
    "initial_bias",
    "lazy",
    "lazy_ogd",
    "meta_test_curve",
    "meta_test_error",
    "ogd_within_task",
    "pad_tasks",
    "params_dtype",
    "run_meta",
    "task_average",
    "task_slice",
    "task_summary",
    "test_error",
    "test_error_curve",
    "weights_record",
]
