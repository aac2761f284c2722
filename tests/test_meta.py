"""Meta-learners (ITL / Oracle, Aggressive, Lazy, tuned OGD) against the float64 NumPy loops of
tests/reference_denevi.py, step by step on ragged, masked task blocks."""

from __future__ import annotations

import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ojax import InputError, envs, meta, parameter_free
from ojax.meta.simulate import _run_meta

sys.path.insert(0, str(Path(__file__).parent))
import reference_denevi as ref  # noqa: E402

D = 4


def _ragged_tasks(seed: int = 1, num_tasks: int = 12, dtype=jnp.float64) -> meta.TaskBlock:
    """Low-variance tasks with ragged sizes (one empty) and held-out parts of several sizes."""
    tasks, _ = envs.low_variance_tasks(
        jax.random.key(seed), num_tasks=num_tasks, num_points=24, dim=D, num_train=12, dtype=dtype
    )
    rng = np.random.default_rng(seed)
    m = np.ones((num_tasks, 12), bool)
    mt = np.ones((num_tasks, 12), bool)
    for t in range(num_tasks):
        m[t, rng.integers(2, 13) :] = False
        mt[t, rng.integers(1, 13) :] = False
    m[3] = False  # an empty task changes nothing
    return tasks._replace(mask_train=jnp.asarray(m), mask_test=jnp.asarray(mt))


def _pf_cases(dtype=jnp.float64):
    one = jnp.asarray(1.0, dtype)
    wi, wm, scale = jnp.asarray(1.5, dtype), jnp.asarray(0.7, dtype), jnp.asarray(0.9, dtype)
    bias = jnp.linspace(0.5, 1.5, D, dtype=dtype)
    cases = []
    for bettor in ("kt", "ons"):
        cases += [
            (
                f"fixed-{bettor}",
                meta.biased_within_task(D, bettor, dtype=dtype),
                meta.FixedBiasParams(bias, wi, scale),
                dict(kind=bettor, mode="fixed", bias=np.asarray(bias), inner_wealth=1.5, scale=0.9),
            ),
            (
                f"aggressive-{bettor}",
                meta.aggressive(D, bettor, dtype=dtype),
                meta.MetaParams(wi, wm, scale),
                dict(kind=bettor, mode="aggressive", inner_wealth=1.5, meta_wealth=0.7, scale=0.9),
            ),
            (
                f"aggressive-authors-{bettor}",
                meta.aggressive(D, bettor, dtype=dtype, counter="authors"),
                meta.MetaParams(wi, wm, one),
                dict(
                    kind=bettor,
                    mode="aggressive",
                    inner_wealth=1.5,
                    meta_wealth=0.7,
                    counter="authors",
                ),
            ),
            (
                f"lazy-{bettor}",
                meta.lazy(D, bettor, dtype=dtype),
                meta.MetaParams(wi, wm, scale),
                dict(kind=bettor, mode="lazy", inner_wealth=1.5, meta_wealth=0.7, scale=0.9),
            ),
        ]
    return cases


def _compare(trace: meta.MetaTrace, expected: dict, tasks: meta.TaskBlock, tol=1e-9):
    mask = np.asarray(tasks.mask_train)
    errors = np.asarray(trace.errors)
    assert np.all(errors[~mask] == 0)
    for t, errs in enumerate(expected["errors"]):
        np.testing.assert_allclose(errors[t][mask[t]], errs, atol=tol, rtol=0)
    np.testing.assert_allclose(np.asarray(trace.test_errors), expected["test"], atol=tol, rtol=0)
    np.testing.assert_allclose(np.asarray(trace.biases), expected["biases"], atol=tol, rtol=0)


@pytest.mark.parametrize("case", range(8), ids=[c[0] for c in _pf_cases(jnp.float32)])
def test_parameter_free_matches_reference(x64, case):
    name, learner, params, kw = _pf_cases()[case]
    tasks = _ragged_tasks()
    trace = meta.run_meta(learner, params, tasks)
    kind = kw.pop("kind")
    expected = ref.run_pf(ref.tasks_from_block(tasks), kind, **kw)
    _compare(trace, expected, tasks)
    # The online errors are those of the pre-update prediction vectors.
    assert trace.errors.shape == tasks.y_train.shape


@pytest.mark.parametrize("mode", ["fixed", "aggressive", "lazy"])
def test_tuned_ogd_matches_reference(x64, mode):
    tasks = _ragged_tasks(2)
    eta_in, eta_meta = 0.3, 0.05
    if mode == "fixed":
        bias = jnp.asarray([1.0, 2.0, 0.0, -1.0])
        learner, params = (
            meta.ogd_within_task(D, dtype=jnp.float64),
            meta.OGDFixedParams(bias, jnp.asarray(eta_in)),
        )
    else:
        factory = meta.aggressive_ogd if mode == "aggressive" else meta.lazy_ogd
        learner = factory(D, dtype=jnp.float64)
        params = meta.OGDMetaParams(jnp.asarray(eta_in), jnp.asarray(eta_meta))
        bias = None
    trace = meta.run_meta(learner, params, tasks)
    expected = ref.run_ss(ref.tasks_from_block(tasks), mode, eta_in, eta_meta, bias)
    _compare(trace, expected, tasks)


def test_aggressive_iterates_step_by_step(x64):
    # Drive the protocol by hand and compare every prediction vector w_i with the reference.
    tasks = _ragged_tasks(3, num_tasks=4)
    learner = meta.aggressive(D, "ons", dtype=jnp.float64)
    params = meta.MetaParams(jnp.asarray(1.0), jnp.asarray(2.0), jnp.asarray(1.0))
    expected = ref.run_pf(ref.tasks_from_block(tasks), "ons", "aggressive", meta_wealth=2.0)
    state = learner.init(params)
    for t in range(4):
        m = np.asarray(tasks.mask_train[t])
        state = learner.begin_task(state, params, jnp.asarray(int(m.sum())))
        for i, (x, y) in enumerate(zip(tasks.x_train[t][m], tasks.y_train[t][m])):
            w = parameter_free.dm_iterate(state.inner) + parameter_free.dm_iterate(state.meta)
            np.testing.assert_allclose(np.asarray(w), expected["iterates"][t][i], atol=1e-9)
            state = learner.update(state, params, x, y)
        if m.any():
            np.testing.assert_allclose(
                np.asarray(learner.task_average(state, params)),
                expected["iterates"][t].mean(axis=0),
                atol=1e-9,
            )
        state = learner.end_task(state, params)


def test_authors_counter_equals_global_on_equal_sizes(x64):
    tasks, _ = envs.low_variance_tasks(
        jax.random.key(5), num_tasks=6, num_points=20, dim=D, num_train=10, dtype=jnp.float64
    )
    params = meta.MetaParams(jnp.asarray(1.0), jnp.asarray(1.0), jnp.asarray(1.0))
    a = meta.run_meta(meta.aggressive(D, dtype=jnp.float64), params, tasks)
    b = meta.run_meta(meta.aggressive(D, dtype=jnp.float64, counter="authors"), params, tasks)
    np.testing.assert_allclose(np.asarray(a.errors), np.asarray(b.errors), atol=1e-12)
    ragged = _ragged_tasks(6)
    a = meta.run_meta(meta.aggressive(D, dtype=jnp.float64), params, ragged)
    b = meta.run_meta(meta.aggressive(D, dtype=jnp.float64, counter="authors"), params, ragged)
    assert not np.allclose(np.asarray(a.errors), np.asarray(b.errors))


def _pad(tasks: meta.TaskBlock, seed: int, extra: int = 5) -> meta.TaskBlock:
    """Inserts ``extra`` masked garbage points at random positions of every task."""
    rng = np.random.default_rng(seed)
    x, y, m = map(np.asarray, (tasks.x_train, tasks.y_train, tasks.mask_train))
    T, n, d = x.shape
    xp = rng.normal(size=(T, n + extra, d)) * 100
    yp = rng.normal(size=(T, n + extra)) * 100
    mp = np.zeros((T, n + extra), bool)
    for t in range(T):
        slots = np.sort(rng.choice(n + extra, n, replace=False))
        xp[t, slots], yp[t, slots], mp[t, slots] = x[t], y[t], m[t]
    return tasks._replace(
        x_train=jnp.asarray(xp), y_train=jnp.asarray(yp), mask_train=jnp.asarray(mp)
    )


@pytest.mark.parametrize("case", [1, 3, 4, 7])
def test_padding_changes_nothing(x64, case):
    _, learner, params, _ = _pf_cases()[case]
    tasks = _ragged_tasks(7)
    padded = _pad(tasks, 8)
    a = meta.run_meta(learner, params, tasks)
    b = meta.run_meta(learner, params, padded)
    np.testing.assert_allclose(
        np.asarray(a.errors)[np.asarray(tasks.mask_train)],
        np.asarray(b.errors)[np.asarray(padded.mask_train)],
        atol=1e-12,
    )
    np.testing.assert_allclose(np.asarray(a.test_errors), np.asarray(b.test_errors), atol=1e-12)
    np.testing.assert_allclose(np.asarray(a.biases), np.asarray(b.biases), atol=1e-12)


def test_ragged_block_equals_tasks_one_by_one(x64):
    # Schools-like sizes: the fixed-bias learner over a ragged block equals each task alone.
    tasks = _ragged_tasks(9)
    learner = meta.biased_within_task(D, "ons", dtype=jnp.float64)
    params = meta.FixedBiasParams(jnp.ones(D), jnp.asarray(1.0), jnp.asarray(1.0))
    block = meta.run_meta(learner, params, tasks)
    for t in range(tasks.num_tasks):
        n = int(tasks.mask_train[t].sum())
        if n == 0:
            continue
        single = meta.TaskBlock(
            tasks.x_train[t : t + 1, :n],
            tasks.y_train[t : t + 1, :n],
            tasks.mask_train[t : t + 1, :n],
            tasks.x_test[t : t + 1],
            tasks.y_test[t : t + 1],
            tasks.mask_test[t : t + 1],
        )
        alone = meta.run_meta(learner, params, single)
        np.testing.assert_allclose(
            np.asarray(alone.errors[0]), np.asarray(block.errors[t, :n]), atol=1e-12
        )
        assert abs(float(alone.test_errors[0]) - float(block.test_errors[t])) < 1e-12


def test_meta_test_matches_reference(x64):
    train, unseen = _ragged_tasks(10), _ragged_tasks(11, num_tasks=5)
    params = meta.MetaParams(jnp.asarray(1.0), jnp.asarray(1.0), jnp.asarray(1.0))
    learner = meta.lazy(D, "kt", dtype=jnp.float64)
    trace = meta.run_meta(learner, params, train)
    got = meta.meta_test_errors(learner, params, trace.biases[jnp.asarray([0, 5, 12])], unseen)
    unseen_list = ref.tasks_from_block(unseen)
    for value, b in zip(np.asarray(got), np.asarray(trace.biases)[[0, 5, 12]]):
        assert abs(value - ref.meta_test(unseen_list, b, kind="kt")) < 1e-9
    ogd = meta.aggressive_ogd(D, dtype=jnp.float64)
    p = meta.OGDMetaParams(jnp.asarray(0.2), jnp.asarray(0.1))
    got = meta.meta_test_errors(ogd, p, jnp.ones((1, D)), unseen)
    assert abs(float(got[0]) - ref.meta_test(unseen_list, np.ones(D), eta_in=0.2)) < 1e-9


def test_curves_match_reference(x64):
    tasks = _ragged_tasks(12)
    learner = meta.lazy(D, "ons", dtype=jnp.float64)
    params = meta.MetaParams(jnp.asarray(1.0), jnp.asarray(1.0), jnp.asarray(1.0))
    trace = meta.run_meta(learner, params, tasks)
    expected = ref.run_pf(ref.tasks_from_block(tasks), "ons", "lazy")
    np.testing.assert_allclose(
        meta.cumulative_error(trace.errors, tasks.mask_train),
        ref.cumulative_curve(expected["errors"]),
        atol=1e-9,
    )
    np.testing.assert_allclose(
        meta.test_error_curve(trace.test_errors), ref.test_curve(expected["test"]), atol=1e-9
    )


def test_vmap_over_seeds_equals_loop_and_no_recompile():
    keys = jax.vmap(jax.random.key)(jnp.arange(3))
    tasks = jax.vmap(
        lambda k: envs.multitask.low_variance_tasks_core(
            k, envs.multitask.default_low_variance_params(), 5, 10, D, 5
        )[0]
    )(keys)
    learner = meta.aggressive(D, "kt")
    params = meta.MetaParams(jnp.asarray(1.0), jnp.asarray(1.0), jnp.asarray(1.0))
    batched = jax.vmap(lambda t: meta.run_meta_core(learner, params, t))(tasks)
    before = _run_meta._cache_size()
    for s in range(3):
        one = jax.tree.map(lambda a: a[s], tasks)  # noqa: B023 (called at once)
        for wealth in (0.5, 3.0):
            meta.run_meta(learner, params._replace(meta_wealth=jnp.asarray(wealth)), one)
        trace = meta.run_meta(learner, params, one)
        np.testing.assert_allclose(
            np.asarray(batched.errors[s]), np.asarray(trace.errors), rtol=1e-5, atol=1e-5
        )
    assert _run_meta._cache_size() - before == 1  # seeds and wealth values never recompile


def test_grid_equals_loop_and_hindsight_selection():
    tasks, _ = envs.low_variance_tasks(
        jax.random.key(13), num_tasks=6, num_points=16, dim=D, num_train=8
    )
    val, _ = envs.low_variance_tasks(
        jax.random.key(13), num_tasks=3, num_points=16, dim=D, num_train=8, first_task=6
    )
    learner = meta.lazy_ogd(D)
    steps = jnp.asarray([0.01, 0.1, 1.0])
    grid = meta.OGDMetaParams(jnp.repeat(steps, 3), jnp.tile(steps, 3))
    cum, v = jax.jit(lambda g: meta.grid_scores_core(learner, g, tasks, val))(grid)
    for i in range(9):
        p = jax.tree.map(lambda a: a[i], grid)  # noqa: B023 (called at once)
        trace = meta.run_meta(learner, p, tasks)
        final = meta.cumulative_error(trace.errors, tasks.mask_train)[-1]
        assert abs(float(cum[i]) - final) < 1e-5
        mt = meta.meta_test_errors(learner, p, trace.biases[-1:], val)
        assert abs(float(v[i]) - float(mt[0])) < 1e-5
    trace = jax.vmap(lambda p: meta.run_meta_core(learner, p, tasks, record_errors=False))(grid)
    assert int(meta.select_in_hindsight(trace.task_errors, trace.num_points[0])) == int(
        jnp.argmin(cum)
    )
    assert len(set(np.round(np.asarray(cum), 6))) > 1


def test_best_bias_in_hindsight_recovers_noiseless_mean(x64):
    rng = np.random.default_rng(14)
    w = rng.normal(size=(5, D)) + 2.0
    x = rng.normal(size=(5, 12, D))
    tasks = meta.TaskBlock(
        jnp.asarray(x),
        jnp.asarray(np.einsum("tnd,td->tn", x, w)),
        jnp.ones((5, 12), bool),
        jnp.asarray(x[:, :2]),
        jnp.zeros((5, 2)),
        jnp.ones((5, 2), bool),
    )
    got = meta.best_bias_in_hindsight(tasks)
    np.testing.assert_allclose(np.asarray(got), w.mean(axis=0), atol=1e-4)


def test_bad_inputs_raise_before_running():
    tasks = _ragged_tasks(15, dtype=jnp.float32)
    params = meta.MetaParams(jnp.asarray(1.0), jnp.asarray(1.0), jnp.asarray(1.0))
    learner = meta.lazy(D)
    with pytest.raises(InputError, match="meta_wealth"):
        meta.run_meta(learner, params._replace(meta_wealth=jnp.asarray(-1.0)), tasks)
    with pytest.raises(InputError, match="inner_wealth"):
        meta.run_meta(learner, params._replace(inner_wealth=jnp.asarray(0.0)), tasks)
    with pytest.raises(InputError, match="y_train"):
        meta.run_meta(learner, params, tasks._replace(y_train=tasks.y_train.at[2, 1].set(jnp.nan)))
    with pytest.raises(InputError, match="mask_train"):
        meta.run_meta(learner, params, tasks._replace(mask_train=tasks.mask_train[:, :-1]))
    with pytest.raises(InputError, match="x_test"):
        meta.run_meta(learner, params, tasks._replace(x_test=tasks.x_test[..., :-1]))
    with pytest.raises(InputError, match="inner_step"):
        meta.run_meta(
            meta.lazy_ogd(D), meta.OGDMetaParams(jnp.asarray(-0.1), jnp.asarray(1.0)), tasks
        )
    with pytest.raises(InputError, match="counter"):
        meta.aggressive(D, counter="local")
    with pytest.raises(InputError, match="as many tasks"):
        meta.pad_tasks([np.ones((3, 2))], [np.ones(3), np.ones(2)])
