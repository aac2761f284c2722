"""Denevi, Stamos & Pontil (2020): parameter-free learning of multiple low-variance tasks.

Experiments (``ojax run NAME``):

* ``denevi2020-synthetic``: the main figure, on the synthetic low-variance environment;
* ``denevi2020-wealth``: the same with the initial wealths swept over a log grid;
* ``denevi2020-schools`` and ``denevi2020-lenk``: the real datasets of Appendix E.

Methods: ``ITL`` and ``Oracle`` (the within-task learner with bias 0 and with the true task mean),
``Aggressive`` / ``Lazy`` (ONS bettors, the paper's refined variant), ``Aggressive_KT`` /
``Lazy_KT`` (KT bettors), and the tuned OGD baselines ``Aggressive_SS`` / ``Lazy_SS`` whose
20 x 20 step grid runs as one vmap and is selected in hindsight on the final cumulative error (as
the authors do); the honest selection on validation tasks is reported in ``config.json``. ITL and
the Oracle use the ONS bettor.

Metrics: ``cumulative_error`` (running mean of the online errors over all points),
``test_error`` (running mean over tasks of each task's test error of its averaged iterate) and
``meta_test_error`` (the within-task learner started from the bias learned after ``t`` training
tasks, on unseen tasks, as a curve over ``t``). On the real datasets the unseen tasks are the
last 20% of each seed's shuffled tasks and the curve stops before them; the other two metrics use
all tasks, as the authors do.

Every seed is one cell of :func:`ojax.sweep.sweep_experiment`: the cell draws that seed's tasks
(seed ``s`` from ``jax.random.key(s)``), runs the method with :func:`ojax.meta.run_meta` and
measures it, so no seed's data exist outside its cell and ``--seeds`` is bounded by time, not
memory. The sweep's seed axis has length 1 and the seed numbers are its task axis, which keeps
the draws of ``jax.random.key(s)``. A tuned baseline's cell evaluates the whole step grid (one
vmap), selects in hindsight and on validation tasks, and runs the selected steps.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ojax import meta
from ojax.core import MultiTaskLearner, Params
from ojax.datasets import multitask as mt_data
from ojax.envs import multitask as mt_env
from ojax.experiments.output import ExperimentConfig, ExperimentResult
from ojax.parameter_free import direction_magnitude
from ojax.sweep import check_output_memory, sweep_experiment
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
METRICS = ("cumulative_error", "test_error", "meta_test_error")
# LLVM optimisation level 1 compiles these scans 2-3x faster than the default with the same run
# time (measured on CPU); compilation dominates a cold run of the main job.
COMPILER_OPTIONS = {"xla_backend_optimization_level": 1}


def step_grid(num: int = 20) -> np.ndarray:
    """The authors' step grid ``10^linspace(-6, 4, num)``."""
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
    """The paper's params of a parameter-free method (ITL: bias 0; the Oracle: ``oracle_bias``)."""
    check_choice("method", method, list(PF_METHODS))
    if method in ("ITL", "Oracle"):
        bias = jnp.zeros(dim, dtype) if method == "ITL" else jnp.asarray(oracle_bias, dtype)
        return meta.FixedBiasParams.paper(bias, inner_wealth=inner_wealth, dtype=dtype)
    return meta.MetaParams.paper(inner_wealth=inner_wealth, meta_wealth=meta_wealth, dtype=dtype)


class SeedData(NamedTuple):
    """One seed's tasks."""

    train: meta.TaskBlock  # the online stream of tasks
    validation: meta.TaskBlock | None  # for the honest selection of the _SS steps
    unseen: meta.TaskBlock  # unseen tasks of the meta-test


class Outputs(NamedTuple):
    """What one seed of one method records."""

    errors: Any  # (T, n) online errors (0 on padding)
    mask: Any  # (T, n) bool, the real points
    test_errors: Any  # (T,) test error of each task's averaged iterate
    meta_test: Any  # (C,) meta-test error of the bias after each checkpoint's number of tasks


def run_method(learners: Learners, params: Params, data: SeedData, checkpoints: Any) -> Outputs:
    """One seed of one method: the online run and the meta-test at ``checkpoints`` (traceable)."""
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
    """One seed of a tuned baseline: every pair of ``grid`` (one vmap), then the selected pairs'
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


# ----------------------------------------------------------------------------------------------
# settings: how a seed draws its tasks


class Setting(NamedTuple):
    """What one dataset's run needs."""

    dataset: str
    draw: Callable[[Any], SeedData]  # seed number -> that seed's tasks (traceable)
    num_seeds: int
    dim: int
    dtype: Any
    oracle_bias: Any  # (d,) or None (no Oracle)
    checkpoints: np.ndarray  # numbers of training tasks at which the meta-test is measured
    num_points: int = 0  # real online points of a seed's stream (0: unknown)


def _checkpoints(num_tasks: int, num: int) -> np.ndarray:
    return np.unique(np.round(np.linspace(0, num_tasks, min(num, num_tasks + 1))).astype(int))


class SyntheticSize(NamedTuple):
    num_tasks: int = 400
    num_validation: int = 20
    num_test: int = 50
    num_points: int = 50
    num_train: int = 25
    dim: int = 10
    num_checkpoints: int = 41


QUICK_SYNTHETIC = SyntheticSize(num_tasks=80, num_validation=10, num_test=20, num_checkpoints=9)


def synthetic_data(
    seed: Any, size: SyntheticSize, dtype, params: mt_env.LowVarianceParams | None = None
) -> SeedData:
    """Seed ``seed``'s synthetic tasks, drawn from ``jax.random.key(seed)`` (traceable)."""
    params = params or mt_env.default_low_variance_params(dtype)
    split = mt_env.synthetic_split(
        jax.random.key(seed),
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
    """The synthetic environment (seed ``s`` draws from ``jax.random.key(s)``)."""
    params = params or mt_env.default_low_variance_params(dtype)
    oracle = jnp.full((size.dim,), params.task_mean, dtype)
    return Setting(
        "synthetic",
        functools.partial(synthetic_data, size=size, dtype=dtype, params=params),
        num_seeds,
        size.dim,
        dtype,
        oracle,
        _checkpoints(size.num_tasks, size.num_checkpoints),
        size.num_tasks * size.num_train,
    )


def real_setting(
    data: mt_data.PooledTasks,
    dataset: str,
    num_seeds: int,
    dtype,
    heldout_fraction: float = 0.2,
    num_checkpoints: int = 21,
) -> Setting:
    """Tasks of a real dataset (seed ``s``: ``jax.random.key(s)`` shuffles the task order and
    splits each task).

    All tasks form the training stream (the authors' protocol). The last ``heldout_fraction`` of
    each seed's shuffled tasks also serve as the unseen tasks of the meta-test, measured only
    for biases learned before any of them arrived (checkpoints ``t <= T - H``): the learners are
    online, so this equals training on the first ``T - H`` tasks alone.
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

    def draw(seed):
        blocks = mt_data.split_tasks_core(jax.random.key(seed), *arrays, width)
        return SeedData(blocks, None, meta.task_slice(blocks, seen, num_tasks))

    checkpoints = _checkpoints(seen, num_checkpoints)
    points = int(np.sum(data.mask) - np.sum(data.num_test))  # every seed's training points
    return Setting(dataset, draw, num_seeds, data.x.shape[-1], dtype, None, checkpoints, points)


# ----------------------------------------------------------------------------------------------
# the sweeps: one cell per seed


@functools.lru_cache(maxsize=64)
def _run_cell(learners: Learners, draw: Callable, checkpoints: tuple[int, ...]):
    """``(_, (seed, params), key) -> Outputs`` (one function per learner: compiled once)."""
    points = np.asarray(checkpoints, np.int32)

    def cell(_, task, key):
        seed, params = task
        return run_method(learners, params, draw(seed), points)

    return cell


@functools.lru_cache(maxsize=64)
def _tune_cell(
    learners: Learners, draw: Callable, checkpoints: tuple[int, ...], grid_size: int, dtype
):
    """``(_, seed, key) -> Tuned`` of a tuned baseline over its ``grid_size^2`` step grid."""
    points = np.asarray(checkpoints, np.int32)
    grid = meta.MetaParams.step_grid(grid_size, dtype=dtype)

    def cell(_, seed, key):
        return tune_method(learners, grid, draw(seed), points)

    return cell


def _sweep(config: ExperimentConfig, cell, tasks, name: str) -> tuple[Any, float]:
    """The cell over every seed (the seed numbers ride on the sweep's task axis); returns the
    outputs with a leading seed axis and the compile seconds."""
    result = sweep_experiment(
        config,
        cell,
        key=0,
        tasks=tasks,
        num_seeds=1,
        name=name,
        compiler_options=COMPILER_OPTIONS,
    )
    return jax.tree.map(lambda a: a[0], result.outputs), result.stats.compile_seconds


def _seeds(setting: Setting):
    return jnp.arange(setting.num_seeds, dtype=jnp.int32)


CURVE_BYTES = 2**26
"""The float64 bytes a method's cumulative-error curves may take: longer curves (many seeds x
many points, e.g. ``--seeds 10000``) are kept at evenly spaced points (:func:`curve_points`)."""


def curve_points(num_points: int, num_seeds: int) -> np.ndarray | None:
    """The 1-based points at which the cumulative error curve is kept: ``None`` (every point)
    while ``num_seeds x num_points`` float64 values fit in :data:`CURVE_BYTES`, else evenly
    spaced points, the first and the last included (the final values do not change)."""
    keep = max(2, CURVE_BYTES // (8 * max(1, num_seeds)))
    if num_points <= keep:
        return None
    return np.unique(np.round(np.linspace(1, num_points, keep)).astype(np.int64))


def _curves(out: Outputs) -> dict[str, np.ndarray]:
    """The three curves of every seed (``out`` has leading seed axes)."""
    seeds = math.prod(out.errors.shape[:-2])
    points = curve_points(int(np.sum(out.mask[(0,) * (out.mask.ndim - 2)])), seeds)
    return {
        "cumulative_error": meta.cumulative_error(out.errors, out.mask, points),
        "test_error": meta.test_error_curve(out.test_errors),
        "meta_test_error": np.asarray(out.meta_test),
    }


def _tuned_info(tuned: Tuned, grid: Params) -> dict[str, Any]:
    def steps(index):
        return {
            "inner": np.asarray(grid.within.learning_rate)[np.asarray(index)].tolist(),
            "meta": np.asarray(grid.meta.learning_rate)[np.asarray(index)].tolist(),
        }

    chosen = steps(tuned.hindsight_index)
    info = {"inner_step_hindsight": chosen["inner"], "meta_step_hindsight": chosen["meta"]}
    if tuned.validation is not None:
        honest = steps(tuned.validation_index)
        finals = {k: v[:, -1] for k, v in _curves(tuned.validation).items()}
        info.update(
            inner_step_validation=honest["inner"],
            meta_step_validation=honest["meta"],
            validation_selected={
                k: {"mean": float(v.mean()), "std": float(v.std())} for k, v in finals.items()
            },
        )
    return info


def _check_memory(setting: Setting, num_methods: int, num_checkpoints: int) -> None:
    """Every seed's per-point errors of every method stay on the host until the figures are
    drawn: exit early, naming the memory, when they cannot fit (``--seeds 100000``)."""
    shapes = jax.eval_shape(setting.draw, 0).train
    tasks, points = shapes.x_train.shape[:2]
    itemsize = np.dtype(setting.dtype).itemsize
    # errors and mask (the sweep's outputs) and the curve derived from them, per seed and method
    per_seed = tasks * points * (2 * itemsize + 1) + (tasks + num_checkpoints) * itemsize
    check_output_memory(setting.num_seeds, per_seed * num_methods)


def run_methods(
    config: ExperimentConfig,
    setting: Setting,
    methods: list[str],
    *,
    inner_wealth: float = 1.0,
    meta_wealth: float = 1.0,
    grid_size: int = 20,
    counter: str = "global",
    progress: Callable = lambda it: it,
) -> tuple[dict[str, dict[str, np.ndarray]], dict[str, Any], float]:
    """Runs ``methods`` on every seed of a setting.

    Returns:
      ``(curves, extra, compile_seconds)`` with ``curves[method][metric]`` of shape
      ``(S, length)`` and, per tuned method, its selected steps in ``extra``.
    """
    checkpoints = tuple(int(c) for c in setting.checkpoints)
    _check_memory(setting, len(methods), len(checkpoints))
    curves, extra, compile_seconds = {}, {}, 0.0
    for name in progress(methods):
        learners = method_learners(name, setting.dim, counter)
        label = f"{setting.dataset}-{name}" + ("" if counter == "global" else f"-{counter}")
        if name in SS_METHODS:
            cell = _tune_cell(learners, setting.draw, checkpoints, grid_size, setting.dtype)
            tuned, seconds = _sweep(config, cell, _seeds(setting), label)
            grid = meta.MetaParams.step_grid(grid_size, dtype=setting.dtype)
            extra[name] = _tuned_info(tuned, grid)
            out = tuned.hindsight
        else:
            params = method_params(
                name, setting.dim, setting.dtype, inner_wealth, meta_wealth, setting.oracle_bias
            )
            by_seed = jax.tree.map(
                lambda a: jnp.broadcast_to(a, (setting.num_seeds, *jnp.shape(a))), params
            )
            cell = _run_cell(learners, setting.draw, checkpoints)
            out, seconds = _sweep(config, cell, (_seeds(setting), by_seed), label)
        compile_seconds += seconds
        curves[name] = _curves(out)
    return curves, extra, compile_seconds


# ----------------------------------------------------------------------------------------------
# the experiments


def _figures(
    dataset: str, curves, checkpoints, title: str, setting_text: str, points: Any = None
) -> dict[str, Any]:
    from ojax.plotting import curves_figure

    some = next(iter(curves.values()))
    n, t = some["cumulative_error"].shape[1], some["test_error"].shape[1]
    points = np.arange(1, n + 1) if points is None else points
    err, unseen = "test absolute error", "meta-test error on unseen tasks"
    panels = [
        (
            "cumulative_error",  # the metric's name (docs/cli.md): a running mean, not a sum
            points,
            "running average of the online errors",
            "iterations (points seen)",
            "average online absolute error so far",
        ),
        ("test_error", np.arange(1, t + 1), "multi-task test error", "number of tasks", err),
        ("meta_test_error", np.asarray(checkpoints), unseen, "number of training tasks", err),
    ]
    return {
        f"{dataset}_{metric}.png": curves_figure(
            x,
            {m: c[metric] for m, c in curves.items()},
            title=f"{title}\n{what} ({setting_text})",
            xlabel=xlabel,
            ylabel=ylabel,
            fit_from=len(x) // 20,  # past the first points, where the averages start high
        )
        for metric, x, what, xlabel, ylabel in panels
    }


def _dtype(config: ExperimentConfig):
    return jnp.float64 if config.x64 else jnp.float32


def _finish(
    result: ExperimentResult, setting: Setting, curves, extra, compile_s, title, start: float
) -> ExperimentResult:
    dataset = setting.dataset
    for method, metrics in curves.items():
        for metric in METRICS:
            result.add(dataset, method, metric, metrics[metric])
    text = f"{setting.num_seeds} seeds, d={setting.dim}"
    points = curve_points(setting.num_points, setting.num_seeds)
    if points is not None:  # many seeds: the curves were kept at these points only
        result.extra_config[f"{dataset}_cumulative_error_points"] = points.tolist()
    result.figures.update(_figures(dataset, curves, setting.checkpoints, title, text, points))
    result.extra_config.update(
        {
            f"{dataset}_tuned_steps": extra,
            f"{dataset}_meta_test_checkpoints": np.asarray(setting.checkpoints).tolist(),
            f"{dataset}_run_seconds": time.perf_counter() - start - compile_s,
        }
    )
    result.compile_seconds = (result.compile_seconds or 0.0) + compile_s
    return result


def run_synthetic(config: ExperimentConfig) -> ExperimentResult:
    """``denevi2020-synthetic``: all eight methods on the low-variance environment."""
    start = time.perf_counter()
    size = QUICK_SYNTHETIC if config.quick else SyntheticSize()
    setting = synthetic_setting(config.seeds, size, _dtype(config))
    curves, extra, compile_s = run_methods(
        config,
        setting,
        list(PF_METHODS) + list(SS_METHODS),
        progress=lambda it: config.progress(it, "denevi2020 methods"),
    )
    result = ExperimentResult()
    result.extra_config.update(
        {
            "synthetic_size": size._asdict(),
            "seeds_run": config.seeds,
            "step_grid": step_grid().tolist(),
            "itl_oracle_bettor": "ons",
            "aggressive_counter": "global",
        }
    )
    title = "Synthetic (Denevi et al. 2020)"
    return _finish(result, setting, curves, extra, compile_s, title, start)


WEALTH_GRID = 10.0 ** np.arange(-3.0, 4.0)


def run_wealth(config: ExperimentConfig) -> ExperimentResult:
    """``denevi2020-wealth``: the parameter-free methods with initial wealths on a log grid.

    The same initial wealth is used for the inner and the meta bettors; method names carry the
    suffix ``@wealth=VALUE``. The wealth is a runtime parameter, so the grid reuses one compiled
    function per learner.
    """
    start = time.perf_counter()
    size = QUICK_SYNTHETIC if config.quick else SyntheticSize()
    wealths = WEALTH_GRID[::3] if config.quick else WEALTH_GRID
    setting = synthetic_setting(config.seeds, size, _dtype(config))
    curves, compile_s = {}, 0.0
    for wealth in config.progress(list(wealths), "initial wealth"):
        got, _, seconds = run_methods(
            config, setting, list(PF_METHODS), inner_wealth=float(wealth), meta_wealth=float(wealth)
        )
        compile_s += seconds
        for method, metrics in got.items():
            curves[f"{method}@wealth={wealth:g}"] = metrics
    result = ExperimentResult()
    result.extra_config.update(
        {
            "synthetic_size": size._asdict(),
            "seeds_run": config.seeds,
            "wealth_grid": [float(w) for w in wealths],
        }
    )
    result = _finish(result, setting, curves, {}, compile_s, "Initial wealth sweep", start)
    result.figures["synthetic_wealth_sensitivity.png"] = _wealth_figure(curves, wealths)
    return result


def _wealth_figure(curves, wealths):
    import matplotlib.pyplot as plt

    from ojax.plotting import band, legend, style

    fig, ax = plt.subplots(figsize=(6, 4))
    for i, method in enumerate(PF_METHODS):
        finals = np.stack(
            [curves[f"{method}@wealth={w:g}"]["cumulative_error"][:, -1] for w in wealths], axis=1
        )
        band(ax, wealths, finals, method, marker="o", **style(i))
    ax.set(
        xscale="log",
        xlabel="initial wealth (inner = meta)",
        ylabel="final running average of the online errors",
        title=f"Sensitivity to the initial wealth ({finals.shape[0]} seeds)\n"
        "mean and 10-90% band over seeds",
    )
    ax.grid(alpha=0.3)
    legend(fig, ax, len(PF_METHODS))
    return fig


def _final_stats(curves) -> dict[str, Any]:
    return {
        m: {k: {"mean": float(v[:, -1].mean()), "std": float(v[:, -1].std())} for k, v in c.items()}
        for m, c in curves.items()
    }


def _run_real(config: ExperimentConfig, dataset: str, loader, title: str) -> ExperimentResult:
    start = time.perf_counter()
    data = loader(config.data_dir, np.float64 if config.x64 else np.float32)
    if config.quick:  # a few tasks only
        keep = 30
        data = mt_data.PooledTasks(
            data.x[:keep], data.y[:keep], data.mask[:keep], data.num_test[:keep]
        )
    setting = real_setting(data, dataset, config.seeds, _dtype(config))
    methods = [m for m in list(PF_METHODS) + list(SS_METHODS) if m != "Oracle"]
    curves, extra, compile_s = run_methods(
        config, setting, methods, progress=lambda it: config.progress(it, f"{dataset} methods")
    )
    result = ExperimentResult()
    if dataset == "schools":  # the authors' counter (t - 1) n_t + i, to compare with their code
        authors, _, seconds = run_methods(
            config, setting, ["Aggressive", "Aggressive_KT"], counter="authors"
        )
        compile_s += seconds
        result.extra_config["authors_counter_final"] = _final_stats(authors)
    result.extra_config.update(
        {
            "dataset_shape": list(data.x.shape),
            "seeds_run": config.seeds,
            "meta_test_protocol": "the last 20% of each seed's shuffled tasks are the unseen "
            "tasks; the meta-test curve stops at the number of tasks before them",
            "aggressive_counter": "global",
        }
    )
    return _finish(result, setting, curves, extra, compile_s, title, start)


def _own_tasks(config: ExperimentConfig) -> ExperimentResult | None:
    """The real-data protocol on the user's tasks file (``config.tasks``), if one is given."""
    path = config.tasks
    if path is None:
        return None
    name = Path(path).stem

    def loader(data_dir, dtype):
        return mt_data.load_tasks_file(path, dtype)

    return _run_real(config, name, loader, f"your tasks ({name})")


def run_schools(config: ExperimentConfig) -> ExperimentResult:
    """``denevi2020-schools``: Schools (139 tasks of 22 to 251 students), without the Oracle;
    with ``--tasks FILE``, the same protocol on one's own tasks
    (:func:`ojax.datasets.load_tasks_file` gives the ``.npz`` layout)."""
    own = _own_tasks(config)
    return own if own is not None else _run_real(config, "schools", mt_data.load_schools, "Schools")


def run_lenk(config: ExperimentConfig) -> ExperimentResult:
    """``denevi2020-lenk``: Lenk (180 people x 20 computers), without the Oracle; with
    ``--tasks FILE``, the same protocol on one's own tasks."""
    own = _own_tasks(config)
    return own if own is not None else _run_real(config, "lenk", mt_data.load_lenk, "Lenk")
