"""Checks of the online learning notes' realizable example (the spec's example 2): follow the
best expert errs at most `|H| - 1` times and the majority vote
(halving) at most `log2 |H|` times when an expert of `H` is always right.

Both bounds are **attained** here, on adversarial advice sequences built against each learner's
tie rule (lowest index for follow-the-best, label 1 on a tied vote for halving):

* against follow-the-best, round `t <= |H| - 1` has the expert it follows (the `t`-th) say 1
  and every other expert 0, and the label is 0: it errs and that expert is out;
* against halving (`|H| = 2^k`), round `j <= k` splits the consistent experts in two equal
  halves, the lower-index one saying 1: the vote ties, halving says 1, the label is 0 and the
  half is out.

Afterwards the last expert (always 0) is the only consistent one and is followed. The falsifier
of both is a learner that ignores the advice (always 1): it errs on every round, `T` times.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import jax.numpy as jnp
import numpy as np

from ojax import losses, oco
from ojax.runner import run
from ojax.theory.base import Check, CheckConfig, Outcome, as_measured, log_horizons


def num_experts(config: CheckConfig) -> int:
    """`|H|`: 16 (quick) or 64 experts, a power of 2."""
    return 16 if config.quick else 64


def _horizons(config: CheckConfig) -> np.ndarray:
    return log_horizons(4, 128 if config.quick else 2048, 8 if config.quick else 12)


def follow_best_sequence(size: int, length: int) -> np.ndarray:
    """`(length, size)` advice against follow-the-best (labels: 0 throughout)."""
    advice = np.zeros((length, size), np.int32)
    rounds = np.arange(min(length, size - 1))
    advice[rounds, rounds] = 1  # round t: the t-th expert (the one followed) says 1
    return advice


def halving_sequence(size: int, length: int) -> np.ndarray:
    """`(length, size)` advice against halving, `size = 2^k` (labels: 0 throughout)."""
    advice = np.zeros((length, size), np.int32)
    start, alive = 0, size
    for j in range(min(length, int(math.log2(size)))):
        half = alive // 2
        advice[j, start : start + half] = 1  # the lower half of the consistent experts says 1
        start, alive = start + half, half
    return advice


def _mistakes(learner, advice: np.ndarray, steps: np.ndarray) -> np.ndarray:
    """The learner's mistakes up to each horizon on `advice` with labels 0."""
    x = jnp.asarray(advice)
    _, trace = run(
        learner, oco.ExpertsParams(), x, jnp.zeros(len(advice), x.dtype), losses.mismatch
    )
    return np.cumsum(np.asarray(trace.loss, np.float64))[steps - 1]


def _realizable(make, sequence, bound) -> Callable[[CheckConfig], Outcome]:
    def compute(config: CheckConfig) -> Outcome:
        steps, size = _horizons(config), num_experts(config)
        advice = sequence(size, int(steps[-1]))
        assert np.all(advice[:, -1] == 0)  # the last expert is always right: realizable
        learner = as_measured(
            _mistakes(make(size), advice, steps), np.full(len(steps), bound(size))
        )
        ignores = as_measured(steps.astype(np.float64), np.full(len(steps), bound(size)))
        return Outcome(steps, {"learner@adversarial": learner, "falsifier:always-1": ignores})

    return compute


CHECKS: tuple[Check, ...] = (
    Check(
        "notes-follow-best",
        "notes",
        "the notes' realizable example: follow-the-best (the spec's example 2)",
        "realizable binary prediction, 0-1 loss: follow the best expert errs at most |H| - 1 "
        "times (regret against H = mistakes)",
        "|H| = 16 (quick) / 64 experts, the adversarial advice sequence of the module docstring "
        "(the followed expert alone errs until one expert is left); attained after |H| - 1 rounds",
        "bound",
        "T (rounds)",
        _realizable(oco.follow_best_expert, follow_best_sequence, lambda m: m - 1.0),
        falsifier="always 1 (ignores the advice): it errs on every round, T > |H| - 1 times",
        note="ratio 1 from round |H| - 1 on: the bound is attained, not only respected",
    ),
    Check(
        "notes-halving",
        "notes",
        "the notes' realizable example: the majority algorithm (the spec's example 2)",
        "realizable binary prediction, 0-1 loss: the majority vote of the consistent experts "
        "errs at most log2 |H| times",
        "|H| = 16 (quick) / 64 experts, the adversarial advice sequence of the module docstring "
        "(a tied vote among the consistent experts every round until one is left); attained "
        "after log2 |H| rounds",
        "bound",
        "T (rounds)",
        _realizable(oco.halving, halving_sequence, lambda m: math.log2(m)),
        falsifier="always 1 (ignores the advice): it errs on every round, T > log2 |H| times",
        note="ratio 1 from round log2 |H| on: the bound is attained, not only respected",
    ),
)


__all__ = ["CHECKS", "follow_best_sequence", "halving_sequence", "num_experts"]
