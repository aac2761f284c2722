"""The Denevi et al. (2020) environment, loaders and experiments (quick configurations)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ojax import InputError, envs, meta
from ojax.app import files as figures
from ojax.datasets import DataError, load_lenk, load_schools, split_tasks
from ojax.experiments import EXPERIMENTS
from ojax.experiments import denevi2020 as den
from ojax.experiments.denevi2020 import DeneviConfig as ExperimentConfig


def test_environment_has_unit_rows_and_snr_one(x64):
    tasks, w = envs.low_variance_tasks(jax.random.key(0), num_tasks=8, dtype=jnp.float64)
    x = np.concatenate([np.asarray(tasks.x_train), np.asarray(tasks.x_test)], axis=1)
    y = np.concatenate([np.asarray(tasks.y_train), np.asarray(tasks.y_test)], axis=1)
    np.testing.assert_allclose(np.linalg.norm(x, axis=2), 1.0, atol=1e-12)
    clean = np.einsum("tnd,td->tn", x, np.asarray(w))
    snr = clean.var(axis=1) / (y - clean).var(axis=1)
    np.testing.assert_allclose(snr, 1.0, atol=1e-10)
    # The task vectors scatter around 4 * 1 with unit spread.
    assert abs(float(np.mean(w)) - 4.0) < 1.0 and 0.3 < float(np.std(w)) < 2.0


def test_environment_is_seeded_and_tasks_differ():
    a, wa = envs.low_variance_tasks(jax.random.key(3), num_tasks=4)
    b, wb = envs.low_variance_tasks(jax.random.key(3), num_tasks=4)
    c, wc = envs.low_variance_tasks(jax.random.key(3), num_tasks=2, first_task=4)
    np.testing.assert_array_equal(np.asarray(a.x_train), np.asarray(b.x_train))
    assert not np.allclose(np.asarray(wa[:2]), np.asarray(wc))  # later tasks are new tasks
    d, _ = envs.low_variance_tasks(jax.random.key(4), num_tasks=4)
    assert not np.allclose(np.asarray(a.y_train), np.asarray(d.y_train))
    # Task t is the same whether drawn alone or in a batch (fold_in of its index).
    e, we = envs.low_variance_tasks(jax.random.key(3), num_tasks=2, first_task=2)
    np.testing.assert_allclose(np.asarray(we), np.asarray(wa[2:]), rtol=1e-6)


def test_environment_bad_input():
    with pytest.raises(InputError, match="num_train"):
        envs.low_variance_tasks(jax.random.key(0), num_tasks=2, num_points=10, num_train=10)
    with pytest.raises(InputError, match="task_spread"):
        envs.low_variance_tasks(
            jax.random.key(0),
            envs.LowVarianceParams(jnp.asarray(4.0), jnp.asarray(-1.0)),
            num_tasks=2,
        )


def test_schools_loader(data_dir):
    data = load_schools(data_dir)
    sizes = data.mask.sum(axis=1)
    assert data.x.shape[0] == 139 and sizes.min() == 22 and sizes.max() == 251
    assert sizes.sum() == 15362
    norms = np.linalg.norm(data.x, axis=2)
    np.testing.assert_allclose(norms[data.mask], 1.0, rtol=1e-5)
    assert np.all(norms[~data.mask] == 0)
    np.testing.assert_array_equal(data.num_test, np.ceil(0.25 * sizes).astype(int))
    assert data.y[data.mask].min() >= 1 and data.y[data.mask].max() <= 70


def test_lenk_loader(data_dir):
    data = load_lenk(data_dir)
    assert data.x.shape == (180, 20, 14) and np.all(data.num_test == 4)
    np.testing.assert_allclose(np.linalg.norm(data.x, axis=2), 1.0, rtol=1e-5)
    assert data.y.min() >= 0 and data.y.max() <= 10


def test_a_settings_train_shape_is_what_its_draw_gives(data_dir):
    # The memory check reads train_shape instead of tracing the draw: both must agree.
    size = den.QUICK_SYNTHETIC._replace(num_tasks=7, num_train=5)
    real = den.real_setting(load_lenk(data_dir), "lenk", 2, jnp.float32)
    for setting in (den.synthetic_setting(2, size, jnp.float32), real):
        drawn = jax.eval_shape(setting.draw, jax.random.key(0)).train.x_train.shape[:2]
        assert setting.train_shape == drawn
    assert den.synthetic_setting(2, size, jnp.float32).train_shape == (7, 5)


def test_split_is_a_permutation_of_each_task(data_dir):
    data = load_schools(data_dir)
    block = split_tasks(jax.random.key(1), data)
    m, mt = np.asarray(block.mask_train), np.asarray(block.mask_test)
    assert m.shape[1] == int((data.mask.sum(1) - data.num_test).max())
    sizes_train, sizes_test = m.sum(axis=1), mt.sum(axis=1)
    pooled = dict(zip(data.mask.sum(1).tolist(), data.num_test.tolist()))
    for n_tr, n_te in zip(sizes_train, sizes_test):
        assert pooled[n_tr + n_te] == n_te
    # Task 0 of the split: its online and held-out points are exactly the points of one school.
    x = np.concatenate([np.asarray(block.x_train[0])[m[0]], np.asarray(block.x_test[0])[mt[0]]])
    source = [
        t
        for t in range(139)
        if data.mask[t].sum() == len(x)
        and np.allclose(np.sort(data.x[t][data.mask[t]], axis=0), np.sort(x, axis=0))
    ]
    assert len(source) >= 1
    other = split_tasks(jax.random.key(2), data)
    assert not np.array_equal(np.asarray(other.mask_train), m)


def test_malformed_and_missing_files(tmp_path: Path):
    with pytest.raises(DataError, match="schools.mat"):
        load_schools(tmp_path)
    (tmp_path / "schools.mat").write_bytes(b"this is not a MATLAB file at all" * 10)
    with pytest.raises(DataError, match="schools.mat"):
        load_schools(tmp_path)
    import scipy.io

    scipy.io.savemat(tmp_path / "lenk.mat", {"Traindata": np.ones((32, 14))})
    with pytest.raises(DataError, match="Testdata"):
        load_lenk(tmp_path)
    scipy.io.savemat(
        tmp_path / "lenk.mat", {"Traindata": np.ones((32, 15)), "Testdata": np.ones((4, 15))}
    )
    with pytest.raises(DataError, match="16 training and 4 test rows"):
        load_lenk(tmp_path)


def test_the_wealth_grid_is_one_sweep_per_method_equal_to_one_run_per_wealth(tmp_path):
    # denevi2020-wealth: the initial wealth is the engine's grid axis (one sweep per method);
    # each wealth's curves equal that wealth run on its own, and the wealths differ.
    size = den.QUICK_SYNTHETIC._replace(
        num_tasks=5, num_validation=2, num_test=3, num_checkpoints=3
    )
    config = ExperimentConfig("denevi2020-wealth", seeds=2, out=tmp_path, quiet=True, x64=True)
    wealths = [0.1, 10.0]
    with jax.enable_x64(True):
        setting = den.synthetic_setting(2, size, jnp.float64)
        both, _, _ = den.run_methods(config, setting, ["ITL", "Lazy"], wealths=wealths)
        assert list(both) == [f"{m}@wealth={w:g}" for w in wealths for m in ("ITL", "Lazy")]
        for w in wealths:
            one, _, _ = den.run_methods(
                config, setting, ["ITL", "Lazy"], inner_wealth=w, meta_wealth=w
            )
            for m in ("ITL", "Lazy"):
                for metric, values in one[m].items():
                    got = both[f"{m}@wealth={w:g}"][metric]
                    np.testing.assert_allclose(got, values, rtol=1e-12, atol=0)
        low, high = (both[f"Lazy@wealth={w:g}"]["cumulative_error"] for w in wealths)
        assert not np.allclose(low, high)
        with pytest.raises(InputError, match="Lazy_SS"):
            den.run_methods(config, setting, ["Lazy_SS"], wealths=wealths)


def test_a_grid_sweep_runs_one_points_seeds_per_chunk_unless_the_run_sets_a_budget(
    tmp_path, monkeypatch
):
    # denevi2020-wealth: one chunk of every wealth x seed held ~1 GiB of temporaries at full
    # size; a grid sweep runs a point's seeds per chunk, a run's own --memory-budget wins.
    chunks = []

    def record(config, *args, **kwargs):
        chunks.append(kwargs["chunk_size"])
        raise StopIteration

    monkeypatch.setattr(den, "sweep_experiment", record)
    setting = den.synthetic_setting(2, den.QUICK_SYNTHETIC, jnp.float32)
    for budget, grid in [(None, None), (None, jnp.ones(2)), (2**30, jnp.ones(2))]:
        config = ExperimentConfig("denevi2020-wealth", seeds=2, out=tmp_path, quiet=True)
        config = dataclasses.replace(config, memory_budget=budget)
        with pytest.raises(StopIteration):
            den._sweep(config, None, setting, "x", grid=grid)
    assert chunks == [None, setting.num_seeds, None]


def test_each_seed_cell_draws_its_own_tasks_and_equals_a_direct_run(tmp_path):
    # Seed s draws from jax.random.key(s) inside its own sweep cell; the experiment's curves of
    # a seed equal the method run directly on that seed's tasks.
    size = den.QUICK_SYNTHETIC._replace(
        num_tasks=6, num_validation=2, num_test=3, num_checkpoints=3
    )
    setting = den.synthetic_setting(2, size, jnp.float32)
    data = setting.draw(jax.random.key(1))
    direct, _ = envs.low_variance_tasks(jax.random.key(1), num_tasks=11, dtype=jnp.float32)
    np.testing.assert_array_equal(data.train.x_train, direct.x_train[:6])
    np.testing.assert_array_equal(data.unseen.y_test, direct.y_test[8:])
    config = ExperimentConfig("denevi2020-synthetic", seeds=2, out=tmp_path, quiet=True)
    curves, extra, _ = den.run_methods(config, setting, ["Lazy", "ITL", "Lazy_SS"], grid_size=3)
    for name in ("Lazy", "ITL"):
        params = den.method_params(name, size.dim, jnp.float32, oracle_bias=setting.oracle_bias)
        out = den.run_method(den.method_learners(name, size.dim), params, data, [0, 3, 6])
        np.testing.assert_allclose(
            curves[name]["cumulative_error"][1],
            meta.cumulative_error(out.errors, out.mask),
            rtol=1e-6,
        )
        np.testing.assert_allclose(curves[name]["meta_test_error"][1], out.meta_test, rtol=1e-6)
    assert not np.allclose(curves["Lazy"]["test_error"][0], curves["Lazy"]["test_error"][1])
    # the tuned baseline: the hindsight pair has the lowest final cumulative error of its grid
    grid = meta.MetaParams.step_grid(3, dtype=jnp.float32)
    learner, fixed = den.method_learners("Lazy_SS", size.dim)
    scores = jax.vmap(lambda p: meta.grid_score(learner, fixed, p, data.train))(grid)
    best = int(np.argmin(np.where(np.isfinite(scores.cumulative), scores.cumulative, np.inf)))
    assert extra["Lazy_SS"]["inner_step_hindsight"][1] == float(grid.within.learning_rate[best])
    assert extra["Lazy_SS"]["meta_step_hindsight"][1] == float(grid.meta.learning_rate[best])
    np.testing.assert_allclose(
        curves["Lazy_SS"]["cumulative_error"][1, -1], scores.cumulative[best], rtol=1e-5
    )


def test_quick_synthetic_reproduces_the_paper_qualitatively(tmp_path):
    config = ExperimentConfig("denevi2020-synthetic", seeds=3, out=tmp_path, quick=True, quiet=True)
    result = EXPERIMENTS["denevi2020-synthetic"].load()(config)
    final = {(r.method, r.metric): r.mean for r in result.rows}
    methods = {r.method for r in result.rows}
    assert methods == {
        "ITL",
        "Oracle",
        "Aggressive",
        "Lazy",
        "Aggressive_KT",
        "Lazy_KT",
        "Aggressive_SS",
        "Lazy_SS",
    }
    assert {r.metric for r in result.rows} == set(den.METRICS)
    assert all(r.n_seeds == 3 for r in result.rows)
    cum = {m: final[(m, "cumulative_error")] for m in methods}
    # The meta methods beat ITL by a wide margin and the Oracle is the best parameter-free one.
    for m in ("Aggressive", "Lazy", "Aggressive_KT"):
        assert cum[m] < cum["ITL"] - 0.5, m
        assert cum[m] > cum["Oracle"] - 0.05, m
    assert cum["Lazy"] < cum["Lazy_KT"] - 0.2  # ONS Lazy clearly beats KT Lazy
    curves = result.curves
    n = den.QUICK_SYNTHETIC.num_tasks * den.QUICK_SYNTHETIC.num_train
    agg = curves["synthetic/Aggressive/cumulative_error"]
    lazy = curves["synthetic/Lazy/cumulative_error"]
    assert agg.shape == (3, n)
    early = n // 4
    assert agg[:, early].mean() < lazy[:, early].mean()  # Aggressive converges faster
    assert curves["synthetic/ITL/test_error"].shape == (3, den.QUICK_SYNTHETIC.num_tasks)
    mt = curves["synthetic/Lazy/meta_test_error"]
    assert mt.shape[1] == len(result.extra_config["synthetic_meta_test_checkpoints"])
    # The learned bias helps on unseen tasks: after training, far better than the initial 0.
    assert np.all(mt[:, -1] < mt[:, 0] - 0.5)
    drawn = figures.draw_result("denevi2020-synthetic", result)
    assert set(drawn) == {
        "synthetic_cumulative_error",
        "synthetic_test_error",
        "synthetic_meta_test_error",
    }
    from ojax.plotting import clipped_texts

    assert all(clipped_texts(fig) == [] for fig in drawn.values())  # nothing cut at the edges
    assert result.compile_seconds and result.compile_seconds > 0


def test_many_seeds_keep_the_cumulative_curve_at_evenly_spaced_points(tmp_path, monkeypatch):
    # --seeds 10000 of the main job: each method's float64 curves stay within CURVE_BYTES; the
    # values kept are those of the full curve there, the final value included.
    size = den.QUICK_SYNTHETIC._replace(
        num_tasks=6, num_validation=2, num_test=3, num_checkpoints=3
    )
    setting = den.synthetic_setting(2, size, jnp.float32)
    assert setting.num_points == 6 * size.num_train
    config = ExperimentConfig("denevi2020-synthetic", seeds=2, out=tmp_path / "a", quiet=True)
    full, _, _ = den.run_methods(config, setting, ["Lazy"])
    assert den.curve_points(setting.num_points, 2) is None  # the default: every point
    monkeypatch.setattr(den, "CURVE_BYTES", 8 * 2 * 40)  # room for 40 points per seed
    points = den.curve_points(setting.num_points, 2)
    assert points is not None and len(points) == 40
    assert points[0] == 1 and points[-1] == setting.num_points
    config = dataclasses.replace(config, out=tmp_path / "b")
    thinned, _, _ = den.run_methods(config, setting, ["Lazy"])
    got, want = thinned["Lazy"]["cumulative_error"], full["Lazy"]["cumulative_error"]
    assert got.shape == (2, 40) and want.shape == (2, setting.num_points)
    np.testing.assert_array_equal(got, want[:, points - 1])
    np.testing.assert_array_equal(thinned["Lazy"]["test_error"], full["Lazy"]["test_error"])
