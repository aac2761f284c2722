"""Iterate averaging against the float64 NumPy reference of tests/reference_averaging.py."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import ojax
from ojax import averaging, losses
from ojax.averaging import path as path_mod
from ojax.averaging import weights as W
from ojax.envs import regression

sys.path.insert(0, str(Path(__file__).parent))
import reference_averaging as ref  # noqa: E402

RHOS = [1.0, 0.999, 0.9, 0.5, 0.03]
TOL = {"float64": 1e-12, "float32": 1e-5}
ETA = 0.05


def rel_err(a, b) -> float:
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    assert np.all(np.isfinite(a)), "NaN or Inf in the result"
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


N = 200  # one sample size wherever the check allows: the jitted functions compile once per dtype


@functools.cache
def _data(dtype_name, n, seed):
    with jax.enable_x64(dtype_name == "float64"):
        problem = regression.ill_conditioned_problem(jax.random.key(seed), dtype=dtype_name)
        xs, ys = regression.sample(jax.random.key(seed + 1), problem, n)
    return problem, xs, ys


def data(dtype, n=N, seed=0):
    """A cached ill-conditioned sample (shared by the tests; arrays are immutable)."""
    return _data(jnp.dtype(dtype).name, n, seed)


def log_rhos(dtype):
    return jnp.log(jnp.asarray(RHOS, dtype))


# ------------------------------------------------------------------------------------------------
# SGD and regularized SGD, step by step
# ------------------------------------------------------------------------------------------------


def test_sgd_iterates_step_by_step_x64(x64):
    _, xs, ys = data(jnp.float64)
    w0 = np.linspace(-0.5, 0.5, 5)
    ws = averaging.sgd_iterates(xs, ys, ETA, w0)
    expect = ref.sgd_iterates(xs, ys, ETA, w0)
    assert ws.shape == (201, 5)
    assert rel_err(ws, expect) < 1e-13
    np.testing.assert_allclose(averaging.sgd_final(xs, ys, ETA, w0), expect[-1], rtol=1e-12)


def test_sgd_predictor_in_the_runner_matches_reference_per_step(x64):
    _, xs, ys = data(jnp.float64)
    w0 = jnp.asarray([0.1, -0.2, 0.3, 0.0, 0.5])
    learner = averaging.least_squares_sgd(w0, averaging.geometric_averager())
    params = averaging.AveragedParams(
        averaging.SGDParams(jnp.float64(ETA)), averaging.GeometricParams(jnp.log(0.9))
    )
    inner = learner  # record both the SGD weights and the running geometric average
    state, trace = ojax.run(
        inner,
        params,
        xs,
        ys,
        losses.square,
        record=lambda s, p: jnp.stack([s.learner.learner.point, s.learner.averager.average]),
    )
    expect = ref.sgd_iterates(xs, ys, ETA, w0)
    np.testing.assert_allclose(trace.iterate[:, 0], expect[:-1], rtol=1e-12, atol=1e-14)
    preds = np.einsum("td,td->t", expect[:-1], np.asarray(xs))
    np.testing.assert_allclose(trace.prediction, preds, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(trace.loss, 0.5 * (preds - np.asarray(ys)) ** 2, rtol=1e-12)
    prefix = ref.prefix_geometric_averages(expect, 0.9)
    assert rel_err(trace.iterate[:, 1], prefix[:-1]) < 1e-13
    assert rel_err(averaging.average_of(state.learner), prefix[-1]) < 1e-13


def test_ridge_sgd_step_by_step_x64(x64):
    _, xs, ys = data(jnp.float64)
    w0 = jnp.asarray([0.3, 0.0, -0.1, 0.2, 0.1])
    gammas = np.array([0.04, 0.05, 0.02])
    lams = np.array([0.0, 0.5, 3.0])
    runs = averaging.ridge_sgd_runs(xs, ys, gammas, lams, w0)
    for g, lam, got in zip(gammas, lams, runs):
        assert rel_err(got, ref.ridge_sgd(xs, ys, g, lam, w0)[-1]) < 1e-13
    learner = averaging.least_squares_ridge_sgd(w0)
    params = averaging.RidgeSGDParams(jnp.float64(0.05), jnp.float64(0.5))
    _, trace = ojax.run(
        learner, params, xs, ys, losses.square, record=ojax.linear_weights(averaging.ridge_sgd())
    )
    expect = ref.ridge_sgd(xs, ys, 0.05, 0.5, w0)
    assert rel_err(trace.iterate, expect[:-1]) < 1e-13


def test_ridge_closed_form_and_solution(x64):
    _, xs, ys = data(jnp.float64)
    w0 = np.full(5, 0.2)
    lams = np.array([0.0, 0.01, 1.0])
    got = averaging.ridge_regression(xs, ys, lams, w0)
    X, y = np.asarray(xs), np.asarray(ys)
    for lam, g in zip(lams, got):
        expect = ref.ridge(X.T @ X / N, X.T @ y / N, lam, w0)
        assert rel_err(g, expect) < 1e-10


# ------------------------------------------------------------------------------------------------
# averages of stored iterates, streaming averagers, prefix averages
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_averages_of_stored_iterates(dtype):
    with jax.enable_x64(dtype == "float64"):
        _, xs, ys = data(jnp.dtype(dtype))
        ws = averaging.sgd_iterates(xs, ys, ETA)
        ws64 = np.asarray(ws, np.float64)
        for rho, lr in zip(RHOS, log_rhos(ws.dtype)):
            got = averaging.geometric_average(ws, lr)
            assert got.dtype == ws.dtype
            assert rel_err(got, ref.geometric_average(ws64, rho)) < TOL[dtype]
        assert rel_err(averaging.polyak_average(ws), ref.polyak_average(ws64)) < TOL[dtype]
        for tau in (0, 17, N - 1):
            got = averaging.tail_average(ws, tau)
            assert rel_err(got, ref.tail_average(ws64, tau)) < TOL[dtype]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_streaming_averagers_per_step(dtype):
    with jax.enable_x64(dtype == "float64"):
        _, xs, ys = data(jnp.dtype(dtype))
        ws = averaging.sgd_iterates(xs, ys, ETA)
        ws64 = np.asarray(ws, np.float64)

        def run(avg, params):
            def step(s, w):
                s = avg.update(s, params, w)
                return s, avg.average(s, params)

            return jax.lax.scan(step, avg.init(params, ws[0]), ws[1:])[1]

        def stream(avg, params):
            out = jax.jit(run, static_argnums=0)(avg, params)
            return np.concatenate([ws64[:1], np.asarray(out, np.float64)])

        # every discount in one vmapped scan (one compilation), then each against the reference
        geo = averaging.geometric_averager()
        batch = jax.jit(jax.vmap(lambda lr: run(geo, averaging.GeometricParams(lr))))
        outs = np.asarray(batch(log_rhos(ws.dtype)), np.float64)
        for rho, out in zip(RHOS, outs):
            got = np.concatenate([ws64[:1], out])
            assert rel_err(got, ref.prefix_geometric_averages(ws64, rho)) < TOL[dtype]
        got = stream(averaging.polyak_averager(), ())
        assert rel_err(got, ref.prefix_geometric_averages(ws64, 1.0)) < TOL[dtype]
        got = stream(averaging.tail_averager(), averaging.TailParams(jnp.int32(50)))
        assert rel_err(got, ref.prefix_tail_averages(ws64, 50)) < TOL[dtype]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_prefix_averages_by_associative_scan(dtype):
    with jax.enable_x64(dtype == "float64"):
        _, xs, ys = data(jnp.dtype(dtype))
        ws = averaging.sgd_iterates(xs, ys, ETA)
        ws64 = np.asarray(ws, np.float64)
        for rho, lr in zip(RHOS, log_rhos(ws.dtype)):
            got = averaging.prefix_averages(ws, lr)
            assert rel_err(got, ref.prefix_geometric_averages(ws64, rho)) < TOL[dtype]


def test_merge_is_associative(x64):
    rng = np.random.default_rng(0)
    lr = jnp.log(0.7)
    chunks = [jnp.asarray(rng.normal(size=(k, 3))) for k in (3, 1, 5)]

    @jax.jit  # one compilation instead of one per eager operation
    def both(chunks, lr):
        a, b, c = (averaging.chunk_stats(ch, lr) for ch in chunks)
        left = averaging.merge(averaging.merge(a, b, lr), c, lr)
        right = averaging.merge(a, averaging.merge(b, c, lr), lr)
        return left, right

    left, right = both(chunks, lr)
    whole = ref.geometric_average(np.concatenate(chunks), 0.7)
    assert rel_err(left.average, whole) < 1e-14
    assert rel_err(right.average, whole) < 1e-14
    assert int(left.length) == int(right.length) == 9


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
        lr = log_rhos(ws.dtype)
        taus = jnp.asarray([n // 2, 0, n - 1, 17, 17], jnp.int32)
        geo_ref = np.array([ref.geometric_average(ws64, r) for r in RHOS])
        tail_ref = np.array([ref.tail_average(ws64, int(t)) for t in taus])
        tol = TOL[dtype]
        assert rel_err(averaging.geometric_path(ws, lr), geo_ref) < tol
        assert rel_err(averaging.tail_path(ws, taus), tail_ref) < tol
        for k in (2, 7, 64):
            size = -(-(n + 1) // k)
            geo, tail = averaging.path_of_iterates(
                ws, log_discount=lr, tail_start=taus, chunk_size=size
            )
            assert rel_err(geo, geo_ref) < tol
            assert rel_err(tail, tail_ref) < tol
            got = averaging.chunked_geometric_average(ws, lr, k)
            assert rel_err(got, geo_ref) < tol
        for mode, extra in [("product", {}), ("stream", {"block_size": 64})]:
            res = averaging.regularization_path(
                xs,
                ys,
                ETA,
                log_discount=lr,
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

    lr = jnp.log(jnp.asarray([1.0, 0.99]))
    res = averaging.stream_path(
        block_fn,
        (key, problem),
        n,
        0.05,
        log_discount=lr,
        tail_start=jnp.asarray([500]),
        initial_point=jnp.zeros(4),
        block_size=size,
    )
    blocks = [regression.sample_block(key, problem, b, size) for b in range(-(-n // size))]
    xs = np.concatenate([np.asarray(b[0]) for b in blocks])[:n]
    ys = np.concatenate([np.asarray(b[1]) for b in blocks])[:n]
    ws = ref.sgd_iterates(xs, ys, 0.05)
    assert rel_err(res.geometric[1], ref.geometric_average(ws, 0.99)) < 1e-5
    assert rel_err(res.tail[0], ref.tail_average(ws, 500)) < 1e-5


def test_no_recompilation_for_new_values(x64):
    _, xs, ys = data(jnp.float64)
    _, xs2, ys2 = data(jnp.float64, seed=7)
    for mode in ("product", "stream"):
        averaging.regularization_path(
            xs,
            ys,
            ETA,
            regularization=jnp.asarray([0.1, 1.0]),
            tail_start=jnp.asarray([3, 50]),
            mode=mode,
        )
        fn = path_mod._product if mode == "product" else path_mod._stream
        before = fn._cache_size()
        averaging.regularization_path(
            xs2,
            ys2,
            0.03,
            regularization=jnp.asarray([0.2, 5.0]),
            tail_start=jnp.asarray([10, 60]),
            mode=mode,
        )
        assert fn._cache_size() == before


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


# ------------------------------------------------------------------------------------------------
# the expectation identity, the ridge limit, Monte Carlo
# ------------------------------------------------------------------------------------------------


def test_expectation_identity_exact_means(x64):
    problem = regression.ill_conditioned_problem(jax.random.key(0), dtype=jnp.float64)
    cov, cross = regression.covariance(problem), regression.cross_moment(problem)
    w0 = jnp.asarray([0.5, -0.5, 0.25, 0.0, 1.0])
    n = 400
    for lam in (0.01, 0.3, 2.0, 15.0):
        gamma = float(averaging.linked_step_size(ETA, lam))
        rho = 1.0 - gamma * lam
        means = averaging.expected_sgd_iterates(cov, cross, jnp.float64(ETA), w0, n)
        lr = averaging.log_discount_from_regularization(ETA, lam)
        w_tilde = averaging.geometric_average(means, lr)
        lhs = averaging.expected_ridge_sgd(cov, cross, jnp.float64(gamma), jnp.float64(lam), w0, n)
        rhs = (1 - rho ** (n + 1)) * w_tilde + rho ** (n + 1) * means[-1]
        assert rel_err(rhs, lhs) < 1e-12
        # the same numbers from the independent reference recursions
        ref_means = ref.expected_sgd(np.asarray(cov), np.asarray(cross), ETA, w0, n)
        assert rel_err(means, ref_means) < 1e-12
        ref_lhs = ref.expected_ridge_sgd(
            np.asarray(cov), np.asarray(cross), gamma, lam, np.asarray(w0), n
        )
        assert rel_err(lhs, ref_lhs) < 1e-12


def test_ridge_limit(x64):
    problem = regression.ill_conditioned_problem(jax.random.key(1), dtype=jnp.float64)
    cov, cross = regression.covariance(problem), regression.cross_moment(problem)
    w0 = jnp.asarray([0.2, 0.1, 0.0, -0.1, -0.2])
    n, lams = 6000, jnp.asarray([0.5, 2.0])
    means = averaging.expected_sgd_iterates(cov, cross, jnp.float64(ETA), w0, n)
    ridge = averaging.ridge_solution(cov, cross, lams, w0)
    lr = averaging.log_discount_from_regularization(ETA, lams)
    for lam, lri, r in zip(lams, lr, ridge):
        assert rel_err(r, ref.ridge(np.asarray(cov), np.asarray(cross), float(lam), w0)) < 1e-12
        assert rel_err(averaging.geometric_average(means, lri), r) < 1e-10
        gamma = averaging.linked_step_size(ETA, lam)
        v = averaging.expected_ridge_sgd(cov, cross, gamma, lam, w0, n)
        assert rel_err(v, r) < 1e-10


def test_monte_carlo_means_within_standard_errors(x64):
    problem = regression.ill_conditioned_problem(jax.random.key(2), dtype=jnp.float64)
    cov, cross = regression.covariance(problem), regression.cross_moment(problem)
    n, runs, lam = 40, 2000, 0.5
    gamma = averaging.linked_step_size(ETA, lam)
    keys = jax.random.split(jax.random.key(5), runs)
    lr = averaging.log_discount_from_regularization(ETA, jnp.asarray([lam]))

    def one(key):
        xs, ys = regression.sample(key, problem, n)
        w_tilde = averaging.geometric_average(averaging.sgd_iterates(xs, ys, ETA), lr[0])
        v = averaging.ridge_sgd_runs(xs, ys, gamma, lam)
        return w_tilde, v

    w_tilde, v = jax.jit(jax.vmap(one))(keys)
    means = averaging.expected_sgd_iterates(cov, cross, jnp.float64(ETA), jnp.zeros(5), n)
    exact_tilde = averaging.geometric_average(means, lr[0])
    exact_v = averaging.expected_ridge_sgd(cov, cross, gamma, lam, jnp.zeros(5), n)
    for sample, exact in ((w_tilde, exact_tilde), (v, exact_v)):
        se = np.std(sample, axis=0, ddof=1) / np.sqrt(runs)
        z = np.abs(np.mean(sample, axis=0) - exact) / se
        assert np.all(z < 4.5), z


# ------------------------------------------------------------------------------------------------
# float32 pitfalls
# ------------------------------------------------------------------------------------------------


def test_float32_small_eta_lambda_keeps_the_regularization():
    eta, lam = np.float32(0.1), np.float32(2e-6)  # eta lambda = 2e-7
    ld = averaging.log_discount_from_regularization(eta, lam)
    assert ld.dtype == jnp.float32
    eff = float(averaging.effective_regularization(eta, ld))
    assert abs(eff - 2e-6) / 2e-6 < 1e-6
    paper = averaging.log_discount_from_regularization(eta, lam, "paper")
    eff_paper = float(averaging.regularization_from_log_discount(eta, paper, "paper"))
    assert abs(eff_paper - 2e-6) / 2e-6 < 1e-6
    # the naive float32 discount 1 - eta lambda is far off (the pitfall the log form avoids)
    naive = (1 / (np.float32(1) - eta * lam) - np.float32(1)) / eta
    assert abs(naive - 2e-6) / 2e-6 > 0.05
    # the weights over 2e6 + 1 iterates: rho^n = exp(-0.4), not Polyak-Ruppert's flat weights
    num = 2_000_001
    w = np.asarray(W.geometric_weights(ld, num), np.float64)
    t = np.arange(num)
    lr64 = -np.log1p(0.1 * 2e-6)
    expect = np.exp(t * lr64) * np.expm1(lr64) / np.expm1(num * lr64)
    assert np.max(np.abs(w - expect) / expect) < 1e-5
    assert abs(w[-1] / w[0] - np.exp(-0.4)) < 1e-5
    # and the streamed merge weights agree with the closed form at such sizes
    a, b = W.merge_weights(ld, jnp.int32(num - 1), 1)
    assert abs(float(b) - expect[-1]) / expect[-1] < 1e-5
    assert np.isfinite(float(a))


def test_tiny_discount_underflow_gives_no_nan():
    # the shapes of the float32 path test (compiled functions are shared): rho = 0.03 underflows
    # after ~25 steps and 1e-30 after 2, so most of the 201 weights and 6 of the 7 chunks are 0
    ws = jnp.asarray(np.random.default_rng(0).normal(size=(N + 1, 5)), jnp.float32)
    lr = jnp.log(jnp.asarray([0.03, 1e-30, 1.0, 0.5, 0.9], jnp.float32))
    for got in (
        averaging.geometric_path(ws, lr),
        averaging.geometric_path(ws, lr, chunk_size=-(-(N + 1) // 7)),
        averaging.chunked_geometric_average(ws, lr, 7),
    ):
        assert np.all(np.isfinite(got))
        assert rel_err(got[1], ws[0]) < 1e-6  # all the weight on w_0


# ------------------------------------------------------------------------------------------------
# bad input
# ------------------------------------------------------------------------------------------------


def test_bad_inputs_raise_clear_errors():
    _, xs, ys = data(jnp.float32)
    ws = averaging.sgd_iterates(xs, ys, ETA)
    with pytest.raises(ojax.InputError, match=r"regularization must lie in \[0, 1/learning_rate"):
        averaging.log_discount_from_regularization(0.1, 10.0, "paper")
    with pytest.raises(ojax.InputError, match="regularization"):
        averaging.log_discount_from_regularization(0.1, -1.0)
    with pytest.raises(ojax.InputError, match="regularization"):
        averaging.regularization_path(
            xs, ys, 0.1, regularization=jnp.asarray([1.0, 20.0]), convention="paper"
        )
    with pytest.raises(ojax.InputError, match="log_discount"):
        averaging.geometric_average(ws, 0.1)
    with pytest.raises(ojax.InputError, match="log_discount"):
        averaging.geometric_path(ws, jnp.asarray([-0.1, 0.2]))
    with pytest.raises(ojax.InputError, match="log_discount"):
        averaging.geometric_averager().check_params(averaging.GeometricParams(jnp.float32(1.0)))
    with pytest.raises(ojax.InputError, match="tail_start"):
        averaging.tail_average(ws, N)  # tau >= n
    with pytest.raises(ojax.InputError, match="tail_start"):
        averaging.tail_path(ws, jnp.asarray([3, -1]))
    with pytest.raises(ojax.InputError, match="tail_start"):
        averaging.regularization_path(xs, ys, ETA, tail_start=jnp.asarray([N + 5]))
    with pytest.raises(ojax.InputError, match="ys must have shape"):
        averaging.sgd_iterates(xs, ys[:-1], ETA)
    with pytest.raises(ojax.InputError, match="initial_point"):
        averaging.sgd_iterates(xs, ys, ETA, jnp.zeros(3))
    with pytest.raises(ojax.InputError, match="iterates must have shape"):
        averaging.geometric_average(ws[0], -0.1)
    with pytest.raises(ojax.InputError, match="x_val"):
        averaging.select_on_holdout(ws[:3], xs[:, :2], ys)
    with pytest.raises(ojax.InputError, match="learning_rate"):
        averaging.sgd_iterates(xs, ys, -0.1)
    with pytest.raises(ojax.InputError, match="xs must be finite"):
        averaging.sgd_iterates(xs.at[3, 1].set(jnp.nan), ys, ETA)
    with pytest.raises(ojax.InputError, match="mode"):
        averaging.regularization_path(xs, ys, ETA, log_discount=jnp.zeros(2), mode="fast")
    with pytest.raises(ojax.InputError, match=r"regularization must lie in \[0, 1/learning_rate"):
        averaging.ridge_sgd().check_params(averaging.RidgeSGDParams(0.5, 2.0))


# ------------------------------------------------------------------------------------------------
# the time axis sharded across 4 (virtual) devices, in a subprocess
# ------------------------------------------------------------------------------------------------

SHARDED = textwrap.dedent(
    """
    import json, os, sys
    os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp, numpy as np
    from ojax import averaging
    from ojax.envs import regression
    assert jax.device_count() == 4, jax.devices()
    out = {}
    for dtype in ("float64", "float32"):
        problem = regression.ill_conditioned_problem(jax.random.key(0), dtype=jnp.float64)
        xs, ys = regression.sample(jax.random.key(1), problem, 301)   # 302 iterates: 4 uneven
        ws = averaging.sgd_iterates(xs.astype(dtype), ys.astype(dtype), 0.05)
        lr = jnp.log(jnp.asarray(%s, dtype))
        got = averaging.sharded_geometric_average(ws, lr)
        single = averaging.sharded_geometric_average(ws, lr[1])
        out[dtype] = {"iterates": np.asarray(ws, np.float64).tolist(),
                      "got": np.asarray(got, np.float64).tolist(),
                      "single": np.asarray(single, np.float64).tolist(),
                      "sharding": str(got.sharding)}
    json.dump(out, sys.stdout)
    """
)


def test_sharded_time_axis_matches_serial():
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=4")
    proc = subprocess.run(
        [sys.executable, "-c", SHARDED % repr(RHOS)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout)
    for dtype, res in out.items():
        ws = np.asarray(res["iterates"])
        expect = np.array([ref.geometric_average(ws, r) for r in RHOS])
        assert rel_err(res["got"], expect) < TOL[dtype], dtype
        assert rel_err(res["single"], expect[1]) < TOL[dtype], dtype


def test_stream_path_rejects_data_shorter_than_its_blocks():
    xs, ys = jnp.ones((10, 3)), jnp.ones(10)
    with pytest.raises(ojax.InputError, match=r"data\[0\] must hold at least 12 rows"):
        averaging.stream_path(
            path_mod.array_blocks,
            (xs, ys),
            10,
            0.1,
            log_discount=jnp.zeros(1),
            initial_point=jnp.zeros(3),
            block_size=4,
        )
    with pytest.raises(ojax.InputError, match="w_star_norm"):
        regression.make_problem(jax.random.key(0), [1.0, 0.5], w_star_norm=float("nan"))
