"""Online transfer learning: every learner against the float64 NumPy loop, step by step, on
small real streams; invariants (OTL weights, the mistake bound); Gram vs on-the-fly; the budget;
vmap over permutations; no recompilation; bad input."""

from __future__ import annotations

import gzip
import math
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

from ojax import losses, run
from ojax.datasets import DataError
from ojax.datasets import transfer as data
from ojax.transfer import kernels as K
from ojax.transfer import learners as L
from ojax.transfer import runner as R
from ojax.validation import InputError

sys.path.insert(0, str(Path(__file__).resolve().parent))
import reference_transfer as ref  # noqa: E402

C, S1, S2 = 5.0, 4.0, 8.0


def _dense(x):
    return x.toarray() if sp.issparse(x) else np.asarray(x)


@pytest.fixture(scope="module")
def homo(request):
    """usenet2 (per-row scaled): the first 60 rows as source, the next 90 as target."""
    from conftest import DATA_DIR

    split = data.homogeneous_split("usenet2", DATA_DIR, source_size=60, target_size=90)
    return _dense(split.source_x), split.source_y, _dense(split.target_x), split.target_y


@pytest.fixture(scope="module")
def hetero():
    """spambase (per-row scaled), random split: 50 source rows (first view), 80 target rows."""
    from conftest import DATA_DIR

    split = data.heterogeneous_split("spambase", DATA_DIR, source_size=50, target_size=80)
    return (
        _dense(split.source_x),
        split.source_y,
        _dense(split.target_x),
        split.target_y,
        split.num_source_features,
    )


def _f64(v):
    return jnp.asarray(v, jnp.float64)


def _source(xs, ys, width):
    """ojax's averaged source classifier in Gram mode (float64), and its offsets on ``xt``."""
    n = len(ys)
    gram = K.gram_matrix(K.squared_distances(xs, dtype=jnp.float64), width)
    stream = R.kernel_stream(ys, grams=gram, dtype=jnp.float64)
    state, trace = R.run_kernel(
        L.averaged_kernel_pa(n), L.KernelPAParams(_f64(C), _f64(width)), stream, np.arange(n)
    )
    return L.source_classifier(state), trace


def _ref_source(xs, ys, width):
    h, _, scores = ref.averaged_pa(xs, ys, C, width)
    return h, scores


def _coefs(buffer, mode="gram"):
    """The expansion's coefficients in the order the support vectors were added (the streams
    of these tests run in pool order, so the pool layout's nonzero slots are in that order)."""
    coef = np.asarray(buffer.coef)
    if mode == "pool":
        return coef[coef != 0]
    return coef[: int(K.held(buffer))]


def _compare(trace, expected, svs=None):
    np.testing.assert_allclose(np.asarray(trace.score), expected["scores"], rtol=1e-9, atol=1e-10)
    np.testing.assert_array_equal(np.asarray(trace.mistake), expected["mistakes"])
    np.testing.assert_array_equal(
        np.asarray(trace.support_vectors), expected["support_vectors"] if svs is None else svs
    )


def test_averaged_source_classifier_matches_reference(x64, homo):
    xs, ys, _, _ = homo
    h, trace = _source(xs, ys, S1)
    h_ref, scores = _ref_source(xs, ys, S1)
    np.testing.assert_allclose(np.asarray(trace.score), scores, rtol=1e-9, atol=1e-10)
    assert int(h.count) == len(h_ref.svs) > 0
    np.testing.assert_allclose(_coefs(h), h_ref.coef, rtol=1e-9, atol=1e-12)
    # the support vectors are the source rows that had a margin error, in order
    margin_rows = [i for i in range(len(ys)) if ys[i] * scores[i] < 1]
    np.testing.assert_array_equal(np.asarray(h.keys)[: int(h.count)], margin_rows)


def _homogeneous_streams(homo):
    xs, ys, xt, yt = homo
    h, _ = _source(xs, ys, S1)
    h_out = K.gram_matrix(K.squared_distances(xt, xs, dtype=jnp.float64), S1)[:, h.keys] @ h.coef
    dist = K.squared_distances(xt, dtype=jnp.float64)
    n_h = int(h.count)
    g1, g2 = K.gram_matrix(dist, S1), K.gram_matrix(dist, S2)
    return h, h_out, n_h, g1, g2


@pytest.mark.parametrize("mode", ["gram", "pool"])
@pytest.mark.parametrize("method", ["PA", "PAIO", "OTL", "OTL_fixed", "HomOTL2"])
def test_homogeneous_learners_match_reference(x64, homo, method, mode):
    xs, ys, xt, yt = homo
    h, h_out, n_h, g1, g2 = _homogeneous_streams(homo)
    h_ref, _ = _ref_source(xs, ys, S1)
    np.testing.assert_allclose(np.asarray(h_out), [h_ref(x) for x in xt], rtol=1e-9, atol=1e-12)
    n = len(yt)
    order = np.arange(n)
    if method == "PA":
        stream = R.kernel_stream(yt, grams=g2, dtype=jnp.float64)
        state, trace = R.run_kernel(
            L.kernel_pa(n, mode), L.KernelPAParams(_f64(C), _f64(S2)), stream, order
        )
        expected = ref.kernel_pa(xt, yt, C, S2)
        np.testing.assert_allclose(_coefs(state.buffer, mode), expected["f"].coef, rtol=1e-9)
    elif method == "PAIO":
        stream = R.kernel_stream(
            yt, grams=g1, offsets=h_out, base_support_vectors=n_h, dtype=jnp.float64
        )
        state, trace = R.run_kernel(
            L.paio(n, mode), L.KernelPAParams(_f64(C), _f64(S1)), stream, order
        )
        expected = ref.kernel_pa(xt, yt, C, S1, init=h_ref)
        np.testing.assert_allclose(_coefs(state.buffer, mode), expected["f"].coef[n_h:], rtol=1e-9)
    elif method == "HomOTL2":
        beta = math.sqrt(n) / (math.sqrt(n) + math.sqrt(math.log(2)))
        stream = R.kernel_stream(
            yt, grams=g2, offsets=h_out, base_support_vectors=n_h, dtype=jnp.float64
        )
        state, trace = R.run_kernel(
            L.homotl2(n, mode), L.HomOTL2Params(_f64(C), _f64(S2), _f64(beta)), stream, order
        )
        expected = ref.homotl2(xt, yt, h_ref, C, S2, beta)
        params = L.HomOTL2Params(_f64(C), _f64(S2), _f64(beta))
        np.testing.assert_allclose(
            np.asarray(L.homotl2_weights(state, params)), expected["weights"][-1], rtol=1e-9
        )
        np.testing.assert_allclose(_coefs(state.buffer, mode), expected["f"].coef, rtol=1e-9)
    else:
        fixed = method == "OTL_fixed"
        learner = L.otl_fixed(n, mode) if fixed else L.otl(n, mode)
        stream = R.kernel_stream(
            yt, grams=g2, offsets=h_out, base_support_vectors=n_h, dtype=jnp.float64
        )
        params = L.OTLParams(_f64(C), _f64(S2), _f64(0.5))
        state, trace = R.run_kernel(learner, params, stream, order)
        expected = ref.otl(xt, yt, h_ref, C, S2, 0.5, fixed=fixed)
        np.testing.assert_allclose(
            np.exp(np.asarray(state.log_weights)), expected["weights"][-1], rtol=1e-9
        )
        np.testing.assert_allclose(_coefs(state.buffer, mode), expected["f"].coef, rtol=1e-9)
        # per-step weights: run prefixes of the stream
        for t in (1, 7, 30):
            st, _ = R.run_kernel(learner, params, stream, order[:t])
            np.testing.assert_allclose(
                np.exp(np.asarray(st.log_weights)), expected["weights"][t - 1], rtol=1e-9
            )
    _compare(trace, expected)
    assert expected["mistakes"].sum() > 0  # the comparison saw mistakes


def _hetero_streams(hetero):
    xs, ys, xt, yt, k = hetero
    x1, x2 = xt[:, :k], xt[:, k:]
    h, _ = _source(xs, ys, S1)
    h_out = K.gram_matrix(K.squared_distances(x1, xs, dtype=jnp.float64), S1)[:, h.keys] @ h.coef
    g1 = K.gram_matrix(K.squared_distances(x1, dtype=jnp.float64), S1)
    g2 = K.gram_matrix(K.squared_distances(x2, dtype=jnp.float64), 3.0)
    return x1, x2, h, h_out, g1, g2


@pytest.mark.parametrize("mode", ["gram", "pool"])
@pytest.mark.parametrize("method", ["COTL", "COTL0", "SCT"])
def test_heterogeneous_learners_match_reference(x64, hetero, method, mode):
    xs, ys, xt, yt, k = hetero
    x1, x2, h, h_out, g1, g2 = _hetero_streams(hetero)
    h_ref, _ = _ref_source(xs, ys, S1)
    n, n_h = len(yt), int(h.count)
    zeros = np.zeros(n)
    # distinct test values: gamma1 != gamma2, width2 = 3 != width1 = 4
    if method == "SCT":
        stream = R.kernel_stream(
            yt, grams=(g1, g2), offsets=(h_out, zeros), base_support_vectors=n_h, dtype=jnp.float64
        )
        state, trace = R.run_kernel(
            L.sct(n, mode), L.SCTParams(_f64(C), _f64(S1), _f64(3.0)), stream, np.arange(n)
        )
        expected = ref.sct(x1, x2, yt, h_ref, C, S1, 3.0)
        np.testing.assert_allclose(
            _coefs(state.buffer1, mode), expected["f1"].coef[n_h:], rtol=1e-9
        )
        np.testing.assert_allclose(_coefs(state.buffer2, mode), expected["f2"].coef, rtol=1e-9)
    else:
        with_h = method == "COTL"
        stream = R.kernel_stream(
            yt,
            grams=(g1, g2),
            offsets=(h_out if with_h else zeros, zeros),
            base_support_vectors=n_h if with_h else 0,
            dtype=jnp.float64,
        )
        params = L.COTLParams(_f64(C), _f64(S1), _f64(3.0), _f64(0.7), _f64(1.6))
        state, trace = R.run_kernel(L.cotl(n, mode), params, stream, np.arange(n))
        expected = ref.cotl(x1, x2, yt, h_ref if with_h else None, C, S1, 3.0, 0.7, 1.6)
        skip = n_h if with_h else 0
        np.testing.assert_allclose(
            _coefs(state.buffer1, mode), expected["f1"].coef[skip:], rtol=1e-9
        )
        np.testing.assert_allclose(_coefs(state.buffer2, mode), expected["f2"].coef, rtol=1e-9)
    _compare(trace, expected)


def test_linear_pa_matches_reference(x64, homo):
    _, _, xt, yt = homo
    params = L.KernelPAParams  # noqa: F841  (kernel params unused here)
    from ojax.transfer import LinearPAParams, linear_pa

    xs = jnp.asarray(xt * 0.5, jnp.float64)
    _, trace = run(
        linear_pa(xt.shape[1]),
        LinearPAParams(_f64(0.3)),
        xs,
        jnp.asarray(yt),
        losses.hinge,
        record=lambda step: step.state.weights,
    )
    scores, weights = ref.linear_pa(np.asarray(xs), yt, 0.3)
    np.testing.assert_allclose(np.asarray(trace.prediction), scores, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.asarray(trace.record)[1:], weights[:-1], rtol=1e-10, atol=1e-12)


def test_combined_homogeneous_methods_equal_separate_runs(x64, homo):
    """The four methods in one scan (shared f, pool layout) give each method's own run, step by
    step, also under vmap over permutations."""
    xs, ys, xt, yt = homo
    h, h_out, n_h, g1, g2 = _homogeneous_streams(homo)
    n = len(yt)
    h_ref, _ = _ref_source(xs, ys, S1)
    combined = R.kernel_stream(
        yt,
        grams=(g2, g1),
        offsets=(h_out, h_out),
        base_support_vectors=(0, n_h, n_h, n_h),
        dtype=jnp.float64,
    )
    params = L.HomogeneousParams(_f64(C), _f64(S2), _f64(S1), _f64(0.5))
    _, trace = R.run_kernel(L.homogeneous_methods(n), params, combined, np.arange(n))
    expected = {
        "PA": ref.kernel_pa(xt, yt, C, S2),
        "PAIO": ref.kernel_pa(xt, yt, C, S1, init=h_ref),
        "OTL_fixed": ref.otl(xt, yt, h_ref, C, S2, 0.5, fixed=True),
        "OTL": ref.otl(xt, yt, h_ref, C, S2, 0.5),
    }
    for j, method in enumerate(L.HOMOGENEOUS_HEADS):
        _compare(jax.tree_util.tree_map(lambda a, j=j: a[..., j], trace), expected[method])
    # vmap over orders, against each learner run on its own (same layout). Against the index
    # buffer ("gram") the scores agree to rounding, but a support-vector count may differ by one
    # where usenet2 repeats a row: after a PA-I step on a copy, y f(x) = 1 exactly in exact
    # arithmetic, so whether the hinge loss is 0 or ~1e-16 depends on the summation order.
    orders = R.permutations(jax.random.key(2), 3, n)
    _, batched = R.run_permutations(L.homogeneous_methods(n), params, combined, orders)
    with_h = R.kernel_stream(
        yt, grams=g2, offsets=h_out, base_support_vectors=n_h, dtype=jnp.float64
    )
    separate = {
        "PA": (
            L.kernel_pa(n, "pool"),
            L.KernelPAParams(_f64(C), _f64(S2)),
            R.kernel_stream(yt, grams=g2, dtype=jnp.float64),
        ),
        "PAIO": (
            L.paio(n, "pool"),
            L.KernelPAParams(_f64(C), _f64(S1)),
            R.kernel_stream(
                yt, grams=g1, offsets=h_out, base_support_vectors=n_h, dtype=jnp.float64
            ),
        ),
        "OTL_fixed": (L.otl_fixed(n, "pool"), L.OTLParams(_f64(C), _f64(S2), _f64(0.5)), with_h),
        "OTL": (L.otl(n, "pool"), L.OTLParams(_f64(C), _f64(S2), _f64(0.5)), with_h),
    }
    for j, method in enumerate(L.HOMOGENEOUS_HEADS):
        _, single = R.run_permutations(*separate[method], orders)
        np.testing.assert_allclose(
            np.asarray(batched.score[..., j]), np.asarray(single.score), rtol=1e-9, atol=1e-10
        )
        np.testing.assert_array_equal(np.asarray(batched.mistake[..., j]), single.mistake)
        np.testing.assert_array_equal(
            np.asarray(batched.support_vectors[..., j]), single.support_vectors
        )


def test_pool_mode_needs_capacity_equal_to_pool(homo):
    _, _, xt, yt = homo
    n = len(yt)
    stream = R.kernel_stream(yt, grams=K.gram_matrix(K.squared_distances(xt), S2))
    with pytest.raises(InputError, match="capacity"):
        R.run_kernel(
            L.kernel_pa(n - 1, "pool"),
            L.KernelPAParams(jnp.asarray(C), jnp.asarray(S2)),
            stream,
            np.arange(n),
        )
    with pytest.raises(InputError, match="base_support_vectors"):
        R.kernel_stream(yt, grams=np.eye(n), base_support_vectors=(0, -1))


def test_gram_and_direct_modes_agree(x64, homo):
    xs, ys, xt, yt = homo
    h, h_out, n_h, g1, g2 = _homogeneous_streams(homo)
    n, d = xt.shape
    order = np.random.default_rng(3).permutation(n)
    params = L.OTLParams(_f64(C), _f64(S2), _f64(0.5))
    gram_run = R.run_kernel(
        L.otl(n), params, R.kernel_stream(yt, grams=g2, offsets=h_out, dtype=jnp.float64), order
    )[1]
    direct_run = R.run_kernel(
        L.otl(n, mode="direct", dim=d),
        params,
        R.kernel_stream(yt, features=xt, offsets=h_out, dtype=jnp.float64),
        order,
    )[1]
    np.testing.assert_allclose(
        np.asarray(gram_run.score), np.asarray(direct_run.score), rtol=1e-9, atol=1e-10
    )
    np.testing.assert_array_equal(
        np.asarray(gram_run.support_vectors), np.asarray(direct_run.support_vectors)
    )
    # the direct-mode source classifier gives the same outputs as the Gram one
    direct_h = K.expansion_outputs(xs[np.asarray(h.keys)], h.coef, width=S1, features=xt)
    np.testing.assert_allclose(np.asarray(direct_h), np.asarray(h_out), rtol=1e-9, atol=1e-12)


def _budget_reference(X, Y, capacity, when_full):
    """PA-I whose expansion keeps at most ``capacity`` terms (the documented budget rule)."""
    f = ref.Expansion(S2)
    scores, held = [], []
    for x, y in zip(X, Y):
        s = f(x)
        scores.append(s)
        loss = max(0.0, 1 - y * s)
        if loss > 0:
            if len(f.svs) < capacity:
                f.add(x, y * min(C, loss))
            elif when_full == "replace_oldest":
                f.svs.pop(0)
                f.coef.pop(0)
                f.add(x, y * min(C, loss))
        held.append(len(f.svs))
    return np.array(scores), np.array(held)


@pytest.mark.parametrize("when_full", ["replace_oldest", "discard"])
def test_capacity_limited_buffer(x64, homo, when_full):
    _, _, xt, yt = homo
    n = len(yt)
    g2 = K.gram_matrix(K.squared_distances(xt, dtype=jnp.float64), S2)
    stream = R.kernel_stream(yt, grams=g2, dtype=jnp.float64)
    cap = 12
    state, trace = R.run_kernel(
        L.kernel_pa(cap, when_full=when_full),
        L.KernelPAParams(_f64(C), _f64(S2)),
        stream,
        np.arange(n),
    )
    scores, held = _budget_reference(xt, yt, cap, when_full)
    np.testing.assert_allclose(np.asarray(trace.score), scores, rtol=1e-9, atol=1e-10)
    np.testing.assert_array_equal(np.asarray(trace.support_vectors), held)
    assert held[-1] == cap
    # count keeps counting every margin error (support vector added or dropped); it bound
    margin_errors = int(np.sum(yt * np.asarray(trace.score) < 1))
    assert int(state.buffer.count) == margin_errors > cap
    assert not np.allclose(
        np.asarray(trace.score),
        np.asarray(
            R.run_kernel(L.kernel_pa(n), L.KernelPAParams(_f64(C), _f64(S2)), stream, np.arange(n))[
                1
            ].score
        ),
    )


@pytest.fixture(scope="module")
def usenet2_full():
    from conftest import DATA_DIR

    from ojax.experiments import zhao_hoi2010 as Z

    split = data.homogeneous_split("usenet2", DATA_DIR)
    return Z.prepare_homogeneous(split)


def test_vmap_over_permutations_equals_loop_and_no_recompile(usenet2_full):
    method = usenet2_full.methods["OTL"]
    n = usenet2_full.num_target
    orders = R.permutations(jax.random.key(4), 3, n)
    _, batched = R.run_permutations(method.learner, method.params, method.stream, orders)
    for i in range(3):
        _, single = R.run_kernel(method.learner, method.params, method.stream, orders[i])
        np.testing.assert_allclose(
            np.asarray(batched.score[i]), np.asarray(single.score), rtol=1e-5, atol=1e-6
        )
        np.testing.assert_array_equal(np.asarray(batched.mistake[i]), np.asarray(single.mistake))
    before = R._run_permutations._cache_size()
    other = R.permutations(jax.random.key(5), 3, n)
    params = method.params._replace(C=jnp.asarray(2.0, method.params.C.dtype))
    _, again = R.run_permutations(method.learner, params, method.stream, other)
    assert R._run_permutations._cache_size() == before  # new orders and values: no recompile
    assert not np.array_equal(np.asarray(again.mistake), np.asarray(batched.mistake))


def _pi(z):
    return np.clip((np.asarray(z) + 1.0) / 2.0, 0.0, 1.0)


def _check_otl_invariants(prepared, orders):
    """OTL's weights positive and summing to one; M <= 4 min(S_h, S_f) + 8 ln 2 per stream."""
    otl_run = prepared.methods["OTL"]
    states, trace = R.run_permutations(
        otl_run.learner, otl_run.params, otl_run.stream, orders, final_state=True
    )
    weights = np.exp(np.asarray(states.log_weights, np.float64))
    assert np.all(weights > 0)
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, rtol=1e-5)
    # f is exactly the PA run at the same width: its outputs are PA's scores
    pa = prepared.methods["PA"]
    _, pa_trace = R.run_permutations(pa.learner, pa.params, pa.stream, orders)
    y = np.asarray(otl_run.stream.labels)[np.asarray(orders)]
    h = np.asarray(otl_run.stream.offsets[0])[np.asarray(orders)]
    s_h = ((_pi(h) - _pi(y)) ** 2).sum(axis=1)
    s_f = ((_pi(pa_trace.score) - _pi(y)) ** 2).sum(axis=1)
    mistakes = np.asarray(trace.mistake).sum(axis=1)
    bound = 4 * np.minimum(s_h, s_f) + 8 * math.log(2)
    assert np.all(mistakes <= bound), (mistakes, bound)
    # OTL's support vectors are |SV(h)| + PA's
    np.testing.assert_array_equal(
        np.asarray(trace.support_vectors),
        np.asarray(pa_trace.support_vectors) + int(otl_run.stream.base_support_vectors),
    )


def test_otl_weights_and_mistake_bound_usenet2(usenet2_full):
    orders = R.permutations(jax.random.key(0), 20, usenet2_full.num_target)
    _check_otl_invariants(usenet2_full, orders)


@pytest.mark.parametrize("name,src,tgt", [("spambase", 300, 400), ("usenet1", 300, 1200)])
def test_otl_mistake_bound_other_streams(name, src, tgt):
    from conftest import DATA_DIR

    from ojax.experiments import zhao_hoi2010 as Z

    if name == "usenet1":
        x, y = data.load_dataset("usenet1", DATA_DIR)
        x = data.minmax_rows(x)
        split = data.Split(x[:src], y[:src], x[src : src + tgt], y[src : src + tgt], x.shape[1])
    else:
        split = data.homogeneous_split(name, DATA_DIR, source_size=src, target_size=tgt)
    prepared = Z.prepare_homogeneous(split)
    _check_otl_invariants(prepared, R.permutations(jax.random.key(1), 5, tgt))


# ----------------------------------------------------------------------------- bad input


def test_bad_hyperparameters_and_streams(homo):
    _, _, xt, yt = homo
    n = len(yt)
    g = K.gram_matrix(K.squared_distances(xt), S2)
    stream = R.kernel_stream(yt, grams=g)
    with pytest.raises(InputError, match="C must lie in"):
        R.run_kernel(
            L.kernel_pa(n),
            L.KernelPAParams(jnp.asarray(0.0), jnp.asarray(S2)),
            stream,
            np.arange(n),
        )
    with pytest.raises(InputError, match="width must lie in"):
        R.run_kernel(
            L.otl(n),
            L.OTLParams(jnp.asarray(C), jnp.asarray(-1.0), jnp.asarray(0.5)),
            stream,
            np.arange(n),
        )
    with pytest.raises(InputError, match="width"):
        K.gram_matrix(K.squared_distances(xt), 0.0)
    with pytest.raises(InputError, match="beta"):
        R.run_kernel(
            L.homotl2(n),
            L.HomOTL2Params(jnp.asarray(C), jnp.asarray(S2), jnp.asarray(1.5)),
            stream,
            np.arange(n),
        )
    with pytest.raises(InputError, match="gamma1"):
        L.cotl(n).check_params(L.COTLParams(*(jnp.asarray(v) for v in (C, 4, 4, 0, 1))))
    bad = yt.copy()
    bad[3] = 0.0
    with pytest.raises(InputError, match="labels must take values in"):
        R.kernel_stream(bad, grams=g)
    nan_x = xt.copy()
    nan_x[2, 1] = np.nan
    with pytest.raises(InputError, match="features\\[0\\] must be finite"):
        R.kernel_stream(yt, features=nan_x)
    with pytest.raises(InputError, match="offsets\\[0\\] must be finite"):
        R.kernel_stream(yt, grams=g, offsets=np.full(n, np.nan))
    with pytest.raises(InputError, match="order must index"):
        R.run_kernel(
            L.kernel_pa(n),
            L.KernelPAParams(jnp.asarray(C), jnp.asarray(S2)),
            stream,
            np.arange(n) + 1,
        )


def test_mismatched_view_split(hetero):
    xs, ys, xt, yt, k = hetero
    with pytest.raises(InputError, match="num_source_features"):
        data.view_split(xt, xt.shape[1])
    with pytest.raises(InputError, match="num_source_features"):
        data.view_split(xt, 0)
    g = K.gram_matrix(K.squared_distances(xt), S2)
    one_view = R.kernel_stream(yt, grams=g)
    n = len(yt)
    params = L.COTLParams(*(jnp.asarray(v) for v in (C, 4.0, 4.0, 1.0, 1.0)))
    with pytest.raises(InputError, match="mismatched view split"):
        R.run_kernel(L.cotl(n), params, one_view, np.arange(n))
    from ojax.experiments import zhao_hoi2010 as Z

    wrong = data.Split(xs[:, :-1], ys, xt, yt, k)
    with pytest.raises(InputError, match="num_source_features"):
        Z.prepare_heterogeneous(wrong)


def test_malformed_files(tmp_path):
    libsvm = tmp_path / "bad.libsvm"
    libsvm.write_text("+1 1:0.5 3:1\n-1 2:x\n")
    with pytest.raises(DataError, match="line 2.*index:value"):
        data.load_libsvm(libsvm)
    libsvm.write_text("+1 3:0.5 2:1\n")
    with pytest.raises(DataError, match="increase"):
        data.load_libsvm(libsvm)
    libsvm.write_text("2 1:0.5\n")
    with pytest.raises(DataError, match="labels must be -1 or \\+1"):
        data.load_libsvm(libsvm)
    good = tmp_path / "good.libsvm.gz"
    with gzip.open(good, "wt") as f:
        f.write("+1 1:0.5 3:1\n-1 2:2\n")
    x, y = data.load_libsvm(good)
    np.testing.assert_array_equal(x.toarray(), [[0.5, 0, 1], [0, 2, 0]])
    np.testing.assert_array_equal(y, [1, -1])
    with pytest.raises(DataError, match="exceeds num_features"):
        data.load_libsvm(good, num_features=2)
    spam = tmp_path / "spam.csv"
    spam.write_text("a,b,type\n1,2,spam\n1,2,maybe\n")
    with pytest.raises(DataError, match="line 3.*'spam' or 'nonspam'"):
        data.load_spambase(spam)
    spam.write_text("a,b,type\n1,nan,spam\n")
    with pytest.raises(DataError, match="finite"):
        data.load_spambase(spam)
    spam.write_text("a,b,type\n1,2\n")
    with pytest.raises(DataError, match="expected 3 columns"):
        data.load_spambase(spam)
    mush = tmp_path / "mush.csv"
    mush.write_text("x,s,e\nx,y,q\n")
    with pytest.raises(DataError, match="'e' or 'p'"):
        data.load_mushrooms_keel(mush)
    mat = tmp_path / "stream.mat"
    scipy.io.savemat(mat, {"X": np.zeros((3, 3))})
    with pytest.raises(DataError, match="variable 'data'"):
        data.load_mat_stream(mat)
    scipy.io.savemat(mat, {"data": np.array([[1, 0, 1], [3, 1, 0]], np.int16)})
    with pytest.raises(DataError, match="labels must be -1 or \\+1"):
        data.load_mat_stream(mat)
    (tmp_path / "junk.mat").write_bytes(b"not a mat file")
    with pytest.raises(DataError, match="cannot read"):
        data.load_mat_stream(tmp_path / "junk.mat")
    with pytest.raises(DataError, match="not found"):
        data.load_spambase(tmp_path / "missing.csv")


def test_loaders_on_real_files(data_dir):
    x, y = data.load_dataset("newsgroup4", data_dir)
    assert sp.issparse(x) and x.shape == (1600, 62061) and x.dtype == np.float64
    assert set(np.unique(y)) == {-1.0, 1.0}
    scaled = data.minmax_rows(x)
    assert sp.issparse(scaled)
    dense_rows = scaled[:5].toarray()
    np.testing.assert_allclose(dense_rows.max(axis=1), 1.0)
    np.testing.assert_allclose(dense_rows, data.minmax_rows(x[:5].toarray()))
    xm, ym = data.load_dataset("mushrooms", data_dir)
    assert xm.shape[0] == 5644 and np.all(xm.sum(axis=1) == 22)  # one category per column
    xa, ya = data.load_dataset("a7a", data_dir)
    assert xa.shape == (1605 + 30956, 123)
    split = data.heterogeneous_split("spambase", data_dir)
    assert split.source_x.shape == (2000, 28) and split.target_x.shape == (2601, 57)
    feat = data.minmax_features(np.array([[0.0, 5.0], [2.0, 5.0], [4.0, 5.0]]))
    np.testing.assert_allclose(feat, [[0, 5], [0.5, 5], [1, 5]])
