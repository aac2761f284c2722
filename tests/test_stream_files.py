"""One's own data as a stream: `read_stream` (LIBSVM, CSV, .npz, Vowpal Wabbit), its
transforms and the classifier metrics against NumPy loops written from their definitions,
sparse rows through `ojax.run`, and `ojax sweep LEARNER --data FILE`."""

from __future__ import annotations

import csv
import gzip

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.sparse as sp

import ojax
from ojax import losses, metrics, oco
from ojax.app import cli
from ojax.datasets import DataError, hash_features, read_stream, running_standardize

RNG = np.random.default_rng(0)
X = RNG.normal(size=(40, 5)) * (RNG.random((40, 5)) < 0.5)  # about half the entries zero
Y01 = (X @ np.array([1.0, -2.0, 0.5, 0.0, 1.5]) > 0).astype(int)


def _libsvm(path, x=X, y=Y01):
    lines = [
        f"{label} " + " ".join(f"{j + 1}:{v:.17g}" for j, v in enumerate(row) if v != 0)
        for row, label in zip(x, y)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_libsvm_rows_stay_sparse_and_two_labels_map_to_pm1(tmp_path):
    stream = read_stream(_libsvm(tmp_path / "d.libsvm"))
    assert sp.issparse(stream.xs) and stream.xs.shape == (40, 5)
    np.testing.assert_array_equal(stream.xs.toarray(), X)
    np.testing.assert_array_equal(stream.ys, np.where(Y01 == 1, 1.0, -1.0))
    assert stream.classes == (0.0, 1.0) and stream.source == "d.libsvm"
    gz = tmp_path / "d.svm.gz"
    gz.write_bytes(gzip.compress((tmp_path / "d.libsvm").read_bytes()))
    np.testing.assert_array_equal(read_stream(gz).xs.toarray(), X)


def test_csv_with_a_header_a_named_label_and_without_one(tmp_path):
    path = tmp_path / "d.csv"
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["a", "target", "b", "c", "d", "e"])
        for row, label in zip(X, Y01):
            values = [repr(float(v)) for v in row]
            writer.writerow([values[0], 3 * label + 2, *values[1:]])
    stream = read_stream(path)  # "target" found by name; labels 2 and 5
    np.testing.assert_array_equal(stream.xs, X)
    assert stream.names == ("a", "b", "c", "d", "e") and stream.classes == (2.0, 5.0)
    np.testing.assert_array_equal(read_stream(path, labels="real").ys, 3 * Y01 + 2)
    plain = tmp_path / "plain.csv"
    np.savetxt(plain, np.c_[X, Y01], delimiter=",")
    np.testing.assert_array_equal(read_stream(plain).xs, X)  # the last column is the label
    np.testing.assert_array_equal(read_stream(plain, labels="real", label_column=0).ys, X[:, 0])


def test_npz_and_vowpal_wabbit(tmp_path):
    np.savez(tmp_path / "d.npz", x=X, y=Y01)
    np.testing.assert_array_equal(read_stream(tmp_path / "d.npz").xs, X)
    vw = tmp_path / "d.vw"
    vw.write_text("1 |words cat dog:2 |num x:0.5\n-1 'tag|words dog cat cat\n1 |num y:-3\n")
    stream = read_stream(vw)
    assert stream.names == ("words^cat", "words^dog", "num^x", "num^y")
    expected = [[1, 2, 0.5, 0], [2, 1, 0, 0], [0, 0, 0, -3]]
    np.testing.assert_array_equal(stream.xs.toarray(), expected)
    np.testing.assert_array_equal(stream.ys, [1, -1, 1])


@pytest.mark.parametrize(
    ("name", "text", "kwargs", "message"),
    [
        ("m.libsvm", "0 1:1\n1 1:2\n2 1:3\n", {}, "exactly two distinct labels, found 3 (0, 1, 2)"),
        ("c.libsvm", "1 1:1\n1 1:2\n", {}, "found 1 (1)"),
        ("b.csv", "1,2,1\n3,x,0\n", {}, "line 2, column 2: expected a number, got 'x'"),
        ("r.csv", "1,2,1\n3,0\n", {}, "line 2: expected 3 columns, got 2"),
        ("n.csv", "a,b\n1,0\n", {"label_column": "y"}, "no column named 'y'"),
        ("d.vw", "1 cat dog\n", {}, "line 1: expected 'label |namespace"),
        ("d.txt", "1 1:1\n", {}, "cannot tell the format of"),
        ("d.libsvm", "1 1:1\n-1 1:1\n", {"labels": "many"}, "labels must be one of"),
    ],
)
def test_bad_files_and_labels_are_refused_naming_what_is_wrong(
    tmp_path, name, text, kwargs, message
):
    (tmp_path / name).write_text(text)
    with pytest.raises((DataError, ojax.InputError)) as err:
        read_stream(tmp_path / name, **kwargs)
    assert message in str(err.value)
    with pytest.raises(DataError, match="not found"):
        read_stream(tmp_path / "missing.csv")


def test_running_standardize_matches_the_statistics_of_each_prefix():
    x = RNG.normal(3.0, 2.0, size=(30, 3))
    x[:, 2] = 7.0  # a constant column stays 0
    got = running_standardize(x)
    for t in range(30):
        mean, std = x[: t + 1].mean(axis=0), x[: t + 1].std(axis=0)
        want = np.where(std > 1e-12, (x[t] - mean) / np.where(std > 0, std, 1), 0.0)
        np.testing.assert_allclose(got[t], want, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(running_standardize(sp.csr_matrix(X)), running_standardize(X))


def test_hash_features_adds_each_column_to_its_bucket_with_its_sign():
    import zlib

    names = [f"f{j}" for j in range(5)]
    got = hash_features(X, 2, names)
    want = np.zeros((40, 4))
    for j, name in enumerate(names):  # the definition, column by column
        code = zlib.crc32(name.encode())
        want[:, code % 4] += (-1.0 if code >= 2**31 else 1.0) * X[:, j]
    np.testing.assert_allclose(got, want)
    np.testing.assert_allclose(hash_features(sp.csr_matrix(X), 2, names).toarray(), want)
    with pytest.raises(ojax.InputError, match="names must name the 5 columns"):
        hash_features(X, 2, names[:4])


def test_classifier_metrics_against_their_definitions():
    margins = RNG.normal(size=200)
    ys = np.where(RNG.random(200) < 0.6, 1.0, -1.0)
    margins[:3] = 0.0  # a zero margin is a mistake
    wrong = np.asarray(metrics.mistakes(margins, ys))
    np.testing.assert_array_equal(wrong, [(m * y <= 0) for m, y in zip(margins, ys)])
    rolling = np.asarray(metrics.rolling_mean(wrong, 25))
    want = [wrong[max(0, t - 24) : t + 1].mean() for t in range(200)]
    np.testing.assert_allclose(rolling, want, rtol=1e-6)
    logs = np.asarray(metrics.log_loss(jnp.asarray(margins), jnp.asarray(ys)))
    np.testing.assert_allclose(logs, -np.log(1 / (1 + np.exp(-ys * margins))), rtol=1e-6)
    scores = np.round(margins, 1)  # ties
    pos, neg = scores[ys > 0], scores[ys < 0]
    pairs = (pos[:, None] > neg[None, :]).mean() + 0.5 * (pos[:, None] == neg[None, :]).mean()
    assert metrics.auc(scores, ys) == pytest.approx(pairs, rel=1e-12)
    assert np.isnan(metrics.auc(scores[ys > 0], ys[ys > 0]))


def test_sparse_rows_run_as_the_dense_ones(tmp_path):
    stream = read_stream(_libsvm(tmp_path / "d.libsvm"))
    learner = ojax.linear_predictor(oco.ogd("none"), losses.logistic, jnp.zeros(5))
    params = oco.OGDParams(jnp.float32(0.5), jnp.float32(1.0))
    ys = jnp.asarray(stream.ys, jnp.float32)
    _, dense = ojax.run(learner, params, jnp.asarray(X, jnp.float32), ys, losses.logistic)
    _, sparse = ojax.run(learner, params, stream.xs, ys, losses.logistic)
    np.testing.assert_allclose(sparse.loss, dense.loss, rtol=1e-6)
    assert float(dense.loss.std()) > 0


def test_sweep_on_a_file_is_the_learner_run_on_each_seeds_order(tmp_path, capsys):
    from ojax.app.learner_sweep import shuffled

    path = _libsvm(tmp_path / "d.libsvm")
    out = tmp_path / "out"
    argv = ["sweep", "ogd", "--data", str(path), "--grid", "learning_rate=0.1,1", "--seeds", "3",
            "--key", "5", "--out", str(out), "--quiet"]  # fmt: skip
    assert cli.main(argv) == 0
    printed = capsys.readouterr().out
    assert "d.libsvm  ogd@learning_rate=0.1  mistake_rate" in printed
    curves = np.load(out / "curves.npz")
    stream = read_stream(path)
    pool = (jnp.asarray(X, jnp.float32), jnp.asarray(stream.ys, jnp.float32))
    learner = ojax.linear_predictor(oco.ogd(), losses.logistic, jnp.zeros(5))
    for seed, key in enumerate(jax.random.split(jax.random.key(5), 3)):
        xs, ys, _, order = shuffled(pool, key)
        params = ojax.LEARNERS["ogd"].default_params()._replace(learning_rate=jnp.float32(1))
        _, trace = ojax.run(learner, params, xs, ys, losses.logistic, order=order)
        got = curves["d.libsvm/ogd@learning_rate=1/average_loss"][seed, -1]
        np.testing.assert_allclose(got, float(trace.loss.mean()), rtol=1e-5)
        wrong = np.asarray(trace.prediction) * np.asarray(ys)[np.asarray(order)] <= 0
        mistakes = curves["d.libsvm/ogd@learning_rate=1/mistake_rate"][seed, -1]
        np.testing.assert_allclose(mistakes, wrong.mean(), rtol=1e-6)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--steps", "10"], "--steps and --dim: with --data the file gives them"),
        (["--loss", "cubic"], "--loss must be one of"),
    ],
)
def test_bad_data_options_exit_2(tmp_path, capsys, extra, message):
    path = _libsvm(tmp_path / "d.libsvm")
    out = tmp_path / "never"
    assert cli.main(["sweep", "ogd", "--data", str(path), *extra, "--out", str(out)]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()
    assert cli.main(["sweep", "aggressive_kt", "--data", str(path), "--out", str(out)]) == 2
    assert "is a multi_task learner" in capsys.readouterr().err
