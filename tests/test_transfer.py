"""Online transfer learning: every learner against the float64 NumPy loop, step by step, on
small real streams (scores, mistakes, support vectors, weights at every step); a split of one's
own (run_split) against each order alone and the NumPy loop; invariants (OTL weights, the
mistake bound); Gram vs on-the-fly; the budget; vmap over permutations; no recompilation; bad
input."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.sparse as sp

from ojax import transfer
from ojax.datasets import transfer as transfer_data
from ojax.transfer import kernels
from ojax.validation import InputError

sys.path.insert(0, str(Path(__file__).resolve().parent))
import reference_transfer as ref  # noqa: E402
from tolerances import scaled_atol

C, S1, S2 = 5.0, 4.0, 8.0


def _dense(x):
    return x.toarray() if sp.issparse(x) else np.asarray(x)


@pytest.fixture(scope="module")
def homo():
    """usenet2 (per-row scaled): the first 60 rows as source, the next 90 as target."""
    from conftest import DATA_DIR

    split = transfer_data.homogeneous_split("usenet2", DATA_DIR, source_size=60, target_size=90)
    return _dense(split.source_x), split.source_y, _dense(split.target_x), split.target_y


@pytest.fixture(scope="module")
def hetero():
    """spambase (per-row scaled), random split: 50 source rows (first view), 80 target rows."""
    from conftest import DATA_DIR

    split = transfer_data.heterogeneous_split("spambase", DATA_DIR, source_size=50, target_size=80)
    return (
        _dense(split.source_x),
        split.source_y,
        _dense(split.target_x),
        split.target_y,
        split.num_source_features,
    )


def _f64(*values):
    out = tuple(jnp.asarray(v, jnp.float64) for v in values)
    return out if len(out) > 1 else out[0]


def _gram(a, width, b=None):
    return kernels.gram_matrix(kernels.squared_distances(a, b, dtype=jnp.float64), width)


def _source(xs, ys, width):
    """ojax's averaged source classifier in the Gram layout (float64), and its trace."""
    n = len(ys)
    pool = transfer.kernel_pool(ys, grams=_gram(xs, width), dtype=jnp.float64)
    params = transfer.KernelPAParams(*_f64(C, width))
    state, trace = transfer.run_kernel(transfer.averaged_kernel_pa(n), params, *pool, np.arange(n))
    return transfer.source_classifier(state), trace


def _coefs(buffer, mode="gram"):
    """The expansion's coefficients in the order the support vectors were added (the streams
    of these tests run in pool order, so the pool layout's nonzero slots are in that order)."""
    coef = np.asarray(buffer.coef)
    if mode == "pool":
        return coef[coef != 0]
    return coef[: int(kernels.held(buffer))]


def _compare(trace, expected, svs=None):
    """Scores, mistakes (the zero_one loss) and support vectors (the record), every step."""
    np.testing.assert_allclose(
        trace.prediction, expected["scores"], rtol=1e-9, atol=scaled_atol(expected["scores"], 1e-10)
    )
    np.testing.assert_array_equal(trace.loss, expected["mistakes"])
    want = expected["support_vectors"] if svs is None else svs
    np.testing.assert_array_equal(trace.record, want)


def test_averaged_source_classifier_matches_reference(x64, homo):
    xs, ys, _, _ = homo
    h, trace = _source(xs, ys, S1)
    h_ref, _, scores = ref.averaged_pa(xs, ys, C, S1)
    np.testing.assert_allclose(trace.prediction, scores, rtol=1e-9, atol=scaled_atol(scores, 1e-10))
    assert int(h.count) == len(h_ref.svs) > 0
    np.testing.assert_allclose(_coefs(h), h_ref.coef, rtol=1e-9, atol=scaled_atol(h_ref.coef))
    # the support vectors are the source rows that had a margin error, in order
    margin_rows = [i for i in range(len(ys)) if ys[i] * scores[i] < 1]
    np.testing.assert_array_equal(np.asarray(h.keys)[: int(h.count)], margin_rows)
    np.testing.assert_array_equal(trace.record, np.cumsum(ys * scores < 1))


def _homogeneous_pools(homo):
    xs, ys, xt, yt = homo
    h, _ = _source(xs, ys, S1)
    h_out = _gram(xt, S1, xs)[:, h.keys] @ h.coef
    return h, h_out, int(h.count), _gram(xt, S1), _gram(xt, S2)


def _weights_and_svs(base):
    support = transfer.support_vectors_record(base)

    def record(step):
        return support(step), transfer.weights_record(step)

    return record


_RECORDS = {}


def _record(base):
    """One record function per base (so the same compilation is reused)."""
    return _RECORDS.setdefault(base, _weights_and_svs(base))


@pytest.mark.parametrize("mode", ["gram", "pool"])
@pytest.mark.parametrize("method", ["PA", "PAIO", "OTL", "OTL_fixed", "HomOTL2"])
def test_homogeneous_learners_match_reference(x64, homo, method, mode):
    xs, ys, xt, yt = homo
    h, h_out, n_h, g1, g2 = _homogeneous_pools(homo)
    h_ref, _, _ = ref.averaged_pa(xs, ys, C, S1)
    expected_out = [h_ref(x) for x in xt]
    np.testing.assert_allclose(
        np.asarray(h_out), expected_out, rtol=1e-9, atol=scaled_atol(expected_out)
    )
    n = len(yt)
    order = np.arange(n)
    weights = None
    if method == "PA":
        pool = transfer.kernel_pool(yt, grams=g2, dtype=jnp.float64)
        state, trace = transfer.run_kernel(
            transfer.kernel_pa(n, mode), transfer.KernelPAParams(*_f64(C, S2)), *pool, order
        )
        expected = ref.kernel_pa(xt, yt, C, S2)
    elif method == "PAIO":
        pool = transfer.kernel_pool(yt, grams=g1, offsets=h_out, dtype=jnp.float64)
        state, trace = transfer.run_kernel(
            transfer.paio(n, mode),
            transfer.KernelPAParams(*_f64(C, S1)),
            *pool,
            order,
            base_support_vectors=n_h,
        )
        expected = ref.kernel_pa(xt, yt, C, S1, init=h_ref)
        expected["f"].coef = expected["f"].coef[n_h:]
    else:
        pool = transfer.kernel_pool(yt, grams=g2, offsets=h_out, dtype=jnp.float64)
        if method == "HomOTL2":
            beta = math.sqrt(n) / (math.sqrt(n) + math.sqrt(math.log(2)))
            learner, params = transfer.homotl2(n, mode), transfer.HomOTL2Params(*_f64(C, S2, beta))
            expected = ref.homotl2(xt, yt, h_ref, C, S2, beta)
        else:
            fixed = method == "OTL_fixed"
            learner = transfer.otl_fixed(n, mode) if fixed else transfer.otl(n, mode)
            params = transfer.OTLParams(*_f64(C, S2, 0.5))
            expected = ref.otl(xt, yt, h_ref, C, S2, 0.5, fixed=fixed)
        state, trace = transfer.run_kernel(learner, params, *pool, order, record=_record(n_h))
        trace, weights = trace._replace(record=trace.record[0]), trace.record[1]
        # the weights after every step, against the loop's
        np.testing.assert_allclose(weights, expected["weights"], rtol=1e-9)
    np.testing.assert_allclose(_coefs(state.buffer, mode), expected["f"].coef, rtol=1e-9)
    _compare(trace, expected)
    assert expected["mistakes"].sum() > 0  # the comparison saw mistakes
    if method == "OTL":
        assert np.ptp(np.asarray(weights)[:, 0]) > 0.05  # the weights moved


def _hetero_grams(hetero):
    xs, ys, xt, yt, k = hetero
    x1, x2 = xt[:, :k], xt[:, k:]
    h, _ = _source(xs, ys, S1)
    h_out = _gram(x1, S1, xs)[:, h.keys] @ h.coef
    return x1, x2, h, h_out, _gram(x1, S1), _gram(x2, 3.0)


@pytest.mark.parametrize("mode", ["gram", "pool"])
@pytest.mark.parametrize("method", ["COTL", "COTL0", "SCT"])
def test_heterogeneous_learners_match_reference(x64, hetero, method, mode):
    xs, ys, xt, yt, k = hetero
    x1, x2, h, h_out, g1, g2 = _hetero_grams(hetero)
    h_ref, _, _ = ref.averaged_pa(xs, ys, C, S1)
    n, n_h = len(yt), int(h.count)
    zeros = np.zeros(n)
    with_h = method != "COTL0"
    pool = transfer.kernel_pool(
        yt, grams=(g1, g2), offsets=(h_out if with_h else zeros, zeros), dtype=jnp.float64
    )
    base = n_h if with_h else 0
    # distinct test values: gamma1 != gamma2, width2 = 3 != width1 = 4
    if method == "SCT":
        learner, params = transfer.sct(n, mode), transfer.SCTParams(*_f64(C, S1, 3.0))
        expected = ref.sct(x1, x2, yt, h_ref, C, S1, 3.0)
    else:
        learner = transfer.cotl0(n, mode) if method == "COTL0" else transfer.cotl(n, mode)
        params = transfer.COTLParams(*_f64(C, S1, 3.0, 0.7, 1.6))
        expected = ref.cotl(x1, x2, yt, h_ref if with_h else None, C, S1, 3.0, 0.7, 1.6)
    state, trace = transfer.run_kernel(
        learner, params, *pool, np.arange(n), base_support_vectors=base
    )
    f1, f2 = expected["f1"].coef[base:], expected["f2"].coef
    np.testing.assert_allclose(_coefs(state.buffer1, mode), f1, rtol=1e-9, atol=scaled_atol(f1))
    np.testing.assert_allclose(_coefs(state.buffer2, mode), f2, rtol=1e-9, atol=scaled_atol(f2))
    _compare(trace, expected)


def _separate_methods(yt, h_out, n_h, g1, g2):
    """PA, PAIO, OTL(fixed), OTL each on its own (pool layout), as MethodRun."""
    n = len(yt)
    with_h = transfer.kernel_pool(yt, grams=g2, offsets=h_out, dtype=jnp.float64)
    otl_params = transfer.OTLParams(*_f64(C, S2, 0.5))
    return {
        "PA": transfer.MethodRun(
            transfer.kernel_pa(n, "pool"),
            transfer.KernelPAParams(*_f64(C, S2)),
            *transfer.kernel_pool(yt, grams=g2, dtype=jnp.float64),
            0,
        ),
        "PAIO": transfer.MethodRun(
            transfer.paio(n, "pool"),
            transfer.KernelPAParams(*_f64(C, S1)),
            *transfer.kernel_pool(yt, grams=g1, offsets=h_out, dtype=jnp.float64),
            n_h,
        ),
        "OTL_fixed": transfer.MethodRun(transfer.otl_fixed(n, "pool"), otl_params, *with_h, n_h),
        "OTL": transfer.MethodRun(transfer.otl(n, "pool"), otl_params, *with_h, n_h),
    }


def test_combined_homogeneous_methods_equal_separate_runs(x64, homo):
    """The four methods in one scan (shared f, pool layout) give each method's own run, step by
    step, also under vmap over permutations."""
    xs, ys, xt, yt = homo
    h, h_out, n_h, g1, g2 = _homogeneous_pools(homo)
    n = len(yt)
    h_ref, _, _ = ref.averaged_pa(xs, ys, C, S1)
    pool = transfer.kernel_pool(
        yt, grams=(g2, g1), offsets=(h_out, h_out), heads=4, dtype=jnp.float64
    )
    assert pool[1].shape == (n, 4)
    params = transfer.HomogeneousParams(*_f64(C, S2, S1, 0.5))
    base = (0, n_h, n_h, n_h)
    learner = transfer.homogeneous_methods(n)
    _, trace = transfer.run_kernel(learner, params, *pool, np.arange(n), base_support_vectors=base)
    expected = {
        "PA": ref.kernel_pa(xt, yt, C, S2),
        "PAIO": ref.kernel_pa(xt, yt, C, S1, init=h_ref),
        "OTL_fixed": ref.otl(xt, yt, h_ref, C, S2, 0.5, fixed=True),
        "OTL": ref.otl(xt, yt, h_ref, C, S2, 0.5),
    }
    for j, method in enumerate(transfer.HOMOGENEOUS_HEADS):
        head = trace._replace(
            prediction=trace.prediction[:, j], loss=trace.loss[:, j], record=trace.record[:, j]
        )
        _compare(head, expected[method])
    # vmap over orders, against each learner run on its own (same layout). Against the index
    # buffer ("gram") the scores agree to rounding, but a support-vector count may differ by one
    # where usenet2 repeats a row: after a PA-I step on a copy, y f(x) = 1 exactly in exact
    # arithmetic, so whether the hinge loss is 0 or ~1e-16 depends on the summation order.
    orders = transfer.permutations(jax.random.key(2), 3, n)
    _, batched = transfer.run_kernel(learner, params, *pool, orders, base_support_vectors=base)
    for j, single_run in enumerate(_separate_methods(yt, h_out, n_h, g1, g2).values()):
        _, single = single_run.run(orders)
        np.testing.assert_allclose(
            batched.prediction[..., j],
            single.prediction,
            rtol=1e-9,
            atol=scaled_atol(single.prediction, 1e-10),
        )
        np.testing.assert_array_equal(batched.loss[..., j], single.loss)
        np.testing.assert_array_equal(batched.record[..., j], single.record)


def test_pool_mode_needs_capacity_equal_to_pool(homo):
    _, _, xt, yt = homo
    n = len(yt)
    pool = transfer.kernel_pool(yt, grams=kernels.gram_matrix(kernels.squared_distances(xt), S2))
    with pytest.raises(InputError, match="capacity"):
        transfer.run_kernel(
            transfer.kernel_pa(n - 1, "pool"), transfer.KernelPAParams.paper(), *pool, np.arange(n)
        )
    with pytest.raises(InputError, match="base_support_vectors"):
        transfer.support_vectors_record((0, -1))


def test_gram_and_direct_modes_agree(x64, homo):
    xs, ys, xt, yt = homo
    h, h_out, n_h, g1, g2 = _homogeneous_pools(homo)
    n, d = xt.shape
    order = np.random.default_rng(3).permutation(n)
    params = transfer.OTLParams(*_f64(C, S2, 0.5))
    gram_pool = transfer.kernel_pool(yt, grams=g2, offsets=h_out, dtype=jnp.float64)
    direct_pool = transfer.kernel_pool(yt, features=xt, offsets=h_out, dtype=jnp.float64)
    _, gram_run = transfer.run_kernel(transfer.otl(n), params, *gram_pool, order)
    _, direct_run = transfer.run_kernel(
        transfer.otl(n, mode="direct", dim=d), params, *direct_pool, order
    )
    np.testing.assert_allclose(
        gram_run.prediction,
        direct_run.prediction,
        rtol=1e-9,
        atol=scaled_atol(direct_run.prediction, 1e-10),
    )
    np.testing.assert_array_equal(gram_run.record, direct_run.record)
    # the direct-mode source classifier gives the same outputs as the Gram one
    direct_h = kernels.expansion_outputs(xs[np.asarray(h.keys)], h.coef, width=S1, features=xt)
    np.testing.assert_allclose(
        np.asarray(direct_h), np.asarray(h_out), rtol=1e-9, atol=scaled_atol(h_out)
    )


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
    pool = transfer.kernel_pool(yt, grams=_gram(xt, S2), dtype=jnp.float64)
    params = transfer.KernelPAParams(*_f64(C, S2))
    cap = 12
    state, trace = transfer.run_kernel(
        transfer.kernel_pa(cap, when_full=when_full), params, *pool, np.arange(n)
    )
    scores, held = _budget_reference(xt, yt, cap, when_full)
    np.testing.assert_allclose(trace.prediction, scores, rtol=1e-9, atol=scaled_atol(scores, 1e-10))
    np.testing.assert_array_equal(trace.record, held)
    assert held[-1] == cap
    # count keeps counting every margin error (support vector added or dropped); it bound
    margin_errors = int(np.sum(yt * np.asarray(trace.prediction) < 1))
    assert int(state.buffer.count) == margin_errors > cap
    _, exact = transfer.run_kernel(transfer.kernel_pa(n), params, *pool, np.arange(n))
    assert not np.allclose(trace.prediction, exact.prediction)


@pytest.fixture(scope="module")
def usenet2_full():
    from conftest import DATA_DIR

    from ojax.experiments import zhao_hoi2010

    split = transfer_data.homogeneous_split("usenet2", DATA_DIR)
    return zhao_hoi2010.prepare_homogeneous(split)


def test_vmap_over_permutations_equals_loop_and_no_recompile(usenet2_full):
    original = usenet2_full.methods["OTL"]
    traced = [0]

    def update(*args):
        traced[0] += 1
        return original.learner.update(*args)

    method = original._replace(learner=original.learner._replace(update=update))
    n = usenet2_full.num_target
    orders = transfer.permutations(jax.random.key(4), 3, n)
    _, batched = method.run(orders)
    for i in range(3):
        _, single = method.run(orders[i])
        np.testing.assert_allclose(batched.prediction[i], single.prediction, rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(batched.loss[i], single.loss)
    before = traced[0]
    other = transfer.permutations(jax.random.key(5), 3, n)
    params = method.params._replace(C=jnp.asarray(2.0, method.params.C.dtype))
    _, again = method._replace(params=params).run(other)
    assert traced[0] == before  # new orders and values: nothing traced again
    assert not np.array_equal(again.loss, batched.loss)


def _pi(z):
    return np.clip((np.asarray(z) + 1.0) / 2.0, 0.0, 1.0)


def _check_otl_invariants(prepared, orders):
    """OTL's weights positive and summing to one; M <= 4 min(S_h, S_f) + 8 ln 2 per stream."""
    otl_run = prepared.methods["OTL"]
    states, trace = otl_run.run(orders)
    weights = np.exp(np.asarray(states.log_weights, np.float64))
    assert np.all(weights > 0)
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, rtol=1e-5)
    # f is exactly the PA run at the same width: its outputs are PA's scores
    _, pa_trace = prepared.methods["PA"].run(orders)
    y = np.asarray(otl_run.ys)[np.asarray(orders)]
    h = np.asarray(otl_run.xs.offset)[np.asarray(orders)]
    s_h = ((_pi(h) - _pi(y)) ** 2).sum(axis=1)
    s_f = ((_pi(pa_trace.prediction) - _pi(y)) ** 2).sum(axis=1)
    mistakes = np.asarray(trace.loss).sum(axis=1)
    bound = 4 * np.minimum(s_h, s_f) + 8 * math.log(2)
    assert np.all(mistakes <= bound), (mistakes, bound)
    # OTL's support vectors are |SV(h)| + PA's
    np.testing.assert_array_equal(
        trace.record, np.asarray(pa_trace.record) + otl_run.base_support_vectors
    )


def test_otl_weights_and_mistake_bound_usenet2(usenet2_full):
    orders = transfer.permutations(jax.random.key(0), 20, usenet2_full.num_target)
    _check_otl_invariants(usenet2_full, orders)


@pytest.mark.parametrize("name,src,tgt", [("spambase", 300, 400), ("usenet1", 300, 1200)])
def test_otl_mistake_bound_other_streams(name, src, tgt):
    from conftest import DATA_DIR

    from ojax.experiments import zhao_hoi2010

    if name == "usenet1":
        x, y = transfer_data.load_dataset("usenet1", DATA_DIR)
        x = transfer_data.minmax_rows(x)
        rows = slice(src, src + tgt)
        split = transfer_data.Split(x[:src], y[:src], x[rows], y[rows], x.shape[1])
    else:
        split = transfer_data.homogeneous_split(name, DATA_DIR, source_size=src, target_size=tgt)
    prepared = zhao_hoi2010.prepare_homogeneous(split)
    _check_otl_invariants(prepared, transfer.permutations(jax.random.key(1), 5, tgt))


# ------------------------------------------------------------------- a split of one's own


def test_run_split_user_story(x64, homo):
    """User story: "I have a source order and 20 target orders (0-based) from another paper's
    code: PA, PAIO, OTL(fixed) and OTL on exactly those orders, mistakes and support vectors per
    trial, and the mistake-rate curve." Each order alone, and the NumPy loop, give the same."""
    xs, ys, xt, yt = homo
    # usenet2 repeats rows: after a PA-I step on a copy, y f(x) = 1 exactly in exact arithmetic,
    # and whether the hinge loss is 0 or ~1e-16 (a support vector or not) depends on the
    # summation order; distinct target rows keep the support-vector counts comparable
    keep = np.sort(np.unique(xt, axis=0, return_index=True)[1])
    xt, yt = xt[keep], yt[keep]
    rng = np.random.default_rng(11)
    source_order = rng.permutation(len(ys))
    target_orders = np.stack([rng.permutation(len(yt)) for _ in range(20)])
    methods = ("PA", "PAIO", "OTL_fixed", "OTL")
    results = transfer.run_split(
        xs, ys, source_order, xt, yt, target_orders, methods=methods, dtype=jnp.float64
    )
    assert tuple(results) == methods
    h_ref, _, _ = ref.averaged_pa(xs[source_order], ys[source_order], C, S1)
    for i in (0, 7):
        alone = transfer.run_split(
            xs, ys, source_order, xt, yt, target_orders[i], methods=methods, dtype=jnp.float64
        )
        x, y = xt[target_orders[i]], yt[target_orders[i]]
        expected = {
            "PA": ref.kernel_pa(x, y, C, S2),
            "PAIO": ref.kernel_pa(x, y, C, S1, init=h_ref),
            "OTL_fixed": ref.otl(x, y, h_ref, C, S2, 0.5, fixed=True),
            "OTL": ref.otl(x, y, h_ref, C, S2, 0.5),
        }
        for m in methods:
            got = results[m]
            assert got.mistakes.shape == got.support_vectors.shape == (20, len(yt))
            np.testing.assert_array_equal(got.mistakes[i], alone[m].mistakes[0])
            np.testing.assert_array_equal(got.support_vectors[i], alone[m].support_vectors[0])
            np.testing.assert_array_equal(got.mistakes[i], expected[m]["mistakes"])
            np.testing.assert_array_equal(got.support_vectors[i], expected[m]["support_vectors"])
            want = expected[m]["scores"]
            np.testing.assert_allclose(
                got.scores[i], want, rtol=1e-9, atol=scaled_atol(want, 1e-10)
            )
    curve = results["OTL"].mistake_rate
    np.testing.assert_allclose(curve[:, -1], 100 * results["OTL"].mistakes.mean(axis=1))
    assert not np.array_equal(results["OTL"].mistakes[0], results["OTL"].mistakes[1])


def test_run_split_heterogeneous_and_presets(x64, hetero):
    xs, ys, xt, yt, k = hetero
    order = np.arange(len(yt))[::-1].copy()
    results = transfer.run_split(xs, ys, np.arange(len(ys)), xt, yt, order, dtype=jnp.float64)
    assert tuple(results) == transfer.HETEROGENEOUS_METHODS
    x1, x2 = xt[order, :k], xt[order, k:]
    h_ref, _, _ = ref.averaged_pa(xs, ys, C, S1)
    expected = ref.cotl(x1, x2, yt[order], h_ref, C, S1, S1)
    np.testing.assert_array_equal(results["COTL"].mistakes[0], expected["mistakes"])
    np.testing.assert_array_equal(results["COTL"].support_vectors[0], expected["support_vectors"])
    pa = ref.kernel_pa(xt[order], yt[order], C, S2)
    np.testing.assert_array_equal(results["PA"].mistakes[0], pa["mistakes"])
    cotl = transfer.paper_params("COTL")  # Table 4: C = 5, width 4 per view, gamma1 = gamma2 = 1
    assert [float(v) for v in cotl] == [5.0, 4.0, 4.0, 1.0, 1.0]
    assert float(transfer.KernelPAParams.paper_source().width) == S1


def test_run_split_bad_orders(homo):
    xs, ys, xt, yt = homo
    good = np.arange(len(ys))
    targets = np.arange(len(yt))[None]
    with pytest.raises(InputError, match="target_orders must be a non-empty integer"):
        transfer.run_split(xs, ys, good, xt, yt, targets.astype(float))
    with pytest.raises(InputError, match="target_orders.*1-based MATLAB"):
        transfer.run_split(xs, ys, good, xt, yt, targets + 1)
    with pytest.raises(InputError, match="source_order must hold 0-based rows"):
        transfer.run_split(xs, ys, good - 1, xt, yt, targets)
    with pytest.raises(InputError, match="source_order must be one order"):
        transfer.run_split(xs, ys, np.stack([good, good]), xt, yt, targets)
    with pytest.raises(InputError, match="methods"):
        transfer.run_split(xs, ys, good, xt, yt, targets, methods=("COTL",))
    with pytest.raises(InputError, match="target_y must have shape"):
        transfer.run_split(xs, ys, good, xt, yt[:-1], targets)
    with pytest.raises(InputError, match="params"):
        transfer.run_split(
            xs,
            ys,
            good,
            xt,
            yt,
            targets,
            methods=("PA",),
            params={"OTL": transfer.OTLParams.paper()},
        )


# ----------------------------------------------------------------------------- bad input


def test_bad_hyperparameters_and_pools(homo):
    _, _, xt, yt = homo
    n = len(yt)
    g = kernels.gram_matrix(kernels.squared_distances(xt), S2)
    pool = transfer.kernel_pool(yt, grams=g)
    order = np.arange(n)

    def params(cls, *values):
        return cls(*(jnp.asarray(v, jnp.float32) for v in values))

    with pytest.raises(InputError, match="C must lie in"):
        transfer.run_kernel(
            transfer.kernel_pa(n), params(transfer.KernelPAParams, 0, S2), *pool, order
        )
    with pytest.raises(InputError, match="width must lie in"):
        transfer.run_kernel(transfer.otl(n), params(transfer.OTLParams, C, -1, 0.5), *pool, order)
    with pytest.raises(InputError, match="width"):
        kernels.gram_matrix(kernels.squared_distances(xt), 0.0)
    with pytest.raises(InputError, match="beta"):
        transfer.run_kernel(
            transfer.homotl2(n), params(transfer.HomOTL2Params, C, S2, 1.5), *pool, order
        )
    with pytest.raises(InputError, match="gamma1"):
        transfer.cotl(n).check_params(params(transfer.COTLParams, C, 4, 4, 0, 1))
    bad = yt.copy()
    bad[3] = 0.0
    with pytest.raises(InputError, match="labels must take only the values"):
        transfer.kernel_pool(bad, grams=g)
    nan_x = xt.copy()
    nan_x[2, 1] = np.nan
    with pytest.raises(InputError, match="features\\[0\\] must be finite"):
        transfer.kernel_pool(yt, features=nan_x)
    with pytest.raises(InputError, match="offsets\\[0\\] must be finite"):
        transfer.kernel_pool(yt, grams=g, offsets=np.full(n, np.nan))
    with pytest.raises(InputError, match="exactly one of grams"):
        transfer.kernel_pool(yt)
    with pytest.raises(InputError, match="orders must lie in"):
        transfer.run_kernel(
            transfer.kernel_pa(n), transfer.KernelPAParams.paper(), *pool, order + 1
        )
    with pytest.raises(InputError, match="orders must be an integer array"):
        transfer.run_kernel(
            transfer.kernel_pa(n), transfer.KernelPAParams.paper(), *pool, order * 1.0
        )
    with pytest.raises(InputError, match="no weights"):
        transfer.run_kernel(
            transfer.kernel_pa(n),
            transfer.KernelPAParams.paper(),
            *pool,
            order,
            record=transfer.weights_record,
        )


def test_mismatched_view_split(hetero):
    xs, ys, xt, yt, k = hetero
    g = kernels.gram_matrix(kernels.squared_distances(xt), S2)
    one_view = transfer.kernel_pool(yt, grams=g)
    two_views = transfer.kernel_pool(yt, grams=(g, g))
    n = len(yt)
    order = np.arange(n)
    with pytest.raises(InputError, match="COTL takes 2 views.*mismatched view split"):
        transfer.run_kernel(transfer.cotl(n), transfer.COTLParams.paper(), *one_view, order)
    with pytest.raises(InputError, match="SCT takes 2 views.*mismatched view split"):
        transfer.run_kernel(transfer.sct(n), transfer.SCTParams.paper(), *one_view, order)
    with pytest.raises(InputError, match="one view per example.*mismatched view split"):
        transfer.run_kernel(transfer.otl(n), transfer.OTLParams.paper(), *two_views, order)
    from ojax.experiments import zhao_hoi2010

    wrong = transfer_data.Split(xs[:, :-1], ys, xt, yt, k)
    with pytest.raises(InputError, match="num_source_features"):
        zhao_hoi2010.prepare_heterogeneous(wrong)
