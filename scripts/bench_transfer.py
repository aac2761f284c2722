"""Benchmark: ojax's online transfer learners against a plain NumPy per-sample loop.

For each homogeneous dataset, the four methods of Zhao & Hoi's Table 2 (PA, PAIO, OTL(fixed),
OTL) run over 1 and 20 random permutations of the target stream: ojax (the four methods in ONE
jitted scan, ``homogeneous_methods`` in the pool-indexed Gram mode, the permutations in one vmap,
the Gram matrices shared) against a NumPy loop of the same algorithms that reads the same
precomputed Gram matrix one sample at a time (``K[i, SV] @ alpha``, as the authors' MATLAB
toolbox does). Times are medians after compilation; compile time is reported apart. A last row
times newsgroup4 end to end (load, Gram, compile, 4 methods x 20 permutations) against the NumPy
pipeline. ojax computes in float32 (JAX's default) and the NumPy loops in float64; ``--x64``
runs ojax in float64 too (the dtype is recorded in each row).

    python scripts/bench_transfer.py [--quick] [--x64] [--out DIR]
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import statistics
import time
from pathlib import Path

import jax
import numpy as np

from ojax import transfer
from ojax.app.output import environment_info
from ojax.app.timing import compile_and_run
from ojax.datasets import transfer as transfer_data
from ojax.experiments import zhao_hoi2010

# ----------------------------------------------------------------- the NumPy baseline


def _pa_loop(gram, y, order, C, offsets=None):
    """Kernel PA-I over ``order`` reading the Gram matrix (``offsets``: PAIO's h)."""
    n = len(order)
    sv = np.zeros(n, np.int64)
    alpha = np.zeros(n)
    m = 0
    mistakes = 0
    for i in order:
        f = alpha[:m] @ gram[i, sv[:m]]
        if offsets is not None:
            f += offsets[i]
        yi = y[i]
        if (1.0 if f >= 0 else -1.0) != yi:
            mistakes += 1
        loss = 1.0 - yi * f
        if loss > 0:
            sv[m] = i
            alpha[m] = yi * min(C, loss / gram[i, i])
            m += 1
    return mistakes, m


def _otl_loop(gram, y, order, C, h, eta=0.5, fixed=False):
    n = len(order)
    sv = np.zeros(n, np.int64)
    alpha = np.zeros(n)
    m = 0
    w1 = w2 = 0.5
    mistakes = 0
    for i in order:
        f = alpha[:m] @ gram[i, sv[:m]]
        yi = y[i]
        ph = min(1.0, max(0.0, (h[i] + 1) / 2))
        pf = min(1.0, max(0.0, (f + 1) / 2))
        s = w1 * ph + w2 * pf - 0.5
        if (1.0 if s >= 0 else -1.0) != yi:
            mistakes += 1
        if not fixed:
            py = (yi + 1) / 2
            w1 *= math.exp(-eta * (ph - py) ** 2)
            w2 *= math.exp(-eta * (pf - py) ** 2)
            total = w1 + w2
            w1, w2 = w1 / total, w2 / total
        loss = 1.0 - yi * f
        if loss > 0:
            sv[m] = i
            alpha[m] = yi * min(C, loss / gram[i, i])
            m += 1
    return mistakes, m


def _direct_loop(X, y, order, C, sigma, h=None, otl=None, eta=0.5):
    """A per-sample loop computing the kernel values on the fly from the stored support vectors
    (no Gram matrix): PA (``h`` None), PAIO (``h``, ``otl`` None) or OTL / OTL(fixed)
    (``otl`` = "adaptive" / "fixed", ``h`` the source outputs)."""
    n, d = len(order), X.shape[1]
    svs = np.zeros((n, d))
    sv_norms = np.zeros(n)
    alpha = np.zeros(n)
    m, mistakes, w1, w2 = 0, 0, 0.5, 0.5
    for i in order:
        x = X[i]
        xx = float(x @ x)
        k = np.exp(-(sv_norms[:m] + xx - 2.0 * (svs[:m] @ x)) / (2 * sigma * sigma))
        f = float(alpha[:m] @ k)
        yi = y[i]
        if otl is None:
            s = f + (0.0 if h is None else h[i])
            own = s
        else:
            ph = min(1.0, max(0.0, (h[i] + 1) / 2))
            pf = min(1.0, max(0.0, (f + 1) / 2))
            s = w1 * ph + w2 * pf - 0.5
            own = f
            if otl == "adaptive":
                py = (yi + 1) / 2
                w1 *= math.exp(-eta * (ph - py) ** 2)
                w2 *= math.exp(-eta * (pf - py) ** 2)
                w1, w2 = w1 / (w1 + w2), w2 / (w1 + w2)
        if (1.0 if s >= 0 else -1.0) != yi:
            mistakes += 1
        loss = 1.0 - yi * own
        if loss > 0:
            svs[m], sv_norms[m], alpha[m] = x, xx, yi * min(C, loss)
            m += 1
    return mistakes, m


def numpy_direct_methods(prepared: transfer.TransferSetup, target_x, orders) -> None:
    """The four methods with the on-the-fly NumPy loop (Gaussian k(x, x) = 1)."""
    X = target_x.toarray() if hasattr(target_x, "toarray") else np.asarray(target_x)
    y = np.asarray(prepared.methods["PA"].ys, np.float64)
    h = np.asarray(prepared.methods["OTL"].xs.offset, np.float64)
    for order in orders:
        _direct_loop(X, y, order, zhao_hoi2010.C, zhao_hoi2010.SIGMA_TARGET)
        _direct_loop(X, y, order, zhao_hoi2010.C, zhao_hoi2010.SIGMA_SOURCE, h)
        _direct_loop(X, y, order, zhao_hoi2010.C, zhao_hoi2010.SIGMA_TARGET, h, "fixed")
        _direct_loop(X, y, order, zhao_hoi2010.C, zhao_hoi2010.SIGMA_TARGET, h, "adaptive")


def numpy_methods(prepared: transfer.TransferSetup, orders: np.ndarray) -> dict[str, float]:
    """Runs the four methods over every order with the NumPy loop; returns mistake rates."""
    g_pa = np.asarray(prepared.methods["PA"].xs.row, np.float64)
    g_paio = np.asarray(prepared.methods["PAIO"].xs.row, np.float64)
    y = np.asarray(prepared.methods["PA"].ys, np.float64)
    h = np.asarray(prepared.methods["OTL"].xs.offset, np.float64)
    rates = {k: [] for k in zhao_hoi2010.HOMOGENEOUS_METHODS}
    for order in orders:
        t = len(order)
        rates["PA"].append(_pa_loop(g_pa, y, order, zhao_hoi2010.C)[0] / t)
        rates["PAIO"].append(_pa_loop(g_paio, y, order, zhao_hoi2010.C, h)[0] / t)
        rates["OTL_fixed"].append(_otl_loop(g_pa, y, order, zhao_hoi2010.C, h, fixed=True)[0] / t)
        rates["OTL"].append(_otl_loop(g_pa, y, order, zhao_hoi2010.C, h)[0] / t)
    return {k: 100 * float(np.mean(v)) for k, v in rates.items()}


def numpy_prepare(split: transfer_data.Split):
    """The NumPy pipeline's Gram matrices and source classifier (float64)."""

    def sqd(a, b):
        a2 = np.asarray(a.multiply(a).sum(1)).ravel() if hasattr(a, "multiply") else (a * a).sum(1)
        b2 = np.asarray(b.multiply(b).sum(1)).ravel() if hasattr(b, "multiply") else (b * b).sum(1)
        cross = a @ b.T
        cross = cross.toarray() if hasattr(cross, "toarray") else np.asarray(cross)
        return np.maximum(a2[:, None] + b2[None, :] - 2 * cross, 0.0)

    d_ss = sqd(split.source_x, split.source_x)
    k_ss = np.exp(-d_ss / (2 * zhao_hoi2010.SIGMA_SOURCE**2))
    ys = split.source_y
    n = len(ys)
    sv, alpha, avg, m = np.zeros(n, np.int64), np.zeros(n), np.zeros(n), 0
    for t in range(n):
        f = alpha[:m] @ k_ss[t, sv[:m]]
        loss = 1.0 - ys[t] * f
        if loss > 0:
            sv[m], alpha[m] = t, ys[t] * min(zhao_hoi2010.C, loss / k_ss[t, t])
            m += 1
        avg[:m] = (t / (t + 1)) * avg[:m] + alpha[:m] / (t + 1)
    k_ts = np.exp(-sqd(split.target_x, split.source_x) / (2 * zhao_hoi2010.SIGMA_SOURCE**2))
    h = k_ts[:, sv[:m]] @ avg[:m]
    d_tt = sqd(split.target_x, split.target_x)
    return (
        np.exp(-d_tt / (2 * zhao_hoi2010.SIGMA_SOURCE**2)),
        np.exp(-d_tt / (2 * zhao_hoi2010.SIGMA_TARGET**2)),
        h,
    )


# ------------------------------------------------------------------------------ timing


def _median(fn, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def bench_dataset(name, split, num_perms, repeats, baseline_repeats):
    prepared = zhao_hoi2010.prepare_homogeneous(split)
    orders = transfer.permutations(jax.random.key(0), num_perms, prepared.num_target)
    run = prepared.combined  # the four methods in one scan
    jitted = jax.jit(
        functools.partial(
            transfer.run_kernel,
            run.learner,
            base_support_vectors=run.base_support_vectors,
            keep_predictions=False,
        )
    )
    _, compile_seconds, _ = compile_and_run(jitted, run.params, run.xs, run.ys, orders)

    def ojax_all():
        return jax.block_until_ready(jitted(run.params, run.xs, run.ys, orders))

    ojax_all()
    ojax_seconds = _median(ojax_all, repeats)
    mistakes = np.asarray(ojax_all()[1].loss)  # (P, T, 4 methods): the mistakes
    ojax_rates = {
        m: 100 * float(mistakes[..., j].mean())
        for j, m in enumerate(zhao_hoi2010.HOMOGENEOUS_METHODS)
    }
    orders_np = np.asarray(orders)
    base_rates = {}

    def numpy_all():
        base_rates.update(numpy_methods(prepared, orders_np))

    baseline_seconds = _median(numpy_all, baseline_repeats)
    agree = max(abs(ojax_rates[m] - base_rates[m]) for m in ojax_rates)
    case = f"{name}: 4 methods x {num_perms} permutation(s), T={prepared.num_target}"
    rows = [
        {
            "case": case,
            "ojax_seconds": ojax_seconds,
            "baseline": "NumPy per-sample loop reading the precomputed Gram matrix",
            "baseline_seconds": baseline_seconds,
            "ratio": baseline_seconds / ojax_seconds,
            "ojax_compile_seconds": compile_seconds,
            "ojax_dtype": str(run.ys.dtype),
            "max_rate_difference_percent": agree,
        }
    ]
    if split.target_x.shape[1] <= 1000:  # dense features: the on-the-fly loop is feasible
        direct_seconds = _median(
            lambda: numpy_direct_methods(prepared, split.target_x, orders_np), 1
        )
        rows.append(
            {
                **rows[0],
                "baseline": "NumPy per-sample loop, kernel values on the fly",
                "baseline_seconds": direct_seconds,
                "ratio": direct_seconds / ojax_seconds,
            }
        )
        rows[-1].pop("max_rate_difference_percent")
    return rows


def bench_end_to_end(name, num_perms):
    start = time.perf_counter()
    split = transfer_data.homogeneous_split(name)
    prepared = zhao_hoi2010.prepare_homogeneous(split)
    orders = transfer.permutations(jax.random.key(0), num_perms, prepared.num_target)
    compile_seconds = zhao_hoi2010.time_method(prepared.combined, orders).compile_seconds
    ojax_seconds = time.perf_counter() - start
    start = time.perf_counter()
    split = transfer_data.homogeneous_split(name)
    k1, k2, h = numpy_prepare(split)
    y = split.target_y
    for order in np.asarray(orders):
        _pa_loop(k2, y, order, zhao_hoi2010.C)
        _pa_loop(k1, y, order, zhao_hoi2010.C, h)
        _otl_loop(k2, y, order, zhao_hoi2010.C, h, fixed=True)
        _otl_loop(k2, y, order, zhao_hoi2010.C, h)
    baseline_seconds = time.perf_counter() - start
    return {
        "case": f"{name} end to end: load, Gram, 4 methods x {num_perms} permutations "
        "(ojax includes compilation)",
        "ojax_seconds": ojax_seconds,
        "baseline": "NumPy pipeline (load, Gram, per-sample loops)",
        "baseline_seconds": baseline_seconds,
        "ratio": baseline_seconds / ojax_seconds,
        "ojax_compile_seconds": compile_seconds,
        "ojax_dtype": str(prepared.combined.ys.dtype),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="usenet2 only, fewer repeats")
    parser.add_argument("--x64", action="store_true", help="ojax in float64 (default float32)")
    parser.add_argument("--out", default="results/bench_transfer")
    args = parser.parse_args()
    if args.x64:
        jax.config.update("jax_enable_x64", True)
    rows = []
    names = ["usenet2"] if args.quick else ["usenet2", "newsgroup4", "spambase"]
    for name in names:
        split = transfer_data.homogeneous_split(name)
        for perms in (1, 20):
            # the CPU may be shared: medians of several runs (the NumPy loops are slow, so
            # fewer of them for the large cases)
            baseline_repeats = 3 if (perms == 1 or name == "usenet2") else 1
            new = bench_dataset(name, split, perms, 7 if args.quick else 11, baseline_repeats)
            rows.extend(new)
            for r in new:
                print(
                    f"  {r['case']}: ojax {r['ojax_seconds']:.3f}s, {r['baseline']} "
                    f"{r['baseline_seconds']:.3f}s",
                    flush=True,
                )
    if not args.quick:
        rows.append(bench_end_to_end("newsgroup4", 20))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    report = {"benchmark": "transfer", **environment_info(), "rows": rows}
    report["device"] = environment_info()["device"]
    (out / "bench.json").write_text(json.dumps(report, indent=2))
    print(
        f"{'case':<60} {'baseline':<28} {'ojax s':>8} {'numpy s':>8} {'ratio':>7} {'compile s':>9}"
    )
    for r in rows:
        short = (
            "NumPy pipeline"
            if "pipeline" in r["baseline"]
            else ("Gram loop" if "Gram" in r["baseline"] else "on-the-fly loop")
        )
        print(
            f"{r['case'][:60]:<60} {short:<28} {r['ojax_seconds']:>8.3f} "
            f"{r['baseline_seconds']:>8.3f} {r['ratio']:>7.1f} {r['ojax_compile_seconds']:>9.2f}"
        )
    print(f"wrote {out / 'bench.json'}")


if __name__ == "__main__":
    main()
