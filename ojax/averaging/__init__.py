"""Iterate averaging: Polyak-Ruppert, geometric, tail; the regularization path; the chunk merge.

* :mod:`~ojax.averaging.weights`: discounts (`log_discount = log rho <= 0`), conversions from
  `(eta, lambda)` in both conventions, float32-safe weight formulas;
* :mod:`~ojax.averaging.averagers`: streaming averagers any learner can carry, and the same
  averages as functions of stored iterates;
* :mod:`~ojax.averaging.least_squares`: least-squares SGD (one pass, :func:`sgd_scan`, with the
  iterates stored on request),
  regularized SGD and closed-form ridge as comparators;
* :mod:`~ojax.averaging.expected`: what theory knows (SGD with the covariance known, the exact
  means `E[w_t]`, `E[v_t]`);
* :mod:`~ojax.averaging.path`: the regularization path of one SGD pass (product, chunked or
  streamed) and model selection on held-out data;
* :mod:`~ojax.averaging.blocks`: folding blocks of iterates into the path's running averages;
* :mod:`~ojax.averaging.reduction`: chunk statistics, the associative merge, prefix averages by
  `lax.associative_scan` and the time axis sharded across devices.
"""

from ojax.averaging import registry as _registry  # noqa: F401  (registers the learners)
from ojax.averaging.averagers import (
    AveragedParams,
    AveragedState,
    Averager,
    AveragerState,
    GeometricParams,
    RunningSumState,
    TailParams,
    average_of,
    averaged,
    geometric_average,
    geometric_averager,
    polyak_average,
    polyak_averager,
    tail_average,
    tail_averager,
)
from ojax.averaging.expected import (
    KnownCovarianceParams,
    expected_ridge_sgd,
    expected_sgd_iterates,
    known_covariance_iterates,
    known_covariance_pass,
)
from ojax.averaging.least_squares import (
    RidgeSGDParams,
    RidgeSGDState,
    SGDParams,
    SGDState,
    least_squares_pass,
    least_squares_ridge_sgd,
    least_squares_sgd,
    ridge_regression,
    ridge_sgd,
    ridge_sgd_runs,
    ridge_solution,
    sgd,
    sgd_final,
    sgd_iterates,
    sgd_scan,
)
from ojax.averaging.path import (
    PathResult,
    array_blocks,
    choose_mode,
    geometric_path,
    path_of_iterates,
    regularization_path,
    select_on_holdout,
    stream_path,
    tail_path,
)
from ojax.averaging.reduction import (
    ChunkStats,
    chunk_stats,
    chunked_geometric_average,
    combine_chunks,
    merge,
    prefix_averages,
    sharded_geometric_average,
)
from ojax.averaging.weights import (
    CONVENTIONS,
    effective_regularization,
    geometric_weights,
    linked_step_size,
    log_discount_from_regularization,
    regularization_from_log_discount,
    tail_weights,
)

__all__ = [
    "CONVENTIONS",
    "AveragedParams",
    "AveragedState",
    "Averager",
    "AveragerState",
    "ChunkStats",
    "GeometricParams",
    "KnownCovarianceParams",
    "PathResult",
    "RidgeSGDParams",
    "RunningSumState",
    "RidgeSGDState",
    "SGDParams",
    "SGDState",
    "TailParams",
    "array_blocks",
    "average_of",
    "averaged",
    "choose_mode",
    "chunk_stats",
    "chunked_geometric_average",
    "combine_chunks",
    "effective_regularization",
    "expected_ridge_sgd",
    "expected_sgd_iterates",
    "geometric_average",
    "geometric_averager",
    "geometric_path",
    "geometric_weights",
    "known_covariance_iterates",
    "known_covariance_pass",
    "least_squares_pass",
    "least_squares_ridge_sgd",
    "path_of_iterates",
    "least_squares_sgd",
    "linked_step_size",
    "log_discount_from_regularization",
    "merge",
    "polyak_average",
    "polyak_averager",
    "prefix_averages",
    "regularization_from_log_discount",
    "regularization_path",
    "ridge_regression",
    "ridge_sgd",
    "ridge_sgd_runs",
    "ridge_solution",
    "select_on_holdout",
    "sgd",
    "sgd_final",
    "sgd_iterates",
    "sgd_scan",
    "sharded_geometric_average",
    "stream_path",
    "tail_average",
    "tail_averager",
    "tail_path",
    "tail_weights",
]
