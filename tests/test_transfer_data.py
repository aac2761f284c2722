"""Loaders and splits of the online transfer data (ojax.datasets.transfer): malformed files give
a DataError naming the file and the line; the real files load with their documented shapes; a
split file of one's own (.npz) is read and validated."""

from __future__ import annotations

import gzip

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

from ojax.datasets import DataError
from ojax.datasets import transfer as transfer_data
from ojax.validation import InputError


def test_malformed_files(tmp_path):
    libsvm = tmp_path / "bad.libsvm"
    libsvm.write_text("+1 1:0.5 3:1\n-1 2:x\n")
    with pytest.raises(DataError, match="line 2.*index:value"):
        transfer_data.load_libsvm(libsvm)
    libsvm.write_text("+1 3:0.5 2:1\n")
    with pytest.raises(DataError, match="increase"):
        transfer_data.load_libsvm(libsvm)
    libsvm.write_text("2 1:0.5\n")
    with pytest.raises(DataError, match="labels must be -1 or \\+1"):
        transfer_data.load_libsvm(libsvm)
    good = tmp_path / "good.libsvm.gz"
    with gzip.open(good, "wt") as f:
        f.write("+1 1:0.5 3:1\n-1 2:2\n")
    x, y = transfer_data.load_libsvm(good)
    np.testing.assert_array_equal(x.toarray(), [[0.5, 0, 1], [0, 2, 0]])
    np.testing.assert_array_equal(y, [1, -1])
    with pytest.raises(DataError, match="exceeds num_features"):
        transfer_data.load_libsvm(good, num_features=2)
    spam = tmp_path / "spam.csv"
    spam.write_text("a,b,type\n1,2,spam\n1,2,maybe\n")
    with pytest.raises(DataError, match="line 3.*'spam' or 'nonspam'"):
        transfer_data.load_spambase(spam)
    spam.write_text("a,b,type\n1,nan,spam\n")
    with pytest.raises(DataError, match="finite"):
        transfer_data.load_spambase(spam)
    spam.write_text("a,b,type\n1,2\n")
    with pytest.raises(DataError, match="expected 3 columns"):
        transfer_data.load_spambase(spam)
    mush = tmp_path / "mush.csv"
    mush.write_text("x,s,e\nx,y,q\n")
    with pytest.raises(DataError, match="'e' or 'p'"):
        transfer_data.load_mushrooms_keel(mush)
    mat = tmp_path / "stream.mat"
    scipy.io.savemat(mat, {"X": np.zeros((3, 3))})
    with pytest.raises(DataError, match="variable 'data'"):
        transfer_data.load_mat_stream(mat)
    scipy.io.savemat(mat, {"data": np.array([[1, 0, 1], [3, 1, 0]], np.int16)})
    with pytest.raises(DataError, match="labels must be -1 or \\+1"):
        transfer_data.load_mat_stream(mat)
    (tmp_path / "junk.mat").write_bytes(b"not a mat file")
    with pytest.raises(DataError, match="cannot read"):
        transfer_data.load_mat_stream(tmp_path / "junk.mat")
    with pytest.raises(DataError, match="not found"):
        transfer_data.load_spambase(tmp_path / "missing.csv")


def test_loaders_on_real_files(data_dir):
    x, y = transfer_data.load_dataset("newsgroup4", data_dir)
    assert sp.issparse(x) and x.shape == (1600, 62061) and x.dtype == np.float64
    assert set(np.unique(y)) == {-1.0, 1.0}
    scaled = transfer_data.minmax_rows(x)
    assert sp.issparse(scaled)
    dense_rows = scaled[:5].toarray()
    np.testing.assert_allclose(dense_rows.max(axis=1), 1.0)
    np.testing.assert_allclose(dense_rows, transfer_data.minmax_rows(x[:5].toarray()))
    xm, ym = transfer_data.load_dataset("mushrooms", data_dir)
    assert xm.shape[0] == 5644 and np.all(xm.sum(axis=1) == 22)  # one category per column
    xa, ya = transfer_data.load_dataset("a7a", data_dir)
    assert xa.shape == (1605 + 30956, 123)
    split = transfer_data.heterogeneous_split("spambase", data_dir)
    assert split.source_x.shape == (2000, 28) and split.target_x.shape == (2601, 57)
    feat = transfer_data.minmax_features(np.array([[0.0, 5.0], [2.0, 5.0], [4.0, 5.0]]))
    np.testing.assert_allclose(feat, [[0, 5], [0.5, 5], [1, 5]])


def test_view_split():
    x = np.arange(12.0).reshape(3, 4)
    first, second = transfer_data.view_split(x, 1)
    np.testing.assert_array_equal(first, x[:, :1])
    np.testing.assert_array_equal(second, x[:, 1:])
    for bad in (4, 0, 1.5):
        with pytest.raises(InputError, match="num_source_features"):
            transfer_data.view_split(x, bad)


def test_split_file(tmp_path, data_dir):
    path = tmp_path / "split.npz"
    np.savez(
        path,
        source_order=np.array([5, 0, 3]),
        target_orders=np.array([[9, 7], [7, 9]]),
        dataset=np.array("usenet2"),
    )
    split_file = transfer_data.load_split_file(path)
    assert split_file.dataset == "usenet2"
    np.testing.assert_array_equal(split_file.source_order, [5, 0, 3])
    split, orders = transfer_data.split_from_orders(
        "usenet2", split_file.source_order, split_file.target_orders, data_dir
    )
    x, y = transfer_data.load_dataset("usenet2", data_dir)
    x = transfer_data.minmax_rows(x)
    dense = x.toarray() if sp.issparse(x) else x
    source = split.source_x.toarray() if sp.issparse(split.source_x) else split.source_x
    np.testing.assert_array_equal(source, dense[[5, 0, 3]])
    np.testing.assert_array_equal(split.target_y, y[[7, 9]])  # the pool: sorted distinct rows
    np.testing.assert_array_equal(orders, [[1, 0], [0, 1]])
    hetero, _ = transfer_data.split_from_orders(
        "spambase", [1, 2], [[3, 4]], data_dir, heterogeneous=True
    )
    assert hetero.source_x.shape == (2, 28) and hetero.num_source_features == 28
    with pytest.raises(InputError, match="target_orders.*1-based MATLAB"):
        transfer_data.split_from_orders("usenet2", [0], [[1, 1500]], data_dir)
    np.savez(path, source_order=np.array([0.5]), target_orders=np.array([[1]]))
    with pytest.raises(DataError, match="'source_order' must be a non-empty integer"):
        transfer_data.load_split_file(path)
    np.savez(path, source_order=np.array([0]))
    with pytest.raises(DataError, match="expected an array 'target_orders'"):
        transfer_data.load_split_file(path)
    with pytest.raises(DataError, match="not found"):
        transfer_data.load_split_file(tmp_path / "missing.npz")
