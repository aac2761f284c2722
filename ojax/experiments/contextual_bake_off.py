"""`contextual-bake-off`: the contextual bandit learners on classification data played as bandits.

Every contextual learner of ojax (greedy, epsilon-greedy and SquareCB over an OGD regression
oracle, LinUCB, linear Thompson sampling, EXP4 over random linear policies) runs on every
data set (the shipped binary ones, and scikit-learn's `iris`, `wine`, `digits`,
`breast_cancer` when scikit-learn is installed), converted to a contextual bandit (cost
`1[a != y]`, :func:`ojax.datasets.bandit_problem`), over a small grid of its hyperparameters
and `--seeds` orders of the rows (30 by default): per (learner, data set), one jitted call,
`jax.vmap` over the grid and over the orders. Measured: the progressive validation loss (the
mean over the rounds of the drawn arm's cost, every prediction made before its label was
used), as in Bietti, Agarwal & Langford (2021), A contextual bandit bake-off, JMLR 22.

Rows (`results.csv`): per data set, `LEARNER@i` (grid point `i`, listed in `config.json`'s
`grids`) and `LEARNER` (the grid point best in hindsight on the orders' mean) with
`pv_loss` per order, and per learner `wins`: over data sets and the other learners, the count
of significant wins at an approximate Z-test (`|l_a - l_b| / sqrt(l_a (1 - l_a) / n +
l_b (1 - l_b) / n) > 1.96` on the orders' mean losses, `n` rounds; Bietti et al., Section 5).
Figure `loss_vs_best`: each learner's loss against the best learner's on every data set.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ojax import programs
from ojax.contextual import (
    ContextualData,
    EpsilonGreedyParams,
    EXP4Params,
    GreedyParams,
    LinearTSParams,
    LinUCBParams,
    SquareCBParams,
    epsilon_greedy,
    exp4,
    greedy,
    linear_thompson,
    linucb,
    run_contextual,
    squarecb,
)
from ojax.contextual.policies import random_policies
from ojax.datasets.classes import SHIPPED, SKLEARN, bandit_problem, load_classes, sklearn_available
from ojax.oco import OGDParams, ogd
from ojax.results import ExperimentResult
from ojax.sweep.experiment import ExperimentConfig, ExperimentSpec

ROWS, QUICK_ROWS = 1000, 200
"""The rows of each data set (a random subset drawn once, seed 0), full and `--quick`."""

Z_CRITICAL = 1.96
"""A two-sided 5% approximate Z-test."""


class Learner(NamedTuple):
    """A learner of the bake-off: `make(dim, num_arms, dtype)` and its grid (float32 NumPy,
    cast to the run's dtype at use)."""

    make: Any
    grid: Any


def _f32(*values: float) -> Any:
    """A grid axis as NumPy (a module-level JAX array would start JAX's backend at import,
    before a multi-process run's `jax.distributed.initialize`)."""
    return np.asarray(values, np.float32)


def _ogd_grid(rates: tuple[float, ...]) -> OGDParams:
    return OGDParams(_f32(*rates), _f32(*[1.0] * len(rates)))


RATES = (0.1, 0.5, 2.0)
"""The OGD oracle's learning rates."""

LEARNERS: dict[str, Learner] = {
    "greedy": Learner(lambda d, k, t: greedy(d, k, ogd("none"), t), GreedyParams(_ogd_grid(RATES))),
    "epsilon-greedy": Learner(
        lambda d, k, t: epsilon_greedy(d, k, ogd("none"), t),
        EpsilonGreedyParams(_f32(0.02, 0.05, 0.1), _ogd_grid(RATES)),
    ),
    "SquareCB": Learner(
        lambda d, k, t: squarecb(d, k, ogd("none"), t),
        SquareCBParams(_f32(10.0, 100.0, 1000.0), _ogd_grid(RATES)),
    ),
    "LinUCB": Learner(lambda d, k, t: linucb(d, k, t), LinUCBParams(_f32(0.01, 0.1, 1.0))),
    "linear-TS": Learner(
        lambda d, k, t: linear_thompson(d, k, t), LinearTSParams(_f32(0.01, 0.1, 1.0))
    ),
    "EXP4": Learner(
        lambda d, k, t: exp4(random_policies(0, 32, k, d), t),
        EXP4Params(_f32(0.01, 0.1, 1.0), _f32(0.0, 0.0, 0.0)),
    ),
}
"""The learners and their hyperparameter grids (3 points each, stacked on a leading axis;
epsilon-greedy and SquareCB pair their exploration with the oracle's rate point by point)."""


def datasets() -> tuple[str, ...]:
    """The data sets of the bake-off: the shipped ones, and scikit-learn's when installed."""
    return SHIPPED + (SKLEARN if sklearn_available() else ())


def _problem(name: str, rows: int, data_dir: Any) -> ContextualData:
    x, y, k = load_classes(name, data_dir)
    keep = np.sort(np.random.default_rng(0).permutation(len(y))[: min(rows, len(y))])
    dtype = jax.dtypes.canonicalize_dtype(np.float64)  # float64 under `--x64`, else float32
    return bandit_problem(x[keep], y[keep], num_classes=k, dtype=dtype)


def _orders(n: int, count: int) -> jax.Array:
    rng = np.random.default_rng(1)
    return jnp.asarray(np.stack([rng.permutation(n) for _ in range(count)]), jnp.int32)


def pv_losses(learner: Learner, data: ContextualData, orders: jax.Array) -> np.ndarray:
    """The progressive validation loss `(grid, orders)`: one jitted call, vmapped over the
    grid and the orders (order `s` also draws the arms with key `s`), in the data's dtype; its
    program is kept in the program store (:func:`ojax.programs.jit`): a warm run loads it."""
    dtype = data.contexts.dtype
    model = learner.make(int(data.contexts.shape[1]), int(data.costs.shape[1]), dtype)
    grid = jax.tree.map(lambda a: jnp.asarray(a, dtype), learner.grid)
    keys = jax.random.split(jax.random.key(0), orders.shape[0])

    def one(
        params: Any, order: jax.Array, key: jax.Array, contexts: jax.Array, costs: jax.Array
    ) -> jax.Array:
        cb = ContextualData(contexts, costs, order)
        return jnp.mean(run_contextual(model, params, cb, key)[1].loss)

    def batched(
        grid: Any, orders: jax.Array, keys: jax.Array, contexts: jax.Array, costs: jax.Array
    ) -> jax.Array:
        over_orders = jax.vmap(one, (None, 0, 0, None, None))
        return jax.vmap(over_orders, (0, None, None, None, None))(
            grid, orders, keys, contexts, costs
        )

    return np.asarray(programs.jit(batched)(grid, orders, keys, data.contexts, data.costs))


def z_wins(means: dict[str, float], n: int) -> dict[str, int]:
    """Per learner, the learners it beats at the approximate Z-test (see the module doc)."""
    wins = dict.fromkeys(means, 0)
    for a, la in means.items():
        for b, lb in means.items():
            spread = np.sqrt(max(la * (1 - la) / n + lb * (1 - lb) / n, 1e-12))
            wins[a] += int(a != b and (lb - la) / spread > Z_CRITICAL)
    return wins


def run_experiment(config: ExperimentConfig) -> ExperimentResult:
    """Runs the bake-off (see the module doc)."""
    result = ExperimentResult()
    rows = QUICK_ROWS if config.quick else ROWS
    names = datasets()
    wins = dict.fromkeys(LEARNERS, 0)
    for name in names:
        data = _problem(name, rows, config.data_dir)
        orders = _orders(int(data.contexts.shape[0]), config.seeds)
        means = {}
        for learner_name, learner in LEARNERS.items():
            losses = pv_losses(learner, data, orders)
            for i, per_order in enumerate(losses):
                result.add(name, f"{learner_name}@{i}", "pv_loss", per_order)
            best = int(np.argmin(losses.mean(axis=1)))
            result.add(name, learner_name, "pv_loss", losses[best])
            means[learner_name] = float(losses[best].mean())
        for learner_name, count in z_wins(means, int(data.contexts.shape[0])).items():
            wins[learner_name] += count
    for learner_name, count in wins.items():
        result.add("all", learner_name, "wins", np.array([float(count)]))
    result.extra_config.update(
        {
            "datasets": list(names),
            "rows": rows,
            "grids": {
                k: jax.tree.map(lambda a: np.asarray(a).tolist(), v.grid._asdict())
                for k, v in LEARNERS.items()
            },  # fmt: skip
        }
    )
    return result


def figures(run: Any) -> dict[str, Any]:
    """`loss_vs_best`: per data set, each learner's progressive validation loss (at its grid
    point best in hindsight, mean over orders) against the best learner's."""
    from ojax.plotting import legend, new_figure, style

    names = run.config.get("datasets")
    if not names:
        return {}
    fig, ax = new_figure(width=5.5, height=4.5)
    top = 0.0
    for i, learner_name in enumerate(LEARNERS):
        xs, ys = [], []
        for name in names:
            key = f"{name}/{learner_name}/pv_loss"
            if key not in run.curves:
                continue
            means = [run.curves[f"{name}/{m}/pv_loss"].values.mean() for m in LEARNERS]
            xs.append(min(means))
            ys.append(run.curves[key].values.mean())
        marker = {k: v for k, v in style(i).items() if k in ("color", "marker")}
        ax.scatter(xs, ys, label=learner_name, **marker)
        top = max([top, *xs, *ys])
    ax.plot([0, top], [0, top], color="gray", linewidth=0.8)
    ax.set_xlabel("best learner's progressive validation loss")
    ax.set_ylabel("learner's progressive validation loss")
    legend(fig)
    return {"loss_vs_best": fig}


SPEC = ExperimentSpec(
    name="contextual-bake-off",
    summary="Contextual bandits (greedy, epsilon-greedy, SquareCB, LinUCB, linear TS, EXP4) on "
    "classification data as bandits: progressive validation loss over orders and a grid",
    run=run_experiment,
    plot=figures,
    default_seeds=30,
    quick_seeds=3,
    data_files=("spambase.csv.gz", "mushrooms_keel.csv.gz", "usenet1.mat", "usenet2.mat"),
    figures=("loss_vs_best.png",),
    page="reproductions/contextual-bake-off.md",
)

__all__ = ["LEARNERS", "SPEC", "datasets", "figures", "pv_losses", "run_experiment", "z_wins"]
