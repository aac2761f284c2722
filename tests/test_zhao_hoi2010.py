"""The Zhao & Hoi (2010) experiments in their --quick configurations, and with a split file of
one's own (the same numbers as ojax.transfer.run_split on the same rows and orders)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from ojax import transfer
from ojax.app import files as figures
from ojax.datasets import transfer as transfer_data
from ojax.experiments import EXPERIMENTS, zhao_hoi2010
from ojax.plotting import clipped_texts


def _config(name, tmp_path, data_dir, seeds=20):
    return EXPERIMENTS[name].config(
        name=name, seeds=seeds, out=tmp_path / name, data_dir=data_dir, quick=True, quiet=True
    )


def _final(result, dataset, method, metric):
    (row,) = [
        r for r in result.rows if (r.dataset, r.method, r.metric) == (dataset, method, metric)
    ]
    return row


@pytest.fixture(scope="module")
def homogeneous(tmp_path_factory):
    from conftest import DATA_DIR

    spec = EXPERIMENTS["zhao-hoi2010-homogeneous"]
    return spec.load()(_config(spec.name, tmp_path_factory.mktemp("h"), DATA_DIR))


def test_homogeneous_usenet2_ordering(homogeneous):
    rate = {
        m: _final(homogeneous, "usenet2", m, "mistake_rate").mean
        for m in zhao_hoi2010.HOMOGENEOUS_METHODS
    }
    # the paper's ordering on usenet2 (not its numbers: see the spec)
    assert rate["OTL"] < rate["OTL_fixed"]
    assert rate["OTL"] < rate["PAIO"]
    assert rate["PA"] == max(rate.values())


def test_homogeneous_outputs(homogeneous):
    names = {(r.dataset, r.method, r.metric) for r in homogeneous.rows}
    for method in zhao_hoi2010.HOMOGENEOUS_METHODS:
        for metric in ("mistake_rate", "support_vectors", "seconds_per_trial"):
            assert ("usenet2", method, metric) in names
        curve = homogeneous.curves[f"usenet2/{method}/mistake_rate"]
        assert curve.shape == (20, 1200)
        assert np.all((curve >= 0) & (curve <= 100))
    sv = {
        m: _final(homogeneous, "usenet2", m, "support_vectors")
        for m in zhao_hoi2010.HOMOGENEOUS_METHODS
    }
    source = homogeneous.extra_config["datasets_detail"]["usenet2"]["source_support_vectors"]
    # OTL = |SV(h)| + PA's count at the same width; PAIO counts h's
    assert sv["OTL"].mean == pytest.approx(sv["PA"].mean + source)
    assert sv["PAIO"].mean > source
    drawn = figures.draw_result("zhao-hoi2010-homogeneous", homogeneous)
    assert set(drawn) == {"mistake_rate"}
    assert clipped_texts(drawn["mistake_rate"]) == []
    assert "| usenet2 | OTL |" in homogeneous.extra_config["table"]
    assert "paper_mistake_rate" in homogeneous.extra_config
    assert homogeneous.compile_seconds > 0


@pytest.fixture(scope="module")
def heterogeneous(tmp_path_factory):
    from conftest import DATA_DIR

    spec = EXPERIMENTS["zhao-hoi2010-heterogeneous"]
    return spec.load()(_config(spec.name, tmp_path_factory.mktemp("het"), DATA_DIR, seeds=4))


def test_heterogeneous_quick(heterogeneous):
    result = heterogeneous
    for dataset in ("spambase", "mushrooms"):
        rate = {
            m: _final(result, dataset, m, "mistake_rate")
            for m in zhao_hoi2010.HETEROGENEOUS_METHODS
        }
        assert all(0 <= r.mean <= 100 and r.n_seeds == 4 for r in rate.values())
        # the source helps on the first view: COTL beats COTL0's cold start on average
        assert rate["COTL"].mean <= rate["COTL0"].mean + 1.0
        assert result.curves[f"{dataset}/COTL/mistake_rate"].shape == (4, 600)
        # the paper's count (Table 4) beside ours: a COTL update enters both views' expansions
        sv = {m: result.curves[f"{dataset}/{m}/support_vectors"] for m in rate}
        per_view = {m: result.curves[f"{dataset}/{m}/support_vectors_per_view"] for m in rate}
        np.testing.assert_array_equal(per_view["COTL0"], 2 * sv["COTL0"])
        source = 2 * sv["COTL"] - per_view["COTL"]  # |SV(h)|, counted once in both
        assert np.all(source == source[:, :1]) and np.all(source > 0)
        assert np.all(per_view["COTL"][:, -1] > sv["COTL"][:, -1])
        for method in ("PA", "PAIO", "SCT"):
            np.testing.assert_array_equal(per_view[method], sv[method])
        assert np.all(per_view["COTL0"][:, -1] > 1.5 * sv["PA"][:, -1])  # about twice PA's


def test_per_view_count_of_cotl():
    svs = np.array([[40.0, 41.0, 43.0]])  # |SV(h)| = 40 included, then 1 and 3 updates
    np.testing.assert_array_equal(
        zhao_hoi2010.per_view_support_vectors("COTL", svs, 40), [[40.0, 42.0, 46.0]]
    )
    np.testing.assert_array_equal(
        zhao_hoi2010.per_view_support_vectors("COTL0", svs - 40, 0), [[0.0, 2.0, 6.0]]
    )
    np.testing.assert_array_equal(zhao_hoi2010.per_view_support_vectors("SCT", svs, 40), svs)


def _dense(x):
    return x.toarray() if hasattr(x, "toarray") else np.asarray(x)


@pytest.mark.parametrize(
    "name,dataset,heterogeneous",
    [("homogeneous", "usenet2", False), ("heterogeneous", "spambase", True)],
)
def test_split_file_equals_run_split(tmp_path, x64, name, dataset, heterogeneous):
    """``config.split``: an .npz of 0-based dataset rows; only that dataset runs, on exactly
    those orders, with the numbers of run_split on the same rows."""
    from conftest import DATA_DIR

    rng = np.random.default_rng(0)
    source_order = 1000 + rng.permutation(40)
    target_orders = 300 + np.stack([rng.permutation(70) for _ in range(3)])
    path = tmp_path / "split.npz"
    np.savez(path, source_order=source_order, target_orders=target_orders, dataset=dataset)
    spec = EXPERIMENTS[f"zhao-hoi2010-{name}"]
    config = _config(spec.name, tmp_path, DATA_DIR, seeds=20)
    config = dataclasses.replace(config, split=path)
    result = spec.load()(config)
    assert {r.dataset for r in result.rows} == {dataset}
    x, y = transfer_data.load_dataset(dataset, DATA_DIR)
    x = _dense(transfer_data.minmax_rows(x))
    k = x.shape[1] // 2 if heterogeneous else x.shape[1]
    expected = transfer.run_split(
        x[source_order, :k],
        y[source_order],
        np.arange(40),
        x[300:370],
        y[300:370],
        target_orders - 300,
        methods=zhao_hoi2010.HETEROGENEOUS_METHODS if heterogeneous else None,
    )
    for method, want in expected.items():
        rate = result.curves[f"{dataset}/{method}/mistake_rate"]
        assert rate.shape == (3, 70)
        np.testing.assert_array_equal(rate, want.mistake_rate)
        svs = result.curves[f"{dataset}/{method}/support_vectors"]
        np.testing.assert_array_equal(svs, want.support_vectors)
    assert result.extra_config["split_file"] == str(path)


def _numbers(result, dataset):
    """Every row and curve of ``dataset`` but the times."""
    rows = {
        (r.method, r.metric): (r.mean, r.std, r.n_seeds)
        for r in result.rows
        if r.dataset == dataset and r.metric != "seconds_per_trial"
    }
    curves = {
        k: v
        for k, v in result.curves.items()
        if k.startswith(f"{dataset}/") and "seconds_per_trial" not in k
    }
    return rows, curves


def test_dataset_option_runs_that_dataset_with_its_numbers(tmp_path, heterogeneous):
    """``config.dataset``: only that dataset runs, with the rows and curves it has in the run of
    every dataset (mushrooms is second: its permutations come from the second key)."""
    from conftest import DATA_DIR

    spec = EXPERIMENTS["zhao-hoi2010-heterogeneous"]
    config = _config(spec.name, tmp_path, DATA_DIR, seeds=4)
    config = dataclasses.replace(config, dataset="mushrooms")
    alone = spec.load()(config)
    assert {r.dataset for r in alone.rows} == {"mushrooms"}
    rows, curves = _numbers(alone, "mushrooms")
    want_rows, want_curves = _numbers(heterogeneous, "mushrooms")
    assert rows == want_rows and len(rows) == 15  # 5 methods x 3 metrics (times apart)
    assert curves.keys() == want_curves.keys()
    for key, value in curves.items():
        np.testing.assert_array_equal(value, want_curves[key])
    assert list(alone.extra_config["datasets_detail"]) == ["mushrooms"]


def test_dataset_option_homogeneous_usenet2(tmp_path, homogeneous):
    """``--dataset usenet2`` of the homogeneous experiment: its quick run's numbers (the shipped
    orders and the file's own order)."""
    from conftest import DATA_DIR

    spec = EXPERIMENTS["zhao-hoi2010-homogeneous"]
    config = _config(spec.name, tmp_path, DATA_DIR)
    config = dataclasses.replace(config, dataset="usenet2")
    alone = spec.load()(config)
    rows, curves = _numbers(alone, "usenet2")
    want_rows, want_curves = _numbers(homogeneous, "usenet2")
    assert rows == want_rows and len(rows) == 8
    assert curves.keys() == want_curves.keys() and len(curves) == 12
    for key, value in curves.items():
        np.testing.assert_array_equal(value, want_curves[key])


@pytest.mark.parametrize(
    "argv,message",
    [
        (
            ["zhao-hoi2010-homogeneous", "--dataset", "a7a"],
            "--dataset must be one of ['usenet2', 'newsgroup4', 'spambase', 'w7a'] for "
            "zhao-hoi2010-homogeneous, got 'a7a'",
        ),
        (
            ["zhao-hoi2010-heterogeneous", "--dataset", "usenet"],
            "--dataset must be one of ['a7a', 'mushrooms', 'spambase', 'w7a'] for "
            "zhao-hoi2010-heterogeneous, got 'usenet'",
        ),
        (
            ["zhao-hoi2010-heterogeneous", "--dataset", "w7a"],
            "--dataset w7a needs LIBSVM's w7a in the data folder (it is not shipped; see "
            "--data-dir), none of ['w7a', 'w7a.libsvm', 'w7a.libsvm.gz', 'w7a.gz'] is there",
        ),
        (
            ["basics", "--dataset", "usenet2"],
            "--dataset is for theory, zhao-hoi2010-*, not basics",
        ),
    ],
)
def test_bad_dataset_option_exits_2_before_anything_runs(tmp_path, capsys, argv, message):
    from conftest import DATA_DIR

    from ojax.app.cli import main

    out = tmp_path / "out"
    assert main(["run", *argv, "--quick", "--data-dir", str(DATA_DIR), "--out", str(out)]) == 2
    assert capsys.readouterr().err == f"ojax: error: {message}\n"
    assert not out.exists()
