"""Synthetic environments and data streams (seeded, jittable).

:data:`STREAMS` names the stream makers `(key, num_steps, dim) -> data` that the learner
registry's entries are meant for (`LearnerEntry.stream`): the learners name their data and
never import it (the data layer sits above the learners).
"""

from ojax.contextual.supervised import linear_classes_stream
from ojax.core import STREAMS
from ojax.envs import adversaries, kernel_pools, regression, streams, switching
from ojax.envs.multitask import (
    LowVarianceParams,
    low_variance_tasks,
    synthetic_split,
    task_block_stream,
)

# Stream name -> ``(key, num_steps, dim) -> (xs, ys[, mask[, order[, task_data]]])``, the
# arguments of ojax.run (see ojax.core.LearnerEntry); the table is ojax.core.STREAMS, filled
# here. Add a stream of one's own to it to name it in an entry.
STREAMS.update(
    {
        "unit_ball": streams.unit_ball_stream,
        "expert_losses": streams.expert_losses_stream,
        "realizable_advice": streams.realizable_advice_stream,
        "linear_regression": streams.linear_regression_stream,
        "classification": streams.classification_stream,
        "regression": regression.regression_stream,
        "task_blocks": task_block_stream,
        "kernel_pool": kernel_pools.kernel_pool_stream,
        "kernel_pool_source": kernel_pools.kernel_pool_source_stream,
        "kernel_two_views": kernel_pools.kernel_two_views_stream,
        "kernel_two_views_source": kernel_pools.kernel_two_views_source_stream,
        "switching_experts": switching.switching_experts_stream,
        "piecewise_regression": switching.piecewise_regression_stream,
        "linear_classes": linear_classes_stream,
    }
)

__all__ = [
    "STREAMS",
    "LowVarianceParams",
    "adversaries",
    "kernel_pools",
    "low_variance_tasks",
    "regression",
    "streams",
    "switching",
    "synthetic_split",
]
