"""Iterate averaging against the float64 NumPy reference of tests/reference_averaging.py."""

from __future__ import annotations

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
from ojax.averaging import weights
from ojax.envs import regression

sys.path.insert(0, str(Path(__file__).parent))
import reference_averaging as ref  # noqa: E402
from averaging_cases import ETA, RHOS, TOL, N, data, log_rhos, rel_err  # noqa: E402
from tolerances import scaled_atol

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
        record=lambda step: jnp.stack(
            [step.state.learner.learner.point, step.state.learner.averager.average]
        ),
    )
    expect = ref.sgd_iterates(xs, ys, ETA, w0)
    np.testing.assert_allclose(
        trace.record[:, 0], expect[:-1], rtol=1e-12, atol=scaled_atol(expect)
    )
    preds = np.einsum("td,td->t", expect[:-1], np.asarray(xs))
    np.testing.assert_allclose(trace.prediction, preds, rtol=1e-12, atol=scaled_atol(preds))
    loss = 0.5 * (preds - np.asarray(ys)) ** 2
    np.testing.assert_allclose(trace.loss, loss, rtol=1e-12, atol=scaled_atol(loss))
    prefix = ref.prefix_geometric_averages(expect, 0.9)
    assert rel_err(trace.record[:, 1], prefix[:-1]) < 1e-13
    assert rel_err(averaging.average_of(state.learner), prefix[-1]) < 1e-13


def test_average_of_reads_the_mean_of_either_polyak_form(x64):
    # the running-sum form carries the sum: average_of must divide it, not hand it back
    _, xs, ys = data(jnp.float64)
    w0 = jnp.asarray([0.1, -0.2, 0.3, 0.0, 0.5])
    expect = ref.prefix_geometric_averages(ref.sgd_iterates(xs, ys, ETA, w0), 1.0)[-1]
    for running_sum in (False, True):
        learner = averaging.least_squares_sgd(w0, averaging.polyak_averager(running_sum))
        params = averaging.AveragedParams(averaging.SGDParams(jnp.float64(ETA)), ())
        state, _ = ojax.run(learner, params, xs, ys, losses.square)
        assert isinstance(state.learner.averager, averaging.RunningSumState) == running_sum
        assert rel_err(averaging.average_of(state.learner), expect) < 1e-13


def test_ridge_sgd_step_by_step_x64(x64):
    _, xs, ys = data(jnp.float64)
    w0 = jnp.asarray([0.3, 0.0, -0.1, 0.2, 0.1])
    gammas = np.array([0.04, 0.05, 0.02])
    lams = np.array([0.0, 0.5, 3.0])
    runs = averaging.ridge_sgd_runs(xs, ys, gammas, lams, w0)
    averages = averaging.ridge_sgd_runs(xs, ys, gammas, lams, w0, average=True)
    for g, lam, got, mean in zip(gammas, lams, runs, averages):
        iterates = ref.ridge_sgd(xs, ys, g, lam, w0)  # v_0..v_n
        assert rel_err(got, iterates[-1]) < 1e-13
        assert rel_err(mean, iterates.mean(axis=0)) < 1e-13  # Polyak-Ruppert, v_0 included
    learner = averaging.least_squares_ridge_sgd(w0)
    params = averaging.RidgeSGDParams(jnp.float64(0.05), jnp.float64(0.5))
    _, trace = ojax.run(
        learner, params, xs, ys, losses.square, record=ojax.linear_weights(averaging.ridge_sgd())
    )
    expect = ref.ridge_sgd(xs, ys, 0.05, 0.5, w0)
    assert rel_err(trace.record, expect[:-1]) < 1e-13


def test_known_covariance_iterates_step_by_step_x64(x64):
    """w_t = w_{t-1} - eta (Sigma w_{t-1} - y_t x_t), every iterate against a NumPy loop."""
    _, xs, ys = data(jnp.float64)
    rng = np.random.default_rng(8)
    m = rng.normal(size=(5, 5))
    cov = m @ m.T / 5 + 0.1 * np.eye(5)
    w0 = np.array([0.3, 0.0, -0.1, 0.2, 0.1])
    got = averaging.known_covariance_iterates(xs, ys, cov, 0.05, w0)
    w, expect = w0.copy(), [w0.copy()]
    for x, y in zip(np.asarray(xs), np.asarray(ys)):
        w = w - 0.05 * (cov @ w - y * x)
        expect.append(w.copy())
    assert got.shape == (len(ys) + 1, 5)
    assert rel_err(got, np.array(expect)) < 1e-13
    with pytest.raises(ojax.InputError, match="covariance"):
        averaging.known_covariance_iterates(xs, ys, np.eye(4), 0.05)


def test_sgd_scan_masks_the_padded_steps(x64):
    _, xs, ys = data(jnp.float64)
    w0 = jnp.full(5, 0.2)
    expect = ref.sgd_iterates(np.asarray(xs)[:150], np.asarray(ys)[:150], ETA, np.asarray(w0))
    scan = jax.jit(averaging.sgd_scan, static_argnames="store")
    last, after = scan(xs, ys, ETA, w0, store=True, num_valid=jnp.int32(150))
    assert rel_err(last, expect[-1]) < 1e-13
    assert rel_err(after[:150], expect[1:]) < 1e-13
    np.testing.assert_array_equal(after[150:], np.broadcast_to(last, (N - 150, 5)))
    unmasked, nothing = scan(xs[:150], ys[:150], ETA, w0, store=False)
    assert nothing is None
    np.testing.assert_array_equal(unmasked, last)


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
        for rho, log_discount in zip(RHOS, log_rhos(ws.dtype)):
            got = averaging.geometric_average(ws, log_discount)
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
        batch = jax.jit(
            jax.vmap(lambda log_discount: run(geo, averaging.GeometricParams(log_discount)))
        )
        outs = np.asarray(batch(log_rhos(ws.dtype)), np.float64)
        for rho, out in zip(RHOS, outs):
            got = np.concatenate([ws64[:1], out])
            assert rel_err(got, ref.prefix_geometric_averages(ws64, rho)) < TOL[dtype]
        for running_sum in (False, True):  # the merge form and the running sum
            got = stream(averaging.polyak_averager(running_sum), ())
            assert rel_err(got, ref.prefix_geometric_averages(ws64, 1.0)) < TOL[dtype]
        got = stream(averaging.tail_averager(), averaging.TailParams(jnp.int32(50)))
        assert rel_err(got, ref.prefix_tail_averages(ws64, 50)) < TOL[dtype]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_prefix_averages_by_associative_scan(dtype):
    with jax.enable_x64(dtype == "float64"):
        _, xs, ys = data(jnp.dtype(dtype))
        ws = averaging.sgd_iterates(xs, ys, ETA)
        ws64 = np.asarray(ws, np.float64)
        for rho, log_discount in zip(RHOS, log_rhos(ws.dtype)):
            got = averaging.prefix_averages(ws, log_discount)
            assert rel_err(got, ref.prefix_geometric_averages(ws64, rho)) < TOL[dtype]


def test_merge_is_associative(x64):
    rng = np.random.default_rng(0)
    log_discount = jnp.log(0.7)
    chunks = [jnp.asarray(rng.normal(size=(k, 3))) for k in (3, 1, 5)]

    @jax.jit  # one compilation instead of one per eager operation
    def both(chunks, log_discount):
        a, b, c = (averaging.chunk_stats(ch, log_discount) for ch in chunks)
        left = averaging.merge(averaging.merge(a, b, log_discount), c, log_discount)
        right = averaging.merge(a, averaging.merge(b, c, log_discount), log_discount)
        return left, right

    left, right = both(chunks, log_discount)
    whole = ref.geometric_average(np.concatenate(chunks), 0.7)
    assert rel_err(left.average, whole) < 1e-14
    assert rel_err(right.average, whole) < 1e-14
    assert int(left.length) == int(right.length) == 9


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
        log_discount = averaging.log_discount_from_regularization(ETA, lam)
        w_tilde = averaging.geometric_average(means, log_discount)
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
    log_discount = averaging.log_discount_from_regularization(ETA, lams)
    for lam, one_discount, r in zip(lams, log_discount, ridge):
        assert rel_err(r, ref.ridge(np.asarray(cov), np.asarray(cross), float(lam), w0)) < 1e-12
        assert rel_err(averaging.geometric_average(means, one_discount), r) < 1e-10
        gamma = averaging.linked_step_size(ETA, lam)
        v = averaging.expected_ridge_sgd(cov, cross, gamma, lam, w0, n)
        assert rel_err(v, r) < 1e-10


def test_monte_carlo_means_within_standard_errors(x64):
    problem = regression.ill_conditioned_problem(jax.random.key(2), dtype=jnp.float64)
    cov, cross = regression.covariance(problem), regression.cross_moment(problem)
    n, runs, lam = 40, 2000, 0.5
    gamma = averaging.linked_step_size(ETA, lam)
    keys = jax.random.split(jax.random.key(5), runs)
    log_discount = averaging.log_discount_from_regularization(ETA, jnp.asarray([lam]))

    def one(key):
        xs, ys = regression.sample(key, problem, n)
        w_tilde = averaging.geometric_average(averaging.sgd_iterates(xs, ys, ETA), log_discount[0])
        v = averaging.ridge_sgd_runs(xs, ys, gamma, lam)
        return w_tilde, v

    w_tilde, v = jax.jit(jax.vmap(one))(keys)
    means = averaging.expected_sgd_iterates(cov, cross, jnp.float64(ETA), jnp.zeros(5), n)
    exact_tilde = averaging.geometric_average(means, log_discount[0])
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
    log_discount = averaging.log_discount_from_regularization(eta, lam)
    assert log_discount.dtype == jnp.float32
    eff = float(averaging.effective_regularization(eta, log_discount))
    assert abs(eff - 2e-6) / 2e-6 < 1e-6
    paper = averaging.log_discount_from_regularization(eta, lam, "paper")
    eff_paper = float(averaging.regularization_from_log_discount(eta, paper, "paper"))
    assert abs(eff_paper - 2e-6) / 2e-6 < 1e-6
    # the naive float32 discount 1 - eta lambda is far off (the pitfall the log form avoids)
    naive = (1 / (np.float32(1) - eta * lam) - np.float32(1)) / eta
    assert abs(naive - 2e-6) / 2e-6 > 0.05
    # the weights over 2e6 + 1 iterates: rho^n = exp(-0.4), not Polyak-Ruppert's flat weights
    num = 2_000_001
    w = np.asarray(weights.geometric_weights(log_discount, num), np.float64)
    t = np.arange(num)
    log_discount64 = -np.log1p(0.1 * 2e-6)
    expect = np.exp(t * log_discount64) * np.expm1(log_discount64) / np.expm1(num * log_discount64)
    assert np.max(np.abs(w - expect) / expect) < 1e-5
    assert abs(w[-1] / w[0] - np.exp(-0.4)) < 1e-5
    # and the streamed merge weights agree with the closed form at such sizes
    a, b = weights.merge_weights(log_discount, jnp.int32(num - 1), 1)
    assert abs(float(b) - expect[-1]) / expect[-1] < 1e-5
    assert np.isfinite(float(a))


def test_tiny_discount_underflow_gives_no_nan():
    # the shapes of the float32 path test (compiled functions are shared): rho = 0.03 underflows
    # after ~25 steps and 1e-30 after 2, so most of the 201 weights and 6 of the 7 chunks are 0
    ws = jnp.asarray(np.random.default_rng(0).normal(size=(N + 1, 5)), jnp.float32)
    log_discount = jnp.log(jnp.asarray([0.03, 1e-30, 1.0, 0.5, 0.9], jnp.float32))
    for got in (
        averaging.geometric_path(ws, log_discount),
        averaging.geometric_path(ws, log_discount, chunk_size=-(-(N + 1) // 7)),
        averaging.chunked_geometric_average(ws, log_discount, 7),
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
    with pytest.raises(ojax.InputError, match="learning_rate"):
        averaging.sgd_final(xs, ys, 0.0)
    with pytest.raises(ojax.InputError, match="ys must have shape"):
        averaging.ridge_sgd_runs(xs, ys[:3], 0.1, 0.5)
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
        log_discount = jnp.log(jnp.asarray(%s, dtype))
        got = averaging.sharded_geometric_average(ws, log_discount)
        single = averaging.sharded_geometric_average(ws, log_discount[1])
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
