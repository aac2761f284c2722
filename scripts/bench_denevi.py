# ruff: noqa: B023  (the lambdas are called inside their loop iteration)
"""Benchmark: Denevi et al. (2020) multi-task learners, ojax against a float64 NumPy loop.

    python scripts/bench_denevi.py [--quick] [--out DIR] [--cold] [--long]

On the synthetic experiment (T = 400 tasks x 25 online points, d = 10; ``--quick``: T = 80):

* each parameter-free method (ITL, Oracle, Aggressive, Lazy, Aggressive_KT, Lazy_KT), including
  its test errors and meta-test curve, at 1 and 30 seeds;
* the six together at 30 seeds (target: <= 1 s after compilation);
* the 400-pair tuned OGD grid (Aggressive_SS and Lazy_SS) at 1 and 30 seeds;

against the plain float64 NumPy per-sample loops of tests/reference_denevi.py (the same
algorithms, written from the spec). The NumPy loops are timed on a few seeds (and, for the grid,
a few pairs) and scaled linearly to the case's size; the row's ``baseline`` says so. ojax times
are medians of several runs of the compiled program (``ojax.app.timing``), compile time
apart. Learner steps per second count one step per lane per online point (d = 10). ``--cold``
also times the whole ``denevi2020-synthetic`` experiment (30 seeds) in a fresh process.
``--long`` also runs Aggressive and Lazy (ONS and KT) in float32 over 10^7 online points of the
synthetic environment (400,000 tasks, generated in chunks inside the jitted loop) and prints
whether every online error, the bias and the log-wealth of the meta bettor stay finite.

Only public functions of ojax are used. Writes DIR/bench.json (the format of docs/cli.md).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from ojax import TaskInfo, losses, meta, tree_where
from ojax.app.output import environment_info
from ojax.app.timing import compile_and_run
from ojax.envs import multitask as mt_env
from ojax.experiments import denevi2020 as den

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
import reference_denevi as ref  # noqa: E402


def numpy_seconds(fn, count: int) -> float:
    start = time.perf_counter()
    for i in range(count):
        fn(i)
    return (time.perf_counter() - start) / count


def numpy_tasks(data: den.SeedData, seed: int):
    def s(block):
        return jax.tree.map(lambda a: np.asarray(a[seed]), block)

    f64 = [
        jax.tree.map(lambda a: a.astype(np.float64) if a.dtype.kind == "f" else a, s(b))
        for b in (data.train, data.unseen)
    ]
    return ref.tasks_from_block(f64[0]), ref.tasks_from_block(f64[1])


def numpy_method(data, checkpoints, name: str, seed: int) -> None:
    """One seed of one method: online errors, test errors and the meta-test curve."""
    train, unseen = numpy_tasks(data, seed)
    kind, bettor = den.PF_METHODS[name]
    if kind == "fixed":
        bias = np.zeros(10) if name == "ITL" else np.full(10, 4.0)
        out = ref.run_pf(train, bettor, "fixed", bias)
    else:
        out = ref.run_pf(train, bettor, kind)
    for b in out["biases"][checkpoints]:
        ref.meta_test(unseen, b, kind=bettor)


def row(case, ojax_s, baseline, baseline_s, compile_s, steps=None):
    r = {
        "case": case,
        "ojax_seconds": ojax_s,
        "baseline": baseline,
        "baseline_seconds": baseline_s,
        "ratio": baseline_s / ojax_s,
        "ojax_compile_seconds": compile_s,
    }
    if steps is not None:
        r["learner_steps"] = steps
        r["steps_per_second"] = steps / ojax_s
    print(
        f"{case:44s} ojax {ojax_s:9.4f} s   {baseline:38s} {baseline_s:10.2f} s   "
        f"x{r['ratio']:9.1f}" + (f"   {steps / ojax_s / 1e6:7.1f} M steps/s" if steps else ""),
        flush=True,
    )
    return r


def _task_step(learner, params, loss):
    """One task of the MultiTaskLearner protocol (begin, masked points, end), its errors."""

    def task(state, block):
        index, x, y, mask = block
        info = TaskInfo(index, jnp.sum(mask, dtype=jnp.int32))
        state = learner.begin_task(state, params, info)

        def point(s, example):
            xi, yi, real = example
            err = jnp.where(real, loss.value(learner.predict(s, params, xi), yi), 0.0)
            return tree_where(real, learner.update(s, params, xi, yi), s), err

        state, errors = jax.lax.scan(point, state, (x, y, mask))
        return learner.end_task(state, params, info), jnp.all(jnp.isfinite(errors))

    return task


def long_run_check(num_points: int = 10**7, chunk_tasks: int = 4000) -> None:
    """Aggressive / Lazy (ONS, KT) in float32 over ``num_points`` online points: all finite?

    The runner starts from the learner's initial state, so the 400,000 tasks (too many to hold
    at once) are carried chunk by chunk through the learner's own protocol functions."""
    size = den.SyntheticSize()
    num_chunks = -(-num_points // (chunk_tasks * size.num_train))
    names = ("Aggressive", "Lazy", "Aggressive_KT", "Lazy_KT")
    learners = [den.method_learners(n, size.dim).learner for n in names]
    params = meta.MetaParams.paper(dtype=jnp.float32)
    env = mt_env.default_low_variance_params(jnp.float32)

    @jax.jit
    def chunk(states, first):
        tasks, _ = mt_env.low_variance_tasks_core(
            jax.random.key(0), env, chunk_tasks, size.num_points, size.dim, size.num_train, first
        )
        index = first + jnp.arange(chunk_tasks, dtype=jnp.int32)
        blocks = (index, tasks.x_train, tasks.y_train, tasks.mask_train)
        out = [
            jax.lax.scan(_task_step(learner, params, losses.absolute), state, blocks)
            for learner, state in zip(learners, states)
        ]
        return [o[0] for o in out], jnp.stack([jnp.all(o[1]) for o in out])

    states = [learner.init(params) for learner in learners]
    finite = np.ones(len(names), bool)
    start = time.perf_counter()
    for c in range(num_chunks):
        states, ok = chunk(states, jnp.int32(c * chunk_tasks))
        finite &= np.asarray(ok)
    jax.block_until_ready(states)
    seconds = time.perf_counter() - start
    points = num_chunks * chunk_tasks * size.num_train
    for name, state, ok in zip(names, states, finite):
        bias = np.asarray(state.bias)
        log_w = float(state.meta.bet.log_wealth)
        ok = bool(ok and np.all(np.isfinite(bias)) and np.isfinite(log_w))
        print(
            f"long run float32, {points:.1e} points, {name:13s}: all finite {ok}; "
            f"|bias| {np.linalg.norm(bias):.3f} (task mean 4 * 1: {4 * np.sqrt(size.dim):.3f}), "
            f"meta log-wealth {log_w:.2f}",
            flush=True,
        )
    print(f"long run: {seconds:.1f} s for the four learners", flush=True)


def _by_seed(tree, num_seeds: int):
    return jax.tree.map(lambda a: jnp.broadcast_to(a, (num_seeds, *jnp.shape(a))), tree)


def _seeds(tree, num_seeds: int):
    return jax.tree.map(lambda a: a[:num_seeds], tree)


def bench_parameter_free(data, setting, size, repeats, numpy_seeds) -> list[dict]:
    rows, total_30 = [], 0.0
    checkpoints = np.asarray(setting.checkpoints, np.int32)
    steps_per_seed = size.num_tasks * size.num_train
    test_steps = len(checkpoints) * size.num_test * size.num_train
    for name in den.PF_METHODS:
        learners = den.method_learners(name, size.dim)
        params = den.method_params(name, size.dim, setting.dtype, oracle_bias=setting.oracle_bias)
        fn = jax.jit(jax.vmap(lambda p, d: den.run_method(learners, p, d, checkpoints)))
        np_one = numpy_seconds(lambda i: numpy_method(data, checkpoints, name, i), numpy_seeds)
        for seeds in (1, 30):
            _, compile_s, t = compile_and_run(
                fn,
                _by_seed(params, seeds),
                _seeds(data, seeds),
                compiler_options=den.COMPILER_OPTIONS,
                repeats=repeats,
            )
            total_30 += t if seeds == 30 else 0.0
            rows.append(
                row(
                    f"{name} x {seeds} seeds (+ meta-test)",
                    t,
                    f"numpy-float64-loop ({numpy_seeds} seed(s), scaled)",
                    np_one * seeds,
                    compile_s,
                    (steps_per_seed + test_steps) * seeds,
                )
            )
    np_all = sum(r["baseline_seconds"] for r in rows if "x 30 seeds" in r["case"])
    rows.append(
        row(
            "six parameter-free methods x 30 seeds",
            total_30,
            "numpy-float64-loop (scaled)",
            np_all,
            0.0,
            6 * 30 * (steps_per_seed + test_steps),
        )
    )
    return rows


def bench_grid(data, setting, size, repeats) -> list[dict]:
    rows = []
    grid = meta.MetaParams.step_grid(20, dtype=setting.dtype)
    steps_per_seed = size.num_tasks * size.num_train
    for name, mode in den.SS_METHODS.items():
        learner, fixed = den.method_learners(name, size.dim)

        def scores(d):
            return jax.vmap(lambda p: meta.grid_score(learner, fixed, p, d.train, d.validation))(
                grid
            )

        fn = jax.jit(jax.vmap(scores))
        train0, _ = numpy_tasks(data, 0)
        inner, outer = grid.within.learning_rate[::97], grid.meta.learning_rate[::97]
        sample = [(float(a), float(b)) for a, b in zip(inner, outer)]
        start = time.perf_counter()
        for eta_in, eta_meta in sample:
            ref.run_ss(train0, mode, eta_in, eta_meta)
        np_pair = (time.perf_counter() - start) / len(sample)
        for seeds in (1, 30):
            _, compile_s, t = compile_and_run(
                fn,
                _seeds(data, seeds),
                compiler_options=den.COMPILER_OPTIONS,
                repeats=max(1, repeats - 2),
            )
            rows.append(
                row(
                    f"{name} 400-pair grid x {seeds} seeds",
                    t,
                    f"numpy-float64-loop ({len(sample)} pairs, scaled)",
                    np_pair * 400 * seeds,
                    compile_s,
                    steps_per_seed * 400 * seeds,
                )
            )
    return rows


def cold_row() -> dict:
    start = time.perf_counter()
    code = (
        "from pathlib import Path; from ojax.experiments import EXPERIMENTS; "
        "spec = EXPERIMENTS['denevi2020-synthetic']; "
        "spec.run(spec.config('denevi2020-synthetic', "
        "30, Path('/tmp/unused'), quiet=True, resume=False))"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    cold = time.perf_counter() - start
    return row("denevi2020-synthetic, 30 seeds, cold process", cold, "target (60 s)", 60.0, 0.0)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", default="results/bench_denevi")
    parser.add_argument("--cold", action="store_true", help="also time the cold main job")
    parser.add_argument("--long", action="store_true", help="10^7-point float32 finiteness check")
    parser.add_argument("--long-only", action="store_true", help="only the 10^7-point check")
    args = parser.parse_args()
    if args.long or args.long_only:
        long_run_check()
        if args.long_only:
            return
    size = den.QUICK_SYNTHETIC if args.quick else den.SyntheticSize()
    repeats = 3 if args.quick else 5
    setting = den.synthetic_setting(30, size, jnp.float32)
    keys = jax.vmap(jax.random.key)(jnp.arange(30, dtype=jnp.int32))  # seed s: key(s)
    data = jax.jit(jax.vmap(setting.draw))(keys)  # 30 seeds' tasks
    rows = bench_parameter_free(data, setting, size, repeats, 1 if args.quick else 2)
    rows += bench_grid(data, setting, size, repeats)
    if args.cold:
        rows.append(cold_row())
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    info = environment_info()
    with open(out / "bench.json", "w") as f:
        json.dump(
            {
                "benchmark": "denevi",
                "device": info["device"],
                "environment": info,
                "quick": args.quick,
                "rows": rows,
            },
            f,
            indent=2,
        )
    print(f"wrote {out / 'bench.json'}")


if __name__ == "__main__":
    main()
