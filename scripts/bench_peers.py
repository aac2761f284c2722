"""ojax beside the libraries users pick today: river, scikit-learn and Vowpal Wabbit.

    python scripts/bench_peers.py [--quick] [--out DIR] [--streams 1,10,100] [--budget SECONDS]

Three workloads, each run as S independent streams (shuffles of one dataset, the same orders
for every library), in progressive validation: predict, record the loss, learn.

* ``pa1-a1a``: linear PA-I (C = 1, no intercept) on all 32561 rows of a1a (123 binary
  features, at most 14 non-zeros a row); metric: the mistake rate.
* ``lsq-asgd``: least-squares SGD (constant step) with Polyak-Ruppert averaging, n = 1e5,
  d = 100; metric: mean 0.5 (y_hat - y)^2 of the prediction each library makes.
* ``param-free``: parameter-free learning of a linear model under the absolute loss, n = 1e5,
  d = 20; metric: mean |y_hat - y|.

ojax runs every stream in one ``jit(vmap(scan))`` (:func:`ojax.transfer.run_orders`, ``unroll``
4 by default: ``--unroll``). Each peer
runs the way its users run it: a Python loop over streams and examples (river ``learn_one``,
scikit-learn ``partial_fit``, Vowpal Wabbit's Python ``learn``), scikit-learn's ``fit`` as a
bulk upper bound, and Vowpal Wabbit's C++ driver reading a file (the command line's own loop,
``-d FILE``). A peer that would need more than ``--budget`` seconds for the S streams is
stopped there (at a stream boundary for whole-stream runners, mid-stream for per-example
loops); its throughput is measured on the examples it did and its time for all S streams is
extrapolated (flagged ``baseline_extrapolated``). The progressive metrics are compared on
exactly the examples the peer saw. Peers that are not installed are skipped.

Writes ``DIR/bench.json`` (the format of docs/cli.md, plus throughput and metric fields).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax
import scipy.sparse as sp

from ojax import losses
from ojax.adapters import linear_predictor, optax_learner
from ojax.app.output import environment_info
from ojax.averaging import AveragedParams, SGDParams, average_of, averaged, polyak_averager, sgd
from ojax.core import Predictor
from ojax.parameter_free import DirectionMagnitudeParams, direction_magnitude
from ojax.sparse import sparse_rows
from ojax.transfer import LinearPAParams, linear_pa, run_orders

PA_C = 1.0
LSQ_ETA = 0.05  # step on 0.5 (<w, x> - y)^2 with ||x|| ~ 1
PEER_MODULES = {"river": "river", "scikit-learn": "sklearn", "vowpalwabbit": "vowpalwabbit"}


def _have(module: str) -> bool:
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True


# ------------------------------------------------------------------------------------ data


@dataclass
class Workload:
    name: str
    metric: str  # what the progressive metric is
    x: np.ndarray | sp.csr_matrix  # (n, d) float64 rows (dense, or CSR for a1a)
    y: np.ndarray  # (n,) float64
    source: str
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def n(self) -> int:
        return self.x.shape[0]


def load_a1a(data_dir: str | None, quick: bool) -> Workload:
    """All of a1a (train + test files); a synthetic sparse stand-in if the files are absent."""
    from ojax.datasets import DataError, data_file
    from ojax.datasets.transfer import load_libsvm

    try:
        parts = [
            load_libsvm(data_file(name, data_dir), 123)
            for name in ("a1a.libsvm.gz", "a1a_t.libsvm.gz")
        ]
        x = sp.vstack([p[0] for p in parts]).tocsr()
        y = np.concatenate([p[1] for p in parts])
        source = "a1a.libsvm.gz + a1a_t.libsvm.gz"
    except DataError as exc:
        # A stand-in with a1a's shape: 123 binary features, 14 ones a row, a noisy linear label.
        rng = np.random.default_rng(0)
        n = 32561
        cols = np.stack([rng.choice(123, 14, replace=False) for _ in range(n)])
        x = sp.csr_matrix(
            (np.ones(n * 14), cols.ravel(), np.arange(0, n * 14 + 1, 14)), shape=(n, 123)
        )
        w = rng.normal(size=123)
        y = np.where(x @ w + 0.5 * rng.normal(size=n) >= 0, 1.0, -1.0)
        source = f"synthetic a1a-shaped stand-in (a1a not found: {exc})"
    if quick:
        x, y = x[:2000], y[:2000]
    return Workload("pa1-a1a", "mistake_rate", x, y, source)


def regression(name: str, n: int, d: int, seed: int, noise: float) -> Workload:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d)) / np.sqrt(d)
    w = rng.normal(size=d)
    y = x @ w + noise * rng.normal(size=n)
    metric = "square_loss" if name == "lsq-asgd" else "absolute_loss"
    source = f"x ~ N(0, I/{d}), w* ~ N(0, I), y = <w*, x> + {noise} N(0, 1), seed {seed}"
    return Workload(name, metric, x, y, source)


def orders_for(n: int, streams: int) -> np.ndarray:
    """Stream s visits the rows in the order of a permutation seeded by s."""
    return np.stack([np.random.default_rng(1000 + s).permutation(n) for s in range(streams)])


def dense(x) -> np.ndarray:
    return x.toarray() if sp.issparse(x) else np.asarray(x)


def vw_lines(work: Workload) -> list[bytes]:
    """One Vowpal Wabbit text line per row (``label | index:value ...``)."""
    x = sp.csr_matrix(work.x)
    lines = []
    for i in range(work.n):
        lo, hi = x.indptr[i], x.indptr[i + 1]
        feats = " ".join(f"{j}:{v:.7g}" for j, v in zip(x.indices[lo:hi], x.data[lo:hi]))
        lines.append(f"{work.y[i]:.7g} | {feats}\n".encode())
    return lines


# ------------------------------------------------------------------------------------ ojax


def lsq_asgd_predictor(dim: int) -> Predictor:
    """Least-squares SGD carrying a Polyak-Ruppert average; predicts with BOTH the average and
    the SGD iterate (a (2,) prediction, so its label is (2,): the target twice), so one run
    answers both kinds of peers."""
    learner = averaged(sgd(), polyak_averager())
    base = linear_predictor(learner, losses.square, jnp.zeros(dim, jnp.float32))

    def predict(state, params, x):
        return jnp.stack([jnp.vdot(average_of(state.learner), x), base.predict(state, params, x)])

    def update(state, params, x, y):
        return base.update(state, params, x, y[0])

    return Predictor(base.init, predict, update, base.check_params)


def ojax_methods(work: Workload) -> dict[str, tuple]:
    """name -> (predictor, params, xs, loss); the first one is the case's primary ojax run."""
    d = work.x.shape[1]
    y = jnp.asarray(work.y, jnp.float32)
    if work.name == "pa1-a1a":
        params = LinearPAParams(jnp.float32(PA_C))
        return {
            "ojax sparse PA-I": (
                linear_pa(d, sparse=True),
                params,
                sparse_rows(work.x),
                y,
                "zero_one",
            ),
            "ojax dense PA-I": (
                linear_pa(d),
                params,
                jnp.asarray(dense(work.x), jnp.float32),
                y,
                "zero_one",
            ),
        }
    xs = jnp.asarray(work.x, jnp.float32)
    if work.name == "lsq-asgd":
        params = AveragedParams(SGDParams(jnp.float32(LSQ_ETA)), ())
        pairs = jnp.stack([y, y], axis=1)  # one label per prediction (average, iterate)
        return {"ojax SGD + Polyak-Ruppert": (lsq_asgd_predictor(d), params, xs, pairs, "square")}
    radius = float(np.linalg.norm(work.x, axis=1).max())  # L = 1 (absolute loss), R = max ||x||
    dm = DirectionMagnitudeParams(jnp.float32(1.0), jnp.float32(1.0 / radius))
    x0 = jnp.zeros(d, jnp.float32)
    return {
        "ojax KT": (
            linear_predictor(direction_magnitude("kt"), losses.absolute, x0),
            dm,
            xs,
            y,
            "absolute",
        ),
        "ojax ONS": (
            linear_predictor(direction_magnitude("ons"), losses.absolute, x0),
            dm,
            xs,
            y,
            "absolute",
        ),
    }


UNROLL = 4  # scan steps per loop iteration of the ojax runs (as before the one-runner redesign)

# the square loss of each of the (2,) predictions of lsq_asgd_predictor
SQUARE_PAIR = losses.Loss(
    "square_pair",
    lambda y_hat, y: 0.5 * (y_hat - y) ** 2,
    losses.square.grad,
    losses.square.lipschitz,
)


def time_ojax(method, orders: np.ndarray, repeats: int, unroll: int = 1) -> dict[str, Any]:
    predictor, params, xs, y, loss_name = method
    loss = SQUARE_PAIR if loss_name == "square" else losses.LOSSES[loss_name]
    orders = jnp.asarray(orders, jnp.int32)

    def call():
        state, trace = run_orders(predictor, params, xs, y, loss, orders, unroll=unroll)
        return jax.block_until_ready(trace.loss)

    start = time.perf_counter()
    first = call()
    first_seconds = time.perf_counter() - start
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    seconds = float(np.median(times))
    return {
        "seconds": seconds,
        "compile_seconds": max(first_seconds - seconds, 0.0),
        "losses": np.asarray(first, np.float64),  # (S, n) or (S, n, 2)
    }


# ------------------------------------------------------------------------------------ peers


@dataclass
class PeerRun:
    seconds: float  # time spent on the examples done
    done: list[int]  # examples done in each stream started
    metric_sum: float  # sum of the progressive loss over those examples
    note: str = ""


def loop_peer(
    orders: np.ndarray,
    budget: float,
    make: Callable[[], Any],
    step: Callable[[Any, int], float],
    check_every: int = 512,
) -> PeerRun:
    """A Python loop over streams and examples, stopped once ``budget`` seconds are spent."""
    done: list[int] = []
    total = 0.0
    elapsed = 0.0
    for order in orders:
        start = time.perf_counter()
        model = make()
        count = 0
        stop = False
        for t, i in enumerate(order):
            total += step(model, int(i))
            count += 1
            if (
                t % check_every == check_every - 1
                and elapsed + time.perf_counter() - start > budget
            ):
                stop = True
                break
        elapsed += time.perf_counter() - start
        done.append(count)
        if stop or elapsed > budget:
            break
    return PeerRun(elapsed, done, total)


def stream_peer(
    orders: np.ndarray, budget: float, run_stream: Callable[[np.ndarray], tuple[float, float]]
) -> PeerRun:
    """Whole streams, one after the other: ``run_stream(order) -> (seconds, metric_sum)``."""
    done, total, elapsed = [], 0.0, 0.0
    for order in orders:
        seconds, metric_sum = run_stream(order)
        elapsed += seconds
        total += metric_sum
        done.append(len(order))
        if elapsed > budget:
            break
    return PeerRun(elapsed, done, total)


def river_peers(work: Workload) -> dict[str, Callable]:
    from river import linear_model, optim

    x = sp.csr_matrix(work.x)
    rows = [
        dict(
            zip(
                x.indices[x.indptr[i] : x.indptr[i + 1]].tolist(),
                x.data[x.indptr[i] : x.indptr[i + 1]].tolist(),
            )
        )
        for i in range(work.n)
    ]
    if work.name == "pa1-a1a":
        labels = [bool(v > 0) for v in work.y]

        def make():
            return linear_model.PAClassifier(C=PA_C, mode=1, learn_intercept=False)

        def step(model, i):
            proba = model.predict_proba_one(rows[i])[True]  # sigmoid(score) >= 1/2 <=> score >= 0
            model.learn_one(rows[i], labels[i])
            return float((proba >= 0.5) != labels[i])

        return {"river PAClassifier": lambda orders, budget: loop_peer(orders, budget, make, step)}
    if work.name == "lsq-asgd":
        ys = work.y.tolist()

        def make():
            # river's Squared loss is (y_hat - y)^2: half the step gives the same SGD.
            opt = optim.Averager(optim.SGD(LSQ_ETA / 2))
            return linear_model.LinearRegression(optimizer=opt, intercept_lr=0.0, l2=0.0)

        def step(model, i):
            y_hat = model.predict_one(rows[i])
            model.learn_one(rows[i], ys[i])
            return 0.5 * (y_hat - ys[i]) ** 2

        return {
            "river LinearRegression + optim.Averager": (
                lambda orders, budget: loop_peer(orders, budget, make, step)
            )
        }
    return {}


def sklearn_peers(work: Workload) -> dict[str, Callable]:
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import SGDClassifier, SGDRegressor

    warnings.filterwarnings("ignore", category=ConvergenceWarning)
    xd = dense(work.x)
    rows = [xd[i : i + 1] for i in range(work.n)]
    ys = [work.y[i : i + 1] for i in range(work.n)]
    classes = np.array([-1.0, 1.0])
    if work.name == "pa1-a1a":
        kwargs = dict(
            loss="hinge", penalty=None, learning_rate="pa1", eta0=PA_C, fit_intercept=False
        )

        def make():
            return [SGDClassifier(**kwargs), False]

        def step(box, i):
            model, fitted = box
            score = float(model.decision_function(rows[i])[0]) if fitted else 0.0
            model.partial_fit(rows[i], ys[i], classes=classes)
            box[1] = True
            return float((score >= 0) != (ys[i][0] > 0))

        def bulk(order):
            xo, yo = xd[order], work.y[order]
            model = SGDClassifier(max_iter=1, tol=None, shuffle=False, **kwargs)
            start = time.perf_counter()
            model.fit(xo, yo)
            return time.perf_counter() - start, float("nan")

        return {
            "scikit-learn SGDClassifier partial_fit": (
                lambda orders, budget: loop_peer(orders, budget, make, step, 64)
            ),
            "scikit-learn SGDClassifier fit (1 pass, bulk)": (
                lambda orders, budget: stream_peer(orders, budget, bulk)
            ),
        }
    if work.name == "lsq-asgd":
        kwargs = dict(
            loss="squared_error",
            penalty=None,
            learning_rate="constant",
            eta0=LSQ_ETA,
            average=True,
            fit_intercept=False,
        )

        def make():
            return [SGDRegressor(**kwargs), False]

        def step(box, i):
            model, fitted = box
            y_hat = float(model.predict(rows[i])[0]) if fitted else 0.0
            model.partial_fit(rows[i], ys[i])
            box[1] = True
            return 0.5 * (y_hat - ys[i][0]) ** 2

        return {
            "scikit-learn SGDRegressor(average=True) partial_fit": (
                lambda orders, budget: loop_peer(orders, budget, make, step, 64)
            )
        }
    return {}


def vw_args(work: Workload) -> tuple[str, float]:
    """Vowpal Wabbit options and the factor turning its reported loss into our metric."""
    if work.name == "pa1-a1a":
        return "--loss_function hinge --binary --noconstant --quiet", 1.0  # reports 0/1 loss
    if work.name == "param-free":
        # quantile loss with tau = 1/2 is |y_hat - y| / 2
        return "--coin --loss_function quantile --quantile_tau 0.5 --noconstant --quiet", 2.0
    return "", 0.0


def vw_run_file(job: tuple[str, str]) -> float:
    """In a worker process: Vowpal Wabbit's C++ driver over one file; its summed loss."""
    import vowpalwabbit

    args, path = job
    model = vowpalwabbit.Workspace(f"{args} -d {path}")
    loss = model.get_sum_loss()
    model.finish()
    return loss


def _vw_warm(_: int) -> int:
    import vowpalwabbit  # noqa: F401

    return os.getpid()


class WorkerPool:
    """One process per core (spawned once, warmed up untimed) for the parallel VW driver."""

    def __init__(self) -> None:
        self.pool = None
        self.jobs = os.cpu_count() or 1

    def get(self):
        if self.pool is None:
            import multiprocessing

            self.pool = multiprocessing.get_context("spawn").Pool(self.jobs)
            self.pool.map(_vw_warm, range(self.jobs), chunksize=1)
        return self.pool

    def close(self) -> None:
        if self.pool is not None:
            self.pool.close()
            self.pool.join()


def vw_peers(work: Workload, tmp: Path, workers: WorkerPool) -> dict[str, Callable]:
    import vowpalwabbit

    args, factor = vw_args(work)
    if not args:
        return {}
    lines = vw_lines(work)
    text = [line.decode() for line in lines]

    def make():
        return vowpalwabbit.Workspace(args)

    def py_run(orders, budget):
        # Progressive loss is VW's own: predict inside learn, before the update.
        done, elapsed, total = [], 0.0, 0.0
        for order in orders:
            model = make()
            start = time.perf_counter()
            count = 0
            for t, i in enumerate(order):
                model.learn(text[i])
                count += 1
                if t % 1024 == 1023 and elapsed + time.perf_counter() - start > budget:
                    break
            elapsed += time.perf_counter() - start
            total += factor * model.get_sum_loss()
            model.finish()
            done.append(count)
            if elapsed > budget:
                break
        return PeerRun(elapsed, done, total)

    def driver_stream(order):
        path = tmp / "stream.vw"
        with open(path, "wb") as f:
            f.write(b"".join(lines[i] for i in order))
        start = time.perf_counter()
        model = vowpalwabbit.Workspace(f"{args} -d {path}")
        seconds = time.perf_counter() - start
        total = factor * model.get_sum_loss()
        model.finish()
        return seconds, total

    def parallel_run(orders, budget):
        # One stream per process, `jobs` at a time (as `xargs -P jobs vw ...` would run them);
        # the files of a batch are written before its timer starts.
        pool = workers.get()
        done, total, elapsed = [], 0.0, 0.0
        for first in range(0, len(orders), workers.jobs):
            batch = orders[first : first + workers.jobs]
            paths = []
            for k, order in enumerate(batch):
                path = tmp / f"stream-{k}.vw"
                with open(path, "wb") as f:
                    f.write(b"".join(lines[i] for i in order))
                paths.append(str(path))
            start = time.perf_counter()
            sums = pool.map(vw_run_file, [(args, p) for p in paths], chunksize=1)
            elapsed += time.perf_counter() - start
            total += factor * float(sum(sums))
            done += [len(order) for order in batch]
            if elapsed > budget:
                break
        return PeerRun(elapsed, done, total)

    return {
        "Vowpal Wabbit Python learn()": py_run,
        "Vowpal Wabbit C++ driver (-d FILE)": (
            lambda orders, budget: stream_peer(orders, budget, driver_stream)
        ),
        f"Vowpal Wabbit C++ driver (-d FILE), {workers.jobs} processes": parallel_run,
    }


def optax_cocob(work: Workload) -> dict[str, tuple]:
    d = work.x.shape[1]
    learner = optax_learner(optax.contrib.cocob)
    predictor = linear_predictor(learner, losses.absolute, jnp.zeros(d, jnp.float32))
    params = {"learning_rate": jnp.float32(1.0), "alpha": jnp.float32(100.0)}
    xs = jnp.asarray(work.x, jnp.float32)
    return {
        "optax contrib.cocob in a scan": (
            predictor,
            params,
            xs,
            jnp.asarray(work.y, jnp.float32),
            "absolute",
        )
    }


# ------------------------------------------------------------------------------------ main


ALGORITHM_NOTES = {
    "river PAClassifier": "same algorithm (PA-I, no intercept)",
    "scikit-learn SGDClassifier partial_fit": "same algorithm (PA-I: learning_rate='pa1', eta0=C)",
    "scikit-learn SGDClassifier fit (1 pass, bulk)": (
        "same algorithm, no per-example predictions (bulk upper bound)"
    ),
    "Vowpal Wabbit Python learn()": (
        "different algorithm: VW's adaptive, normalized, invariant SGD on the hinge loss"
    ),
    "Vowpal Wabbit C++ driver (-d FILE)": (
        "different algorithm: VW's adaptive, normalized, invariant SGD on the hinge loss"
    ),
    "river LinearRegression + optim.Averager": (
        "river's Averager hands its average back as the model's weights and the next SGD step "
        "updates it in place: this is plain SGD, compared with ojax's SGD-iterate predictions"
    ),
    "scikit-learn SGDRegressor(average=True) partial_fit": (
        "same SGD; sklearn predicts with the average of w_1..w_t, ojax with that of w_0..w_t"
    ),
    "optax contrib.cocob in a scan": "different algorithm: COCOB-Backprop (per coordinate)",
}
PF_VW_NOTE = "different algorithm: VW's per-coordinate coin betting (--coin)"


def ojax_prefix_metric(losses_arr: np.ndarray, run: PeerRun, column: int | None) -> float:
    arr = losses_arr if column is None else losses_arr[..., column]
    total = sum(float(arr[s, :k].sum()) for s, k in enumerate(run.done))
    return total / max(sum(run.done), 1)


def measure(args) -> dict[str, Any]:
    streams = [int(s) for s in args.streams.split(",")]
    if args.quick:
        n_reg = 2000
    else:
        n_reg = 100_000
    works = [
        load_a1a(args.data_dir, args.quick),
        regression("lsq-asgd", n_reg, 100, seed=1, noise=0.1),
        regression("param-free", n_reg, 20, seed=2, noise=0.1),
    ]
    load_before = os.getloadavg()
    wanted = set(PEER_MODULES) if args.peers == "all" else set(args.peers.split(",")) - {"none"}
    unknown = wanted - set(PEER_MODULES)
    if unknown:
        raise SystemExit(
            f"--peers: unknown peer(s) {sorted(unknown)}; allowed {list(PEER_MODULES)}"
        )
    use = {name: name in wanted and _have(mod) for name, mod in PEER_MODULES.items()}
    skipped = [name for name in wanted if not use[name]]
    rows: list[dict[str, Any]] = []
    ojax_runs: list[dict[str, Any]] = []
    workers = WorkerPool()
    tmp = Path(
        tempfile.mkdtemp(
            prefix="ojax-bench-", dir="/dev/shm" if Path("/dev/shm").is_dir() else None
        )
    )
    try:
        for work in works:
            methods = ojax_methods(work)
            peers: dict[str, Callable] = {}
            if use["river"]:
                peers.update(river_peers(work))
            if use["scikit-learn"]:
                peers.update(sklearn_peers(work))
            if use["vowpalwabbit"]:
                peers.update(vw_peers(work, tmp, workers))
            peer_ojax: dict[str, tuple] = optax_cocob(work) if work.name == "param-free" else {}
            for num in streams:
                orders = orders_for(work.n, num)
                print(f"[{work.name}] {num} stream(s) of {work.n} examples", file=sys.stderr)
                ours = {
                    name: time_ojax(m, orders, args.repeats, args.unroll)
                    for name, m in methods.items()
                }
                theirs: dict[str, PeerRun] = {}
                for name, m in peer_ojax.items():
                    t = time_ojax(m, orders, args.repeats, args.unroll)
                    theirs[name] = PeerRun(t["seconds"], [work.n] * num, float(t["losses"].sum()))
                    theirs[name].note = f"compile {t['compile_seconds']:.2f}s"
                for name, fn in peers.items():
                    theirs[name] = fn(orders, args.budget)
                total = num * work.n
                primary = next(iter(methods))
                for oname, o in ours.items():
                    mean = o["losses"].mean(axis=(0, 1))
                    ojax_runs.append(
                        {
                            "workload": work.name,
                            "streams": num,
                            "examples": total,
                            "method": oname,
                            "seconds": o["seconds"],
                            "compile_seconds": o["compile_seconds"],
                            "examples_per_second": total / o["seconds"],
                            "metric": work.metric,
                            "progressive_metric": mean.tolist() if mean.ndim else float(mean),
                        }
                    )
                for oname, o in ours.items():
                    for pname, run in theirs.items():
                        secondary = oname != primary and work.name != "param-free"
                        if secondary and not pname.startswith("Vowpal Wabbit C++"):
                            continue
                        measured = sum(run.done)
                        peer_eps = measured / run.seconds
                        column = None
                        if work.name == "lsq-asgd":
                            column = 1 if pname.startswith("river") else 0
                        peer_metric = run.metric_sum / measured
                        ours_metric = ojax_prefix_metric(o["losses"], run, column)
                        note = ALGORITHM_NOTES.get(pname, "")
                        if pname.startswith("Vowpal Wabbit C++"):
                            note = ALGORITHM_NOTES["Vowpal Wabbit C++ driver (-d FILE)"]
                        if work.name == "param-free" and pname.startswith("Vowpal"):
                            note = PF_VW_NOTE
                        base_seconds = total / peer_eps
                        rows.append(
                            {
                                "case": f"{work.name} S={num}",
                                "workload": work.name,
                                "streams": num,
                                "examples": total,
                                "ojax": oname,
                                "ojax_seconds": o["seconds"],
                                "ojax_compile_seconds": o["compile_seconds"],
                                "ojax_examples_per_second": total / o["seconds"],
                                "baseline": pname,
                                "baseline_seconds": base_seconds,
                                "baseline_examples_per_second": peer_eps,
                                "baseline_measured_examples": measured,
                                "baseline_extrapolated": measured < total,
                                "ratio": base_seconds / o["seconds"],
                                "metric": work.metric,
                                "metric_examples": measured,
                                "ojax_metric": ours_metric,
                                "baseline_metric": peer_metric,
                                "metric_abs_diff": abs(ours_metric - peer_metric),
                                "algorithm": note,
                            }
                        )
    finally:
        workers.close()
        shutil.rmtree(tmp, ignore_errors=True)
    versions = {"numpy": np.__version__, "optax": optax.__version__}
    for name, mod in PEER_MODULES.items():
        if use[name]:
            versions[name] = importlib.import_module(mod).__version__
    env = environment_info()
    env["cpu"] = _cpu_name()
    env["cpu_count"] = os.cpu_count()
    # Other work on the machine skews every absolute time (1-minute load averages).
    env["load_average_start_end"] = [round(load_before[0], 2), round(os.getloadavg()[0], 2)]
    return {
        "benchmark": "peers",
        "device": env["device"],
        "environment": env,
        "versions": versions,
        "command": " ".join(["python scripts/bench_peers.py", *sys.argv[1:]]),
        "config": {
            "quick": args.quick,
            "streams": streams,
            "budget_seconds": args.budget,
            "repeats": args.repeats,
            "unroll": args.unroll,
            "pa_C": PA_C,
            "lsq_learning_rate": LSQ_ETA,
            "vw_cli_binary": shutil.which("vw"),
            "workloads": {
                w.name: {"n": w.n, "d": int(w.x.shape[1]), "source": w.source, "metric": w.metric}
                for w in works
            },
        },
        "skipped_peers": sorted(skipped),
        "peers_not_requested": sorted(set(PEER_MODULES) - wanted),
        "rows": rows,
        "ojax_runs": ojax_runs,
    }


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def fmt_rate(value: float) -> str:
    for unit, scale in (("M", 1e6), ("k", 1e3)):
        if value >= scale:
            return f"{value / scale:.3g}{unit}"
    return f"{value:.3g}"


def table(result: dict[str, Any]) -> str:
    head = ("case", "ojax", "ex/s", "baseline", "ex/s", "speedup", "metric ojax | peer (on n)")
    lines = [" | ".join(head)]
    for r in result["rows"]:
        metric = f"{r['ojax_metric']:.4g} | {r['baseline_metric']:.4g} ({r['metric_examples']})"
        lines.append(
            " | ".join(
                [
                    r["case"],
                    r["ojax"],
                    fmt_rate(r["ojax_examples_per_second"]),
                    r["baseline"] + (" *" if r["baseline_extrapolated"] else ""),
                    fmt_rate(r["baseline_examples_per_second"]),
                    f"{r['ratio']:.3g}x",
                    metric,
                ]
            )
        )
    lines.append("")
    lines.append("ojax runs: workload | streams | method | ex/s | compile s | progressive metric")
    for r in result["ojax_runs"]:
        metric = r["progressive_metric"]
        metric = (
            " / ".join(f"{v:.4g}" for v in metric) if isinstance(metric, list) else f"{metric:.4g}"
        )
        lines.append(
            " | ".join(
                [
                    r["workload"],
                    str(r["streams"]),
                    r["method"],
                    fmt_rate(r["examples_per_second"]),
                    f"{r['compile_seconds']:.2f}",
                    metric,
                ]
            )
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes, one stream count")
    parser.add_argument("--out", default="results/bench_peers")
    parser.add_argument("--streams", default=None, help="comma-separated stream counts")
    parser.add_argument(
        "--budget",
        type=float,
        default=None,
        help="seconds per peer and stream count before extrapolating",
    )
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--data-dir", default=None)
    parser.add_argument(
        "--unroll",
        type=int,
        default=UNROLL,
        help=f"scan steps per loop iteration of the ojax runs (default {UNROLL})",
    )
    parser.add_argument(
        "--peers",
        default="all",
        help="'all', 'none' or a comma list of river, scikit-learn, vowpalwabbit",
    )
    args = parser.parse_args(argv)
    if args.streams is None:
        args.streams = "2" if args.quick else "1,10,100"
    if args.budget is None:
        args.budget = 0.5 if args.quick else 10.0
    if args.repeats is None:
        args.repeats = 1 if args.quick else 5
    result = measure(args)
    print(table(result))
    print("* peer stopped at the time budget; its time for all streams is extrapolated")
    if result["skipped_peers"]:
        print("skipped (not installed):", ", ".join(result["skipped_peers"]))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench.json").write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {out / 'bench.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
