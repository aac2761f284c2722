"""Zhao & Hoi (2010)'s orderings as claims, on the drift protocol of the files shipped here
(each run follows one of the orders ``ID_ALL`` of usenet2.mat / newsgroup4.mat, which shuffle
rows within the concept blocks only), where these files support them; where they do not, the
test asserts what the data shows, with the evidence. Fixed orders, quick sizes.

Measured on all 20 shipped orders (final mistake rate %, mean): usenet2 PA 43.24, PAIO 36.56,
OTL(fixed) 37.99, OTL 33.98 (OTL best and PA worst as in the paper; PAIO below OTL(fixed), the
opposite of Table 2); newsgroup4 PA 49.03, PAIO 41.61, OTL(fixed)
49.85, OTL 62.30 (not the paper's: see test_newsgroup4_otl_follows_a_wrong_source).
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import pytest
from conftest import DATA_DIR

from ojax import transfer
from ojax.datasets import DataError
from ojax.datasets import transfer as transfer_data
from ojax.experiments import zhao_hoi2010
from ojax.transfer import mistake_rate
from ojax.validation import InputError

METHODS = zhao_hoi2010.HOMOGENEOUS_METHODS  # PA, PAIO, OTL_fixed, OTL
ORDERS = 6  # the first shipped orders (and the file's own order, last)


@functools.cache
def _run(name: str) -> tuple[zhao_hoi2010.Dataset, np.ndarray]:
    """The drift dataset on the first shipped orders and, last, the file's order (the
    experiment's default protocol), and the four methods' mistakes ``(ORDERS + 1, T, 4)``."""
    dataset = zhao_hoi2010.drift_dataset(name, DATA_DIR, ORDERS)
    prepared = zhao_hoi2010.prepare_homogeneous(dataset.load())
    timed = zhao_hoi2010.time_method(prepared.combined, dataset.orders)
    return dataset, np.asarray(timed.trace.loss, np.float64)


def _drift(name: str) -> np.ndarray:
    return _run(name)[1]


def _final(mistakes: np.ndarray) -> dict[str, np.ndarray]:
    """Final mistake rate (%) per method over the shipped orders (the file order left out)."""
    return {m: mistake_rate(mistakes[:-1, :, j])[:, -1] for j, m in enumerate(METHODS)}


def _per_block(mistakes: np.ndarray, block: int) -> dict[str, np.ndarray]:
    """Mistake rate (%) per concept block of the target, mean over the shipped orders."""
    t = mistakes.shape[1]
    blocks = mistakes[:-1].reshape(ORDERS, t // block, block, len(METHODS)).mean(axis=(0, 2))
    return {m: 100 * blocks[:, j] for j, m in enumerate(METHODS)}


@pytest.mark.parametrize("name", ["usenet2", "newsgroup4"])
def test_shipped_orders_shuffle_within_the_concept_blocks_only(name):
    ids = transfer_data.shipped_orders(name, DATA_DIR)
    block = transfer_data.DRIFT_BLOCKS[name]
    assert ids.shape == (20, {"usenet2": 1500, "newsgroup4": 1600}[name])
    for row in ids:
        for start in range(0, ids.shape[1], block):
            assert sorted(row[start : start + block]) == list(range(start, start + block))
        assert not np.array_equal(row, np.arange(ids.shape[1]))  # shuffled within blocks
    # the first block is the source: the target streams are the rest, in the shipped orders
    dataset = _run(name)[0]
    assert dataset.orders.shape == (ORDERS + 1, ids.shape[1] - block) and dataset.file_order
    np.testing.assert_array_equal(dataset.orders[:-1], ids[:ORDERS, block:] - block)
    np.testing.assert_array_equal(dataset.orders[-1], np.arange(ids.shape[1] - block))


def test_usenet2_keeps_the_papers_ordering_otl_best_pa_worst():
    rate = _final(_drift("usenet2"))
    means = {m: r.mean() for m, r in rate.items()}
    assert min(means, key=means.get) == "OTL" and max(means, key=means.get) == "PA"
    assert means["OTL"] < means["OTL_fixed"] - 2 and means["OTL"] < means["PAIO"] - 1
    assert np.all(rate["OTL"] < rate["PA"])  # on every order, not only on average


def test_usenet2_paio_gains_far_more_than_slightly():
    """Not Table 2: PAIO gains about 6.7 points over PA (the paper: 1.4, 'slightly') and
    makes fewer mistakes than OTL(fixed) (the paper: more), on average over the orders."""
    means = {m: r.mean() for m, r in _final(_drift("usenet2")).items()}
    assert means["PA"] - means["PAIO"] > 4.0, means  # the paper: 49.33 - 47.92 = 1.41
    assert means["PAIO"] < means["OTL_fixed"], means  # the paper: 47.92 > 42.67


@functools.cache
def _otl_and_source(name: str) -> dict[str, np.ndarray]:
    """OTL alone on the drift dataset's first shipped orders (the file order left out): its
    weights `(w_h, w_f)` used at each step, its predictions and mistakes, and `sign(h)`'s
    predictions and mistakes, each `(ORDERS, T)` (weights `(ORDERS, T, 2)`)."""
    dataset = zhao_hoi2010.drift_dataset(name, DATA_DIR, ORDERS)
    split = dataset.load()
    setup = transfer.prepare_transfer(
        split.source_x, split.source_y, split.target_x, split.target_y, methods=("OTL",)
    )
    otl = setup.methods["OTL"]
    orders = dataset.orders[:-1]
    _, trace = otl.run(orders, record=transfer.weights_record)
    after = np.asarray(trace.record, np.float64)
    weights = np.concatenate([np.full((len(orders), 1, 2), 0.5), after[:, :-1]], axis=1)
    y = np.asarray(otl.ys)[orders]
    source = np.where(np.asarray(otl.xs.offset)[orders] >= 0, 1.0, -1.0)  # sign(h), 0 -> +1
    predicted = np.where(np.asarray(trace.prediction) >= 0, 1.0, -1.0)
    return {
        "weights": weights,
        "agree": (predicted == source).astype(np.float64),
        "otl": np.asarray(trace.loss, np.float64),
        "source": (source != y).astype(np.float64),
    }


def test_usenet2_otl_follows_the_source_classifier():
    """Not the paper's drift adaptation: on the shipped orders OTL puts its weight on h
    (about 0.97 on the first target block, 1.000 after), predicts sign(h) on 99-100 % of the
    rows, and its mistakes per block are sign(h)'s own; the drop on the last block is h's.
    Measured (6 orders, float32): weight on h 0.966, 1.000, 1.000, 1.000; agreement 99.2 %,
    100 %; mistakes OTL 37.3, 37.7, 36.0, 25.0 % against sign(h) 37.0, 37.7, 36.0, 25.0 %;
    sign(h) over the whole target 33.92 %."""
    run = _otl_and_source("usenet2")
    block = transfer_data.DRIFT_BLOCKS["usenet2"]
    t = run["otl"].shape[1]

    def per_block(values):
        return values.reshape(ORDERS, t // block, block, *values.shape[2:]).mean(axis=(0, 2))

    weight_h = per_block(run["weights"])[:, 0]
    assert 0.95 < weight_h[0] < 0.98 and np.all(weight_h[1:] > 0.999), weight_h
    agree = per_block(run["agree"])
    assert agree[0] > 0.985 and np.all(agree[1:] == 1.0), agree
    otl, source = 100 * per_block(run["otl"]), 100 * per_block(run["source"])
    np.testing.assert_allclose(source, [37.0, 37.67, 36.0, 25.0], atol=0.01)
    np.testing.assert_allclose(otl, source, atol=0.5)
    assert 100 * run["source"].mean() == pytest.approx(33.92, abs=0.01)
    mistakes = _drift("usenet2")  # the experiment's run of the four heads: the same OTL
    np.testing.assert_array_equal(mistakes[:-1, :, METHODS.index("OTL")], run["otl"])


def test_newsgroup4_otl_follows_a_wrong_source():
    """The paper has OTL best on newsgroup4 (37.58 %); these files do not support it. The spec
    records that the authors' own toolbox, on these files, finds the first block's source
    classifier wrong on most of the target and OTL following it. Here too: on the second target
    block OTL errs on over 80 % of the samples (the source's concept is the opposite there), and
    OTL ends worst of the four, PAIO best."""
    mistakes = _drift("newsgroup4")
    blocks = _per_block(mistakes, transfer_data.DRIFT_BLOCKS["newsgroup4"])
    # measured (20 orders): OTL 48.0, 86.4, 52.5 per block; PA 50.0, 46.9, 50.2
    assert blocks["OTL"][1] > 80 and blocks["PA"][1] < 55
    means = {m: r.mean() for m, r in _final(mistakes).items()}
    assert max(means, key=means.get) == "OTL" and min(means, key=means.get) == "PAIO"
    # the file's own order gives the same picture (OTL worst), so it is not an order effect
    file_order = {m: mistake_rate(mistakes[-1, :, j])[-1] for j, m in enumerate(METHODS)}
    assert max(file_order, key=file_order.get) == "OTL"


def test_the_order_option_and_its_limits(tmp_path):
    config = zhao_hoi2010.HomogeneousConfig(
        name="zhao-hoi2010-homogeneous", seeds=21, out=tmp_path, quick=True
    )
    assert zhao_hoi2010.order_option(config) == "shipped"
    config = dataclasses.replace(config, order="sorted")
    with pytest.raises(InputError, match="order must be one of"):
        zhao_hoi2010.order_option(config)
    with pytest.raises(InputError, match=r"seeds must be in \[1, 20\].*--order uniform"):
        zhao_hoi2010.drift_dataset("usenet2", DATA_DIR, 21)
    config = dataclasses.replace(config, order="uniform", seeds=2, data_dir=DATA_DIR, quiet=True)
    result = zhao_hoi2010.run_homogeneous(config)  # uniform permutations: no drift, no file run
    assert result.extra_config["datasets_detail"]["usenet2"]["runs"] == "2 uniform permutations"
    assert not any(key.endswith("_file_order") for key in result.curves)
    assert result.curves["usenet2/OTL/mistake_rate"].shape == (2, 1200)


def test_the_order_flag_belongs_to_the_homogeneous_experiment(tmp_path, capsys):
    from ojax.app.cli import main

    assert main(["run", "basics", "--order", "uniform", "--out", str(tmp_path / "b")]) == 2
    assert "--order is for zhao-hoi2010-homogeneous" in capsys.readouterr().err
    assert not (tmp_path / "b").exists()


def test_w7a_is_read_when_brought_and_named_as_not_shipped_when_absent(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(DataError, match="'w7a' not found"):
        transfer_data.load_dataset("w7a", empty)
    if not transfer_data.has_w7a():  # the packaged folder (unless OJAX_DATA_DIR holds w7a)
        with pytest.raises(DataError, match="'w7a' is not shipped"):
            transfer_data.load_dataset("w7a")
    (tmp_path / "w7a").write_text("+1 3:1 300:1\n-1 1:1\n")
    assert transfer_data.has_w7a(tmp_path)
    x, y = transfer_data.load_dataset("w7a", tmp_path)
    assert x.shape == (2, 300) and y.tolist() == [1.0, -1.0] and x[0, 299] == 1.0


def _heterogeneous(name: str, scaling: str, source: int, target: int) -> dict[str, np.ndarray]:
    """Final mistake rates (%) of the five COTL-table methods on 3 fixed permutations."""
    split = transfer_data.heterogeneous_split(
        name, DATA_DIR, scaling=scaling, source_size=source, target_size=target
    )
    prepared = zhao_hoi2010.prepare_heterogeneous(split)
    rng = np.random.default_rng(0)
    orders = np.stack([rng.permutation(prepared.num_target) for _ in range(3)])
    out = {}
    for method in zhao_hoi2010.HETEROGENEOUS_METHODS:
        trace = zhao_hoi2010.time_method(prepared.methods[method], orders).trace
        out[method] = mistake_rate(np.asarray(trace.loss, np.float64))[:, -1]
    return out


def test_mushrooms_cotl_best_at_the_papers_proportions():
    """Table 4's ordering on mushrooms (KEEL stand-in, 2084 + 3560: the paper's proportions).
    Measured (5 permutations): PA 2.38, PAIO 0.61, COTL0 1.32, SCT 1.42, COTL 0.35 (paper 2.56,
    0.66, 1.10, 1.10, 0.38). At the quick sizes (500 + 600) PAIO is still ahead (2.0 vs 3.2):
    COTL's lead needs the long stream."""
    rate = {m: r.mean() for m, r in _heterogeneous("mushrooms", "rows", 2084, 3560).items()}
    assert min(rate, key=rate.get) == "COTL" and max(rate, key=rate.get) == "PA"
    assert rate["COTL"] < rate["COTL0"] - 0.5  # the source's first view helps


def test_spambase_paio_best_not_cotl():
    """Table 4 has COTL best on spambase (11.17 %); these files do not support it. With per-row
    scaling (the toolbox's) every method is near 48 % (the scaling squashes spambase); with
    per-feature scaling (2000 + 1000, 5 permutations) PA 47.1, PAIO 36.7, COTL0 47.0, SCT 46.4,
    COTL 45.4: the source helps, through PAIO most (at 2000 + 2601: PAIO 34.0, COTL 40.9)."""
    rate = {m: r.mean() for m, r in _heterogeneous("spambase", "features", 2000, 1000).items()}
    assert min(rate, key=rate.get) == "PAIO" and rate["PAIO"] < rate["COTL"] - 5
    assert rate["COTL"] < rate["COTL0"] and rate["COTL"] < rate["PA"]
