"""Matplotlib figures, the one place where curves and their bands are drawn.

Every figure draws, per method, the mean over seeds with a band between two quantiles over
seeds (10% and 90% by default: :func:`quantile_band`). A quantile of positive values is
positive, so the band never crosses zero on a log axis (a mean +- std band does), and a rate
band stays within the rate's range. A bound is drawn only beside the algorithm it bounds
(:func:`regret_figure`).

Figures are made for a paper: a method's legend is its name in the tables and files, then
what it is (:data:`DISPLAY_NAMES`, one table), each method a colour of a colour-blind-safe
palette, a dash pattern and a marker, so that methods stay apart in greyscale (:func:`style`);
the legend sits below the axes, in as many columns as fit, long labels wrapped
(:func:`legend`), under a line saying what the bands are; the figure has no title (the caption
says what it shows); the layout is matplotlib's constrained layout, which keeps every label inside
the figure; :func:`save_figure` writes PNG at :data:`DPI` dpi, PDF or SVG.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import contextvars
import functools
import io
import sys
import textwrap
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib

if "ipykernel" not in sys.modules:  # a notebook keeps its inline backend (figures shown)
    matplotlib.use("Agg")  # figures are written to files; no display is needed

import matplotlib.image
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.layout_engine import ConstrainedLayoutEngine

from ojax.fileio import atomic_write, plain_name
from ojax.validation import InputError

QUANTILES = (0.1, 0.9)
"""The default band: from the 10% to the 90% quantile over seeds."""

DPI = 200
"""The resolution of PNG figures (dots per inch)."""

FIGURE_FORMATS = ("png", "pdf", "svg")
"""The file formats :func:`save_figure` writes (``--figure-format``)."""

COLORS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")
"""Okabe and Ito's colour-blind-safe palette (without its yellow, too pale on white)."""
LINE_STYLES = ("-", "--", "-.", ":")
MARKERS = ("o", "s", "^", "D", "v", "P", "X")  # 7 markers x 4 dashes: 28 distinct methods

DISPLAY_NAMES: dict[str, str] = {
    # Denevi et al. 2020
    "ITL": "bias 0",
    "Oracle": "true mean",
    "Aggressive": "ONS",
    "Lazy": "ONS",
    "Aggressive_KT": "KT",
    "Lazy_KT": "KT",
    "Aggressive_SS": "tuned OGD",
    "Lazy_SS": "tuned OGD",
    "Best-bias": "best bias in hindsight",
    # Zhao & Hoi 2010
    "PA": "target only",
    "OTL_fixed": "fixed weights",
    # Neu & Rosasco 2018
    "geometric": "geometric averaging",
    "ridge-sgd": "ridge SGD, averaged",
    "ridge-sgd-last": "ridge SGD, last iterate",
    "geometric-known-cov": "geometric, known covariance",
    "tail": "tail averaging",
    "polyak": "Polyak-Ruppert",
    "ridge": "closed form",
}
"""Code name of a method (as in ``results.csv`` and the printed tables) -> what it is, shown
after the name in a figure's legend."""


def display_name(method: str) -> str:
    """The legend name of `method`: its name in the tables, then what it is
    (:data:`DISPLAY_NAMES`) in parentheses, a suffix `@field=value,...` (a grid point) kept
    after a comma.

    Examples:
      >>> display_name("Lazy_SS"), display_name("Aggressive_KT@wealth=10"), display_name("OGD")
      ('Lazy_SS (tuned OGD)', 'Aggressive_KT (KT), wealth = 10', 'OGD')
    """
    base, _, point = method.partition("@")
    name = f"{base} ({DISPLAY_NAMES[base]})" if base in DISPLAY_NAMES else base
    if not point:
        return name
    return ", ".join([name, *(part.replace("=", " = ") for part in point.split(","))])


def parse_figure_formats(values: str | Iterable[str]) -> tuple[str, ...]:
    """`"png,pdf"` or `["png", "svg,pdf"]` -> `("png", "pdf", "svg")` (each once, in
    order).

    Raises:
      InputError: a format outside :data:`FIGURE_FORMATS`.
    """
    items = [values] if isinstance(values, str) else list(values)
    formats: list[str] = []
    for item in items:
        for part in str(item).split(","):
            fmt = part.strip().lower().lstrip(".")
            if fmt not in FIGURE_FORMATS:
                raise InputError(
                    f"--figure-format must be one or more of {', '.join(FIGURE_FORMATS)} "
                    f"(comma-separated or repeated), got {part.strip()!r}"
                )
            if fmt not in formats:
                formats.append(fmt)
    if not formats:
        raise InputError(f"--figure-format must name a format of {', '.join(FIGURE_FORMATS)}")
    return tuple(formats)


def save_figure(fig: Figure, folder: str | Path, stem: str, formats: Sequence[str] = ("png",)):
    """Writes `fig` as `folder/stem.FORMAT` for each format (PNG at :data:`DPI` dpi; no
    time stamp in the files, fixed SVG ids: the same figure gives the same file) and closes
    it; returns the paths. Each file is written whole, never through a link
    (:func:`ojax.fileio.atomic_write`); inside :func:`pngs_encoded_in_background`, a PNG is
    drawn here, encoded by that block's worker thread and written when the block ends.

    Raises:
      InputError: `stem` is not a plain file name (:func:`ojax.fileio.plain_name`: a stem
        read from a results folder is data, never a path), or a format outside
        :data:`FIGURE_FORMATS`.
    """
    if not plain_name(stem):
        plt.close(fig)
        raise InputError(
            f"figure name {str(stem)[:200]!r} is not a plain file name (no folder, no '..', not "
            "hidden): a figure is written only inside its folder"
        )
    paths = []
    for fmt in parse_figure_formats(formats):
        path = Path(folder) / f"{stem}.{fmt}"
        metadata: dict[str, Any] = {"png": {"Software": None}, "pdf": {"CreationDate": None}}.get(
            fmt, {"Date": None}
        )
        if fmt == "png" and _save_png_in_background(fig, path, metadata):
            paths.append(path)
            continue
        with plt.rc_context({"svg.hashsalt": "ojax"}):  # SVG ids the same from run to run
            atomic_write(path, functools.partial(_save, fig, fmt, metadata))
        paths.append(path)
    plt.close(fig)
    return paths


_Pending = list[tuple[Path, "concurrent.futures.Future[bytes]"]]
_ENCODER: contextvars.ContextVar[tuple[concurrent.futures.Executor, _Pending] | None] = (
    contextvars.ContextVar("ojax_png_encoder", default=None)
)


@contextlib.contextmanager
def pngs_encoded_in_background() -> Iterator[None]:
    """Within it, :func:`save_figure` draws each PNG figure and hands its encoding to a worker
    thread (Pillow compresses without holding the GIL) while the caller draws the next one:
    the same files, the PNG encoding (about a third of a figure's seconds) off the drawing
    thread. The files are written when the block ends, on the caller's thread (off Linux, a
    file's mode reads the umask by setting it for a moment: see `ojax.fileio`), or the first
    error is raised."""
    pending: _Pending = []
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="ojax-png") as pool:
        token = _ENCODER.set((pool, pending))
        try:
            yield
        finally:
            _ENCODER.reset(token)
    for path, future in pending:  # the pool has finished them all
        atomic_write(path, functools.partial(_write_bytes, future.result()))


def _write_bytes(data: bytes, file: Any) -> None:
    file.write(data)


def _save(fig: Figure, fmt: str, metadata: dict[str, Any], file: Any) -> None:
    """`fig` into the open `file` in `fmt` (what :func:`save_figure` hands the writer)."""
    if fmt == "png":
        with _png_layout(fig):
            fig.savefig(file, format="png", dpi=DPI, metadata=metadata)
    else:
        fig.savefig(file, format=fmt, dpi=DPI, metadata=metadata)


def _save_png_in_background(fig: Figure, path: Path, metadata: dict[str, Any]) -> bool:
    """Draws `fig` as :func:`_save` does for PNG and hands its encoding to the encoder of
    :func:`pngs_encoded_in_background`; `False` (nothing done) outside one. The
    pixels are `savefig`'s raw RGBA output; the file is what `savefig`'s PNG writer makes of
    them (`matplotlib.image.imsave` with the figure's dpi and metadata): the same bytes."""
    encoder = _ENCODER.get()
    if encoder is None:
        return False
    with _png_layout(fig):
        raw = io.BytesIO()
        fig.savefig(raw, format="raw", dpi=DPI)
        width = int(fig.bbox.width)
    data = raw.getvalue()
    rgba = memoryview(data).cast("B", (len(data) // (4 * width), width, 4))  # as buffer_rgba()

    def encode() -> bytes:
        png = io.BytesIO()
        matplotlib.image.imsave(png, rgba, format="png", origin="upper", dpi=DPI, metadata=metadata)
        return png.getvalue()

    pool, pending = encoder
    pending.append((path, pool.submit(encode)))
    return True


@contextlib.contextmanager
def _png_layout(fig: Figure) -> Iterator[None]:
    """`fig` at :data:`DPI` dpi (the dpi `savefig` draws at), a constrained layout computed
    once, at that resolution, before the one drawing (`savefig` itself draws the whole figure
    twice: once, not rendered, for the layout, then for the file; the same pixels); restored
    afterwards."""
    engine, dpi = fig.get_layout_engine(), fig.dpi
    constrained = engine if isinstance(engine, ConstrainedLayoutEngine) else None
    try:
        fig.set_dpi(DPI)
        if constrained is not None:
            constrained.execute(fig)
            fig.set_layout_engine("none")  # the positions just computed stay
        yield
    finally:
        fig.set_dpi(dpi)
        if constrained is not None:
            fig.set_layout_engine(constrained)


def clipped_texts(fig: Figure, tolerance: float = 1.0) -> list[str]:
    """What of `fig` reaches past its edges once drawn: every visible, non-empty text (axis
    labels, titles, legend entries, annotations), each axis with the tick labels it draws, and
    each legend; an empty list when nothing is clipped (the check of the tests)."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    box = fig.bbox

    def outside(extent) -> bool:
        return bool(
            extent.x0 < box.x0 - tolerance
            or extent.y0 < box.y0 - tolerance
            or extent.x1 > box.x1 + tolerance
            or extent.y1 > box.y1 + tolerance
        )

    ticks: set[int] = set()  # tick labels: only those drawn count, through their axis's extent
    clipped = []
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            for tick in [*axis.get_major_ticks(), *axis.get_minor_ticks()]:
                ticks.update((id(tick.label1), id(tick.label2)))
            extent = axis.get_tightbbox(renderer)
            if extent is not None and outside(extent):
                clipped.append(f"{axis.axis_name} axis of {ax.get_label() or 'an axes'}")
    for text in fig.findobj(matplotlib.text.Text):
        if id(text) in ticks or not text.get_visible() or not text.get_text().strip():
            continue
        if outside(text.get_window_extent(renderer)):
            clipped.append(text.get_text())
    for box_legend in fig.findobj(matplotlib.legend.Legend):
        if outside(box_legend.get_window_extent(renderer)):
            clipped.append("legend")
    return clipped


def quantile_band(
    curves: np.ndarray, quantiles: tuple[float, float] = QUANTILES
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`(mean, low, high)` over seeds of `curves` (`(n_seeds, length)`): the mean and the
    two quantiles (linear interpolation), each `(length,)`.

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


def style(index: int, *, every: float | None = 0.1) -> dict:
    """The line style of the `index`-th method drawn: a colour of :data:`COLORS`, a dash
    pattern, a marker (the pair of dash and marker differs for 28 methods, so methods stay
    apart in greyscale) every `every` of the axes' diagonal (staggered from one method to the
    next; `None`: at every point), and a width that shrinks a little with the drawing order
    (a later line over an equal earlier one leaves it visible on both sides)."""
    line = {
        "color": COLORS[index % len(COLORS)],
        "linestyle": LINE_STYLES[index % len(LINE_STYLES)],
        "marker": MARKERS[index % len(MARKERS)],
        "markersize": 5.0,
        "markerfacecolor": "white" if (index // len(MARKERS)) % 2 else None,
        "linewidth": max(2.4 - 0.12 * index, 1.3),
        "zorder": 2 + index,
    }
    if every is not None:
        line["markevery"] = ((0.037 * index) % every, every)
    return {k: v for k, v in line.items() if v is not None}


def new_figure(
    nrows: int = 1, ncols: int = 1, *, width: float = 6.4, height: float = 4.0, **subplots
) -> tuple[Figure, Any]:
    """A figure of `nrows x ncols` panels (`width x height` inches) in matplotlib's
    constrained layout, which keeps the labels and the legend below (:func:`legend`) inside
    it; `subplots` go to :func:`matplotlib.pyplot.subplots` (`squeeze`, `sharex`)."""
    with plt.rc_context({"figure.max_open_warning": 0}):  # an experiment draws many at once
        return plt.subplots(nrows, ncols, figsize=(width, height), layout="constrained", **subplots)


LABEL_WIDTH = 40
"""Legend labels longer than this many characters are wrapped."""


def _band_note(axes: Sequence[Axes]) -> str | None:
    """What the bands drawn by :func:`band` on `axes` are (their seeds and quantiles)."""
    gids = [c.get_gid() or "" for ax in axes for c in ax.collections]
    bands = {tuple(float(v) for v in gid.split(":")[1:]) for gid in gids if gid.startswith("band:")}
    if not bands:
        return None
    seeds = sorted({int(b[0]) for b in bands})
    count = f"{seeds[0]}" if len(seeds) == 1 else f"{seeds[0]}-{seeds[-1]}"
    quantiles = sorted({b[1:] for b in bands})
    spans = " or ".join(f"{100 * lo:g}% to {100 * hi:g}%" for lo, hi in quantiles)
    return f"mean over {count} seeds, band from the {spans} quantile over seeds"


def legend(fig: Figure, *axes: Axes, fontsize: float = 8.0, note: str | None = None):
    """One legend for the figure below its panels (`axes`, default all: each label once),
    in as many columns as fit the figure's width, labels longer than :data:`LABEL_WIDTH`
    characters wrapped; the figure grows by the legend's rows. Its title says what the
    bands are (seeds and quantiles, from :func:`band`), then `note`. Returns it (`None` when
    no line has a label)."""
    handles: dict[str, Any] = {}
    for ax in axes or fig.axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(textwrap.fill(label, LABEL_WIDTH), handle)
    if not handles:
        return None
    parts = [_band_note(axes or fig.axes), note]
    title = textwrap.fill("; ".join(p for p in parts if p), 2 * LABEL_WIDTH) or None
    longest = max(len(line) for label in handles for line in label.splitlines())
    entry = (2.0 + 0.8 + 1.6) * fontsize + 0.6 * fontsize * longest  # points
    ncols = max(1, min(len(handles), int((fig.get_figwidth() * 72 - 12) // entry)))
    lines = sum(
        max(label.count("\n") + 1 for label in list(handles)[i : i + ncols])
        for i in range(0, len(handles), ncols)
    )
    lines += 0 if title is None else title.count("\n") + 1
    fig.set_figheight(fig.get_figheight() + lines * 1.45 * fontsize / 72 + 0.15)
    return fig.legend(
        list(handles.values()),
        list(handles),
        loc="outside lower center",
        ncols=ncols,
        fontsize=fontsize,
        frameon=False,
        columnspacing=1.6,
        title=title,
        title_fontsize=fontsize,
    )


def band(
    ax: Axes,
    x: np.ndarray,
    curves: np.ndarray,
    label: str,
    *,
    quantiles: tuple[float, float] = QUANTILES,
    **line_style,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Plots the mean of `curves` (`(n_seeds, len(x))`) and shades the band between the
    `quantiles` over seeds (none for one seed); returns `(mean, low, high)`."""
    mean, low, high = quantile_band(curves, quantiles)
    diverged = not np.isfinite(mean).any()
    if diverged:  # listed in the legend; nothing to mark along its line
        line_style = {**line_style, "markevery": None}
    (line,) = ax.plot(x, mean, label=label, **line_style)
    if diverged:  # its x range still spans the axis (a figure of diverged methods only)
        finite_x = np.asarray(x, np.float64)[np.isfinite(np.asarray(x, np.float64))]
        ax.update_datalim(np.column_stack([finite_x, np.zeros_like(finite_x)]), updatey=False)
        ax.autoscale_view()
    seeds = np.atleast_2d(curves).shape[0]
    if seeds > 1:
        zorder = line.get_zorder() - 0.5
        area = ax.fill_between(
            x, low, high, color=line.get_color(), alpha=0.15, lw=0, zorder=zorder
        )
        area.set_gid(f"band:{seeds}:{quantiles[0]}:{quantiles[1]}")  # what legend() says
    return mean, low, high


def fit_limits(ax: Axes, values: Sequence[np.ndarray], *, log: bool = False, bounds=None) -> None:
    """Sets the y range to the drawn `values` with a small margin (so the differences between
    methods fill the panel), kept within `bounds` `(low, high)` (e.g. `(0, 100)` for a rate
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
    xlabel: str,
    ylabel: str,
    title: str | None = None,
    logx: bool = False,
    logy: bool = False,
    ylim: tuple[float, float] | None = None,
    fit_from: int = 0,
) -> Figure:
    """One panel of several methods' curves, each a mean with a quantile band over seeds, the y
    range fitted to the curves from index `fit_from` on (e.g. past the first steps of a running
    average), within `ylim` when given; the legend below (:func:`legend`). The keys of
    `curves` are the legend's labels; no title unless `title` is given (a paper's figure has
    a caption instead)."""
    fig, ax = new_figure()
    drawn: list[np.ndarray] = []
    early: list[np.ndarray] = []  # the means before `fit_from`, outside the fit
    for i, (name, values) in enumerate(curves.items()):
        every = 0.1 if np.size(x) > 12 else None
        mean, low, high = band(ax, x, values, name, **style(i, every=every))
        drawn.extend(v[fit_from:] for v in (mean, low, high))
        early.append(mean[:fit_from])
    ax.set(xlabel=xlabel, ylabel=ylabel)
    if title:
        ax.set_title(title)
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    fit_limits(ax, drawn, log=logy, bounds=ylim)
    ax.grid(alpha=0.3, which="both" if logy else "major")
    legend(fig, ax, note=_off_scale(ax, early))
    return fig


def _off_scale(ax: Axes, early: Sequence[np.ndarray]) -> str | None:
    """A note on the drawn means `early` (each before the fitted range's first index) that lie
    outside the fitted y range."""
    low, high = ax.get_ylim()
    values = np.concatenate([np.ravel(m) for m in early]) if early else np.zeros(0)
    values = values[np.isfinite(values)]
    if not np.any((values > high) | (values < low)):
        return None
    span = f"{values.min():.3g} to {values.max():.3g}"
    return f"the means over the first {len(early[0])} points span {span}, beyond the scale"


def regret_figure(
    horizons: np.ndarray,
    regrets: Mapping[str, np.ndarray],
    bounds: Mapping[str, np.ndarray],
    *,
    title: str | None = None,
    shared_bounds: Mapping[str, np.ndarray] | None = None,
) -> Figure:
    """Regret against the horizon T on log-log axes, each method with its own bound.

    Args:
      regrets: method -> `(n_seeds, len(horizons))` regrets.
      bounds: method -> its bound at the horizons, drawn dashed in the method's colour and
        labelled with it; every key must be a method of `regrets` (a bound is drawn only for
        the algorithm it bounds). Methods with no bound are left out.
      shared_bounds: label -> values, drawn in black: a statement about every method drawn (e.g.
        the lower bound T/2 that holds for any learner), labelled as such by the caller.
    """
    extra = sorted(set(bounds) - set(regrets))
    if extra:
        raise InputError(f"bounds: {extra} are not methods of the figure ({list(regrets)})")
    fig, ax = new_figure()
    drawn: list[np.ndarray] = []
    colors: dict[str, Any] = {}
    for i, (name, values) in enumerate(regrets.items()):
        positive = np.maximum(np.atleast_2d(np.asarray(values, float)), 1e-12)
        line_style = {**style(i, every=None), "linestyle": "-"}
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
    ax.set(xlabel="horizon T", ylabel="regret")
    if title:
        ax.set_title(title)
    ax.set_xscale("log")
    ax.set_yscale("log")
    fit_limits(ax, drawn, log=True)
    ax.grid(alpha=0.3, which="both")
    legend(fig, ax)
    return fig


__all__ = [
    "COLORS",
    "DISPLAY_NAMES",
    "DPI",
    "FIGURE_FORMATS",
    "LABEL_WIDTH",
    "LINE_STYLES",
    "MARKERS",
    "QUANTILES",
    "band",
    "clipped_texts",
    "curves_figure",
    "display_name",
    "fit_limits",
    "legend",
    "new_figure",
    "parse_figure_formats",
    "pngs_encoded_in_background",
    "quantile_band",
    "regret_figure",
    "save_figure",
    "style",
]
