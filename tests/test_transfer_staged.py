"""A split's methods built on access (ojax.transfer.staged.MethodRuns): a heterogeneous sparse
split never holds more than two Gram matrices (all three before), each built once when the
methods are asked in order, the pools equal bit for bit to those of the one-pass set-up; and
the checks on the way of a run copy no Gram matrix (the sweep's digest, check_finite)."""

from __future__ import annotations

import gc
import hashlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.sparse as sp

from ojax import transfer
from ojax.datasets import transfer as transfer_data
from ojax.programs.identity import array_digest
from ojax.transfer import prepare
from ojax.transfer.kernels import KernelPoint
from ojax.transfer.staged import MethodRuns
from ojax.validation import InputError, check_finite

N = 70  # target rows


def _gram_buffers() -> int:
    """Live (N, N) device buffers (each counted once, however many arrays share it)."""
    gc.collect()
    ptrs = {a.unsafe_buffer_pointer() for a in jax.live_arrays() if a.shape == (N, N)}
    return len(ptrs)


@pytest.fixture(scope="module")
def spambase_sparse():
    from conftest import DATA_DIR

    split = transfer_data.heterogeneous_split("spambase", DATA_DIR, source_size=40, target_size=N)
    return sp.csr_matrix(split.source_x), split.source_y, sp.csr_matrix(split.target_x), split


def test_heterogeneous_sparse_split_holds_at_most_two_gram_matrices(x64, spambase_sparse):
    """PA (whole vector), PAIO (first view), COTL0, SCT, COTL (both views) asked in order: at
    most two (N, N) matrices alive at any time (the one-pass set-up held three), and every
    method's Gram rows the one-pass set-up's, bit for bit."""
    xs, ys, xt, split = spambase_sparse
    gc.collect()
    assert _gram_buffers() == 0
    setup = transfer.prepare_transfer(xs, ys, xt, split.target_y, dtype=jnp.float64)
    widths = {"whole": 8.0, "view1": 4.0, "view2": 4.0}
    views = tuple((v, w) for v, w in widths.items())
    order = np.arange(len(ys), dtype=np.int32)
    one_pass = prepare.setup_arrays(
        xs, ys, xt, order, transfer.KernelPAParams.paper_source(jnp.float64), views, "float64"
    )
    want = {v: np.array(g, copy=True) for (v, _), g in zip(views, one_pass.grams)}
    del one_pass
    assert _gram_buffers() == 2  # PA's and PAIO's, built in one pass
    assert setup.methods.held == (("view1", 4.0), ("whole", 8.0))
    seen = []
    for name in transfer.HETEROGENEOUS_METHODS:
        method = setup.methods[name]
        seen.append(_gram_buffers())
        points = (method.xs,) if isinstance(method.xs, KernelPoint) else method.xs
        names = ["whole"] if name == "PA" else ["view1"] if name == "PAIO" else ["view1", "view2"]
        for view, point in zip(names, points):
            np.testing.assert_array_equal(np.asarray(point.row), want[view])
        del method, points, point
    assert seen == [2, 1, 2, 2, 2]  # the whole vector's dropped at PAIO, view2 built at COTL0
    assert max(seen) < len(views)  # the one-pass layout's three


def test_methods_build_each_matrix_once_in_order_and_again_when_asked_back():
    """The passes: PA's first with PAIO's (two fit), COTL0's second view alone; the whole
    vector's dropped at PAIO; asking for PA again builds it again (correct, one more pass)."""
    a, b, c = ("whole", 8.0), ("view1", 4.0), ("view2", 4.0)
    needs = {
        "PA": frozenset({a}),
        "PAIO": frozenset({b}),
        "COTL0": frozenset({b, c}),
        "COTL": frozenset({b, c}),
    }
    passes = []

    def build(keys):
        passes.append(keys)
        return {k: f"matrix {k}" for k in keys}

    runs = MethodRuns(needs, lambda name, grams: (name, sorted(grams)), build)
    assert list(runs) == list(needs) and len(runs) == 4 and "SCT" not in runs and passes == []
    assert runs["PA"] == ("PA", [a])
    assert passes == [(b, a)] and set(runs.held) == {a, b}
    assert runs["PAIO"] == ("PAIO", [b]) and runs.held == (b,)
    assert runs["COTL0"] == ("COTL0", [b, c]) and runs["COTL"] == ("COTL", [b, c])
    assert passes == [(b, a), (c,)]
    assert runs["PA"] == ("PA", [a]) and passes[-1] == (a,)
    with pytest.raises(KeyError):
        runs["SCT"]


def test_a_non_finite_matrix_built_on_access_is_refused(x64, spambase_sparse):
    """PA's and PAIO's matrices (built with the set-up) pass; COTL0's second view, at a NaN
    width, is built only when COTL0 is asked, and refused then, naming the inputs."""
    xs, ys, xt, split = spambase_sparse
    nan = transfer.COTLParams.paper(jnp.float64)._replace(width2=jnp.asarray(np.nan))
    setup = transfer.prepare_transfer(
        xs, ys, xt, split.target_y, params={"COTL0": nan}, dtype=jnp.float64
    )
    assert set(setup.methods.held) == {("whole", 8.0), ("view1", 4.0)}
    setup.methods["PAIO"]
    with pytest.raises(InputError, match="source_x, target_x: the Gram matrices.*float64"):
        setup.methods["COTL0"]


def test_array_digest_reads_in_place_and_equals_the_bytes_digest():
    """The sweep's digest of an array is sha256 of its C-order bytes (as before: chunk folders
    keep their names), for device and host arrays, non-contiguous and empty ones."""
    cases = [
        np.arange(12.0).reshape(3, 4),
        np.arange(12.0).reshape(3, 4).T,
        np.zeros((0, 3), np.float32),
        jnp.ones((5, 7), jnp.float32),
        np.array([True, False]),
    ]
    for value in cases:
        arr = np.ascontiguousarray(np.asarray(value))
        want = hashlib.sha256(arr.tobytes()).hexdigest()
        assert array_digest(value) == ["array", str(arr.dtype), list(arr.shape), want]


def test_check_finite_allocates_no_temporary_of_the_array_size():
    """The device reduction of check_finite compiles with no temporary as large as its input
    (`isfinite(v).all()` wrote an N x N boolean array: 95 MiB for a 10000-row Gram matrix),
    and still finds NaN and Inf."""
    from ojax import validation

    shape = jax.ShapeDtypeStruct((1000, 1000), jnp.float32)
    temp = validation._all_finite.lower(shape).compile().memory_analysis().temp_size_in_bytes
    assert temp < 1000 * 1000 // 100
    old = jax.jit(lambda v: jnp.isfinite(v).all()).lower(shape).compile().memory_analysis()
    assert old.temp_size_in_bytes >= 1000 * 1000  # the bound is one the old reduction breaks
    for bad in (np.nan, np.inf, -np.inf):
        x = jnp.ones((4, 5), jnp.float32).at[2, 3].set(bad)
        with pytest.raises(InputError, match="must be finite"):
            check_finite("x", x)
    check_finite("x", jnp.full((4, 5), 3e38, jnp.float32))
    check_finite("x", jnp.zeros((0, 5), jnp.float32))


def test_a_float64_setup_asked_outside_x64_builds_its_methods_in_float64(spambase_sparse):
    """The methods are built on access, maybe after the set-up's `jax.enable_x64` block has
    closed (as `ojax run theory` asks for COTL): they are built in the set-up's precision,
    never in whatever precision is on where they are asked."""
    xs, ys, xt, split = spambase_sparse
    with jax.enable_x64(True):
        setup = transfer.prepare_transfer(xs, ys, xt, split.target_y, dtype=jnp.float64)
    assert all(g.dtype == jnp.float64 for g in setup.methods.matrices("SCT").values())
    cotl = setup.methods["COTL"]  # outside the block: x64 is off here
    with jax.enable_x64(True):
        for point in cotl.xs:
            assert np.asarray(point.row).dtype == np.float64
        _, trace = cotl.run(np.arange(N, dtype=np.int32)[None], keep_predictions=False)
    assert np.asarray(trace.loss).shape == (1, N)
