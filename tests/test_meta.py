"""Meta-learners (ITL / Oracle, Aggressive, Lazy, tuned OGD) against the float64 NumPy loops of
tests/reference_denevi.py, step by step on ragged, masked task blocks; compositions with other
OCO learners (optax AdaGrad); a user's own ragged tasks end to end.

Compilation dominates these tests, so the learners are built once (the factories are cached) and
every learner is compiled once: one vmapped call runs it on the ragged block, on the same block
with garbage padding scattered among its points, and on a block of equal-size tasks; the tests
read slices.
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

import ojax
from ojax import InputError, TaskInfo, envs, meta, oco, parameter_free

sys.path.insert(0, str(Path(__file__).parent))
import reference_denevi as ref  # noqa: E402
from tolerances import scaled_atol

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


def _learner(case: str) -> ojax.MultiTaskLearner:
    kind, *rest = case.split("-")
    if kind == "ogd":
        return {
            "fixed": meta.ogd_within_task,
            "aggressive": meta.aggressive_ogd,
            "lazy": meta.lazy_ogd,
        }[rest[0]](D)
    inside = parameter_free.direction_magnitude(rest[-1])
    if kind == "fixed":
        return meta.biased_within_task(D, inside)
    if kind == "lazy":
        return meta.lazy(D, inside, inside)
    counter = "authors" if "authors" in rest else "global"
    return meta.aggressive(D, inside, inside, counter=counter)


def _params(case: str, dtype=jnp.float64):
    if case == "ogd-fixed":
        return meta.FixedBiasParams.ogd(ETA_IN, jnp.asarray(OGD_BIAS, dtype), dtype=dtype)
    if case.startswith("ogd"):
        return meta.MetaParams.ogd(ETA_IN, ETA_META, dtype=dtype)
    if case.startswith("fixed"):
        bias = jnp.linspace(0.5, 1.5, D, dtype=dtype)
        return meta.FixedBiasParams.paper(bias, inner_wealth=WI, gradient_scale=SCALE, dtype=dtype)
    return meta.MetaParams.paper(inner_wealth=WI, meta_wealth=WM, gradient_scale=SCALE, dtype=dtype)


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


def _fixed(case: str) -> bool:
    return "fixed" in case


@functools.cache
def _runs(case: str) -> dict:
    """``case`` on [ragged block, the same scattered among garbage, equal-size tasks] (one
    compilation): the trace's online errors, mask, test errors, the path of biases and every
    step's prediction vector (a per-step record), with a leading axis of 3."""
    ragged = _block(0)
    blocks = jax.tree.map(
        lambda *a: jnp.stack(a), ragged, _scatter(ragged, 8), _block(0, ragged=False)
    )
    learner = _learner(case)
    within = oco.ogd("none") if case.startswith("ogd") else None

    def one(tasks):
        params = _params(case)
        record = meta.weights_record(within or _inside(case))
        trace = meta.run_meta(learner, params, tasks, record=record, independent_tasks=_fixed(case))
        return {
            "errors": trace.loss,
            "mask": trace.mask,
            "test": trace.task.test_error,
            "biases": meta.bias_path(learner, params, trace),
            "weights": trace.record,
        }

    with jax.enable_x64(True):
        out = jax.jit(jax.vmap(one))(blocks)
    return jax.tree.map(np.asarray, out)


def _inside(case: str):
    return parameter_free.direction_magnitude(case.split("-")[-1])


def _take(runs: dict, i: int) -> dict:
    return {k: v[i] for k, v in runs.items()}


def _compare(got: dict, expected: dict, tasks: meta.TaskBlock, tol=1e-9):
    mask = np.asarray(tasks.mask_train)
    np.testing.assert_array_equal(got["mask"], mask)
    assert got["errors"].shape == mask.shape and np.all(got["errors"][~mask] == 0)
    for t, errs in enumerate(expected["errors"]):
        np.testing.assert_allclose(got["errors"][t][mask[t]], errs, atol=tol, rtol=0)
        # every prediction vector w_i, step by step, through the per-step record
        np.testing.assert_allclose(
            got["weights"][t][mask[t]].reshape(-1, D),
            np.asarray(expected["iterates"][t]).reshape(-1, D),
            atol=tol,
            rtol=0,
        )
    np.testing.assert_allclose(got["test"], expected["test"], atol=tol, rtol=0)
    np.testing.assert_allclose(got["biases"], expected["biases"], atol=tol, rtol=0)


@pytest.mark.parametrize("case", CASES)
def test_matches_reference_on_ragged_and_equal_tasks(x64, case):
    # Online errors and prediction vectors per point, per-task test errors and the bias after
    # every task, to 1e-9, on ragged tasks (with an empty one) and on equal-size tasks.
    runs = _runs(case)
    _compare(_take(runs, 0), _expected(case, _block(0)), _block(0))
    full = _block(0, ragged=False)
    _compare(_take(runs, 2), _expected(case, full), full)


@pytest.mark.parametrize("case", CASES)
def test_padding_changes_nothing(x64, case):
    runs = _runs(case)
    a, b = _take(runs, 0), _take(runs, 1)
    ma, mb = np.asarray(_block(0).mask_train), np.asarray(_scatter(_block(0), 8).mask_train)
    np.testing.assert_allclose(a["errors"][ma], b["errors"][mb], atol=scaled_atol(b["errors"]))
    np.testing.assert_allclose(a["weights"][ma], b["weights"][mb], atol=scaled_atol(b["weights"]))
    np.testing.assert_allclose(a["test"], b["test"], atol=scaled_atol(b["test"]))
    np.testing.assert_allclose(a["biases"], b["biases"], atol=scaled_atol(b["biases"]))


@pytest.mark.parametrize("bettor", ["kt", "ons"])
def test_authors_counter_equals_global_on_equal_sizes(x64, bettor):
    glob, authors = _runs(f"aggressive-{bettor}"), _runs(f"aggressive-authors-{bettor}")
    np.testing.assert_allclose(
        glob["errors"][2], authors["errors"][2], atol=scaled_atol(authors["errors"][2])
    )
    assert not np.allclose(glob["errors"][0], authors["errors"][0])


def test_fixed_bias_sequential_equals_independent_tasks(x64):
    tasks = _block(0)
    learner, params = _learner("fixed-ons"), _params("fixed-ons")
    scan = meta.run_meta(learner, params, tasks)
    parallel = meta.run_meta(learner, params, tasks, independent_tasks=True)
    np.testing.assert_allclose(scan.loss, parallel.loss, atol=scaled_atol(parallel.loss))
    np.testing.assert_allclose(
        scan.task.test_error, parallel.task.test_error, atol=scaled_atol(parallel.task.test_error)
    )


def test_aggressive_protocol_by_hand(x64):
    # Drive the MultiTaskLearner protocol by hand and compare every prediction vector, w_bar
    # and the bias with the reference.
    tasks = _block(0)
    inside = parameter_free.direction_magnitude("ons")
    learner = meta.aggressive(D, inside, inside)
    params = meta.MetaParams.paper(meta_wealth=2.0, dtype=jnp.float64)
    expected = ref.run_pf(ref.tasks_from_block(tasks), "ons", "aggressive", meta_wealth=2.0)
    begin, update, end = map(jax.jit, (learner.begin_task, learner.update, learner.end_task))
    weights = jax.jit(lambda s: inside.iterate(s.within, params.within) + s.bias)
    state = learner.init(params)
    np.testing.assert_allclose(
        state.bias, expected["biases"][0], atol=scaled_atol(expected["biases"])
    )
    for t in range(5):  # includes the empty task 3
        m = np.asarray(tasks.mask_train[t])
        info = TaskInfo(jnp.int32(t), jnp.asarray(int(m.sum()), jnp.int32))
        state = begin(state, params, info)
        for i, (x, y) in enumerate(zip(tasks.x_train[t][m], tasks.y_train[t][m])):
            np.testing.assert_allclose(weights(state), expected["iterates"][t][i], atol=1e-9)
            state = update(state, params, x, y)
        if m.any():
            np.testing.assert_allclose(
                meta.task_average(state), expected["iterates"][t].mean(axis=0), atol=1e-9
            )
        state = end(state, params, info)
        np.testing.assert_allclose(state.bias, expected["biases"][t + 1], atol=1e-9)


def test_ragged_block_equals_tasks_one_by_one(x64):
    # The fixed-bias learner over the ragged block equals each task run alone, unpadded.
    tasks = _block(0)
    learner, params = _learner("fixed-ons"), _params("fixed-ons")
    block = _take(_runs("fixed-ons"), 0)
    sizes = np.asarray(tasks.mask_train).sum(axis=1)
    for t in np.flatnonzero(sizes):
        n = int(sizes[t])
        alone = jax.tree.map(lambda a, t=t: a[t : t + 1], tasks)._replace(
            x_train=tasks.x_train[t : t + 1, :n],
            y_train=tasks.y_train[t : t + 1, :n],
            mask_train=tasks.mask_train[t : t + 1, :n],
        )
        trace = meta.run_meta(learner, params, alone)
        np.testing.assert_allclose(
            trace.loss[0], block["errors"][t, :n], atol=scaled_atol(block["errors"])
        )
        assert abs(float(trace.task.test_error[0]) - float(block["test"][t])) < 1e-12


def test_meta_test_matches_reference(x64):
    unseen = _block(1)
    biases = _take(_runs("lazy-kt"), 0)["biases"][[0, 4, T]]
    fixed = _learner("fixed-kt")
    params = _params("lazy-kt").frozen(jnp.zeros(D))
    got = meta.meta_test_curve(fixed, params, jnp.asarray(biases), unseen)
    unseen_list = ref.tasks_from_block(unseen)
    for value, b in zip(np.asarray(got), biases):
        want = ref.meta_test(unseen_list, b, kind="kt", inner_wealth=WI, scale=SCALE)
        assert abs(value - want) < 1e-9
    assert len(set(np.round(np.asarray(got), 6))) == 3
    ogd = meta.FixedBiasParams.ogd(0.2, jnp.ones(D), dtype=jnp.float64)
    got = meta.meta_test_error(meta.ogd_within_task(D), ogd, unseen)
    assert abs(float(got) - ref.meta_test(unseen_list, np.ones(D), eta_in=0.2)) < 1e-9


def test_curves_match_reference(x64):
    tasks = _block(0)
    run = _take(_runs("lazy-ons"), 0)
    expected = _expected("lazy-ons", tasks)
    np.testing.assert_allclose(
        meta.cumulative_error(run["errors"], run["mask"]),
        ref.cumulative_curve(expected["errors"]),
        atol=1e-9,
    )
    np.testing.assert_allclose(
        meta.test_error_curve(run["test"]), ref.test_curve(expected["test"]), atol=1e-9
    )


def _seeds32() -> meta.TaskBlock:
    """Three float32 "seeds": the three parts of the source tasks, equal sizes."""
    return jax.tree.map(
        lambda *a: jnp.stack(a), *(_block(p, ragged=False, dtype=np.float32) for p in range(3))
    )


def _counting(learner):
    """The learner with its ``update`` wrapped in a trace counter."""
    count = [0]

    def update(*args):
        count[0] += 1
        return learner.update(*args)

    return learner._replace(update=update), count


def test_vmap_over_seeds_equals_loop_and_no_recompile():
    tasks = _seeds32()
    kt = parameter_free.direction_magnitude("kt")
    learner, count = _counting(meta.aggressive(D, kt, kt))
    params = meta.MetaParams.paper(dtype=jnp.float32)
    batched = jax.jit(jax.vmap(lambda t: meta.run_meta(learner, params, t).loss))(tasks)
    for s in range(3):
        one = jax.tree.map(lambda a: a[s], tasks)  # noqa: B023 (called at once)
        for wealth in (0.5, 3.0):
            other = meta.MetaParams.paper(meta_wealth=wealth, dtype=jnp.float32)
            meta.run_meta(learner, other, one)
        traced = count[0]
        trace = meta.run_meta(learner, params, one)
        np.testing.assert_allclose(batched[s], trace.loss, rtol=1e-5, atol=1e-5)
        assert count[0] == traced  # seeds and wealth values never retrace
    assert not np.allclose(batched[0], batched[1])


def test_grid_equals_loop_and_hindsight_selection():
    seeds = _seeds32()
    tasks = jax.tree.map(lambda a: a[0], seeds)
    val = jax.tree.map(lambda a: a[1, :3], seeds)
    learner, fixed = meta.lazy_ogd(D), meta.ogd_within_task(D)
    steps = jnp.asarray([0.01, 0.1, 1.0])
    grid = meta.MetaParams.ogd(jnp.repeat(steps, 3), jnp.tile(steps, 3), dtype=jnp.float32)
    scores = jax.jit(jax.vmap(lambda p: meta.grid_score(learner, fixed, p, tasks, val)))(grid)
    finals = []
    for i in range(9):
        p = jax.tree.map(lambda a: a[i], grid)  # noqa: B023 (called at once)
        trace = meta.run_meta(learner, p, tasks)
        final = meta.cumulative_error(trace.loss, trace.mask)[-1]
        finals.append(float(final))
        assert abs(float(scores.cumulative[i]) - final) < 1e-5
        mt = meta.meta_test_error(fixed, p.frozen(trace.task.bias[-1]), val)
        assert abs(float(scores.validation[i]) - float(mt)) < 1e-5
    # selection in hindsight: the grid's argmin is the loop's argmin
    assert int(jnp.argmin(scores.cumulative)) == int(np.argmin(finals))
    assert len(set(np.round(np.asarray(scores.cumulative), 6))) > 1


def test_grid_scores_reduced_in_the_scan_equal_the_stored_errors(x64):
    """A tuned grid keeps each task's summed error only (not every point of every pair): its
    scores equal those computed from the stored per-point errors (float64, 1e-12), on ragged
    tasks and with a validation block."""
    tasks, val = _block(0), _block(1)
    steps = jnp.asarray([0.003, 0.1, 2.0])
    grid = meta.MetaParams.ogd(jnp.repeat(steps, 3), jnp.tile(steps, 3), dtype=jnp.float64)
    learner, fixed = meta.aggressive_ogd(D), meta.ogd_within_task(D)
    scores = jax.jit(jax.vmap(lambda p: meta.grid_score(learner, fixed, p, tasks, val)))(grid)
    traces = jax.jit(jax.vmap(lambda p: meta.run_meta(learner, p, tasks)))(grid)
    assert traces.loss.shape == (9, T, N)  # the stored per-point errors
    stored = meta.cumulative_error(traces.loss, traces.mask)[:, -1]
    np.testing.assert_allclose(scores.cumulative, stored, rtol=1e-12, atol=scaled_atol(stored))
    expected = jax.jit(jax.vmap(lambda p, b: meta.meta_test_error(fixed, p.frozen(b), val)))(
        grid, traces.task.bias[:, -1]
    )
    np.testing.assert_allclose(scores.validation, expected, rtol=1e-12, atol=scaled_atol(expected))
    assert np.ptp(np.asarray(scores.cumulative)) > 1e-3  # the pairs differ


def test_step_grid_and_paper_presets(x64):
    grid = meta.MetaParams.step_grid(dtype=jnp.float64)
    assert grid.within.learning_rate.shape == (400,)
    assert grid.within.learning_rate.dtype == "float64"
    np.testing.assert_allclose(grid.within.learning_rate[:21:20], [1e-6, 10 ** (-6 + 10 / 19)])
    np.testing.assert_allclose(grid.meta.learning_rate[:2], [1e-6, 10 ** (-6 + 10 / 19)])
    paper = meta.MetaParams.paper()
    assert paper.within.initial_wealth.dtype == "float64"  # JAX's default float under x64
    assert float(paper.meta.initial_wealth) == 1.0 and float(paper.meta.gradient_scale) == 1.0
    with jax.enable_x64(False):
        assert meta.FixedBiasParams.paper(0.0).bias.dtype == "float32"


def test_optax_adagrad_inside_aggressive():
    # Any optax optimizer fits either role: AdaGrad in both roles jits, vmaps over its params,
    # equals the loop and never retraces.
    ada = ojax.optax_learner(optax.adagrad)
    learner, count = _counting(meta.aggressive(D, ada, ada))
    tasks = _block(2, dtype=np.float32)
    f32 = functools.partial(jnp.asarray, dtype=jnp.float32)
    grid = meta.MetaParams({"learning_rate": f32([0.05, 0.5])}, {"learning_rate": f32([0.01, 0.2])})
    run = jax.jit(jax.vmap(lambda p: meta.run_meta(learner, p, tasks).loss))
    batched = run(grid)
    assert batched.dtype == jnp.float32 and np.all(np.isfinite(batched))
    traced = count[0]
    for i in range(2):
        params = jax.tree.map(lambda a: a[i], grid)  # noqa: B023 (called at once)
        looped = meta.run_meta(learner, params, tasks).loss
        np.testing.assert_allclose(batched[i], looped, rtol=1e-5, atol=1e-5)
    after_loop = count[0]
    run(jax.tree.map(lambda a: a * 2.0, grid))
    meta.run_meta(learner, jax.tree.map(lambda a: a[0] * 3.0, grid), _block(1, dtype=np.float32))
    assert traced >= 1 and count[0] == after_loop == traced  # new values, data: no retrace
    assert not np.allclose(batched[0], batched[1])
    with pytest.raises(InputError, match="count"):
        meta.run_meta(meta.aggressive(D, ada, ada, counter="authors"), params, tasks)


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


def _own_tasks(seed: int, num_tasks: int = 12, dim: int = 3) -> list[tuple]:
    """A user's own ragged float64 tasks around a common vector, unit-norm inputs."""
    rng = np.random.default_rng(seed)
    center = np.full(dim, 2.0)
    tasks = []
    for n in rng.integers(3, 15, size=num_tasks):
        w = center + 0.3 * rng.normal(size=dim)
        x = rng.normal(size=(n + 4, dim))
        x /= np.linalg.norm(x, axis=1, keepdims=True)
        y = x @ w + 0.1 * rng.normal(size=n + 4)
        tasks.append((x[:n], y[:n], x[n:], y[n:]))
    return tasks


def test_user_story_own_ragged_float64_tasks(x64):
    own = _own_tasks(3)
    # --- the story: about ten lines of public API ---
    tasks = meta.TaskBlock.from_tasks(own)
    d, kt = tasks.dim, parameter_free.direction_magnitude("kt")
    methods = {
        "Aggressive": (meta.aggressive(d), meta.MetaParams.paper()),
        "Aggressive_KT": (meta.aggressive(d, kt, kt), meta.MetaParams.paper()),
        "Lazy": (meta.lazy(d), meta.MetaParams.paper()),
        "Lazy_KT": (meta.lazy(d, kt, kt), meta.MetaParams.paper()),
        "ITL": (meta.biased_within_task(d), meta.FixedBiasParams.paper(0.0)),
        "best bias": (
            meta.biased_within_task(d),
            meta.FixedBiasParams.paper(meta.best_bias_in_hindsight(tasks)),
        ),
    }
    keys = jax.random.split(jax.random.key(0), 5)
    orders = jax.vmap(lambda k: jax.random.permutation(k, tasks.num_tasks))(keys)
    curves = {}
    for name, (learner, params) in methods.items():
        trace = jax.vmap(lambda o: meta.run_meta(learner, params, tasks.reorder(o)))(orders)  # noqa: B023
        cum = meta.cumulative_error(trace.loss, trace.mask)
        test = meta.test_error_curve(trace.task.test_error)
        curves[name] = {"cum": (cum.mean(0), cum.std(0)), "test": (test.mean(0), test.std(0))}
        assert trace.loss.dtype == jnp.float64  # the user's float64 is kept
    # --- checks ---
    n_points, n_tasks = sum(len(t[1]) for t in own), len(own)
    for c in curves.values():
        assert c["cum"][0].shape == (n_points,) and c["test"][0].shape == (n_tasks,)
        assert np.all(np.isfinite(c["cum"][0])) and np.all(c["cum"][1] >= 0)
    # a fixed bias: the final cumulative error does not depend on the task order
    assert curves["ITL"]["cum"][1][-1] < 1e-12 and curves["best bias"]["cum"][1][-1] < 1e-12
    assert curves["Aggressive"]["cum"][1][-1] > 1e-6  # a meta-learner's does
    assert curves["best bias"]["cum"][0][-1] < curves["ITL"]["cum"][0][-1]
    assert curves["Aggressive"]["cum"][0][-1] < curves["ITL"]["cum"][0][-1]
    # one order against the float64 NumPy loop
    order = np.asarray(orders[2])
    expected = ref.run_pf([own[t] for t in order], "kt", "lazy")
    trace = meta.run_meta(meta.lazy(d, kt, kt), meta.MetaParams.paper(), tasks.reorder(order))
    np.testing.assert_allclose(
        meta.cumulative_error(trace.loss, trace.mask),
        ref.cumulative_curve(expected["errors"]),
        atol=1e-9,
    )
    np.testing.assert_allclose(trace.task.test_error, expected["test"], atol=1e-9)


def test_from_tasks_keeps_float64_pads_and_validates():
    own = _own_tasks(5, num_tasks=3)
    with jax.enable_x64(True):
        block = meta.TaskBlock.from_tasks(own)
        assert block.dtype == jnp.float64
        np.testing.assert_array_equal(block.mask_train.sum(1), [len(t[1]) for t in own])
        for t, (x, y, _, yt) in enumerate(own):
            np.testing.assert_array_equal(block.x_train[t][: len(y)], x)
            np.testing.assert_array_equal(block.y_test[t][block.mask_test[t]], yt)
    assert meta.TaskBlock.from_tasks(own).dtype == jnp.float32  # JAX's default without x64
    x, y, xt, yt = own[0]
    bad = {
        "non-empty list": [],
        r"tasks\[1\] has no online points": [own[0], (x[:0], y[:0], xt, yt)],
        r"tasks\[0\] has no held-out points": [(x, y, xt[:0], yt[:0])],
        r"tasks\[1\]: X must be \(n, 3\)": [own[0], (x[:, :2], y, xt, yt)],
        r"tasks\[0\]: X_test must be \(n, 3\) and its labels": [(x, y, xt, yt[:1])],
        r"tasks\[0\]\.Y must be finite": [(x, y.copy() * np.nan, xt, yt)],
        r"tasks\[0\] must be a tuple \(X, Y, X_test, Y_test\)": [(x, y)],
    }
    for message, tasks in bad.items():
        with pytest.raises(InputError, match=message):
            meta.TaskBlock.from_tasks(tasks)


def test_bad_inputs_raise_before_running():
    tasks = _block(2, dtype=np.float32)
    params = meta.MetaParams.paper(dtype=jnp.float32)
    learner = meta.lazy(D)
    bad_meta = params._replace(meta=params.meta._replace(initial_wealth=jnp.float32(-1.0)))
    with pytest.raises(InputError, match="params.meta: initial_wealth"):
        meta.run_meta(learner, bad_meta, tasks)
    bad_within = params._replace(within=params.within._replace(initial_wealth=jnp.float32(0)))
    with pytest.raises(InputError, match="params.within: initial_wealth"):
        meta.run_meta(learner, bad_within, tasks)
    with pytest.raises(InputError, match="y_train"):
        meta.run_meta(learner, params, tasks._replace(y_train=tasks.y_train.at[2, 1].set(jnp.nan)))
    with pytest.raises(InputError, match="mask_train"):
        meta.run_meta(learner, params, tasks._replace(mask_train=tasks.mask_train[:, :-1]))
    with pytest.raises(InputError, match="x_test"):
        meta.run_meta(learner, params, tasks._replace(x_test=tasks.x_test[..., :-1]))
    with pytest.raises(InputError, match="every point of every task is masked"):
        meta.run_meta(learner, params, tasks._replace(mask_train=tasks.mask_train & False))
    empty = jax.tree.map(lambda a: a[:0], tasks)
    with pytest.raises(InputError, match="tasks is empty"):
        meta.run_meta(learner, params, empty)
    with pytest.raises(InputError, match="params.within: learning_rate"):
        meta.run_meta(meta.lazy_ogd(D), meta.MetaParams.ogd(-0.1, 1.0, dtype=jnp.float32), tasks)
    with pytest.raises(InputError, match="counter"):
        meta.aggressive(D, counter="local")
    with pytest.raises(InputError, match="meta_gradient"):
        meta.lazy(D, meta_gradient="median")
    with pytest.raises(InputError, match="within must be an ojax.core.OCOLearner"):
        meta.aggressive(D, within=optax.adagrad)
    with jax.enable_x64(True), pytest.raises(InputError, match="does not match the tasks"):
        meta.run_meta(learner, meta.MetaParams.paper(dtype=jnp.float32), _block(2))
    # coins outside [-1, 1] would drive the wealth negative: NaN, unless refused up front
    with pytest.raises(InputError, match=r"gradient_scale \* L \* max \|\|x\|\| must be <= 1"):
        meta.run_meta(learner, meta.MetaParams.paper(gradient_scale=3.0, dtype=jnp.float32), tasks)
    fixed = meta.biased_within_task(D)
    with pytest.raises(InputError, match=rf"bias must have shape \({D}\), got shape \(2,\)"):
        meta.run_meta(fixed, meta.FixedBiasParams.paper(jnp.ones(2), dtype=jnp.float32), tasks)
    with pytest.raises(InputError, match="as many tasks"):
        meta.pad_tasks([np.ones((3, 2))], [np.ones(3), np.ones(2)])
    with pytest.raises(InputError, match=r"size must be an integer in \[3, inf\]"):
        meta.pad_tasks([np.ones((3, 2))], [np.ones(3)], size=1)
