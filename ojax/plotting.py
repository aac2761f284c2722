"""Matplotlib figures: mean over seeds with a +-std band, log-log regret against its bound."""

from __future__ import annotations

from collections.abc import Mapping

import matplotlib

matplotlib.use("Agg")  # figures are written to files; no display is needed

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure


def band(ax: Axes, x: np.ndarray, curves: np.ndarray, label: str, **style) -> None:
    """Plots the mean of ``curves`` (``(n_seeds, len(x))``) with a shaded +-std band."""
    curves = np.atleast_2d(np.asarray(curves, dtype=float))
    mean, std = curves.mean(axis=0), curves.std(axis=0)
    (line,) = ax.plot(x, mean, label=label, **style)
    if curves.shape[0] > 1:
        ax.fill_between(x, mean - std, mean + std, color=line.get_color(), alpha=0.2, lw=0)


def curves_figure(
    x: np.ndarray,
    curves: Mapping[str, np.ndarray],
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    logx: bool = False,
    logy: bool = False,
) -> Figure:
    """One panel of several methods' curves, each a mean with a +-std band over seeds."""
    fig, ax = plt.subplots(figsize=(6, 4))
    for name, values in curves.items():
        band(ax, x, values, name)
    ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    return fig


def regret_figure(
    horizons: np.ndarray,
    regrets: Mapping[str, np.ndarray],
    bounds: Mapping[str, np.ndarray],
    *,
    title: str,
) -> Figure:
    """Regret against the horizon T on log-log axes, with the theoretical bounds dashed."""
    fig, ax = plt.subplots(figsize=(5, 4))
    for name, values in regrets.items():
        band(ax, horizons, np.maximum(np.atleast_2d(values), 1e-12), name, marker="o", ms=3)
    for (name, bound), style in zip(bounds.items(), ("k--", "k:", "k-.", "k-")):
        ax.plot(horizons, np.broadcast_to(bound, np.shape(horizons)), style, label=name)
    ax.set(title=title, xlabel="T", ylabel="regret")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize="small")
    fig.tight_layout()
    return fig
