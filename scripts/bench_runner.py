"""Runner parity: each registered learner through ``ojax.run`` / ``ojax.run_oco`` beside a
hand-written ``jax.lax.scan`` (and ``jax.lax.fori_loop``) of its own update on the same data.

    python scripts/bench_runner.py [--quick] [--out DIR] [--streams S] [--steps T]
                                   [--repeats R] [--only NAME,NAME] [--skip NAME,NAME]

The runner is general (masks, pool orders, record hooks, task blocks); the generality must
cost nothing when it is unused. Each case runs S streams (``jax.vmap``) of T steps (default
100 x 5000; ``--quick``: 4 x 64, one round) through

* ``ojax``: the public call (``run_oco``; ``run(..., keep_predictions=False)`` with the mask,
  order or task blocks the learner's stream comes with, and nothing else);
* ``scan``: the same predict / loss / update written by hand as one ``lax.scan`` (a masked
  scan over tasks of scans over points, with ``begin_task`` / ``end_task``, for multi-task
  learners: their streams are padded task blocks);
* ``fori``: the same step in a ``lax.fori_loop`` that reads step ``t`` by index and writes the
  loss into a preallocated buffer (not for multi-task learners);
* time-major: the same streams laid out ``(T, S, ...)`` (each part indexed by the step: the
  data, or the order into a pool), through ``jax.vmap(run, in_axes=1, out_axes=1)`` against a
  hand-written time-major scan (one ``lax.scan`` over the steps, the learner's step vmapped
  over the streams inside it); ``time_major_slowdown`` = the first's seconds / the second's
  (target <= 1.1), ``time_major_speedup`` = the streams-major runner's seconds / the
  time-major runner's. The runner's time-major losses must equal its streams-major ones bit
  for bit (``time_major_same_losses``). Not for task blocks or masked streams.

Cases: every learner of ``ojax.LEARNERS`` on its own ``make_stream`` data (d = 10; kernel
learners: their pool of Gram rows and an order), plus the workloads of
``scripts/bench_peers.py`` as shared pools visited in S orders: linear PA-I on a1a-shaped rows
(d = 123, 14 non-zeros a row) sparse and dense, least-squares SGD with Polyak-Ruppert
averaging, and the KT and ONS linear predictors (d = 10). All three programs of a case are
compiled first (compile time apart), then timed interleaved in this process (``R`` rounds of
every program; medians). ``slowdown`` = ojax seconds / scan seconds (target <= 1.05);
``ratio`` = scan seconds / ojax seconds (the field of docs/cli.md). Timing says nothing on a
loaded machine, so each row also carries a structural profile from the optimized HLO
(:func:`ojax.app.timing.loop_ops`: the ops the compiled loops run per step) and the
ops the runner's loop runs beyond the hand-written one (``extra_loop_ops``, empty at parity),
and checks that the runner's losses equal the hand-written ones.

Writes ``DIR/bench.json`` (the format of docs/cli.md).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

import ojax
from ojax import losses
from ojax.app.output import environment_info
from ojax.app.timing import loop_ops
from ojax.averaging import AveragedParams, SGDParams, least_squares_sgd, polyak_averager
from ojax.core import TaskInfo, tree_where
from ojax.parameter_free import DirectionMagnitudeParams, direction_magnitude
from ojax.runner import entry_start, opaque_start
from ojax.sparse import sparse_rows
from ojax.transfer import LinearPAParams, linear_pa

DIM = 10
SPARSE_DIM, SPARSE_NNZ = 123, 14  # a1a's shape
KINDS = ("oco", "predictor", "kernel", "multi_task")
TIME_MAJOR_TARGET = 1.1  # the runner over time-major streams / a hand-written time-major scan


class Case(NamedTuple):
    """One learner on S streams: ``stream`` holds ``(xs, ys, mask, order)`` (``None`` where
    absent; for an OCO learner ``(zs, x0, None, None)``: its start point is an input, as a
    user's is), batched on axis 0 where ``axes`` says so."""

    name: str
    kind: str  # a LEARNER_KINDS entry
    learner: Any
    params: Any
    stream: tuple
    axes: tuple  # vmap in_axes of the stream's four parts (None: shared by the streams)
    loss: Any  # a Loss, or the Objective of an OCO learner
    dim: int


# ------------------------------------------------------------------------------ programs


def runner_program(case: Case) -> Callable:
    """One stream through the public runner (what a user calls)."""

    def one(params, stream):
        xs, ys, mask, order = stream
        if case.kind == "oco":
            state, trace = ojax.run_oco(case.learner, params, ys, xs, case.loss)
        else:
            state, trace = ojax.run(
                case.learner,
                params,
                xs,
                ys,
                case.loss,
                mask=mask,
                order=order,
                keep_predictions=False,
            )
        return state, trace.loss

    return one


def _fetch(case: Case, stream: tuple) -> tuple[Any, Callable]:
    """The scanned items of a stream and the map from one item to ``(x, y)``."""
    xs, ys, _, order = stream
    if order is None:
        return (xs, ys), lambda item: item
    return order, lambda t: (jax.tree.map(lambda a: a[t], xs), ys[t])


def step_function(case: Case, params: Any, fetch: Callable) -> Callable:
    """The hand-written step ``(state, item) -> (state, loss)``: predict, loss, update."""
    learner, loss = case.learner, case.loss
    if case.kind == "oco":

        def oco_step(state, z):
            w = learner.iterate(state, params)
            return learner.update(state, params, loss.grad(w, z)), loss.value(w, z)

        return oco_step

    def step(state, item):
        x, y = fetch(item)
        y_hat = learner.predict(state, params, x)
        return learner.update(state, params, x, y), loss.value(y_hat, y)

    return step


def _init(case: Case, params: Any, stream: tuple) -> Any:
    if case.kind == "oco":
        return case.learner.init(params, stream[1])
    return case.learner.init(params)


def _tasks_program(case: Case) -> Callable:
    """Task blocks by hand: a scan over tasks of masked scans over points."""
    learner, loss = case.learner, case.loss

    def one(params, stream):
        xs, ys, mask, _ = stream

        def point(state, example):
            x, y, real = example
            value = jnp.where(real, loss.value(learner.predict(state, params, x), y), 0.0)
            return tree_where(real, learner.update(state, params, x, y), state), value

        def task(state, block):
            index, x, y, real = block
            info = TaskInfo(index, jnp.sum(real, dtype=jnp.int32), None)
            state, values = jax.lax.scan(
                point, learner.begin_task(state, params, info), (x, y, real)
            )
            return learner.end_task(state, params, info), values

        indices = jnp.arange(mask.shape[0], dtype=jnp.int32)
        return jax.lax.scan(task, learner.init(params), (indices, xs, ys, mask))

    return one


def scan_program(case: Case, opaque: bool = False) -> Callable:
    """One stream as a hand-written ``lax.scan`` of the learner's own functions; `opaque`: from
    a start state the compiler cannot specialise on, as the runner's
    (:func:`ojax.runner.opaque_start`: a run from `init` and one continued from a saved state
    are one loop), so the two loops can be compared op for op."""
    if case.kind == "multi_task":
        return _tasks_program(case)

    def one(params, stream):
        items, fetch = _fetch(case, stream)
        items = stream[0] if case.kind == "oco" else items
        step = step_function(case, params, fetch)
        start = _init(case, params, stream)
        return jax.lax.scan(step, opaque_start(start) if opaque else start, items)

    return one


def fori_program(case: Case) -> Callable | None:
    """The same step in a ``lax.fori_loop`` over step indices (losses into a buffer)."""
    if case.kind == "multi_task":
        return None

    def one(params, stream):
        items, fetch = _fetch(case, stream)
        items = stream[0] if case.kind == "oco" else items
        step = step_function(case, params, fetch)
        state = _init(case, params, stream)
        n = jax.tree.leaves(items)[0].shape[0]
        first = jax.tree.map(lambda a: a[0], items)
        value = jax.eval_shape(step, state, first)[1]
        buffer = jnp.zeros((n, *value.shape), value.dtype)

        def body(t, carry):
            state, out = carry
            state, value = step(state, jax.tree.map(lambda a: a[t], items))
            return state, out.at[t].set(value)

        return jax.lax.fori_loop(0, n, body, (state, buffer))

    return one


def batched(case: Case, program: Callable) -> Callable:
    """``program`` over the S streams of ``case``, jitted."""
    return jax.jit(jax.vmap(program, in_axes=(None, case.axes)))


def time_axes(case: Case) -> tuple | None:
    """The vmap in_axes of ``case``'s stream laid out time-major: 1 for each part indexed by
    the step (data, or the order into a pool), 0 for a stream's own part that is not (an OCO
    start point, a pool), None for a shared one; None where the case has no time-major form
    here (task blocks, a masked stream)."""
    if case.kind == "multi_task" or case.stream[2] is not None:
        return None
    pooled, oco = case.stream[3] is not None, case.kind == "oco"
    timed = (oco or not pooled, not (oco or pooled), True, True)  # xs, ys, mask, order
    return tuple(None if a is None else (1 if t else 0) for a, t in zip(case.axes, timed))


def time_major(case: Case, axes: tuple) -> tuple:
    """``case``'s stream with every part of axis 1 in ``axes`` laid out ``(T, S, ...)``."""
    return tuple(
        part if a != 1 else jax.tree.map(lambda x: jnp.swapaxes(x, 0, 1), part)
        for part, a in zip(case.stream, axes)
    )


def time_major_scan_program(case: Case, axes: tuple) -> Callable:
    """The S streams as one hand-written ``lax.scan`` over the steps of a time-major stream,
    the learner's own step vmapped over the streams inside it (the layout's ceiling)."""

    def program(params, stream):
        xs, ys, _, order = stream
        if case.kind == "oco":
            step = step_function(case, params, lambda z: z)
            start = jax.vmap(lambda x0: case.learner.init(params, x0), in_axes=axes[1])(ys)
            return jax.lax.scan(jax.vmap(step), start, xs)
        streams = jax.tree.leaves(xs if order is None else order)[0].shape[1]
        start = jax.vmap(lambda _: case.learner.init(params))(jnp.arange(streams))
        if order is None:
            return jax.lax.scan(jax.vmap(step_function(case, params, lambda i: i)), start, (xs, ys))

        def one(state, t, pool_x, pool_y):
            fetch = lambda t: (jax.tree.map(lambda a: a[t], pool_x), pool_y[t])  # noqa: E731
            return step_function(case, params, fetch)(state, t)

        every = jax.vmap(one, in_axes=(0, 0, axes[0], axes[1]))
        return jax.lax.scan(lambda states, t: every(states, t, xs, ys), start, order)

    return program


# ------------------------------------------------------------------------------ cases


def registry_cases(streams: int, steps: int, names: set[str] | None) -> list[Case]:
    """Every registered learner of a kind with a scan on its own ``make_stream`` data."""
    cases = []
    keys = jax.random.split(jax.random.key(0), streams)
    chosen = [
        (name, entry)
        for name, entry in ojax.LEARNERS.items()
        if entry.kind in KINDS and (not names or name in names)
    ]  # kind by kind, in registration order within a kind
    for name, entry in sorted(chosen, key=lambda item: KINDS.index(item[1].kind)):
        data = jax.vmap(lambda k, e=entry: e.make_stream(k, steps, DIM))(keys)
        xs, ys, *extra = data
        mask, order = (list(extra) + [None, None])[:2]
        if entry.kind == "oco":
            ys = jax.vmap(lambda zs, e=entry: entry_start(e, zs))(xs)  # the start points
        stream = (xs, ys, mask, order)
        axes = tuple(None if part is None else 0 for part in stream)
        if entry.kind == "oco":
            loss: Any = losses.OBJECTIVES[entry.objective]
        else:
            loss = losses.LOSSES[entry.objective]
        cases.append(
            Case(
                name,
                entry.kind,
                entry.make(DIM),
                entry.default_params(),
                stream,
                axes,
                loss,
                DIM,
            )
        )
    return cases


def _orders(streams: int, n: int) -> jax.Array:
    rng = np.random.default_rng(1000)
    return jnp.asarray(np.stack([rng.permutation(n) for _ in range(streams)]), jnp.int32)


def a1a_shaped(n: int, seed: int = 0) -> tuple[Any, np.ndarray]:
    """``n`` rows of 123 binary features with 14 ones each and a noisy linear +-1 label."""
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    cols = np.stack([rng.choice(SPARSE_DIM, SPARSE_NNZ, replace=False) for _ in range(n)])
    data = np.ones(n * SPARSE_NNZ)
    x = sp.csr_matrix(
        (data, cols.ravel(), np.arange(0, n * SPARSE_NNZ + 1, SPARSE_NNZ)), (n, SPARSE_DIM)
    )
    w = rng.normal(size=SPARSE_DIM)
    return x, np.where(x @ w + 0.5 * rng.normal(size=n) >= 0, 1.0, -1.0)


def peer_cases(streams: int, steps: int, names: set[str] | None) -> list[Case]:
    """The peers benchmark's workloads: one shared pool of ``steps`` rows, S orders of it."""
    orders = _orders(streams, steps)
    axes = (None, None, None, 0)
    x, y = a1a_shaped(steps)
    y_pa = jnp.asarray(y, jnp.float32)
    pa = LinearPAParams(jnp.float32(1.0))
    rng = np.random.default_rng(1)
    xr = rng.normal(size=(steps, DIM)) / np.sqrt(DIM)
    yr = xr @ rng.normal(size=DIM) + 0.1 * rng.normal(size=steps)
    xr32, yr32 = jnp.asarray(xr, jnp.float32), jnp.asarray(yr, jnp.float32)
    dm = DirectionMagnitudeParams(jnp.float32(1.0), jnp.float32(1.0))
    zeros = jnp.zeros(DIM, jnp.float32)
    cases = [
        Case(
            "peers: linear PA-I sparse (a1a-shaped, d = 123)",
            "predictor",
            linear_pa(SPARSE_DIM, sparse=True),
            pa,
            (sparse_rows(x), y_pa, None, orders),
            axes,
            losses.zero_one,
            SPARSE_DIM,
        ),
        Case(
            "peers: linear PA-I dense (a1a-shaped, d = 123)",
            "predictor",
            linear_pa(SPARSE_DIM),
            pa,
            (jnp.asarray(x.toarray(), jnp.float32), y_pa, None, orders),
            axes,
            losses.zero_one,
            SPARSE_DIM,
        ),
        Case(
            "peers: least-squares SGD + Polyak-Ruppert (d = 10)",
            "predictor",
            least_squares_sgd(zeros, polyak_averager()),
            AveragedParams(SGDParams(jnp.float32(0.05)), ()),
            (xr32, yr32, None, orders),
            axes,
            losses.square,
            DIM,
        ),
    ]
    for bettor in ("kt", "ons"):
        cases.append(
            Case(
                f"peers: {bettor.upper()} linear predictor (d = 10)",
                "predictor",
                ojax.linear_predictor(direction_magnitude(bettor), losses.absolute, zeros),
                dm,
                (xr32, yr32, None, orders),
                axes,
                losses.absolute,
                DIM,
            )
        )
    return [c for c in cases if not names or c.name in names or "peers" in names]


# ------------------------------------------------------------------------------ measuring


def _compiled(fn: Callable, args: tuple) -> tuple[Any, float, str]:
    start = time.perf_counter()
    compiled = fn.lower(*args).compile()
    return compiled, time.perf_counter() - start, compiled.as_text()


def _seconds(compiled: Any, args: tuple) -> float:
    start = time.perf_counter()
    jax.block_until_ready(compiled(*args))
    return time.perf_counter() - start


def measure(case: Case, repeats: int) -> dict[str, Any]:
    """Compiles the programs of ``case`` (three; five with its time-major pair), checks the
    runner's losses against the scan's, then times them interleaved (medians of ``repeats``
    rounds)."""
    args = (case.params, case.stream)
    programs = {"ojax": runner_program(case), "scan": scan_program(case)}
    jitted = {k: batched(case, p) for k, p in programs.items()}
    if (fori := fori_program(case)) is not None:
        jitted["fori"] = batched(case, fori)
    call_args = dict.fromkeys(jitted, args)
    if (axes := time_axes(case)) is not None:  # the same streams laid out (T, S, ...)
        over_time = (None, axes)
        jitted["ojax_t"] = jax.jit(jax.vmap(programs["ojax"], over_time, out_axes=(0, 1)))
        jitted["scan_t"] = jax.jit(time_major_scan_program(case, axes))
        call_args["ojax_t"] = call_args["scan_t"] = (case.params, time_major(case, axes))
    built = {k: _compiled(f, call_args[k]) for k, f in jitted.items()}
    outputs = {k: jax.block_until_ready(c(*call_args[k])) for k, (c, _, _) in built.items()}
    ours, theirs = (np.asarray(outputs[k][1], np.float64) for k in ("ojax", "scan"))
    times: dict[str, list[float]] = {k: [] for k in built}
    names = list(built)
    for i in range(repeats):  # interleaved, each program first in turn
        for k in names[i % len(names) :] + names[: i % len(names)]:
            times[k].append(_seconds(built[k][0], call_args[k]))
    seconds = {k: float(np.median(v)) for k, v in times.items()}
    ops = {k: loop_ops(text) for k, (_, _, text) in built.items()}
    steps = int(np.prod(ours.shape))
    row: dict[str, Any] = {
        "case": case.name,
        "kind": case.kind,
        "dim": case.dim,
        "streams": int(ours.shape[0]),
        "steps_per_stream": steps // int(ours.shape[0]),
        "ojax": "ojax.run_oco" if case.kind == "oco" else "ojax.run",
        "ojax_seconds": seconds["ojax"],
        "ojax_compile_seconds": built["ojax"][1],
        "baseline": "hand-written lax.scan",
        "baseline_seconds": seconds["scan"],
        "baseline_compile_seconds": built["scan"][1],
        "ratio": seconds["scan"] / seconds["ojax"],
        "slowdown": seconds["ojax"] / seconds["scan"],
        "steps_per_second": steps / seconds["ojax"],
        "losses_max_rel_diff": _rel_diff(ours, theirs),
        "loop_ops_ojax": sum(ops["ojax"].values()),
        "loop_ops_baseline": sum(ops["scan"].values()),
        "extra_loop_ops": dict(sorted((ops["ojax"] - ops["scan"]).items())),
    }
    if "fori" in seconds:
        row["fori_seconds"] = seconds["fori"]
        row["fori_slowdown"] = seconds["ojax"] / seconds["fori"]
        row["loop_ops_fori"] = sum(ops["fori"].values())
    if "ojax_t" in seconds:  # time-major: the runner against the hand-written time-major scan
        by_time, by_hand = (
            np.swapaxes(np.asarray(outputs[k][1], np.float64), 0, 1) for k in ("ojax_t", "scan_t")
        )
        row["time_major_ojax_seconds"] = seconds["ojax_t"]
        row["time_major_scan_seconds"] = seconds["scan_t"]
        row["time_major_slowdown"] = seconds["ojax_t"] / seconds["scan_t"]
        row["time_major_speedup"] = seconds["ojax"] / seconds["ojax_t"]
        row["time_major_same_losses"] = bool(np.array_equal(by_time, ours, equal_nan=True))
        row["time_major_losses_max_rel_diff"] = _rel_diff(by_time, by_hand)
        row["time_major_extra_loop_ops"] = dict(sorted((ops["ojax_t"] - ops["scan_t"]).items()))
    return row


def _rel_diff(ours: np.ndarray, theirs: np.ndarray) -> float:
    """The largest ``|ours - theirs|`` over the largest ``|theirs|``, on the losses finite in both
    (a learner may overflow on a stream in both: dadapt_sgd at its defaults on 5 of 1000);
    ``inf`` where a loss is finite in one only."""
    finite = np.isfinite(theirs)
    if not np.array_equal(np.isfinite(ours), finite):
        return float("inf")
    scale = max(float(np.max(np.abs(theirs[finite]), initial=0.0)), 1e-30)
    return float(np.max(np.abs(ours - theirs)[finite], initial=0.0)) / scale


def table(rows: list[dict[str, Any]]) -> str:
    head = (
        "case | ojax s | scan s | slowdown | fori s | vs fori | M steps/s | loop ops ojax/scan"
        " | time-major: ojax s | scan s | slowdown | speedup"
    )
    lines = [head, "-" * len(head)]
    for r in rows:
        fori = (
            (f"{r['fori_seconds']:.4g}", f"{r['fori_slowdown']:.3f}")
            if "fori_seconds" in r
            else ("n/a", "n/a")
        )
        extra = " ".join(f"+{v} {k}" for k, v in r["extra_loop_ops"].items())
        extra = f" ({extra})" if extra else ""
        lines.append(
            " | ".join(
                [
                    r["case"],
                    f"{r['ojax_seconds']:.4g}",
                    f"{r['baseline_seconds']:.4g}",
                    f"{r['slowdown']:.3f}" + (" !" if r["slowdown"] > 1.05 else ""),
                    *fori,
                    f"{r['steps_per_second'] / 1e6:.3g}",
                    f"{r['loop_ops_ojax']}/{r['loop_ops_baseline']}{extra}",
                    *(
                        (
                            f"{r['time_major_ojax_seconds']:.4g}",
                            f"{r['time_major_scan_seconds']:.4g}",
                            f"{r['time_major_slowdown']:.3f}",
                            f"{r['time_major_speedup']:.2f}",
                        )
                        if "time_major_slowdown" in r
                        else ("n/a",) * 4
                    ),
                ]
            )
        )
    lines.append("! slowdown above the 1.05 target (meaningful on a quiet machine only)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes, one round")
    parser.add_argument("--out", default="results/bench_runner")
    parser.add_argument("--streams", type=int, default=None)
    parser.add_argument("--steps", type=int, default=None)
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument(
        "--only", default=None, help="comma list of learner names ('peers': the peer workloads)"
    )
    parser.add_argument(
        "--skip", default="", help="comma list of learner names left out (e.g. flh_ons: O(T^2))"
    )
    args = parser.parse_args(argv)
    streams = args.streams or (4 if args.quick else 100)
    steps = args.steps or (64 if args.quick else 5000)
    repeats = args.repeats or (1 if args.quick else 7)
    names = set(args.only.split(",")) if args.only else None
    load_before = os.getloadavg()[0]
    skip = set(filter(None, args.skip.split(",")))
    cases = registry_cases(streams, steps, names) + peer_cases(streams, steps, names)
    if not cases:
        parser.error(f"--only {args.only}: no such learner")
    if unknown := skip - {c.name for c in cases}:
        parser.error(f"--skip {args.skip}: no such learner among the cases: {sorted(unknown)}")
    cases = [c for c in cases if c.name not in skip]
    if not cases:
        parser.error(f"--skip {args.skip}: leaves no case")
    rows = []
    for case in cases:
        rows.append(measure(case, repeats))
        print(f"{case.name}: slowdown {rows[-1]['slowdown']:.3f}", file=sys.stderr, flush=True)
    env = environment_info()
    env["cpu_count"] = os.cpu_count()
    env["load_average_start_end"] = [round(load_before, 2), round(os.getloadavg()[0], 2)]
    result = {
        "benchmark": "runner",
        "device": env["device"],
        "environment": env,
        "command": " ".join(["python scripts/bench_runner.py", *(argv or sys.argv[1:])]),
        "config": {
            "quick": args.quick,
            "streams": streams,
            "steps": steps,
            "repeats": repeats,
            "target_slowdown": 1.05,
            "target_time_major_slowdown": TIME_MAJOR_TARGET,
        },
        "rows": rows,
    }
    print(table(rows))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench.json").write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {out / 'bench.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
