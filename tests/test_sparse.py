"""Sparse rows and shuffled streams (ojax.sparse): PA-I on sparse rows against a float64 NumPy
loop written from the update rule, against the dense linear PA-I, per step (scores and weights);
orders (a thin wrapper of ojax.run: vmap over orders == each order alone, no retrace); bad
input."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.sparse as sp
from tolerances import scaled_atol

from ojax import losses
from ojax.sparse import sparse_rows
from ojax.transfer import LinearPAParams, linear_pa, run_orders
from ojax.validation import InputError


def reference_pa(x: np.ndarray, y: np.ndarray, c: float) -> tuple[np.ndarray, np.ndarray]:
    """Linear PA-I, float64, one example at a time: the scores before each update and the
    weights after each update."""
    w = np.zeros(x.shape[1])
    scores = np.zeros(len(y))
    weights = np.zeros((len(y), x.shape[1]))
    for t in range(len(y)):
        s = float(w @ x[t])
        scores[t] = s
        loss = max(0.0, 1.0 - y[t] * s)
        norm2 = float(x[t] @ x[t])
        if norm2 > 0:
            w = w + min(c, loss / norm2) * y[t] * x[t]
        weights[t] = w
    return scores, weights


def sparse_stream(seed: int, n: int = 60, d: int = 12, nnz: int = 4):
    rng = np.random.default_rng(seed)
    x = np.zeros((n, d))
    for i in range(n):
        k = rng.integers(0, nnz + 1)  # some rows are empty
        x[i, rng.choice(d, k, replace=False)] = rng.normal(size=k)
    y = np.where(x @ rng.normal(size=d) + 0.3 * rng.normal(size=n) >= 0, 1.0, -1.0)
    return x, y


def test_sparse_rows_layout():
    x = sp.csr_matrix(np.array([[0.0, 0.0, 0.0], [0.0, 5.0, 2.0], [1.0, 0.0, 0.0]]))
    rows = sparse_rows(x, width=3)
    assert rows.indices.dtype == jnp.int32
    np.testing.assert_array_equal(rows.indices, [[0, 0, 0], [1, 2, 0], [0, 0, 0]])
    np.testing.assert_array_equal(rows.values, [[0, 0, 0], [5, 2, 0], [1, 0, 0]])


def _weights(step):
    return step.new_state.weights


@pytest.mark.parametrize("sparse", [True, False])
def test_pa_matches_numpy_reference_per_step(x64, sparse):
    x, y = sparse_stream(0)
    c = 0.7
    ref_scores, ref_w = reference_pa(x, y, c)
    params = LinearPAParams(jnp.asarray(c, jnp.float64))
    rows = sparse_rows(x, dtype=jnp.float64) if sparse else jnp.asarray(x)
    state, trace = run_orders(
        linear_pa(x.shape[1], sparse=sparse), params, rows, y, losses.hinge, record=_weights
    )
    np.testing.assert_allclose(
        trace.prediction, ref_scores, rtol=1e-12, atol=scaled_atol(ref_scores)
    )
    np.testing.assert_allclose(trace.record, ref_w, rtol=1e-12, atol=scaled_atol(ref_w))
    np.testing.assert_allclose(state.weights, ref_w[-1], rtol=1e-12, atol=scaled_atol(ref_w))
    hinge = np.maximum(0.0, 1.0 - y * ref_scores)
    np.testing.assert_allclose(trace.loss, hinge, rtol=1e-12, atol=scaled_atol(hinge))


def test_orders_equal_dense_pa_on_permuted_rows():
    x, y = sparse_stream(1)
    params = LinearPAParams(jnp.float32(0.5))
    orders = np.stack([np.random.default_rng(s).permutation(len(y)) for s in range(3)])
    _, sparse_trace = run_orders(
        linear_pa(x.shape[1], sparse=True), params, sparse_rows(x), y, losses.zero_one, orders
    )
    _, dense_trace = run_orders(
        linear_pa(x.shape[1]), params, jnp.asarray(x, jnp.float32), y, losses.zero_one, orders
    )
    assert sparse_trace.loss.shape == (3, len(y))
    for s, order in enumerate(orders):
        ref_scores, _ = reference_pa(x[order], y[order], 0.5)
        np.testing.assert_allclose(sparse_trace.prediction[s], ref_scores, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(dense_trace.prediction[s], ref_scores, rtol=1e-5, atol=1e-5)
        mistakes = ((ref_scores >= 0) != (y[order] > 0)).astype(np.float32)
        np.testing.assert_array_equal(sparse_trace.loss[s], mistakes)
    # The streams differ (a closed-over order would make them equal).
    assert not np.array_equal(sparse_trace.prediction[0], sparse_trace.prediction[1])


def test_no_retrace_on_new_values():
    x, y = sparse_stream(2)
    rows = sparse_rows(x)
    predictor = linear_pa(x.shape[1], sparse=True)
    traced = [0]

    def update(*args):
        traced[0] += 1
        return predictor.update(*args)

    counting = predictor._replace(update=update)
    counts, losses_seen = [], []
    for seed, c in ((0, 0.1), (1, 2.0), (2, 5.0)):
        orders = np.stack([np.random.default_rng(seed + k).permutation(len(y)) for k in range(2)])
        _, trace = run_orders(
            counting, LinearPAParams(jnp.float32(c)), rows, y, losses.hinge, orders
        )
        counts.append(traced[0])
        losses_seen.append(np.asarray(trace.loss))
    assert counts[0] >= 1 and counts[1] == counts[0] and counts[2] == counts[0]
    assert not np.array_equal(losses_seen[0], losses_seen[1])


def test_vmap_over_c_equals_loop():
    x, y = sparse_stream(3)
    rows = sparse_rows(x)
    predictor = linear_pa(x.shape[1], sparse=True)
    grid = jnp.asarray([0.05, 3.0], jnp.float32)
    orders = np.stack([np.arange(len(y)), np.arange(len(y))[::-1]])

    def predictions(c):
        return run_orders(predictor, LinearPAParams(c), rows, y, losses.hinge, orders)[1].prediction

    batched = jax.vmap(predictions)(grid)
    for i, c in enumerate(grid):
        alone = predictions(c)
        np.testing.assert_allclose(batched[i], alone, rtol=1e-6, atol=scaled_atol(alone, 1e-6))
    assert not np.allclose(batched[0], batched[1])


def test_jit_over_orders_equals_eager():
    """Under jit the orders are traced (their range is not checked) and the results agree."""
    x, y = sparse_stream(5)
    rows = sparse_rows(x)
    predictor = linear_pa(x.shape[1], sparse=True)
    params = LinearPAParams(jnp.float32(0.5))
    orders = jnp.asarray(np.stack([np.random.default_rng(s).permutation(len(y)) for s in range(3)]))

    def losses_of(o):
        return run_orders(predictor, params, rows, y, losses.zero_one, o)[1].loss

    np.testing.assert_array_equal(jax.jit(losses_of)(orders), losses_of(orders))


def test_bad_input():
    x, y = sparse_stream(4)
    rows = sparse_rows(x)
    pa = linear_pa(x.shape[1], sparse=True)
    good = LinearPAParams(jnp.float32(1.0))
    with pytest.raises(InputError, match="C"):
        run_orders(pa, LinearPAParams(jnp.float32(-1.0)), rows, y, losses.hinge)
    with pytest.raises(InputError, match="orders"):
        run_orders(pa, good, rows, y, losses.hinge, np.array([0, len(y)]))
    with pytest.raises(InputError, match="orders"):
        run_orders(pa, good, rows, y, losses.hinge, np.zeros((2, 2, 2), np.int32))
    with pytest.raises(InputError, match="orders must be an integer array"):
        run_orders(pa, good, rows, y, losses.hinge, np.array([0.0, 1.0]))
    with pytest.raises(InputError, match="ys"):
        run_orders(pa, good, rows, y[:-1], losses.hinge)
    bad_y = y.copy()
    bad_y[3] = np.nan
    with pytest.raises(InputError, match="ys"):
        run_orders(pa, good, rows, bad_y, losses.hinge)
    bad_x = x.copy()
    bad_x[0, 0] = np.inf
    with pytest.raises(InputError, match="x"):
        sparse_rows(bad_x)
    with pytest.raises(InputError, match="width"):
        sparse_rows(np.ones((2, 3)), width=2)
    with pytest.raises(InputError, match="2-d"):
        sparse_rows(np.ones(3))
    with pytest.raises(InputError, match="dim"):
        linear_pa(0, sparse=True)
