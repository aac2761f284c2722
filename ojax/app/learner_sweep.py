"""A registered learner on its own synthetic stream, over seeds and a grid of its
hyperparameters: what `ojax sweep` runs, as the rows of docs/cli.md, curves and figures.

With `data` (a :class:`ojax.datasets.Stream`, what `ojax sweep --data FILE` reads), the
learner plays the file instead, by progressive validation over a shuffled order of its rows per
seed: an OCO learner as a linear predictor on `loss`, a predictor as it is (:func:`data_entry`).

The grid's values are parsed exactly (numbers, or numeric text as the command line passes it),
checked before anything runs (finite, fitting the dtype of the learner's params, accepted by the
learner's `check_params` one by one and in every combination) and reported as given.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ojax.app.output import format_mean_std
from ojax.app.sweep_metrics import checkpoints, comparator, primary_metric, sweep_metrics
from ojax.core import LEARNERS, LearnerEntry, cast_floats
from ojax.fileio import DataError, plain_name
from ojax.results import ExperimentResult, split_key
from ojax.sweep import EngineOptions, SweepResult, sweep
from ojax.sweep.grid import fit_values, parse_number, shown
from ojax.sweep.memory import TooSmallBudget
from ojax.validation import InputError, check_int

_MAX_STEPS = 2**31 - 1
NAME = "sweep"
"""The experiment name of a learner sweep (`config.json`'s `name`)."""


def _with(base: Any, overrides: Mapping[str, Any]) -> Any:
    if hasattr(base, "_replace"):
        return base._replace(**overrides)
    return {**base, **overrides}


def _fields(base: Any) -> tuple[str, ...]:
    if hasattr(base, "_fields"):
        return tuple(base._fields)
    if isinstance(base, Mapping):
        return tuple(base)
    return ()


def _field(base: Any, field: str) -> Any:
    return base[field] if isinstance(base, Mapping) else getattr(base, field)


def _grid_arrays(name: str, base: Any, grid: Mapping[str, Sequence[Any]] | None):
    """`(field -> values in the field's dtype, field -> values as given)`, each value exact."""
    fields = _fields(base)
    axes: dict[str, np.ndarray] = {}
    given: dict[str, list] = {}
    for field, values in (grid or {}).items():
        if field not in fields:
            raise InputError(
                f"grid: {field!r} is not a hyperparameter of {name}; its fields are "
                f"{list(fields) or '(none)'}"
            )
        current = _field(base, field)
        if not isinstance(current, (int, float, np.number, np.ndarray, jax.Array)) or np.ndim(
            current
        ):
            raise InputError(
                f"grid: {field!r} of {name} is not a scalar hyperparameter (it holds a "
                f"{type(current).__name__}); sweep its scalar fields"
            )
        if isinstance(values, (str, bytes)) or np.ndim(values) != 1 or len(values) == 0:
            raise InputError(f"grid: {field!r} needs a non-empty list of values, got {values!r}")
        given[field] = list(values)
        axes[field] = fit_values("grid", given[field], jnp.asarray(current).dtype, field)
        _duplicates(field, axes[field], given[field])
    return axes, given


def _check_one(learner: Any, base: Any, values: Mapping[str, np.ndarray], given: Mapping) -> None:
    """`check_params` on one combination: first on the numbers as given (so its message shows
    them so), then on the values in their dtype (what runs)."""
    label = ", ".join(f"{f}={shown(v)}" for f, v in given.items())
    plain = {f: _as_given(v, values[f].dtype) for f, v in given.items()}
    try:
        learner.check_params(_with(base, plain))
    except InputError as exc:
        raise InputError(f"grid: {label}: {exc}") from None
    except Exception:  # a check that needs arrays: the check in the dtype below decides
        pass
    try:
        learner.check_params(_with(base, {f: jnp.asarray(v) for f, v in values.items()}))
    except InputError as exc:
        rounded = ", ".join(f"{f}={v.item()!r}" for f, v in values.items())
        dtype = next(iter(values.values())).dtype
        raise InputError(f"grid: {label} (in {dtype}: {rounded}): {exc}") from None


def _as_given(value: Any, dtype: np.dtype) -> float | int | bool:
    """A given value (a number or numeric text) as a Python number of `dtype`'s kind."""
    number = parse_number(value) if isinstance(value, str) else np.asarray(value)[()].item()
    kind = np.dtype(dtype).kind
    return float(number) if kind == "f" else bool(number) if kind == "b" else int(number)


def _refused(learner: Any, base: Any, values: Mapping[str, np.ndarray]) -> bool:
    """Whether `check_params` refuses (or cannot check as arrays) these values all at once."""
    try:
        learner.check_params(_with(base, {f: jnp.asarray(v) for f, v in values.items()}))
    except Exception:  # refused, or not checkable as arrays: look one by one
        return True
    return False


def _check_grid(learner: Any, base: Any, axes: Mapping, given: Mapping) -> None:
    """Every value alone (the other fields at their defaults), then every combination: all at
    once as arrays, and one by one where that is refused (naming the first refused)."""
    for field, values in axes.items():
        if _refused(learner, base, {field: values}):
            for value, text in zip(values, given[field]):
                _check_one(learner, base, {field: value}, {field: text})
    names = list(axes)
    flat = dict(zip(names, (g.ravel() for g in np.meshgrid(*axes.values(), indexing="ij"))))
    if len(names) > 1 and _refused(learner, base, flat):
        for index in np.ndindex(*(len(axes[f]) for f in names)):
            values = {f: axes[f][i] for f, i in zip(names, index)}
            _check_one(learner, base, values, {f: given[f][i] for f, i in zip(names, index)})


def _learner_run(entry: LearnerEntry, learner: Any, base: Any, num_steps: int, dim: int):
    """`(params, data, key) -> {metric: curve at the checkpoints}`
    (`ojax.app.sweep_metrics`); `data`: a file's `(xs, ys)` (played in the order `key`
    draws), or `None` (the entry's stream)."""

    def learner_run(params, data, key):
        p = _with(base, params or {})
        if data is None:  # a stream drawn in float32 is played in the run's dtype (x64)
            drawn = cast_floats(entry.make_stream(key, num_steps, dim))
            return sweep_metrics(entry, learner, p, drawn)
        return sweep_metrics(entry, learner, p, shuffled(data, key), classify=True)

    return learner_run


def shuffled(pool: tuple, key: jax.Array) -> tuple:
    """`(xs, ys, mask, order)`: the rows of `pool = (xs, ys)` in the order `key` draws (a
    permutation: one pass, every row once), for :func:`ojax.run`."""
    xs, ys = pool
    return xs, ys, None, jax.random.permutation(key, ys.shape[0])


def data_entry(entry: LearnerEntry, data: Any, loss: str | None = None) -> LearnerEntry:
    """`entry` playing the stream `data` (:class:`ojax.datasets.Stream`) by progressive
    validation: an OCO learner as :func:`ojax.linear_predictor` on `loss` (default:
    logistic for -1 / +1 labels, else square), a predictor as it is (its own loss; `loss`
    must then be `None`). Multi-task and kernel learners have no such stream: refused."""
    from ojax.adapters import linear_predictor
    from ojax.losses import LOSSES

    if entry.kind not in ("oco", "predictor"):
        raise InputError(
            f"--data: {entry.name} is a {entry.kind} learner; a stream file is for OCO learners "
            "(as linear predictors) and predictors"
        )
    binary = bool(np.isin(np.asarray(data.ys), (-1.0, 1.0)).all())
    if entry.kind == "predictor":
        if loss is not None:
            raise InputError(
                f"--loss: {entry.name} is a predictor with its own loss ({entry.objective}); "
                "--loss is for OCO learners"
            )
        loss = entry.objective
    loss = loss or ("logistic" if binary else "square")
    if loss not in LOSSES:
        raise InputError(f"--loss must be one of {sorted(LOSSES)}, got {loss!r}")
    pool = to_pool(data)

    def stream(key, num_steps, dim):
        return shuffled(pool, key)

    stream.__name__ = data.source or "data"
    played = entry
    if entry.kind == "oco":

        def make(dim: int) -> Any:
            x0 = jnp.zeros(dim, jnp.result_type(float))
            return linear_predictor(entry.build(dim), LOSSES[loss], x0)

        played = dataclasses.replace(entry, make=make, dtyped=False)
    return dataclasses.replace(played, kind="predictor", stream=stream, objective=loss)


def to_pool(data: Any) -> tuple:
    """`(xs, ys)` of a :class:`ojax.datasets.Stream` as device arrays in the default float
    dtype: dense rows, or :class:`ojax.sparse.SparseRows` for a sparse matrix."""
    from ojax.sparse import issparse, sparse_rows

    dtype = jnp.result_type(float)
    xs = sparse_rows(data.xs, dtype=dtype) if issparse(data.xs) else jnp.asarray(data.xs, dtype)
    return xs, jnp.asarray(data.ys, dtype)


def _stream_shape(entry: LearnerEntry, num_steps: int, dim: int) -> tuple:
    return jax.eval_shape(lambda k: tuple(entry.make_stream(k, num_steps, dim)), jax.random.key(0))


def _positions(entry: LearnerEntry, num_steps: int, dim: int, length: int) -> np.ndarray:
    """The 1-based steps (tasks, for task blocks) of the curves' `length` checkpoints."""
    total = _stream_shape(entry, num_steps, dim)[0].shape[0] if entry.kind == "multi_task" else 0
    marks = checkpoints(total or num_steps)
    assert len(marks) == length, (len(marks), length)
    return marks


def _comparator(entry: LearnerEntry, num_steps: int, dim: int) -> str | None:
    return comparator(entry, _stream_shape(entry, num_steps, dim))


def dataset_name(entry: LearnerEntry) -> str:
    """The dataset column of a sweep: the entry's stream name (`kernel_pool`, `unit_ball`), or
    the stream function's name without `_stream` for a user's own function."""
    if isinstance(entry.stream, str):
        return entry.stream
    return getattr(entry.stream, "__name__", "stream").removesuffix("_stream")


def figures(run) -> dict[str, Any]:
    """The plot function of `ojax sweep` (:mod:`ojax.app.files`): `average_loss`
    (every grid point's curve against the step, labelled by its values) and, for one grid axis,
    `sensitivity` (the final average loss against the value)."""
    from ojax.plotting import band, curves_figure, legend, new_figure, style

    metric = run.config.get("metric", "average_loss")  # cumulative_error for task blocks
    if not plain_name(metric):  # it names the figure's file: data, never a path
        raise DataError(
            f"{str(run.folder / 'config.json')!r}: 'metric' must be a plain name (it names the "
            f"figure's file), got {str(metric)[:200]!r}"
        )
    label = metric.replace("_", " ")
    found = {k: c for k, c in run.curves.items() if k.endswith(f"/{metric}")}
    if not found:
        return {}
    labels = {k: split_key(k)[1].partition("@")[2].replace(",", ", ") for k in found}
    learner = run.config.get("learner", "")
    out = {
        metric: curves_figure(
            next(iter(found.values())).steps,
            {labels[k] or learner: c.values for k, c in found.items()},
            xlabel="task t" if metric == "cumulative_error" else "step t",
            ylabel=f"{label} of {learner}" if learner else label,
            logx=True,
        )
    }
    grid = run.config.get("grid") or {}
    if len(grid) != 1:
        return out
    ((field, values),) = grid.items()
    values = np.asarray(values, dtype=np.float64)
    final = np.stack([c.values[:, -1] for c in found.values()], axis=1)  # (seeds, k)
    steps = int(next(iter(found.values())).steps[-1])
    fig, ax = new_figure(width=5.0, height=3.6)
    band(ax, values, final, f"final {label}, T = {steps}", **style(0, every=None))
    if values.min() > 0 and values.max() / values.min() > 10:
        ax.set_xscale("log")
    ax.set(xlabel=field, ylabel=label)
    ax.grid(alpha=0.3)
    legend(fig, ax)
    out["sensitivity"] = fig
    return out


def shortest(value: Any) -> float | int | bool:
    """A number as the shortest text of its own dtype reads back (`0.01` for float32's
    `0.009999999776482582`), as a Python number for config.json."""
    scalar = np.asarray(value)[()]
    if scalar.dtype.kind == "f":
        return float(str(scalar))
    return scalar.item()


def value_labels(values: np.ndarray) -> list[str]:
    """The values of one grid axis as method labels: `%g` (`0.1`, `1e+30`), or, where two
    distinct values would print alike (`0.1` and `0.1000001`), each value's shortest text
    in its dtype."""
    labels = [f"{float(v):g}" for v in values]
    if len(set(labels)) < len(labels):
        labels = [str(v) for v in np.asarray(values)]
    return labels


def _duplicates(field: str, values: np.ndarray, given: Sequence[Any]) -> None:
    """Refuses an axis giving one value twice (`0.1,0.10,1e-1`, or two numbers its dtype
    rounds alike): they would run the same stream twice under one curve's name."""
    exact = [parse_number(v) if isinstance(v, str) else None for v in given]
    for number in exact:
        texts = [shown(g) for g, e in zip(given, exact) if number is not None and e == number]
        if number is not None and len(texts) > 1:
            raise InputError(
                f"grid: {field} gives the value {number.normalize()} {len(texts)} times (as "
                f"{', '.join(texts)}); give each value once"
            )
    for value in values:
        same = [j for j in range(len(values)) if values[j] == value]
        if len(same) > 1:
            alike = ", ".join(shown(given[j]) for j in same)
            raise InputError(
                f"grid: {field} gives the value {float(value):g} more than once ({alike} are "
                f"equal in {values.dtype}); give each value once"
            )


def _experiment_result(
    entry: LearnerEntry, axes: Mapping, res: SweepResult, num_seeds: int, num_steps: int, dim: int
) -> ExperimentResult:
    """The rows (method `NAME@field=value,...`), curves, figures and configuration."""
    name, metric = entry.name, primary_metric(entry.kind)
    dataset = dataset_name(entry)
    result = ExperimentResult()
    marks = _positions(entry, num_steps, dim, res.outputs[metric].shape[-1])
    names = list(axes)
    methods = {}
    shown_values = {f: value_labels(axes[f]) for f in names}
    for where in np.ndindex(*(len(axes[f]) for f in names)):
        label = ",".join(f"{f}={shown_values[f][i]}" for f, i in zip(names, where))
        method = f"{name}@{label}" if label else name
        methods[method] = where
        for output in res.outputs:
            curves = np.asarray(res.outputs[output])[(slice(None), *where)]
            result.add(dataset, method, output, curves, steps=marks)
    final = np.asarray(res.outputs[metric])[..., -1]  # (seeds, *grid)
    try:
        best = res.best(lambda o: o[metric][..., -1]) if names else None
    except InputError:  # every value diverged: the rows and curves say so (NaN / inf)
        best = None
    result.compile_seconds = res.stats.compile_seconds
    result.extra_config = {
        "learner": name,
        "metric": metric,
        "regret_comparator": _comparator(entry, num_steps, dim),
        "kind": entry.kind,
        "objective": entry.objective,
        "grid": {f: np.asarray(v).tolist() for f, v in axes.items()},
        "num_steps": num_steps,
        "dim": dim,
        "converged": bool(np.isfinite(final.mean(axis=0)).any()),
        "best": None
        if best is None
        else {
            "params": {k: shortest(v) for k, v in best["params"].items()},
            metric: best["value"],
        },
        "sweep": dataclasses.asdict(res.stats),
    }
    return result


def _prepare(name: str, grid: Any, num_steps: Any, dim: Any, x0: str, data=None, loss=None):
    """`(entry, learner, base params, axes, values as given)`, every option checked."""
    if name not in LEARNERS:
        raise InputError(
            f"unknown learner {name!r}; choose one of: {', '.join(sorted(LEARNERS)) or '(none)'}"
        )
    entry = LEARNERS[name]
    if data is not None:
        entry = data_entry(entry, data, loss)
    elif loss is not None:
        raise InputError("--loss is for a sweep on --data")
    if entry.kind == "contextual":
        raise InputError(
            f"learner {name!r} is a contextual bandit, played by ojax.contextual.run_contextual "
            "(ojax run contextual-bake-off), not swept by ojax sweep"
        )
    check_int("num_steps", num_steps, 1)
    check_int("dim", dim, 1)
    if num_steps > _MAX_STEPS:
        raise InputError(
            f"num_steps (--steps) must be at most 2**31 - 1 = {_MAX_STEPS} (steps are counted in "
            f"int32), got {num_steps}"
        )
    if x0 not in ("auto", "zeros", "uniform"):
        raise InputError(f"x0 must be one of ['auto', 'zeros', 'uniform'], got {x0!r}")
    if x0 != "auto":
        entry = dataclasses.replace(entry, start=x0)
    try:  # a length or dimension the stream cannot draw, named before anything runs
        jax.eval_shape(lambda k: entry.make_stream(k, num_steps, dim), jax.random.key(0))
    except Exception as exc:
        raise InputError(
            f"num_steps (--steps) = {num_steps} with dim (--dim) = {dim}: {name}'s stream cannot "
            f"be drawn ({type(exc).__name__}: {str(exc)[:200]})"
        ) from None
    learner = entry.build(dim)
    base = entry.default_params()
    axes, given = _grid_arrays(name, base, grid)
    _check_grid(learner, base, axes, given)
    return entry, learner, base, axes, given


def check_sweep(
    name: str,
    grid: Mapping[str, Sequence[float | str]] | None = None,
    *,
    num_steps: int = 1000,
    dim: int = 10,
    x0: str = "auto",
    data: Any = None,
    loss: str | None = None,
) -> None:
    """The checks :func:`sweep_learner` runs first (the learner, the stream's length and
    dimension, every grid value alone and in every combination), without running anything:
    `ojax sweep` calls it before it writes anything. Raises :class:`InputError`."""
    _prepare(name, grid, *_size(data, num_steps, dim), x0, data, loss)


def _size(data: Any, num_steps: int, dim: int) -> tuple[int, int]:
    """`(num_steps, dim)`: a data file's `(n, d)`, else as given."""
    return (num_steps, dim) if data is None else (data.xs.shape[0], data.xs.shape[1])


def best_line(result: ExperimentResult, rows: Sequence[Any]) -> str:
    """`ojax: best FIELD=V: final average loss M +- S; next FIELD=W: ...; best on k of n
    seeds`: the lowest mean final average loss, the runner-up, and how often (paired over the
    seeds, which draw the same streams) the best beats it. A diverged value (NaN or infinite
    final loss) ranks last and is never named best; a diverged runner-up loses on every seed;
    when every value diverged, the line says so.

    No best is named where the seeds cannot tell the two apart: when the mean paired
    difference (runner-up minus best, seed by seed) is not above two of its standard errors
    (`std / sqrt(n)`, the seeds' `ddof=1` std), or with one seed (no standard error), the line
    says `ojax: no best at n seeds: ...` with the difference and its standard error."""
    ranked = sorted(
        rows, key=lambda r: (bool(np.isnan(r.mean)), 0.0 if np.isnan(r.mean) else r.mean)
    )
    finite = [r for r in ranked if np.isfinite(r.mean)]

    def shown(row) -> str:
        mean, std = format_mean_std(row.mean, row.std)
        label = row.metric.replace("_", " ")
        return f"{row.method.partition('@')[2]}: final {label} {mean} +- {std}"

    if not finite:
        which = "the only value" if len(rows) == 1 else f"all {len(rows)} values"
        label = rows[0].metric.replace("_", " ") if rows else "average loss"
        return (
            f"ojax: no value converged: the final {label} is NaN or infinite for {which} "
            "of the grid (try smaller values); the table and results.csv hold them"
        )
    line = f"ojax: best {shown(finite[0])}"
    if len(finite) == 1 and len(ranked) > 1:
        label = finite[0].metric.replace("_", " ")
        return f"{line}; every other value diverged (final {label} NaN or infinite)"
    if len(ranked) > 1:
        final = [result.curves[f"{r.dataset}/{r.method}/{r.metric}"][:, -1] for r in ranked[:2]]
        wins = int((~(final[1] <= final[0])).sum())  # a NaN of the runner-up is a win
        ties = int((final[0] == final[1]).sum())
        count = f"best on {wins} of {len(final[0])} seeds" + (f" (tied on {ties})" if ties else "")
        told = _told_apart(final[0], final[1])
        if told is not None:
            label = finite[0].metric.replace("_", " ")
            return (
                f"ojax: no best at {len(final[0])} seed{'s' * (len(final[0]) > 1)}: "
                f"{shown(ranked[0])}; next {shown(ranked[1])}; the paired difference of the "
                f"final {label} is {told} ({count}); more seeds, or the grid's values are alike"
            )
        line += f"; next {shown(ranked[1])}; {count}"
    return line


def _told_apart(best: np.ndarray, runner_up: np.ndarray) -> str | None:
    """`None` where the runner-up is worse than the best by more than two standard errors of
    the paired differences (a diverged seed of the runner-up counting as worse); else the
    difference `D +- SE` (within 2 SE), or `D (one seed: no standard error)`."""
    diff = runner_up - best
    if not np.isfinite(diff).all():
        return None if np.isnan(diff).any() or (diff > 0).all() else "not finite"
    mean = float(diff.mean())
    if len(diff) < 2:
        return f"{mean:.3g} (one seed: no standard error)"
    error = float(diff.std(ddof=1) / np.sqrt(len(diff)))
    if mean > 2.0 * error:
        return None
    return f"{mean:.3g} +- {error:.2g} (standard error), within 2 standard errors"


def sweep_learner(
    name: str,
    grid: Mapping[str, Sequence[float | str]] | None = None,
    *,
    num_seeds: int = 10,
    num_steps: int = 1000,
    dim: int = 10,
    key: Any = 0,
    x0: str = "auto",
    options: EngineOptions | None = None,
    chunk_size: int | None = None,
    out_dir: str | os.PathLike | None = None,
    data: Any = None,
    loss: str | None = None,
) -> tuple[ExperimentResult, SweepResult]:
    """Sweeps a registered learner (:data:`ojax.core.LEARNERS`) over seeds and a grid of its
    hyperparameters on its own synthetic stream; what `ojax sweep` runs.

    Each combination draws a stream `entry.make_stream(key_seed, num_steps, dim)`, plays it
    (:func:`ojax.runner.run_entry`: `run_oco` on the objective for OCO learners, `run` on the
    loss otherwise) with the default params where the grid overrides some fields, and records
    the curves of :mod:`ojax.app.sweep_metrics` at up to 200 checkpoints: the average
    and cumulative loss and the regret against the best fixed comparator in hindsight (where
    the loss allows it), or, for multi-task learners, the cumulative, per-task and test error.

    Args:
      name: the learner's registry name.
      grid: `field -> values` (scalar fields of `entry.default_params()`), a Cartesian
        product; `None` runs the default params over seeds only. Values are numbers or
        numeric text (parsed exactly); each must be finite, fit the field's dtype (float32
        unless float64 is on) and pass the learner's `check_params`, alone and in every
        combination; messages show the values as given.
      num_seeds: the number of seeds.
      num_steps: the stream's length.
      dim: the dimension.
      key: PRNG key or int seed.
      x0: OCO start point: `"auto"` (the entry's `start`), `"zeros"` or `"uniform"`
        (`1 / dim`, a simplex prior).
      options: the engine's options (:class:`ojax.sweep.EngineOptions`: devices, memory
        budget, resume, quiet), as in :func:`ojax.sweep.sweep`.
      chunk_size: as in :func:`ojax.sweep.sweep`.
      out_dir: as in :func:`ojax.sweep.sweep`.
      data: a stream of one's own (:func:`ojax.datasets.read_stream`) played instead of the
        entry's, one pass in a shuffled order per seed (`num_steps` and `dim` are then its
        `(n, d)`); curves as above, with `mistake_rate` for a classifier's loss.
      loss: with `data`, an OCO learner's loss (default: logistic for -1 / +1 labels, else
        square); see :func:`data_entry`.

    Returns:
      `(ExperimentResult, SweepResult)`: the rows (dataset: the stream's name, method
      `NAME@field=value,...`, the metrics above), curves, figures, and the raw sweep.

    Raises:
      InputError: an unknown learner or field, a bad option, a grid value refused (above).
    """
    num_steps, dim = _size(data, num_steps, dim)
    entry, learner, base, axes, given = _prepare(name, grid, num_steps, dim, x0, data, loss)
    pool = None if data is None else entry.make_stream(jax.random.key(0), num_steps, dim)[:2]
    try:
        res = sweep(
            _learner_run(entry, learner, base, num_steps, dim),
            {f: jnp.asarray(v) for f, v in axes.items()} or None,
            num_seeds=num_seeds,
            key=key,
            data=pool,
            options=options,
            chunk_size=chunk_size,
            out_dir=out_dir,
            name=f"sweep-{name}",
            num_steps=num_steps,
            config={"learner": name, "num_steps": num_steps, "dim": dim}
            | ({} if data is None else {"data": data.source, "loss": entry.objective}),
        )
    except TooSmallBudget as exc:  # what makes one combination large: its stream
        what = f"a stream of num_steps (--steps) = {num_steps} steps in dim (--dim) = {dim}"
        if data is not None:  # a file: its rows and columns (hash_features makes fewer)
            what = f"{data.source}: {num_steps} rows of {dim} columns (see hash_features)"
        raise InputError(f"{exc} (one combination plays {what})") from None
    return _experiment_result(entry, axes, res, num_seeds, num_steps, dim), res


__all__ = ["best_line", "check_sweep", "sweep_learner"]
