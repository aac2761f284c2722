"""The regularization path of one SGD pass against the float64 NumPy reference: stored
(one product or chunked) and streamed, model selection, the block folds, and the public entry
points under jit / vmap."""

from __future__ import annotations

import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import ojax
from ojax import averaging
from ojax.averaging import blocks, weights
from ojax.envs import regression

sys.path.insert(0, str(Path(__file__).parent))
import reference_averaging as ref  # noqa: E402
from averaging_cases import ETA, RHOS, TOL, N, data, log_rhos, rel_err  # noqa: E402

# ------------------------------------------------------------------------------------------------
# the regularization path: product, chunked (K chunks), streamed
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_path_all_modes_against_reference(dtype):
    n = N
    with jax.enable_x64(dtype == "float64"):
        _, xs, ys = data(jnp.dtype(dtype), n=n)
        w0 = jnp.full((5,), 0.1, jnp.dtype(dtype))
        ws = averaging.sgd_iterates(xs, ys, ETA, w0)
        ws64 = np.asarray(ws, np.float64)
        log_discount = log_rhos(ws.dtype)
        taus = jnp.asarray([n // 2, 0, n - 1, 17, 17], jnp.int32)
        geo_ref = np.array([ref.geometric_average(ws64, r) for r in RHOS])
        tail_ref = np.array([ref.tail_average(ws64, int(t)) for t in taus])
        tol = TOL[dtype]
        assert rel_err(averaging.geometric_path(ws, log_discount), geo_ref) < tol
        assert rel_err(averaging.tail_path(ws, taus), tail_ref) < tol
        for k in (2, 7, 64):
            size = -(-(n + 1) // k)
            geo, tail = averaging.path_of_iterates(
                ws, log_discount=log_discount, tail_start=taus, chunk_size=size
            )
            assert rel_err(geo, geo_ref) < tol
            assert rel_err(tail, tail_ref) < tol
            got = averaging.chunked_geometric_average(ws, log_discount, k)
            assert rel_err(got, geo_ref) < tol
        for mode, extra in [("product", {}), ("stream", {"block_size": 64})]:
            res = averaging.regularization_path(
                xs,
                ys,
                ETA,
                log_discount=log_discount,
                tail_start=taus,
                initial_point=w0,
                mode=mode,
                **extra,
            )
            assert res.mode == mode
            assert rel_err(res.geometric, geo_ref) < tol, mode
            assert rel_err(res.tail, tail_ref) < tol, mode
            assert rel_err(res.final, ws64[-1]) < tol


def test_path_from_regularization_and_auto_mode(x64):
    _, xs, ys = data(jnp.float64, n=4200)  # > 8 * 512: "product" runs block by block
    lams = jnp.asarray([0.0, 0.1, 2.0])
    modes = {}
    for budget in (1e9, 250_000, 100):
        res = averaging.regularization_path(xs, ys, ETA, regularization=lams, memory_budget=budget)
        modes[res.mode] = res.geometric
    assert set(modes) == {"product", "chunked", "stream"}
    ws = ref.sgd_iterates(xs, ys, ETA)
    lams64 = np.asarray(lams, np.float64)
    expect = np.array([ref.geometric_average(ws, ref.rho_exact(ETA, lam)) for lam in lams64])
    for got in modes.values():
        assert rel_err(got, expect) < 1e-12
    paper = averaging.regularization_path(xs, ys, ETA, regularization=lams, convention="paper")
    expect = np.array([ref.geometric_average(ws, ref.rho_paper(ETA, lam)) for lam in lams64])
    assert rel_err(paper.geometric, expect) < 1e-12


def test_stream_path_with_generated_data_never_stored():
    problem = regression.well_conditioned_problem(jax.random.key(3), 4)
    key = jax.random.key(4)
    n, size = 1000, 128

    def block_fn(data, b, block_size):
        return regression.sample_block(data[0], data[1], b, block_size)

    log_discount = jnp.log(jnp.asarray([1.0, 0.99]))
    res = averaging.stream_path(
        block_fn,
        (key, problem),
        n,
        0.05,
        log_discount=log_discount,
        tail_start=jnp.asarray([500]),
        initial_point=jnp.zeros(4),
        block_size=size,
    )
    sampled = [regression.sample_block(key, problem, b, size) for b in range(-(-n // size))]
    xs = np.concatenate([np.asarray(b[0]) for b in sampled])[:n]
    ys = np.concatenate([np.asarray(b[1]) for b in sampled])[:n]
    ws = ref.sgd_iterates(xs, ys, 0.05)
    assert rel_err(res.geometric[1], ref.geometric_average(ws, 0.99)) < 1e-5
    assert rel_err(res.tail[0], ref.tail_average(ws, 500)) < 1e-5


def test_no_recompilation_for_new_values(x64):
    _, xs, ys = data(jnp.float64)
    _, xs2, ys2 = data(jnp.float64, seed=7)
    compiles = []

    def count(name, seconds, **kwargs):
        if name == "/jax/core/compile/backend_compile_duration":
            compiles.append(name)

    jax.monitoring.register_event_duration_secs_listener(count)
    try:
        for mode in ("product", "stream"):
            averaging.regularization_path(
                xs,
                ys,
                ETA,
                regularization=jnp.asarray([0.1, 1.0]),
                tail_start=jnp.asarray([3, 50]),
                mode=mode,
            )
            before = len(compiles)
            averaging.regularization_path(
                xs2,
                ys2,
                0.03,
                regularization=jnp.asarray([0.2, 5.0]),
                tail_start=jnp.asarray([10, 60]),
                mode=mode,
            )
            assert len(compiles) == before  # other values and data: nothing compiled again
    finally:
        jax.monitoring.unregister_event_duration_listener(count)


def test_select_on_holdout_matches_loop(x64):
    problem, xs, ys = data(jnp.float64)
    x_val, y_val = regression.sample(jax.random.key(9), problem, 100)
    lams = jnp.asarray([0.0, 0.01, 0.1, 1.0, 10.0])
    res = averaging.regularization_path(xs, ys, ETA, regularization=lams)
    best, index, errors = averaging.select_on_holdout(res.geometric, x_val, y_val)
    loop = [
        np.mean((np.asarray(x_val) @ np.asarray(w) - np.asarray(y_val)) ** 2) for w in res.geometric
    ]
    np.testing.assert_allclose(errors, loop, rtol=1e-12)
    assert int(index) == int(np.argmin(loop))
    np.testing.assert_array_equal(best, res.geometric[int(index)])


def test_folding_blocks_by_hand_matches_reference(x64):
    _, xs, ys = data(jnp.float64)
    ws = averaging.sgd_iterates(xs, ys, ETA)
    ws64 = np.asarray(ws)
    log_discount = log_rhos(jnp.float64)
    taus = jnp.asarray([150, 3, 60], jnp.int32)
    order = jnp.argsort(taus)
    geo = jnp.zeros((len(RHOS), 5))
    seg = jnp.zeros((4, 5))
    size = 64  # 201 iterates: 3 full blocks and one of 9 real rows padded with garbage
    table = blocks.discount_table(log_discount, size)
    for offset in range(0, N + 1, size):
        length = min(size, N + 1 - offset)
        block = jnp.full((size, 5), 1e6).at[:length].set(ws[offset : offset + length])
        geo = blocks.fold_geometric(geo, table, log_discount, block, offset, length)
        seg = blocks.fold_tail_segments(seg, taus[order], block, offset, length)
    tails = blocks.tail_averages(seg, taus[order], order, N)
    expect = np.array([ref.geometric_average(ws64, rho) for rho in RHOS])
    assert rel_err(geo, expect) < 1e-12
    assert rel_err(tails, [ref.tail_average(ws64, int(t)) for t in taus]) < 1e-12
    lengths = jnp.asarray([0, 1, 7])
    mass = weights.mass(log_discount[:, None], lengths[None, :])
    inverse = weights.inverse_mass(log_discount[:, None], lengths[None, :])
    np.testing.assert_allclose(inverse[:, 1:] * mass[:, 1:], 1.0, rtol=1e-14)
    np.testing.assert_array_equal(inverse[:, 0], 1.0)  # an empty block: scale 1, weight 0


def test_public_entry_points_are_traceable(x64):
    """Checked on concrete input, skipped on tracers: the same numbers under jit and vmap."""
    problem, xs, ys = data(jnp.float64)
    x_val, y_val = regression.sample(jax.random.key(9), problem, 50)
    w0 = jnp.full(5, 0.1)
    lams = jnp.asarray([0.0, 0.1, 2.0])
    taus = jnp.asarray([0, 17, 150], jnp.int32)

    def everything(xs, ys, eta, w0, lams, taus):
        log_discount = averaging.log_discount_from_regularization(eta, lams)
        ws = averaging.sgd_iterates(xs, ys, eta, w0)
        geo, tail = averaging.path_of_iterates(ws, log_discount=log_discount, tail_start=taus)
        gamma = averaging.linked_step_size(eta, lams)
        ridge_sgd = averaging.ridge_sgd_runs(xs, ys, gamma, lams, w0)
        ridge = averaging.ridge_regression(xs, ys, lams, w0)
        _, index, errors = averaging.select_on_holdout(geo, x_val, y_val)
        return dict(
            final=averaging.sgd_final(xs, ys, eta, w0),
            geo=geo,
            tail=tail,
            geometric=averaging.geometric_average(ws, log_discount),
            tail_average=averaging.tail_average(ws, taus),
            ridge_sgd=ridge_sgd,
            ridge=ridge,
            index=index,
            errors=errors,
        )

    args = (xs, ys, jnp.float64(ETA), w0, lams, taus)
    eager = everything(*args)
    traced = jax.jit(everything)(*args)
    ws64 = ref.sgd_iterates(xs, ys, ETA, w0)
    rhos = [ref.rho_exact(ETA, lam) for lam in np.asarray(lams)]
    assert rel_err(eager["geo"], [ref.geometric_average(ws64, r) for r in rhos]) < 1e-12
    assert rel_err(eager["tail"], [ref.tail_average(ws64, int(t)) for t in taus]) < 1e-12
    for name, value in eager.items():  # against each array's scale, not elementwise near 0
        scale = 1e-12 * float(np.max(np.abs(np.asarray(value, np.float64))))
        np.testing.assert_allclose(traced[name], value, rtol=1e-12, atol=scale, err_msg=name)
    # vmap over seeds (the experiment's shape) equals the loop
    stacked = jax.tree.map(lambda a: jnp.stack([a, 2 * a]), (xs, ys))
    batched = jax.vmap(lambda x, y: everything(x, y, *args[2:]))(*stacked)
    for seed, (x, y) in enumerate(zip(*stacked)):
        one = everything(x, y, *args[2:])
        for name, value in one.items():
            scale = 1e-12 * float(np.max(np.abs(np.asarray(value, np.float64))))
            np.testing.assert_allclose(batched[name][seed], value, rtol=1e-12, atol=scale)


def test_stream_path_rejects_data_shorter_than_its_blocks():
    xs, ys = jnp.ones((10, 3)), jnp.ones(10)
    with pytest.raises(ojax.InputError, match=r"data\[0\] must hold at least 12 rows"):
        averaging.stream_path(
            averaging.array_blocks,
            (xs, ys),
            10,
            0.1,
            log_discount=jnp.zeros(1),
            initial_point=jnp.zeros(3),
            block_size=4,
        )
    with pytest.raises(ojax.InputError, match="w_star_norm"):
        regression.make_problem(jax.random.key(0), [1.0, 0.5], w_star_norm=float("nan"))
