"""Metrics of a run: running losses, regret, checkpoints, mistakes and mistake rate, rolling
means, log-loss and AUC of a classifier's scores.

All functions take per-step arrays with time on the LAST axis (so a batch of runs `(..., n)`
works unchanged) and an optional mask of real steps (boolean, or integers 0 / 1); padded steps
count nothing. Losses in a float type narrower than float32 (float16, bfloat16) are accumulated
in float32: their own sums and counts saturate on long streams.
"""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import numpy as np

from ojax.core import Array
from ojax.validation import InputError, check_choice, check_int, check_mask


def _wide(values: Array) -> Array:
    """`values`, in float32 when their float type is narrower (float16, bfloat16), in int32
    when they are booleans or narrower integers: running sums and counts of a long stream
    saturate or wrap there (float16 counts stop at 2048, its sums at 65504; int8 at 127)."""
    values = jnp.asarray(values)
    if jnp.issubdtype(values.dtype, jnp.floating) and jnp.finfo(values.dtype).bits < 32:
        return values.astype(jnp.float32)
    if values.dtype == jnp.bool_ or (
        jnp.issubdtype(values.dtype, jnp.integer) and jnp.iinfo(values.dtype).bits < 32
    ):
        return values.astype(jnp.int32)  # int8 counts wrap at 127
    return values


def _masked(values: Array, mask: Array | None) -> tuple[Array, Array]:
    values = _wide(values)
    if mask is None:
        return values, jnp.ones(values.shape, values.dtype)
    check_mask("mask", mask)
    mask = jnp.asarray(mask, bool)
    return jnp.where(mask, values, jnp.zeros((), values.dtype)), mask.astype(values.dtype)


def cumulative_loss(losses: Array, mask: Array | None = None) -> Array:
    """`L_t = sum_{s <= t} loss_s` over real steps."""
    values, _ = _masked(losses, mask)
    return jnp.cumsum(values, axis=-1)


def average_loss(losses: Array, mask: Array | None = None) -> Array:
    """`L_t / (number of real steps up to t)` (0 before the first real step)."""
    values, weights = _masked(losses, mask)
    sums, count = jnp.cumsum(values, axis=-1), jnp.cumsum(weights, axis=-1)
    if not jnp.issubdtype(sums.dtype, jnp.inexact):  # integer mistakes: counted exactly
        kind = jnp.result_type(float)
        sums, count = sums.astype(kind), count.astype(kind)
    return sums / jnp.maximum(count, 1.0)


def mistake_rate(mistakes: Array, mask: Array | None = None) -> Array:
    """Running fraction of mistakes (`mistakes` holds 0/1 per step)."""
    return average_loss(mistakes, mask)


def mistakes(predictions: Array, ys: Array) -> Array:
    """`1` where the sign of a real-valued prediction (a margin `<w, x>` of a surrogate-loss
    run: logistic, hinge, square) disagrees with the label `y in {-1, +1}`, a prediction of
    0 counting as a mistake; else `0` (int32, to feed :func:`mistake_rate`)."""
    return (jnp.asarray(predictions) * jnp.asarray(ys) <= 0).astype(jnp.int32)


def rolling_mean(values: Array, window: int, mask: Array | None = None) -> Array:
    """The mean of the last `window` real steps up to each step (fewer at the start), e.g.
    rolling accuracy `1 - rolling_mean(mistakes(p, y), 500)`."""
    check_int("window", window, 1)
    values, weights = _masked(values, mask)
    kind = values.dtype if jnp.issubdtype(values.dtype, jnp.inexact) else jnp.result_type(float)
    sums, count = jnp.cumsum(values.astype(kind), -1), jnp.cumsum(weights.astype(kind), -1)
    pad = [(0, 0)] * (sums.ndim - 1) + [(window, 0)]
    past_sums = jnp.pad(sums, pad)[..., : sums.shape[-1]]
    past_count = jnp.pad(count, pad)[..., : count.shape[-1]]
    return (sums - past_sums) / jnp.maximum(count - past_count, 1.0)


def log_loss(margins: Array, ys: Array) -> Array:
    """Per-step log-loss `-log p(y_t)` of the probability `p(+1) = sigmoid(m_t)` a margin
    `m_t` gives, labels in {-1, +1}: `log(1 + exp(-y_t m_t))` (in nats; stable for large
    margins). The logistic loss of a logistic run is its log-loss."""
    return jnp.logaddexp(0.0, -jnp.asarray(ys) * jnp.asarray(margins))


def auc(scores: Any, ys: Any) -> float:
    """The area under the ROC curve of `scores` for labels in {-1, +1}: the probability that
    a positive example scores above a negative one, ties counting one half (the Mann-Whitney
    statistic from average ranks, as `sklearn.metrics.roc_auc_score`). NaN when one class is
    absent."""
    from scipy.stats import rankdata

    scores, ys = np.asarray(scores, np.float64).ravel(), np.asarray(ys).ravel()
    if scores.shape != ys.shape or not np.isin(ys, (-1, 1)).all():
        raise InputError(f"ys must hold -1 / +1 labels, one per score, got {np.unique(ys)[:5]}")
    positive = ys > 0
    n_pos, n_neg = int(positive.sum()), int((~positive).sum())
    if not n_pos or not n_neg:
        return float("nan")
    ranks = rankdata(scores)
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def doubling_checkpoints(num_steps: int) -> np.ndarray:
    """The checkpoints `1, 2, 4, ...` up to `num_steps`, plus `num_steps` itself."""
    points = [1]
    while points[-1] * 2 <= num_steps:
        points.append(points[-1] * 2)
    if points[-1] != num_steps:
        points.append(num_steps)
    return np.asarray(points)


def loss_since_last_checkpoint(losses: Array) -> tuple[np.ndarray, Array]:
    """Average loss over each window `(c_{k-1}, c_k]` between doubling checkpoints.

    Returns:
      `(checkpoints, values)` with `values[..., k]` the mean loss of steps
      `c_{k-1} + 1 .. c_k` (`c_{-1} = 0`).
    """
    losses = _wide(losses)
    points = doubling_checkpoints(losses.shape[-1])
    cum = jnp.cumsum(losses, axis=-1)[..., points - 1]
    prev = jnp.concatenate([jnp.zeros_like(cum[..., :1]), cum[..., :-1]], axis=-1)
    widths = jnp.asarray(np.diff(np.concatenate([[0], points])), cum.dtype)
    return points, (cum - prev) / widths


def regret(losses: Array, comparator_losses: Array, mask: Array | None = None) -> Array:
    """Regret against a given comparator sequence: `sum_{s<=t} (loss_s - comparator_s)`."""
    values, weights = _masked(jnp.asarray(losses) - jnp.asarray(comparator_losses), mask)
    del weights
    return jnp.cumsum(values, axis=-1)


def best_fixed_loss(zs: Array, objective: str, feasible_set: str, radius: float = 1.0) -> Array:
    """Loss of the best fixed comparator in hindsight after each prefix, in closed form.

    `zs` is `(..., n, d)`; returns `(..., n)` with entry t equal to
    `min_u sum_{s<=t} f_s(u)` over the set. Closed forms:

    * linear `<u, z>` over the L2 ball: `-radius ||S_t||`; over the box:
      `-radius ||S_t||_1`; over the simplex (finite experts): `min_i S_{t,i}`;
    * quadratic `0.5 ||u - z||^2` over any set containing the data's convex hull (the ball of
      radius `>= max ||z||`, or unconstrained): the running mean is optimal and the value is
      `0.5 (sum ||z_s||^2 - t ||mean_t||^2)`.
    """
    check_choice("objective", objective, ("linear", "quadratic"))
    zs = jnp.asarray(zs)
    sums = jnp.cumsum(zs, axis=-2)
    if objective == "linear":
        check_choice("feasible_set", feasible_set, ("l2_ball", "box", "simplex"))
        if feasible_set == "l2_ball":
            return -radius * jnp.linalg.norm(sums, axis=-1)
        if feasible_set == "box":
            return -radius * jnp.sum(jnp.abs(sums), axis=-1)
        return radius * jnp.min(sums, axis=-1)
    check_choice("feasible_set", feasible_set, ("l2_ball", "none"))
    t = jnp.arange(1, zs.shape[-2] + 1, dtype=zs.dtype)
    sq = jnp.cumsum(jnp.sum(zs**2, axis=-1), axis=-1)
    return 0.5 * (sq - jnp.sum(sums**2, axis=-1) / t)


def regret_to_best(
    losses: Array, zs: Array, objective: str, feasible_set: str, radius: float = 1.0
) -> Array:
    """Regret against the best fixed comparator in hindsight of each prefix (see
    :func:`best_fixed_loss`): `sum_{s<=t} f_s(w_s) - min_u sum_{s<=t} f_s(u)`.

    `losses` may carry extra leading axes (several runs on the same stream)."""
    paid = jnp.cumsum(_wide(losses), axis=-1)
    best = best_fixed_loss(zs, objective, feasible_set, radius)
    return paid - jnp.broadcast_to(best, paid.shape)


__all__ = [
    "auc",
    "average_loss",
    "best_fixed_loss",
    "cumulative_loss",
    "doubling_checkpoints",
    "log_loss",
    "loss_since_last_checkpoint",
    "mistake_rate",
    "mistakes",
    "regret",
    "regret_to_best",
    "rolling_mean",
]
