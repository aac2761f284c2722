"""The runner's generality costs nothing when unused: with no mask, no record and no kept
predictions, ``ojax.run`` / ``ojax.run_oco`` compile to the loop a hand-written ``lax.scan`` of
the same update compiles to (structural: the ops of the optimized HLO's loops, compared with
the hand-written program compiled in the same test, so no count is hard-coded), and give the
same losses bit for bit. The programs are those of ``scripts/bench_runner.py``."""

from __future__ import annotations

import functools
import importlib.util
import json
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from tolerances import scaled_atol

import ojax
from ojax.app.timing import loop_ops

ROOT = Path(__file__).resolve().parents[1]
ROW_KEYS = {"case", "ojax_seconds", "baseline", "baseline_seconds", "ratio", "ojax_compile_seconds"}


def _bench():
    spec = importlib.util.spec_from_file_location("bench_runner", ROOT / "scripts/bench_runner.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


bench = _bench()
STREAMS, STEPS = 3, 24
REGISTERED = [
    "ogd",
    "coin_betting_kt",
    "linear_pa",
    "kernel_pa",
    "schedule_free_sgd",
    "ftl_quadratic",
]
PEERS = [
    "peers: linear PA-I sparse (a1a-shaped, d = 123)",
    "peers: KT linear predictor (d = 10)",
    "peers: least-squares SGD + Polyak-Ruppert (d = 10)",
]
MULTI_TASK = ["lazy_ogd"]


@functools.cache
def _case(name):
    """The bench's case ``name``, built when a test first asks for it (not at collection, where
    every xdist worker would build every case)."""
    found = bench.registry_cases(STREAMS, STEPS, {name}) + bench.peer_cases(STREAMS, STEPS, {name})
    (case,) = found
    return case


def _compiled(case, program):
    args = (case.params, case.stream)
    compiled = bench.batched(case, program).lower(*args).compile()
    return compiled, loop_ops(compiled.as_text()), compiled(*args)


@pytest.mark.parametrize("name", REGISTERED + PEERS + MULTI_TASK)
def test_runner_loop_is_the_hand_written_loop(name):
    case = _case(name)
    _, ours, (_, our_losses) = _compiled(case, bench.runner_program(case))
    # from the same opaque start (the runner does not let XLA fold a fresh state's counters
    # into the loop index, so that a continued run is the same loop)
    _, theirs, (_, their_losses) = _compiled(case, bench.scan_program(case, opaque=True))
    assert sum(theirs.values()) > 0  # the counter found the loop
    extra = ours - theirs
    # no select of the state, no copy of it, no read of a mask: nothing the scan does not do
    for op in ("select", "copy", "dynamic-slice", "dynamic-update-slice"):
        assert ours[op] <= theirs[op], (name, op, dict(extra))
    assert sum(ours.values()) <= sum(theirs.values()), (name, dict(extra))
    np.testing.assert_array_equal(np.asarray(our_losses), np.asarray(their_losses))


def test_a_mask_costs_its_select_and_changes_nothing_when_all_true():
    """The masked path is still there when asked for (the counter sees it), and an all-True
    mask gives the unmasked run's numbers."""
    case = _case("linear_pa")
    xs, ys, _, _ = case.stream

    def masked(params, stream):
        x, y, _, _ = stream
        mask = jnp.ones(x.shape[:1], bool)
        state, trace = ojax.run(
            case.learner, params, x, y, case.loss, mask=mask, keep_predictions=False
        )
        return state, trace.loss

    _, with_mask, (state_m, losses_m) = _compiled(case, masked)
    _, without, (state_u, losses_u) = _compiled(case, bench.runner_program(case))
    assert with_mask["select"] > without["select"]
    np.testing.assert_array_equal(np.asarray(losses_m), np.asarray(losses_u))
    for a, b in zip(jax.tree.leaves(state_m), jax.tree.leaves(state_u)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_a_known_all_true_mask_steps_without_the_select():
    """A mask known when the run is traced (NumPy inside `jit`, or a concrete array) whose every
    point is real runs the unmasked loop: no more selects than without a mask, the same numbers
    as the traced all-True mask; a known mask with a padded step keeps the select and the
    padding changes nothing."""
    case = _case("linear_pa")

    def with_mask(make):
        def program(params, stream):
            x, y, _, _ = stream
            state, trace = ojax.run(
                case.learner, params, x, y, case.loss, mask=make(x.shape[:1]),
                keep_predictions=False,
            )  # fmt: skip
            return state, trace.loss

        return program

    def padded(shape):
        mask = np.ones(shape, bool)
        mask[shape[0] // 2] = False
        return mask

    _, without, _ = _compiled(case, bench.runner_program(case))
    _, known, (state_k, losses_k) = _compiled(case, with_mask(lambda s: np.ones(s, bool)))
    _, traced, (state_t, losses_t) = _compiled(case, with_mask(lambda s: jnp.ones(s, bool)))
    _, holes, (_, losses_h) = _compiled(case, with_mask(padded))
    assert known["select"] == without["select"] < traced["select"] == holes["select"]
    for a, b in zip(jax.tree.leaves((state_k, losses_k)), jax.tree.leaves((state_t, losses_t))):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    middle = np.asarray(losses_h)[..., STEPS // 2]
    assert np.all(middle == 0.0)  # the padded step pays nothing


def test_unroll_with_a_remainder_unrolls_the_loop_and_keeps_the_numbers():
    """`unroll` (a static keyword of run and run_oco) repeats the step in the loop body and
    keeps the numbers (up to rounding), with a remainder (10 steps, 4 or 3 per iteration)."""
    from ojax import losses, oco

    xs = jax.random.normal(jax.random.key(0), (10, 3))
    ys = xs @ jnp.array([1.0, -2.0, 0.5])
    learner = ojax.linear_predictor(oco.ogd("none"), losses.square, jnp.zeros(3))
    params = oco.OGDParams(jnp.float32(0.1), jnp.float32(1.0))

    def program(unroll):
        def f(xs, ys):
            state, trace = ojax.run(learner, params, xs, ys, losses.square, unroll=unroll)
            return state, trace.loss

        return jax.jit(f)

    counts = {}
    for unroll in (1, 4):
        f = program(unroll)
        counts[unroll] = loop_ops(f.lower(xs, ys).compile().as_text())
    assert sum(counts[4].values()) > sum(counts[1].values())
    one, four = program(1)(xs, ys), program(4)(xs, ys)
    for a, b in zip(jax.tree.leaves(one), jax.tree.leaves(four)):
        np.testing.assert_allclose(b, a, rtol=1e-6, atol=scaled_atol(a, 1e-6))
    ogd = oco.ogd("none")
    runs = [
        ojax.run_oco(ogd, params, jnp.zeros(3), xs, losses.quadratic_objective, unroll=u)
        for u in (1, 3)
    ]
    for a, b in zip(jax.tree.leaves(runs[0]), jax.tree.leaves(runs[1])):
        np.testing.assert_allclose(b, a, rtol=1e-6, atol=scaled_atol(a, 1e-6))
    with pytest.raises(ojax.InputError, match="unroll"):
        ojax.run(learner, params, xs, ys, losses.square, unroll=0)


def test_run_oco_mask_is_the_shorter_run():
    """A masked OCO run stops moving at the first False step: its final state is the run of
    the real steps, bit for bit, and the padded steps pay 0."""
    from ojax import losses, oco

    zs = jax.random.normal(jax.random.key(1), (12, 2))
    learner, params = oco.ogd("l2_ball"), oco.OGDParams(jnp.float32(0.3), jnp.float32(1.0))
    mask = jnp.arange(12) < 7
    x0 = jnp.zeros(2)
    state, trace = ojax.run_oco(learner, params, x0, zs, losses.linear_objective, mask=mask)
    short, short_trace = ojax.run_oco(learner, params, x0, zs[:7], losses.linear_objective)
    for a, b in zip(jax.tree.leaves(state), jax.tree.leaves(short)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    np.testing.assert_array_equal(np.asarray(trace.loss[:7]), np.asarray(short_trace.loss))
    assert np.all(np.asarray(trace.loss[7:]) == 0.0)
    with pytest.raises(ojax.InputError, match="mask"):
        ojax.run_oco(learner, params, x0, zs, losses.linear_objective, mask=mask[:5])


def test_loop_ops_counts_a_select_added_to_a_loop():
    """The profile itself: a select of the carry inside a scan shows up as one more select."""

    def scan(select):
        def step(c, x):
            new = c * 2.0 + x
            return (jnp.where(x > 0, new, c) if select else new), None

        return jax.jit(lambda xs: jax.lax.scan(step, jnp.zeros(4), xs)[0])

    xs = jnp.ones((8, 4))
    plain, selected = (loop_ops(scan(s).lower(xs).compile().as_text()) for s in (False, True))
    assert selected["select"] == plain["select"] + 1
    assert loop_ops("HloModule m\n\nENTRY %main () -> f32[] {\n}\n") == {}


def test_bench_quick_writes_interface_rows_and_the_page(tmp_path, capsys):
    """``scripts/bench_runner.py --quick`` writes INTERFACE.md rows with the structural
    profile, and the benchmarks page generator turns them into the runner table."""
    out = tmp_path / "bench_runner"
    assert bench.main(["--quick", "--only", "ogd,linear_pa,kernel_pa", "--out", str(out)]) == 0
    assert "slowdown" in capsys.readouterr().out
    result = json.loads((out / "bench.json").read_text())
    assert result["benchmark"] == "runner" and result["device"]
    assert [r["case"] for r in result["rows"]] == ["ogd", "linear_pa", "kernel_pa"]
    for row in result["rows"]:
        assert ROW_KEYS <= set(row)
        assert row["ratio"] == pytest.approx(row["baseline_seconds"] / row["ojax_seconds"])
        assert row["extra_loop_ops"] == {} and row["losses_max_rel_diff"] == 0.0
        assert row["loop_ops_ojax"] == row["loop_ops_baseline"] > 0 and row["fori_seconds"] > 0
        # the same streams time-major (an OCO stream, a predictor's, a kernel's pool + orders):
        # the runner's losses those of its streams-major run bit for bit, the hand-written
        # time-major scan's to rounding
        assert row["time_major_same_losses"] and row["time_major_losses_max_rel_diff"] < 1e-5
        assert row["time_major_ojax_seconds"] > 0 and row["time_major_scan_seconds"] > 0
    spec = importlib.util.spec_from_file_location("page", ROOT / "scripts/make_benchmarks_page.py")
    page = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(page)
    docs = tmp_path / "docs"
    assert page.main(["--results", str(tmp_path), "--docs", str(docs)]) == 0
    text = (docs / "benchmarks.md").read_text()
    assert "## `runner`" in text and "| linear_pa | predictor | 10 |" in text
    assert "bit for bit in **3 of 3** rows" in text
    assert list((docs / "benchmarks").glob("runner-*.json"))


def test_unroll_runs_several_steps_per_loop_iteration_with_the_same_losses():
    """`unroll` (static) puts k steps in each iteration of the compiled loop (its body runs
    more ops, k times fewer iterations), computing the same losses up to rounding; a
    non-positive or non-integer unroll is refused, named."""
    case = _case("peers: KT linear predictor (d = 10)")
    xs, ys, _, order = case.stream

    def unrolled(k):
        def one(params, stream):
            x, y, _, o = stream
            state, trace = ojax.run(
                case.learner, params, x, y, case.loss, order=o, keep_predictions=False, unroll=k
            )
            return state, trace.loss

        return one

    _, once, (_, losses_1) = _compiled(case, unrolled(1))
    _, four, (_, losses_4) = _compiled(case, unrolled(4))
    assert sum(four.values()) > sum(once.values())
    np.testing.assert_allclose(losses_4, losses_1, rtol=1e-5, atol=scaled_atol(losses_1, 1e-5))
    for bad in (0, 2.0, True):
        with pytest.raises(ojax.InputError, match="unroll"):
            ojax.run(case.learner, case.params, xs, ys, case.loss, order=order[0], unroll=bad)
