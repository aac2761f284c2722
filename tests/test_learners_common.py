"""One test over every registered learner: jit + scan run, finite losses, no retrace on a second
call with other hyperparameters and other data of the same shape, vmap over a params grid equals
a Python loop over the same grid."""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import ojax
from ojax import losses
from ojax.run import _run, _run_oco, _run_tasks  # noqa: F401  (jitted cores, for trace counts)

NUM_STEPS, DIM = 40, 5


def _play(entry, learner, params, xs, ys):
    if entry.kind == "oco":
        x0 = jnp.zeros(xs.shape[1:], xs.dtype)
        if entry.name == "hedge":
            x0 = jnp.full(xs.shape[1:], 1.0 / xs.shape[1], xs.dtype)
        return ojax.run_oco(learner, params, x0, xs, losses.OBJECTIVES[entry.objective])
    return ojax.run(learner, params, xs, ys, losses.LOSSES[entry.objective])


def _pick(grid, i):
    return jax.tree.map(lambda leaf: leaf[i], grid)


@pytest.fixture(params=sorted(ojax.LEARNERS), ids=str)
def entry(request):
    return ojax.LEARNERS[request.param]


def test_runs_jitted_and_finite(entry):
    learner = entry.make(DIM)
    xs, ys = entry.make_stream(jax.random.key(0), NUM_STEPS, DIM)
    state, trace = _play(entry, learner, entry.default_params(), xs, ys)
    assert trace.loss.shape == (NUM_STEPS,)
    assert np.all(np.isfinite(np.asarray(trace.loss)))
    for leaf in jax.tree.leaves(state):
        if jnp.issubdtype(leaf.dtype, jnp.floating):
            assert np.all(np.isfinite(np.asarray(leaf)))


def test_no_retrace_on_new_values(entry):
    learner = entry.make(DIM)
    grid = entry.params_grid()
    leaves = jax.tree.leaves(grid)
    cache = _run_oco if entry.kind == "oco" else _run
    before = cache._cache_size()
    for i, seed in enumerate((1, 2, 3)):
        xs, ys = entry.make_stream(jax.random.key(seed), NUM_STEPS, DIM)
        params = _pick(grid, i % 2) if leaves else grid
        _play(entry, learner, params, xs, ys)
    # One compilation for this learner whatever the values of params and data.
    assert cache._cache_size() - before == 1


def test_vmap_over_params_equals_loop(entry):
    grid = entry.params_grid()
    if not jax.tree.leaves(grid):
        pytest.skip(f"{entry.name} has no hyperparameters")
    sizes = {leaf.shape[0] for leaf in jax.tree.leaves(grid)}
    assert len(sizes) == 1 and sizes.pop() >= 2
    learner = entry.make(DIM)
    xs, ys = entry.make_stream(jax.random.key(7), NUM_STEPS, DIM)
    batched = jax.vmap(lambda p: _play(entry, learner, p, xs, ys)[1].loss)(grid)
    size = jax.tree.leaves(grid)[0].shape[0]
    looped = jnp.stack([_play(entry, learner, _pick(grid, i), xs, ys)[1].loss for i in range(size)])
    chex.assert_trees_all_close(batched, looped, rtol=1e-5, atol=1e-6)
    # The grid's distinct values give distinct runs (the test would not see a closed-over value).
    assert not np.allclose(np.asarray(batched[0]), np.asarray(batched[1]))
