"""`parameter-free-benchmark`: how parameter-free is each parameter-free learner? Its rows from
its sweeps (:mod:`ojax.experiments.parameter_free_methods` runs them), and its figures from a
run's files (no computation).

Every parameter-free learner of ojax (KT and ONS coin betting in the direction-magnitude
reduction, per-coordinate KT, COCOB-Backprop, DoG, Prodigy, D-Adaptation SGD, Mechanic on OGD,
Schedule-Free SGD) and two tuned baselines (OGD and AdaGrad at the best of 20 log-spaced steps
in hindsight) run as linear predictors `y_hat = <w_t, x_t>` with progressive validation
(predict on the unseen example, then update):

* classification: logistic and hinge loss on the shipped a1a (the LIBSVM training file, 1605
  rows), spambase (4601), mushrooms (the KEEL stand-in, 5644) and usenet2 (1500); features
  min-max scaled per column, a constant feature appended, each row scaled to unit L2 norm (so
  every gradient has norm at most 1, the coin bettors' `gradient_scale = 1` is exact); one
  pass over the rows in a random order per seed;
* regression: square and absolute loss on a noiseless synthetic stream `y_t = <u, x_t>`,
  `x_t` uniform on the unit sphere of R^10, `u` a random direction scaled to each norm of
  `||u|| = 1e-2 .. 1e2`; regret against `u` is the learner's cumulative loss (`u`'s is 0).
  The square loss's gradients grow with `||u||`: the bettors' coins then leave `[-1, 1]`
  and their theory no longer applies (the absolute loss keeps them in it).

Each parameter-free learner's hidden constant
(:data:`~ojax.experiments.parameter_free_methods.METHODS`: the initial wealth, COCOB's `alpha`,
DoG's initial distance, the `d_0` of Prodigy and D-Adaptation, Mechanic's `s_init`, and
Schedule-Free's learning rate, which it does need) is swept over 9 log-spaced values spanning 8
decades, its default among them. The sweep engine runs, per (method, loss), one compiled cell
over (seed, constant, dataset): the classification datasets are stacked as the task axis (padded
to the longest stream and widest row with a mask and zero features, which change nothing), the
norms of `u` likewise. Seed `s` is the stream order (classification) or the draw of `u` and the
stream (regression).

Rows (`results.csv`): `METHOD@constant=VALUE` for every grid point (`average_loss`, and
`mistake_rate` or `regret`), and per method its summary: `average_loss` (and `regret`)
at its default constant (OGD / AdaGrad: at the step best in hindsight on the seeds' mean,
`OGD-fixed`: OGD at the step best for `||u|| = 1` kept at every norm), `best_average_loss`
(the best grid point) and `sensitivity` (per seed, the worst over the grid's average loss
divided by the best; 1 is perfectly parameter-free). A run that diverges (the square loss's
coins outside `[-1, 1]` blow the bettors' wealth up) has NaN rows, and makes its method's
sensitivity `inf`; it is never chosen as the best.

`--methods M1,M2,...` runs some of them, or a learner of one's own beside them: a registered OCO
learner (a plugin's, or one `--import MODULE` registers) joins as a parameter-free method
(:func:`~ojax.experiments.parameter_free_methods.method_spec`), in the rows, the figures and
the regret panel. The console table shows each method's `average_loss` and `sensitivity` (the
headline); the other rows are in `results.csv` only.
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from typing import Any

import numpy as np

from ojax.experiments import parameter_free_methods as pfm
from ojax.results import ExperimentResult, split_key
from ojax.sweep.experiment import ExperimentConfig, ExperimentSpec, option

FIXED_NORM = 1.0  # OGD-fixed: the step best in hindsight at ||u|| = 1, kept at every norm
REGRET_METHODS = ("KT", "ONS", "KT-coordinate", "COCOB", "DoG", "OGD")


def finite(values: np.ndarray) -> np.ndarray:
    """`values` with NaN (a diverged run) as `inf`, so that it is never the best."""
    return np.where(np.isnan(values), np.inf, values)


def best_index(average_loss: np.ndarray) -> int:
    """The grid point of the lowest mean average loss over seeds (diverged runs last)."""
    return int(np.argmin(finite(average_loss.mean(axis=0))))


def chosen_index(default: float | None, grid: np.ndarray, average_loss: np.ndarray) -> int:
    """The grid point a method's summary row reports: its `default` constant, or (a baseline,
    `default` None) the point of the lowest mean average loss over seeds (best in
    hindsight)."""
    if default is None:
        return best_index(average_loss)
    return int(np.argmin(np.abs(np.log(grid / default))))


def _other_metric(metrics: dict[str, np.ndarray]) -> str:
    return "regret" if "regret" in metrics else "mistake_rate"


def _add_method(result: ExperimentResult, method: str, sweep: Any) -> None:
    for dataset, metrics in sweep.outputs.items():
        avg, other = metrics["average_loss"], _other_metric(metrics)
        for c, constant in enumerate(sweep.grid):
            name = pfm.label(method, float(constant))
            result.add(dataset, name, "average_loss", avg[:, c], detail=True)
            result.add(dataset, name, other, metrics[other][:, c], detail=True)
        idx = chosen_index(sweep.default, sweep.grid, avg)
        result.add(dataset, method, "average_loss", avg[:, idx])
        result.add(dataset, method, other, metrics[other][:, idx], detail=True)
        result.add(dataset, method, "best_average_loss", avg[:, best_index(avg)], detail=True)
        # per seed worst / best; a diverged grid point (NaN) makes it inf
        result.add(
            dataset, method, "sensitivity", finite(avg).max(axis=1) / finite(avg).min(axis=1)
        )


def fixed_step_index(sweep: Any, loss: str, norms: tuple[float, ...]) -> int | None:
    """OGD-fixed's grid point: the step best in hindsight at `||u|| = 1` (`None` when
    the run has no such norm)."""
    if FIXED_NORM not in norms:
        return None
    return best_index(sweep.outputs[pfm.regression_name(loss, FIXED_NORM)]["average_loss"])


def build_result(sweeps: dict[str, Any], size: pfm.Size) -> ExperimentResult:
    """The rows (see the benchmark's module doc) of a run's sweeps, and in its config the
    `size` and each method's `grids` (what :func:`figures` reads back)."""
    result = ExperimentResult()
    for method, sweep in sweeps.items():
        _add_method(result, method, sweep)
    if "OGD" in sweeps:
        for loss in size.regression_losses:
            idx = fixed_step_index(sweeps["OGD"], loss, size.norms)
            if idx is None:
                continue
            for norm in size.norms:
                name = pfm.regression_name(loss, norm)
                metrics = sweeps["OGD"].outputs[name]
                result.add(name, "OGD-fixed", "average_loss", metrics["average_loss"][:, idx])
                result.add(name, "OGD-fixed", "regret", metrics["regret"][:, idx], detail=True)
    result.extra_config.update(
        {
            "size": size._asdict(),
            "grids": {
                m: {"constant": s.constant, "values": s.grid.tolist(), "default": s.default}
                for m, s in sweeps.items()
            },
        }
    )
    return result


def figures(run) -> dict[str, Any]:
    """The plot function of `parameter-free-benchmark` (:mod:`ojax.app.files`):
    `sensitivity_LOSS` per loss and `regret_vs_norm`, from the run's files (the grid points'
    curves of `curves.npz`, the `size` and `grids` of `config.json`)."""
    if "size" not in run.config or "grids" not in run.config:
        return {}
    sweeps, size = sweeps_of(run)
    out: dict[str, Any] = {}
    for loss in (*size.classification_losses, *size.regression_losses):
        names = [pfm.classification_name(d, loss) for d in size.datasets]
        if loss in size.regression_losses:
            names = [pfm.regression_name(loss, FIXED_NORM)] if FIXED_NORM in size.norms else []
        if names:
            out[f"sensitivity_{loss}"] = sensitivity_figure(sweeps, names, loss)
    if size.regression_losses and size.norms:
        out["regret_vs_norm"] = regret_figure(sweeps, size)
    return out


def sweeps_of(run) -> tuple[dict[str, pfm.Sweep], pfm.Size]:
    """The sweeps and size of a written run, read back from its files: per method, the grid
    of `config.json`'s `grids` and each dataset's `(seeds, constants)` metrics stacked from
    the grid points' curves (`DATASET/METHOD@constant=VALUE/METRIC`)."""
    fields: dict[str, Any] = {
        k: tuple(v) if isinstance(v, list) else v for k, v in run.config["size"].items()
    }
    size = pfm.Size(**fields)
    names = [
        pfm.classification_name(d, loss)
        for loss in size.classification_losses
        for d in size.datasets
    ]
    names += [pfm.regression_name(loss, n) for loss in size.regression_losses for n in size.norms]
    sweeps = {}
    grids = run.config["grids"]
    seen = dict.fromkeys(split_key(key)[1].partition("@")[0] for key in run.curves)
    for method in [m for m in seen if m in grids]:  # the run's order (config.json sorts keys)
        grid = np.asarray(grids[method]["values"], np.float64)
        outputs: dict[str, dict[str, np.ndarray]] = {}
        for name in names:
            for metric in ("average_loss", "mistake_rate", "regret"):
                keys = [f"{name}/{pfm.label(method, float(c))}/{metric}" for c in grid]
                if all(k in run.curves for k in keys):
                    columns = [run.curves[k].values[:, -1] for k in keys]
                    outputs.setdefault(name, {})[metric] = np.stack(columns, axis=1)
        spec = grids[method]
        sweeps[method] = pfm.Sweep(grid, outputs, 0.0, spec["constant"], spec["default"])
    return sweeps, size


def sensitivity_figure(sweeps: dict[str, Any], datasets: list[str], loss: str) -> Any:
    """Final average loss (mean over seeds) against the hidden constant relative to its
    default (baselines: the step relative to the best one), one panel per dataset."""
    from ojax.plotting import display_name, legend, new_figure, style

    cols = min(len(datasets), 2)
    rows = -(-len(datasets) // cols)
    fig, axes = new_figure(rows, cols, width=5.0 * cols, height=3.6 * rows, squeeze=False)
    for ax, dataset in zip(axes.flat, datasets, strict=False):
        for i, (method, sweep) in enumerate(sweeps.items()):
            avg = sweep.outputs[dataset]["average_loss"]
            ref = sweep.grid[chosen_index(sweep.default, sweep.grid, avg)]
            ax.plot(
                sweep.grid / ref,
                avg.mean(axis=0),
                label=display_name(method),
                **style(i, every=None),
            )
        ax.set(
            xscale="log",
            yscale="log",
            xlabel="constant / default (baselines: step / best step)",
            ylabel="final average loss",
        )
        ax.set_title(dataset, fontsize="medium")  # the panel's dataset and loss
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(datasets) :]:
        ax.axis("off")
    legend(fig, *axes.flat[: len(datasets)])
    return fig


def regret_curves(sweeps: dict[str, Any], size: pfm.Size, loss: str) -> dict[str, np.ndarray]:
    """Mean regret over seeds against `||u||` (`(len(norms),)`) of the methods of
    :data:`REGRET_METHODS` and of one's own at their chosen point (OGD: tuned per norm) and
    of OGD-fixed."""
    names = [pfm.regression_name(loss, n) for n in size.norms]
    out: dict[str, np.ndarray] = {}
    for method in [m for m in sweeps if m in REGRET_METHODS or m not in pfm.METHODS]:
        sweep = sweeps[method]
        values = []
        for name in names:
            metrics = sweep.outputs[name]
            idx = chosen_index(sweep.default, sweep.grid, metrics["average_loss"])
            values.append(metrics["regret"][:, idx].mean())
        out[method if method != "OGD" else "OGD (tuned per norm)"] = np.asarray(values)
    fixed = fixed_step_index(sweeps["OGD"], loss, size.norms) if "OGD" in sweeps else None
    if fixed is not None:
        out["OGD-fixed (tuned at ||u||=1)"] = np.asarray(
            [sweeps["OGD"].outputs[n]["regret"][:, fixed].mean() for n in names]
        )
    return out


def regret_figure(sweeps: dict[str, Any], size: pfm.Size) -> Any:
    """Regret against `||u||` per regression loss (log-log)."""
    from ojax.plotting import display_name, legend, new_figure, style

    losses = size.regression_losses
    fig, axes = new_figure(1, len(losses), width=5.0 * len(losses), height=3.6, squeeze=False)
    norms = np.asarray(size.norms)
    for ax, loss in zip(axes[0], losses, strict=True):
        for i, (method, values) in enumerate(regret_curves(sweeps, size, loss).items()):
            ax.plot(norms, values, label=display_name(method), **style(i, every=None))
        ax.set(
            xscale="log",
            yscale="log",
            xlabel="||u||",
            ylabel=f"regret after {size.regression_steps} steps",
        )
        ax.set_title(f"{loss} loss", fontsize="medium")  # the panel's loss
        ax.grid(alpha=0.3)
    legend(fig, *axes[0])
    return fig


def method_list(text: str) -> tuple[str, ...]:
    """`--methods`: `"KT,COCOB,adagrad_norm"` -> the names (checked when the run starts, after
    `--import` registered one's own)."""
    names = tuple(n.strip() for n in text.split(","))
    if not all(names):
        raise argparse.ArgumentTypeError(f"must be names separated by commas, got {text!r}")
    return names


@dataclasses.dataclass(frozen=True)
class BenchmarkConfig(ExperimentConfig):
    """`parameter-free-benchmark`'s options: `--methods`."""

    methods: tuple[str, ...] | None = option(
        help="the methods to run, comma-separated (default: every one of the table): KT, ONS, "
        "KT-coordinate, COCOB, DoG, Prodigy, D-Adapt-SGD, Mechanic, Schedule-Free-SGD, OGD, "
        "AdaGrad, or a registered OCO learner (`ojax list --learners`; one's own with --import)",
        metavar="M1,M2,...",
        type=method_list,
    )

    def check(self, seeds_given: bool = True) -> tuple[ExperimentConfig, dict[str, Any]]:
        if self.methods is not None:
            pfm.check_methods(self.methods)
        return super().check(seeds_given)


def run_benchmark(config: ExperimentConfig) -> ExperimentResult:
    """`ojax run parameter-free-benchmark`: every method (or those of `--methods`), constant,
    dataset and seed."""
    start = time.perf_counter()
    size = pfm.QUICK if config.quick else pfm.FULL
    sweeps, compile_s = pfm.run_sweeps(config, size, getattr(config, "methods", None))
    result = build_result(sweeps, size)
    result.extra_config.update(
        {
            "seeds_run": config.seeds,
            "features": "columns min-max scaled, a constant 1 appended, rows unit L2 norm",
            "regression": "noiseless y = <u, x>, x uniform on the unit sphere of "
            f"R^{pfm.REGRESSION_DIM}",
            "run_seconds": time.perf_counter() - start - compile_s,
        }
    )
    result.compile_seconds = compile_s
    return result


SPEC = ExperimentSpec(
    name="parameter-free-benchmark",
    summary="every parameter-free learner and tuned OGD / AdaGrad on progressive validation of "
    "linear models, each hidden constant swept over 8 decades (one sweep per method and loss)",
    run=run_benchmark,
    plot=figures,
    config=BenchmarkConfig,
    default_seeds=30,
    quick_seeds=2,
    data_files=("a1a.libsvm.gz", "spambase.csv.gz", "mushrooms_keel.csv.gz", "usenet2.mat"),
    quick_data_files=("a1a.libsvm.gz", "usenet2.mat"),
    figures=(
        *(f"sensitivity_{loss}.png" for loss in pfm.CLASSIFICATION_LOSSES + pfm.REGRESSION_LOSSES),
        "regret_vs_norm.png",
    ),
    page="reproductions/parameter-free-benchmark.md",
)


__all__ = [
    "BenchmarkConfig",
    "FIXED_NORM",
    "REGRET_METHODS",
    "SPEC",
    "best_index",
    "build_result",
    "chosen_index",
    "figures",
    "finite",
    "fixed_step_index",
    "method_list",
    "regret_curves",
    "regret_figure",
    "run_benchmark",
    "sensitivity_figure",
    "sweeps_of",
]
