"""Meta-learners (ITL / Oracle, Aggressive, Lazy, tuned OGD) against the float64 NumPy loops of
tests/reference_denevi.py, step by step on ragged, masked task blocks.

Compilation dominates these tests, so the learners are built once (cached) and every learner is
compiled once: one vmapped call runs it on the ragged block, on the same block with garbage
padding scattered among its points, and on a block of equal-size tasks; the tests read slices.
"""

from __future__ import annotations

import functools
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
N = 12  # online slots per task
SIZES = np.array([5, 9, 1, 0, 9, 5, 12, 1])  # ragged, one empty task, one full, few distinct sizes
T = len(SIZES)


@functools.cache
def _source() -> dict[str, np.ndarray]:
    """3T float64 low-variance tasks (one environment call), as NumPy arrays."""
    with jax.enable_x64(True):
        tasks, _ = envs.low_variance_tasks(
            jax.random.key(1),
            num_tasks=3 * T,
            num_points=2 * N,
            dim=D,
            num_train=N,
            dtype=jnp.float64,
        )
    return {k: np.asarray(v) for k, v in tasks._asdict().items()}


def _block(part: int, ragged: bool = True, dtype=np.float64) -> meta.TaskBlock:
    """Tasks ``part * T .. part * T + T - 1``, with ragged online and held-out parts."""
    src = {k: v[part * T : (part + 1) * T] for k, v in _source().items()}
    rng = np.random.default_rng(part)
    m = np.ones((T, N), bool)
    mt = np.ones((T, N), bool)
    if ragged:
        for t in range(T):
            m[t, SIZES[(t + part) % T] :] = False
            mt[t, rng.integers(1, N + 1) :] = False
    return meta.TaskBlock(  # the padded slots keep real-looking data: the masks must hide it
        jnp.asarray(src["x_train"].astype(dtype)),
        jnp.asarray(src["y_train"].astype(dtype)),
        jnp.asarray(m),
        jnp.asarray(src["x_test"].astype(dtype)),
        jnp.asarray(src["y_test"].astype(dtype)),
        jnp.asarray(mt),
    )


def _scatter(tasks: meta.TaskBlock, seed: int) -> meta.TaskBlock:
    """The same tasks with their real points at random slots and garbage on the others."""
    rng = np.random.default_rng(seed)
    x, y, m = map(np.asarray, (tasks.x_train, tasks.y_train, tasks.mask_train))
    xp, yp = rng.normal(size=x.shape) * 100, rng.normal(size=y.shape) * 100
    mp = np.zeros_like(m)
    for t in range(T):
        n = int(m[t].sum())
        slots = np.sort(rng.choice(N, n, replace=False))
        xp[t, slots], yp[t, slots], mp[t, slots] = x[t, :n], y[t, :n], True
    assert (mp != m).any()  # the garbage really moved points around
    return tasks._replace(
        x_train=jnp.asarray(xp), y_train=jnp.asarray(yp), mask_train=jnp.asarray(mp)
    )


WI, WM, SCALE = 1.5, 0.7, 0.9
ETA_IN, ETA_META = 0.3, 0.05
OGD_BIAS = np.array([1.0, 2.0, 0.0, -1.0])
CASES = (
    "fixed-kt",
    "aggressive-kt",
    "aggressive-authors-kt",
    "lazy-kt",
    "fixed-ons",
    "aggressive-ons",
    "aggressive-authors-ons",
    "lazy-ons",
    "ogd-fixed",
    "ogd-aggressive",
    "ogd-lazy",
)


@functools.cache
def _learner(case: str, dtype=jnp.float64) -> meta.MetaLearner:
    kind, *rest = case.split("-")
    if kind == "ogd":
        factory = {"fixed": meta.ogd_within_task, "aggressive": meta.aggressive_ogd}.get(
            rest[0], meta.lazy_ogd
        )
        return factory(D, dtype=dtype)
    bettor = rest[-1]
    if kind == "fixed":
        return meta.biased_within_task(D, bettor, dtype=dtype)
    if kind == "lazy":
        return meta.lazy(D, bettor, dtype=dtype)
    counter = "authors" if "authors" in rest else "global"
    return meta.aggressive(D, bettor, dtype=dtype, counter=counter)


def _params(case: str):
    f = functools.partial(jnp.asarray, dtype=jnp.float64)
    if case == "ogd-fixed":
        return meta.OGDFixedParams(f(OGD_BIAS), f(ETA_IN))
    if case.startswith("ogd"):
        return meta.OGDMetaParams(f(ETA_IN), f(ETA_META))
    if case.startswith("fixed"):
        return meta.FixedBiasParams(jnp.linspace(0.5, 1.5, D, dtype=jnp.float64), f(WI), f(SCALE))
    return meta.MetaParams(f(WI), f(WM), f(SCALE))


def _expected(case: str, tasks: meta.TaskBlock) -> dict:
    data = ref.tasks_from_block(tasks)
    kind, *rest = case.split("-")
    if kind == "ogd":
        bias = OGD_BIAS if rest[0] == "fixed" else None
        return ref.run_ss(data, rest[0], ETA_IN, ETA_META, bias)
    bettor = rest[-1]
    if kind == "fixed":
        bias = np.linspace(0.5, 1.5, D)
        return ref.run_pf(data, bettor, "fixed", bias, inner_wealth=WI, scale=SCALE)
    counter = "authors" if "authors" in rest else "global"
    return ref.run_pf(data, bettor, kind, None, WI, WM, SCALE, counter)


@functools.cache
def _runs(case: str) -> meta.MetaTrace:
    """``case`` on [ragged block, the same scattered among garbage, equal-size tasks] (one
    compilation); leaves carry a leading axis of 3."""
    ragged = _block(0)
    blocks = jax.tree.map(
        lambda *a: jnp.stack(a), ragged, _scatter(ragged, 8), _block(0, ragged=False)
    )
    learner = _learner(case)
    with jax.enable_x64(True):
        out = jax.jit(jax.vmap(lambda t: meta.run_meta_core(learner, _params(case), t)))(blocks)
    return jax.tree.map(np.asarray, out)


def _take(trace: meta.MetaTrace, i: int) -> meta.MetaTrace:
    return jax.tree.map(lambda a: a[i], trace)


def _compare(trace: meta.MetaTrace, expected: dict, tasks: meta.TaskBlock, tol=1e-9):
    mask = np.asarray(tasks.mask_train)
    errors = np.asarray(trace.errors)
    assert errors.shape == mask.shape and np.all(errors[~mask] == 0)
    for t, errs in enumerate(expected["errors"]):
        np.testing.assert_allclose(errors[t][mask[t]], errs, atol=tol, rtol=0)
    np.testing.assert_allclose(np.asarray(trace.test_errors), expected["test"], atol=tol, rtol=0)
    np.testing.assert_allclose(np.asarray(trace.biases), expected["biases"], atol=tol, rtol=0)
    np.testing.assert_array_equal(np.asarray(trace.num_points), mask.sum(axis=1))


@pytest.mark.parametrize("case", CASES)
def test_matches_reference_on_ragged_and_equal_tasks(x64, case):
    # Online errors per point, per-task test errors and the bias after every task, to 1e-9,
    # on ragged tasks (with an empty one) and on equal-size tasks.
    runs = _runs(case)
    _compare(_take(runs, 0), _expected(case, _block(0)), _block(0))
    full = _block(0, ragged=False)
    _compare(_take(runs, 2), _expected(case, full), full)


@pytest.mark.parametrize("case", CASES)
def test_padding_changes_nothing(x64, case):
    runs = _runs(case)
    padded = _scatter(_block(0), 8)
    a, b = _take(runs, 0), _take(runs, 1)
    np.testing.assert_allclose(
        a.errors[np.asarray(_block(0).mask_train)],
        b.errors[np.asarray(padded.mask_train)],
        atol=1e-12,
    )
    np.testing.assert_allclose(a.test_errors, b.test_errors, atol=1e-12)
    np.testing.assert_allclose(a.biases, b.biases, atol=1e-12)


@pytest.mark.parametrize("bettor", ["kt", "ons"])
def test_authors_counter_equals_global_on_equal_sizes(x64, bettor):
    glob, authors = _runs(f"aggressive-{bettor}"), _runs(f"aggressive-authors-{bettor}")
    np.testing.assert_allclose(_take(glob, 2).errors, _take(authors, 2).errors, atol=1e-12)
    assert not np.allclose(_take(glob, 0).errors, _take(authors, 0).errors)


def test_aggressive_iterates_step_by_step(x64):
    # Drive the protocol by hand and compare every prediction vector w_i with the reference.
    tasks = _block(0)
    learner = _learner("aggressive-ons")
    params = meta.MetaParams(jnp.asarray(1.0), jnp.asarray(2.0), jnp.asarray(1.0))
    expected = ref.run_pf(ref.tasks_from_block(tasks), "ons", "aggressive", meta_wealth=2.0)
    begin, update, end = map(jax.jit, (learner.begin_task, learner.update, learner.end_task))
    weights = jax.jit(
        lambda s: parameter_free.dm_iterate(s.inner) + parameter_free.dm_iterate(s.meta)
    )
    average = jax.jit(learner.task_average)
    state = learner.init(params)
    for t in range(5):  # includes the empty task 3
        m = np.asarray(tasks.mask_train[t])
        state = begin(state, params, jnp.asarray(int(m.sum()), jnp.int32))
        for i, (x, y) in enumerate(zip(tasks.x_train[t][m], tasks.y_train[t][m])):
            np.testing.assert_allclose(weights(state), expected["iterates"][t][i], atol=1e-9)
            state = update(state, params, x, y)
        if m.any():
            np.testing.assert_allclose(
                average(state, params), expected["iterates"][t].mean(axis=0), atol=1e-9
            )
        state = end(state, params)
        np.testing.assert_allclose(
            learner.bias(state, params), expected["biases"][t + 1], atol=1e-9
        )


def test_ragged_block_equals_tasks_one_by_one(x64):
    # The fixed-bias learner over the ragged block (a vmap over padded tasks) equals each task
    # run alone, unpadded; one compilation for all the distinct sizes.
    tasks = _block(0)
    learner = _learner("fixed-ons")
    params = _params("fixed-ons")
    block = _take(_runs("fixed-ons"), 0)
    sizes = np.asarray(tasks.mask_train).sum(axis=1)
    singles = {}
    for t in np.flatnonzero(sizes):
        n = int(sizes[t])
        singles[int(t)] = jax.tree.map(lambda a: a[t : t + 1], tasks)._replace(  # noqa: B023
            x_train=tasks.x_train[t : t + 1, :n],
            y_train=tasks.y_train[t : t + 1, :n],
            mask_train=tasks.mask_train[t : t + 1, :n],
        )
    alone = jax.jit(lambda b: {t: meta.run_meta_core(learner, params, s) for t, s in b.items()})(
        singles
    )
    for t, trace in alone.items():
        n = int(sizes[t])
        np.testing.assert_allclose(trace.errors[0], block.errors[t, :n], atol=1e-12)
        assert abs(float(trace.test_errors[0]) - float(block.test_errors[t])) < 1e-12


def test_meta_test_matches_reference(x64):
    unseen = _block(1)
    params = _params("lazy-kt")
    learner = _learner("lazy-kt")
    biases = _take(_runs("lazy-kt"), 0).biases[[0, 4, T]]
    got = meta.meta_test_errors(learner, params, jnp.asarray(biases), unseen)
    unseen_list = ref.tasks_from_block(unseen)
    for value, b in zip(np.asarray(got), biases):
        assert (
            abs(value - ref.meta_test(unseen_list, b, kind="kt", inner_wealth=WI, scale=SCALE))
            < 1e-9
        )
    assert len(set(np.round(np.asarray(got), 6))) == 3
    ogd = _learner("ogd-aggressive")
    p = meta.OGDMetaParams(jnp.asarray(0.2), jnp.asarray(0.1))
    got = meta.meta_test_errors(ogd, p, jnp.ones((1, D)), unseen)
    assert abs(float(got[0]) - ref.meta_test(unseen_list, np.ones(D), eta_in=0.2)) < 1e-9


def test_curves_match_reference(x64):
    tasks = _block(0)
    trace = _take(_runs("lazy-ons"), 0)
    expected = _expected("lazy-ons", tasks)
    np.testing.assert_allclose(
        meta.cumulative_error(trace.errors, tasks.mask_train),
        ref.cumulative_curve(expected["errors"]),
        atol=1e-9,
    )
    np.testing.assert_allclose(
        meta.test_error_curve(trace.test_errors), ref.test_curve(expected["test"]), atol=1e-9
    )


def _seeds32() -> meta.TaskBlock:
    """Three float32 "seeds": the three parts of the source tasks, equal sizes."""
    return jax.tree.map(
        lambda *a: jnp.stack(a), *(_block(p, ragged=False, dtype=np.float32) for p in range(3))
    )


def test_vmap_over_seeds_equals_loop_and_no_recompile():
    tasks = _seeds32()
    learner = _learner("aggressive-kt", jnp.float32)
    params = meta.MetaParams(jnp.asarray(1.0), jnp.asarray(1.0), jnp.asarray(1.0))
    batched = jax.jit(jax.vmap(lambda t: meta.run_meta_core(learner, params, t)))(tasks)
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
    seeds = _seeds32()
    tasks = jax.tree.map(lambda a: a[0], seeds)
    val = jax.tree.map(lambda a: a[1, :3], seeds)
    learner = _learner("ogd-lazy", jnp.float32)
    steps = jnp.asarray([0.01, 0.1, 1.0])
    grid = meta.OGDMetaParams(jnp.repeat(steps, 3), jnp.tile(steps, 3))
    cum, v = jax.jit(lambda g: meta.grid_scores_core(learner, g, tasks, val))(grid)
    finals = []
    for i in range(9):
        p = jax.tree.map(lambda a: a[i], grid)  # noqa: B023 (called at once)
        trace = meta.run_meta(learner, p, tasks)
        final = meta.cumulative_error(trace.errors, tasks.mask_train)[-1]
        finals.append(float(final))
        assert abs(float(cum[i]) - final) < 1e-5
        mt = meta.meta_test_errors(learner, p, trace.biases[-1:], val)
        assert abs(float(v[i]) - float(mt[0])) < 1e-5
    # selection in hindsight: the grid's argmin is the loop's argmin
    assert int(jnp.argmin(cum)) == int(np.argmin(finals))
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
    tasks = _block(2, dtype=np.float32)
    params = meta.MetaParams(jnp.asarray(1.0), jnp.asarray(1.0), jnp.asarray(1.0))
    learner = _learner("lazy-ons", jnp.float32)
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
    with pytest.raises(InputError, match="at least one task"):
        meta.pad_tasks([], [])
    with pytest.raises(InputError, match=r"size must be an integer in \[3, inf\]"):
        meta.pad_tasks([np.ones((3, 2))], [np.ones(3)], size=1)
    # coins outside [-1, 1] would drive the wealth negative: NaN, unless refused up front
    with pytest.raises(InputError, match=r"gradient_scale \* L \* max \|\|x\|\| must be <= 1"):
        meta.run_meta(learner, params._replace(gradient_scale=jnp.asarray(3.0)), tasks)
    fixed = _learner("fixed-ons", jnp.float32)
    with pytest.raises(InputError, match=rf"bias must have shape \({D}\), got shape \(\)"):
        meta.run_meta(
            fixed, meta.FixedBiasParams(jnp.asarray(1.0), jnp.asarray(1.0), jnp.asarray(1.0)), tasks
        )
