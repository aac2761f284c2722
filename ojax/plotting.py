"""Matplotlib figures, the one place where curves and their bands are drawn.

Every figure draws, per method, the mean over seeds with a band between two quantiles over
seeds (10% and 90% by default: :func:`quantile_band`). A quantile of positive values is
positive, so the band never crosses zero on a log axis (a mean +- std band does), and a rate
band stays within the rate's range. Methods get distinct line styles and widths (the first drawn
is the widest), so a method drawn later never hides one drawn before it. A bound is drawn only
beside the algorithm it bounds (:func:`regret_figure`).
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib

if "ipykernel" not in sys.modules:  # a notebook keeps its inline backend (figures shown)
    matplotlib.use("Agg")  # figures are written to files; no display is needed

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from ojax.validation import InputError

QUANTILES = (0.1, 0.9)
"""The default band: from the 10% to the 90% quantile over seeds."""

LINE_STYLES = ("-", "--", "-.", ":")
MARKERS = ("o", "s", "^", "v", "D", "x", "+", "*")


def quantile_band(
    curves: np.ndarray, quantiles: tuple[float, float] = QUANTILES
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(mean, low, high)`` over seeds of ``curves`` (``(n_seeds, length)``): the mean and the
    two quantiles (linear interpolation), each ``(length,)``.

    Examples:
      >>> mean, low, high = quantile_band(np.array([[1.0, 10.0], [3.0, 1000.0]]), (0.0, 1.0))
      >>> print(mean.tolist(), low.tolist(), high.tolist())
      [2.0, 505.0] [1.0, 10.0] [3.0, 1000.0]
    """
    low_q, high_q = quantiles
    if not 0.0 <= low_q <= high_q <= 1.0:
        raise InputError(f"quantiles must satisfy 0 <= low <= high <= 1, got {quantiles!r}")
    curves = np.atleast_2d(np.asarray(curves, dtype=float))
    low, high = np.quantile(curves, [low_q, high_q], axis=0)
    return curves.mean(axis=0), low, high


def style(index: int) -> dict:
    """The line style of the ``index``-th method drawn: a distinct dash pattern, and a width
    that shrinks with the drawing order (a later line over an equal earlier one leaves it
    visible on both sides)."""
    return {
        "linestyle": LINE_STYLES[index % len(LINE_STYLES)],
        "linewidth": max(2.8 - 0.35 * index, 1.0),
        "zorder": 2 + index,
    }


def band(
    ax: Axes,
    x: np.ndarray,
    curves: np.ndarray,
    label: str,
    *,
    quantiles: tuple[float, float] = QUANTILES,
    **line_style,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Plots the mean of ``curves`` (``(n_seeds, len(x))``) and shades the band between the
    ``quantiles`` over seeds (none for one seed); returns ``(mean, low, high)``."""
    mean, low, high = quantile_band(curves, quantiles)
    (line,) = ax.plot(x, mean, label=label, **line_style)
    if np.atleast_2d(curves).shape[0] > 1:
        zorder = line.get_zorder() - 0.5
        ax.fill_between(x, low, high, color=line.get_color(), alpha=0.15, lw=0, zorder=zorder)
    return mean, low, high


def fit_limits(ax: Axes, values: Sequence[np.ndarray], *, log: bool = False, bounds=None) -> None:
    """Sets the y range to the drawn ``values`` with a small margin (so the differences between
    methods fill the panel), kept within ``bounds`` ``(low, high)`` (e.g. ``(0, 100)`` for a rate
    in percent)."""
    data = np.concatenate([np.ravel(v) for v in values])
    data = data[np.isfinite(data)]
    if log:
        data = data[data > 0]
    if data.size == 0:
        return
    low, high = float(data.min()), float(data.max())
    if log:
        pad = (high / low) ** 0.05 if high > low else 2.0
        low, high = low / pad, high * pad
    else:
        pad = 0.05 * (high - low) if high > low else max(abs(high) * 0.05, 1e-12)
        low, high = low - pad, high + pad
    if bounds is not None:
        low, high = max(low, bounds[0]), min(high, bounds[1])
    ax.set_ylim(low, high)


def curves_figure(
    x: np.ndarray,
    curves: Mapping[str, np.ndarray],
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    logx: bool = False,
    logy: bool = False,
    ylim: tuple[float, float] | None = None,
    fit_from: int = 0,
) -> Figure:
    """One panel of several methods' curves, each a mean with a quantile band over seeds, the y
    range fitted to the curves from index ``fit_from`` on (e.g. past the first steps of a running
    average), within ``ylim`` when given."""
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    drawn: list[np.ndarray] = []
    for i, (name, values) in enumerate(curves.items()):
        drawn.extend(v[fit_from:] for v in band(ax, x, values, name, **style(i)))
    ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    fit_limits(ax, drawn, log=logy, bounds=ylim)
    ax.grid(alpha=0.3, which="both" if logy else "major")
    legend(fig, ax, len(curves))
    return fig


def legend(fig: Figure, ax: Axes, count: int) -> None:
    """The legend inside the panel for a few methods, outside on the right for more (so it
    covers no curve), with fixed margins (room for two title lines): a tight layout measures
    every tick label first, which doubled the time an experiment spent drawing."""
    width = total = fig.get_figwidth()  # inches
    if count > 4:
        total = width + 1.8
        fig.set_figwidth(total)
        ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    else:
        ax.legend(fontsize="small")
    # 0.9 in on the left for tick labels and the axis label, 0.15 in on the right of the panel
    fig.subplots_adjust(left=0.9 / total, right=(width - 0.15) / total, bottom=0.11, top=0.88)


def regret_figure(
    horizons: np.ndarray,
    regrets: Mapping[str, np.ndarray],
    bounds: Mapping[str, np.ndarray],
    *,
    title: str,
    shared_bounds: Mapping[str, np.ndarray] | None = None,
) -> Figure:
    """Regret against the horizon T on log-log axes, each method with its own bound.

    Args:
      regrets: method -> ``(n_seeds, len(horizons))`` regrets.
      bounds: method -> its bound at the horizons, drawn dashed in the method's colour and
        labelled with it; every key must be a method of ``regrets`` (a bound is drawn only for
        the algorithm it bounds). Methods with no bound are left out.
      shared_bounds: label -> values, drawn in black: a statement about every method drawn (e.g.
        the lower bound T/2 that holds for any learner), labelled as such by the caller.
    """
    extra = sorted(set(bounds) - set(regrets))
    if extra:
        raise InputError(f"bounds: {extra} are not methods of the figure ({list(regrets)})")
    fig, ax = plt.subplots(figsize=(6.4, 4.6))
    drawn: list[np.ndarray] = []
    colors: dict[str, Any] = {}
    markers = itertools.cycle(MARKERS)
    for i, (name, values) in enumerate(regrets.items()):
        positive = np.maximum(np.atleast_2d(np.asarray(values, float)), 1e-12)
        line_style = {**style(i), "linestyle": "-", "marker": next(markers), "ms": 3}
        drawn.extend(band(ax, horizons, positive, name, **line_style))
        colors[name] = ax.get_lines()[-1].get_color()
    groups: list[tuple[list[str], np.ndarray]] = []  # methods sharing one bound: one line
    for name in regrets:
        if name in bounds:
            values = np.broadcast_to(np.asarray(bounds[name], float), np.shape(horizons))
            same = [g for g in groups if np.allclose(g[1], values, rtol=1e-12, atol=0)]
            if same:
                same[0][0].append(name)
            else:
                groups.append(([name], values))
    for names, values in groups:
        color = colors[names[0]] if len(names) == 1 else "0.35"
        label = f"bound ({', '.join(names)})"
        ax.plot(horizons, values, "--", color=color, lw=1.2, label=label, zorder=1.5)
        drawn.append(values)
    for (label, values), dash in zip((shared_bounds or {}).items(), ("k:", "k-.", "k--")):
        values = np.broadcast_to(values, np.shape(horizons))
        ax.plot(horizons, values, dash, lw=1.4, label=label)
        drawn.append(values)
    ax.set(title=title, xlabel="horizon T", ylabel="regret")
    ax.set_xscale("log")
    ax.set_yscale("log")
    fit_limits(ax, drawn, log=True)
    ax.grid(alpha=0.3, which="both")
    legend(fig, ax, len(ax.get_lines()))
    return fig
