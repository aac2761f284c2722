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
are medians of several runs after compilation; compile time apart. Learner steps per second
count one step per lane per online point (d = 10). ``--cold`` also times the whole
``denevi2020-synthetic`` experiment (30 seeds) in a fresh process. ``--long`` also runs
Aggressive and Lazy (ONS and KT) in float32 over 10^7 online points of the synthetic environment
(400,000 tasks, generated in chunks inside the jitted loop) and prints whether every online
error, the bias and the log-wealth of the meta bettor stay finite.

Writes DIR/bench.json (INTERFACE.md format).
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

from ojax.experiments import denevi2020 as den
from ojax.experiments.output import environment_info

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
import reference_denevi as ref  # noqa: E402


def median_time(fn, repeats: int) -> float:
    jax.block_until_ready(fn())
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(fn())
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def numpy_seconds(fn, count: int) -> float:
    start = time.perf_counter()
    for i in range(count):
        fn(i)
    return (time.perf_counter() - start) / count


def numpy_tasks(setting: den.Setting, seed: int):
    def s(block):
        return jax.tree.map(
            lambda a: np.asarray(a[seed]).astype(
                np.float64 if jnp.issubdtype(a.dtype, jnp.floating) else a.dtype
            ),
            block,
        )

    return ref.tasks_from_block(s(setting.train)), ref.tasks_from_block(s(setting.unseen))


def numpy_method(setting, checkpoints, name: str, seed: int) -> None:
    """One seed of one method: online errors, test errors and the meta-test curve."""
    train, unseen = numpy_tasks(setting, seed)
    kind, bettor = den.PF_METHODS[name]
    if kind in ("itl", "oracle"):
        bias = np.zeros(10) if kind == "itl" else np.full(10, 4.0)
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


def long_run_check(num_points: int = 10**7, chunk_tasks: int = 4000) -> None:  # noqa: C901
    """Aggressive / Lazy (ONS, KT) in float32 over ``num_points`` online points: all finite?"""
    from ojax import losses, meta
    from ojax.envs import multitask as mt_env
    from ojax.meta.simulate import _one_task

    size = den.SyntheticSize()
    num_chunks = -(-num_points // (chunk_tasks * size.num_train))
    names = ("Aggressive", "Lazy", "Aggressive_KT", "Lazy_KT")
    learners = [den.make_learner(*den.PF_METHODS[n], size.dim, jnp.float32) for n in names]
    params = meta.MetaParams(jnp.float32(1.0), jnp.float32(1.0), jnp.float32(1.0))
    env = mt_env.default_low_variance_params(jnp.float32)

    @jax.jit
    def chunk(states, first):
        tasks, _ = mt_env.low_variance_tasks_core(
            jax.random.key(0), env, chunk_tasks, size.num_points, size.dim, size.num_train, first
        )
        out = []
        for learner, state in zip(learners, states):

            def task(s, block, learner=learner):
                s, (errors, _, _) = _one_task(learner, params, losses.absolute, s, block)
                return s, jnp.all(jnp.isfinite(errors))

            state, finite = jax.lax.scan(task, state, tuple(tasks))
            out.append((state, jnp.all(finite)))
        return [o[0] for o in out], jnp.stack([o[1] for o in out])

    states = [learner.init(params) for learner in learners]
    finite = np.ones(len(names), bool)
    start = time.perf_counter()
    for c in range(num_chunks):
        states, ok = chunk(states, jnp.int32(c * chunk_tasks))
        finite &= np.asarray(ok)
    jax.block_until_ready(states)
    seconds = time.perf_counter() - start
    points = num_chunks * chunk_tasks * size.num_train
    for name, learner, state, ok in zip(names, learners, states, finite):
        bias = np.asarray(learner.bias(state, params))
        log_w = float(state.meta.bet.log_wealth)
        ok = bool(ok and np.all(np.isfinite(bias)) and np.isfinite(log_w))
        print(
            f"long run float32, {points:.1e} points, {name:13s}: all finite {ok}; "
            f"|bias| {np.linalg.norm(bias):.3f} (task mean 4 * 1: {4 * np.sqrt(size.dim):.3f}), "
            f"meta log-wealth {log_w:.2f}",
            flush=True,
        )
    print(f"long run: {seconds:.1f} s for the four learners", flush=True)


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
    numpy_seeds = 1 if args.quick else 2
    dtype = jnp.float32
    rows = []
    runner = den.Runner()
    big = den.synthetic_setting(30, size, dtype, runner=runner)
    one = jax.tree.map(lambda a: a[:1], big)
    one = one._replace(oracle_bias=big.oracle_bias, checkpoints=big.checkpoints)
    checkpoints = jnp.asarray(big.checkpoints, jnp.int32)
    steps_per_seed = size.num_tasks * size.num_train
    test_steps = len(big.checkpoints) * size.num_test * size.num_train
    total_30 = 0.0
    for name, (kind, bettor) in den.PF_METHODS.items():
        learner = den.make_learner(kind, bettor, size.dim, dtype)
        np_one = numpy_seconds(lambda i: numpy_method(big, big.checkpoints, name, i), numpy_seeds)  # noqa: B023 (called at once)
        for setting, seeds in ((one, 1), (big, 30)):
            params = den._pf_params(kind, seeds, size.dim, dtype, 1.0, 1.0, big.oracle_bias)
            before = runner.compile_seconds
            runner(den._runs, learner, params, setting.train, setting.unseen, checkpoints)
            compile_s = runner.compile_seconds - before
            t = median_time(
                lambda: runner(
                    den._runs,
                    learner,
                    params,
                    setting.train,
                    setting.unseen,
                    checkpoints,  # noqa: B023 (called at once)
                ),
                repeats,
            )
            if seeds == 30:
                total_30 += t
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
    grid = den._ss_grid(dtype, 20)
    pairs = 400
    for name, mode in den.SS_METHODS.items():
        learner = den.make_learner(mode + "_ss", "", size.dim, dtype)
        train0, _ = numpy_tasks(big, 0)
        sample = [(float(a), float(b)) for a, b in zip(grid.inner_step[::97], grid.meta_step[::97])]
        start = time.perf_counter()
        for eta_in, eta_meta in sample:
            ref.run_ss(train0, mode, eta_in, eta_meta)
        np_pair = (time.perf_counter() - start) / len(sample)
        for setting, seeds in ((one, 1), (big, 30)):
            chunk = min(seeds, 10)
            before = runner.compile_seconds
            den._grid_scores(
                runner, learner, grid, setting.train, setting.validation, chunk, lambda it: it
            )
            compile_s = runner.compile_seconds - before
            t = median_time(
                lambda: den._grid_scores(
                    runner,
                    learner,
                    grid,
                    setting.train,
                    setting.validation,
                    chunk,
                    lambda it: it,  # noqa: B023 (called at once)
                ),
                max(1, repeats - 2),
            )
            rows.append(
                row(
                    f"{name} 400-pair grid x {seeds} seeds",
                    t,
                    f"numpy-float64-loop ({len(sample)} pairs, scaled)",
                    np_pair * pairs * seeds,
                    compile_s,
                    steps_per_seed * pairs * seeds,
                )
            )
    if args.cold:
        start = time.perf_counter()
        subprocess.run(
            [
                sys.executable,
                "-c",
                (
                    "from pathlib import Path; from ojax.experiments import EXPERIMENTS, "
                    "ExperimentConfig; EXPERIMENTS['denevi2020-synthetic'].load()(ExperimentConfig("
                    "'denevi2020-synthetic', 30, Path('/tmp/unused'), quiet=True))"
                ),
            ],
            check=True,
        )
        cold = time.perf_counter() - start
        rows.append(
            row(
                "denevi2020-synthetic, 30 seeds, cold process",
                cold,
                "target of issue 3 (60 s)",
                60.0,
                0.0,
            )
        )
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
