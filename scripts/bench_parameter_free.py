"""ojax's parameter-free learners beside optax.contrib's same algorithms, many streams at once.

    python scripts/bench_parameter_free.py [--quick] [--out DIR] [--streams 100,1000]
                                           [--steps N] [--repeats K]

Work: a linear model under the absolute loss on a synthetic regression stream (d = 20, ``N``
steps, default 2000; ``y_t = <u, x_t>`` with ``x_t`` on the unit sphere), one stream per seed,
the same arrays for both. ojax runs ``jax.jit(jax.vmap(run))`` of the learner as a linear
predictor (:func:`ojax.run`, progressive validation); optax runs what its users write: a
``lax.scan`` of ``opt.update`` / ``optax.apply_updates`` on the same gradient, under
``jax.jit(jax.vmap(...))``. Pairs: COCOB (``optax.contrib.cocob``), DoG (``dog``), Prodigy
(``prodigy``), D-Adaptation (ojax's SGD version beside ``dadapt_adamw``, optax's only one),
Mechanic on SGD (``mechanize(sgd)``), Schedule-Free SGD (``schedule_free_sgd``).

Each time is the median of ``--repeats`` runs after compilation; compile time is its own field.
Rows: ``steps_per_second`` = streams x steps / seconds; ratio = optax seconds / ojax seconds
(higher is better for ojax). Writes DIR/bench.json (the format of docs/cli.md; default DIR:
results/bench_parameter_free). Time it on a quiet machine: under load the numbers mean little.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import optax

from ojax import losses, oco, parameter_free, run
from ojax.adapters import linear_predictor
from ojax.app.output import environment_info

DIM = 20


def ojax_pairs() -> dict[str, tuple[Any, Any]]:
    ogd_base = oco.OGDParams(jnp.float32(1.0), jnp.float32(1.0))
    return {
        "cocob": (parameter_free.cocob(), parameter_free.CocobParams.default()),
        "dog": (parameter_free.dog(), parameter_free.DoGParams.default()),
        "prodigy": (parameter_free.prodigy(), parameter_free.ProdigyParams.default()),
        "dadapt": (parameter_free.dadapt_sgd(), parameter_free.DAdaptParams.default()),
        "mechanic": (
            parameter_free.mechanic(oco.ogd("none")),
            parameter_free.MechanicParams.default(ogd_base),
        ),
        "schedule_free": (
            parameter_free.schedule_free_sgd(),
            parameter_free.ScheduleFreeParams.default(),
        ),
    }


OPTAX: dict[str, tuple[str, Callable[[], optax.GradientTransformation]]] = {
    "cocob": ("optax.contrib.cocob", lambda: optax.contrib.cocob()),
    "dog": ("optax.contrib.dog", lambda: optax.contrib.dog()),
    "prodigy": ("optax.contrib.prodigy", lambda: optax.contrib.prodigy()),
    "dadapt": ("optax.contrib.dadapt_adamw (optax has no SGD version)", optax.contrib.dadapt_adamw),
    "mechanic": (
        "optax.contrib.mechanize(optax.sgd(1.0))",
        lambda: optax.contrib.mechanize(optax.sgd(1.0)),
    ),
    "schedule_free": ("optax.contrib.schedule_free_sgd", lambda: optax.contrib.schedule_free_sgd()),
}


def streams(num_streams: int, num_steps: int) -> tuple[jax.Array, jax.Array]:
    """``(xs, ys)`` of shape ``(S, N, d)`` and ``(S, N)``: one regression stream per seed."""
    keys = jax.random.split(jax.random.key(0), num_streams)

    def one(key):
        k_u, k_x = jax.random.split(key)
        u = jax.random.normal(k_u, (DIM,))
        xs = jax.random.normal(k_x, (num_steps, DIM))
        xs = xs / jnp.linalg.norm(xs, axis=1, keepdims=True)
        return xs, xs @ u

    return jax.jit(jax.vmap(one))(keys)


def ojax_fn(learner: Any, params: Any) -> Callable:
    predictor = linear_predictor(learner, losses.absolute, jnp.zeros(DIM))

    def one(xs, ys):
        _, trace = run(predictor, params, xs, ys, losses.absolute, keep_predictions=False)
        return trace.loss.mean()

    return jax.jit(jax.vmap(one))


def optax_fn(make: Callable[[], optax.GradientTransformation]) -> Callable:
    opt = make()

    def one(xs, ys):
        def step(carry, item):
            w, state = carry
            x, y = item
            y_hat = jnp.vdot(w, x)
            grad = losses.absolute.grad(y_hat, y) * x
            updates, state = opt.update(grad, state, w)
            return (optax.apply_updates(w, updates), state), losses.absolute.value(y_hat, y)

        w0 = jnp.zeros(DIM)
        _, loss = jax.lax.scan(step, (w0, opt.init(w0)), (xs, ys))
        return loss.mean()

    return jax.jit(jax.vmap(one))


def timed(fn: Callable, args: tuple, repeats: int) -> tuple[float, float, float]:
    """``(compile seconds, median run seconds, mean final metric)``."""
    start = time.perf_counter()
    compiled = fn.lower(*args).compile()
    compile_s = time.perf_counter() - start
    out = jax.block_until_ready(compiled(*args))
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(compiled(*args))
        times.append(time.perf_counter() - start)
    return compile_s, statistics.median(times), float(jnp.mean(out))


def bench(stream_counts: list[int], num_steps: int, repeats: int) -> list[dict[str, Any]]:
    rows = []
    pairs = ojax_pairs()
    for count in stream_counts:
        data = streams(count, num_steps)
        for name, (learner, params) in pairs.items():
            o_compile, o_s, o_metric = timed(ojax_fn(learner, params), data, repeats)
            label, make = OPTAX[name]
            b_compile, b_s, b_metric = timed(optax_fn(make), data, repeats)
            steps = count * num_steps
            rows.append(
                {
                    "case": f"{name} S={count}",
                    "streams": count,
                    "steps": num_steps,
                    "ojax": f"ojax parameter_free.{name}",
                    "ojax_seconds": o_s,
                    "ojax_compile_seconds": o_compile,
                    "ojax_steps_per_second": steps / o_s,
                    "baseline": f"{label} under jax.vmap",
                    "baseline_seconds": b_s,
                    "baseline_compile_seconds": b_compile,
                    "baseline_steps_per_second": steps / b_s,
                    "ratio": b_s / o_s,
                    "ojax_average_loss": o_metric,
                    "baseline_average_loss": b_metric,
                }
            )
            print(
                f"{rows[-1]['case']:20s} ojax {steps / o_s:12.4g} steps/s  "
                f"optax {steps / b_s:12.4g} steps/s  ratio {b_s / o_s:6.2f}  "
                f"(compile {o_compile:.2f} / {b_compile:.2f} s)"
            )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke size: 4 and 8 streams")
    parser.add_argument("--out", type=Path, default=Path("results/bench_parameter_free"))
    parser.add_argument("--streams", default="100,1000")
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    try:
        counts = [int(s) for s in args.streams.split(",")]
    except ValueError:
        counts = []
    if not counts or min(counts) < 1 or args.steps < 1 or args.repeats < 1:
        print(
            f"bench_parameter_free: --streams must be positive integers separated by commas, "
            f"--steps and --repeats >= 1; got {args.streams!r}, {args.steps}, {args.repeats}",
            file=sys.stderr,
        )
        return 2
    if args.quick:
        counts, args.steps, args.repeats = [4, 8], 50, 2
    rows = bench(counts, args.steps, args.repeats)
    env = environment_info()
    result = {
        "benchmark": "parameter_free",
        "device": env.get("device", jax.devices()[0].platform),
        "environment": env,
        "config": {
            "streams": counts,
            "steps": args.steps,
            "repeats": args.repeats,
            "dim": DIM,
            "quick": args.quick,
        },
        "rows": rows,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "bench.json").write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {args.out / 'bench.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
