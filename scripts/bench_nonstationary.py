"""ojax's non-stationary learners beside PyNOL's (Li et al., the Python package for
non-stationary online learning) on the same data: losses side by side and the speed ratio.

    python scripts/bench_nonstationary.py [--steps 10000] [--seeds 5,1000] [--pynol-seeds 5]

The data is PyNOL's own piecewise-stationary regression (`LinearRegressionGenerator`: d = 3,
100 stages, the examples' settings), one stream per seed; the loss `0.5 (<x, phi> - y)^2` on
the unit ball. Two learners, configured to be the same algorithm in both libraries:

* OGD with the step `D / (G sqrt(T))` from `x_1 = 0`;
* improved Ader (PyNOL's `Ader(surrogate=True)`: Ader++ of its examples): PyNOL's pool of OGD
  step sizes (read from its `DiscreteSSP`, passed to :class:`ojax.nonstationary.AderParams`),
  its prior, and Hedge at the constant rate `sqrt(8 / T) / (G D)` in both (PyNOL's default
  rate `1 / (G D sqrt(t))` is set to that constant: with a constant rate its greedy Hedge and
  ojax's cumulative-loss Hedge play the same weights).

PyNOL runs the way its users run it: a Python loop over rounds, one seed after another
(`pynol.online_learning.online_learning`); ojax runs every seed in one `jit(vmap(scan))`,
in float64 for the comparison of the losses. PyNOL is timed on `--pynol-seeds` seeds and its
time for more seeds is extrapolated linearly (flagged); ojax is timed on every count of
`--seeds`, compile time apart. PyNOL is installed with `pip install pynol-xzp` (it needs
`autograd` and `cvxpy`); without it the script says so and times ojax alone on its own
generator.
"""

from __future__ import annotations

import argparse
import json
import math
import time

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)

from ojax import losses, nonstationary, oco, run  # noqa: E402
from ojax.adapters import linear_predictor  # noqa: E402
from ojax.envs import switching  # noqa: E402

DIM, STAGES, RADIUS, SCALE = 3, 100, 1.0, 0.5  # PyNOL's examples: R = Gamma = 1, loss scale 1/2
DIAMETER = 2 * RADIUS
LIPSCHITZ = SCALE * DIAMETER  # PyNOL's G = scale * D * Gamma^2


def pynol_data(num_steps: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    from pynol.utils.data_generator import LinearRegressionGenerator

    return LinearRegressionGenerator().generate_data(num_steps, DIM, STAGES, RADIUS, 1.0, seed=seed)


def own_data(num_steps: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    data = switching.piecewise_regression(jax.random.key(seed), num_steps, DIM, STAGES - 1,
                                          dtype=jnp.float64)  # fmt: skip
    return np.asarray(data.xs), np.asarray(data.ys)


def pynol_runs(num_steps: int, seeds: list[int]) -> dict:
    """PyNOL's per-round losses `(seeds, T)` of OGD and Ader++, its step pool, and seconds."""
    from pynol.environment.domain import Ball
    from pynol.environment.environment import Environment
    from pynol.environment.loss_function import SquareLoss
    from pynol.learner.base import OGD
    from pynol.learner.models.dynamic.ader import Ader
    from pynol.online_learning import online_learning

    domain, x0 = Ball(dimension=DIM, radius=RADIUS), np.zeros(DIM)
    step = DIAMETER / (LIPSCHITZ * math.sqrt(num_steps))
    beta = math.sqrt(8 / num_steps) / (LIPSCHITZ * DIAMETER)
    out: dict = {"OGD": [], "Ader": [], "seconds": {"OGD": 0.0, "Ader": 0.0}}
    for seed in seeds:
        xs, ys = pynol_data(num_steps, seed)
        env = Environment(func_sequence=SquareLoss(feature=xs, label=ys, scale=SCALE))
        ader = Ader(domain=domain, T=num_steps, G=LIPSCHITZ, surrogate=True,
                    min_step_size=step, max_step_size=DIAMETER / LIPSCHITZ, prior=x0)  # fmt: skip
        ader.meta.lr = beta
        out["pool"] = np.asarray([base.step_size for base in ader.schedule.bases], np.float64)
        for name, learner in (("OGD", OGD(domain=domain, step_size=step, prior=x0)),
                              ("Ader", ader)):  # fmt: skip
            start = time.perf_counter()
            loss = online_learning(num_steps, env, learner)[1]
            out["seconds"][name] += time.perf_counter() - start
            out[name].append(np.asarray(loss, np.float64))
    return out


def ojax_learners(num_steps: int, pool: np.ndarray) -> dict:
    """OGD and Ader on `0.5 (y_hat - y)^2` (:data:`ojax.losses.square`) with the steps and the
    rate multiplied by PyNOL's loss scale: the same iterates as PyNOL's on its scaled loss."""
    step = SCALE * DIAMETER / (LIPSCHITZ * math.sqrt(num_steps))
    beta = SCALE * math.sqrt(8 / num_steps) / (LIPSCHITZ * DIAMETER)
    pool = SCALE * pool
    x0 = jnp.zeros(DIM)
    ader = nonstationary.AderParams(
        oco.OGDParams(jnp.asarray(pool), jnp.full(len(pool), RADIUS)), oco.HedgeParams(beta)
    )
    return {
        "OGD": (oco.ogd(), oco.OGDParams(jnp.asarray(step), jnp.asarray(RADIUS)), x0),
        "Ader": (nonstationary.ader(oco.ogd(), oco.hedge(), len(pool)), ader, x0),
    }


def ojax_runs(learners: dict, xs: np.ndarray, ys: np.ndarray) -> dict:
    """Per-round losses `(seeds, T)` (PyNOL's scale) and compile / run seconds."""
    out: dict = {"seconds": {}, "compile": {}}
    for name, (learner, params, x0) in learners.items():
        predictor = linear_predictor(learner, losses.square, x0)

        def one(x, y, predictor=predictor, params=params):
            return (
                SCALE * run(predictor, params, x, y, losses.square, keep_predictions=False)[1].loss
            )

        fn = jax.jit(jax.vmap(one))
        start = time.perf_counter()
        compiled = fn.lower(jnp.asarray(xs), jnp.asarray(ys)).compile()
        out["compile"][name] = time.perf_counter() - start
        start = time.perf_counter()
        out[name] = np.asarray(jax.block_until_ready(compiled(jnp.asarray(xs), jnp.asarray(ys))))
        out["seconds"][name] = time.perf_counter() - start
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10_000)
    parser.add_argument("--seeds", default="5,1000", help="ojax's seed counts, comma-separated")
    parser.add_argument("--pynol-seeds", type=int, default=5)
    parser.add_argument("--out", default=None, help="write the numbers as JSON here")
    args = parser.parse_args()
    counts = [int(c) for c in args.seeds.split(",")]
    report: dict = {"steps": args.steps, "pynol": None}
    try:
        peer = pynol_runs(args.steps, list(range(args.pynol_seeds)))
    except ImportError as exc:
        print(f"PyNOL is not installed ({exc}); `pip install pynol-xzp` to compare. ojax alone:")
        peer, pool = None, None
    if peer is not None:
        pool = peer["pool"]
        data = [pynol_data(args.steps, s) for s in range(args.pynol_seeds)]
        xs, ys = np.stack([d[0] for d in data]), np.stack([d[1] for d in data])
        ours = ojax_runs(ojax_learners(args.steps, pool), xs, ys)
        print(f"losses on PyNOL's data, {args.pynol_seeds} seeds, T = {args.steps}:")
        header = ("learner", "PyNOL cum. loss", "ojax cum. loss", "max |diff| / step")
        print(f"{header[0]:8} {header[1]:>16} {header[2]:>16} {header[3]:>18}")
        report["pynol"] = {"seconds": peer["seconds"], "seeds": args.pynol_seeds, "losses": {}}
        for name in ("OGD", "Ader"):
            theirs, mine = np.stack(peer[name]), ours[name]
            diff = float(np.max(np.abs(theirs - mine)))
            print(f"{name:8} {theirs.sum(1).mean():16.4f} {mine.sum(1).mean():16.4f} {diff:18.2e}")
            report["pynol"]["losses"][name] = {
                "pynol": float(theirs.sum(1).mean()), "ojax": float(mine.sum(1).mean()),
                "max_abs_diff": diff,
            }  # fmt: skip
    else:
        pool = np.asarray(nonstationary.AderParams.theory(
            args.steps, DIAMETER, LIPSCHITZ, RADIUS).base.learning_rate)  # fmt: skip
    print("\nseconds (ojax: run after compile, all seeds in one vmap; compile apart):")
    report["ojax"] = {}
    for count in counts:
        data = [own_data(args.steps, s) for s in range(count)]
        if peer is not None and count <= args.pynol_seeds:
            data = [pynol_data(args.steps, s) for s in range(count)]
        xs, ys = np.stack([d[0] for d in data]), np.stack([d[1] for d in data])
        ours = ojax_runs(ojax_learners(args.steps, pool), xs, ys)
        report["ojax"][count] = {"seconds": ours["seconds"], "compile": ours["compile"]}
        for name in ("OGD", "Ader"):
            line = f"{count:5d} seeds {name:5}: ojax {ours['seconds'][name]:8.3f} s " \
                   f"(compile {ours['compile'][name]:.2f} s)"  # fmt: skip
            if peer is not None:
                theirs = peer["seconds"][name] / args.pynol_seeds * count
                flag = "" if count <= args.pynol_seeds else " (extrapolated)"
                line += (
                    f"   PyNOL {theirs:9.1f} s{flag}   ratio {theirs / ours['seconds'][name]:9.0f}x"
                )
            print(line)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(report, f, indent=1, default=float)


if __name__ == "__main__":
    main()
