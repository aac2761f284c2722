"""ojax's contextual bandits beside MABWiser's (LinUCB, linear Thompson sampling) and Vowpal
Wabbit's (epsilon-greedy, SquareCB).

    python scripts/bench_contextual.py [--quick] [--out DIR] [--orders 1,100,1000]
                                       [--dataset NAME] [--budget SECONDS]

One data set played as a contextual bandit (:func:`ojax.datasets.bandit_problem`: standardized
features, a constant, rows scaled to norm <= 1; cost `1[a != y]`), S orders of its rows, the
same orders for both libraries; measured: the progressive validation loss (the mean cost of the
played arms) and the seconds for all S orders.

* ojax: one `jit(vmap(run_contextual))` over the orders (its `lower(...).compile()` timed
  apart, a first call untimed, then the best of 3 calls, or of those that fit in `--budget`
  seconds).

Each count of orders runs with 1 worker and, where the machine has several cores, with one
worker per core: ojax's workers are CPU devices (its orders sharded over them, `NamedSharding`
over a mesh; run as a program, the script asks XLA for
`--xla_force_host_platform_device_count=<cores>` before JAX starts), a peer's are processes
(one order per process at a time). One device is not one core: XLA threads operations within
it, so ojax's process CPU seconds are kept beside its wall seconds.
* MABWiser: `MAB(arms, LearningPolicy.LinUCB(alpha, l2_lambda=1))` (`LinTS(alpha=scale)`) per
  order (with several workers: in the worker processes), the way its users run a stream:
  `predict(x_t)`, the cost of that arm, `partial_fit` with reward `1 - cost`. The first round
  is a `fit` on arm 0, which both libraries play there (every arm ties; each takes the lowest
  index). One stream at a time: its time for S orders is measured on the orders that fit in
  `--budget` seconds and scaled to S (flagged).
* Equality (LinUCB: the same algorithm, ridge `A_a = I + sum x x^T`, `b_a = sum r x`, the same
  bonus and ties): ojax in float64 and MABWiser play the same arm at every round of every order
  MABWiser ran, checked round by round (ojax's timed rows are float32, where a near-tie of two
  arms can part the runs). Linear Thompson sampling draws from other random streams: its mean
  loss over orders side by side only.
* Vowpal Wabbit: its C++ driver over one file per order (`--cbify K --cb_explore_adf
  --epsilon 0.05`, `--squarecb`; the multiclass data turned into bandit feedback inside VW,
  the same features and orders, `--noconstant`: the features carry ojax's constant), in the
  worker processes (spawned and warmed untimed, the files written before the timer), its
  progressive loss `get_sum_loss() / rounds`; scaled to S orders from those run within
  `--budget` like MABWiser's. Another regression oracle (VW's adaptive, normalized SGD of the
  squared loss, one model per arm; ojax's: OGD at a constant rate), the same SquareCB schedule
  `gamma_t = 10 sqrt(t)` (VW's default; ojax's `SquareCBParams(10, oracle, power=0.5)`): the
  losses side by side, not equal.

Writes `DIR/bench.json` and prints the table. MABWiser and Vowpal Wabbit are optional (`pip
install mabwiser vowpalwabbit`); without them only ojax's rows are measured. Vowpal Wabbit's
rows need the script run as a program (its worker processes import it as `__main__`).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import json
import multiprocessing
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __name__ == "__main__" and "jax" not in sys.modules:  # one CPU device per core
    cores = os.cpu_count() or 1
    flag = f"--xla_force_host_platform_device_count={cores}"
    os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} {flag}".strip()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from bench_peers import vw_run_file  # noqa: E402  (scripts/: Vowpal Wabbit over one file)
from jax.sharding import Mesh, NamedSharding, PartitionSpec  # noqa: E402

from ojax.app.output import environment_info  # noqa: E402
from ojax.contextual import (  # noqa: E402
    ContextualData,
    EpsilonGreedyParams,
    LinearTSParams,
    LinUCBParams,
    SquareCBParams,
    epsilon_greedy,
    linear_thompson,
    linucb,
    run_contextual,
    squarecb,
)
from ojax.datasets.classes import bandit_problem, load_classes, sklearn_available  # noqa: E402
from ojax.oco import OGDParams, ogd  # noqa: E402

ALPHA, SCALE = 1.0, 0.5
"""LinUCB's bonus width and linear Thompson sampling's posterior scale (both libraries)."""

EPSILON, GAMMA, POWER, RATE = 0.05, 10.0, 0.5, 0.5
"""epsilon-greedy's exploration (both libraries), SquareCB's `gamma_t = GAMMA t^POWER` (both
libraries: Vowpal Wabbit's defaults) and ojax's OGD oracle's rate."""

PEERS = {"linucb": "mabwiser", "lints": "mabwiser", "epsilon-greedy": "vowpalwabbit"}
PEERS["squarecb"] = "vowpalwabbit"
"""Each learner's peer library."""

VW_ARGS = {
    "epsilon-greedy": f"--cb_explore_adf --epsilon {EPSILON}",
    "squarecb": "--cb_explore_adf --squarecb",
}
"""Vowpal Wabbit's options per learner (beside `--cbify K --noconstant --quiet`)."""


def problem(name: str, rows: int | None) -> tuple[ContextualData, np.ndarray]:
    """The bandit of data set `name` (its first `rows` rows of a fixed shuffle) and its
    labels."""
    x, y, k = load_classes(name, None)
    keep = np.random.default_rng(0).permutation(len(y))[: rows or len(y)]
    return bandit_problem(x[keep], y[keep], num_classes=k), np.asarray(y[keep])


def orders(n: int, count: int) -> np.ndarray:
    rng = np.random.default_rng(1)
    return np.stack([rng.permutation(n) for _ in range(count)]).astype(np.int32)


def learner_of(name: str, dim: int, arms: int, dtype: Any) -> tuple[Any, Any]:
    """ojax's learner `name` and its params (see the constants)."""

    def f(value: float) -> jax.Array:
        return jnp.asarray(value, dtype)

    oracle = OGDParams(f(RATE), f(1.0))
    return {
        "linucb": lambda: (linucb(dim, arms, dtype), LinUCBParams(f(ALPHA))),
        "lints": lambda: (linear_thompson(dim, arms, dtype), LinearTSParams(f(SCALE))),
        "epsilon-greedy": lambda: (
            epsilon_greedy(dim, arms, ogd("none"), dtype),
            EpsilonGreedyParams(f(EPSILON), oracle),
        ),
        "squarecb": lambda: (
            squarecb(dim, arms, ogd("none"), dtype),
            SquareCBParams(f(GAMMA), oracle, f(POWER)),
        ),
    }[name]()


def ojax_losses(
    name: str, data: ContextualData, order: np.ndarray, dtype: Any, devices: int = 1
) -> Any:
    """A jitted `(orders, keys) -> (arms (S, n), losses (S, n))` of learner `name`, and its
    arguments, the orders sharded over the first `devices` devices."""
    dim, arms = int(data.contexts.shape[1]), int(data.costs.shape[1])
    learner, params = learner_of(name, dim, arms, dtype)
    contexts, costs = jnp.asarray(data.contexts, dtype), jnp.asarray(data.costs, dtype)

    def one(o: jax.Array, key: jax.Array) -> tuple[jax.Array, jax.Array]:
        _, trace = run_contextual(learner, params, ContextualData(contexts, costs, o), key)
        return trace.prediction, trace.loss

    mesh = Mesh(np.asarray(jax.devices()[:devices]), ("orders",))
    shard = NamedSharding(mesh, PartitionSpec("orders"))
    keys = jax.device_put(jax.random.split(jax.random.key(0), order.shape[0]), shard)
    return jax.jit(jax.vmap(one)), jax.device_put(jnp.asarray(order), shard), keys


def mabwiser_run(job: tuple[str, np.ndarray, np.ndarray, np.ndarray]) -> tuple[np.ndarray, ...]:
    """MABWiser's arms and costs over one order (see the module doc); `job` is `(name,
    contexts, costs, order)`."""
    from mabwiser.mab import MAB, LearningPolicy

    name, contexts, costs, order = job
    arms = list(range(costs.shape[1]))
    policy = (
        LearningPolicy.LinUCB(alpha=ALPHA, l2_lambda=1.0)
        if name == "linucb"
        else LearningPolicy.LinTS(alpha=SCALE, l2_lambda=1.0)
    )
    mab = MAB(arms, policy, seed=0)
    first = order[0]
    mab.fit([0], [1.0 - costs[first, 0]], contexts[first][None])
    played, paid = [0], [costs[first, 0]]
    for t in order[1:]:
        arm = int(mab.predict(contexts[t][None]))
        played.append(arm)
        paid.append(costs[t, arm])
        mab.partial_fit([arm], [1.0 - costs[t, arm]], contexts[t][None])
    return np.asarray(played), np.asarray(paid)


def importable(lib: str) -> bool:
    """Whether the peer `lib` imports (MABWiser is installed without its scikit-learn at
    times: found, but failing at import)."""
    if importlib.util.find_spec(lib) is None:
        return False
    try:
        importlib.import_module("mabwiser.mab" if lib == "mabwiser" else lib)
    except ImportError:
        return False
    return True


def warm_worker(_: int) -> int:
    """In a worker process: import the installed peers."""
    for lib in set(PEERS.values()):
        importable(lib)
    return os.getpid()


def vw_lines(data: ContextualData, labels: np.ndarray) -> list[str]:
    """Vowpal Wabbit's multiclass lines of the bandit's rows (labels 1..K, ojax's features)."""
    lines = []
    for row, label in zip(np.asarray(data.contexts, np.float64), labels, strict=True):
        features = " ".join(f"{j}:{v:.9g}" for j, v in enumerate(row) if v != 0)
        lines.append(f"{int(label) + 1} | {features}\n")
    return lines


def timed_batches(worker: Any, job: Any, count: int, budget: float, pool: Any, jobs: int) -> Any:
    """`worker(job(s))` for the orders `s = 0, 1, ...`, `jobs` at a time (on `pool`, or in
    this process when `pool` is None), until `count` orders or `budget` seconds; each batch's
    jobs are made before its timer: `(seconds, results)`."""
    done, spent, results = 0, 0.0, []
    while done < count and (done == 0 or spent < budget):
        work = [job(s) for s in range(done, min(done + jobs, count))]
        start = time.perf_counter()
        results += list(map(worker, work)) if pool is None else pool.map(worker, work, 1)
        spent += time.perf_counter() - start
        done += len(work)
    return spent, results


def mabwiser(
    name: str,
    data: ContextualData,
    all_orders: np.ndarray,
    count: int,
    budget: float,
    pool: Any,
    jobs: int,
) -> tuple[float, int, float, list[np.ndarray]]:
    """MABWiser's `name` on the first `count` orders, in this process (`jobs` 1) or one per
    worker of `pool` at a time on `jobs` workers, until `budget` seconds: `(seconds, orders
    run, mean loss, the arms of each order run)`."""
    contexts, costs = np.asarray(data.contexts, np.float64), np.asarray(data.costs, np.float64)
    spent, runs = timed_batches(
        mabwiser_run,
        lambda s: (name, contexts, costs, all_orders[s]),
        count, budget, pool if jobs > 1 else None, jobs,
    )  # fmt: skip
    paid = float(np.mean([np.mean(c) for _, c in runs]))
    return spent, len(runs), paid, [arms for arms, _ in runs]


def vowpal_wabbit(
    args: str,
    lines: list[str],
    all_orders: np.ndarray,
    count: int,
    budget: float,
    pool: Any,
    jobs: int,
) -> tuple[float, int, float]:
    """Vowpal Wabbit with options `args` on the first `count` orders, one per worker at a
    time on `jobs` workers, until `budget` seconds: `(seconds, orders run, mean loss)`."""
    with tempfile.TemporaryDirectory() as tmp:

        def job(s: int) -> tuple[str, str]:  # the order's file, written before the timer
            path = Path(tmp) / f"order-{s}.vw"
            path.write_text("".join(lines[i] for i in all_orders[s]))
            return f"{args} --random_seed {s}", str(path)

        spent, sums = timed_batches(vw_run_file, job, count, budget, pool, jobs)
    return spent, len(sums), float(np.mean(sums)) / all_orders.shape[1]


def one_row(
    args: argparse.Namespace,
    name: str,
    count: int,
    used: int,
    data: ContextualData,
    all_orders: np.ndarray,
) -> dict[str, Any]:
    """ojax's columns of learner `name` on `count` orders over `used` devices (see the module
    doc)."""
    fn, o, keys = ojax_losses(name, data, all_orders[:count], jnp.float32, used)
    start = time.perf_counter()
    fn = fn.lower(o, keys).compile()
    compile_seconds = time.perf_counter() - start
    jax.block_until_ready(fn(o, keys))  # a first call, untimed
    warm: list[tuple[float, float]] = []
    while len(warm) < 3 and sum(w for w, _ in warm) < args.budget:  # best of 3, in the budget
        start, cpu = time.perf_counter(), time.process_time()
        losses = jax.block_until_ready(fn(o, keys))[1]
        warm.append((time.perf_counter() - start, time.process_time() - cpu))
    best, cpu = min(warm)
    return {
        "case": f"{name}, {count} orders of {int(data.order.shape[0])} rounds, {used} worker(s)",
        "ojax_seconds": best,
        "ojax_compile_seconds": compile_seconds,
        "learner": name,
        "orders": count,
        "workers": used,
        "ojax_cpu_seconds": cpu,
        "ojax_pv_loss": float(np.mean(losses)),
    }


def peer_columns(label: str, spent: float, done: int, count: int, loss: float) -> dict[str, Any]:
    """A peer's columns: its seconds on `done` orders scaled to `count`."""
    return {
        "baseline": label,
        "baseline_seconds": spent * count / done,
        "baseline_extrapolated": done < count,
        "baseline_orders_run": done,
        "baseline_pv_loss": loss,
    }


def measure(args: argparse.Namespace) -> dict[str, Any]:
    data, labels = problem(args.dataset, args.rows)
    n, k = int(data.contexts.shape[0]), int(data.costs.shape[1])
    counts = [int(c) for c in args.orders.split(",")]
    all_orders = orders(n, max(counts))
    have = {lib: importable(lib) for lib in set(PEERS.values())}
    cores = min(os.cpu_count() or 1, jax.device_count())
    pool = None
    if any(have.values()):  # one worker process per core, spawned and warmed untimed
        pool = multiprocessing.get_context("spawn").Pool(cores)
        pool.map(warm_worker, range(cores), chunksize=1)
    lines = vw_lines(data, labels)
    rows: list[dict[str, Any]] = []
    theirs: list[np.ndarray] = []  # MABWiser's LinUCB arms per order it ran in one process
    for name in PEERS:
        for count in counts:
            for used in sorted({1, cores if count % cores == 0 and count > 1 else 1}):
                rows.append(one_row(args, name, count, used, data, all_orders))
                if PEERS[name] == "vowpalwabbit" and have["vowpalwabbit"]:
                    vw_args = f"{VW_ARGS[name]} --cbify {k} --noconstant --quiet"
                    spent, done, loss = vowpal_wabbit(
                        vw_args, lines, all_orders, count, args.budget, pool, used
                    )
                    rows[-1] |= peer_columns(
                        f"Vowpal Wabbit {vw_args} (C++ driver)", spent, done, count, loss
                    )
                if PEERS[name] == "mabwiser" and have["mabwiser"]:
                    spent, done, loss, played = mabwiser(
                        name, data, all_orders, count, args.budget, pool, used
                    )
                    label = "LinUCB" if name == "linucb" else "LinTS"
                    rows[-1] |= peer_columns(f"MABWiser {label}", spent, done, count, loss)
                    if name == "linucb" and used == 1 and len(played) > len(theirs):
                        theirs = played
                if "baseline_seconds" in rows[-1]:
                    rows[-1]["ratio"] = rows[-1]["baseline_seconds"] / rows[-1]["ojax_seconds"]
    equality: dict[str, Any] = {}
    if theirs:  # LinUCB round by round: ojax in float64 against MABWiser, every order it ran
        with jax.enable_x64(True):
            fn, o, keys = ojax_losses("linucb", data, all_orders[: len(theirs)], jnp.float64)
            ours = np.asarray(fn(o, keys)[0])
        same = sum(int(np.sum(ours[i] == arms)) for i, arms in enumerate(theirs))
        equality = {"orders": len(theirs), "rounds": n * len(theirs), "same_arm_rounds": same}
    if pool is not None:
        pool.close()
        pool.join()
    env = environment_info()
    versions = {"jax": jax.__version__, "numpy": np.__version__}
    versions |= {lib: importlib.metadata.version(lib) for lib, there in have.items() if there}
    return {
        "benchmark": "contextual",
        "device": env["device"],
        "command": " ".join(["python scripts/bench_contextual.py", *sys.argv[1:]]),
        "versions": versions,
        "dataset": args.dataset,
        "rounds": n,
        "arms": int(data.costs.shape[1]),
        "features": int(data.contexts.shape[1]),
        "alpha": ALPHA,
        "scale": SCALE,
        "epsilon": EPSILON,
        "gamma": GAMMA,
        "gamma_power": POWER,
        "rate": RATE,
        "linucb_equality": equality,
        "peers": sorted(lib for lib, there in have.items() if there),
        "rows": rows,
        "environment": env,
    }


def table(result: dict[str, Any]) -> str:
    head = f"{'learner':14s} {'orders':>6s} {'workers':>7s} {'ojax s':>9s} {'compile s':>9s}"
    lines = [
        head + f" {'ojax loss':>9s} {'peer':>13s} {'peer s':>10s} {'peer loss':>9s} {'speedup':>8s}"
    ]
    for r in result["rows"]:
        line = (
            f"{r['learner']:14s} {r['orders']:6d} {r['workers']:7d} {r['ojax_seconds']:9.3g} "
            f"{r['ojax_compile_seconds']:9.3g} {r['ojax_pv_loss']:9.4f}"
        )
        if "baseline" in r:
            flag = "*" if r["baseline_extrapolated"] else " "
            peer = "MABWiser" if r["baseline"].startswith("MABWiser") else "Vowpal Wabbit"
            line += (
                f" {peer:>13s} {r['baseline_seconds']:9.3g}{flag} {r['baseline_pv_loss']:9.4f}"
                f" {r['ratio']:7.1f}x"
            )
        lines.append(line)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="200 rows, 1 and 4 orders")
    parser.add_argument("--out", default="results/bench_contextual")
    parser.add_argument("--orders", default=None, help="comma-separated order counts")
    parser.add_argument("--dataset", default=None, help="digits (scikit-learn), else spambase")
    parser.add_argument("--rows", type=int, default=None, help="rows of the data set")
    parser.add_argument(
        "--budget", type=float, default=None, help="seconds a library spends on one row"
    )
    args = parser.parse_args(argv)
    args.dataset = args.dataset or ("digits" if sklearn_available() else "spambase")
    args.orders = args.orders or ("1,4" if args.quick else "1,100,1000")
    args.rows = args.rows or (200 if args.quick else None)
    args.budget = args.budget if args.budget is not None else (1.0 if args.quick else 60.0)
    result = measure(args)
    print(table(result))
    if result["linucb_equality"]:
        eq = result["linucb_equality"]
        print(
            f"LinUCB in float64: the same arm as MABWiser at {eq['same_arm_rounds']} of "
            f"{eq['rounds']} rounds ({eq['orders']} orders); the float32 rows can part at a "
            "near-tie of two arms"
        )
    print("* the peer's time for all orders scaled from the orders run within --budget")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench.json").write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {out / 'bench.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
