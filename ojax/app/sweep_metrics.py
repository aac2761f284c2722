"""What `ojax sweep` records for each kind of learner, and the regret against the best fixed
comparator in hindsight.

Every metric is a curve at checkpoints (up to 200: steps for a stream, tasks for task blocks),
traced inside the sweep (so it vmaps over seeds and the grid):

* OCO learners, predictors and kernel learners: `average_loss` and `cumulative_loss` after
  each step, and `regret` where the loss allows an exact comparator (below);
* multi-task learners (task blocks `(num_tasks, max_points)`): `cumulative_error` (the mean
  online error of the real points so far, after each task: the cumulative error of Denevi et
  al., 2020, on ragged tasks weighted by points), `task_error` (the mean online error of each
  task's real points), `cumulative_loss`, and `test_error` where the stream gives each task's
  held-out points as `task_data` (a `ojax.meta.TestPoints`) and the learner's state is one of
  `ojax.meta` (the error of the task's averaged iterate on them, averaged over the tasks so
  far, as `ojax.meta.test_error_curve`).

Regret: `sum_{s<=t} loss_s - min_{u in U} sum_{s<=t} loss_s(u)`, the comparator `u` fixed
in hindsight for each prefix and computed exactly:

* the linear objective `<w, z>` over `U` the unit L2 ball (`unit_ball` streams:
  `-||S_t||`) or the simplex (`expert_losses` streams: `min_i S_{t,i}`),
  `S_t = sum_{s<=t} z_s`;
* the quadratic objective `0.5 ||w - z||^2` over `R^d` (the running mean is optimal);
* the square loss `0.5 (y_hat - y)^2` of a predictor on features `(n, d)`: the best fixed
  linear predictor `y_hat = <u, x>` over `R^d`, least squares in closed form from the running
  sums `sum x x^T`, `sum x y`, `sum y^2` (a pseudo-inverse where they are singular).

Other losses (hinge, zero-one, absolute, mismatch) have no closed-form comparator: no `regret`.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ojax import metrics
from ojax.core import LearnerEntry, TaskInfo, Trace
from ojax.losses import LOSSES
from ojax.meta import TestPoints, task_summary
from ojax.runner import run, run_entry_state
from ojax.validation import InputError

LINEAR_SETS = {"unit_ball": "l2_ball", "expert_losses": "simplex"}
"""Stream name -> the feasible set of the linear objective's comparator (radius 1)."""

Metrics = dict[str, jax.Array]


def checkpoints(length: int, count: int = 200) -> np.ndarray:
    """Up to `count` 1-based positions in `1..length`, evenly spread, the last one `length`."""
    return np.unique(np.linspace(1, length, min(count, length)).round().astype(np.int64))


def comparator(entry: LearnerEntry, data: tuple) -> str | None:
    """The comparator of `regret` for this entry on `data` (a sentence), or `None` where the
    loss has no closed form here."""
    xs, ys, *extra = data
    stream = entry.stream if isinstance(entry.stream, str) else None
    if entry.kind == "oco" and entry.objective == "quadratic":
        return "the best fixed point of R^d in hindsight (the running mean of z)"
    if entry.kind == "oco" and entry.objective == "linear" and stream in LINEAR_SETS:
        where = {"l2_ball": "the unit L2 ball", "simplex": "the simplex"}[LINEAR_SETS[stream]]
        return f"the best fixed point of {where} in hindsight"
    plain = not any(e is not None for e in extra)
    if entry.kind == "predictor" and entry.objective == "square" and plain:
        if isinstance(xs, jax.Array | np.ndarray | jax.ShapeDtypeStruct) and xs.ndim == 2:
            return "the best fixed linear predictor <u, x> in hindsight (least squares)"
    return None


def _least_squares_best(xs: jax.Array, ys: jax.Array, take: np.ndarray) -> jax.Array:
    """`min_u sum_{s<=t} 0.5 (<u, x_s> - y_s)^2` at the 0-based steps `take`, from the running
    sums (one scan over the steps writes each checkpoint's sums into its slot: `O(n d^2)` time,
    `O(len(take) d^2)` memory)."""
    dtype = jnp.result_type(xs.dtype, ys.dtype, float)
    xs, ys = xs.astype(dtype), ys.astype(dtype)
    slot = jnp.asarray(np.searchsorted(take, np.arange(xs.shape[0])), jnp.int32)
    dim, count = xs.shape[1], len(take)
    init = (
        jnp.zeros((dim, dim), dtype),
        jnp.zeros(dim, dtype),
        jnp.zeros((), dtype),
        jnp.zeros((count, dim, dim), dtype),
        jnp.zeros((count, dim), dtype),
        jnp.zeros(count, dtype),
    )

    def step(carry, item):
        a, b, yy, out_a, out_b, out_y = carry
        x, y, k = item
        a, b, yy = a + jnp.outer(x, x), b + x * y, yy + y * y
        zero = jnp.zeros_like(k)  # the indices in one integer type (int64 literals under x64)
        out_a = jax.lax.dynamic_update_slice(out_a, a[None], (k, zero, zero))
        out_b = jax.lax.dynamic_update_slice(out_b, b[None], (k, zero))
        out_y = jax.lax.dynamic_update_slice(out_y, yy[None], (k,))
        return (a, b, yy, out_a, out_b, out_y), None

    (_, _, _, a, b, yy), _ = jax.lax.scan(step, init, (xs, ys, slot))
    u = jnp.einsum("kij,kj->ki", jnp.linalg.pinv(a, hermitian=True), b)
    return 0.5 * jnp.maximum(yy - jnp.einsum("ki,ki->k", b, u), 0.0)


def _regret(entry: LearnerEntry, data: tuple, losses: jax.Array, take: np.ndarray) -> jax.Array:
    xs, ys, *_ = data
    paid = metrics.cumulative_loss(losses)[take]
    if entry.kind == "oco":
        feasible = "none" if entry.objective == "quadratic" else LINEAR_SETS[str(entry.stream)]
        best = metrics.best_fixed_loss(xs, entry.objective, feasible)[take]
    else:
        best = _least_squares_best(xs, ys, take)
    return paid - best.astype(paid.dtype)


def _multi_task(trace: Trace, take: np.ndarray, test: jax.Array | None) -> Metrics:
    """The curves of task blocks at the task checkpoints `take` (0-based)."""
    dtype = jnp.result_type(float)
    real = trace.mask.astype(dtype)
    sums = jnp.sum(jnp.where(trace.mask, trace.loss, 0.0).astype(dtype), axis=-1)
    counts = jnp.sum(real, axis=-1)
    out = {
        "cumulative_error": (jnp.cumsum(sums) / jnp.maximum(jnp.cumsum(counts), 1.0))[take],
        "task_error": (sums / jnp.maximum(counts, 1.0))[take],
        "cumulative_loss": jnp.cumsum(sums)[take],
    }
    if test is not None:
        tests = test.astype(dtype)
        seen = jnp.arange(1, tests.shape[0] + 1, dtype=dtype)
        out["test_error"] = (jnp.cumsum(tests) / seen)[take]
    return out


def _held_out(entry: LearnerEntry, learner: Any, params: Any, data: tuple) -> bool:
    """Whether the stream gives held-out points a `task_summary` of this learner can score."""
    extra = data[2:]
    if entry.kind != "multi_task" or len(extra) < 3 or not isinstance(extra[2], TestPoints):
        return False
    first = TaskInfo(jnp.int32(0), jnp.int32(1), jax.tree.map(lambda a: a[0], extra[2]))
    try:
        state = jax.eval_shape(learner.init, params)
        record = task_summary(LOSSES[entry.objective])
        jax.eval_shape(lambda st, p, info: record(st, p, info), state, params, first)
    except Exception:  # a state without `task` and `bias`: no averaged iterate to score
        return False
    return True


def _run_tasks(entry: LearnerEntry, learner: Any, params: Any, data: tuple, scored: bool):
    xs, ys, *extra = data
    options = dict(zip(("mask", "order", "task_data"), extra))
    record = task_summary(LOSSES[entry.objective]) if scored else None
    return run(learner, params, xs, ys, LOSSES[entry.objective], task_record=record, **options)[1]


def _sound_state(state: Any) -> jax.Array:
    """Whether no floating leaf of `state` holds a NaN or `+inf` (a traced bool); `-inf` is
    a state's own value, the log of a zero weight (FLH's empty slots), not an overflow."""
    leaves = [a for a in jax.tree.leaves(state) if jnp.issubdtype(a.dtype, jnp.inexact)]
    if not leaves:
        return jnp.asarray(True)
    return jnp.all(jnp.stack([jnp.all(~jnp.isnan(a) & (a != jnp.inf)) for a in leaves]))


CLASSIFIERS = ("hinge", "logistic", "zero_one")
"""The losses of classifiers (labels -1 / +1, the prediction a margin) whose run on a data file
also records `mistake_rate`."""


def sweep_metrics(
    entry: LearnerEntry, learner: Any, params: Any, data: tuple, classify: bool = False
) -> Metrics:
    """The curves `ojax sweep` records of one run of `learner` with `params` on `data` (its
    entry's stream; see the module's docstring); `classify`: also `mistake_rate`, the running
    fraction of sign mistakes, for a loss of :data:`CLASSIFIERS` (`ojax sweep --data`)."""
    if entry.kind == "multi_task":
        scored = _held_out(entry, learner, params, data)
        trace = _run_tasks(entry, learner, params, data, scored)
        if trace.loss.ndim != 2:
            raise InputError(
                f"{entry.name} (multi_task) gives losses of shape {trace.loss.shape}, not "
                "(num_tasks, max_points); ojax sweep records task blocks"
            )
        take = checkpoints(trace.loss.shape[0]) - 1
        return _multi_task(trace, take, trace.task.test_error if scored else None)
    state, trace = run_entry_state(entry, learner, params, data)
    num_steps = trace.loss.shape[0]
    if trace.loss.ndim != 1:
        raise InputError(
            f"{entry.name} ({entry.kind}) gives losses of shape {trace.loss.shape}, not one "
            f"per step ({num_steps},); ojax sweep records a loss per step"
        )
    take = checkpoints(num_steps) - 1
    values = trace.loss.astype(jnp.result_type(float))
    # a learner whose state overflowed (NaN / +inf) diverged, whatever its losses say: its
    # curves are NaN, so it is never named best
    values = jnp.where(_sound_state(state), values, jnp.nan)
    out = {
        "average_loss": metrics.average_loss(values)[take],
        "cumulative_loss": metrics.cumulative_loss(values)[take],
    }
    if comparator(entry, data) is not None:
        out["regret"] = _regret(entry, data, values, take)
    if classify and entry.objective in CLASSIFIERS:
        ys, order = data[1], data[3]
        labels = ys if order is None else ys[order]
        wrong = metrics.mistakes(trace.prediction, labels)  # type: ignore[arg-type]
        out["mistake_rate"] = metrics.mistake_rate(wrong)[take]
    return out


def primary_metric(kind: str) -> str:
    """The metric the table prints and the best value is chosen by."""
    return "cumulative_error" if kind == "multi_task" else "average_loss"


__all__ = [
    "CLASSIFIERS",
    "LINEAR_SETS",
    "checkpoints",
    "comparator",
    "primary_metric",
    "sweep_metrics",
]
