"""The rows of `parameter-free-benchmark` from its sweeps, and its figures from a run's
files (no computation).

See :mod:`ojax.experiments.parameter_free_benchmark` for what the rows mean.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ojax.experiments import parameter_free_benchmark as pfb
from ojax.experiments.output import ExperimentResult
from ojax.results import split_key

FIXED_NORM = 1.0  # OGD-fixed: the step best in hindsight at ||u|| = 1, kept at every norm
REGRET_METHODS = ("KT", "ONS", "KT-coordinate", "COCOB", "DoG", "OGD")


def finite(values: np.ndarray) -> np.ndarray:
    """`values` with NaN (a diverged run) as `inf`, so that it is never the best."""
    return np.where(np.isnan(values), np.inf, values)


def best_index(average_loss: np.ndarray) -> int:
    """The grid point of the lowest mean average loss over seeds (diverged runs last)."""
    return int(np.argmin(finite(average_loss.mean(axis=0))))


def chosen_index(method: str, grid: np.ndarray, average_loss: np.ndarray) -> int:
    """The grid point a method's summary row reports: its default constant, or (a baseline)
    the point of the lowest mean average loss over seeds (best in hindsight)."""
    default = pfb.METHODS[method].default
    if default is None:
        return best_index(average_loss)
    return int(np.argmin(np.abs(np.log(grid / default))))


def _other_metric(metrics: dict[str, np.ndarray]) -> str:
    return "regret" if "regret" in metrics else "mistake_rate"


def _add_method(result: ExperimentResult, method: str, sweep: Any) -> None:
    for dataset, metrics in sweep.outputs.items():
        avg, other = metrics["average_loss"], _other_metric(metrics)
        for c, constant in enumerate(sweep.grid):
            name = pfb.label(method, float(constant))
            result.add(dataset, name, "average_loss", avg[:, c])
            result.add(dataset, name, other, metrics[other][:, c])
        idx = chosen_index(method, sweep.grid, avg)
        result.add(dataset, method, "average_loss", avg[:, idx])
        result.add(dataset, method, other, metrics[other][:, idx])
        result.add(dataset, method, "best_average_loss", avg[:, best_index(avg)])
        # per seed worst / best; a diverged grid point (NaN) makes it inf
        result.add(
            dataset, method, "sensitivity", finite(avg).max(axis=1) / finite(avg).min(axis=1)
        )


def fixed_step_index(sweep: Any, loss: str, norms: tuple[float, ...]) -> int | None:
    """OGD-fixed's grid point: the step best in hindsight at `||u|| = 1` (`None` when
    the run has no such norm)."""
    if FIXED_NORM not in norms:
        return None
    return best_index(sweep.outputs[pfb.regression_name(loss, FIXED_NORM)]["average_loss"])


def build_result(sweeps: dict[str, Any], size: pfb.Size) -> ExperimentResult:
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
                name = pfb.regression_name(loss, norm)
                metrics = sweeps["OGD"].outputs[name]
                result.add(name, "OGD-fixed", "average_loss", metrics["average_loss"][:, idx])
                result.add(name, "OGD-fixed", "regret", metrics["regret"][:, idx])
    result.extra_config.update(
        {
            "size": size._asdict(),
            "grids": {
                m: {
                    "constant": pfb.METHODS[m].constant,
                    "values": s.grid.tolist(),
                    "default": pfb.METHODS[m].default,
                }
                for m, s in sweeps.items()
            },
        }
    )
    return result


def figures(run) -> dict[str, Any]:
    """The plot function of `parameter-free-benchmark` (:mod:`ojax.experiments.figures`):
    `sensitivity_LOSS` per loss and `regret_vs_norm`, from the run's files (the grid points'
    curves of `curves.npz`, the `size` and `grids` of `config.json`)."""
    if "size" not in run.config or "grids" not in run.config:
        return {}
    sweeps, size = sweeps_of(run)
    out: dict[str, Any] = {}
    for loss in (*size.classification_losses, *size.regression_losses):
        names = [pfb.classification_name(d, loss) for d in size.datasets]
        if loss in size.regression_losses:
            names = [pfb.regression_name(loss, FIXED_NORM)] if FIXED_NORM in size.norms else []
        if names:
            out[f"sensitivity_{loss}"] = sensitivity_figure(sweeps, names, loss)
    if size.regression_losses and size.norms:
        out["regret_vs_norm"] = regret_figure(sweeps, size)
    return out


def sweeps_of(run) -> tuple[dict[str, pfb.Sweep], pfb.Size]:
    """The sweeps and size of a written run, read back from its files: per method, the grid
    of `config.json`'s `grids` and each dataset's `(seeds, constants)` metrics stacked from
    the grid points' curves (`DATASET/METHOD@constant=VALUE/METRIC`)."""
    fields: dict[str, Any] = {
        k: tuple(v) if isinstance(v, list) else v for k, v in run.config["size"].items()
    }
    size = pfb.Size(**fields)
    names = [
        pfb.classification_name(d, loss)
        for loss in size.classification_losses
        for d in size.datasets
    ]
    names += [pfb.regression_name(loss, n) for loss in size.regression_losses for n in size.norms]
    sweeps = {}
    grids = run.config["grids"]
    seen = dict.fromkeys(split_key(key)[1].partition("@")[0] for key in run.curves)
    for method in [m for m in seen if m in grids]:  # the run's order (config.json sorts keys)
        grid = np.asarray(grids[method]["values"], np.float64)
        outputs: dict[str, dict[str, np.ndarray]] = {}
        for name in names:
            for metric in ("average_loss", "mistake_rate", "regret"):
                keys = [f"{name}/{pfb.label(method, float(c))}/{metric}" for c in grid]
                if all(k in run.curves for k in keys):
                    columns = [run.curves[k].values[:, -1] for k in keys]
                    outputs.setdefault(name, {})[metric] = np.stack(columns, axis=1)
        sweeps[method] = pfb.Sweep(grid, outputs, 0.0)
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
            ref = sweep.grid[chosen_index(method, sweep.grid, avg)]
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


def regret_curves(sweeps: dict[str, Any], size: pfb.Size, loss: str) -> dict[str, np.ndarray]:
    """Mean regret over seeds against `||u||` (`(len(norms),)`) of the methods of
    :data:`REGRET_METHODS` at their chosen point (OGD: tuned per norm) and of OGD-fixed."""
    names = [pfb.regression_name(loss, n) for n in size.norms]
    out: dict[str, np.ndarray] = {}
    for method in REGRET_METHODS:
        if method not in sweeps:
            continue
        sweep = sweeps[method]
        values = []
        for name in names:
            metrics = sweep.outputs[name]
            idx = chosen_index(method, sweep.grid, metrics["average_loss"])
            values.append(metrics["regret"][:, idx].mean())
        out[method if method != "OGD" else "OGD (tuned per norm)"] = np.asarray(values)
    fixed = fixed_step_index(sweeps["OGD"], loss, size.norms) if "OGD" in sweeps else None
    if fixed is not None:
        out["OGD-fixed (tuned at ||u||=1)"] = np.asarray(
            [sweeps["OGD"].outputs[n]["regret"][:, fixed].mean() for n in names]
        )
    return out


def regret_figure(sweeps: dict[str, Any], size: pfb.Size) -> Any:
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
