"""The common checks of a learner: what every registered learner passes, for one's own too.

:func:`check_learner` runs them on a :class:`~ojax.core.LearnerEntry` (registered or not) on
its own stream; `tests/test_learners_common.py` runs them for every entry of
:data:`ojax.LEARNERS`. Each check raises `AssertionError` naming the learner and the check:

* `float32` / `float64`: jitted runs with finite losses of the run's dtype, and a state
  whose floating leaves keep that dtype (float32 also with float64 enabled: nothing widens);
* `by_value`: two learners built by `make` are equal and hash-equal, and running the second
  traces nothing (its factory is a :func:`~ojax.learner_factory`);
* `no_retrace`: other hyperparameter values and other data of the same shape trace nothing;
* `vmap_equals_loop`: a vmap over `params_grid` equals a Python loop over it, and distinct
  grid points give distinct runs (a value closed over would not);
* `bad_params`: params of the wrong structure, or NaN in every floating hyperparameter, are
  refused with :class:`~ojax.validation.InputError` before anything runs;
* `padding`: a masked (padded) step between every two real steps changes nothing: the same
  losses at the real steps, 0 at the padded ones, the same final state (not for a contextual
  bandit: the game draws each round's arm from that round's key);
* `continuation`: the stream run in two halves, the second from the first's final state
  (`run(..., state=...)`; task blocks cut at a task boundary, a pool's visit order cut), equals
  the whole run bit for bit: losses and final state (not for a contextual bandit: a game starts
  from the learner's init).

Examples:
  >>> from ojax import LEARNERS
  >>> from ojax.testing import check_learner
  >>> check_learner(LEARNERS["ogd"], checks=["float32", "padding"])
  ('float32', 'padding')
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ojax.contextual.supervised import contextual_data, run_contextual
from ojax.core import LearnerEntry, cast_floats
from ojax.losses import LOSSES, OBJECTIVES
from ojax.runner import entry_start, run, run_entry, run_oco
from ojax.validation import DivergedError, InputError

NUM_STEPS, DIM = 40, 5
"""The stream's length and dimension of the checks."""

_TRACES = [0]  # traces seen since import (jax.monitoring)


def _on_duration(event: str, duration_secs: float, **kwargs: str | int) -> None:
    if event == "/jax/core/compile/jaxpr_trace_duration":
        _TRACES[0] += 1


jax.monitoring.register_event_duration_secs_listener(_on_duration)


class _Skip(Exception):
    """The check does not apply to this learner (e.g. no hyperparameters)."""


def _make(entry: LearnerEntry, dtype: Any = jnp.float32) -> Any:
    return entry.build(DIM, dtype)


def _pick(grid: Any, i: int) -> Any:
    return jax.tree.map(lambda leaf: leaf[i], grid)


def _data(entry: LearnerEntry, seed: int) -> tuple:
    return tuple(entry.make_stream(jax.random.key(seed), NUM_STEPS, DIM))


def _run(
    entry: LearnerEntry,
    learner: Any,
    params: Any,
    data: tuple,
    mask: Any = None,
    state: Any = None,
    first_task: int = 0,
):
    """`(final state, trace)` of the entry's run (from `state`, its first task `first_task`);
    with `mask` the stream's steps (the order of a pool, the points of task blocks) are masked
    by it. Without `mask` or `state` it is the program of :func:`ojax.runner.run_entry`: the
    checks share one compilation per dtype."""
    xs, ys, *extra = data
    if entry.kind == "contextual":  # contexts and the costs of the arms, bandit feedback
        cb = contextual_data(xs, ys)
        return run_contextual(learner, params, cb, jax.random.key(0), mask=mask)
    if entry.kind == "oco":
        start, objective = entry_start(entry, xs), OBJECTIVES[entry.objective]
        return run_oco(learner, params, start, xs, objective, mask=mask, state=state)
    options = dict(zip(("mask", "order", "task_data"), extra))
    if mask is not None:
        options["mask"] = mask
    if entry.kind == "multi_task":
        options["first_task"] = first_task
    loss = LOSSES[entry.objective]
    return run(learner, params, xs, ys, loss, state=state, **options)


def _run_entry(entry: LearnerEntry, learner: Any, params: Any, data: tuple) -> Any:
    """:func:`ojax.runner.run_entry`, a contextual bandit played by its game."""
    if entry.kind == "contextual":
        return _run(entry, learner, params, data)[1]
    return run_entry(entry, learner, params, data)


def _floats(tree: Any) -> set[str]:
    leaves = jax.tree.leaves(tree)
    return {str(a.dtype) for a in leaves if jnp.issubdtype(jnp.result_type(a), jnp.floating)}


def _dtype_run(entry: LearnerEntry, dtype: Any, x64: bool) -> None:
    with jax.enable_x64(x64):
        learner = _make(entry, dtype)
        data = cast_floats(_data(entry, 0), dtype)
        params = cast_floats(entry.default_params(), dtype)
        state, trace = _run(entry, learner, params, data)
        losses = np.asarray(trace.loss)
        name = np.dtype(dtype).name
        assert losses.size > 0 and np.all(np.isfinite(losses)), "losses not finite"
        assert losses.dtype == np.dtype(dtype) or entry.objective == "mismatch", (
            f"losses of dtype {losses.dtype} in a {name} run"
        )
        assert _floats(state) <= {name}, f"the state's floats {_floats(state)} in a {name} run"


def _float32(entry: LearnerEntry) -> None:
    _dtype_run(entry, jnp.float32, False)
    _dtype_run(entry, jnp.float32, True)  # float64 enabled: a float32 learner stays float32


def _float64(entry: LearnerEntry) -> None:
    _dtype_run(entry, jnp.float64, True)


def _by_value(entry: LearnerEntry) -> None:
    learner, again = _make(entry), _make(entry)
    assert learner == again and hash(learner) == hash(again), (
        "two learners built by make are not equal: decorate the factory with "
        "ojax.learner_factory (else each build compiles again)"
    )
    data, params = _data(entry, 0), entry.default_params()
    _run_entry(entry, learner, params, data)
    before = _TRACES[0]
    _run_entry(entry, again, params, data)
    assert _TRACES[0] == before, f"the second learner traced {_TRACES[0] - before} times more"


def _no_retrace(entry: LearnerEntry) -> None:
    learner, grid = _make(entry), entry.params_grid()
    leaves = jax.tree.leaves(grid)
    calls = [
        (_pick(grid, i % 2) if leaves else grid, _data(entry, seed))
        for i, seed in enumerate((1, 2, 3))
    ]
    traces = []
    for params, data in calls:
        _run_entry(entry, learner, params, data)
        traces.append(_TRACES[0])
    # the first call traces (or runs the program the float32 check traced); other values of
    # params and data trace nothing more
    assert traces[1] == traces[0] and traces[2] == traces[0], (
        f"traces after each call: {[t - traces[0] for t in traces]}"
    )


def _vmap_equals_loop(entry: LearnerEntry) -> None:
    grid = entry.params_grid()
    if not jax.tree.leaves(grid):
        raise _Skip("no hyperparameters")
    sizes = {leaf.shape[0] for leaf in jax.tree.leaves(grid)}
    assert len(sizes) == 1 and min(sizes) >= 2, f"params_grid needs one leading axis >= 2: {sizes}"
    learner, data = _make(entry), _data(entry, 7)
    batched = np.asarray(jax.vmap(lambda p: _run_entry(entry, learner, p, data).loss)(grid))[:2]
    looped = np.stack([_run_entry(entry, learner, _pick(grid, i), data).loss for i in range(2)])
    scale = float(np.max(np.abs(looped))) or 1.0
    np.testing.assert_allclose(batched, looped, rtol=1e-5, atol=1e-6 * scale)
    assert not np.allclose(batched[0], batched[1]), "distinct grid points gave the same run"


def _bad_params(entry: LearnerEntry) -> None:
    params = entry.default_params()
    leaves, treedef = jax.tree.flatten(params)
    floats = [jnp.issubdtype(jnp.result_type(a), jnp.floating) for a in leaves]
    if not any(floats):
        raise _Skip("no floating hyperparameters")
    learner, data = _make(entry), _data(entry, 0)
    nan = jax.tree.unflatten(
        treedef, [jnp.full_like(a, jnp.nan) if f else a for a, f in zip(leaves, floats)]
    )
    for label, bad in (("NaN hyperparameters", nan), ("a plain tuple", tuple(leaves))):
        try:
            _run_entry(entry, learner, bad, data)
        except DivergedError:  # refused after the run, by its final state: not before it
            pass
        except InputError:
            continue
        raise AssertionError(f"params given as {label} were not refused with an InputError")


def _interleave(tree: Any, axis: int) -> Any:
    """Every step along `axis` followed by a copy of it (the padded step)."""
    return jax.tree.map(lambda a: jnp.repeat(a, 2, axis=axis), tree)


def _padding(entry: LearnerEntry) -> None:
    if entry.kind == "contextual":  # the game draws its arms from one key per round
        raise _Skip("a padded game has other rounds, so other draws of the arms")
    learner, params, data = _make(entry), entry.default_params(), _data(entry, 5)
    xs, ys, *extra = data
    real = extra[0] if extra and extra[0] is not None else None
    if entry.kind == "multi_task":  # task blocks: pad along the points of each task
        step = jnp.ones(xs.shape[:2], bool) if real is None else real
        padded = (_interleave(xs, 1), _interleave(ys, 1), *extra[1:])
        mask = jnp.stack([step, jnp.zeros_like(step)], axis=2).reshape(step.shape[0], -1)
        picks: Any = (slice(None), slice(0, None, 2))
    else:
        order = extra[1] if len(extra) > 1 and extra[1] is not None else None
        if order is not None:  # a pool: pad the order
            padded = (xs, ys, None, _interleave(order, 0), *extra[2:])
            steps = order.shape[0]
        else:
            padded = (_interleave(xs, 0), _interleave(ys, 0), *extra)
            steps = jax.tree.leaves(xs)[0].shape[0]
        step = jnp.ones((steps,), bool) if real is None else real
        mask = jnp.stack([step, jnp.zeros_like(step)], axis=1).reshape(-1)
        picks = slice(0, None, 2)
    state, trace = _run(entry, learner, params, data)
    padded_state, padded_trace = _run(entry, learner, params, padded, mask)
    _close("losses at the real steps", padded_trace.loss[picks], trace.loss)
    odd = (slice(None), slice(1, None, 2)) if entry.kind == "multi_task" else slice(1, None, 2)
    assert not np.any(np.asarray(padded_trace.loss[odd])), "a padded step has a loss"
    for i, (a, b) in enumerate(zip(jax.tree.leaves(padded_state), jax.tree.leaves(state))):
        _close(f"final state (leaf {i})", a, b)


def _continuation(entry: LearnerEntry) -> None:
    if entry.kind == "contextual":  # ojax.run_env plays a game from the learner's init only
        raise _Skip("a game has no start state (its environment and keys would continue too)")
    learner, params, data = _make(entry), entry.default_params(), _data(entry, 0)
    state, trace = _run(entry, learner, params, data)
    xs, ys, *extra = data
    if entry.kind == "kernel":  # the pool stays whole; its visit order (and mask) is cut
        h = extra[1].shape[0] // 2
        halves = [
            (xs, ys, *jax.tree.map(lambda a, cut=cut: a[cut], extra))
            for cut in (slice(0, h), slice(h, None))
        ]
    else:  # a stream, or task blocks cut at a task boundary
        h = jax.tree.leaves(xs)[0].shape[0] // 2
        halves = [
            jax.tree.map(lambda a, cut=cut: a[cut], data) for cut in (slice(0, h), slice(h, None))
        ]
    # the first half from the learner's own start state: both halves are one program
    x0 = (entry_start(entry, xs),) if entry.kind == "oco" else ()
    first_state, first = _run(entry, learner, params, halves[0], state=learner.init(params, *x0))
    final, second = _run(entry, learner, params, halves[1], state=first_state, first_task=h)
    losses = np.concatenate([np.asarray(first.loss), np.asarray(second.loss)])
    np.testing.assert_array_equal(losses, np.asarray(trace.loss), err_msg="losses of the halves")
    for i, (a, b) in enumerate(zip(jax.tree.leaves(final), jax.tree.leaves(state))):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b), err_msg=f"final leaf {i}")


def _close(label: str, actual: Any, expected: Any) -> None:
    actual, expected = np.asarray(actual), np.asarray(expected)
    if not np.issubdtype(expected.dtype, np.floating):
        np.testing.assert_array_equal(actual, expected, err_msg=label)
        return
    finite = np.abs(expected[np.isfinite(expected)])  # an inf (log 0) must match exactly
    scale = float(np.max(finite, initial=0.0)) or 1.0
    np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-6 * scale, err_msg=label)


CHECKS: dict[str, Callable[[LearnerEntry], None]] = {
    "float32": _float32,
    "float64": _float64,
    "by_value": _by_value,
    "no_retrace": _no_retrace,
    "vmap_equals_loop": _vmap_equals_loop,
    "bad_params": _bad_params,
    "padding": _padding,
    "continuation": _continuation,
}
"""The checks of :func:`check_learner` by name (see the module docstring)."""


def check_learner(entry: LearnerEntry, *, checks: Sequence[str] | None = None) -> tuple[str, ...]:
    """Runs the common checks on `entry` (all of :data:`CHECKS`, or those named).

    Args:
      entry: a :class:`~ojax.core.LearnerEntry`, registered or not (its `stream` a name in
        :data:`ojax.envs.STREAMS` or a function of one's own).
      checks: names among :data:`CHECKS` (default: every one).

    Returns:
      The names of the checks that ran (a check that does not apply, such as the vmap over a
      grid of a learner with no hyperparameters, is left out).

    Raises:
      AssertionError: naming the learner and the check that failed.
      ValueError: an unknown check.
    """
    names = list(CHECKS) if checks is None else list(checks)
    unknown = [n for n in names if n not in CHECKS]
    if unknown:
        raise ValueError(f"checks must be some of {list(CHECKS)}, got {unknown}")
    ran = []
    for name in names:
        try:
            CHECKS[name](entry)
        except _Skip:
            continue
        except AssertionError as exc:
            raise AssertionError(f"{entry.name}: {name}: {exc}") from exc
        ran.append(name)
    return tuple(ran)


__all__ = ["CHECKS", "DIM", "NUM_STEPS", "check_learner"]
