"""`ojax sweep` for every kind of learner: multi-task learners (per-task, cumulative and test
error), kernel learners (their dataset's name) and the regret against the best fixed comparator
in hindsight, each checked against an independent float64 NumPy computation."""

from __future__ import annotations

import dataclasses

import jax
import numpy as np
import pytest
from tolerances import scaled_atol

from ojax import meta
from ojax.app.learner_sweep import sweep_learner
from ojax.app.sweep_metrics import checkpoints
from ojax.core import LEARNERS
from ojax.envs.multitask import (
    default_low_variance_params,
    low_variance_tasks,
    low_variance_tasks_core,
)
from ojax.runner import run_entry
from ojax.sweep import EngineOptions

STEPS, DIM, SEEDS = 48, 3, 2


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    import matplotlib.pyplot as plt

    plt.close("all")  # each sweep draws its figures


def _keys():
    return jax.random.split(jax.random.key(0), SEEDS)  # the sweep's seeds (ojax.sweep)


def _sweep(name, **kwargs):
    result, _ = sweep_learner(
        name,
        num_seeds=SEEDS,
        num_steps=STEPS,
        dim=DIM,
        key=0,
        options=EngineOptions(quiet=True),
        **kwargs,
    )
    return result


def _curve(result, name, metric):
    (key,) = [k for k in result.curves if k.endswith(f"/{name}/{metric}")]
    return result.curves[key]


def _paid(entry, key):
    trace = run_entry(
        entry, entry.make(DIM), entry.default_params(), entry.make_stream(key, STEPS, DIM)
    )
    return np.cumsum(np.asarray(trace.loss, np.float64))


@pytest.mark.parametrize(
    "name,best",
    [
        ("ogd", lambda z: -np.linalg.norm(np.cumsum(z, axis=0), axis=1)),  # unit L2 ball
        ("hedge", lambda z: np.cumsum(z, axis=0).min(axis=1)),  # the simplex: the best expert
        (  # quadratic: the running mean
            "ftl_quadratic",
            lambda z: np.array(
                [0.5 * np.sum((z[:t] - z[:t].mean(axis=0)) ** 2) for t in range(1, len(z) + 1)]
            ),
        ),
    ],
)
def test_oco_regret_equals_numpy(name, best):
    entry = LEARNERS[name]
    result = _sweep(name)
    take = checkpoints(STEPS) - 1
    for s, key in enumerate(_keys()):
        zs = np.asarray(entry.make_stream(key, STEPS, DIM)[0], np.float64)
        expected = (_paid(entry, key) - best(zs))[take]
        got = _curve(result, name, "regret")[s]
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=scaled_atol(expected, 1e-5))
    assert "hindsight" in result.extra_config["regret_comparator"]


@pytest.mark.parametrize("name", ["ogd_square", "least_squares_sgd"])
def test_square_loss_regret_against_least_squares_in_closed_form(name):
    entry = LEARNERS[name]
    result = _sweep(name)
    take = checkpoints(STEPS) - 1
    for s, key in enumerate(_keys()):
        xs, ys = (np.asarray(a, np.float64) for a in entry.make_stream(key, STEPS, DIM)[:2])
        best = []
        for t in take + 1:
            u = np.linalg.lstsq(xs[:t], ys[:t], rcond=None)[0]
            best.append(0.5 * np.sum((xs[:t] @ u - ys[:t]) ** 2))
        expected = _paid(entry, key)[take] - np.array(best)
        got = _curve(result, name, "regret")[s]
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=scaled_atol(expected, 1e-4))
    assert result.extra_config["regret_comparator"].startswith("the best fixed linear predictor")


def test_no_regret_where_the_loss_has_no_closed_form():
    result = _sweep("linear_pa")  # hinge
    assert not any(k.endswith("/regret") for k in result.curves)
    assert result.extra_config["regret_comparator"] is None


def test_kernel_learners_name_their_dataset():
    result = _sweep("kernel_pa")
    assert {r.dataset for r in result.rows} == {"kernel_pool"}
    assert {r.dataset for r in _sweep("cotl").rows} == {"kernel_two_views_source"}


@pytest.mark.parametrize("name", [n for n, e in LEARNERS.items() if e.kind == "multi_task"])
def test_every_multi_task_learner_sweeps(name):
    result = _sweep(name, grid=None)
    assert {r.metric for r in result.rows} == {"cumulative_error", "task_error", "cumulative_loss"}
    assert {r.dataset for r in result.rows} == {"task_blocks"}
    assert result.extra_config["metric"] == "cumulative_error"
    assert np.all(np.isfinite(_curve(result, name, "cumulative_error")))


def test_multi_task_errors_equal_numpy():
    name = "aggressive_ogd"
    entry = LEARNERS[name]
    result = _sweep(name)
    for s, key in enumerate(_keys()):
        data = entry.make_stream(key, STEPS, DIM)
        trace = run_entry(entry, entry.make(DIM), entry.default_params(), data)
        loss, mask = np.asarray(trace.loss, np.float64), np.asarray(data[2])
        sums, counts = (loss * mask).sum(axis=1), mask.sum(axis=1)
        take = checkpoints(len(counts)) - 1
        cumulative = np.cumsum(sums) / np.cumsum(counts)
        np.testing.assert_allclose(
            _curve(result, name, "cumulative_error")[s], cumulative[take], 1e-6
        )
        np.testing.assert_allclose(
            _curve(result, name, "task_error")[s], (sums / counts)[take], 1e-6
        )
        # the cumulative error of ojax.meta (the running mean of the real points) at the end
        assert cumulative[-1] == pytest.approx(meta.cumulative_error(loss, mask)[-1], rel=1e-12)


def _held_out_stream(key, num_steps, dim):
    """Task blocks with each task's held-out points (`task_data`)."""
    params = default_low_variance_params()
    tasks, _ = low_variance_tasks_core(key, params, max(2, num_steps // 8), 12, dim, 6)
    held = meta.TestPoints(tasks.x_test, tasks.y_test, tasks.mask_test)
    return tasks.x_train, tasks.y_train, tasks.mask_train, None, held


def test_test_error_where_the_stream_has_held_out_points(monkeypatch):
    entry = dataclasses.replace(LEARNERS["lazy_ogd"], name="lazy_held_out", stream=_held_out_stream)
    monkeypatch.setitem(LEARNERS, entry.name, entry)
    result = _sweep(entry.name)
    assert result.rows[0].dataset == "_held_out"
    for s, key in enumerate(_keys()):
        tasks, _ = low_variance_tasks(key, default_low_variance_params(), STEPS // 8, 12, DIM, 6)
        trace = meta.run_meta(entry.make(DIM), entry.default_params(), tasks)
        expected = meta.test_error_curve(trace.task.test_error)[checkpoints(STEPS // 8) - 1]
        got = _curve(result, entry.name, "test_error")[s]
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=scaled_atol(expected, 1e-6))


def test_cli_sweep_of_a_multi_task_learner(tmp_path, capsys):
    from ojax.app import cli

    out = tmp_path / "s"
    argv = ["sweep", "lazy_kt", "--seeds", "2", "--steps", "32", "--dim", "2", "--out", str(out)]
    assert cli.main([*argv, "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "cumulative_error" in printed and "(6, 8)" not in printed
    assert (out / "cumulative_error.png").is_file()
