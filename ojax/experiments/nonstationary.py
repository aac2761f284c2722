"""`ojax run nonstationary`: non-stationary online learning on three problems.

* `regression`: piecewise-stationary linear regression (PyNOL's generator: `x_t` uniform in
  the unit ball of R^3, `w*` redrawn at each of `S` equally spaced switches, noise 0.05;
  `T = 10^4`, `S = 100` stages; `--quick`: `T = 400`, 4 stages), square loss
  `0.5 (<w, x> - y)^2` on the unit ball: the cumulative loss (mean and 10-90% band over seeds)
  of OGD with the static step, restarted and discounted OGD, Ader, SAOL, sleeping
  AdaNormalHedge on the cover, and FLH (pruned) over OGD. Metric `cumulative_loss`.
* `dynamic`: `f_t(x) = ||x - u_t||` on the unit disc with `u_t` a random walk of path length
  `P` (:func:`ojax.envs.switching.random_walk`), over a grid of `P`: the dynamic regret
  `sum_t f_t(x_t)` of Ader (Theorem 3's settings) and of OGD with the static step, beside
  Theorem 3's bound (:func:`ojax.theory.nonstationary.ader_bound`). Metric `dynamic_regret`
  against `P` (the curve's steps).
* `usenet2`: the concept-drift stream (the first 300-row block is the source, four target
  blocks of 300, one concept each; the shipped orders shuffle within blocks): OTL (Zhao & Hoi
  2010) beside non-stationary ensembles of the same two experts, the source classifier `h`
  and the target's kernel PA `f` (OTL's own, so the experts are identical): Fixed Share and
  AdaNormalHedge on their squared losses `(Pi(h) - Pi(y))^2`, `(Pi(f) - Pi(y))^2`,
  predicting `sign(p_h Pi(h) + p_f Pi(f) - 1/2)` as OTL does. Metric `block_mistake_rate`
  (percent) per concept block (steps 1..4); one row per shipped order (`--seeds` at most 20).
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from matplotlib.figure import Figure

from ojax import nonstationary, oco, transfer
from ojax.adapters import linear_predictor
from ojax.core import Step
from ojax.datasets import transfer as transfer_data
from ojax.envs import switching
from ojax.losses import linear_objective, square
from ojax.plotting import quantile_band
from ojax.results import ExperimentResult, split_key
from ojax.runner import run, run_oco
from ojax.sweep.experiment import ExperimentConfig, ExperimentSpec
from ojax.theory.nonstationary import DISTANCE, ader_bound
from ojax.transfer import kernels
from ojax.transfer.pa import project, sign

DIM, RADIUS, NOISE = 3, 1.0, 0.05
DIAMETER = 2.0 * RADIUS
GRADIENT = 2.0  # |y_hat - y| <= 2 (noise aside) and ||x|| <= 1: ||grad|| <= 2
PATHS = (0.0, 2.0, 8.0, 32.0, 128.0, 400.0)  # the dynamic part's path lengths
CURVE_POINTS = 100  # columns kept of a cumulative-loss curve
SHARE, META_RATE = 0.01, 0.5  # the usenet2 ensembles' alpha and eta (OTL's eta = 1/2)


def _regression_learners(num_steps: int, num_switches: int) -> dict[str, tuple[Any, Any]]:
    """name -> (predictor, params) of the regression part, all on the unit ball."""
    f32 = jnp.float32
    step = DIAMETER / (GRADIENT * math.sqrt(num_steps))
    period = max(1, num_steps // (num_switches + 1))
    x0 = jnp.zeros(DIM, f32)
    ogd = oco.OGDParams(jnp.asarray(step, f32), jnp.asarray(RADIUS, f32))
    decaying = oco.ogd(schedule="inverse_sqrt")
    cover = nonstationary.CoverParams(
        oco.OGDParams(jnp.asarray(DIAMETER / GRADIENT, f32), jnp.asarray(RADIUS, f32)),
        jnp.asarray(1 / (GRADIENT * DIAMETER), f32),
    )
    levels = nonstationary.cover_levels(num_steps)
    ader = nonstationary.AderParams.theory(num_steps, DIAMETER, GRADIENT, RADIUS, dtype=f32)
    pool = ader.base.learning_rate.shape[0]
    made = {
        "OGD": (oco.ogd(), ogd),
        "restarted OGD": (
            nonstationary.restarted_ogd(),
            nonstationary.RestartedOGDParams(ogd.learning_rate, ogd.radius, jnp.asarray(period)),
        ),
        "discounted OGD": (
            nonstationary.discounted_ogd(),
            nonstationary.DiscountedOGDParams(
                ogd.learning_rate, ogd.radius, jnp.asarray(1 - 1 / math.sqrt(num_steps), f32)
            ),
        ),
        "Ader": (nonstationary.ader(oco.ogd(), oco.hedge(), pool), ader),
        "SAOL": (nonstationary.saol(decaying, levels), cover),
        "AdaNormalHedge (cover)": (nonstationary.ada_normal_hedge_cover(decaying, levels), cover),
    }
    out = {name: (linear_predictor(learner, square, x0), p) for name, (learner, p) in made.items()}
    flh = nonstationary.flh(decaying, square, x0, num_steps)
    out["FLH"] = (flh, nonstationary.FLHParams(cover.base, jnp.asarray(1 / 16, f32)))
    return out


def regression_part(num_seeds: int, num_steps: int, num_switches: int, key: Any) -> dict:
    """`name -> (seeds, CURVE_POINTS)` cumulative losses, and the steps of the columns."""
    keys = jax.random.split(key, num_seeds)
    data = jax.vmap(
        lambda k: switching.piecewise_regression(k, num_steps, DIM, num_switches, noise=NOISE)
    )(keys)
    columns = np.unique(np.linspace(1, num_steps, CURVE_POINTS).astype(int))
    learners = _regression_learners(num_steps, num_switches)

    def losses(xs, ys):  # every learner in one program (one compilation)
        out = {}
        for name, (learner, params) in learners.items():
            trace = run(learner, params, xs, ys, square, keep_predictions=False)[1]
            out[name] = jnp.cumsum(trace.loss)[columns - 1]
        return out

    curves = jax.jit(jax.vmap(losses))(data.xs, data.ys)
    ordered = {name: np.asarray(curves[name], np.float64) for name in learners}
    return {"curves": ordered, "steps": columns}


def dynamic_part(num_seeds: int, num_steps: int, key: Any) -> dict:
    """`name -> (seeds, len(PATHS))` dynamic regrets, and Theorem 3's bound at each `P`."""
    paths = np.asarray([p for p in PATHS if p <= RADIUS * (num_steps - 1)])
    keys = jax.random.split(key, num_seeds)
    params = nonstationary.AderParams.theory(num_steps, DIAMETER, 1.0, RADIUS)
    ader = nonstationary.ader(oco.ogd(), oco.hedge(), params.base.learning_rate.shape[0])
    step = DIAMETER / math.sqrt(num_steps)
    ogd = oco.OGDParams(jnp.asarray(step), jnp.asarray(RADIUS))
    x0 = jnp.zeros(2)

    def regrets(key, path):
        us = switching.random_walk(key, num_steps, 2, path, radius=RADIUS, dtype=x0.dtype)
        ader_loss = run_oco(ader, params, x0, us, DISTANCE)[1].loss
        ogd_loss = run_oco(oco.ogd(), ogd, x0, us, DISTANCE)[1].loss
        return jnp.sum(ader_loss), jnp.sum(ogd_loss)

    grid = jax.vmap(jax.vmap(regrets, (None, 0)), (0, None))
    ader_r, ogd_r = (np.asarray(a, np.float64) for a in grid(keys, jnp.asarray(paths)))
    bound = ader_bound(np.full(len(paths), num_steps), paths, DIAMETER, 1.0)
    return {"curves": {"Ader": ader_r, "OGD": ogd_r}, "steps": paths, "bound": bound}


def _experts_record(step: Step) -> jax.Array:
    """`(Pi(h(x)), Pi(f(x)))` of OTL's two experts before the update."""
    point = kernels.one_view(step.x, "OTL")
    assert point.offset is not None  # h(x): the pool's offsets
    f = kernels.evaluate(step.state.buffer, point, step.params.width, "gram", "gaussian")
    return jnp.stack([project(point.offset), project(f)])


def _ensemble(learner: Any, params: Any, experts: jax.Array, labels: jax.Array) -> jax.Array:
    """Mistakes of `sign(p_h Pi(h) + p_f Pi(f) - 1/2)` with `p` the learner's weights over
    the two experts, fed their squared losses."""
    squared = (experts - project(labels)[:, None]) ** 2
    x0 = jnp.full(2, 0.5, experts.dtype)
    played = run_oco(learner, params, x0, squared, linear_objective, store_iterates=True)[1]
    assert played.prediction is not None  # the weights: store_iterates
    score = jnp.sum(played.prediction * experts, axis=1) - 0.5
    return (sign(score) != labels).astype(experts.dtype)


def usenet2_part(num_orders: int, data_dir: Any) -> dict:
    """`method -> (orders, blocks)` mistake rates (percent) per concept block of usenet2."""
    _, n_source, n_target, _ = transfer_data.HOMOGENEOUS["usenet2"]
    block = transfer_data.DRIFT_BLOCKS["usenet2"]
    ids = transfer_data.shipped_orders("usenet2", data_dir)[:num_orders]
    rows = ids[:, n_source : n_source + n_target]
    split, orders = transfer_data.split_from_orders("usenet2", np.arange(n_source), rows, data_dir)
    setup = transfer.prepare_transfer(split.source_x, split.source_y, split.target_x,
                                      split.target_y, methods=("OTL",))  # fmt: skip
    otl = setup.methods["OTL"]
    _, trace = otl.run(jnp.asarray(orders), record=_experts_record)
    labels = jnp.asarray(otl.ys)[jnp.asarray(orders)]
    experts = jnp.asarray(trace.record)  # (P, T, 2)
    dtype = experts.dtype
    share = nonstationary.FixedShareParams(jnp.asarray(META_RATE, dtype), jnp.asarray(SHARE, dtype))
    mistakes = {
        "source h": (sign(2 * experts[..., 0] - 1) != labels).astype(dtype),
        "target f (PA)": (sign(2 * experts[..., 1] - 1) != labels).astype(dtype),
        "OTL": jnp.asarray(trace.loss, dtype),
        "Fixed Share(h+f)": jax.vmap(
            lambda e, y: _ensemble(nonstationary.fixed_share(), share, e, y)
        )(experts, labels),
        "AdaNormalHedge(h+f)": jax.vmap(
            lambda e, y: _ensemble(
                nonstationary.ada_normal_hedge(), nonstationary.AdaNormalHedgeParams(), e, y
            )
        )(experts, labels),
    }
    blocks = n_target // block
    return {
        name: 100 * np.asarray(m, np.float64).reshape(len(rows), blocks, block).mean(-1)
        for name, m in mistakes.items()
    }


def run_nonstationary(config: ExperimentConfig) -> ExperimentResult:
    """The three parts (see the module docstring); `--quick`: `T = 400`, 4 stages, the
    dynamic part at `T = 300`, two usenet2 orders."""
    result = ExperimentResult()
    key = jax.random.key(0)
    num_steps, switches = (400, 3) if config.quick else (10_000, 99)
    part = regression_part(config.seeds, num_steps, switches, jax.random.fold_in(key, 1))
    for name, curves in part["curves"].items():
        result.add("regression", name, "cumulative_loss", curves, steps=part["steps"])
    dynamic_steps = 300 if config.quick else 5000
    part = dynamic_part(config.seeds, dynamic_steps, jax.random.fold_in(key, 2))
    for name, curves in part["curves"].items():
        result.add("dynamic", name, "dynamic_regret", curves, steps=part["steps"])
    result.add("dynamic", "Ader", "bound", part["bound"][None], steps=part["steps"])
    orders = min(config.seeds, 2 if config.quick else 20)
    for name, rates in usenet2_part(orders, config.data_dir).items():
        result.add("usenet2", name, "block_mistake_rate", rates, steps=np.arange(1, 5))
    result.extra_config["nonstationary"] = {
        "regression": {"num_steps": num_steps, "stages": switches + 1, "dim": DIM},
        "dynamic": {"num_steps": dynamic_steps, "paths": list(PATHS)},
        "usenet2": {"orders": orders, "share": SHARE, "learning_rate": META_RATE},
    }
    return result


def _axes(title: str, xlabel: str, ylabel: str) -> tuple[Figure, Any]:
    fig = Figure(figsize=(6.4, 4.2))
    ax = fig.subplots()
    ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
    return fig, ax


def figures(run: Any) -> dict[str, Figure]:
    """The plot function: `nonstationary_regression` (cumulative loss, mean and 10-90% band),
    `nonstationary_dynamic` (dynamic regret against P, with Theorem 3's bound) and
    `nonstationary_usenet2` (mistake rate per concept block)."""
    parts: dict[str, dict] = {}
    for key, curve in run.curves.items():
        dataset, method, metric = split_key(key)
        parts.setdefault(dataset, {})[(method, metric)] = curve
    out = {}
    if "regression" in parts:
        fig, ax = _axes("piecewise-stationary regression", "t", "cumulative square loss")
        for (method, _), curve in parts["regression"].items():
            mean, low, high = quantile_band(curve.values)
            (line,) = ax.plot(curve.steps, mean, label=method)
            ax.fill_between(curve.steps, low, high, color=line.get_color(), alpha=0.2)
        ax.legend(fontsize=8)
        out["nonstationary_regression"] = fig
    if "dynamic" in parts:
        fig, ax = _axes("random-walk comparator", "path length P_T", "dynamic regret")
        for (method, metric), curve in parts["dynamic"].items():
            style = "--" if metric == "bound" else "-o"
            label = "Theorem 3 bound" if metric == "bound" else method
            ax.plot(curve.steps, curve.values.mean(0), style, label=label)
        ax.set_xscale("symlog")
        ax.legend(fontsize=8)
        out["nonstationary_dynamic"] = fig
    if "usenet2" in parts:
        fig, ax = _axes("usenet2: one concept per block", "target block", "mistakes (%)")
        for (method, _), curve in parts["usenet2"].items():
            ax.plot(curve.steps, curve.values.mean(0), "-o", label=method)
        ax.set_xticks(np.arange(1, 5))
        ax.legend(fontsize=8)
        out["nonstationary_usenet2"] = fig
    return out


SPEC = ExperimentSpec(
    name="nonstationary",
    summary="non-stationary online learning: piecewise-stationary regression, dynamic regret "
    "against the path length, usenet2's concept drift (Fixed Share, Ader, SAOL, FLH, ...)",
    run=run_nonstationary,
    plot=figures,
    default_seeds=100,
    quick_seeds=4,
    data_files=("usenet2.mat",),
    figures=(
        "nonstationary_regression.png",
        "nonstationary_dynamic.png",
        "nonstationary_usenet2.png",
    ),
    checks=("nonstationary",),
    page="reproductions/nonstationary.md",
)


__all__ = [
    "CURVE_POINTS",
    "DIAMETER",
    "GRADIENT",
    "PATHS",
    "SPEC",
    "dynamic_part",
    "figures",
    "regression_part",
    "run_nonstationary",
    "usenet2_part",
]
