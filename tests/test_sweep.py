"""The sweep engine: equals a Python loop, chunking and sharding change no number, compiles once,
resumes after a crash or a SIGKILL without recomputing finished chunks, refuses bad input."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import sweep_worker as worker
from conftest import subprocess_env

from ojax import losses, oco, run_oco
from ojax.app import cli
from ojax.app.learner_sweep import sweep_learner
from ojax.experiments import ExperimentConfig
from ojax.sweep import EngineOptions, stacked, sweep, sweep_experiment
from ojax.sweep.grid import grid_axes
from ojax.validation import InputError

WORKER = Path(__file__).with_name("sweep_worker.py")
ROOT = Path(__file__).resolve().parents[1]

QUIET = EngineOptions(quiet=True)  # no progress bars


def _env(**extra):
    env = subprocess_env()  # the session's compilation cache: the workers share their programs
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    env.update(extra)
    return env


def _reference(lr, radius, zs):
    """One combination run directly through the library (no engine)."""
    params = oco.OGDParams(jnp.float32(lr), jnp.float32(radius))
    _, trace = run_oco(oco.ogd(), params, jnp.zeros(worker.DIM), zs, losses.linear_objective)
    return np.asarray(trace.loss)


def task_losses(params, data, key):
    zs = data[None, :] + jax.random.normal(key, (worker.NUM_STEPS, worker.DIM))
    p = oco.OGDParams(params["learning_rate"], params["radius"])
    _, trace = run_oco(oco.ogd(), p, np.zeros(worker.DIM, np.float32), zs, losses.linear_objective)
    return {"loss": trace.loss}


def test_product_grid_with_tasks_equals_python_loop():
    tasks = np.stack(
        [np.full(worker.DIM, 0.7, np.float32), np.linspace(-2, 1, worker.DIM, dtype=np.float32)]
    )
    grid = {"learning_rate": [0.05, 0.5, 2.0], "radius": [0.4, 3.0]}
    res = sweep(task_losses, grid, num_seeds=2, key=jax.random.key(1), tasks=tasks, options=QUIET)
    assert res.axes == ("seed", "learning_rate", "radius", "task")
    assert res.outputs["loss"].shape == (2, 3, 2, 2, worker.NUM_STEPS)
    np.testing.assert_array_equal(res.coords["radius"], np.float32([0.4, 3.0]))
    keys = jax.random.split(jax.random.key(1), 2)
    for s in range(2):
        noise = jax.random.normal(keys[s], (worker.NUM_STEPS, worker.DIM))
        for i, lr in enumerate(grid["learning_rate"]):
            for j, radius in enumerate(grid["radius"]):
                for t in range(2):
                    want = _reference(lr, radius, tasks[t][None, :] + noise)
                    np.testing.assert_allclose(
                        res.outputs["loss"][s, i, j, t], want, rtol=1e-5, atol=1e-6
                    )
    # distinct values give distinct runs
    assert not np.allclose(res.outputs["loss"][0, 0, 0, 0], res.outputs["loss"][0, 2, 0, 0])


def test_stacked_grid_and_shared_data_equal_python_loop():
    grid = oco.OGDParams(jnp.array([0.05, 0.3, 1.5]), jnp.array([3.0, 0.5, 1.0]))

    def run_params(params, data, key):
        zs = data[None, :] + jax.random.normal(key, (worker.NUM_STEPS, worker.DIM))
        _, trace = run_oco(
            oco.ogd(), params, np.zeros(worker.DIM, np.float32), zs, losses.linear_objective
        )
        return trace.loss

    res = sweep(
        run_params, grid, num_seeds=2, key=jax.random.key(4), data=worker.DATA, options=QUIET
    )
    assert res.axes == ("seed", "grid") and res.outputs.shape == (2, 3, worker.NUM_STEPS)
    keys = jax.random.split(jax.random.key(4), 2)
    for s in range(2):
        zs = worker.DATA[None, :] + jax.random.normal(keys[s], (worker.NUM_STEPS, worker.DIM))
        for h in range(3):
            want = _reference(grid.learning_rate[h], grid.radius[h], zs)
            np.testing.assert_allclose(res.outputs[s, h], want, rtol=1e-5, atol=1e-6)
    zipped = sweep(
        worker.ogd_losses,
        stacked({"learning_rate": [0.1, 1.0], "radius": [1.0, 2.0]}, name="pair"),
        num_seeds=1,
        key=jax.random.key(0),
        data=worker.DATA,
        options=QUIET,
    )
    assert zipped.axes == ("seed", "pair") and zipped.outputs["total"].shape == (1, 2)


def test_chunk_size_changes_no_number():
    full = worker.run(chunk_size=24)
    assert full.stats.num_chunks == 1
    for size, chunks in ((1, 24), (5, 5)):
        res = worker.run(chunk_size=size)
        assert res.stats.num_chunks == chunks and res.stats.chunk_size == size
        for name in full.outputs:
            # float rounding only: XLA may vectorize a dot differently for another batch size
            np.testing.assert_allclose(res.outputs[name], full.outputs[name], rtol=1e-6, atol=1e-6)
    again = worker.run(chunk_size=5)
    np.testing.assert_array_equal(again.outputs["loss"], res.outputs["loss"])


TRACES: list[int] = []


def counted(params, data, key):
    TRACES.append(1)
    return worker.ogd_losses(params, data, key)


def test_compiles_once_whatever_the_number_of_chunks():
    first = sweep(
        counted,
        worker.GRID,
        num_seeds=3,
        key=jax.random.key(0),
        data=worker.DATA,
        chunk_size=4,
        options=QUIET,
    )
    assert first.stats.num_chunks == 6
    assert len(TRACES) == 2  # one abstract trace for the output shapes, one to compile
    assert first.stats.compile_seconds > 0
    other = {"learning_rate": [0.3, 0.4, 0.6, 0.9], "radius": [1.0, 7.0]}
    second = sweep(
        counted,
        other,
        num_seeds=3,
        key=jax.random.key(9),
        data=worker.DATA * 2,
        chunk_size=4,
        options=QUIET,
    )
    assert len(TRACES) == 2 and second.stats.compile_seconds == 0.0
    assert not np.allclose(first.outputs["total"], second.outputs["total"])


def test_summaries_and_best():
    res = worker.run()
    total = res.outputs["total"]
    np.testing.assert_allclose(res.mean()["total"], total.mean(axis=0), rtol=1e-6)
    np.testing.assert_allclose(res.std("radius")["total"], total.std(axis=2), rtol=1e-6)
    np.testing.assert_allclose(
        res.quantile([0.25, 0.75])["loss"], np.quantile(res.outputs["loss"], [0.25, 0.75], axis=0)
    )
    summary = res.summary()
    assert set(summary) == {"mean", "std", "quantiles", "q"}
    score = total.astype(np.float64).mean(axis=0)
    for minimize, pick in ((True, np.argmin), (False, np.argmax)):
        best = res.best("total", minimize=minimize)
        i, j = np.unravel_index(pick(score), score.shape)
        assert best["index"] == {"learning_rate": i, "radius": j}
        assert best["params"]["learning_rate"] == np.float32(worker.GRID["learning_rate"][i])
        assert best["value"] == pytest.approx(score[i, j])
    with pytest.raises(InputError, match="one value per combination"):
        res.best("loss")
    with pytest.raises(InputError, match="axis must be one of"):
        res.mean("time")


def test_memory_budget_sets_the_chunk_size():
    ref = worker.run(chunk_size=4)  # fewer than a seed's 8 combinations: one per stream
    per = ref.stats.estimated_bytes_per_combination
    assert per >= worker.NUM_STEPS * worker.DIM * 4  # at least one stream of losses' data
    shared = 4 * (4 + 2 + worker.DIM) + 3 * 8
    budget = shared + 5 * per
    res = worker.run(chunk_size=None, memory_budget=budget)
    # chunked, within the budget (whole seeds draw each seed's noise once: more than 5 fit)
    assert 1 <= res.stats.chunk_size < 24
    assert res.stats.chunk_size * res.stats.estimated_bytes_per_combination <= budget
    assert res.stats.num_chunks == -(-24 // res.stats.chunk_size)
    np.testing.assert_allclose(res.outputs["loss"], ref.outputs["loss"], rtol=1e-6, atol=1e-6)
    with pytest.raises(InputError, match="too small for one combination"):
        worker.run(chunk_size=None, memory_budget=per // 2)


def sorted_sum(params, data, key):
    """Outputs of 4 bytes, temporaries of ~16 KiB (a sort of 4096 draws)."""
    return jnp.sort(jax.random.normal(key, (4096,))).sum()


def test_a_sweep_whose_outputs_fit_but_whose_chunk_does_not_is_chunked_by_the_estimate():
    # 64 combinations: their outputs (256 bytes) fit the budget, so the sweep is tried in one
    # chunk; the compiled chunk needs ~1 MiB, so the engine falls back to XLA's estimate of one
    # combination and runs chunks that fit.
    ref = sweep(sorted_sum, num_seeds=64, key=jax.random.key(0), chunk_size=64, options=QUIET)
    assert ref.stats.num_chunks == 1
    budget = 200_000
    options = EngineOptions(quiet=True, memory_budget=budget)
    res = sweep(sorted_sum, num_seeds=64, key=jax.random.key(0), options=options)
    per = res.stats.estimated_bytes_per_combination
    assert per >= 4096 * 4  # the sort's temporaries, not the 4 bytes of output
    assert 1 <= res.stats.chunk_size < 64 and res.stats.num_chunks > 1
    assert res.stats.chunk_size * per <= budget
    np.testing.assert_array_equal(res.outputs, ref.outputs)


def drawn_then_scaled(params, data, key):
    """The median of a seed's draw (16 KiB, sorted) scaled by the combination's value."""
    return jnp.sort(jax.random.normal(key, (4096,)))[2048] * params["scale"]


def test_a_chunk_of_whole_seeds_draws_each_seed_once():
    """A chunk holding whole seeds runs a seed's combinations with its key unbatched: its draw
    is made (and held) once, not once per combination, and the numbers are the same."""
    grid = {"scale": np.linspace(0.5, 2.0, 8)}

    def run(chunk_size):
        key = jax.random.key(0)
        return sweep(
            drawn_then_scaled, grid, num_seeds=4, key=key, chunk_size=chunk_size, options=QUIET
        )

    flat, whole = run(4), run(16)  # a chunk of half a seed; of two seeds
    assert (flat.stats.num_chunks, whole.stats.num_chunks) == (8, 2)
    np.testing.assert_array_equal(whole.outputs, flat.outputs)
    per_combination = flat.stats.estimated_bytes_per_combination
    assert per_combination >= 4096 * 4  # a draw (and its sort) per combination
    # a draw per seed, of 8 combinations (XLA's memory analysis of each program: 8x less)
    assert whole.stats.estimated_bytes_per_combination <= per_combination / 4


def test_resuming_chunks_of_whole_seeds_after_chunks_of_combinations(tmp_path):
    """A folder left by chunks of combinations (half of a seed's done) resumed with chunks of
    whole seeds: every seed with a pending combination is computed, the numbers are those of
    an uninterrupted run."""
    whole = worker.run(chunk_size=24)
    first = worker.run(tmp_path, chunk_size=4)
    assert first.stats.chunks_computed == 6
    chunks = sorted(tmp_path.rglob("chunk-*"))
    for path in chunks[1:]:  # keep the first chunk: 4 of seed 0's 8 combinations
        path.unlink()
    again = worker.run(tmp_path, chunk_size=8)
    assert again.stats.chunks_loaded == 1 and again.stats.chunks_computed == 3
    assert again.stats.combinations_computed == 24
    for name in whole.outputs:
        np.testing.assert_array_equal(again.outputs[name], whole.outputs[name])


def _snapshot(folder: Path) -> dict:
    return {
        p.name: (p.stat().st_mtime_ns, p.stat().st_ino, p.read_bytes())
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_resume_skips_finished_chunks_and_separates_configurations(tmp_path):
    first = worker.run(tmp_path)
    (folder,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    assert len(list(folder.glob("chunk-*.npz"))) == 6 and first.stats.chunks_computed == 6
    before = _snapshot(folder)
    again = worker.run(tmp_path)
    assert (again.stats.chunks_loaded, again.stats.chunks_computed) == (6, 0)
    for name in first.outputs:
        np.testing.assert_array_equal(again.outputs[name], first.outputs[name])
    assert _snapshot(folder) == before
    # Another configuration: another folder; the first is untouched.
    other = sweep(
        worker.ogd_losses,
        {"learning_rate": [0.3], "radius": [1.0]},
        num_seeds=3,
        key=jax.random.key(3),
        data=worker.DATA,
        out_dir=tmp_path,
        options=QUIET,
    )
    assert other.stats.chunks_computed == 1
    assert len([p for p in tmp_path.iterdir() if p.is_dir()]) == 2
    assert _snapshot(folder) == before
    # Pointing at the chunk folder itself: the same configuration resumes, another is refused.
    assert worker.run(folder).stats.chunks_loaded == 6
    with pytest.raises(InputError, match="another sweep configuration"):
        sweep(
            worker.ogd_losses,
            {"learning_rate": [0.3], "radius": [1.0]},
            num_seeds=3,
            key=jax.random.key(3),
            data=worker.DATA,
            out_dir=folder,
            options=QUIET,
        )
    assert _snapshot(folder) == before


def test_crash_midway_resumes_without_recomputing(tmp_path):
    def boom(info):
        if info["computed"] == 2:
            raise RuntimeError("simulated crash")

    with pytest.raises(RuntimeError, match="simulated crash"):
        sweep(
            worker.ogd_losses,
            worker.GRID,
            num_seeds=3,
            key=jax.random.key(3),
            data=worker.DATA,
            chunk_size=4,
            out_dir=tmp_path,
            options=QUIET,
            on_chunk=boom,
        )
    (folder,) = list(tmp_path.iterdir())
    assert len(list(folder.glob("chunk-*.npz"))) == 2
    before = _snapshot(folder)
    resumed = worker.run(tmp_path)
    assert (resumed.stats.chunks_loaded, resumed.stats.chunks_computed) == (2, 4)
    assert resumed.stats.combinations_computed == 16
    after = _snapshot(folder)
    assert all(after[name] == value for name, value in before.items())
    whole = worker.run()
    for name in whole.outputs:
        np.testing.assert_array_equal(resumed.outputs[name], whole.outputs[name])
    # resume=False recomputes (and replaces) this configuration's chunks
    fresh = worker.run(tmp_path, resume=False)
    assert (fresh.stats.chunks_loaded, fresh.stats.chunks_computed) == (0, 6)


def test_sigkill_midway_then_resume(tmp_path):
    store, partial, final = tmp_path / "store", tmp_path / "partial.npz", tmp_path / "final.npz"
    proc = subprocess.Popen(
        [sys.executable, str(WORKER), "resume", str(store), str(partial), "--delay", "2"],
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 120
        while not list(store.glob("*/chunk-*.npz")):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "no chunk file appeared"
            time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert proc.returncode == -signal.SIGKILL and not partial.exists()
    (folder,) = list(store.iterdir())
    before = _snapshot(folder)
    finished = [n for n in before if n.startswith("chunk-")]
    assert 1 <= len(finished) < 6
    done = subprocess.run(
        [sys.executable, str(WORKER), "resume", str(store), str(final)],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    stats = json.loads(done.stdout.strip().splitlines()[-1])
    assert stats["chunks_loaded"] == len(finished)
    assert stats["chunks_computed"] == 6 - len(finished)
    after = _snapshot(folder)
    for name in finished:  # the finished chunks were not rewritten
        assert after[name] == before[name]
    assert not list(folder.glob(".tmp-*"))
    whole = worker.run()
    with np.load(final) as z:
        for name in whole.outputs:
            np.testing.assert_array_equal(z[name], whole.outputs[name])


def test_sharded_over_four_cpu_devices_equals_unsharded(tmp_path):
    target = tmp_path / "sharded.npz"
    done = subprocess.run(
        [sys.executable, str(WORKER), "sharded", str(target)],
        env=_env(XLA_FLAGS="--xla_force_host_platform_device_count=4"),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    info = json.loads(done.stdout.strip().splitlines()[-1])
    assert info["devices"] == 4 and info["output_devices"] == 4 and "batch" in info["spec"]
    # LAPACK on 4 CPU devices of one process deadlocks in jaxlib: refused before it runs
    assert "calls LAPACK (lapack_" in info["lapack_refused"], info["lapack_refused"]
    assert "use options.devices=1" in info["lapack_refused"] and info["lapack_alone_finite"]
    with np.load(target) as z:
        for name in ("loss", "total"):
            np.testing.assert_array_equal(z[f"four/{name}"], z[f"one/{name}"])
            np.testing.assert_array_equal(z[f"seeds_four/{name}"], z[f"seeds_one/{name}"])


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"grid": {}}, "grid is empty"),
        ({"grid": {"learning_rate": []}}, "leading axis has size 0"),
        ({"grid": oco.OGDParams(jnp.ones(3), jnp.ones(2))}, "share the leading size"),
        ({"grid": {"learning_rate": {"a": np.ones(2), "b": np.ones(3)}}}, "share the leading size"),
        ({"grid": {"seed": [1.0, 2.0]}}, "reserved"),
        ({"grid": {"learning_rate": [0.1, np.nan]}}, "must be finite"),
        ({"grid": {"learning_rate": [0.1, np.inf]}}, "learning_rate must be finite, got inf"),
        (
            {"grid": {"learning_rate": [0.1, 1e39]}},
            r"grid: learning_rate=1e\+39 does not fit float32 \(largest 3.4e\+38\); use float64",
        ),
        (
            {"grid": {"learning_rate": [1e-50, 0.1]}},
            r"learning_rate=1e-50 does not fit float32 \(smallest normal 1.2e-38\)",
        ),
        ({"grid": {"learning_rate": [1e-40]}}, "learning_rate=1e-40 does not fit float32"),
        (
            {"grid": {"learning_rate": np.array([0.1, 0.2, 1e39])}},
            r"learning_rate\[2\]=1e\+39 does not fit float32",
        ),
        ({"grid": {"learning_rate": [1, 2**40]}}, "learning_rate=1099511627776 does not fit int32"),
        (
            {"grid": stacked({"learning_rate": [0.1, 1e39], "radius": [1.0, 2.0]}, "pair")},
            r"grid 'pair': learning_rate=1e\+39 does not fit float32",
        ),
        ({"num_seeds": 0}, r"num_seeds must be an integer in \[1, inf\]"),
        ({"tasks": np.ones((2, 3))}, "either tasks"),
        ({"chunk_size": 0}, r"chunk_size must be an integer in \[1, inf\]"),
        ({"options": EngineOptions(memory_budget=-1)}, "options.memory_budget must be a positive"),
        (
            {"options": EngineOptions(devices=0)},
            r"options.devices must be an integer in \[1, inf\]",
        ),
        ({"options": EngineOptions(devices=10**6)}, r"options.devices must be in \[1, "),
        ({"options": {"quiet": True}}, "options must be an ojax.sweep.EngineOptions.*got dict"),
        ({"options": EngineOptions(resume="no")}, "options.resume must be True or False"),
        ({"key": jnp.zeros((3, 2), jnp.uint32)}, "key must be one PRNG key"),
    ],
)
def test_bad_input_is_refused(kwargs, message, tmp_path):
    args = {
        "grid": worker.GRID,
        "num_seeds": 2,
        "key": jax.random.key(0),
        "data": worker.DATA,
        "out_dir": tmp_path / "store",
        "options": QUIET,
    }
    args.update(kwargs)
    grid = args.pop("grid")
    with pytest.raises(InputError, match=message):
        sweep(worker.ogd_losses, grid, **args)
    assert not (tmp_path / "store").exists()


def test_sweep_experiment_honours_the_config(tmp_path, capsys):
    config = ExperimentConfig(name="demo", seeds=3, out=tmp_path / "out", quiet=True, devices=1)
    res = sweep_experiment(
        config,
        worker.ogd_losses,
        worker.GRID,
        key=jax.random.key(3),
        data=worker.DATA,
        chunk_size=4,
        name="cell",
    )
    assert res.axes[0] == "seed" and res.outputs["total"].shape == (3, 4, 2)
    (folder,) = list((tmp_path / "out" / ".sweep").iterdir())
    assert folder.name.startswith("cell-") and len(list(folder.glob("chunk-*.npz"))) == 6
    assert capsys.readouterr().err == ""
    loud = ExperimentConfig(name="demo", seeds=3, out=tmp_path / "out", devices=1)
    again = sweep_experiment(
        loud,
        worker.ogd_losses,
        worker.GRID,
        key=jax.random.key(3),
        data=worker.DATA,
        chunk_size=4,
        name="cell",
    )
    assert again.stats.chunks_loaded == 6
    assert "24 combinations (0 computed, 24 resumed)" in capsys.readouterr().err
    np.testing.assert_array_equal(again.outputs["loss"], worker.run().outputs["loss"])


def test_sweep_experiment_refuses_what_is_not_an_experiment_config(tmp_path):
    for config in (EngineOptions(quiet=True), {"name": "demo", "seeds": 1, "out": tmp_path}):
        with pytest.raises(InputError, match="config must be an experiment's config.*got"):
            sweep_experiment(config, worker.ogd_losses, worker.GRID, key=0, data=worker.DATA)
    assert not any(tmp_path.iterdir())


def test_sweep_learner_honours_its_engine_options(capsys):
    budget = 2**27
    options = EngineOptions(quiet=True, devices=1, memory_budget=budget)
    _, res = sweep_learner("ogd", num_seeds=2, num_steps=5, options=options)
    assert (res.stats.num_devices, res.stats.memory_budget) == (1, budget)
    assert capsys.readouterr().err == ""  # quiet: no bar, no summary line
    _, loud = sweep_learner("ogd", num_seeds=2, num_steps=5, options=EngineOptions(devices=1))
    assert "sweep-ogd" in capsys.readouterr().err and loud.stats.memory_budget != budget
    np.testing.assert_array_equal(loud.outputs["average_loss"], res.outputs["average_loss"])
    with pytest.raises(InputError, match="options must be an ojax.sweep.EngineOptions.*dict"):
        sweep_learner("ogd", num_seeds=2, num_steps=5, options={"quiet": True})


def test_cli_sweep_writes_the_contract(tmp_path):
    out = tmp_path / "ogd"
    argv = [
        "sweep",
        "ogd",
        "--grid",
        "learning_rate=0.05,0.5",
        "--seeds",
        "3",
        "--steps",
        "40",
        "--dim",
        "3",
        "--out",
        str(out),
        "--quiet",
    ]
    assert cli.main(argv) == 0
    with open(out / "results.csv") as f:
        rows = list(csv.DictReader(f))
    assert {(r["method"], r["metric"]) for r in rows} == {
        (f"ogd@learning_rate={v}", m)
        for v in ("0.05", "0.5")
        for m in ("average_loss", "cumulative_loss", "regret")
    }
    assert all(r["experiment"] == "sweep" and r["n_seeds"] == "3" for r in rows)
    # The row equals the library run directly on the registered stream, seed by seed.
    from ojax.core import LEARNERS

    entry = LEARNERS["ogd"]
    keys = jax.random.split(jax.random.key(0), 3)
    finals = []
    for s in range(3):
        zs, _ = entry.make_stream(keys[s], 40, 3)
        params = entry.default_params()._replace(learning_rate=jnp.float32(0.5))
        _, trace = run_oco(entry.make(3), params, jnp.zeros(3), zs, losses.linear_objective)
        finals.append(float(np.mean(np.asarray(trace.loss, np.float64))))
    row = next(
        r for r in rows if r["method"] == "ogd@learning_rate=0.5" and r["metric"] == "average_loss"
    )
    assert float(row["mean"]) == pytest.approx(np.mean(finals), rel=1e-5, abs=1e-7)
    curves = np.load(out / "curves.npz")
    assert curves[f"{rows[0]['dataset']}/ogd@learning_rate=0.5/average_loss"].shape == (3, 40)
    config = json.loads((out / "config.json").read_text())
    finals = {
        float(r["method"].split("=")[1]): float(r["mean"])
        for r in rows
        if r["metric"] == "average_loss"
    }
    assert config["learner"] == "ogd"
    assert config["best"]["params"]["learning_rate"] == min(finals, key=finals.get)
    assert {p.name for p in out.glob("*.png")} == {"average_loss.png", "sensitivity.png"}


@pytest.mark.parametrize(
    "extra,message",
    [
        (["no-such-learner"], "unknown learner 'no-such-learner'"),
        (["ogd", "--grid", "bogus=1,2"], "'bogus' is not a hyperparameter of ogd"),
        (["ogd", "--grid", "learning_rate=-1,1"], "learning_rate must lie in"),
        (["ogd", "--grid", "learning_rate"], "must be FIELD=V1,V2"),
        (["ogd", "--seeds", "0"], "--seeds: must be a positive integer"),
    ],
)
def test_cli_sweep_bad_input_exits_2(extra, message, tmp_path, capsys):
    out = tmp_path / "out"
    assert cli.main(["sweep", *extra, "--steps", "10", "--out", str(out), "--quiet"]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_the_engine_imports_no_experiment_or_plotting():
    code = (
        "import sys, ojax.sweep; "
        "print(sorted(m for m in sys.modules if m.startswith(('ojax.experiments', "
        "'ojax.plotting', 'ojax.app.cli'))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env=_env(), capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
    from ojax import sweep as package

    assert set(package.__all__) >= {"sweep", "sweep_experiment", "stacked", "SweepResult"}
    assert all(hasattr(package, name) for name in package.__all__)


def test_grid_values_are_exact_and_fit_their_dtype(x64):
    # float64 holds what float32 cannot: the values are kept exactly, in float64
    kind, (axis,) = grid_axes({"learning_rate": [1e39, 1e-50, 0.1]})
    assert kind == "product" and axis.values.dtype == jnp.float64
    np.testing.assert_array_equal(axis.values, np.array([1e39, 1e-50, 0.1]))
    with pytest.raises(InputError, match=r"learning_rate=1e-320 does not fit float64"):
        grid_axes({"learning_rate": [1e-320]})  # a float64 subnormal


def test_grid_values_that_fit_are_converted_as_before():
    # the same float32 values as NumPy's conversion of the list (the rounding is unchanged)
    values = [0.1, 1e-3, 3.0e38, -2.5e-38, 0.0, 7]
    kind, (axis,) = grid_axes({"learning_rate": values})
    assert axis.values.dtype == jnp.float32
    np.testing.assert_array_equal(axis.values, np.asarray(values).astype(np.float32))
    kind, (axis,) = grid_axes({"count": [1, 2, -3]})
    assert axis.values.dtype == jnp.int32
    np.testing.assert_array_equal(axis.values, [1, 2, -3])


@pytest.mark.parametrize(
    "grid,message",
    [
        (
            {"learning_rate": ["0.1", "1e39"]},
            r"^grid: learning_rate=1e39 does not fit float32 \(largest 3.4e\+38\); use float64",
        ),
        ({"learning_rate": ["1e-50"]}, r"^grid: learning_rate=1e-50 does not fit float32"),
        ({"learning_rate": ["1e-400"]}, r"^grid: learning_rate=1e-400 does not fit float32"),
        (
            {"learning_rate": ["0.1", "-0.1"]},
            r"^grid: learning_rate=-0.1: learning_rate must lie in \(0.0, inf\), got -0.1$",
        ),
        ({"learning_rate": [-0.1]}, r"learning_rate must lie in \(0.0, inf\), got -0.1$"),
        ({"radius": ["1", "0"]}, r"^grid: radius=0: radius must lie in"),
        ({"learning_rate": ["0.1", "nan"]}, r"nan is not a finite number"),
        ({"learning_rate": [0.1, float("inf")]}, r"learning_rate must be finite, got inf"),
        ({"learning_rate": ["fast"]}, r"'fast' is not a number"),
        ({"learning_rate": []}, "needs a non-empty list"),
        ({"bogus": [1.0]}, "'bogus' is not a hyperparameter of ogd"),
    ],
)
def test_sweep_learner_checks_every_value_before_running(grid, message, tmp_path):
    with pytest.raises(InputError, match=message):
        sweep_learner("ogd", grid, num_steps=5, out_dir=tmp_path / "store", options=QUIET)
    assert not (tmp_path / "store").exists()


def test_sweep_learner_checks_every_combination(tmp_path):
    # ridge SGD needs learning_rate * regularization < 1: each value passes alone, one pair fails
    grid = {"learning_rate": ["0.5", "2"], "regularization": ["0.1", "0.6"]}
    with pytest.raises(InputError, match=r"^grid: learning_rate=2, regularization=0.6: "):
        sweep_learner("least_squares_ridge_sgd", grid, num_steps=5, out_dir=tmp_path / "s")
    assert not (tmp_path / "s").exists()
    with pytest.raises(InputError, match="not a scalar hyperparameter"):
        sweep_learner("least_squares_sgd_geometric", {"learner": [0.1]}, num_steps=5)


def test_sweep_learner_keeps_values_that_only_float64_holds(x64):
    grid = {"learning_rate": ["1e39", "1e-50"]}
    with jax.numpy_dtype_promotion("standard"):  # as `ojax sweep --x64` runs (float32 streams)
        result, res = sweep_learner("hedge", grid, num_seeds=1, num_steps=4, dim=2, options=QUIET)
    assert res.coords["learning_rate"].dtype == np.float64
    np.testing.assert_array_equal(res.coords["learning_rate"], [1e39, 1e-50])
    assert {r.method for r in result.rows} == {
        "hedge@learning_rate=1e+39",
        "hedge@learning_rate=1e-50",
    }


# one learner of each way a float64 sweep failed before: a stream drawn in float32 (experts'
# losses), a learner built for float32 state (`dtyped`), the regret's least-squares slots
# indexed with int64 literals, a learner of float32 parts (FLH's experts)
@pytest.mark.parametrize("name", ["omd_entropy", "fixed_share", "ogd_square", "flh_ons"])
def test_sweep_learner_runs_in_float64_under_x64(name, x64):
    """`ojax sweep NAME --x64`: the stream, the learner's state and every curve in float64
    (strict dtype promotion: nothing float32 meets float64), every curve finite (FLH's
    empty slots, log-weight -inf, are not a divergence)."""
    result, res = sweep_learner(name, None, num_seeds=2, num_steps=40, dim=3, options=QUIET)
    curves = jax.tree.leaves(res.outputs)
    assert curves and all(np.asarray(c).dtype == np.float64 for c in curves)
    assert all(np.isfinite(c).all() for c in curves) and result.rows


def test_sweep_learner_refuses_a_value_its_dtype_rounds_out_of_the_domain(monkeypatch, tmp_path):
    from ojax.core import LEARNERS
    from ojax.validation import check_range

    ogd = LEARNERS["ogd"]

    def make(dim):
        def below_one(params):
            check_range("learning_rate", params.learning_rate, 0.0, 1.0, high_open=True)

        return ogd.make(dim)._replace(check_params=below_one)

    monkeypatch.setitem(LEARNERS, "ogd_below_one", ogd._replace(name="ogd_below_one", make=make))
    grid = {"learning_rate": ["0.5", "0.99999999999"]}  # < 1, but 1.0 in float32
    with pytest.raises(InputError) as info:
        sweep_learner("ogd_below_one", grid, num_steps=5, out_dir=tmp_path / "s", options=QUIET)
    assert str(info.value) == (
        "grid: learning_rate=0.99999999999 (in float32: learning_rate=1.0): "
        "learning_rate must lie in [0.0, 1.0), got 1.0"
    )
    assert not (tmp_path / "s").exists()
    res = sweep_learner(
        "ogd_below_one",
        {"learning_rate": ["0.5", "0.9999"]},
        num_seeds=1,
        num_steps=5,
        options=QUIET,
    )[1]
    np.testing.assert_array_equal(res.coords["learning_rate"], np.float32([0.5, 0.9999]))


def test_outputs_larger_than_the_host_are_refused_before_running():
    from ojax.sweep.memory import host_memory

    def fn(params, data, key):
        return jnp.zeros(2**20, jnp.float32)  # 4 MiB per run

    runs = host_memory() // (4 * 2**20)  # about twice what half the host holds
    with pytest.raises(InputError, match=rf"the outputs of {runs} runs need .* on the host"):
        sweep(fn, None, num_seeds=runs, key=0)


def test_a_sweep_that_calls_lapack_runs_holding_the_lapack_lock():
    """Two programs that call LAPACK at once deadlock on the CPU (jaxlib's batched kernels each
    wait for the intra-op thread pool the other holds: `ojax.sweep.threads`), so sweeps on
    threads (`ojax.sweep.in_threads`) run such chunks holding `threads.LAPACK`: while another
    thread holds it, a LAPACK sweep waits and a sweep without LAPACK finishes."""
    import threading

    from ojax.sweep import threads

    def lapack_cell(params, data, key):
        a = jax.random.normal(key, (6, 4)) + params["x"]
        return jnp.linalg.lstsq(a, jnp.ones(6))[0].sum()

    def plain_cell(params, data, key):
        return jax.random.normal(key, (6, 4)).sum() + params["x"]

    def run(cell):
        grid = {"x": np.arange(3.0, dtype=np.float32)}
        return sweep(cell, grid, num_seeds=2, key=0, options=EngineOptions(quiet=True)).outputs

    expected = {cell: run(cell) for cell in (lapack_cell, plain_cell)}  # compiled, unheld
    held, release = threading.Event(), threading.Event()

    def holder():
        with threads.LAPACK:
            held.set()
            release.wait(timeout=60)

    holding = threading.Thread(target=holder)
    holding.start()
    held.wait(timeout=60)
    try:
        done: dict = {}
        waiting = threading.Thread(target=lambda: done.update(lapack=run(lapack_cell)))
        waiting.start()
        np.testing.assert_array_equal(run(plain_cell), expected[plain_cell])  # runs meanwhile
        waiting.join(timeout=1.0)
        assert waiting.is_alive() and "lapack" not in done  # waits for the lock
    finally:
        release.set()
        holding.join(timeout=60)
    waiting.join(timeout=60)
    np.testing.assert_array_equal(done["lapack"], expected[lapack_cell])
