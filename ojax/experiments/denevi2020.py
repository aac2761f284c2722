"""Denevi, Stamos & Pontil (2020): parameter-free learning of multiple low-variance tasks.

Experiments (``ojax run NAME``):

* ``denevi2020-synthetic``: the main figure, on the synthetic low-variance environment;
* ``denevi2020-wealth``: the same with the initial wealths swept over a log grid (one vmap);
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
tasks, on unseen tasks, as a curve over ``t``). On the real datasets the meta-test curve comes
from a second run that holds out 20% of the tasks; the other two metrics use all tasks, as the
authors do.

The heavy work is one jitted function of ``(params, tasks, unseen tasks)`` vmapped over seeds.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ojax import meta
from ojax.datasets import multitask as mt_data
from ojax.envs import multitask as mt_env
from ojax.experiments.output import ExperimentConfig, ExperimentResult
from ojax.meta.tasks import TaskBlock, task_slice
from ojax.validation import check_choice

PF_METHODS: dict[str, tuple[str, str]] = {  # name -> (kind, bettor)
    "ITL": ("itl", "ons"),
    "Oracle": ("oracle", "ons"),
    "Aggressive": ("aggressive", "ons"),
    "Lazy": ("lazy", "ons"),
    "Aggressive_KT": ("aggressive", "kt"),
    "Lazy_KT": ("lazy", "kt"),
}
SS_METHODS: dict[str, str] = {"Aggressive_SS": "aggressive", "Lazy_SS": "lazy"}
METRICS = ("cumulative_error", "test_error", "meta_test_error")


def step_grid(num: int = 20) -> np.ndarray:
    """The authors' step grid ``10^linspace(-6, 4, num)``."""
    return 10.0 ** np.linspace(-6.0, 4.0, num)


@functools.cache
def make_learner(kind: str, bettor: str, dim: int, dtype: Any, counter: str = "global"):
    """The learner of a method (cached, so repeated runs hit the compile cache)."""
    if kind in ("itl", "oracle"):
        return make_learner("fixed", bettor, dim, dtype)
    if kind == "fixed":
        return meta.biased_within_task(dim, bettor, dtype=dtype)
    if kind == "aggressive":
        return meta.aggressive(dim, bettor, dtype=dtype, counter=counter)
    if kind == "lazy":
        return meta.lazy(dim, bettor, dtype=dtype)
    if kind == "aggressive_ss":
        return meta.aggressive_ogd(dim, dtype=dtype)
    if kind == "lazy_ss":
        return meta.lazy_ogd(dim, dtype=dtype)
    kinds = ("itl", "oracle", "fixed", "aggressive", "lazy", "aggressive_ss", "lazy_ss")
    check_choice("kind", kind, kinds)
    raise AssertionError  # unreachable


class Outputs(NamedTuple):
    """Per-seed records of one method (leading axis: seeds)."""

    errors: Any  # (S, T, n) online errors
    test_errors: Any  # (S, T)
    meta_test: Any  # (S, C) or None
    final_bias: Any  # (S, d)


def _run_one(learner, params, train: TaskBlock, unseen: TaskBlock | None, checkpoints):
    """One seed: the meta-learner over the training tasks, and the meta-test at checkpoints."""
    trace = meta.run_meta_core(learner, params, train)
    mt = None
    if unseen is not None:
        mt = meta.meta_test_core(learner, params, trace.biases[checkpoints], unseen)
    return Outputs(trace.errors, trace.test_errors, mt, trace.biases[-1])


def _runs_core(learner, params, train: TaskBlock, unseen: TaskBlock | None, checkpoints):
    return jax.vmap(lambda p, t, u: _run_one(learner, p, t, u, checkpoints))(params, train, unseen)


def _grid_core(learner, grid, train: TaskBlock, validation: TaskBlock | None):
    return jax.vmap(lambda t, v: meta.grid_scores_core(learner, grid, t, v))(train, validation)


_runs = jax.jit(_runs_core, static_argnames=("learner",))
_grid = jax.jit(_grid_core, static_argnames=("learner",))


# LLVM optimisation level 1 compiles these scans 2-3x faster than the default with the same run
# time (measured on CPU); compilation dominates a cold run of the main job.
COMPILER_OPTIONS = {"xla_backend_optimization_level": 1}


def compile_fast(lowered):
    """Compiles a lowered function with :data:`COMPILER_OPTIONS` (falls back to defaults)."""
    try:
        return lowered.compile(compiler_options=COMPILER_OPTIONS)
    except Exception:  # a backend without the option
        return lowered.compile()


class Runner:
    """Runs the per-seed work of the experiment and times compilation apart.

    With an experiment configuration, every call goes through the sweep engine
    (:func:`ojax.sweep.sweep_experiment`: seeds and grid pairs are chunked to the memory budget,
    sharded over ``--devices``, stored and resumed under ``--out``); without one (benchmarks),
    the seed-batched ``jit(vmap(scan))`` is compiled ahead of time and called directly.
    """

    _cache: dict = {}

    def __init__(self, config: ExperimentConfig | None = None) -> None:
        self.config = config
        self.compile_seconds = 0.0

    def compile(self, fn, *args, **static):
        """AOT-compiles ``fn`` (a ``jax.jit`` function) for ``args``, timing the compilation."""
        start = time.perf_counter()
        compiled = compile_fast(fn.lower(*args, **static))
        self.compile_seconds += time.perf_counter() - start
        return compiled

    def __call__(self, fn, learner, *args):
        if self.config is not None:
            return self._engine(fn, learner, *args)
        leaves = jax.tree.leaves(args)
        key = (
            fn,
            learner,
            jax.tree.structure(args),
            tuple((leaf.shape, str(leaf.dtype)) for leaf in leaves),
        )
        compiled = self._cache.get(key)
        if compiled is None:
            compiled = self.compile(fn, learner, *args)
            self._cache[key] = compiled
        return compiled(*args)

    def _engine(self, fn, learner, *args):
        from ojax.sweep import stacked, sweep_experiment

        if fn is _runs:
            params, train, unseen, checkpoints = args
            one = _seed_run(learner, tuple(int(c) for c in np.asarray(checkpoints)))
            grid, tasks, name = None, (params, train, unseen), "runs"
        elif fn is _grid:
            pairs, train, validation = args
            one = _seed_grid(learner)
            grid, tasks, name = stacked(pairs, "step_pair"), (train, validation), "grid"
        else:  # pragma: no cover - only the two cores above exist
            raise ValueError(f"no engine path for {fn!r}")
        cell = sweep_experiment(
            self.config,
            one,
            grid,
            key=0,
            tasks=tasks,
            num_seeds=1,
            name=f"{name}-{type(learner).__name__}",
            compiler_options=COMPILER_OPTIONS,
        )
        self.compile_seconds += cell.stats.compile_seconds
        # axes (seed=1, [step_pair,] task=S): the task axis holds the experiment's seeds
        out = jax.tree.map(lambda a: a[0], cell.outputs)
        if fn is _grid:  # (P, S) -> (S, P), as the seed-batched core returns it
            out = jax.tree.map(lambda a: np.moveaxis(a, 0, 1), out)
        return out


@functools.cache
def _seed_run(learner, checkpoints: tuple[int, ...]):
    """``(_, (params, train, unseen), key) -> Outputs`` of one seed (cached per learner)."""
    points = np.asarray(checkpoints, np.int32)

    def one(_, task, key):
        params, train, unseen = task
        return _run_one(learner, params, train, unseen, points)

    return one


@functools.cache
def _seed_grid(learner):
    """``(step pair, (train, validation), key) -> (cumulative, validation)`` of one seed."""

    def one(pair, task, key):
        return meta.grid_score_core(learner, pair, *task)

    return one


def _seed_broadcast(params, num_seeds: int):
    return jax.tree.map(lambda a: jnp.broadcast_to(a, (num_seeds,) + jnp.shape(a)), params)


def _pf_params(
    kind: str, num_seeds: int, dim: int, dtype, inner_wealth, meta_wealth, oracle_bias=None
):
    one = jnp.asarray(1.0, dtype)
    wi, wm = jnp.asarray(inner_wealth, dtype), jnp.asarray(meta_wealth, dtype)
    if kind == "itl":
        return _seed_broadcast(meta.FixedBiasParams(jnp.zeros(dim, dtype), wi, one), num_seeds)
    if kind == "oracle":
        bias = jnp.broadcast_to(jnp.asarray(oracle_bias, dtype), (num_seeds, dim))
        return meta.FixedBiasParams(bias, *_seed_broadcast((wi, one), num_seeds))
    return _seed_broadcast(meta.MetaParams(wi, wm, one), num_seeds)


def _ss_grid(dtype, num: int) -> meta.OGDMetaParams:
    steps = step_grid(num)
    inner, outer = np.meshgrid(steps, steps, indexing="ij")
    return meta.OGDMetaParams(jnp.asarray(inner.ravel(), dtype), jnp.asarray(outer.ravel(), dtype))


def _pad_seeds(tree, size: int):
    """Pads the leading (seed) axis to ``size`` by repeating the last seed."""

    def pad(a):
        extra = size - a.shape[0]
        return a if extra == 0 else jnp.concatenate([a, jnp.repeat(a[-1:], extra, axis=0)])

    return jax.tree.map(pad, tree)


def _grid_scores(runner, learner, grid, train, validation, chunk: int, progress):
    """(S, P) final cumulative and validation errors, seeds in chunks of ``chunk``."""
    num_seeds = train.x_train.shape[0]
    if runner.config is not None:  # the engine chunks seeds x pairs to the memory budget
        cum, val = runner(_grid, learner, grid, train, validation)
        return np.asarray(cum), np.asarray(val)
    cums, vals = [], []
    starts = list(range(0, num_seeds, chunk))
    for start in progress(starts):
        stop = min(start + chunk, num_seeds)
        sl = slice(start, stop)
        take = lambda tree, sl=sl: jax.tree.map(lambda a: a[sl], tree)  # noqa: E731
        cum, val = runner(
            _grid,
            learner,
            grid,
            _pad_seeds(take(train), chunk),
            None if validation is None else _pad_seeds(take(validation), chunk),
        )
        cums.append(np.asarray(cum)[: stop - start])
        vals.append(np.asarray(val)[: stop - start])
    return np.concatenate(cums), np.concatenate(vals)


def _curves(out: Outputs, train: TaskBlock) -> dict[str, np.ndarray]:
    curves = {
        "cumulative_error": meta.cumulative_error(out.errors, train.mask_train),
        "test_error": meta.test_error_curve(out.test_errors),
    }
    if out.meta_test is not None:
        curves["meta_test_error"] = np.asarray(out.meta_test)
    return curves


class Setting(NamedTuple):
    """What one dataset's run needs."""

    dataset: str
    train: TaskBlock  # (S, T, ...) seed-batched training tasks
    validation: TaskBlock | None  # (S, V, ...) for the honest selection of the _SS steps
    unseen: TaskBlock | None  # (S, T', ...) unseen tasks for the meta-test error
    oracle_bias: Any  # (d,) or None (no Oracle)
    checkpoints: np.ndarray  # numbers of training tasks at which the meta-test is measured


def run_methods(
    setting: Setting,
    methods: list[str],
    *,
    runner: Runner,
    dtype,
    inner_wealth: float = 1.0,
    meta_wealth: float = 1.0,
    grid_size: int = 20,
    grid_chunk: int = 10,
    progress: Callable = lambda it: it,
    selected: dict | None = None,
    counter: str = "global",
) -> tuple[dict[str, dict[str, np.ndarray]], dict[str, Any]]:
    """Runs ``methods`` on a seed-batched setting; returns their curves and extra information.

    Args:
      setting: the data.
      methods: names from :data:`PF_METHODS` and :data:`SS_METHODS`.
      runner: compiles and times.
      dtype: float dtype.
      inner_wealth, meta_wealth: initial wealths of the parameter-free learners.
      grid_size: the _SS step grid is ``grid_size x grid_size``.
      grid_chunk: seeds per grid call.
      progress: wraps an iterable in a progress bar.
      selected: per _SS method, ``OGDMetaParams`` ``(S,)`` already chosen (skips the grid).
      counter: the step count of Aggressive's meta learner, ``"global"`` or ``"authors"``.

    Returns:
      ``(curves, extra)`` with ``curves[method][metric]`` of shape ``(S, length)``.
    """
    train = setting.train
    num_seeds, dim = train.x_train.shape[0], train.x_train.shape[-1]
    checkpoints = jnp.asarray(setting.checkpoints, jnp.int32)
    curves, extra = {}, {}
    for name in progress(methods):
        if name in PF_METHODS:
            kind, bettor = PF_METHODS[name]
            learner = make_learner(kind, bettor, dim, dtype, counter)
            params = _pf_params(
                kind, num_seeds, dim, dtype, inner_wealth, meta_wealth, setting.oracle_bias
            )
        else:
            kind = SS_METHODS[name] + "_ss"
            learner = make_learner(kind, "", dim, dtype)
            if selected is not None and name in selected:
                params = selected[name]
            else:
                grid = _ss_grid(dtype, grid_size)
                cum, val = _grid_scores(
                    runner, learner, grid, train, setting.validation, grid_chunk, lambda it: it
                )
                cum = np.where(np.isfinite(cum), cum, np.inf)  # a diverging pair never wins
                val = np.where(np.isfinite(val), val, np.inf)
                best = np.argmin(cum, axis=1)
                params = jax.tree.map(lambda a: a[best], grid)  # noqa: B023 (called at once)
                info = {
                    "inner_step_hindsight": np.asarray(params.inner_step).tolist(),
                    "meta_step_hindsight": np.asarray(params.meta_step).tolist(),
                    "params": params,
                }
                if setting.validation is not None:
                    best_val = np.argmin(val, axis=1)
                    honest = jax.tree.map(lambda a: a[best_val], grid)  # noqa: B023 (called at once)
                    out = runner(_runs, learner, honest, train, setting.unseen, checkpoints)
                    finals = {k: v[:, -1] for k, v in _curves(out, train).items()}
                    info.update(
                        inner_step_validation=np.asarray(honest.inner_step).tolist(),
                        meta_step_validation=np.asarray(honest.meta_step).tolist(),
                        validation_selected={
                            k: {"mean": float(v.mean()), "std": float(v.std())}
                            for k, v in finals.items()
                        },
                    )
                extra[name] = info
        out = runner(_runs, learner, params, train, setting.unseen, checkpoints)
        curves[name] = _curves(out, train)
    return curves, extra


def _checkpoints(num_tasks: int, num: int) -> np.ndarray:
    return np.unique(np.round(np.linspace(0, num_tasks, min(num, num_tasks + 1))).astype(int))


def _figures(dataset: str, curves, checkpoints, title: str) -> dict[str, Any]:
    from ojax.plotting import curves_figure

    figs = {}
    some = next(iter(curves.values()))
    n = some["cumulative_error"].shape[1]
    figs[f"{dataset}_cumulative_error.png"] = curves_figure(
        np.arange(1, n + 1),
        {m: c["cumulative_error"] for m, c in curves.items()},
        title=f"{title}: cumulative error",
        xlabel="iterations (points seen)",
        ylabel="cumulative absolute error",
    )
    t = some["test_error"].shape[1]
    figs[f"{dataset}_test_error.png"] = curves_figure(
        np.arange(1, t + 1),
        {m: c["test_error"] for m, c in curves.items()},
        title=f"{title}: multi-task test error",
        xlabel="number of tasks",
        ylabel="test absolute error",
    )
    if "meta_test_error" in some:
        figs[f"{dataset}_meta_test_error.png"] = curves_figure(
            np.asarray(checkpoints),
            {m: c["meta_test_error"] for m, c in curves.items()},
            title=f"{title}: meta-test error on unseen tasks",
            xlabel="number of training tasks",
            ylabel="test absolute error",
        )
    return figs


def _dtype(config: ExperimentConfig):
    return jnp.float64 if config.x64 else jnp.float32


def _keys(num_seeds: int):
    return jax.vmap(jax.random.key)(jnp.arange(num_seeds))


class SyntheticSize(NamedTuple):
    num_tasks: int = 400
    num_validation: int = 20
    num_test: int = 50
    num_points: int = 50
    num_train: int = 25
    dim: int = 10
    num_checkpoints: int = 41


QUICK_SYNTHETIC = SyntheticSize(num_tasks=80, num_validation=10, num_test=20, num_checkpoints=9)


def synthetic_setting(
    num_seeds: int,
    size: SyntheticSize,
    dtype,
    params: mt_env.LowVarianceParams | None = None,
    runner: Runner | None = None,
) -> Setting:
    """Seed-batched synthetic data (seed ``s`` draws from ``jax.random.key(s)``)."""
    params = params or mt_env.default_low_variance_params(dtype)
    runner = runner or Runner()
    keys = _keys(num_seeds)
    split = runner.compile(_synthetic_data, keys, params, size=size, dtype=dtype)(keys, params)
    oracle = jnp.full((size.dim,), params.task_mean, dtype)
    return Setting(
        "synthetic",
        split.train,
        split.validation,
        split.test,
        oracle,
        _checkpoints(size.num_tasks, size.num_checkpoints),
    )


@functools.partial(jax.jit, static_argnames=("size", "dtype"))
def _synthetic_data(keys, params, size: SyntheticSize, dtype):
    return jax.vmap(
        lambda k: mt_env.synthetic_split(
            k,
            params,
            size.num_tasks,
            size.num_validation,
            size.num_test,
            size.num_points,
            size.dim,
            size.num_train,
            dtype,
        )
    )(keys)


def _finish(
    result: ExperimentResult, dataset: str, curves, extra, setting, runner, title, start: float
) -> ExperimentResult:
    for method, metrics in curves.items():
        for metric in METRICS:
            if metric in metrics:
                result.add(dataset, method, metric, metrics[metric])
    result.figures.update(_figures(dataset, curves, setting.checkpoints, title))
    clean = {m: {k: v for k, v in info.items() if k != "params"} for m, info in extra.items()}
    result.extra_config.update(
        {
            f"{dataset}_tuned_steps": clean,
            f"{dataset}_meta_test_checkpoints": np.asarray(setting.checkpoints).tolist(),
            f"{dataset}_run_seconds": time.perf_counter() - start - runner.compile_seconds,
        }
    )
    result.compile_seconds = (result.compile_seconds or 0.0) + runner.compile_seconds
    return result


def run_synthetic(config: ExperimentConfig) -> ExperimentResult:
    """``denevi2020-synthetic``: all eight methods on the low-variance environment."""
    start = time.perf_counter()
    dtype = _dtype(config)
    size = QUICK_SYNTHETIC if config.quick else SyntheticSize()
    seeds = min(config.seeds, 4) if config.quick else config.seeds
    runner = Runner(config)
    setting = synthetic_setting(seeds, size, dtype, runner=runner)
    methods = list(PF_METHODS) + list(SS_METHODS)
    curves, extra = run_methods(
        setting,
        methods,
        runner=runner,
        dtype=dtype,
        progress=lambda it: config.progress(it, "denevi2020 methods"),
    )
    result = ExperimentResult()
    result.extra_config.update(
        {
            "synthetic_size": size._asdict(),
            "seeds_run": seeds,
            "step_grid": step_grid().tolist(),
            "itl_oracle_bettor": "ons",
            "aggressive_counter": "global",
        }
    )
    return _finish(
        result, "synthetic", curves, extra, setting, runner, "Synthetic (Denevi et al. 2020)", start
    )


WEALTH_GRID = 10.0 ** np.arange(-3.0, 4.0)


def run_wealth(config: ExperimentConfig) -> ExperimentResult:
    """``denevi2020-wealth``: the parameter-free methods with initial wealths on a log grid.

    The same initial wealth is used for the inner and the meta bettors; method names carry the
    suffix ``@wealth=VALUE``. The wealth is a runtime parameter, so the grid reuses one compiled
    function per method.
    """
    start = time.perf_counter()
    dtype = _dtype(config)
    size = QUICK_SYNTHETIC if config.quick else SyntheticSize()
    seeds = min(config.seeds, 3) if config.quick else config.seeds
    wealths = WEALTH_GRID[::3] if config.quick else WEALTH_GRID
    runner = Runner(config)
    setting = synthetic_setting(seeds, size, dtype, runner=runner)
    curves = {}
    for wealth in config.progress(list(wealths), "initial wealth"):
        got, _ = run_methods(
            setting,
            list(PF_METHODS),
            runner=runner,
            dtype=dtype,
            inner_wealth=float(wealth),
            meta_wealth=float(wealth),
        )
        for method, metrics in got.items():
            curves[f"{method}@wealth={wealth:g}"] = metrics
    result = ExperimentResult()
    result.extra_config.update(
        {
            "synthetic_size": size._asdict(),
            "seeds_run": seeds,
            "wealth_grid": [float(w) for w in wealths],
        }
    )
    result = _finish(
        result, "synthetic", curves, {}, setting, runner, "Initial wealth sweep", start
    )
    result.figures["synthetic_wealth_sensitivity.png"] = _wealth_figure(curves, wealths)
    return result


def _wealth_figure(curves, wealths):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for method in PF_METHODS:
        finals = np.stack(
            [curves[f"{method}@wealth={w:g}"]["cumulative_error"][:, -1] for w in wealths], axis=1
        )
        mean, std = finals.mean(axis=0), finals.std(axis=0)
        (line,) = ax.plot(wealths, mean, marker="o", label=method)
        ax.fill_between(wealths, mean - std, mean + std, color=line.get_color(), alpha=0.2, lw=0)
    ax.set(
        xscale="log",
        xlabel="initial wealth (inner = meta)",
        ylabel="final cumulative error",
        title="Sensitivity to the initial wealth",
    )
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    return fig


def real_setting(
    data: mt_data.PooledTasks,
    dataset: str,
    num_seeds: int,
    dtype,
    runner: Runner,
    heldout_fraction: float = 0.2,
    num_checkpoints: int = 21,
) -> Setting:
    """Seed-batched tasks of a real dataset (seed ``s``: ``jax.random.key(s)`` shuffles the task
    order and splits each task).

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
    keys = _keys(num_seeds)
    width = mt_data.num_train_max(data)
    blocks = runner.compile(_real_data, keys, arrays, width=width)(keys, arrays)
    num_tasks = data.x.shape[0]
    heldout = max(1, int(round(heldout_fraction * num_tasks)))
    seen = num_tasks - heldout
    return Setting(
        dataset,
        blocks,
        None,
        task_slice(blocks, seen, num_tasks),
        None,
        _checkpoints(seen, num_checkpoints),
    )


@functools.partial(jax.jit, static_argnames=("width",))
def _real_data(keys, arrays, width: int):
    return jax.vmap(lambda k: mt_data.split_tasks_core(k, *arrays, width))(keys)


def _run_real(config: ExperimentConfig, dataset: str, loader, title: str) -> ExperimentResult:
    start = time.perf_counter()
    dtype = _dtype(config)
    data = loader(config.data_dir, np.float64 if config.x64 else np.float32)
    seeds = min(config.seeds, 3) if config.quick else config.seeds
    if config.quick:  # a few tasks only
        keep = 30
        data = mt_data.PooledTasks(
            data.x[:keep], data.y[:keep], data.mask[:keep], data.num_test[:keep]
        )
    runner = Runner(config)
    setting = real_setting(data, dataset, seeds, dtype, runner)
    methods = [m for m in list(PF_METHODS) + list(SS_METHODS) if m != "Oracle"]
    curves, extra = run_methods(
        setting,
        methods,
        runner=runner,
        dtype=dtype,
        progress=lambda it: config.progress(it, f"{dataset} methods"),
    )
    result = ExperimentResult()
    if dataset == "schools":  # the authors' counter (t - 1) n_t + i, to compare with their code
        authors, _ = run_methods(
            setting, ["Aggressive", "Aggressive_KT"], runner=runner, dtype=dtype, counter="authors"
        )
        result.extra_config["authors_counter_final"] = {
            m: {
                k: {"mean": float(v[:, -1].mean()), "std": float(v[:, -1].std())}
                for k, v in got.items()
            }
            for m, got in authors.items()
        }
    result.extra_config.update(
        {
            "dataset_shape": list(data.x.shape),
            "seeds_run": seeds,
            "meta_test_protocol": "the last 20% of each seed's shuffled tasks are the unseen "
            "tasks; "
            "the meta-test curve stops at the number of tasks before them",
            "aggressive_counter": "global",
        }
    )
    return _finish(result, dataset, curves, extra, setting, runner, title, start)


def run_schools(config: ExperimentConfig) -> ExperimentResult:
    """``denevi2020-schools``: Schools (139 tasks of 22 to 251 students), without the Oracle."""
    return _run_real(config, "schools", mt_data.load_schools, "Schools")


def run_lenk(config: ExperimentConfig) -> ExperimentResult:
    """``denevi2020-lenk``: Lenk (180 people x 20 computers), without the Oracle."""
    return _run_real(config, "lenk", mt_data.load_lenk, "Lenk")
