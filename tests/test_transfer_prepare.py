"""The transfer set-up as one compiled program (ojax.transfer.prepare): the source classifier,
its outputs on the target and the Gram matrices equal the eager functions and the float64
per-sample NumPy loop, for dense and sparse features, homogeneous and heterogeneous splits; one
program per shapes; bad features refused before anything runs."""

from __future__ import annotations

import sys
from pathlib import Path

import jax.numpy as jnp
import numpy as np
import pytest
import scipy.sparse as sp

from ojax import transfer
from ojax.datasets import transfer as transfer_data
from ojax.transfer import kernels, prepare
from ojax.validation import InputError

sys.path.insert(0, str(Path(__file__).resolve().parent))
import reference_transfer as ref  # noqa: E402
from tolerances import scaled_atol

C, S1, S2 = 5.0, 4.0, 8.0


def _dense(x):
    return x.toarray() if sp.issparse(x) else np.asarray(x)


def _params(dtype=jnp.float64):
    return transfer.KernelPAParams(jnp.asarray(C, dtype), jnp.asarray(S1, dtype))


@pytest.fixture(scope="module")
def usenet2():
    """usenet2 (per-row scaled): 40 source rows, 70 target rows."""
    from conftest import DATA_DIR

    split = transfer_data.homogeneous_split("usenet2", DATA_DIR, source_size=40, target_size=70)
    return _dense(split.source_x), split.source_y, _dense(split.target_x), split.target_y


def _close(got, want, rtol=1e-12, atol=1e-12):
    """Elementwise, with ``atol`` relative to the scale of ``want`` (``atol * max|want|``)."""
    want = np.asarray(want)
    np.testing.assert_allclose(np.asarray(got), want, rtol=rtol, atol=scaled_atol(want, atol))


@pytest.mark.parametrize("sparse", [False, True])
def test_homogeneous_setup_equals_eager_functions_and_loop(x64, usenet2, sparse):
    xs, ys, xt, yt = usenet2
    order = np.random.default_rng(0).permutation(len(ys)).astype(np.int32)
    a, b = (sp.csr_matrix(xs), sp.csr_matrix(xt)) if sparse else (xs, xt)
    views = (("whole", S1), ("whole", S2))
    out = prepare.setup_arrays(a, ys, b, order, _params(), views, np.dtype("float64"))
    assert bool(out.finite)
    # the eager functions, one operation at a time
    h = transfer.train_source(a, ys, _params(), order, jnp.float64)
    np.testing.assert_array_equal(out.h.keys, h.keys)
    assert int(out.h.count) == int(h.count)
    _close(out.h.coef, h.coef)
    _close(out.h_out, transfer.source_outputs(h, b, a, S1))
    dist = kernels.squared_distances(b, dtype=jnp.float64)
    for gram, (_, width) in zip(out.grams, views):
        _close(gram, kernels.gram_matrix(dist, width))
    # the per-sample loop: h is averaged PA-I over the source order, h(x) its expansion
    h_ref, _, _ = ref.averaged_pa(xs[order], ys[order], C, S1)
    count = int(out.h.count)
    assert count == len(h_ref.svs)
    _close(np.asarray(out.h.coef)[:count], h_ref.coef, rtol=1e-9, atol=1e-12)
    _close(out.h_out, [h_ref(x) for x in xt], rtol=1e-9, atol=1e-10)
    gauss = [[ref.gaussian(p, q, S2) for q in xt[:5]] for p in xt[:5]]
    _close(np.asarray(out.grams[1])[:5, :5], gauss, rtol=1e-9, atol=1e-12)


def test_heterogeneous_setup_equals_eager_functions(x64):
    from conftest import DATA_DIR

    split = transfer_data.heterogeneous_split("spambase", DATA_DIR, source_size=40, target_size=70)
    xs, ys, xt = _dense(split.source_x), split.source_y, _dense(split.target_x)
    k = split.num_source_features
    order = np.arange(len(ys), dtype=np.int32)
    views = (("view1", S1), ("view2", S1), ("whole", S2))
    out = prepare.setup_arrays(xs, ys, xt, order, _params(), views, np.dtype("float64"))
    h = transfer.train_source(xs, ys, _params(), order, jnp.float64)
    _close(out.h.coef, h.coef)
    _close(out.h_out, transfer.source_outputs(h, xt[:, :k], xs, S1))
    d1 = kernels.squared_distances(xt[:, :k], dtype=jnp.float64)
    d2 = kernels.squared_distances(xt[:, k:], dtype=jnp.float64)
    for gram, dist, width in zip(out.grams, (d1, d2, d1 + d2), (S1, S1, S2)):
        _close(gram, kernels.gram_matrix(dist, width))


@pytest.fixture
def traces(monkeypatch):
    """The set-up program's traces (each a list entry) while the test runs."""
    seen = []
    original = prepare._program

    def counted(inputs, views, dtype):
        seen.append(views)
        return original(inputs, views, dtype)

    monkeypatch.setattr(prepare, "_program", counted)
    prepare._setup_program.cache_clear()
    yield seen
    prepare._setup_program.cache_clear()


def test_one_program_per_shapes(usenet2, traces):
    """Splits of the same shapes (and the prepare_transfer around it) trace nothing again."""
    xs, ys, xt, yt = usenet2
    first = transfer.prepare_transfer(xs[:20], ys[:20], xt[:30], yt[:30], combined=True)
    assert len(traces) == 1
    second = transfer.prepare_transfer(xs[20:], ys[20:], xt[30:60], yt[30:60], combined=True)
    assert len(traces) == 1
    assert second.combined.learner == first.combined.learner  # equal learners per pool size
    assert second.methods["PA"].learner == second.methods["PAIO"].learner
    assert not np.array_equal(second.combined.xs[0].row, first.combined.xs[0].row)


def test_bad_features_refused_before_the_setup(usenet2, traces):
    xs, ys, xt, yt = usenet2
    bad = xt.copy()
    bad[3, 2] = np.inf
    with pytest.raises(InputError, match=r"target_x must be finite, got .*inf.* at index \(3, 2\)"):
        transfer.prepare_transfer(xs, ys, bad, yt)
    with pytest.raises(InputError, match=r"source_y must take only the values \{-1, \+1\}, got 0"):
        transfer.prepare_transfer(xs, np.zeros_like(ys), xt, yt)
    with pytest.raises(InputError, match=r"source_order must hold 0-based rows in \[0, 39\]"):
        transfer.prepare_transfer(xs, ys, xt, yt, source_order=np.arange(1, 41))
    with pytest.raises(InputError, match="combined: needs a homogeneous split"):
        transfer.prepare_transfer(xs, ys, xt, yt, methods=("PA", "OTL"), combined=True)
    assert traces == []  # nothing was traced


@pytest.mark.parametrize("rows", [16, 70, 1024])
def test_sparse_grams_block_by_block_equal_whatever_the_block(x64, monkeypatch, rows):
    """A sparse heterogeneous target's Gram matrices, built 16 rows at a time (the last block
    overlapping), in one block, or in one block larger than the pool: the same bits, and the
    eager functions' numbers; ``h`` and ``h(x)`` as the eager functions give them."""
    from conftest import DATA_DIR

    split = transfer_data.heterogeneous_split("spambase", DATA_DIR, source_size=40, target_size=70)
    xs, ys, xt = sp.csr_matrix(split.source_x), split.source_y, sp.csr_matrix(split.target_x)
    k = split.num_source_features
    order = np.arange(len(ys), dtype=np.int32)
    views = (("view1", S1), ("view2", S1), ("whole", S2))
    monkeypatch.setattr(prepare, "BLOCK_ROWS", rows)
    out = prepare.setup_arrays(xs, ys, xt, order, _params(), views, np.dtype("float64"))
    assert bool(out.finite)
    monkeypatch.setattr(prepare, "BLOCK_ROWS", 70)
    whole = prepare.setup_arrays(xs, ys, xt, order, _params(), views, np.dtype("float64"))
    for got, want in zip(out.grams, whole.grams):
        np.testing.assert_array_equal(got, want)
    h = transfer.train_source(xs, ys, _params(), order, jnp.float64)
    _close(out.h.coef, h.coef)
    _close(out.h_out, transfer.source_outputs(h, xt[:, :k], xs, S1))
    d1 = kernels.squared_distances(xt[:, :k], dtype=jnp.float64)
    d2 = kernels.squared_distances(xt[:, k:], dtype=jnp.float64)
    for gram, dist, width in zip(out.grams, (d1, d2, d1 + d2), (S1, S1, S2)):
        _close(gram, kernels.gram_matrix(dist, width))
        np.testing.assert_array_equal(np.diag(np.asarray(gram)), 1.0)


def test_sparse_grams_report_a_non_finite_matrix(x64):
    """``finite`` is False when a Gram matrix is not finite (a NaN width)."""
    x = sp.csr_matrix(np.eye(5))
    _, finite = prepare.sparse_grams({"whole": x}, (("whole", np.nan),), np.dtype("float64"))
    assert not bool(finite)
