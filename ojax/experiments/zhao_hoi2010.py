"""Zhao & Hoi (2010), online transfer learning: Tables 2 and 4 on the real data here.

Homogeneous (`run_homogeneous`): a source classifier `h` (averaged kernel PA-I, width
sigma_1 = 4) is learned on the first block of usenet2 / newsgroup4 (or a random spambase
split), then PA (sigma_2 = 8), PAIO (from `h`, sigma_1), OTL(fixed) and OTL run on 20 orders
of the target stream (the drift streams: the orders shipped in their files, see below; spambase:
random permutations), all orders in one vmap over a Gram matrix computed once. Heterogeneous
(`run_heterogeneous`): the source sees the first half of the features; PA (whole vector,
sigma = 8), PAIO (first view from `h`), COTL0, SCT and COTL (sigma = 4 per view). C = 5
throughout (the presets `KernelPAParams.paper()`, `OTLParams.paper()`, ... of
:mod:`ojax.transfer`). Everything runs through :func:`ojax.transfer.prepare_transfer` and
:func:`ojax.run` (random permutations, through the sweep engine) or
:func:`ojax.transfer.run_kernel` (given orders: shipped in the files, or of a split file).

Metrics per (dataset, method): `mistake_rate` (percent; the curve is the running average rate
of mistakes against the number of samples), `support_vectors` (after each sample; COTL and
COTL0 count an update once though it adds to both views' expansions), on the heterogeneous
datasets `support_vectors_per_view` (the paper's Table 4 convention: each view's expansion
counted, see :func:`per_view_support_vectors`) and
`seconds_per_trial` (the vmapped run's time after compilation, divided by the number of
permutations; the four homogeneous methods run together in one scan, so their seconds per trial
is that of all four together). The paper's numbers are stored beside ours in `config.json`
(`paper_mistake_rate` and the markdown `table`). The data differ from the paper's in places
(see :mod:`ojax.datasets.transfer`): w7a is not shipped (it runs when its file is in the data
folder), a7a is drawn from the a1a + a1a.t pool, and mushrooms is the KEEL stand-in (5644 rows).

The drift protocol (homogeneous, usenet2 and newsgroup4): by default each run follows one of the
orders `ID_ALL` shipped in the `.mat` file (they shuffle rows within the concept blocks only,
so the drift stays), and the file's own order is one more run reported apart (`config.json`
`datasets_detail`, and `curves.npz` under `DATASET/METHOD/mistake_rate_file_order`);
`--order uniform` draws uniform permutations instead (the drift is then erased). The figure
shows the average rate of mistakes (the paper's Figure 3) and the rate over a sliding window,
with the concept changes dotted.

One dataset alone (`--dataset NAME`, the configuration field `dataset`, one of
:data:`DATASETS`): only it runs, with the numbers it has in the whole run. The set-up of a
dataset (`h`, its outputs, the Gram matrices) is one compiled program
(:mod:`ojax.transfer.prepare`); datasets of the same shapes share their compiled runs
(:mod:`ojax.experiments.zhao_hoi2010_runs`), and the next dataset's file is read on a thread
while the current one computes.

A split of one's own (the configuration field `split`, a path, e.g. `ojax run
zhao-hoi2010-homogeneous --split my_split.npz`): an `.npz` file with the arrays

* `source_order`: `(S,)` integers, 0-based rows of the dataset file (its row order as
  loaded, before any split) forming the source, in the order `h` learns them;
* `target_orders`: `(P, T)` integers, 0-based rows of the dataset file, one target stream
  per row (the target pool is the set of rows they visit; `P` replaces `--seeds`);
* the data they index: `dataset`, a shipped dataset's name (`"usenet2"`; the
  heterogeneous experiment's source sees its first `d // 2` features), or the file's own
  features `x` `(N, d)` and labels `y` `(N,)` in `{-1, +1}` (scaled as the shipped
  ones, per-row min-max; heterogeneous: the source's view is the first
  `num_source_features` features, default `d // 2`, the target sees all `d`); a file
  with neither is refused.

MATLAB's 1-based indices (the authors' toolbox's `ID_ALL`) must be converted with `- 1`, and
indices counting rows of the target block only must be offset by the source size. Only that
dataset runs, on exactly those orders. See :func:`ojax.datasets.transfer.load_split_file`; in
Python, :func:`ojax.transfer.run_split` takes the arrays directly.
"""

from __future__ import annotations

import concurrent.futures
import functools
import importlib
import time
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import numpy as np

from ojax import transfer
from ojax.datasets import transfer as transfer_data
from ojax.experiments.zhao_hoi2010_options import (  # noqa: F401 (re-exported)
    DATASETS,
    ORDERS,
    HomogeneousConfig,
    ZhaoHoiConfig,
    dataset_option,
    order_option,
)
from ojax.experiments.zhao_hoi2010_runs import (  # noqa: F401 (re-exported)
    Timed,
    method_traces,
    run_method,
    time_method,
)
from ojax.results import ExperimentResult, split_key
from ojax.sweep.experiment import ExperimentConfig, ExperimentSpec
from ojax.transfer.pa import PAPER_C, PAPER_LEARNING_RATE, PAPER_SOURCE_WIDTH, PAPER_TARGET_WIDTH
from ojax.validation import InputError

C = PAPER_C
SIGMA_SOURCE, SIGMA_TARGET = PAPER_SOURCE_WIDTH, PAPER_TARGET_WIDTH  # h / PAIO, PA / OTL's f
SIGMA_VIEW, SIGMA_WHOLE = PAPER_SOURCE_WIDTH, PAPER_TARGET_WIDTH  # each view, PA on the whole

HOMOGENEOUS_METHODS = transfer.HOMOGENEOUS_HEADS  # PA, PAIO, OTL_fixed, OTL (Table 2)
HETEROGENEOUS_METHODS = transfer.HETEROGENEOUS_METHODS  # PA, PAIO, COTL0, SCT, COTL (Table 4)

PAPER_TABLE2 = {  # mistake rate (%), Zhao & Hoi 2010, Table 2
    "usenet2": {"PA": 49.33, "PAIO": 47.92, "OTL_fixed": 42.67, "OTL": 34.42},
    "newsgroup4": {"PA": 42.50, "PAIO": 51.75, "OTL_fixed": 38.83, "OTL": 37.58},
    "w7a": {"PA": 2.86, "PAIO": 2.34, "OTL_fixed": 2.22, "OTL": 1.87},
}
PAPER_TABLE4 = {  # mistake rate (%), Zhao & Hoi 2010, Table 4
    "a7a": {"PA": 22.08, "PAIO": 22.60, "COTL0": 21.62, "SCT": 26.06, "COTL": 21.32},
    "mushrooms": {"PA": 2.56, "PAIO": 0.66, "COTL0": 1.10, "SCT": 1.10, "COTL": 0.38},
    "spambase": {"PA": 25.04, "PAIO": 14.41, "COTL0": 12.78, "SCT": 12.71, "COTL": 11.17},
    "w7a": {"PA": 3.85, "PAIO": 3.53, "COTL0": 3.34, "SCT": 3.22, "COTL": 3.04},
}


def prepare_homogeneous(split: transfer_data.Split, dtype: Any = None) -> transfer.TransferSetup:
    """Source classifier, Gram matrices and the four methods of a homogeneous split (each on
    its own, and all four in one scan: `combined`), with the paper's hyperparameters."""
    return transfer.prepare_transfer(
        split.source_x,
        split.source_y,
        split.target_x,
        split.target_y,
        methods=HOMOGENEOUS_METHODS,
        combined=True,
        dtype=dtype,
    )


def prepare_heterogeneous(split: transfer_data.Split, dtype: Any = None) -> transfer.TransferSetup:
    """Source classifier on the first view, per-view and whole Gram matrices, five methods."""
    k = split.num_source_features
    if split.source_x.shape[1] != k:
        raise InputError(
            f"source_x has {split.source_x.shape[1]} features but num_source_features={k}"
        )
    transfer_data.view_split(split.target_x, k)  # k must leave a second view
    return transfer.prepare_transfer(
        split.source_x,
        split.source_y,
        split.target_x,
        split.target_y,
        methods=HETEROGENEOUS_METHODS,
        dtype=dtype,
    )


def window_rate(rate: np.ndarray, window: int) -> np.ndarray:
    """The rate of mistakes (percent) over the last `window` samples, from the running average
    `rate` (`(..., T)`, percent); before `window` samples, the running average.

    Examples:
      >>> print(window_rate(transfer.mistake_rate([1.0, 1.0, 0.0, 0.0]), 2).tolist())
      [100.0, 100.0, 50.0, 0.0]
    """
    rate = np.asarray(rate, np.float64)
    cum = rate * np.arange(1, rate.shape[-1] + 1) / 100.0
    out = rate.copy()
    out[..., window:] = 100.0 * (cum[..., window:] - cum[..., :-window]) / window
    return np.clip(out, 0.0, 100.0)


def figures(run) -> dict[str, Any]:
    """The plot function of `zhao-hoi2010-*` (:mod:`ojax.app.files`):
    `mistake_rate`, per dataset the average rate of mistakes against the number of samples
    (the paper's Figure 3) and, below, the rate over a sliding window, with the drift's block
    boundaries dotted where the orders keep the blocks (`config.json`'s `datasets_detail`)."""
    curves: dict[str, dict[str, np.ndarray]] = {}
    for key, curve in run.curves.items():
        dataset, method, metric = split_key(key)
        if metric == "mistake_rate":
            curves.setdefault(dataset, {})[method] = curve.values
    return (
        {"mistake_rate": _figure(curves, run.config.get("datasets_detail", {}))} if curves else {}
    )


def _figure(curves: dict[str, dict[str, np.ndarray]], details: dict[str, Any]):
    from ojax.plotting import band, display_name, fit_limits, legend, new_figure, style

    names = list(curves)
    fig, axes = new_figure(
        2, len(names), width=max(4.2 * len(names), 6.4), height=6.4, squeeze=False, sharex="col"
    )
    for col, name in enumerate(names):
        info = details.get(name, {})
        top, bottom = axes[0, col], axes[1, col]
        length = next(iter(curves[name].values())).shape[-1]
        window = info["block"] // 5 if info.get("block") else max(length // 20, 10)
        x = np.arange(1, length + 1)
        drawn: tuple[list, list] = ([], [])
        for i, (method, values) in enumerate(curves[name].items()):
            label = display_name(method)
            drawn[0].extend(band(top, x, values, label, **style(i)))
            later = window_rate(values, window)[:, window - 1 :]  # full windows only
            drawn[1].extend(band(bottom, x[window - 1 :], later, label, **style(i)))
        for ax, lines in zip((top, bottom), drawn):  # the range after the first window
            fit_limits(ax, [v[-(length - window) :] for v in lines], bounds=(0.0, 100.0))
            for edge in info.get("block_edges", []):
                ax.axvline(edge, color="0.4", lw=0.9, ls=":", zorder=1)
            ax.grid(alpha=0.3)
        top.set_title(name, fontsize="medium")  # the panel's dataset
        top.set(ylabel="average rate of mistakes (%)" if col == 0 else "")
        edges = "\n(dotted: concept changes)" if info.get("block_edges") else ""
        bottom.set(
            xlabel=f"number of target samples{edges}",
            ylabel=f"mistakes in the last {window} samples (%)",
        )
    legend(fig)
    return fig


def table(
    result: ExperimentResult, paper: dict[str, dict[str, float]], methods: tuple[str, ...]
) -> str:
    """A markdown table like the paper's: mistake rate mean +- std (paper), SVs, seconds."""
    rows = {(r.dataset, r.method, r.metric): r for r in result.rows}
    datasets = list(dict.fromkeys(r.dataset for r in result.rows))
    lines = [
        "| dataset | method | mistake rate % (ours) | paper | support vectors | seconds/trial |",
        "|---|---|---|---|---|---|",
    ]
    for name in datasets:
        for method in methods:
            if (name, method, "mistake_rate") not in rows:
                continue
            m = rows[(name, method, "mistake_rate")]
            sv = rows[(name, method, "support_vectors")]
            sec = rows[(name, method, "seconds_per_trial")]
            ref = paper.get(name, {}).get(method)
            ref_s = "-" if ref is None else f"{ref:.2f}"
            lines.append(
                f"| {name} | {method} | {m.mean:.2f} +- {m.std:.2f} | {ref_s} | "
                f"{sv.mean:.1f} +- {sv.std:.1f} | {sec.mean:.4f} |"
            )
    return "\n".join(lines)


def per_view_support_vectors(method: str, svs: np.ndarray, base: Any) -> np.ndarray:
    """The paper's count of support vectors (Table 4): summed over the views' expansions.

    COTL and COTL0 store each update once with both of its views (`svs`, `|SV(h)|`
    included for COTL); the paper counts it in each view's expansion, so its count is
    `2 (svs - |SV(h)|) + |SV(h)|` (COTL0: `2 svs`, about twice PA's). The other methods'
    counts are the same either way (one view, or SCT's two classifiers counted apart).
    """
    svs = np.asarray(svs, np.float64)
    if method not in ("COTL", "COTL0"):
        return svs
    base = float(np.sum(base))
    return 2.0 * (svs - base) + base


class Dataset(NamedTuple):
    """One dataset of an experiment: its name, its split, and the target orders of a split
    file (`None`: `config.seeds` random permutations)."""

    name: str
    load: Callable[[], transfer_data.Split]
    orders: np.ndarray | None = None
    block: int | None = None  # the drift's block size where the orders keep the blocks
    file_order: bool = False  # the last row of ``orders`` is the file's own order (one run)
    position: int | None = None  # its place in the experiment's list (its PRNG key); None: as run


def _run_dataset(
    config, dataset: Dataset, prepare, methods, key, result, curves
) -> tuple[dict[str, Any], float]:
    """Runs every method on one dataset; adds its rows and curves; returns its details and its
    compile seconds."""
    start = time.perf_counter()
    split = dataset.load()
    prepared = prepare(split)
    details = {
        "source_size": int(split.source_x.shape[0]),
        "target_size": prepared.num_target,
        "features": int(split.target_x.shape[1]),
        "source_features": int(split.num_source_features),
        "source_support_vectors": prepared.source_support_vectors,
        "load_gram_seconds": None,
        "gram_seconds": prepared.gram_seconds,
    }
    compile_total = 0.0
    curves[dataset.name] = {}
    traces = method_traces(config, dataset.name, prepared, methods, key, dataset.orders)
    file_order: dict[str, float] = {}
    shared = "+".join(methods) if prepared.combined is not None else ""  # timed together
    for method, mistakes, svs, per_trial, compile_seconds in traces:
        compile_total += compile_seconds
        rate = transfer.mistake_rate(mistakes)
        if dataset.file_order:  # the last order is the file's own: reported apart
            result.curves[f"{dataset.name}/{method}/mistake_rate_file_order"] = rate[-1:]
            file_order[method] = float(rate[-1, -1])
            rate, svs = rate[:-1], svs[:-1]
        result.add(dataset.name, method, "mistake_rate", rate)
        result.add(dataset.name, method, "support_vectors", svs)
        if split.num_source_features < split.target_x.shape[1]:  # heterogeneous: two views
            base = (
                prepared.methods[method].base_support_vectors if method in prepared.methods else 0
            )
            per_view = per_view_support_vectors(method, svs, base)
            result.add(dataset.name, method, "support_vectors_per_view", per_view)
        seconds = np.full(len(rate), per_trial)
        result.add(dataset.name, method, "seconds_per_trial", seconds, shared=shared)
        curves[dataset.name][method] = rate
    details.update(_runs_detail(dataset, prepared.num_target, len(rate), file_order))
    details["gram_seconds"] += prepared.methods.seconds  # the matrices built for later methods
    details["load_gram_seconds"] = time.perf_counter() - start
    return details, compile_total


def _runs_detail(
    dataset: Dataset, num_target: int, runs: int, file_order: dict[str, float]
) -> dict[str, Any]:
    """What the runs of a dataset were (for `config.json` and the figure's titles)."""
    if dataset.orders is None:
        out: dict[str, Any] = {"runs": f"{runs} uniform permutations"}
    elif dataset.file_order:
        out = {"runs": f"{runs} shipped orders", "file_order_mistake_rate": file_order}
    else:
        out = {"runs": f"{runs} orders of the split file"}
    if dataset.block:
        out["block"] = dataset.block
        out["block_edges"] = list(range(dataset.block, num_target, dataset.block))
    return out


def _dataset_keys(count: int) -> list[jax.Array]:
    """The PRNG keys of the first `count` datasets of an experiment (one split each)."""
    key, keys = jax.random.key(0), []
    for _ in range(count):
        key, sub = jax.random.split(key)
        keys.append(sub)
    return keys


def _run(
    config: ZhaoHoiConfig,
    datasets: list[Dataset],
    prepare: Callable[[transfer_data.Split], transfer.TransferSetup],
    methods: tuple[str, ...],
    paper: dict[str, dict[str, float]],
    title: str,
) -> ExperimentResult:
    result = ExperimentResult()
    positions = [i if d.position is None else d.position for i, d in enumerate(datasets)]
    keys = _dataset_keys(max(positions) + 1)
    curves: dict[str, dict[str, np.ndarray]] = {}
    details: dict[str, Any] = {}
    compile_total = 0.0
    # each file is read (inflated, parsed, scaled) on a thread while the dataset before it
    # computes, and matplotlib imported while the last one does: NumPy and zlib release the
    # GIL, and neither uses JAX (one dataset ahead: the next split only is held beside the
    # current one's Gram matrices)
    loader = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="ojax-load")
    try:
        coming = loader.submit(datasets[0].load)
        steps = list(zip(datasets, positions, [*datasets[1:], None]))
        for dataset, at, after in config.progress(steps, desc=title, total=len(datasets)):
            split = coming  # freed with its dataset: the next one rebinds it
            if after is not None:
                coming = loader.submit(after.load)
            else:
                loader.submit(importlib.import_module, "ojax.plotting")  # for the figure
            details[dataset.name], seconds = _run_dataset(
                config,
                dataset._replace(load=split.result),
                prepare,
                methods,
                keys[at],
                result,
                curves,
            )
            compile_total += seconds
    finally:
        loader.shutdown(wait=False, cancel_futures=True)
    result.compile_seconds = compile_total
    split_file = config.split
    result.extra_config.update(
        {
            "paper_mistake_rate": paper,
            "table": table(result, paper, methods),
            "datasets_detail": details,
            "settings": {
                "C": C,
                "sigma_source": SIGMA_SOURCE,
                "sigma_target": SIGMA_TARGET,
                "sigma_view": SIGMA_VIEW,
                "sigma_whole": SIGMA_WHOLE,
                "eta": PAPER_LEARNING_RATE,
                "gamma1": 1.0,
                "gamma2": 1.0,
                "scaling": "per-row min-max",
                "permutations": {name: d["runs"] for name, d in details.items()},
                "order": "split file" if split_file is not None else order_option(config),
            },
        }
    )
    if split_file is not None:
        result.extra_config["split_file"] = str(split_file)
    return result


def _split_file_dataset(config: ZhaoHoiConfig, default: str, heterogeneous: bool) -> Dataset:
    """The dataset of the split file `config.split` (see the module doc for its layout)."""
    assert config.split is not None  # callers come here only with a split file
    file = transfer_data.load_split_file(config.split)  # a dataset's name, or its own x and y
    name, rows = file.dataset or default, (file.source_order, file.target_orders)
    if file.x is not None:
        k = file.num_source_features
        split, orders = transfer_data.split_from_arrays(
            file.x, file.y, *rows, heterogeneous=heterogeneous, num_source_features=k
        )
    else:
        split, orders = transfer_data.split_from_orders(
            name, *rows, config.data_dir, heterogeneous=heterogeneous
        )
    return Dataset(name, lambda: split, orders)


def drift_dataset(name: str, data_dir: Any, num_orders: int) -> Dataset:
    """A drift stream (usenet2, newsgroup4) on its first `num_orders` shipped orders and, last,
    the file's own order: the source `h` learns the first block in the file's order; each
    order's target stream is the rest of its permutation (shuffled within blocks)."""
    _, n_source, n_target, _ = transfer_data.HOMOGENEOUS[name]
    ids = transfer_data.shipped_orders(name, data_dir)
    if not 1 <= num_orders <= len(ids):
        raise InputError(
            f"seeds must be in [1, {len(ids)}] with the orders shipped in {name} (one run per "
            f"order), got {num_orders}; use --order uniform for more runs"
        )
    target = ids[:num_orders, n_source : n_source + n_target]
    rows = np.concatenate([target, np.arange(n_source, n_source + n_target)[None]])
    # the pool is the target block in file order: the orders are the rows less the source size
    # (split_from_orders's positions), known before the data is read
    orders = np.searchsorted(np.unique(rows), rows).astype(np.int32)
    load = functools.partial(_drift_split, name, rows, data_dir, orders)
    block = transfer_data.DRIFT_BLOCKS[name]
    return Dataset(name, load, orders, block=block, file_order=True)


def _drift_split(name: str, rows: np.ndarray, data_dir: Any, orders: np.ndarray):
    """The split of a drift stream: the first block (file order) as the source, the rows that
    `rows` visit as the target pool."""
    source = np.arange(transfer_data.HOMOGENEOUS[name][1])
    split, positions = transfer_data.split_from_orders(name, source, rows, data_dir)
    assert np.array_equal(positions, orders)  # the pool is what drift_dataset assumed
    return split


def _selected(config: ZhaoHoiConfig, experiment: str, names: list[str]):
    """`(place, name)` of the datasets to run: all of `names`, or `config.dataset`."""
    chosen = dataset_option(experiment, config.dataset, config.split, config.data_dir)
    if chosen is None:
        return list(enumerate(names))
    return [(names.index(chosen) if chosen in names else 0, chosen)]


def run_homogeneous(config: HomogeneousConfig) -> ExperimentResult:
    """Table 2 on usenet2, newsgroup4 and spambase, and w7a when its file is in the data folder
    (`--quick`: usenet2 only; `config.dataset`: that one only; with a split file
    `config.split`: its dataset and orders only). The drift streams run on their shipped
    orders unless `config.order` is `"uniform"` (:data:`ORDERS`)."""
    order = order_option(config)
    if config.split is not None:
        datasets = [_split_file_dataset(config, "usenet2", heterogeneous=False)]
    else:
        names = ["usenet2"] if config.quick else ["usenet2", "newsgroup4", "spambase"]
        if not config.quick and transfer_data.has_w7a(config.data_dir):
            names.append("w7a")
        datasets = [
            (
                drift_dataset(name, config.data_dir, config.seeds)
                if order == "shipped" and name in transfer_data.DRIFT_BLOCKS
                else Dataset(
                    name, functools.partial(transfer_data.homogeneous_split, name, config.data_dir)
                )
            )._replace(position=at)
            for at, name in _selected(config, "zhao-hoi2010-homogeneous", names)
        ]
    return _run_table(config, datasets, homogeneous=True)


def _run_table(
    config: ZhaoHoiConfig, datasets: list[Dataset], homogeneous: bool
) -> ExperimentResult:
    """Table 2 (`homogeneous`) or Table 4 on `datasets`; a whole run that has spambase adds it
    again with per-feature scaling."""
    methods: tuple[str, ...]
    if homogeneous:
        prepare, methods, table = prepare_homogeneous, HOMOGENEOUS_METHODS, PAPER_TABLE2
        title = "Zhao & Hoi 2010, homogeneous OTL"
    else:
        prepare, methods, table = prepare_heterogeneous, HETEROGENEOUS_METHODS, PAPER_TABLE4
        title = "Zhao & Hoi 2010, heterogeneous OTL (COTL)"
    result = _run(config, datasets, prepare, methods, table, title)
    own = config.split is not None
    if not config.quick and not own and any(d.name == "spambase" for d in datasets):
        result.extra_config["spambase_per_feature_scaling"] = _per_feature_spambase(
            config, homogeneous
        )
    return result


def run_heterogeneous(config: ZhaoHoiConfig) -> ExperimentResult:
    """Table 4 on a7a (a1a pool), mushrooms (KEEL stand-in) and spambase, and w7a when its file
    is in the data folder.

    `--quick`: spambase and mushrooms with 500 source and 600 target examples;
    `config.dataset`: that one only; with a split file `config.split`: its dataset and
    orders only (the source sees the first half of the features).
    """
    if config.split is not None:
        datasets = [_split_file_dataset(config, "spambase", heterogeneous=True)]
    else:
        names = ["spambase", "mushrooms"] if config.quick else ["a7a", "mushrooms", "spambase"]
        if not config.quick and transfer_data.has_w7a(config.data_dir):
            names.append("w7a")
        source_size, target_size = (500, 600) if config.quick else (None, None)
        datasets = [
            Dataset(
                name,
                functools.partial(
                    transfer_data.heterogeneous_split,
                    name,
                    config.data_dir,
                    source_size=source_size,
                    target_size=target_size,
                ),
                position=at,
            )
            for at, name in _selected(config, "zhao-hoi2010-heterogeneous", names)
        ]
    return _run_table(config, datasets, homogeneous=False)


def _per_feature_spambase(config: ExperimentConfig, homogeneous: bool) -> dict[str, Any]:
    """Spambase again with per-feature scaling (the per-row scaling squashes it)."""
    methods: tuple[str, ...]
    if homogeneous:
        split = transfer_data.homogeneous_split("spambase", config.data_dir, scaling="features")
        prepared, methods = prepare_homogeneous(split), HOMOGENEOUS_METHODS
    else:
        split = transfer_data.heterogeneous_split("spambase", config.data_dir, scaling="features")
        prepared, methods = prepare_heterogeneous(split), HETEROGENEOUS_METHODS
    out = {}
    traces = method_traces(config, "spambase-per-feature", prepared, methods, jax.random.key(1))
    for method, mistakes, svs, _, _ in traces:
        final = transfer.mistake_rate(mistakes)[:, -1]
        out[method] = {
            "mistake_rate_mean": float(final.mean()),
            "mistake_rate_std": float(final.std()),
            "support_vectors_mean": float(np.asarray(svs)[:, -1].mean()),
        }
    return out


HOMOGENEOUS = ExperimentSpec(
    name="zhao-hoi2010-homogeneous",
    summary="Zhao & Hoi 2010: online transfer learning, homogeneous domains (usenet2, "
    "newsgroup4, spambase)",
    run=run_homogeneous,
    plot=figures,
    config=HomogeneousConfig,
    default_seeds=20,
    data_files=("usenet2.mat", "newsgroup4.mat", "spambase.csv.gz"),
    quick_data_files=("usenet2.mat",),
    figures=("mistake_rate.png",),
    page="reproductions/zhao-hoi2010.md",
)
HETEROGENEOUS = ExperimentSpec(
    name="zhao-hoi2010-heterogeneous",
    summary="Zhao & Hoi 2010: co-regularized online transfer learning, heterogeneous domains "
    "(a7a, mushrooms, spambase)",
    run=run_heterogeneous,
    plot=figures,
    config=ZhaoHoiConfig,
    default_seeds=20,
    data_files=("a1a.libsvm.gz", "a1a_t.libsvm.gz", "mushrooms_keel.csv.gz", "spambase.csv.gz"),
    quick_data_files=("spambase.csv.gz", "mushrooms_keel.csv.gz"),
    figures=("mistake_rate.png",),
    page="reproductions/zhao-hoi2010.md",
)


__all__ = [
    "Dataset",
    "HETEROGENEOUS",
    "HOMOGENEOUS",
    "PAPER_TABLE2",
    "PAPER_TABLE4",
    "drift_dataset",
    "figures",
    "per_view_support_vectors",
    "prepare_heterogeneous",
    "prepare_homogeneous",
    "run_heterogeneous",
    "run_homogeneous",
    "table",
    "window_rate",
]
