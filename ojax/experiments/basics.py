"""The examples of the online learning notes, each against its regret bound.

One dataset per example (docs/cli.md): `experts-adversarial` (1), `experts-realizable` (2),
`ftl-quadratic` (3), `ftl-linear` (4), `ftrl-linear` (5), `ogd` (6), `hedge` (7),
`parameter-free` (8). Each records, per method, the regret at a grid of horizons T and the bound
at those horizons, as curves over seeds. Learners whose tuning depends on the horizon (FTRL, OGD,
Hedge) run once per horizon with that horizon's tuned value: the horizons are one `vmap` axis
over the hyperparameters, and the seeds another.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from ojax import metrics, oco
from ojax.core import Array, OCOLearner, Predictor, Step
from ojax.envs import adversaries
from ojax.game import run_env
from ojax.losses import linear_objective, mismatch, quadratic_objective
from ojax.plotting import regret_figure
from ojax.results import ExperimentResult, split_key
from ojax.runner import run, run_oco
from ojax.sweep import sweep_experiment
from ojax.sweep.experiment import ExperimentConfig, ExperimentSpec

RADIUS = 2.0  # M in examples 3-4, B in examples 5-6
LIPSCHITZ = 1.0  # rho / M of the linear losses in examples 5-6
NUM_EXPERTS = 10  # Hedge (example 7)
NUM_CLASS = 64  # |H| in the realizable example


def vmap_seeds(fn: Callable[[Array], Any], key: Array, num_seeds: int, name: str) -> Any:
    """`fn` over `num_seeds` keys split from `key`, in one vmap (`run_basics` passes the
    sweep engine instead: chunked, sharded, resumable, with the same keys and numbers)."""
    del name
    return jax.vmap(fn)(jax.random.split(key, num_seeds))


def horizons(max_steps: int, count: int = 12) -> np.ndarray:
    """Log-spaced horizons from 10 to `max_steps` (distinct integers)."""
    return np.unique(np.geomspace(10, max_steps, count).astype(int))


def _at(curves: ArrayLike, steps: np.ndarray) -> np.ndarray:
    """Values at the (1-based) horizons `steps` along the last axis."""
    return np.asarray(curves)[..., steps - 1]


def _diagonal(curves: ArrayLike, steps: np.ndarray) -> np.ndarray:
    """Run `h` (tuned for horizon `steps[h]`) read at its own horizon: `(..., H)`."""
    curves = np.asarray(curves)  # (..., H, T)
    return np.stack([curves[..., h, t - 1] for h, t in enumerate(steps)], axis=-1)


def _alternating(num_steps: int) -> np.ndarray:
    """The sequence -0.5, 1, -1, 1, -1, ... of example 4, as `(num_steps, 1)`."""
    z = np.where(np.arange(num_steps) % 2 == 1, 1.0, -1.0)
    z[0] = -0.5
    return z[:, None].astype(np.float32)


def _ball_stream(key: Array, num_steps: int, dim: int, radius: float, drift: float) -> Array:
    """Vectors of norm <= radius: a fixed drift direction plus uniform noise, renormalized."""
    k1, k2, k3 = jax.random.split(key, 3)
    direction = jax.random.normal(k1, (dim,))
    noise = jax.random.normal(k2, (num_steps, dim))
    z = drift * (direction / jnp.linalg.norm(direction))[None, :] + noise / math.sqrt(dim)
    z = z / jnp.maximum(jnp.linalg.norm(z, axis=1, keepdims=True), 1e-12)
    return radius * z * jax.random.uniform(k3, (num_steps, 1), minval=0.5, maxval=1.0)


def _adversarial_binary(predictor: Predictor, num_steps: int) -> Array:
    """Example 1: nature answers the opposite of the learner over H = {always 0, always 1}
    (the environment :func:`ojax.envs.adversaries.opposite`); returns the regret after each
    step."""
    advice = jnp.array([0, 1], jnp.int32)
    _, _, trace = run_env(
        predictor, oco.ExpertsParams(), adversaries.opposite(), advice, jax.random.key(0),
        num_steps, mismatch, record=_label,
    )  # fmt: skip
    ones = jnp.cumsum(trace.record)
    count = jnp.arange(1, num_steps + 1)
    return count - jnp.minimum(ones, count - ones)  # learner errs every step


def _label(step: Step) -> Array:
    return step.y


def _realizable_mistakes(predictor: Predictor, key: Array, num_steps: int) -> Array:
    """Example 2: random advice of NUM_CLASS experts, labels from one of them."""
    k1, k2 = jax.random.split(key)
    advice = jax.random.bernoulli(k1, 0.5, (num_steps, NUM_CLASS)).astype(jnp.int32)
    labels = advice[:, jax.random.randint(k2, (), 0, NUM_CLASS)]
    _, trace = run(predictor, oco.ExpertsParams(), advice, labels, mismatch, keep_predictions=False)
    return jnp.cumsum(trace.loss)  # the true expert makes no mistake


def _adversarial_hedge(learner: OCOLearner, params, num_steps: int) -> tuple[Array, Array]:
    """Example 7, adaptive adversary: loss 1 on the expert Hedge weighs most, 0 elsewhere
    (:func:`ojax.envs.adversaries.heaviest`)."""
    x0 = jnp.full(NUM_EXPERTS, 1.0 / NUM_EXPERTS)
    return adversaries.play_against(learner, params, x0, adversaries.heaviest, num_steps)


def _tuned_runs(
    learner: OCOLearner,
    make_params: Callable[[Array], object],
    steps: np.ndarray,
    x0,
    zs,
    objective,
) -> Array:
    """Losses `(H, T)` of one run per horizon, each tuned for its horizon (one vmap)."""
    grid = make_params(jnp.asarray(steps, jnp.float32))
    return jax.vmap(lambda p: run_oco(learner, p, x0, zs, objective)[1].loss)(grid)


def example_experts(
    num_seeds: int, steps: np.ndarray, key: Array, over_seeds: Callable = vmap_seeds
) -> dict:
    """Examples 1 and 2: regret and bound of follow-the-best-expert and halving."""
    t_max = int(steps[-1])
    out: dict = {"experts-adversarial": {}, "experts-realizable": {}}
    for name, make in (("follow-best-expert", oco.follow_best_expert), ("halving", oco.halving)):
        regret = np.asarray(_adversarial_binary(make(2), t_max), np.float64)
        out["experts-adversarial"][name] = (np.tile(_at(regret, steps), (num_seeds, 1)), steps / 2)
        learner = make(NUM_CLASS)
        mistakes = over_seeds(
            lambda k, p=learner: _realizable_mistakes(p, k, t_max), key, num_seeds, name
        )
        bound = NUM_CLASS - 1.0 if name == "follow-best-expert" else math.log2(NUM_CLASS)
        out["experts-realizable"][name] = (_at(mistakes, steps), np.full(len(steps), bound))
    return out


def example_ftl(
    num_seeds: int, steps: np.ndarray, key: Array, dim: int = 5, over_seeds: Callable = vmap_seeds
) -> dict:
    """Examples 3 and 4: FTL on quadratics (log regret) and on linear losses (linear regret)."""
    t_max = int(steps[-1])
    params = oco.FTLParams(jnp.asarray(RADIUS, jnp.float32))
    learner = oco.ftl("quadratic")

    def quadratic(k):
        zs = _ball_stream(k, t_max, dim, RADIUS, drift=0.5)
        losses = run_oco(learner, params, jnp.zeros(dim), zs, quadratic_objective)[1].loss
        return metrics.regret_to_best(losses, zs, "quadratic", "l2_ball", RADIUS)

    regret = over_seeds(quadratic, key, num_seeds, "ftl-quadratic")
    bound = 4 * RADIUS**2 * (np.log(steps) + 1)
    zs = jnp.asarray(_alternating(t_max))
    losses = run_oco(oco.ftl("linear"), params, jnp.zeros(1), zs, linear_objective)[1].loss
    linear = np.tile(_at(jnp.cumsum(losses), steps), (num_seeds, 1))  # against u = 0
    return {
        "ftl-quadratic": {"FTL": (_at(regret, steps), bound)},
        "ftl-linear": {"FTL": (linear, ftl_linear_bound(steps, RADIUS, 1.0))},
    }


def ftl_linear_bound(steps: np.ndarray, radius: float, scale: float) -> np.ndarray:
    """FTL's upper bound on example 4's sequence `scale * (-0.5, 1, -1, ...)` over
    `[-radius, radius]`: by the follow-the-leader / be-the-leader lemma, Regret_T(u) <=
    sum_t z_t (w_t - w_{t+1}) <= 2 radius sum_{t<=T} |z_t| = 2 radius scale (T - 1/2). Linear in
    T: the lemma gives FTL no sublinear guarantee here (its regret is (T - 1) radius scale)."""
    return 2.0 * radius * scale * (np.asarray(steps, np.float64) - 0.5)


def example_ftrl(num_seeds: int, steps: np.ndarray) -> dict:
    """Example 5: FTRL at lambda* = (M / B) sqrt(2T) on example 4's sequence, against the best
    point of [-B, B] in hindsight; FTL beside it for contrast."""
    t_max = int(steps[-1])
    zs = jnp.asarray(_alternating(t_max) * LIPSCHITZ)
    radius = jnp.asarray(RADIUS, jnp.float32)

    def tuned(t):
        return oco.FTRLParams((LIPSCHITZ / RADIUS) * jnp.sqrt(2 * t), jnp.full_like(t, RADIUS))

    losses = _tuned_runs(oco.ftrl(), tuned, steps, jnp.zeros(1), zs, linear_objective)
    ftrl_regret = _diagonal(metrics.regret_to_best(losses, zs, "linear", "l2_ball", RADIUS), steps)
    ftl_losses = run_oco(
        oco.ftl("linear"), oco.FTLParams(radius), jnp.zeros(1), zs, linear_objective
    )[1].loss
    ftl_regret = _at(metrics.regret_to_best(ftl_losses, zs, "linear", "l2_ball", RADIUS), steps)
    bound = LIPSCHITZ * RADIUS * np.sqrt(2 * steps)
    return {
        "ftrl-linear": {
            "FTRL": (np.tile(ftrl_regret, (num_seeds, 1)), bound),
            "FTL": (
                np.tile(ftl_regret, (num_seeds, 1)),
                ftl_linear_bound(steps, RADIUS, LIPSCHITZ),
            ),
        }
    }


def example_ogd(
    num_seeds: int, steps: np.ndarray, key: Array, dim: int = 5, over_seeds: Callable = vmap_seeds
) -> dict:
    """Example 6: projected OGD from 0 at alpha* = B / (rho sqrt(T)) on rho-Lipschitz linear
    losses, against the best point of the B-ball in hindsight."""
    t_max = int(steps[-1])

    def tuned(t):
        return oco.OGDParams(RADIUS / (LIPSCHITZ * jnp.sqrt(t)), jnp.full_like(t, RADIUS))

    def one_seed(k):
        zs = _ball_stream(k, t_max, dim, LIPSCHITZ, drift=0.3)
        losses = _tuned_runs(oco.ogd(), tuned, steps, jnp.zeros(dim), zs, linear_objective)
        return metrics.regret_to_best(losses, zs, "linear", "l2_ball", RADIUS)

    regret = _diagonal(over_seeds(one_seed, key, num_seeds, "ogd"), steps)
    return {"ogd": {"OGD": (regret, RADIUS * LIPSCHITZ * np.sqrt(steps))}}


def example_hedge(
    num_seeds: int, steps: np.ndarray, key: Array, over_seeds: Callable = vmap_seeds
) -> dict:
    """Example 7: Hedge at eta* = sqrt(8 ln m / T) on random and on adversarial losses."""
    t_max = int(steps[-1])
    learner = oco.hedge()
    x0 = jnp.full(NUM_EXPERTS, 1.0 / NUM_EXPERTS)
    eta = jnp.sqrt(8 * math.log(NUM_EXPERTS) / jnp.asarray(steps, jnp.float32))

    def random_losses(k):
        k1, k2 = jax.random.split(k)
        means = jax.random.uniform(k1, (NUM_EXPERTS,), minval=0.3, maxval=0.7)
        zs = jax.random.uniform(k2, (t_max, NUM_EXPERTS)) * 2 * means[None, :]  # mean `means`
        zs = jnp.minimum(zs, 1.0)
        losses = _tuned_runs(learner, oco.HedgeParams, steps, x0, zs, linear_objective)
        return metrics.regret_to_best(losses, zs, "linear", "simplex")

    def adversarial(e):
        paid, zs = _adversarial_hedge(learner, oco.HedgeParams(e), t_max)
        return metrics.regret_to_best(paid, zs, "linear", "simplex")

    random_regret = _diagonal(over_seeds(random_losses, key, num_seeds, "hedge-random"), steps)
    adversarial_regret = _diagonal(jax.vmap(adversarial)(eta), steps)
    bound = np.sqrt(steps * math.log(NUM_EXPERTS) / 2)
    return {
        "hedge": {
            "Hedge-random": (random_regret, bound),
            "Hedge-adversarial": (np.tile(adversarial_regret, (num_seeds, 1)), bound),
        }
    }


def example_parameter_free(
    num_seeds: int, steps: np.ndarray, key: Array, dim: int = 5, over_seeds: Callable = vmap_seeds
) -> dict:
    """Example 8: KT / ONS coin betting (no step size, no knowledge of B) against OGD tuned with
    B (alpha* = B / (rho sqrt(T))) and OGD with a step 10x too small or too large, on absolute-loss
    regression `y = <u, x> + noise` with `||x|| = 1` and `||u|| = B`; regret against `u`.
    The OGD step multipliers and the horizons are one vmap axis."""
    from ojax import parameter_free
    from ojax.adapters import linear_predictor
    from ojax.losses import absolute
    from ojax.runner import run

    t_max = int(steps[-1])
    multipliers = {"OGD-tuned": 1.0, "OGD-step/10": 0.1, "OGD-stepx10": 10.0}
    scale = jnp.asarray(np.repeat(list(multipliers.values()), len(steps)), jnp.float32)
    horizon = jnp.asarray(np.tile(steps, len(multipliers)), jnp.float32)
    ogd_grid = oco.OGDParams(scale * RADIUS / (LIPSCHITZ * jnp.sqrt(horizon)), jnp.ones_like(scale))
    x0 = jnp.zeros(dim)
    ogd = linear_predictor(oco.ogd("none"), absolute, x0)
    bettors = {
        name: linear_predictor(parameter_free.direction_magnitude(b), absolute, x0)
        for name, b in (("KT", "kt"), ("ONS", "ons"))
    }
    pf_params = parameter_free.DirectionMagnitudeParams(jnp.float32(1.0), jnp.float32(1.0))

    def one_seed(k):
        k1, k2, k3 = jax.random.split(k, 3)
        xs = jax.random.normal(k1, (t_max, dim))
        xs = xs / jnp.linalg.norm(xs, axis=1, keepdims=True)
        u = jax.random.normal(k2, (dim,))
        u = RADIUS * u / jnp.linalg.norm(u)
        ys = xs @ u + 0.1 * jax.random.normal(k3, (t_max,))
        best = jnp.cumsum(jnp.abs(ys - xs @ u))
        ogd_loss = jax.vmap(lambda p: run(ogd, p, xs, ys, absolute)[1].loss)(ogd_grid)
        pf_loss = jnp.stack([run(b, pf_params, xs, ys, absolute)[1].loss for b in bettors.values()])

        def regret(losses):
            return jnp.cumsum(losses, axis=-1) - jnp.broadcast_to(best, losses.shape)

        return regret(ogd_loss), regret(pf_loss)

    ogd_regret, pf_regret = over_seeds(one_seed, key, num_seeds, "parameter-free")
    out = {
        name: (_at(pf_regret[:, i], steps), direction_magnitude_bound(steps, RADIUS, 1.0, b))
        for i, (name, b) in enumerate((("KT", "kt"), ("ONS", "ons")))
    }
    ogd_regret = np.asarray(ogd_regret).reshape(num_seeds, len(multipliers), len(steps), t_max)
    for i, (name, mult) in enumerate(multipliers.items()):
        bound = RADIUS * LIPSCHITZ * np.sqrt(steps) * (1 / (2 * mult) + mult / 2)
        out[name] = (_diagonal(ogd_regret[:, i], steps), bound)
    return {"parameter-free": out}


def direction_magnitude_bound(
    steps: np.ndarray, norm_u: float, initial_wealth: float, bettor: str
) -> np.ndarray:
    """Regret bound of the direction-magnitude learner (KT or ONS bettor) against `u` of norm
    `norm_u`, for gradients of norm <= 1 (`gradient_scale = 1`): Regret(u) <=
    Regret_bet(||u||) + ||u|| Regret_dir, with the unit-ball direction OGD (steps sqrt(2/k),
    diameter 2) at 4 / (2 sqrt(2/T)) + (1/2) sum_k sqrt(2/k) <= 2 sqrt(2T), and the bettor's
    Regret_bet(u) <= eps + sup_S (|u| S - F(S)) for a wealth lower bound F over coins in [-1, 1]:

    * KT (Orabona & Pal 2016): F(S) = eps exp(S^2 / (2T)) / (e sqrt(pi T)), e^2 pi < 24, so
      eps + |u| sqrt(T ln(1 + 24 T^2 u^2 / eps^2));
    * ONS on beta in [-1/2, 1/2] (rate 1/g, g = (2 - ln 3) / 2, A_0 = 1): its log-wealth regret
      is at most r = g / 8 + ln(1 + 4T) / (2g), and ln(1 + x) >= x - x^2 gives F(S) = eps e^-r
      exp(S^2 / (4T)) (|S| <= T), so eps + |u| sqrt(2T ln(1 + 2T u^2 e^(2r) / eps^2)).
    """
    t = np.asarray(steps, np.float64)
    eps, b = float(initial_wealth), float(norm_u)
    if bettor == "kt":
        magnitude = eps + b * np.sqrt(t * np.log1p(24.0 * t**2 * b**2 / eps**2))
    else:
        g = (2.0 - np.log(3.0)) / 2.0
        r = g / 8.0 + np.log1p(4.0 * t) / (2.0 * g)
        magnitude = eps + b * np.sqrt(2.0 * t * np.log1p(2.0 * t * b**2 * np.exp(2 * r) / eps**2))
    return magnitude + b * 2.0 * np.sqrt(2.0 * t)


EXAMPLES = ("experts", "ftl", "ftrl", "ogd", "hedge", "parameter-free")


def run_basics(config: ExperimentConfig) -> ExperimentResult:
    """Runs examples 1-8 and draws each one's regret against T with its bound."""
    steps = horizons(1_000 if config.quick else 20_000, 8 if config.quick else 14)
    key = jax.random.key(0)
    keys = dict(zip(EXAMPLES, jax.random.split(key, len(EXAMPLES))))
    seeds = config.seeds
    compile_seconds = []

    def engine(fn, key, num_seeds, name):  # the sweep engine, seeds as its axis
        cell = sweep_experiment(
            config,
            lambda params, data, k: fn(k),
            key=key,
            name=f"basics-{name}",
            settings={"horizons": steps.tolist()},
        )
        compile_seconds.append(cell.stats.compile_seconds)
        return cell.outputs

    jobs = {
        "experts": lambda: example_experts(seeds, steps, keys["experts"], over_seeds=engine),
        "ftl": lambda: example_ftl(seeds, steps, keys["ftl"], over_seeds=engine),
        "ftrl": lambda: example_ftrl(seeds, steps),
        "ogd": lambda: example_ogd(seeds, steps, keys["ogd"], over_seeds=engine),
        "hedge": lambda: example_hedge(seeds, steps, keys["hedge"], over_seeds=engine),
        "parameter-free": lambda: example_parameter_free(
            seeds, steps, keys["parameter-free"], over_seeds=engine
        ),
    }
    result = ExperimentResult(
        extra_config={"horizons": steps.tolist(), "radius": RADIUS, "bounds": BOUND_NOTES}
    )
    for name in config.progress(EXAMPLES, desc="basics"):
        for dataset, methods in jobs[name]().items():
            for method, (regret, bound) in methods.items():
                regret = np.asarray(regret, np.float64)
                result.add(dataset, method, "regret", regret, steps=steps)
                if bound is not None:
                    tiled = np.tile(bound, (regret.shape[0], 1))
                    result.add(dataset, method, "bound", tiled, steps=steps)
    result.compile_seconds = sum(compile_seconds)
    return result


LOWER_BOUNDS = {"experts-adversarial": "lower bound T/2 (any learner)"}
"""Datasets whose ``bound`` row is a lower bound on every learner's regret (the spec's
example 1): the regret lies above it."""

BOUND_NOTES = {
    "experts-adversarial": "T/2: a LOWER bound, for every learner (regret >= bound)",
    "experts-realizable": "follow-best-expert |H| - 1, halving log2 |H| (mistakes)",
    "ftl-quadratic": "FTL: 4 M^2 (ln T + 1)",
    "ftl-linear": "FTL: 2 M sum |z_t| = 2 M (T - 1/2) (follow / be the leader lemma)",
    "ftrl-linear": "FTRL: M B sqrt(2T); FTL: 2 B M (T - 1/2) (follow / be the leader lemma)",
    "ogd": "OGD: B rho sqrt(T)",
    "hedge": "Hedge: sqrt(T ln(m) / 2), random and adversarial losses alike",
    "parameter-free": "OGD at s x the tuned step: B rho sqrt(T) (1/(2s) + s/2); KT: eps + B "
    "sqrt(T ln(1 + 24 T^2 B^2 / eps^2)) + 2 B sqrt(2T); ONS: eps + B sqrt(2T ln(1 + 2T B^2 "
    "e^(2r) / eps^2)) + 2 B sqrt(2T), r = g/8 + ln(1 + 4T) / (2g), g = (2 - ln 3) / 2",
}
"""Which bound each ``bound`` row is (stored in ``config.json``)."""

TITLES = {
    "experts-adversarial": "Example 1: adversarial binary prediction, 2 experts",
    "experts-realizable": f"Example 2: realizable prediction, |H| = {NUM_CLASS} (mistakes)",
    "ftl-quadratic": "Example 3: FTL on quadratic losses, d = 5",
    "ftl-linear": "Example 4: FTL on linear losses -0.5, 1, -1, ...",
    "ftrl-linear": "Example 5: FTRL on example 4's losses",
    "ogd": "Example 6: OGD on linear losses, d = 5",
    "hedge": f"Example 7: Hedge over {NUM_EXPERTS} experts",
    "parameter-free": "Example 8: coin betting vs OGD, absolute loss, d = 5",
}
"""What each example's figure shows: its caption (the figures carry no title)."""


def figures(run) -> dict[str, Any]:
    """The plot function of `basics` (:mod:`ojax.app.files`): `basics_DATASET`,
    each method's regret with its own bound (the lower bound T/2 of example 1 for all)."""
    datasets: dict[str, dict[str, tuple[np.ndarray, np.ndarray | None]]] = {}
    steps: dict[str, np.ndarray] = {}
    for key, curve in run.curves.items():
        dataset, method, metric = split_key(key)
        if metric == "regret":
            bound = run.curves.get(f"{dataset}/{method}/bound")
            datasets.setdefault(dataset, {})[method] = (
                curve.values,
                None if bound is None else bound.values[0],
            )
            steps[dataset] = curve.steps
    return {f"basics_{d}": _figure(d, m, steps[d]) for d, m in datasets.items()}


def _figure(dataset: str, methods: dict, steps: np.ndarray):
    regrets = {m: np.asarray(r) for m, (r, _) in methods.items()}
    bounds = {m: b for m, (_, b) in methods.items() if b is not None}
    shared = {}
    if dataset in LOWER_BOUNDS:
        shared = {LOWER_BOUNDS[dataset]: next(iter(bounds.values()))}
        bounds = {}
    return regret_figure(steps, regrets, bounds, shared_bounds=shared)


SPEC = ExperimentSpec(
    name="basics",
    summary="online learning basics: examples 1-8 (experts, FTL, FTRL, OGD, Hedge) against their "
    "regret bounds",
    run=run_basics,
    plot=figures,
    default_seeds=10,
    figures=("basics_{dataset}.png",),
    page="reproductions/notes.md",
)


__all__ = [
    "BOUND_NOTES",
    "EXAMPLES",
    "LIPSCHITZ",
    "LOWER_BOUNDS",
    "NUM_CLASS",
    "NUM_EXPERTS",
    "RADIUS",
    "SPEC",
    "TITLES",
    "direction_magnitude_bound",
    "example_experts",
    "example_ftl",
    "example_ftrl",
    "example_hedge",
    "example_ogd",
    "example_parameter_free",
    "figures",
    "ftl_linear_bound",
    "horizons",
    "run_basics",
    "vmap_seeds",
]
