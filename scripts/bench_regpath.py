"""Benchmark: the regularization path of 100 lambdas from ONE SGD pass.

    python scripts/bench_regpath.py [--quick] [--out DIR] [--large N]

For n = 1e5, d = 100, 100 lambdas, in float32 and float64 (``--quick``: n = 2000, d = 10, 20
lambdas): the path by store + product and by block streaming, against 100 serial regularized SGD
runs (one jitted call each), 100 regularized runs batched in one scan, and a NumPy
implementation (a per-sample SGD loop, then weights @ iterates); and against one SGD pass
(storing / not storing) for the cost targets, both through the public entry points (which
validate their input) and as the jitted cores alone (the same public functions under
``jax.jit``, where the input checks are skipped). Medians of several runs after compilation;
compile time apart. Writes DIR/bench.json (the format of docs/cli.md).

``--large N`` also streams a generated float32 problem with n = N, d = 1000 (never stored).
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
import time
from pathlib import Path

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from ojax import averaging  # noqa: E402
from ojax.app.output import environment_info  # noqa: E402
from ojax.averaging.path import PRODUCT_BLOCK, default_block_size  # noqa: E402
from ojax.envs import regression  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
import reference_averaging as ref  # noqa: E402


def timed(fn, repeats: int) -> tuple[float, float]:
    """(first call seconds, median of ``repeats`` later calls)."""
    start = time.perf_counter()
    jax.block_until_ready(fn())
    first = time.perf_counter() - start
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(fn())
        times.append(time.perf_counter() - start)
    return first, float(np.median(times))


def jitted_cores(n: int, block_size: int) -> dict:
    """The public entry points under ``jax.jit``: their input checks are skipped on tracers, so
    these are the jitted cores alone (what the cost targets are about)."""
    path_of_stored = functools.partial(averaging.path_of_iterates, chunk_size=PRODUCT_BLOCK)

    def stream(xs, ys, eta, w0, log_discount):
        return averaging.stream_path(
            averaging.array_blocks,
            (xs, ys),
            n,
            eta,
            log_discount=log_discount,
            initial_point=w0,
            block_size=block_size,
        ).geometric

    return {
        "sgd_store": jax.jit(averaging.sgd_iterates),
        "sgd_nostore": jax.jit(averaging.sgd_final),
        "product": jax.jit(lambda ws, log_discount: path_of_stored(ws, log_discount=log_discount)),
        "stream": jax.jit(stream),
        "ridge_runs": jax.jit(averaging.ridge_sgd_runs),
    }


def time_cases(dtype, n: int, d: int, num: int, repeats: int) -> dict:
    """Median seconds and compile seconds of every case, by name."""
    problem = regression.well_conditioned_problem(jax.random.key(0), d, dtype=dtype)
    xs, ys = regression.sample(jax.random.key(1), problem, n)
    eta = jnp.asarray(0.5 / d, dtype)
    lams = jnp.asarray(np.logspace(-4, 1, num), dtype)
    w0 = jnp.zeros(d, dtype)
    gamma = averaging.linked_step_size(eta, lams)
    log_discount = averaging.log_discount_from_regularization(eta, lams)
    core = jitted_cores(n, default_block_size(n))
    results = {}

    def measure(name, fn, reps=repeats):
        first, median = timed(fn, reps)
        results[name] = (median, max(first - median, 0.0))
        label = f"  {jnp.dtype(dtype).name:8s} {name:28s} {median:9.4f} s"
        print(f"{label}  (compile ~{first - median:.2f} s)")

    # public entry points (both validate their input the same way: a like-for-like comparison)
    measure("sgd_store", lambda: averaging.sgd_iterates(xs, ys, eta, w0))
    measure("sgd_nostore", lambda: averaging.sgd_final(xs, ys, eta, w0))
    # the jitted cores without input validation
    measure("core_sgd_store", lambda: core["sgd_store"](xs, ys, eta, w0))
    measure("core_sgd_nostore", lambda: core["sgd_nostore"](xs, ys, eta, w0))
    measure(
        "core_store_product",
        lambda: core["product"](core["sgd_store"](xs, ys, eta, w0), log_discount),
    )
    measure("core_stream", lambda: core["stream"](xs, ys, eta, w0, log_discount))
    for mode in ("product", "stream"):
        measure(
            f"path_{mode}",
            lambda m=mode: (
                averaging.regularization_path(xs, ys, eta, regularization=lams, mode=m).geometric
            ),
        )
    measure("batched_runs", lambda: core["ridge_runs"](xs, ys, gamma, lams, w0))

    def serial():
        runs = core["ridge_runs"]
        return [runs(xs, ys, gamma[i : i + 1], lams[i : i + 1], w0) for i in range(num)]

    measure("serial_runs", serial, reps=max(1, repeats // 2))
    return results


def numpy_baseline(dtype, n: int, d: int, num: int, numpy_repeats: int) -> tuple[float, float]:
    """(median seconds of the NumPy path, max relative difference of the streamed path to it)."""
    problem = regression.well_conditioned_problem(jax.random.key(0), d, dtype=dtype)
    xs, ys = regression.sample(jax.random.key(1), problem, n)
    eta = jnp.asarray(0.5 / d, dtype)
    lams = jnp.asarray(np.logspace(-4, 1, num), dtype)
    xs_np, ys_np = np.asarray(xs, np.float64), np.asarray(ys, np.float64)
    rhos = 1.0 / (1.0 + float(eta) * np.asarray(lams, np.float64))
    times = []
    for _ in range(numpy_repeats):
        start = time.perf_counter()
        np_path = ref.path_numpy(xs_np, ys_np, float(eta), rhos)
        times.append(time.perf_counter() - start)
    ours = np.asarray(
        averaging.regularization_path(xs, ys, eta, regularization=lams, mode="stream").geometric,
        np.float64,
    )
    err = float(np.max(np.abs(ours - np_path)) / np.max(np.abs(np_path)))
    return float(np.median(times)), err


PAIRS = [
    ("path_stream", "serial_runs", "100 serial regularized SGD runs"),
    ("path_product", "serial_runs", "100 serial regularized SGD runs"),
    ("path_stream", "batched_runs", "100 regularized runs batched in one scan"),
    ("path_product", "batched_runs", "100 regularized runs batched in one scan"),
    ("path_stream", "numpy_path", "NumPy per-sample SGD loop + weights @ iterates"),
    ("path_product", "numpy_path", "NumPy per-sample SGD loop + weights @ iterates"),
    ("path_product", "sgd_store", "one storing SGD pass (target ratio >= 1/1.5)"),
    ("path_stream", "sgd_nostore", "one non-storing SGD pass (target ratio >= 1/6)"),
    ("core_store_product", "core_sgd_store", "core: one storing pass (target >= 1/1.5)"),
    ("core_stream", "core_sgd_nostore", "core: one non-storing pass (target >= 1/6)"),
]


def bench_dtype(dtype, n: int, d: int, num: int, repeats: int, numpy_repeats: int) -> list[dict]:
    results = time_cases(dtype, n, d, num, repeats)
    numpy_seconds, err = numpy_baseline(dtype, n, d, num, numpy_repeats)
    results["numpy_path"] = (numpy_seconds, 0.0)
    name = jnp.dtype(dtype).name
    print(
        f"  {name:8s} numpy_path {numpy_seconds:9.4f} s; max rel. difference of the paths {err:.2e}"
    )
    rows = []
    for ours_name, base_name, label in PAIRS:
        o, oc = results[ours_name]
        b, _ = results[base_name]
        rows.append(
            {
                "case": f"{ours_name} {name} n={n} d={d} L={num}",
                "ojax_seconds": o,
                "baseline": label,
                "baseline_seconds": b,
                "ratio": b / o,
                "ojax_compile_seconds": oc,
                "dtype": name,
                "numpy_max_rel_difference": err,
            }
        )
    return rows


def bench_large(n: int, d: int = 1000, num: int = 100, block_size: int = 512) -> dict:
    """Streams a generated float32 problem (diagonal Sigma) of n steps: nothing is stored."""
    problem = regression.well_conditioned_problem(
        jax.random.key(0), d, rotate=False, dtype=jnp.float32
    )

    def block_fn(data, b, size):
        return regression.sample_block(data[0], data[1], b, size)

    lams = jnp.asarray(np.logspace(-4, 1, num), jnp.float32)
    eta = jnp.float32(0.5 / d)
    log_discount = averaging.log_discount_from_regularization(eta, lams)
    start = time.perf_counter()
    res = averaging.stream_path(
        block_fn,
        (jax.random.key(1), problem),
        n,
        eta,
        log_discount=log_discount,
        initial_point=jnp.zeros(d, jnp.float32),
        block_size=block_size,
    )
    jax.block_until_ready(res.geometric)
    seconds = time.perf_counter() - start
    risk = np.asarray(regression.excess_risk(res.geometric, problem))
    out = {
        "n": n,
        "d": d,
        "num_lambdas": num,
        "seconds_including_compile": seconds,
        "finite": bool(np.all(np.isfinite(res.geometric))),
        "best_excess_risk": float(risk.min()),
        "extrapolated_seconds_for_1e7": seconds * 1e7 / n,
    }
    print(
        f"  large stream n={n} d={d}: {seconds:.1f} s; all finite: {out['finite']}; "
        f"extrapolated to n=1e7: {out['extrapolated_seconds_for_1e7']:.0f} s"
    )
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny smoke size")
    parser.add_argument("--out", type=Path, default=Path("results/bench_regpath"))
    parser.add_argument("--large", type=int, default=0, help="also stream n=LARGE, d=1000")
    args = parser.parse_args(argv)
    n, d, num, repeats, np_reps = (2000, 10, 20, 3, 1) if args.quick else (100_000, 100, 100, 5, 1)
    rows = []
    for dtype in (jnp.float32, jnp.float64):
        rows += bench_dtype(dtype, n, d, num, repeats, np_reps)
    print(f"\n{'case':40s} {'ojax s':>9s} {'baseline s':>11s} {'ratio':>7s}  baseline")
    for r in rows:
        print(
            f"{r['case']:40s} {r['ojax_seconds']:9.4f} {r['baseline_seconds']:11.4f} "
            f"{r['ratio']:7.2f}  {r['baseline']}"
        )
    payload = {"benchmark": "regpath", **environment_info(), "rows": rows}
    payload["device"] = environment_info()["device"]
    if args.large:
        payload["large_stream"] = bench_large(args.large)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "bench.json").write_text(json.dumps(payload, indent=2))
    print(f"wrote {args.out / 'bench.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
