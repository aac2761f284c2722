"""One test over every registered learner, of every kind (OCO, predictor, multi-task, kernel):
jit + scan run with finite losses in float32 and float64, no retrace on a second call with other
hyperparameters and other data of the same shape, vmap over a params grid equals a Python loop
over the same grid (and distinct grid values give distinct runs)."""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import ojax

NUM_STEPS, DIM = 40, 5


def _make(entry, dtype=jnp.float32):
    return entry.make(DIM, dtype=dtype) if entry.dtyped else entry.make(DIM)


def _cast(tree, dtype):
    """Floating leaves of ``tree`` cast to ``dtype`` (data and params of a float64 run)."""

    def cast(leaf):
        leaf = jnp.asarray(leaf)
        return leaf.astype(dtype) if jnp.issubdtype(leaf.dtype, jnp.floating) else leaf

    return jax.tree.map(cast, tree)


def _pick(grid, i):
    return jax.tree.map(lambda leaf: leaf[i], grid)


def _counting(entry, learner):
    """The learner with its ``update`` wrapped in a trace counter."""
    count = [0]

    def update(*args):
        count[0] += 1
        return learner.update(*args)

    return learner._replace(update=update), count


@pytest.fixture(params=sorted(ojax.LEARNERS), ids=str)
def entry(request):
    return ojax.LEARNERS[request.param]


def test_every_kind_is_registered():
    kinds = {entry.kind for entry in ojax.LEARNERS.values()}
    assert kinds <= set(ojax.LEARNER_KINDS)
    assert {"oco", "predictor"} <= kinds


@pytest.mark.parametrize("x64_run", [False, True], ids=["float32", "float64"])
def test_runs_jitted_and_finite(entry, x64_run):
    dtype = jnp.float64 if x64_run else jnp.float32
    with jax.enable_x64(x64_run):
        learner = _make(entry, dtype)
        data = _cast(entry.make_stream(jax.random.key(0), NUM_STEPS, DIM), dtype)
        params = _cast(entry.default_params(), dtype)
        trace = ojax.run_entry(entry, learner, params, data)
        losses = np.asarray(trace.loss)
        assert losses.dtype == np.dtype(dtype) or entry.objective == "mismatch"
        assert losses.size > 0 and np.all(np.isfinite(losses))


def test_no_retrace_on_new_values(entry):
    learner, count = _counting(entry, _make(entry))
    grid = entry.params_grid()
    leaves = jax.tree.leaves(grid)
    traces = []
    for i, seed in enumerate((1, 2, 3)):
        data = entry.make_stream(jax.random.key(seed), NUM_STEPS, DIM)
        params = _pick(grid, i % 2) if leaves else grid
        ojax.run_entry(entry, learner, params, data)
        traces.append(count[0])
    # Traced on the first call; other values of params and data trace nothing more.
    assert traces[0] >= 1 and traces[1] == traces[0] and traces[2] == traces[0]


def test_vmap_over_params_equals_loop(entry):
    grid = entry.params_grid()
    if not jax.tree.leaves(grid):
        pytest.skip(f"{entry.name} has no hyperparameters")
    sizes = {leaf.shape[0] for leaf in jax.tree.leaves(grid)}
    assert len(sizes) == 1 and sizes.pop() >= 2
    learner = _make(entry)
    data = entry.make_stream(jax.random.key(7), NUM_STEPS, DIM)
    batched = jax.vmap(lambda p: ojax.run_entry(entry, learner, p, data).loss)(grid)
    size = jax.tree.leaves(grid)[0].shape[0]
    looped = jnp.stack(
        [ojax.run_entry(entry, learner, _pick(grid, i), data).loss for i in range(size)]
    )
    chex.assert_trees_all_close(batched, looped, rtol=1e-5, atol=1e-6)
    # The grid's distinct values give distinct runs (the test would not see a closed-over value).
    assert not np.allclose(np.asarray(batched[0]), np.asarray(batched[1]))
