"""Benchmark for one GPU: learner steps per second at 1e3 to 1e6 streams, and the main job.

    python scripts/bench_gpu.py [--quick] [--out DIR] [--streams N ...] [--steps T]
                                [--memory-fraction F] [--repeats K] [--no-main-job]
                                [--learners NAME ...]

Each learner runs ``S`` independent streams of ``T`` steps in one ``jax.jit(jax.vmap(...))``,
the data of each stream drawn inside the program from its key (nothing is materialised on the
host), float32, d = 10:

* ``OGD``: ``ogd_square`` (online gradient descent, square loss, linear regression stream);
* ``KT``: ``coin_betting_kt`` (Krichevsky-Trofimov coin betting, OCO on the unit ball);
* ``Aggressive``: ``aggressive_ons`` (Denevi et al. 2020 meta-learner, ONS meta step; task
  blocks of the registry's ``task_blocks`` stream, one learner step per online point);
* ``regularization path``: :func:`ojax.averaging.regularization_path` of one SGD pass, 10
  lambdas (``mode="stream"``; one step per example, each updating the 10 averages);
* ``kernel OTL``: ``otl`` (Zhao & Hoi 2010 homogeneous OTL in the pool-indexed Gram layout:
  each stream its own pool of ``T_k`` rows and its ``T_k x T_k`` Gram matrix).

Learner steps per second = ``S * T / seconds`` (the median of ``--repeats`` runs after the
compilation, which is timed apart). Sizes (the memory guard): ``T = 100`` steps (kernel OTL:
a pool of 32, its Gram matrix 4 KiB per stream), so 1e6 streams hold at most ~4.4 GiB of data
(OGD: 1e6 x 100 x 11 floats) and ~4 GiB of Gram matrices (OTL). A size whose estimate
(``jax.eval_shape`` of a stream's data and outputs, times 4 for the program's temporaries)
exceeds ``--memory-fraction`` (default 0.4) of the device's memory runs in equal chunks of
streams, one after another through the same compiled program; the row says how many. The main
job is ``ojax run denevi2020-synthetic`` in fresh processes: cold (an empty compilation cache)
and warm (the same cache again).

On a CPU the script still runs (the JSON says which backend: ``device``); without ``--streams``
it then stops at 1e4 streams (1e5 and 1e6 are a GPU's sizes) and says so. ``--quick``: 8 streams
of 16 steps (kernel pool 8), one repeat, the main job at ``--quick`` (the test of the script;
its time is the five compilations). ``--learners`` runs some of them only. Finishes in under 4
minutes on one GPU (20 compilations of small programs, ~1e8 learner steps per run at 1e6
streams, the main job cold and warm).

Writes DIR/bench.json (the format of docs/cli.md, plus ``steps_per_second`` per row and the
``main_job`` wall seconds) and DIR/bench.md (the table). Install JAX for a GPU first: ``pip
install -U "jax[cuda12]"``.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import jax
import jax.numpy as jnp

import ojax
from ojax import averaging
from ojax.app.output import environment_info
from ojax.envs import STREAMS

DIM = 10
STEPS, KERNEL_POOL = 100, 32
QUICK_STEPS, QUICK_POOL = 16, 8
GPU_STREAMS = (1_000, 10_000, 100_000, 1_000_000)
CPU_STREAMS = (1_000, 10_000)
QUICK_STREAMS = (8,)
REGPATH_LAMBDAS = 10
TARGET = 1e9  # learner steps per second at 1e5 streams (issue 25)
LEARNERS = {  # label -> registry name (None: the regularization path)
    "OGD": "ogd_square",
    "KT": "coin_betting_kt",
    "Aggressive": "aggressive_ons",
    "regularization path": None,
    "kernel OTL": "otl",
}


def stream_fn(label: str, steps: int, pool: int) -> tuple[Callable[[jax.Array], jax.Array], int]:
    """``key -> mean loss`` of one stream of ``label``, and its number of learner steps."""
    name = LEARNERS[label]
    if name is None:
        lams = jnp.geomspace(1e-3, 1e-1, REGPATH_LAMBDAS).astype(jnp.float32)

        def regpath(key):
            xs, ys = STREAMS["regression"](key, steps, DIM)[:2]
            path = averaging.regularization_path(
                xs, ys, 0.1, regularization=lams, mode="stream"
            ).geometric
            return jnp.mean((xs @ path.T - ys[:, None]) ** 2)

        return regpath, steps
    entry = ojax.LEARNERS[name]
    length = pool if entry.kind == "kernel" else steps
    learner, params, make = entry.make(DIM), entry.default_params(), entry.make_stream

    def one(key):
        trace = ojax.run_entry(entry, learner, params, make(key, length, DIM))
        return jnp.mean(trace.loss)

    return one, length


def bytes_per_stream(key: jax.Array, label: str, steps: int) -> int:
    """An estimate of one stream's memory: its data (the registry's stream) and outputs, x4."""
    name = LEARNERS[label]
    if name is None:
        data = jax.eval_shape(lambda k: STREAMS["regression"](k, steps, DIM)[:2], key)
    else:
        entry = ojax.LEARNERS[name]
        data = jax.eval_shape(lambda k: entry.make_stream(k, steps, DIM), key)
    size = sum(math.prod(a.shape) * a.dtype.itemsize for a in jax.tree.leaves(data))
    return 4 * (size + 8 * steps)  # + the trace (loss, prediction), x4 for temporaries


def device_memory() -> int | None:
    """The first device's memory in bytes, when the backend says (GPUs do; CPUs do not)."""
    stats = jax.devices()[0].memory_stats() or {}
    return stats.get("bytes_limit")


def bench_learner(label, streams, steps, pool, repeats, budget) -> dict:
    """One row: ``streams`` streams of ``label`` in chunks within ``budget`` bytes."""
    fn, length = stream_fn(label, steps, pool)
    key = jax.random.key(0)
    per_stream = bytes_per_stream(key, label, length)
    chunk = streams
    while chunk > 1 and chunk * per_stream > budget:
        chunk //= 10 if chunk % 10 == 0 else 2
    chunks = -(-streams // chunk)
    batched = jax.jit(jax.vmap(fn))
    keys = [jax.random.split(jax.random.fold_in(key, c), chunk) for c in range(chunks)]
    start = time.perf_counter()
    compiled = batched.lower(keys[0]).compile()
    compile_seconds = time.perf_counter() - start

    def once() -> float:
        start = time.perf_counter()
        outs = [compiled(k) for k in keys]
        jax.block_until_ready(outs)
        finite = all(bool(jnp.all(jnp.isfinite(o))) for o in outs)
        if not finite:
            raise RuntimeError(f"{label}: a stream's mean loss is not finite")
        return time.perf_counter() - start

    once()  # the first run (allocations, transfers) is not timed
    seconds = statistics.median(once() for _ in range(repeats))
    rate = chunks * chunk * length / seconds
    return {
        "case": f"{label}: {streams:.0e} streams x {length} steps, d={DIM}",
        "learner": label,
        "registry_name": LEARNERS[label] or "averaging.regularization_path",
        "streams": chunks * chunk,
        "steps": length,
        "chunks": chunks,
        "estimated_bytes_per_stream": per_stream,
        "ojax_seconds": seconds,
        "ojax_compile_seconds": compile_seconds,
        "steps_per_second": rate,
    }


def main_job(quick: bool) -> dict:
    """Wall seconds of ``ojax run denevi2020-synthetic`` in fresh processes, cold and warm."""
    out: dict = {"experiment": "denevi2020-synthetic", "quick": quick}
    with tempfile.TemporaryDirectory(prefix="ojax-bench-gpu-") as tmp:
        cache = Path(tmp) / "cache"
        for mode in ("cold", "warm"):
            cmd = [sys.executable, "-m", "ojax.app.cli", "run", "denevi2020-synthetic", "--quiet"]
            cmd += ["--out", str(Path(tmp) / mode), "--compile-cache", str(cache)]
            cmd += ["--quick"] if quick else []
            start = time.perf_counter()
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
            out[f"{mode}_seconds"] = time.perf_counter() - start
            if done.returncode != 0:
                out["error"] = done.stderr[-2000:]
                return out
            config = json.loads((Path(tmp) / mode / "config.json").read_text())
            out[f"{mode}_peak_rss_gib"] = config.get("peak_rss_gib")
    return out


def markdown(report: dict) -> str:
    """The table: learner steps per second by learner (rows) and streams (columns)."""
    sizes = sorted({r["streams"] for r in report["rows"]})
    lines = [
        f"Learner steps per second on {report['device']} (float32, d = {DIM}; compile apart)",
        "",
        "| learner | steps/stream | " + " | ".join(f"{s:.0e} streams" for s in sizes) + " |",
        "|---|---|" + "---|" * len(sizes),
    ]
    for label in LEARNERS:
        rows = {r["streams"]: r for r in report["rows"] if r["learner"] == label}
        if not rows:
            continue
        steps = next(iter(rows.values()))["steps"]
        cells = [f"{rows[s]['steps_per_second']:.3g}" if s in rows else "-" for s in sizes]
        lines.append(f"| {label} | {steps} | " + " | ".join(cells) + " |")
    job = report.get("main_job")
    if job:
        lines.append("")
        if "error" in job:
            lines.append(f"main job `ojax run {job['experiment']}`: failed ({job['error'][-200:]})")
        else:
            quick = " --quick" if job["quick"] else ""
            lines.append(
                f"main job `ojax run {job['experiment']}{quick}`: cold {job['cold_seconds']:.1f} "
                f"s, warm {job['warm_seconds']:.1f} s (fresh processes)"
            )
    if report.get("note"):
        lines += ["", report["note"]]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes (the script's test)")
    parser.add_argument("--out", type=Path, default=Path("results/bench_gpu"))
    parser.add_argument("--streams", type=int, nargs="+", default=None, help="stream counts")
    parser.add_argument("--steps", type=int, default=None, help="steps per stream")
    parser.add_argument("--memory-fraction", type=float, default=0.4)
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--no-main-job", action="store_true", help="skip the main job's timing")
    parser.add_argument("--learners", nargs="+", choices=list(LEARNERS), default=list(LEARNERS))
    args = parser.parse_args(argv)
    if not 0 < args.memory_fraction <= 1:
        parser.error(f"--memory-fraction must be in (0, 1], got {args.memory_fraction}")
    if args.streams is not None and min(args.streams) < 1:
        parser.error(f"--streams must be positive integers, got {args.streams}")
    info = environment_info()
    backend = jax.default_backend()
    note = ""
    if args.streams:
        sizes = tuple(args.streams)
    elif args.quick:
        sizes = QUICK_STREAMS
    elif backend == "gpu":
        sizes = GPU_STREAMS
    else:
        sizes = CPU_STREAMS
        note = f"backend {backend}: no GPU, so 1e5 and 1e6 streams were not run (--streams)"
        print(f"bench_gpu: {note}", flush=True)
    steps = args.steps or (QUICK_STEPS if args.quick else STEPS)
    pool = QUICK_POOL if args.quick else KERNEL_POOL
    repeats = args.repeats or (1 if args.quick else 3)
    memory = device_memory()
    budget = int(args.memory_fraction * memory) if memory else 2**31  # CPU: 2 GiB chunks
    print(f"bench_gpu on {info['device']} (backend {backend}), budget {budget / 2**30:.1f} GiB")
    rows = []
    for label in args.learners:
        for streams in sizes:
            row = bench_learner(label, streams, steps, pool, repeats, budget)
            rows.append(row)
            print(
                f"{row['case']:<50} {row['steps_per_second']:10.3g} steps/s "
                f"({row['ojax_seconds']:.3f} s, compile {row['ojax_compile_seconds']:.1f} s, "
                f"{row['chunks']} chunk(s))",
                flush=True,
            )
    report = {
        "benchmark": "gpu",
        "device": info["device"],
        "backend": backend,
        "environment": info,
        "device_memory_bytes": memory,
        "memory_budget_bytes": budget,
        "target_steps_per_second_at_1e5_streams": TARGET,
        "rows": rows,
        "note": note,
    }
    if not args.no_main_job:
        report["main_job"] = main_job(args.quick)
        print(f"main job: {json.dumps(report['main_job'])[:300]}", flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "bench.json").write_text(json.dumps(report, indent=2))
    (args.out / "bench.md").write_text(markdown(report))
    print(markdown(report))
    print(f"wrote {args.out / 'bench.json'} and {args.out / 'bench.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
