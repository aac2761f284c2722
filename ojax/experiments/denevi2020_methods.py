"""The methods of the Denevi et al. (2020) experiments and how a seed draws its tasks from its
key (the synthetic low-variance environment and the real-data protocol; seed `s` runs with
`jax.random.key(s)`, the sweep engine's key of the explicit seed `s`), shared by
:mod:`ojax.experiments.denevi2020` and :mod:`ojax.experiments.denevi2020_variance`: one seed of
one method is :func:`run_method` (or :func:`tune_method` for a tuned baseline), traceable."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ojax import meta
from ojax.core import MultiTaskLearner, Params
from ojax.datasets import multitask as mt_data
from ojax.envs import multitask as mt_env
from ojax.parameter_free import direction_magnitude
from ojax.validation import check_choice

PF_METHODS: dict[str, tuple[str, str]] = {  # name -> (kind, bettor)
    "ITL": ("fixed", "ons"),
    "Oracle": ("fixed", "ons"),
    "Aggressive": ("aggressive", "ons"),
    "Lazy": ("lazy", "ons"),
    "Aggressive_KT": ("aggressive", "kt"),
    "Lazy_KT": ("lazy", "kt"),
}
SS_METHODS: dict[str, str] = {"Aggressive_SS": "aggressive", "Lazy_SS": "lazy"}
BEST_BIAS = "Best-bias"  # ITL's learner around the best bias in hindsight of the training tasks


class SeedData(NamedTuple):
    """One seed's tasks."""

    train: meta.TaskBlock  # the online stream of tasks
    validation: meta.TaskBlock | None  # for the honest selection of the _SS steps
    unseen: meta.TaskBlock  # unseen tasks of the meta-test


class Setting(NamedTuple):
    """What one dataset's run needs."""

    dataset: str
    draw: Callable[[Any], SeedData]  # the seed's PRNG key -> its tasks (traceable)
    num_seeds: int
    dim: int
    dtype: Any
    oracle_bias: Any  # (d,) or None (no Oracle)
    checkpoints: np.ndarray  # numbers of training tasks at which the meta-test is measured
    num_points: int = 0  # real online points of a seed's stream (0: unknown)
    train_shape: tuple[int, int] | None = None  # (tasks, slots) of a seed's training block


def checkpoints(num_tasks: int, num: int) -> np.ndarray:
    """About `num` evenly spaced numbers of training tasks in `0 .. num_tasks` (both ends
    included, no repeats): where the meta-test curve is measured."""
    return np.unique(np.round(np.linspace(0, num_tasks, min(num, num_tasks + 1))).astype(int))


class SyntheticSize(NamedTuple):
    """The sizes of the synthetic environment (the paper's by default)."""

    num_tasks: int = 400
    num_validation: int = 20
    num_test: int = 50
    num_points: int = 50
    num_train: int = 25
    dim: int = 10
    num_checkpoints: int = 41


def synthetic_data(
    key: Any, size: SyntheticSize, dtype, params: mt_env.LowVarianceParams | None = None
) -> SeedData:
    """A seed's synthetic tasks, drawn from its PRNG `key` (seed `s`:
    `jax.random.key(s)`) (traceable)."""
    params = params or mt_env.default_low_variance_params(dtype)
    split = mt_env.synthetic_split(
        key,
        params,
        size.num_tasks,
        size.num_validation,
        size.num_test,
        size.num_points,
        size.dim,
        size.num_train,
        dtype,
    )
    return SeedData(split.train, split.validation, split.test)


def synthetic_setting(
    num_seeds: int,
    size: SyntheticSize,
    dtype,
    params: mt_env.LowVarianceParams | None = None,
) -> Setting:
    """The synthetic environment (seed `s` draws from `jax.random.key(s)`)."""
    params = params or mt_env.default_low_variance_params(dtype)
    oracle = jnp.full((size.dim,), params.task_mean, dtype)
    return Setting(
        "synthetic",
        functools.partial(synthetic_data, size=size, dtype=dtype, params=params),
        num_seeds,
        size.dim,
        dtype,
        oracle,
        checkpoints(size.num_tasks, size.num_checkpoints),
        size.num_tasks * size.num_train,
        (size.num_tasks, size.num_train),
    )


def real_setting(
    data: mt_data.PooledTasks,
    dataset: str,
    num_seeds: int,
    dtype,
    heldout_fraction: float = 0.2,
    num_checkpoints: int = 21,
) -> Setting:
    """Tasks of a real dataset (seed `s`: `jax.random.key(s)` shuffles the task order and
    splits each task).

    All tasks form the training stream (the authors' protocol). The last `heldout_fraction` of
    each seed's shuffled tasks also serve as the unseen tasks of the meta-test, measured only
    for biases learned before any of them arrived (checkpoints `t <= T - H`): the learners are
    online, so this equals training on the first `T - H` tasks alone.
    """
    arrays = (
        jnp.asarray(data.x, dtype),
        jnp.asarray(data.y, dtype),
        jnp.asarray(data.mask),
        jnp.asarray(data.num_test),
    )
    width = mt_data.num_train_max(data)
    num_tasks = data.x.shape[0]
    seen = num_tasks - max(1, int(round(heldout_fraction * num_tasks)))

    def draw(key):
        blocks = mt_data.split_tasks_core(key, *arrays, width)
        return SeedData(blocks, None, meta.task_slice(blocks, seen, num_tasks))

    points = int(np.sum(data.mask) - np.sum(data.num_test))  # every seed's training points
    at = checkpoints(seen, num_checkpoints)
    dim = data.x.shape[-1]
    return Setting(dataset, draw, num_seeds, dim, dtype, None, at, points, (num_tasks, width))


def step_grid(num: int = 20) -> np.ndarray:
    """The authors' step grid `10^linspace(-6, 4, num)`."""
    return 10.0 ** np.linspace(-6.0, 4.0, num)


class Learners(NamedTuple):
    """A method's learner and the within-task learner that meta-tests its biases."""

    learner: MultiTaskLearner
    fixed: MultiTaskLearner  # the same within-task learner with a frozen bias


def method_learners(method: str, dim: int, counter: str = "global") -> Learners:
    """The learners of a method (equal by value: repeated runs hit the compile caches)."""
    check_choice("method", method, list(PF_METHODS) + list(SS_METHODS))
    if method in SS_METHODS:
        mode = SS_METHODS[method]
        learner = meta.aggressive_ogd(dim) if mode == "aggressive" else meta.lazy_ogd(dim)
        return Learners(learner, meta.ogd_within_task(dim))
    kind, bettor = PF_METHODS[method]
    inside = direction_magnitude(bettor)
    fixed = meta.biased_within_task(dim, inside)
    if kind == "aggressive":
        return Learners(meta.aggressive(dim, inside, inside, counter=counter), fixed)
    if kind == "lazy":
        return Learners(meta.lazy(dim, inside, inside), fixed)
    return Learners(fixed, fixed)


def method_params(
    method: str,
    dim: int,
    dtype,
    inner_wealth: float = 1.0,
    meta_wealth: float = 1.0,
    oracle_bias: Any = None,
) -> Params:
    """The paper's params of a parameter-free method (ITL: bias 0; the Oracle: `oracle_bias`)."""
    check_choice("method", method, list(PF_METHODS))
    if method in ("ITL", "Oracle"):
        bias = jnp.zeros(dim, dtype) if method == "ITL" else jnp.asarray(oracle_bias, dtype)
        return meta.FixedBiasParams.paper(bias, inner_wealth=inner_wealth, dtype=dtype)
    return meta.MetaParams.paper(inner_wealth=inner_wealth, meta_wealth=meta_wealth, dtype=dtype)


class Outputs(NamedTuple):
    """What one seed of one method records."""

    errors: Any  # (T, n) online errors (0 on padding)
    mask: Any  # (T, n) bool, the real points
    test_errors: Any  # (T,) test error of each task's averaged iterate
    meta_test: Any  # (C,) meta-test error of the bias after each checkpoint's number of tasks


def run_method(learners: Learners, params: Params, data: SeedData, checkpoints: Any) -> Outputs:
    """One seed of one method: the online run and the meta-test at `checkpoints` (traceable)."""
    learner, fixed = learners
    trace = meta.run_meta(learner, params, data.train, independent_tasks=learner is fixed)
    if learner is fixed:  # one bias throughout: one meta-test, the same at every checkpoint
        error = meta.meta_test_error(fixed, params, data.unseen)
        mt = jnp.broadcast_to(error, (len(checkpoints),))
    else:
        biases = meta.bias_path(learner, params, trace)[jnp.asarray(checkpoints)]
        mt = meta.meta_test_curve(fixed, params.frozen(biases[0]), biases, data.unseen)
    return Outputs(trace.loss, trace.mask, trace.task.test_error, mt)


class Tuned(NamedTuple):
    """One seed of a tuned baseline: its grid selected in hindsight and on validation tasks."""

    hindsight: Outputs  # the run with the pair of lowest final cumulative error
    hindsight_index: Any  # () int, its index in the grid
    validation: Outputs | None  # the run with the pair of lowest validation error
    validation_index: Any


def tune_method(learners: Learners, grid: Params, data: SeedData, checkpoints: Any) -> Tuned:
    """One seed of a tuned baseline: every pair of `grid` (one vmap), then the selected pairs'
    runs (traceable). A diverging pair (non-finite score) is never selected."""
    learner, fixed = learners
    scores = jax.vmap(lambda p: meta.grid_score(learner, fixed, p, data.train, data.validation))(
        grid
    )

    def best(values):
        return jnp.argmin(jnp.where(jnp.isfinite(values), values, jnp.inf))

    indices = [best(scores.cumulative)]
    if data.validation is not None:
        indices.append(best(scores.validation))
    picked = jax.tree.map(lambda a: a[jnp.stack(indices)], grid)
    out = jax.vmap(lambda p: run_method(learners, p, data, checkpoints))(picked)
    first = jax.tree.map(lambda a: a[0], out)
    if data.validation is None:
        return Tuned(first, indices[0], None, None)
    return Tuned(first, indices[0], jax.tree.map(lambda a: a[1], out), indices[1])


__all__ = [
    "BEST_BIAS",
    "Learners",
    "Outputs",
    "PF_METHODS",
    "SS_METHODS",
    "SeedData",
    "Setting",
    "SyntheticSize",
    "Tuned",
    "checkpoints",
    "method_learners",
    "method_params",
    "real_setting",
    "run_method",
    "step_grid",
    "synthetic_data",
    "synthetic_setting",
    "tune_method",
]
