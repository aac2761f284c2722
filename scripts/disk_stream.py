"""A stream longer than memory, from disk, in bounded memory (issue 21, item 5).

    python scripts/disk_stream.py [--n 10000000] [--d 100] [--block 65536] [--dir DIR]
                                  [--out FILE]

Writes a float32 linear-regression stream of ``n`` rows and ``d`` features (``n = 1e7, d =
100``: 4 GB) as ``xs.npy`` / ``ys.npy`` in a temporary folder (in chunks: never whole in
memory; removed at the end), then runs it block by block through :func:`ojax.run`
(:func:`ojax.datasets.streaming.run_blocks`) for two learners: SGD carrying a geometric average
(:mod:`ojax.averaging`) and OGD as a linear predictor. Reports, per phase, the wall time, the
throughput (rows per second, compilation included) and the peak resident memory of the process
(``ru_maxrss``); target: peak <= 1 GiB at the full size. Prints a table and writes a JSON.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

import ojax
from ojax import averaging, losses, oco
from ojax.datasets.streaming import BlockReader, run_blocks
from ojax.envs.streams import linear_regression_rows

GiB = 2**30


def peak_rss() -> int:
    """The process's peak resident set so far, in bytes (Linux: ``ru_maxrss`` is in KiB)."""
    scale = 1 if sys.platform == "darwin" else 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale


def current_rss() -> int:
    """The resident set now, in bytes (``/proc/self/status``; 0 where there is none)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _npy_writer(path: Path, shape: tuple[int, ...]):
    """An open ``.npy`` file of float32 ``shape`` whose rows are appended with ``write``."""
    f = open(path, "wb")
    header = {"descr": np.dtype(np.float32).str, "fortran_order": False, "shape": shape}
    np.lib.format.write_array_header_2_0(f, header)
    return f


def write_stream(folder: Path, n: int, d: int, chunk: int) -> tuple[Path, Path]:
    """``xs.npy (n, d)`` and ``ys.npy (n,)`` float32, drawn and written ``chunk`` rows at a
    time (:func:`~ojax.envs.streams.linear_regression_rows`: the rows of one stream)."""
    key = jax.random.key(0)
    draw = jax.jit(lambda start, size: linear_regression_rows(key, start, size, d),
                   static_argnums=1)  # fmt: skip
    x_path, y_path = folder / "xs.npy", folder / "ys.npy"
    with _npy_writer(x_path, (n, d)) as fx, _npy_writer(y_path, (n,)) as fy:
        for start in range(0, n, chunk):
            xs, ys = draw(start, min(chunk, n - start))
            fx.write(np.asarray(xs, np.float32).tobytes())
            fy.write(np.asarray(ys, np.float32).tobytes())
    return x_path, y_path


def learners(d: int) -> dict:
    w0 = jnp.zeros(d, jnp.float32)
    sgd = averaging.least_squares_sgd(w0, averaging.geometric_averager())
    sgd_params = averaging.AveragedParams(
        averaging.SGDParams(jnp.float32(0.05)), averaging.GeometricParams(jnp.float32(-1e-4))
    )
    ogd = ojax.linear_predictor(oco.ogd("none"), losses.square, w0)
    ogd_params = oco.OGDParams(jnp.float32(0.05), jnp.float32(1.0))
    return {
        "averaging (SGD + geometric average)": (sgd, sgd_params),
        "ojax.run (OGD)": (ogd, ogd_params),
    }


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000_000, help="rows of the stream")
    parser.add_argument("--d", type=int, default=100, help="features per row")
    parser.add_argument("--block", type=int, default=1 << 16, help="rows per ojax.run call")
    parser.add_argument("--dir", default=None, help="parent of the temporary folder")
    parser.add_argument("--out", default=None, help="write the JSON here")
    args = parser.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="ojax-disk-stream-", dir=args.dir))
    rows = []
    try:
        t0 = time.perf_counter()
        x_path, y_path = write_stream(folder, args.n, args.d, args.block)
        size = x_path.stat().st_size + y_path.stat().st_size
        rows.append(("write", time.perf_counter() - t0, args.n, peak_rss(), None))
        reader = BlockReader.from_npy(x_path, y_path)
        for name, (learner, params) in learners(args.d).items():
            t0 = time.perf_counter()
            state, trace = run_blocks(learner, params, reader, losses.square, block=args.block)
            jax.block_until_ready(state)
            seconds = time.perf_counter() - t0
            mean = float(np.mean(trace.loss[-min(args.n, 10_000) :], dtype=np.float64))
            rows.append((name, seconds, args.n, peak_rss(), mean))
            del state, trace
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    report = {
        "n": args.n,
        "d": args.d,
        "block": args.block,
        "bytes_on_disk": size,
        "target_peak_rss_bytes": GiB,
        "devices": [str(x) for x in jax.devices()],
        "phases": [
            {
                "phase": p,
                "seconds": s,
                "rows_per_second": n / s,
                "peak_rss_bytes": r,
                "final_mean_loss": m,
            }  # fmt: skip
            for p, s, n, r, m in rows
        ],
        "current_rss_bytes": current_rss(),
    }
    print(f"stream n={args.n} d={args.d} float32: {size / GiB:.3g} GiB on disk, block {args.block}")
    print(f"{'phase':40s} {'seconds':>9s} {'rows/s':>12s} {'peak RSS':>10s} {'mean loss':>10s}")
    for p in report["phases"]:
        loss = "" if p["final_mean_loss"] is None else f"{p['final_mean_loss']:.4g}"
        print(
            f"{p['phase']:40s} {p['seconds']:9.2f} {p['rows_per_second']:12.3g} "
            f"{p['peak_rss_bytes'] / GiB:8.3f} G {loss:>10s}"
        )
    peak = max(p["peak_rss_bytes"] for p in report["phases"])
    print(f"peak RSS {peak / GiB:.3f} GiB (target <= 1 GiB): {'met' if peak <= GiB else 'MISSED'}")
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1))
    return report


if __name__ == "__main__":
    main()
