"""Benchmark of a multi-process sweep: the same chunked sweep on 1 process and on 2 processes.

    python scripts/bench_distributed.py [--quick] [--out DIR] [--streams S] [--steps T]
                                        [--chunk-size C] [--cores 0,1] [--repeats K]

Work: online gradient descent as a linear predictor on the square loss over a synthetic linear
regression stream drawn from each stream's key (d = 10), returning the final average loss and a
100-point curve per stream: S streams (10 step sizes x S/10 seeds) x T steps, S x T learner
steps in all (default 1000 x 10^5 = 10^8), in chunks of C streams per device (default 25),
stored under DIR.

It runs the sweep in 1 process pinned to the first core of ``--cores`` and in 2 processes,
``--repeats`` times each (alternated; the best time of each is kept), the 2 processes on a
localhost coordinator (``ojax.sweep.distributed``: one mesh over both processes' devices, each
chunk one program over both, its outputs all-gathered, process 0 writing), each pinned to its
own core (``taskset``; XLA single-threaded: ``--xla_cpu_multi_thread_eigen=false
intra_op_parallelism_threads=1``). Both runs hold C streams per device in a chunk (2C per chunk
over 2 processes), so each device runs the same program and the results are equal bit for bit.
It reports each one's wall time (the sweep call, compile included; and the whole process), the
scaling efficiency ``T_1 / (2 T_2)`` (target >= 0.85 at >= 10^8 steps) and whether the two
results are equal bit for bit. The load average of the machine is recorded: the two processes
need two idle cores. The CPU seconds of the sweep call in each process are reported too;
``cpu_efficiency`` (1-process CPU time over the 2 processes' total) shows what the split costs
whatever the load (it includes compiling twice and the processes' waits for each other, which
spin). Writes DIR/bench.json (default DIR: results/bench_distributed).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DIM, NUM_LR = 10, 10
XLA_ONE_CORE = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"


def worker(args: argparse.Namespace) -> int:
    """One process: (joins the run,) runs the sweep, prints its stats as one JSON line."""
    from ojax.sweep import distributed

    if args.num_processes > 1:
        distributed.initialize(
            f"localhost:{args.port}", args.num_processes, args.process_id, peer_timeout=120
        )
    import jax
    import jax.numpy as jnp

    from ojax import linear_predictor, losses, oco, run
    from ojax.envs.streams import linear_regression_stream
    from ojax.sweep import EngineOptions, sweep

    steps = args.steps
    predictor = linear_predictor(oco.ogd("none"), losses.square, np.zeros(DIM, np.float32))
    marks = np.unique(np.linspace(1, steps, 100).round().astype(np.int64))

    def stream_run(params, data, key):
        xs, ys = linear_regression_stream(key, steps, DIM)
        p = oco.OGDParams(params["learning_rate"], jnp.float32(1.0))
        _, trace = run(predictor, p, xs, ys, losses.square)
        curve = jnp.cumsum(trace.loss)[jnp.asarray(marks - 1)] / jnp.asarray(marks, jnp.float32)
        return {"final": curve[-1], "curve": curve}

    grid = {"learning_rate": np.geomspace(0.001, 0.1, NUM_LR).astype(np.float32)}
    cpu = time.process_time()
    res = sweep(
        stream_run,
        grid,
        num_seeds=args.streams // NUM_LR,
        key=jax.random.key(0),
        chunk_size=args.chunk_size * args.num_processes,
        out_dir=args.store,
        options=EngineOptions(quiet=True),
        num_steps=steps,
        name="bench",
    )
    if jax.process_index() == 0:
        np.savez(Path(args.store) / f"outputs-{args.num_processes}.npz", **res.outputs)
    stats = res.stats
    print(
        json.dumps(
            {
                "process": jax.process_index(),
                "wall_seconds": stats.wall_seconds,
                "compile_seconds": stats.compile_seconds,
                "cpu_seconds": time.process_time() - cpu,
                "chunks_computed": stats.chunks_computed,
                "num_chunks": stats.num_chunks,
            }
        ),
        flush=True,
    )
    return 0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


def _launch(args: argparse.Namespace, count: int, cores: list[int], store: Path) -> dict:
    """Runs the sweep in ``count`` processes; their stats and the wall time of the launch."""
    shutil.rmtree(store, ignore_errors=True)
    env = dict(os.environ, XLA_FLAGS=XLA_ONE_CORE, OJAX_COMPILATION_CACHE="off")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    port, procs = _free_port(), []
    pin = shutil.which("taskset")
    start = time.perf_counter()
    for pid in range(count):
        command = [sys.executable, __file__, "--worker", "--store", str(store)]
        command += ["--streams", str(args.streams), "--steps", str(args.steps)]
        command += ["--chunk-size", str(args.chunk_size), "--num-processes", str(count)]
        command += ["--process-id", str(pid), "--port", str(port)]
        if pin:
            command = [pin, "-c", str(cores[pid]), *command]
        procs.append(subprocess.Popen(command, env=env, stdout=subprocess.PIPE, text=True))
    stats = []
    for proc in procs:
        out, _ = proc.communicate(timeout=3600)
        if proc.returncode != 0:
            raise SystemExit(f"a benchmark process exited with {proc.returncode}")
        stats.append(json.loads(out.strip().splitlines()[-1]))
    return {"stats": stats, "process_seconds": time.perf_counter() - start, "pinned": bool(pin)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a tiny smoke size")
    parser.add_argument("--out", type=Path, default=Path("results/bench_distributed"))
    parser.add_argument("--streams", type=int, default=1000, help="streams (a multiple of 10)")
    parser.add_argument("--steps", type=int, default=100_000, help="steps per stream")
    parser.add_argument("--chunk-size", type=int, default=25, help="streams per chunk per device")
    parser.add_argument("--cores", default="0,1", help="the two cores to pin the processes to")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each; the best is kept")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--store", help=argparse.SUPPRESS)
    parser.add_argument("--num-processes", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--process-id", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return worker(args)
    if args.quick:
        args.streams, args.steps, args.chunk_size = 80, 2000, 5
    cores = [int(c) for c in args.cores.split(",")]
    args.out.mkdir(parents=True, exist_ok=True)
    load_before = os.getloadavg()
    runs = []
    for _ in range(args.repeats):  # alternated; the best of each (the machine's load drifts)
        first = _launch(args, 1, cores, args.out / "store-1")
        runs.append((first, _launch(args, 2, cores, args.out / "store-2")))
    load_after = os.getloadavg()

    def wall(run: dict) -> float:
        return max(s["wall_seconds"] for s in run["stats"])

    one = min((r[0] for r in runs), key=wall)
    two = min((r[1] for r in runs), key=wall)
    a = np.load(args.out / "store-1" / "outputs-1.npz")
    b = np.load(args.out / "store-2" / "outputs-2.npz")
    same = sorted(a.files) == sorted(b.files) and all(np.array_equal(a[k], b[k]) for k in a.files)
    t1 = one["stats"][0]["wall_seconds"]
    t2 = max(s["wall_seconds"] for s in two["stats"])
    c1 = one["stats"][0]["compile_seconds"]
    c2 = max(s["compile_seconds"] for s in two["stats"])
    steps = args.streams * args.steps
    case = f"{args.streams} streams x {args.steps} steps = {steps:.3g} learner steps, d={DIM}"
    row = {
        "case": f"2 processes (1 core each): {case}",
        "ojax_seconds": t2,
        "ojax_compile_seconds": c2,
        "baseline": "the same sweep in 1 process on 1 core",
        "baseline_seconds": t1,
        "baseline_compile_seconds": c1,
        "ratio": t1 / t2,
        "scaling_efficiency": t1 / (2 * t2),
        "scaling_efficiency_without_compile": (t1 - c1) / (2 * (t2 - c2)),
        "cpu_seconds_1": one["stats"][0]["cpu_seconds"],
        "cpu_seconds_2": [s["cpu_seconds"] for s in two["stats"]],
        "cpu_efficiency": one["stats"][0]["cpu_seconds"]
        / sum(s["cpu_seconds"] for s in two["stats"]),
        "learner_steps": steps,
        "steps_per_second": steps / t2,
        "chunks_1": one["stats"][0]["num_chunks"],
        "chunks_2": two["stats"][0]["num_chunks"],
        "process_seconds_1": one["process_seconds"],
        "process_seconds_2": two["process_seconds"],
        "same_numbers": bool(same),
        "repeats": args.repeats,
        "all_seconds_1": [round(wall(r[0]), 2) for r in runs],
        "all_seconds_2": [round(wall(r[1]), 2) for r in runs],
    }
    from ojax.app.output import environment_info

    command = "python scripts/bench_distributed.py --out results/bench_distributed"
    command += " --quick" if args.quick else f" --streams {args.streams} --steps {args.steps}"
    command += f" --chunk-size {args.chunk_size}" if not args.quick else ""
    command += f" --repeats {args.repeats}"
    result = {
        "benchmark": "distributed",
        "command": command,
        **environment_info(),
        "rows": [row],
        "machine_load": {
            "load_average_before": round(load_before[0], 2),
            "load_average_after": round(load_after[0], 2),
            "cpus": os.cpu_count(),
            "pinned": one["pinned"],
        },
    }
    (args.out / "bench.json").write_text(json.dumps(result, indent=1) + "\n")
    print(
        f"1 process: {t1:.2f} s (compile {c1:.2f}) | 2 processes: {t2:.2f} s (compile {c2:.2f})"
        f" | efficiency {row['scaling_efficiency']:.3f} (without compile "
        f"{row['scaling_efficiency_without_compile']:.3f}) | equal results: {same} | "
        f"{steps:.3g} steps | load average {load_before[0]:.1f} -> {load_after[0]:.1f}"
    )
    print(f"wrote {args.out / 'bench.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
