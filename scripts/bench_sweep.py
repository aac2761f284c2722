"""Benchmark of the sweep engine (ojax.sweep) against a hand-written jit(vmap(scan)).

    python scripts/bench_sweep.py [--quick] [--out DIR] [--large] [--large-streams N]
                                  [--large-budget SIZE] [--repeats K] [--drawn-block B]
                                  [--profile]

Work: online gradient descent as a linear predictor on the square loss over a synthetic linear
regression stream drawn inside the run from the stream's key (d = 10), returning the final
average loss and a 100-point average-loss curve per stream.

* ``engine``: 1000 streams (10 step sizes x 100 seeds) x 10^4 steps through
  :func:`ojax.sweep.sweep` (one chunk), against ``jax.jit(jax.vmap(run))`` of the same function
  on the same 1000 (step size, key) pairs. Target: engine overhead <= 10% (ratio >= 0.91).
  The engine runs a chunk of whole seeds with each seed's key unbatched over its step sizes
  (:func:`ojax.sweep.chunk.by_seed`), so a seed's stream is drawn once, not once per step
  size; a second row compares it with the hand-written form of that, ``jax.jit(jax.vmap(
  jax.vmap(run)))`` with the seeds outside and the step sizes inside on the seed's key.
* ``chunked`` (``--large``): ``--large-streams`` streams (default 10^5) x 10^4 steps in chunks
  sized from ``--large-budget`` (default 4 GiB), against the unchunked 1000-stream run, per
  1000 streams. Target: ratio >= 1 (no fewer steps per second), peak memory within 24 GiB.

* ``profile`` (``--profile``): where the engine case's time goes, timed interleaved with it:
  the 1000 streams drawn alone (``jax.jit(jax.vmap(linear_regression_stream))``), as many rows
  drawn as one stream from one key (``jax.jit(linear_regression_stream)``), the runner
  over the drawn streams (``jit(vmap(run))``, streams-major ``(S, T, d)``), the runner over
  the same streams laid out time-major (``jit(vmap(run, in_axes=1, out_axes=1))`` over
  ``(T, S, d)``, losses ``(T, S)``: the same numbers bit for bit, without the transposes that
  the vmap of a scan makes of streams-major data), and a hand-written time-major OGD scan
  over them (one ``lax.scan`` over ``(T, S, d)``, the streams vectorised in the step: the
  layout's ceiling).
* ``drawn`` (``--drawn-block B``): the engine run with each stream drawn ``B`` rows at a time
  inside the scan (:func:`ojax.run_drawn`, never materialised), against the engine
  run over the materialised stream (the same numbers up to the labels' last bit).

Times are medians after compilation; compile time is reported apart. Writes DIR/bench.json
(the format of docs/cli.md; default DIR: results/bench_sweep).
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from ojax import linear_predictor, losses, oco, run
from ojax.app.options import parse_bytes
from ojax.app.output import environment_info
from ojax.datasets.streaming import run_drawn
from ojax.envs.streams import linear_regression_rows, linear_regression_stream
from ojax.sweep import EngineOptions, sweep

DIM = 10
QUIET = EngineOptions(quiet=True)


def make_fn(num_steps: int, drawn_block: int | None = None):
    """The per-stream run: (params, data, key) -> final and curve of the average loss; with
    ``drawn_block``, the stream is drawn that many rows at a time inside the scan
    (:func:`ojax.datasets.streaming.run_drawn`) instead of materialised whole."""
    predictor = linear_predictor(oco.ogd("none"), losses.square, np.zeros(DIM, np.float32))
    marks = np.unique(np.linspace(1, num_steps, 100).round().astype(np.int64))
    take = jnp.asarray(marks - 1)
    steps = jnp.asarray(marks, jnp.float32)

    def draw(key, start, size):
        return linear_regression_rows(key, start, size, DIM)

    def stream_run(params, data, key):
        p = oco.OGDParams(params["learning_rate"], jnp.float32(1.0))
        if drawn_block is None:
            xs, ys = linear_regression_stream(key, num_steps, DIM)
            _, trace = run(predictor, p, xs, ys, losses.square)
        else:
            _, trace = run_drawn(
                predictor, p, draw, key, num_steps, losses.square, block=drawn_block
            )
        curve = jnp.cumsum(trace.loss)[take] / steps
        return {"final": curve[-1], "curve": curve}

    return stream_run


def profile(flat_params, flat_keys, num_steps: int, engine, repeats: int) -> dict[str, float]:
    """Seconds of the engine run beside its parts (see the module doc), alternated."""
    streams = len(flat_keys)
    draw = jax.jit(jax.vmap(lambda k: linear_regression_stream(k, num_steps, DIM)))
    xs, ys = jax.block_until_ready(draw(flat_keys))
    one = jax.jit(lambda k: linear_regression_stream(k, streams * num_steps, DIM))
    predictor = linear_predictor(oco.ogd("none"), losses.square, np.zeros(DIM, np.float32))

    def scan_drawn(lr, x, y):
        return run(predictor, oco.OGDParams(lr, jnp.float32(1.0)), x, y, losses.square)[1].loss

    def time_major(lr, x_t, y_t):
        def step(w, xy):
            r = jnp.sum(w * xy[0], axis=-1) - xy[1]
            return w - (lr * r)[:, None] * xy[0], 0.5 * r * r

        return jax.lax.scan(step, jnp.zeros((streams, DIM), jnp.float32), (x_t, y_t))[1]

    lr = flat_params["learning_rate"]
    scan = jax.jit(jax.vmap(scan_drawn))
    x_t, y_t = jnp.swapaxes(xs, 0, 1), jnp.swapaxes(ys, 0, 1)
    scan_t = jax.jit(jax.vmap(scan_drawn, in_axes=(0, 1, 1), out_axes=1))
    if not bool((scan(lr, xs, ys) == scan_t(lr, x_t, y_t).T).all()):
        raise AssertionError("the runner over time-major data gave other losses")
    major = jax.jit(time_major)
    calls = [
        engine,
        lambda: jax.block_until_ready(draw(flat_keys)),
        lambda: jax.block_until_ready(one(flat_keys[0])),
        lambda: jax.block_until_ready(scan(lr, xs, ys)),
        lambda: jax.block_until_ready(scan_t(lr, x_t, y_t)),
        lambda: jax.block_until_ready(major(lr, x_t, y_t)),
    ]
    for call in calls:  # compiles
        call()
    names = [
        "engine_seconds",
        "draw_seconds",
        "draw_one_stream_seconds",
        "run_drawn_seconds",
        "run_time_major_seconds",
        "time_major_scan_seconds",
    ]
    return dict(zip(names, median_times(calls, repeats)))


def median_times(calls, repeats: int) -> list[float]:
    """Median seconds of each call, the calls alternated (the CPU's load drifts)."""
    times = [[] for _ in calls]
    for _ in range(repeats):
        for call, seen in zip(calls, times):
            start = time.perf_counter()
            call()
            seen.append(time.perf_counter() - start)
    return [statistics.median(t) for t in times]


def peak_rss_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 2**30


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a tiny smoke size")
    parser.add_argument("--out", type=Path, default=Path("results/bench_sweep"))
    parser.add_argument("--large", action="store_true", help="also run the chunked sweep")
    parser.add_argument("--large-streams", type=int, default=100_000)
    parser.add_argument("--large-budget", type=parse_bytes, default=parse_bytes("4G"))
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument(
        "--drawn-block", type=int, default=None, help="also run the stream drawn in blocks"
    )
    parser.add_argument("--profile", action="store_true", help="also time the engine's parts")
    args = parser.parse_args(argv)

    num_lr, num_seeds, num_steps = (4, 16, 500) if args.quick else (10, 100, 10_000)
    repeats = args.repeats or (3 if args.quick else 5)
    streams = num_lr * num_seeds
    fn = make_fn(num_steps)
    grid = {"learning_rate": np.geomspace(0.01, 1.0, num_lr).astype(np.float32)}
    key = jax.random.key(0)
    rows = []

    # --- engine vs hand-written jit(vmap(scan)) ---------------------------------------------
    def engine():
        res = sweep(fn, grid, num_seeds=num_seeds, key=key, options=QUIET, num_steps=num_steps)
        return res

    first = engine()  # compiles (and is timed apart)
    engine_compile = first.stats.compile_seconds
    assert first.stats.num_chunks == 1, first.stats

    seed_keys = jax.random.split(key, num_seeds)  # the engine's keys, in its (seed, lr) order
    flat_keys = jnp.repeat(seed_keys, num_lr, axis=0)
    flat_params = {"learning_rate": jnp.tile(jnp.asarray(grid["learning_rate"]), num_seeds)}
    batched = jax.jit(jax.vmap(fn, in_axes=(0, None, 0)))
    start = time.perf_counter()
    compiled = batched.lower(flat_params, None, flat_keys).compile()
    baseline_compile = time.perf_counter() - start

    def hand_written():
        return jax.tree.map(np.asarray, compiled(flat_params, None, flat_keys))

    # what one writes knowing that the stream depends on the seed alone: step sizes inside
    by_seed = jax.jit(jax.vmap(jax.vmap(fn, in_axes=(0, None, None)), in_axes=(None, None, 0)))
    lr_grid = {"learning_rate": jnp.asarray(grid["learning_rate"])}
    start = time.perf_counter()
    compiled_by_seed = by_seed.lower(lr_grid, None, seed_keys).compile()
    by_seed_compile = time.perf_counter() - start

    def hand_written_by_seed():
        return jax.tree.map(np.asarray, compiled_by_seed(lr_grid, None, seed_keys))

    engine_seconds, baseline_seconds, by_seed_seconds = median_times(
        [engine, hand_written, hand_written_by_seed], repeats
    )
    same = np.allclose(
        hand_written()["final"].reshape(num_seeds, num_lr), first.outputs["final"], rtol=1e-5
    )
    rows.append(
        {
            "case": f"engine: {streams} streams x {num_steps} steps, d={DIM}",
            "ojax_seconds": engine_seconds,
            "ojax_compile_seconds": engine_compile,
            "baseline": "hand-written jax.jit(jax.vmap(run)) of the same function",
            "baseline_seconds": baseline_seconds,
            "baseline_compile_seconds": baseline_compile,
            "ratio": baseline_seconds / engine_seconds,
            "steps_per_second": streams * num_steps / engine_seconds,
            "same_numbers": bool(same),
        }
    )
    rows.append(
        {
            "case": f"engine against a seed's stream drawn once: {streams} streams",
            "ojax_seconds": engine_seconds,
            "ojax_compile_seconds": engine_compile,
            "baseline": "hand-written jax.jit(jax.vmap(jax.vmap(run))): seeds outside, step "
            "sizes inside on the seed's key",
            "baseline_seconds": by_seed_seconds,
            "baseline_compile_seconds": by_seed_compile,
            "ratio": by_seed_seconds / engine_seconds,
            "steps_per_second": streams * num_steps / engine_seconds,
            "same_numbers": bool((hand_written_by_seed()["final"] == first.outputs["final"]).all()),
        }
    )

    parts = profile(flat_params, flat_keys, num_steps, engine, repeats) if args.profile else None

    # --- the same engine run, the stream drawn in blocks inside the scan -------------------
    if args.drawn_block:
        fn_drawn = make_fn(num_steps, args.drawn_block)

        def drawn():
            return sweep(
                fn_drawn, grid, num_seeds=num_seeds, key=key, options=QUIET,
                num_steps=num_steps, name="drawn",
            )  # fmt: skip

        first_drawn = drawn()
        drawn_seconds, materialised = median_times([drawn, engine], repeats)
        rows.append(
            {
                "case": f"drawn in blocks of {args.drawn_block}: {streams} streams x "
                f"{num_steps} steps, d={DIM}",
                "ojax_seconds": drawn_seconds,
                "ojax_compile_seconds": first_drawn.stats.compile_seconds,
                "baseline": "the engine run over the materialised stream",
                "baseline_seconds": materialised,
                "ratio": materialised / drawn_seconds,
                "steps_per_second": streams * num_steps / drawn_seconds,
                "same_numbers": bool(  # the labels of rows drawn alone: 1 ulp
                    np.allclose(first_drawn.outputs["final"], first.outputs["final"], rtol=1e-4)
                ),
            }
        )

    # --- chunked large sweep vs the unchunked run ------------------------------------------
    if args.large or args.quick:
        large = args.large_streams if args.large else 4 * streams
        budget = args.large_budget if args.large else None
        seeds = -(-large // num_lr)
        chunk = None if args.large else streams  # quick: force 4 chunks of the unchunked size
        before = median_times([engine], 1)[0]  # the unchunked run just before and after
        res = sweep(
            fn,
            grid,
            num_seeds=seeds,
            key=jax.random.key(1),
            options=EngineOptions(memory_budget=budget),
            chunk_size=chunk,
            num_steps=num_steps,
            name="chunked",
        )
        after = median_times([engine], 1)[0]
        adjacent = (before + after) / 2
        seconds = res.stats.wall_seconds - res.stats.compile_seconds
        per_1000 = seconds * streams / (seeds * num_lr)
        rows.append(
            {
                "case": f"chunked: {seeds * num_lr} streams x {num_steps} steps, d={DIM} "
                f"(seconds per {streams} streams)",
                "ojax_seconds": per_1000,
                "ojax_compile_seconds": res.stats.compile_seconds,
                "baseline": f"the unchunked {streams}-stream engine run (mean of the runs just "
                "before and after)",
                "baseline_seconds": adjacent,
                "ratio": adjacent / per_1000,
                "steps_per_second": seeds * num_lr * num_steps / seconds,
                "wall_seconds": res.stats.wall_seconds,
                "chunks": res.stats.num_chunks,
                "chunk_size": res.stats.chunk_size,
                "memory_budget_bytes": res.stats.memory_budget,
                "estimated_bytes_per_stream": res.stats.estimated_bytes_per_combination,
                "peak_rss_gib": peak_rss_gib(),
            }
        )

    info = environment_info()
    print(
        f"bench_sweep on {info['device']} ({info['num_devices']} device(s)), medians of {repeats}"
    )
    print(f"{'case':<70} {'ojax s':>9} {'baseline s':>11} {'ratio':>7} {'steps/s':>10}")
    for row in rows:
        print(
            f"{row['case']:<70} {row['ojax_seconds']:9.3f} {row['baseline_seconds']:11.3f} "
            f"{row['ratio']:7.3f} {row['steps_per_second']:10.3g}"
        )
        extra = {
            k: v
            for k, v in row.items()
            if k in ("ojax_compile_seconds", "chunks", "chunk_size", "peak_rss_gib")
        }
        print(f"{'':<70} {json.dumps(extra)}")
    args.out.mkdir(parents=True, exist_ok=True)
    report = {"benchmark": "sweep", "device": info["device"], "environment": info, "rows": rows}
    if parts is not None:
        print("profile (seconds):", json.dumps({k: round(v, 4) for k, v in parts.items()}))
        report["profile"] = parts
    (args.out / "bench.json").write_text(json.dumps(report, indent=2))
    print(f"wrote {args.out / 'bench.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
