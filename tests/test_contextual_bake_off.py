"""The contextual bake-off's pieces at a small size: the batched progressive validation losses
equal one run per (grid point, order), the Z-test's wins, and the registration."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ojax.contextual import ContextualData, run_contextual
from ojax.datasets import bandit_problem, load_classes
from ojax.experiments import EXPERIMENTS
from ojax.experiments import contextual_bake_off as bake


def test_batched_losses_equal_one_run_per_grid_point_and_order():
    x, y, k = load_classes("usenet2")
    data = bandit_problem(x[:40, :6], y[:40], num_classes=k)
    orders = jnp.asarray(np.stack([np.arange(40), np.arange(40)[::-1]]), jnp.int32)
    learner = bake.LEARNERS["SquareCB"]
    got = bake.pv_losses(learner, data, orders)
    model = learner.make(7, k, jnp.float32)
    keys = jax.random.split(jax.random.key(0), 2)
    for g in range(3):
        params = jax.tree.map(lambda a, g=g: a[g], learner.grid)
        for s in range(2):
            cb = ContextualData(data.contexts, data.costs, orders[s])
            want = float(jnp.mean(run_contextual(model, params, cb, keys[s])[1].loss))
            np.testing.assert_allclose(got[g, s], want, rtol=1e-6)
    assert got.shape == (3, 2) and len(np.unique(got)) > 1


def test_under_float64_every_learner_computes_in_float64(x64):
    data = bake._problem("usenet2", 30, None)  # the run's data: float64 under `--x64`
    assert data.contexts.dtype == jnp.float64 and data.costs.dtype == jnp.float64
    for learner in bake.LEARNERS.values():
        assert bake.pv_losses(learner, data, jnp.arange(30)[None]).dtype == np.float64


def test_z_wins():
    wins = bake.z_wins({"a": 0.10, "b": 0.50, "c": 0.11}, 1000)
    assert wins == {"a": 1, "b": 0, "c": 1}  # a, c beat b; 0.10 vs 0.11 is not significant
    assert bake.z_wins({"a": 0.10, "b": 0.50}, 4) == {"a": 0, "b": 0}  # too few rounds


def test_the_bake_off_is_registered_with_its_figure():
    spec = EXPERIMENTS["contextual-bake-off"]
    assert spec.plot is bake.figures and spec.seeds(quick=True) < spec.seeds(quick=False) == 30
    assert set(bake.LEARNERS) == {"greedy", "epsilon-greedy", "SquareCB", "LinUCB",
                                  "linear-TS", "EXP4"}  # fmt: skip


def test_ojax_sweep_names_the_way_to_run_a_contextual_learner(tmp_path, capsys):
    from ojax.app import cli

    assert cli.main(["sweep", "linucb", "--out", str(tmp_path / "x"), "--steps", "50"]) != 0
    assert "is a contextual bandit, played by ojax.contextual.run_contextual" in (
        capsys.readouterr().err
    )
