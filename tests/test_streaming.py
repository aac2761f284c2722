"""Streams in blocks: from disk (:func:`ojax.run_blocks`) and drawn inside the scan
(:func:`ojax.datasets.streaming.run_drawn`) equal the run over the whole stream in memory."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from tolerances import scaled_atol

import ojax
from ojax import averaging, losses, oco
from ojax.datasets.paths import DataError
from ojax.datasets.streaming import BlockReader, run_blocks, run_drawn
from ojax.envs.streams import linear_regression_rows, linear_regression_stream

N, D = 1000, 10


def _learners(dtype):
    w0 = jnp.zeros(D, dtype)
    ogd = ojax.linear_predictor(oco.ogd("none"), losses.square, w0)
    ogd_params = oco.OGDParams(jnp.asarray(0.1, dtype), jnp.asarray(1.0, dtype))
    sgd = averaging.least_squares_sgd(w0, averaging.geometric_averager())
    sgd_params = averaging.AveragedParams(
        averaging.SGDParams(jnp.asarray(0.05, dtype)),
        averaging.GeometricParams(jnp.asarray(-0.01, dtype)),
    )
    return [(ogd, ogd_params), (sgd, sgd_params)]


def _same(a, b) -> bool:
    return all(
        np.asarray(x).dtype == np.asarray(y).dtype and np.array_equal(x, y)
        for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b))
    )


def _readers(tmp_path, xs, ys):
    np.save(tmp_path / "xs.npy", xs)
    np.save(tmp_path / "ys.npy", ys)
    np.savez(tmp_path / "stored.npz", xs=xs, ys=ys)
    np.savez_compressed(tmp_path / "packed.npz", xs=xs, ys=ys)
    return {
        "npy": BlockReader.from_npy(tmp_path / "xs.npy", tmp_path / "ys.npy"),
        "npz": BlockReader.from_npz(tmp_path / "stored.npz"),
        "npz compressed": BlockReader.from_npz(tmp_path / "packed.npz"),
        "memmap": BlockReader.from_arrays(np.load(tmp_path / "xs.npy", mmap_mode="r"), ys),
    }


@pytest.mark.parametrize("x64", [False, True], ids=["float32", "float64"])
def test_blocks_from_disk_equal_the_whole_run_bit_for_bit(tmp_path, x64):
    with jax.enable_x64(x64):
        dtype = jnp.float64 if x64 else jnp.float32
        xs, ys = (np.asarray(a) for a in linear_regression_stream(jax.random.key(0), N, D))
        for learner, params in _learners(dtype):
            state, trace = ojax.run(learner, params, xs, ys, losses.square)
            for label, reader in _readers(tmp_path, xs, ys).items():
                got, got_trace = run_blocks(learner, params, reader, losses.square, block=300)
                assert _same(got, state), label  # 3 blocks of 300 and one of 100
                np.testing.assert_array_equal(got_trace.loss, trace.loss, err_msg=label)
            mid, _ = ojax.run(learner, params, xs[:500], ys[:500], losses.square)
            rest = BlockReader.from_arrays(xs[500:], ys[500:])
            assert _same(run_blocks(learner, params, rest, losses.square, state=mid)[0], state)


def test_rows_drawn_alone_are_the_rows_of_the_whole_stream():
    key = jax.random.key(3)
    xs, ys = linear_regression_stream(key, N, D)
    for start, size in [(0, 100), (1, 37), (513, 487), (999, 1)]:  # 11 start not 4-aligned
        rows, labels = linear_regression_rows(key, start, size, D)
        np.testing.assert_array_equal(rows, xs[start : start + size])
        # the labels: the same numbers up to the rounding of xs @ w* (1 ulp of |y|)
        np.testing.assert_allclose(labels, ys[start : start + size], rtol=0, atol=5e-7)
    with pytest.raises(ojax.InputError, match=r"start, size: .* < 2\^32"):
        linear_regression_rows(key, 2**30, 10, D)


@pytest.mark.parametrize("x64", [False, True], ids=["float32", "float64"])
def test_a_stream_drawn_in_blocks_inside_the_scan_equals_its_materialised_run(x64):
    with jax.enable_x64(x64):
        dtype = jnp.float64 if x64 else jnp.float32
        key, block = jax.random.key(1), 128  # 7 blocks of 128 and one of 104

        def draw(key, start, size):
            return linear_regression_rows(key, start, size, D)

        starts = range(0, N, block)
        parts = [draw(key, s, min(block, N - s)) for s in starts]
        xs = jnp.concatenate([x for x, _ in parts])
        ys = jnp.concatenate([y for _, y in parts])
        whole_xs, whole_ys = linear_regression_stream(key, N, D)
        np.testing.assert_array_equal(xs, whole_xs)
        eps = float(jnp.finfo(dtype).eps)
        for i, (learner, params) in enumerate(_learners(dtype)):
            state, trace = ojax.run(learner, params, xs, ys, losses.square)

            def drawn(k, learner=learner, params=params):
                return run_drawn(learner, params, draw, k, N, losses.square, block=block)

            got, got_trace = jax.jit(drawn)(key)
            if i == 0:  # OGD: the same program step, bit for bit
                assert _same(got, state)
                np.testing.assert_array_equal(got_trace.loss, trace.loss)
            else:  # the geometric average: XLA fuses its weights otherwise inside this program
                np.testing.assert_array_equal(
                    got.learner.learner.point, state.learner.learner.point
                )
                for a, b in zip(jax.tree.leaves(got), jax.tree.leaves(state)):
                    np.testing.assert_allclose(a, b, rtol=0, atol=scaled_atol(b, 8 * eps))
                # its losses too (equal bits under XLA's fusion emitters; the loop emitters of
                # tests/conftest.py round 1 of the 1000 float32 losses 9e-6 relative apart)
                np.testing.assert_allclose(
                    got_trace.loss, trace.loss, rtol=0, atol=scaled_atol(trace.loss, 8 * eps)
                )
            # against the stream drawn whole: the labels' rounding may differ by 1 ulp
            _, whole = ojax.run(learner, params, whole_xs, whole_ys, losses.square)
            scale = float(jnp.max(jnp.abs(whole.loss)))
            np.testing.assert_allclose(got_trace.loss, whole.loss, rtol=0, atol=1e-4 * scale)


def test_run_drawn_vmaps_over_seeds():
    learner, params = _learners(jnp.float32)[0]

    def draw(key, start, size):
        return linear_regression_rows(key, start, size, D)

    def one(key):
        return run_drawn(learner, params, draw, key, 300, losses.square, block=64)[1].loss

    keys = jax.random.split(jax.random.key(2), 3)
    traces = jax.jit(jax.vmap(one))(keys)
    single = jax.jit(one)
    for i, key in enumerate(keys):  # vmap batches the matmuls: equal to float32 rounding
        expected = single(key)
        np.testing.assert_allclose(traces[i], expected, rtol=0, atol=scaled_atol(expected, 1e-5))
    assert traces.shape == (3, 300)


def test_bad_files_are_refused_naming_the_file(tmp_path):
    np.save(tmp_path / "obj.npy", np.array([object()] * 3), allow_pickle=True)
    np.save(tmp_path / "y.npy", np.zeros(3))
    np.save(tmp_path / "f.npy", np.asfortranarray(np.ones((3, 2))))
    np.save(tmp_path / "y4.npy", np.zeros(4))
    with pytest.raises(DataError, match="obj.npy.*Python objects"):
        BlockReader.from_npy(tmp_path / "obj.npy", tmp_path / "y.npy")
    with pytest.raises(DataError, match="f.npy.*Fortran order"):
        BlockReader.from_npy(tmp_path / "f.npy", tmp_path / "y.npy")
    np.save(tmp_path / "x.npy", np.ones((3, 2)))
    with pytest.raises(ojax.InputError, match=r"same length, got shapes \(3, 2\) and \(4,\)"):
        BlockReader.from_npy(tmp_path / "x.npy", tmp_path / "y4.npy")
    with pytest.raises(DataError, match="no array 'ys'"):
        np.savez(tmp_path / "one.npz", xs=np.ones((3, 2)))
        BlockReader.from_npz(tmp_path / "one.npz")
    data = (tmp_path / "x.npy").read_bytes()
    (tmp_path / "cut.npy").write_bytes(data[:-8])
    reader = BlockReader.from_npy(tmp_path / "cut.npy", tmp_path / "y.npy")
    with pytest.raises(DataError, match="cut.npy.*truncated"):
        list(reader.blocks(2))
    np.save(tmp_path / "text.npy", np.array([["a", "b"]] * 3))
    with pytest.raises(DataError, match="text.npy.*holds <U1 values; a stream is numbers"):
        BlockReader.from_npy(tmp_path / "text.npy", tmp_path / "y.npy")


def test_a_big_endian_file_is_read_as_its_numbers(tmp_path):
    xs = np.arange(12, dtype=np.float32).reshape(6, 2)
    np.save(tmp_path / "x.npy", xs.astype(">f4"))
    np.save(tmp_path / "y.npy", xs.sum(1).astype(">f8"))
    blocks = list(BlockReader.from_npy(tmp_path / "x.npy", tmp_path / "y.npy").blocks(4))
    assert all(b.dtype.isnative for pair in blocks for b in pair)
    np.testing.assert_array_equal(np.concatenate([x for x, _ in blocks]), xs)
    np.testing.assert_array_equal(np.concatenate([y for _, y in blocks]), xs.sum(1))


@pytest.mark.parametrize("how", ["rewritten", "replaced"])
@pytest.mark.parametrize("kind", ["npy", "npz", "npz compressed"])
def test_a_file_changed_while_it_is_read_is_refused(tmp_path, monkeypatch, how, kind):
    import os
    import time

    from ojax.datasets import streaming

    xs = np.arange(20.0 * D, dtype=np.float32).reshape(20, D) / (20 * D)
    ys = np.arange(20.0, dtype=np.float32)
    reader = _readers(tmp_path, xs, ys)[kind]
    path = tmp_path / {"npy": "xs.npy", "npz": "stored.npz", "npz compressed": "packed.npz"}[kind]
    real_run, calls = streaming.run, []

    def run_then_change(*args, **kwargs):  # the file changes after the first block is read
        if not calls:
            time.sleep(0.05)  # past the file system's clock tick
            if kind == "npy":
                np.save(tmp_path / "new.npy", -xs)  # the same size, other rows
            else:
                np.savez(tmp_path / "new.npz", xs=-xs, ys=ys)
            new = tmp_path / ("new.npy" if kind == "npy" else "new.npz")
            if how == "replaced":
                os.replace(new, path)
            else:
                path.write_bytes(new.read_bytes())
        calls.append(1)
        return real_run(*args, **kwargs)

    monkeypatch.setattr(streaming, "run", run_then_change)
    learner, params = _learners(jnp.float32)[0]
    with pytest.raises(DataError, match=r"changed while it was read .* rows 5\.\.9 were read"):
        run_blocks(learner, params, reader, losses.square, block=5)
    assert len(calls) == 1  # the first block ran; the second, read after the change, did not


def test_bad_rows_are_named_by_their_row_in_the_whole_stream(tmp_path):
    xs = np.ones((30, D), np.float32)
    xs[23, 1] = np.nan
    ys = np.zeros(30, np.float32)
    ys[7] = 1e30  # its square overflows float32
    learner, params = _learners(jnp.float32)[0]
    reader = BlockReader.from_arrays(xs, ys)
    with pytest.raises(ojax.InputError, match=r"ys: row 7 of the stream is too large"):
        run_blocks(learner, params, reader, losses.square, block=10)
    ys[7] = 0.0
    with pytest.raises(ojax.InputError, match=r"xs: row 23 of the stream must be finite, got nan"):
        run_blocks(learner, params, reader, losses.square, block=10)
