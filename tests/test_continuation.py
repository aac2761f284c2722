"""Runs that continue: T steps equal T/2 steps, a save, a load in a NEW process and T/2 more.

For learners of every kind (OCO, parameter-free, optax, averaged SGD, kernel and transfer
learners over a pool, a multi-task learner), in float32 and in float64: the parent runs the
whole stream and its first half, saves the state (:func:`ojax.save_state`); a child process
(``python tests/test_continuation.py second DIR``) rebuilds the learner and the data from the
same key, loads the state (:func:`ojax.load_state`, refusing another learner), runs the second
half and saves its final state and losses; the parent compares them with the whole run, bit for
bit. Also: the record hooks see the state's counters continue, ``first_task`` continues the
task index, a start state of another learner is refused before anything runs.
"""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import ojax
from ojax import losses, oco
from ojax.core import cast_floats
from ojax.losses import LOSSES, OBJECTIVES
from ojax.runner import entry_start

ROOT = Path(__file__).resolve().parents[1]
LEARNERS = [
    "ogd",  # OCO
    "online_newton",  # OCO, a matrix in the state
    "coin_betting_kt",  # parameter-free
    "mechanic",  # parameter-free over a nested learner
    "schedule_free_sgd",  # a step count in the arithmetic: 1 / (t + 1), from a counter
    "optax_cocob",  # optax's own state classes
    "least_squares_sgd_geometric",  # SGD with a geometric average in the state
    "halving",  # integer state
    "kernel_pa",  # a kernel learner over a pool and an order (support-vector buffer)
    "otl",  # transfer
    "lazy_ogd",  # multi-task, continued at a task boundary
]
STEPS, DIM = 64, 3


def _setup(name: str):
    entry = ojax.LEARNERS[name]
    learner = entry.build(DIM)  # float64 state under x64
    # a stream drawn in float32 (task blocks) is widened exactly under x64
    data = cast_floats(entry.make_stream(jax.random.key(7), STEPS, DIM))
    return entry, learner, entry.default_params(), data


def _run(name: str, part: str | None, state=None):
    """Runs ``name`` over all of its stream (``part`` None) or its ``"first"`` / ``"second"``
    half, from ``state``."""
    entry, learner, params, data = _setup(name)
    xs, ys, *extra = data
    if entry.kind == "oco":
        zs = xs
        h = zs.shape[0] // 2
        zs = {None: zs, "first": zs[:h], "second": zs[h:]}[part]
        x0 = entry_start(entry, xs)
        obj = OBJECTIVES[entry.objective]
        return learner, ojax.run_oco(learner, params, x0, zs, obj, state=state)
    kw = dict(zip(("mask", "order", "task_data"), extra))
    kw = {k: v for k, v in kw.items() if v is not None}
    if entry.kind == "kernel":  # the pool stays whole; the visit order is split
        h = kw["order"].shape[0] // 2
        cut = {None: slice(None), "first": slice(0, h), "second": slice(h, None)}[part]
        kw = {k: v[cut] for k, v in kw.items()}
    else:  # a stream, or task blocks (cut at a task boundary)
        h = xs.shape[0] // 2
        cut = {None: slice(None), "first": slice(0, h), "second": slice(h, None)}[part]
        xs, ys = xs[cut], ys[cut]
        kw = {k: jax.tree.map(lambda a: a[cut], v) for k, v in kw.items()}
        if entry.kind == "multi_task" and part == "second":
            kw["first_task"] = h
    return learner, ojax.run(learner, params, xs, ys, LOSSES[entry.objective], state=state, **kw)


def _whole_and_first(name: str, x64: bool):
    """``(learner, whole run, first half)`` of ``name``."""
    with jax.enable_x64(x64):
        learner, whole = _run(name, None)
        return learner, whole, _run(name, "first")[1]


@pytest.fixture(scope="module")
def halves():
    """:func:`_whole_and_first`, each computed once (the test continuing in a new process and
    the one continuing in this process share them; one worker runs both)."""
    return functools.cache(_whole_and_first)


def _leaves(tree) -> list[np.ndarray]:
    return [np.asarray(a) for a in jax.tree.leaves(tree)]


def second_half(folder: Path) -> None:
    """The child process: load each first half's state, run the second half, save it."""
    for name in LEARNERS:
        learner = _setup(name)[1]  # the learner only (equal by value to the parent's)
        like = jax.eval_shape(lambda name=name: _run(name, "first")[1][0])  # shapes, no run
        state = ojax.load_state(folder / f"{name}.first", like=like, learner=learner)
        _, (final, trace) = _run(name, "second", state)
        ojax.save_state(folder / f"{name}.final", final, learner=learner)
        np.save(folder / f"{name}.losses.npy", np.asarray(trace.loss))


# before the new process: it compiles the float32 second halves the child then reads from
# the session's compilation cache
def test_in_process_halves_equal_the_whole_run_for_every_kind(halves):
    for name in LEARNERS:
        _, (state, trace), (mid, first) = halves(name, False)
        _, (final, second) = _run(name, "second", mid)
        for got, want in zip(_leaves(final), _leaves(state)):
            assert np.array_equal(got, want), name
        np.testing.assert_array_equal(np.concatenate([first.loss, second.loss]), trace.loss)


@pytest.mark.slow
@pytest.mark.parametrize("x64", [False, True], ids=["float32", "float64"])
def test_half_saved_loaded_in_a_new_process_and_continued_equals_the_whole_run(
    tmp_path, x64, halves
):
    with jax.enable_x64(x64):
        whole, firsts = {}, {}
        for name in LEARNERS:
            learner, whole[name], firsts[name] = halves(name, x64)
            ojax.save_state(tmp_path / f"{name}.first", firsts[name][0], learner=learner)
    from conftest import subprocess_env  # here: the child process imports this module

    env = subprocess_env(PYTHONPATH=str(ROOT), JAX_ENABLE_X64=str(x64), JAX_PLATFORMS="cpu")
    done = subprocess.run(
        [sys.executable, str(Path(__file__)), "second", str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    with jax.enable_x64(x64):
        for name in LEARNERS:
            state, trace = whole[name]
            final = ojax.load_state(tmp_path / f"{name}.final", like=state)
            for got, want in zip(_leaves(final), _leaves(state)):
                assert got.dtype == want.dtype and np.array_equal(got, want), name
            losses_ = np.concatenate(
                [np.asarray(firsts[name][1].loss), np.load(tmp_path / f"{name}.losses.npy")]
            )
            np.testing.assert_array_equal(losses_, np.asarray(trace.loss), err_msg=name)
            assert losses_.dtype == np.asarray(trace.loss).dtype


def test_record_hooks_see_the_counters_of_the_state_continue():
    learner = ojax.linear_predictor(oco.ogd("none"), losses.square, jnp.zeros(2))
    params = oco.OGDParams(jnp.float32(0.1), jnp.float32(1.0))
    xs = jax.random.normal(jax.random.key(0), (10, 2))
    ys = xs @ jnp.array([1.0, -1.0])

    def record(step):
        return step.state.learner.count  # the step index t, kept in the state

    _, whole = ojax.run(learner, params, xs, ys, losses.square, record=record)
    mid, first = ojax.run(learner, params, xs[:4], ys[:4], losses.square, record=record)
    _, second = ojax.run(learner, params, xs[4:], ys[4:], losses.square, record=record, state=mid)
    np.testing.assert_array_equal(np.concatenate([first.record, second.record]), np.arange(10))
    np.testing.assert_array_equal(whole.record, np.arange(10))


def test_first_task_continues_the_task_index():
    entry = ojax.LEARNERS["lazy_ogd"]
    learner, params = entry.make(DIM), entry.default_params()
    xs, ys, mask, *_ = entry.make_stream(jax.random.key(1), 40, DIM)

    def task_record(state, params, info):
        return info.index

    _, trace = ojax.run(
        learner, params, xs[2:], ys[2:], losses.absolute, mask=mask[2:], first_task=2,
        task_record=task_record,
    )  # fmt: skip
    np.testing.assert_array_equal(trace.task, np.arange(2, xs.shape[0]))
    with pytest.raises(ojax.InputError, match="first_task must"):
        ojax.run(learner, params, xs, ys, losses.absolute, mask=mask, first_task=-1)


def test_a_start_state_of_another_learner_is_refused_before_anything_runs():
    learner = ojax.linear_predictor(oco.ogd("none"), losses.square, jnp.zeros(2))
    params = oco.OGDParams(jnp.float32(0.1), jnp.float32(1.0))
    other = oco.ftrl().init(oco.FTRLParams.default(), jnp.zeros(2))
    xs, ys = jnp.ones((3, 2)), jnp.ones(3)
    with pytest.raises(ojax.InputError, match="not a state of this learner"):
        ojax.run(learner, params, xs, ys, losses.square, state=other)
    wide = learner.init(params)._replace(learner=oco.OGDState(jnp.zeros(3), jnp.int32(0)))
    with pytest.raises(ojax.InputError, match=r"expected \(2,\) float32"):
        ojax.run(learner, params, xs, ys, losses.square, state=wide)
    with pytest.raises(ojax.InputError, match="not a state of this learner"):
        ojax.run_oco(oco.ogd(), oco.OGDParams.default(), jnp.zeros(2), xs, losses.linear_objective,
                     state=(other,))  # fmt: skip


if __name__ == "__main__" and sys.argv[1:2] == ["second"]:
    from ojax.programs.cache import enable_compilation_cache

    enable_compilation_cache()  # the test session's (its $OJAX_COMPILATION_CACHE)
    jax.config.update("jax_numpy_rank_promotion", "raise")
    jax.config.update("jax_numpy_dtype_promotion", "strict")
    second_half(Path(sys.argv[2]))
    print(json.dumps({"ok": True}))
