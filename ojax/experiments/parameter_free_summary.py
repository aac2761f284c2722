"""The rows and figures of `parameter-free-benchmark` from its sweeps (no computation).

See :mod:`ojax.experiments.parameter_free_benchmark` for what the rows mean.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ojax.experiments import parameter_free_benchmark as pfb
from ojax.experiments.output import ExperimentResult

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
    """The rows (see the benchmark's module doc) and figures of a run's sweeps."""
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
    for loss in (*size.classification_losses, *size.regression_losses):
        names = [pfb.classification_name(d, loss) for d in size.datasets]
        if loss in size.regression_losses:
            names = [pfb.regression_name(loss, FIXED_NORM)] if FIXED_NORM in size.norms else []
        if names:
            result.figures[f"sensitivity_{loss}.png"] = sensitivity_figure(sweeps, names, loss)
    if size.regression_losses and size.norms:
        result.figures["regret_vs_norm.png"] = regret_figure(sweeps, size)
    return result


def sensitivity_figure(sweeps: dict[str, Any], datasets: list[str], loss: str) -> Any:
    """Final average loss (mean over seeds) against the hidden constant relative to its
    default (baselines: the step relative to the best one), one panel per dataset."""
    import matplotlib.pyplot as plt

    cols = min(len(datasets), 2)
    rows = -(-len(datasets) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(6 * cols, 4 * rows), squeeze=False)
    for ax, dataset in zip(axes.flat, datasets, strict=False):
        for method, sweep in sweeps.items():
            avg = sweep.outputs[dataset]["average_loss"]
            ref = sweep.grid[chosen_index(method, sweep.grid, avg)]
            style = "--" if pfb.METHODS[method].default is None else "-"
            ax.plot(sweep.grid / ref, avg.mean(axis=0), style, marker=".", label=method)
        ax.set(
            xscale="log",
            yscale="log",
            title=dataset,
            xlabel="constant / default (baselines: step / best step)",
            ylabel="final average loss",
        )
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(datasets) :]:
        ax.axis("off")
    axes.flat[0].legend(fontsize="x-small", ncol=2)
    fig.suptitle(f"How parameter-free? Final average loss against the hidden constant ({loss})")
    fig.tight_layout()
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
    import matplotlib.pyplot as plt

    losses = size.regression_losses
    fig, axes = plt.subplots(1, len(losses), figsize=(6 * len(losses), 4.2), squeeze=False)
    norms = np.asarray(size.norms)
    for ax, loss in zip(axes[0], losses, strict=True):
        for method, values in regret_curves(sweeps, size, loss).items():
            style = "--" if method.startswith("OGD") else "-"
            ax.plot(norms, values, style, marker="o", label=method)
        ax.set(
            xscale="log",
            yscale="log",
            xlabel="||u||",
            ylabel=f"regret after {size.regression_steps} steps",
            title=f"{loss} loss",
        )
        ax.grid(alpha=0.3)
        ax.legend(fontsize="x-small")
    fig.suptitle("Regret against the comparator's norm (mean over seeds)")
    fig.tight_layout()
    return fig
