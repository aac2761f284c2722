"""`--split FILE` with the user's own features: an `.npz` with `x`, `y` and the orders runs
exactly as the same rows of a shipped dataset; a file naming no data is refused."""

from __future__ import annotations

import csv

import numpy as np
import pytest
import scipy.sparse as sp

from ojax.app import cli
from ojax.datasets import DataError
from ojax.datasets import transfer as transfer_data


def _orders(count: int = 3) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return np.arange(300), np.stack(
        [rng.permutation(np.arange(300, 1500))[:40] for _ in range(count)]
    )


def _rows(path):
    with open(path) as f:
        rows = csv.DictReader(f)  # every number but the times
        return [
            {k: v for k, v in r.items() if k != "dataset"}
            for r in rows
            if "seconds" not in r["metric"]
        ]


def test_a_split_file_naming_no_data_is_refused(tmp_path, capsys):
    source, target = _orders()
    path = tmp_path / "split.npz"
    np.savez(path, source_order=source, target_orders=target)
    with pytest.raises(DataError, match=r"needs the data its rows index: 'dataset' .* or its own"):
        transfer_data.load_split_file(path)
    out = tmp_path / "run"
    argv = ["run", "zhao-hoi2010-homogeneous", "--quick", "--quiet", "--split", str(path)]
    assert cli.main([*argv, "--out", str(out)]) == 2  # never usenet2 silently
    assert "'dataset'" in capsys.readouterr().err and not out.exists()


def test_own_features_run_as_the_same_rows_of_the_shipped_dataset(tmp_path, data_dir, capsys):
    source, target = _orders()
    x, y = transfer_data.load_dataset("usenet2", data_dir)
    x = x.toarray() if sp.issparse(x) else np.asarray(x)
    named, own = tmp_path / "named.npz", tmp_path / "own.npz"
    np.savez(named, source_order=source, target_orders=target, dataset=np.array("usenet2"))
    np.savez(own, source_order=source, target_orders=target, x=x, y=y, dataset=np.array("mine"))
    for path in (named, own):
        argv = ["run", "zhao-hoi2010-homogeneous", "--quick", "--quiet", "--split", str(path)]
        assert cli.main([*argv, "--out", str(tmp_path / path.stem)]) == 0
    err = capsys.readouterr().err
    assert err.count("ojax: running zhao-hoi2010-homogeneous: 3 orders, quick, float32 on") == 2
    assert _rows(tmp_path / "named" / "results.csv") == _rows(tmp_path / "own" / "results.csv")
    with open(tmp_path / "own" / "results.csv") as f:
        assert {r["dataset"] for r in csv.DictReader(f)} == {"mine"}


def test_own_features_of_a_heterogeneous_split(tmp_path):
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(20, 6)), np.where(rng.normal(size=20) > 0, 1.0, -1.0)
    path = tmp_path / "split.npz"
    np.savez(path, source_order=np.arange(8), target_orders=np.array([[9, 12, 10]]), x=x, y=y,
             num_source_features=np.array(2))  # fmt: skip
    split_file = transfer_data.load_split_file(path)
    assert split_file.dataset == "own" and split_file.num_source_features == 2
    split, orders = transfer_data.split_from_arrays(
        split_file.x, split_file.y, split_file.source_order, split_file.target_orders,
        heterogeneous=True, num_source_features=split_file.num_source_features,
    )  # fmt: skip
    scaled = transfer_data.minmax_rows(x)
    np.testing.assert_array_equal(split.source_x, scaled[:8, :2])  # the source's view
    np.testing.assert_array_equal(split.target_x, scaled[[9, 10, 12]])  # all features
    np.testing.assert_array_equal(orders, [[0, 2, 1]])
    assert split.num_source_features == 2
    np.savez(path, source_order=np.arange(8), target_orders=np.array([[9]]), x=x, y=y * 0)
    with pytest.raises(DataError, match=r"'y' must take only the values \{-1, \+1\}"):
        transfer_data.load_split_file(path)
