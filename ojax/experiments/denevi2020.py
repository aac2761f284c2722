"""Denevi, Stamos & Pontil (2020): parameter-free learning of multiple low-variance tasks.

Experiments (`ojax run NAME`):

* `denevi2020-synthetic`: the main figure, on the synthetic low-variance environment;
* `denevi2020-wealth`: the same with the initial wealths swept over a log grid;
* `denevi2020-schools` and `denevi2020-lenk`: the real datasets of Appendix E.

Methods: `ITL` and `Oracle` (the within-task learner with bias 0 and with the true task mean),
`Aggressive` / `Lazy` (ONS bettors, the paper's refined variant), `Aggressive_KT` /
`Lazy_KT` (KT bettors), and the tuned OGD baselines `Aggressive_SS` / `Lazy_SS` whose
20 x 20 step grid runs as one vmap and is selected in hindsight on the final cumulative error (as
the authors do); the honest selection on validation tasks is reported in `config.json`. ITL and
the Oracle use the ONS bettor.

Metrics: `cumulative_error` (running mean of the online errors over all points),
`test_error` (running mean over tasks of each task's test error of its averaged iterate) and
`meta_test_error` (the within-task learner started from the bias learned after `t` training
tasks, on unseen tasks, as a curve over `t`). On the real datasets the unseen tasks are the
last 20% of each seed's shuffled tasks and the curve stops before them; the other two metrics use
all tasks, as the authors do.

Every seed is one cell of :func:`ojax.sweep.sweep_experiment`, over the explicit seeds
`0 .. S - 1` (the engine's seed axis; seed `s` runs with the key `jax.random.key(s)`, so a
seed's numbers do not depend on how many seeds run): the cell draws that seed's tasks from its
key, runs the method with :func:`ojax.meta.run_meta` and measures it, so no seed's data exist
outside its cell and `--seeds` is bounded by time, not memory. A tuned baseline's cell
evaluates the whole step grid (one vmap), selects in hindsight and on validation tasks, and runs
the selected steps.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ojax import meta
from ojax.core import Params
from ojax.datasets import multitask as mt_data
from ojax.datasets.npz import read_arrays
from ojax.experiments.denevi2020_methods import (  # noqa: F401 (re-exported)
    BEST_BIAS,
    PF_METHODS,
    SS_METHODS,
    Learners,
    Outputs,
    SeedData,
    Setting,
    SyntheticSize,
    Tuned,
    method_learners,
    method_params,
    real_setting,
    run_method,
    step_grid,
    synthetic_data,
    synthetic_setting,
    tune_method,
)
from ojax.results import ExperimentResult, split_key
from ojax.sweep import check_output_memory, stacked, sweep_experiment
from ojax.sweep.experiment import ExperimentConfig, ExperimentSpec, option
from ojax.validation import InputError

METRICS = ("cumulative_error", "test_error", "meta_test_error")
# LLVM optimisation level 1 compiles these scans 2-3x faster than the default with the same run
# time (measured on CPU); compilation dominates a cold run of the main job. A level that XLA_FLAGS
# sets holds instead (ojax.programs.compiler_options).
COMPILER_OPTIONS = {"xla_backend_optimization_level": 1}


QUICK_SYNTHETIC = SyntheticSize(num_tasks=80, num_validation=10, num_test=20, num_checkpoints=9)


# ----------------------------------------------------------------------------------------------
# the sweeps: one cell per seed


@functools.lru_cache(maxsize=64)
def _run_cell(learners: Learners, draw: Callable, checkpoints: tuple[int, ...]):
    """`(grid, params, key) -> Outputs` (one function per learner: compiled once); the
    params are the grid point's when the sweep has a grid (`denevi2020-wealth`), else the
    shared data's."""
    points = np.asarray(checkpoints, np.int32)

    def cell(grid, params, key):
        return run_method(learners, params if grid is None else grid, draw(key), points)

    return cell


@functools.lru_cache(maxsize=64)
def _best_bias_cell(learners: Learners, draw: Callable, checkpoints: tuple[int, ...]):
    """`(grid, params, key) -> Outputs` of `Best-bias`: `params` (ITL's, or the grid
    point's) around the best bias in hindsight of the seed's training tasks
    (`meta.best_bias_in_hindsight`)."""
    points = np.asarray(checkpoints, np.int32)

    def cell(grid, params, key):
        params = params if grid is None else grid
        data = draw(key)
        bias = meta.best_bias_in_hindsight(data.train).astype(params.bias.dtype)
        return run_method(learners, params._replace(bias=bias), data, points)

    return cell


@functools.lru_cache(maxsize=64)
def _tune_cell(
    learners: Learners, draw: Callable, checkpoints: tuple[int, ...], grid_size: int, dtype
):
    """`(_, _, key) -> Tuned` of a tuned baseline over its `grid_size^2` step grid."""
    points = np.asarray(checkpoints, np.int32)
    grid = meta.MetaParams.step_grid(grid_size, dtype=dtype)

    def cell(_, __, key):
        return tune_method(learners, grid, draw(key), points)

    return cell


def _sweep(config: ExperimentConfig, cell, setting: Setting, name: str, data=None, grid=None):
    """The cell over the seeds `0 .. S - 1` (the engine's seed axis, seed `s` with the key
    `jax.random.key(s)`) and the `grid` axis if given; returns the outputs `(S, ...)` (`(S, G,
    ...)` with a grid) and the compile seconds. A grid runs one point's `S` seeds per chunk
    unless the run sets `--memory-budget`: one chunk of every point x seed held about 1 GiB of
    temporaries at full size (denevi2020-wealth), and a chunk of `S` computes what one sweep
    per point did, to the float32 bit."""
    chunk = setting.num_seeds if grid is not None and config.memory_budget is None else None
    result = sweep_experiment(
        config,
        cell,
        grid,
        seeds=np.arange(setting.num_seeds),
        data=data,
        name=name,
        chunk_size=chunk,
        compiler_options=COMPILER_OPTIONS,
    )
    return result.outputs, result.stats.compile_seconds


CURVE_BYTES = 2**26
"""The float64 bytes a method's cumulative-error curves may take: longer curves (many seeds x
many points, e.g. ``--seeds 10000``) are kept at evenly spaced points (:func:`curve_points`)."""


def curve_points(num_points: int, num_seeds: int) -> np.ndarray | None:
    """The 1-based points at which the cumulative error curve is kept: `None` (every point)
    while `num_seeds x num_points` float64 values fit in :data:`CURVE_BYTES`, else evenly
    spaced points, the first and the last included (the final values do not change)."""
    keep = max(2, CURVE_BYTES // (8 * max(1, num_seeds)))
    if num_points <= keep:
        return None
    return np.unique(np.round(np.linspace(1, num_points, keep)).astype(np.int64))


def curves_of(out: Outputs) -> dict[str, np.ndarray]:
    """The three curves of every seed (`out` has leading seed axes)."""
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
        finals = {k: v[:, -1] for k, v in curves_of(tuned.validation).items()}
        info.update(
            inner_step_validation=honest["inner"],
            meta_step_validation=honest["meta"],
            validation_selected={
                k: {"mean": float(v.mean()), "std": float(v.std())} for k, v in finals.items()
            },
        )
    return info


def _drawn_train_shape(setting: Setting) -> tuple[int, int]:
    """`(tasks, slots)` of a seed's training block, from a trace of the setting's draw."""
    shapes = jax.eval_shape(lambda: setting.draw(jax.random.key(0))).train
    return shapes.x_train.shape[:2]


def _check_memory(setting: Setting, num_methods: int, num_checkpoints: int) -> None:
    """Every seed's per-point errors of every method stay on the host until the figures are
    drawn: exit early, naming the memory, when they cannot fit (`--seeds 100000`). The sizes
    of a seed's training block: the setting's `train_shape`, else a trace of its draw."""
    tasks, points = setting.train_shape or _drawn_train_shape(setting)
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
    wealths: Sequence[float] | None = None,
    grid_size: int = 20,
    counter: str = "global",
    progress: Callable = lambda it: it,
) -> tuple[dict[str, dict[str, np.ndarray]], dict[str, Any], float]:
    """Runs `methods` on every seed of a setting.

    With `wealths` (parameter-free methods only), each method runs once over the engine's
    grid axis `initial_wealth` (inner = meta wealth) instead of `inner_wealth` /
    `meta_wealth`, and its curves are named `METHOD@wealth=VALUE`, wealth by wealth.

    Returns:
      `(curves, extra, compile_seconds)` with `curves[method][metric]` of shape
      `(S, length)` and, per tuned method, its selected steps in `extra`.
    """
    checkpoints = tuple(int(c) for c in setting.checkpoints)
    grid_points = 1 if wealths is None else len(wealths)
    if wealths is not None and set(methods) & set(SS_METHODS):
        raise InputError(f"methods: {sorted(set(methods) & set(SS_METHODS))} take no wealth")
    _check_memory(setting, len(methods) * grid_points, len(checkpoints))

    def one(name: str) -> tuple[dict[str, Any], dict[str, Any], float]:  # curves, extra, compile
        learners = method_learners("ITL" if name == BEST_BIAS else name, setting.dim, counter)
        label = f"{setting.dataset}-{name}" + ("" if counter == "global" else f"-{counter}")
        if name in SS_METHODS:
            cell = _tune_cell(learners, setting.draw, checkpoints, grid_size, setting.dtype)
            tuned, seconds = _sweep(config, cell, setting, label)
            grid = meta.MetaParams.step_grid(grid_size, dtype=setting.dtype)
            return {name: curves_of(tuned.hindsight)}, {name: _tuned_info(tuned, grid)}, seconds
        of = ("ITL" if name == BEST_BIAS else name), setting.dim, setting.dtype  # the params'
        make = _best_bias_cell if name == BEST_BIAS else _run_cell
        cell = make(learners, setting.draw, checkpoints)
        if wealths is None:
            params = method_params(*of, inner_wealth, meta_wealth, setting.oracle_bias)
            out, seconds = _sweep(config, cell, setting, label, data=params)
            return {name: curves_of(out)}, {}, seconds
        each = [method_params(*of, w, w, setting.oracle_bias) for w in wealths]
        axis = stacked(jax.tree.map(lambda *xs: jnp.stack(xs), *each), "initial_wealth")
        out, seconds = _sweep(config, cell, setting, label, grid=axis)
        at = {w: jax.tree.map(lambda a, i=i: a[:, i], out) for i, w in enumerate(wealths)}
        return {f"{name}@wealth={w:g}": curves_of(o) for w, o in at.items()}, {}, seconds

    curves, extra, compile_seconds = {}, {}, 0.0
    longest_first = sorted(methods, key=lambda name: name not in SS_METHODS)
    for found, tuned, seconds in progress(config.sweeps(one, longest_first)):
        curves.update(found)
        extra.update(tuned)
        compile_seconds += seconds
    if wealths is None:
        curves = {name: curves[name] for name in methods}
    else:  # wealth by wealth, as the figures and tables list them
        order = [f"{name}@wealth={w:g}" for w in wealths for name in methods]
        curves = {key: curves[key] for key in order}
    return curves, extra, compile_seconds


# ----------------------------------------------------------------------------------------------
# the experiments


PANELS = {  # metric -> (x label, y label)
    "cumulative_error": ("iterations (points seen)", "average online absolute error so far"),
    "test_error": ("number of tasks", "test absolute error"),
    "meta_test_error": ("number of training tasks", "meta-test error on unseen tasks"),
}


def figures(run) -> dict[str, Any]:
    """The plot function of `denevi2020-synthetic`, `-schools` and `-lenk`
    (:mod:`ojax.app.files`): per dataset and metric, every method's curve (mean and
    10-90% band over seeds) against its positions, `DATASET_METRIC`."""
    from ojax.plotting import curves_figure, display_name

    out = {}
    datasets = dict.fromkeys(split_key(key)[0] for key in run.curves)
    for dataset in datasets:
        for metric, (xlabel, ylabel) in PANELS.items():
            found = {
                split_key(key)[1]: curve
                for key, curve in run.curves.items()
                if key.startswith(f"{dataset}/") and key.endswith(f"/{metric}")
            }
            if not found:
                continue
            x = next(iter(found.values())).steps
            out[f"{dataset}_{metric}"] = curves_figure(
                x,
                {display_name(m): c.values for m, c in found.items()},
                xlabel=xlabel,
                ylabel=ylabel,
                fit_from=len(x) // 20,  # past the first points, where the averages start high
            )
    return out


def _dtype(config: ExperimentConfig):
    return jnp.float64 if config.x64 else jnp.float32


def _finish(
    result: ExperimentResult, setting: Setting, curves, extra, compile_s, start: float
) -> ExperimentResult:
    dataset = setting.dataset
    points = curve_points(setting.num_points, setting.num_seeds)
    if points is not None:  # many seeds: the curves were kept at these points only
        result.extra_config[f"{dataset}_cumulative_error_points"] = points.tolist()
    positions = {"cumulative_error": points, "meta_test_error": np.asarray(setting.checkpoints)}
    for method, metrics in curves.items():
        for metric in METRICS:
            result.add(dataset, method, metric, metrics[metric], steps=positions.get(metric))
    result.extra_config.update(
        {
            f"{dataset}_tuned_steps": extra,
            f"{dataset}_meta_test_checkpoints": np.asarray(setting.checkpoints).tolist(),
            f"{dataset}_run_seconds": time.perf_counter() - start - compile_s,
        }
    )
    result.compile_seconds = (result.compile_seconds or 0.0) + compile_s
    return result


@dataclasses.dataclass(frozen=True)
class DeneviConfig(ExperimentConfig):
    """The options of the `denevi2020-*` experiments."""

    tasks: Path | None = option(
        help="your own tasks (.npz: x, y, task[, num_test]) instead of the experiment's tasks, "
        "run with the real-data protocol, without the Oracle (no true mean) and with Best-bias "
        "(see ojax.datasets.load_tasks_file)",
        metavar="FILE",
        file=True,
    )

    def check(self, seeds_given: bool = True) -> tuple[ExperimentConfig, dict[str, Any]]:
        if self.tasks is not None:  # read in the run's dtype: a file that cannot run is refused
            mt_data.load_tasks_file(self.tasks, np.float64 if self.x64 else np.float32)
        return super().check(seeds_given)

    def reads_data_files(self) -> bool:
        return self.tasks is None

    def header(self) -> str:
        if self.tasks is None:
            return super().header()
        count = len(np.unique(read_arrays(self.tasks, ["task"])["task"]))  # checked at check()
        return f"{super().header()} of your {count} tasks in {Path(self.tasks).name} ({NO_ORACLE})"


NO_ORACLE = "no Oracle: your tasks have no true mean; Best-bias: the best bias in hindsight"


def _tasks(config: DeneviConfig, loader) -> mt_data.PooledTasks:
    data = loader(config.data_dir, np.float64 if config.x64 else np.float32)
    if config.quick:  # a few tasks only
        keep = 30
        data = mt_data.PooledTasks(
            data.x[:keep], data.y[:keep], data.mask[:keep], data.num_test[:keep]
        )
    return data


def _own_loader(config: DeneviConfig):
    def loader(data_dir, dtype):
        return mt_data.load_tasks_file(config.tasks, dtype)

    return loader


def _real_methods(own: bool, methods: list[str]) -> list[str]:
    """`methods` without the Oracle (a real dataset has no true mean), with Best-bias on
    one's own tasks."""
    kept = [m for m in methods if m != "Oracle"]
    return (
        [*kept[: kept.index("ITL") + 1], BEST_BIAS, *kept[kept.index("ITL") + 1 :]] if own else kept
    )


def run_synthetic(config: DeneviConfig) -> ExperimentResult:
    """`denevi2020-synthetic`: all eight methods on the low-variance environment (with
    `--tasks FILE`: the real-data protocol on one's own tasks)."""
    if config.tasks is not None:
        return run_own_tasks(config)
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
    return _finish(result, setting, curves, extra, compile_s, start)


WEALTH_GRID = 10.0 ** np.arange(-3.0, 4.0)


def run_wealth(config: DeneviConfig) -> ExperimentResult:
    """`denevi2020-wealth`: the parameter-free methods with initial wealths on a log grid
    (with `--tasks FILE`: on one's own tasks, without the Oracle, with Best-bias).

    The same initial wealth is used for the inner and the meta bettors; method names carry the
    suffix `@wealth=VALUE`. The wealth is the engine's grid axis `initial_wealth`: one
    sweep (one compiled program) per method covers every wealth and seed.
    """
    start = time.perf_counter()
    size = QUICK_SYNTHETIC if config.quick else SyntheticSize()
    wealths = WEALTH_GRID[::3] if config.quick else WEALTH_GRID
    methods, own = list(PF_METHODS), config.tasks is not None
    if config.tasks is not None:
        name, methods = Path(config.tasks).stem, _real_methods(True, methods)
        setting = real_setting(
            _tasks(config, _own_loader(config)), name, config.seeds, _dtype(config)
        )
    else:
        setting = synthetic_setting(config.seeds, size, _dtype(config))
    curves, _, compile_s = run_methods(
        config,
        setting,
        methods,
        wealths=[float(w) for w in wealths],
        progress=lambda it: config.progress(it, "denevi2020-wealth methods"),
    )
    result = ExperimentResult()
    result.extra_config.update(
        {
            "seeds_run": config.seeds,
            "wealth_grid": [float(w) for w in wealths],
            **({"tasks_run": _tasks_run(setting), "oracle": NO_ORACLE} if own else {}),
            **({} if own else {"synthetic_size": size._asdict()}),
        }
    )
    return _finish(result, setting, curves, {}, compile_s, start)


def wealth_figures(run) -> dict[str, Any]:
    """The plot function of `denevi2020-wealth`: the panels of :func:`figures` and
    `DATASET_wealth_sensitivity`, each method's final cumulative error against the initial
    wealth (`config.json`'s `wealth_grid`)."""
    from ojax.plotting import band, display_name, legend, new_figure, style

    out = figures(run)
    wealths = np.asarray(run.config["wealth_grid"], np.float64)
    dataset = split_key(next(iter(run.curves)))[0]  # synthetic, or one's own tasks' name
    fig, ax = new_figure()
    for i, method in enumerate(PF_METHODS):
        keys = [f"{dataset}/{method}@wealth={w:g}/cumulative_error" for w in wealths]
        if not all(k in run.curves for k in keys):
            continue
        finals = np.stack([run.curves[k].values[:, -1] for k in keys], axis=1)
        band(ax, wealths, finals, display_name(method), **style(i, every=None))
    ax.set(
        xscale="log",
        xlabel="initial wealth (inner = meta)",
        ylabel="final average online error",
    )
    ax.grid(alpha=0.3)
    legend(fig, ax)
    out[f"{dataset}_wealth_sensitivity"] = fig
    return out


def _final_stats(curves) -> dict[str, Any]:
    return {
        m: {k: {"mean": float(v[:, -1].mean()), "std": float(v[:, -1].std())} for k, v in c.items()}
        for m, c in curves.items()
    }


def _tasks_run(setting: Setting) -> dict[str, Any]:
    return {"dataset": setting.dataset, "seeds": setting.num_seeds, "dim": setting.dim}


def _run_real(config: DeneviConfig, dataset: str, loader) -> ExperimentResult:
    start = time.perf_counter()
    own = config.tasks is not None
    data = _tasks(config, loader)
    setting = real_setting(data, dataset, config.seeds, _dtype(config))
    methods = _real_methods(own, list(PF_METHODS) + list(SS_METHODS))
    curves, extra, compile_s = run_methods(
        config, setting, methods, progress=lambda it: config.progress(it, f"{dataset} methods")
    )
    result = ExperimentResult()
    if dataset == "schools" and not own:  # the authors' counter (t - 1) n_t + i (their code)
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
            **({"tasks_run": _tasks_run(setting), "oracle": NO_ORACLE} if own else {}),
        }
    )
    return _finish(result, setting, curves, extra, compile_s, start)


def run_own_tasks(config: DeneviConfig) -> ExperimentResult:
    """The real-data protocol on one's own tasks file (`config.tasks`, the `.npz` layout of
    :func:`ojax.datasets.load_tasks_file`): the methods without the Oracle, with Best-bias."""
    name = Path(config.tasks).stem  # type: ignore[arg-type]
    return _run_real(config, name, _own_loader(config))


def run_schools(config: DeneviConfig) -> ExperimentResult:
    """`denevi2020-schools`: Schools (139 tasks of 22 to 251 students), without the Oracle
    (with `--tasks FILE`: the same protocol on one's own tasks, see :func:`run_own_tasks`)."""
    if config.tasks is not None:
        return run_own_tasks(config)
    return _run_real(config, "schools", mt_data.load_schools)


def run_lenk(config: DeneviConfig) -> ExperimentResult:
    """`denevi2020-lenk`: Lenk (180 people x 20 computers), without the Oracle (with
    `--tasks FILE`: the same protocol on one's own tasks)."""
    if config.tasks is not None:
        return run_own_tasks(config)
    return _run_real(config, "lenk", mt_data.load_lenk)


def _spec(name: str, summary: str, run, quick_seeds: int, **fields) -> ExperimentSpec:
    fields.setdefault("plot", figures)
    return ExperimentSpec(
        name=name,
        summary=f"Denevi et al. 2020, {summary}",
        run=run,
        config=DeneviConfig,
        default_seeds=30,
        quick_seeds=quick_seeds,
        page="reproductions/denevi2020.md",
        **fields,
    )


FIGURES = tuple(f"{{dataset}}_{metric}.png" for metric in METRICS)
SYNTHETIC = _spec(
    "denevi2020-synthetic",
    "main figure: parameter-free multi-task learning of low-variance tasks on the synthetic "
    "environment",
    run_synthetic,
    4,
    figures=FIGURES,
)
WEALTH = _spec(
    "denevi2020-wealth",
    "appendix E: sensitivity to the initial wealth (one vmap over a log grid)",
    run_wealth,
    3,
    figures=(*FIGURES, "{dataset}_wealth_sensitivity.png"),
    plot=wealth_figures,
)
SCHOOLS = _spec(
    "denevi2020-schools",
    "appendix E: the Schools dataset (139 tasks)",
    run_schools,
    3,
    data_files=("schools.mat",),
    figures=FIGURES,
)
LENK = _spec(
    "denevi2020-lenk",
    "appendix E: the Lenk computer-survey dataset (180 tasks)",
    run_lenk,
    3,
    data_files=("lenk.mat",),
    figures=FIGURES,
)


__all__ = [
    "COMPILER_OPTIONS",
    "CURVE_BYTES",
    "DeneviConfig",
    "FIGURES",
    "LENK",
    "METRICS",
    "NO_ORACLE",
    "PANELS",
    "QUICK_SYNTHETIC",
    "SCHOOLS",
    "SYNTHETIC",
    "WEALTH",
    "WEALTH_GRID",
    "curve_points",
    "curves_of",
    "figures",
    "run_lenk",
    "run_methods",
    "run_own_tasks",
    "run_schools",
    "run_synthetic",
    "run_wealth",
    "wealth_figures",
]
