"""Synthetic environments and data streams (seeded, jittable).

:data:`STREAMS` names the stream makers ``(key, num_steps, dim) -> data`` that the learner
registry's entries are meant for (``LearnerEntry.stream``): the learners name their data and
never import it (the data layer sits above the learners).
"""

from collections.abc import Callable

from ojax.envs import kernel_pools, regression, streams
from ojax.envs.multitask import (
    LowVarianceParams,
    low_variance_tasks,
    synthetic_split,
    task_block_stream,
)

STREAMS: dict[str, Callable[..., tuple]] = {
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
}
"""Stream name -> ``(key, num_steps, dim) -> (xs, ys[, mask[, order[, task_data]]])``, the
arguments of :func:`ojax.run` (see :class:`ojax.core.LearnerEntry`). Add a stream of one's own
here to name it in an entry."""

__all__ = [
    "STREAMS",
    "LowVarianceParams",
    "kernel_pools",
    "low_variance_tasks",
    "regression",
    "streams",
    "synthetic_split",
]
