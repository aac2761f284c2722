"""Checks of the non-stationary learners (document `nonstationary`): switching regret of
Fixed Share, dynamic regret of Ader, adaptive regret of Follow-the-Leading-History; in each,
a learner with no mixing or a fixed step breaks the bound on the same switching sequence.

* Fixed Share (Herbster & Warmuth 1998, the fixed-share bound; in the Hedge form of
  Cesa-Bianchi & Lugosi 2006, Section 5.2): for losses in `[0, 1]`, `N` experts and every
  sequence of experts with `m` switches, the "start" scheme
  (:func:`ojax.nonstationary.fixed_share`) has regret at most
  `B = ln(1 / pi) / eta + eta T / 8` with
  `ln(1 / pi) = (m + 1) ln N + m ln(1 / alpha) + (T - m - 1) ln(1 / (1 - alpha))`
  (the compound expert's prior under the share, and Hoeffding's lemma). Run at
  `alpha = m / (T - 1)` and `eta = sqrt(8 ln(1 / pi) / T)`; falsifier: Hedge (`alpha = 0`)
  at the same `eta`. The theorem's number in the papers is not restated (no copy at hand);
  the constant is the one of this argument.
* Ader (Zhang, Lu & Zhou 2018, Theorem 3; improved Ader, one gradient per round): with
  Theorem 3's pool `eta_i = 2^(i-1) (D / G) sqrt(7 / (2T))`, `N = ceil(log2(1 + 4T/7) / 2)
  + 1`, the prior `(1 + 1/N) / (i (i + 1))` and Hedge at `beta = sqrt(8 / T) / (G D)` on the
  surrogate losses, for every comparator sequence of path length `P_T`:
  `R <= (3G/4) sqrt(2T (7D^2 + 4 D P_T)) + (G D sqrt(2T) / 4) (1 + 2 ln(k + 1))`,
  `k = floor(log2(1 + 4 P_T / (7D)) / 2) + 1`. The first term is the paper's Theorem 1 (OGD
  with step `eta`: `7D^2 / (4 eta) + D P_T / eta + eta T G^2 / 2`) at the pool's step within
  a factor 2 of the best; the second is Hedge's regret to expert `k` (surrogate losses of a
  round within `G D` of each other, `ln(1 / p_{1,k}) <= 2 ln(k + 1)`): the meta term's
  constant is derived here, the paper's own may differ. Instance: `f_t(x) = ||x - u_t||`
  (`G = 1`) on the unit disc (`D = 2`), `u_t` switching between `+e_1` and `-e_1`
  `floor(sqrt(T) / 2)` times (`P_T = 2 floor(sqrt(T) / 2)`); measured: `sum_t f_t(x_t)`
  (`f_t(u_t) = 0`). Falsifier: OGD with the static step `D / (G sqrt(T))`, the pool's
  smallest tuning (a fixed step): each switch costs it about `D^2 / (2 eta)`.
* FLH (Hazan & Seshadhri 2009, FLH1): for `alpha`-exp-concave losses, on every interval
  `[r, s]`, `sum_{t in I} f_t(x_t) - f_t(x_t^(r)) <= ln(s + 1) / alpha` (`v_r^(r) = 1 / r`,
  the addition step costs `ln((t + 1) / t)` per round, the mixing inequality of
  exp-concavity); with the base's regret `R(|I|)` of the expert started at `r` it is FLH's
  adaptive regret. Measured: the largest such difference over the geometric cover's intervals
  inside `[1, T]`, against `ln(T + 1) / alpha`. Instance: the square loss of a 1-D linear
  model, `x_t` uniform in `[-1, 1]`, `y_t = w*_t x_t` with `w*` alternating `+1, -1` every
  `T / 4` rounds (aligned with the cover), `alpha = 1/4` (`|y_hat - y| <= 2`). Falsifier:
  the base alone (OGD with the step `eta / sqrt(t)` from round 1, no history), against the
  same experts. The theorem's number is not restated (no copy at hand); the constant is the
  one of this argument.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from ojax import nonstationary, oco
from ojax.adapters import linear_predictor
from ojax.core import Step
from ojax.envs import switching
from ojax.losses import Objective, linear_objective, square
from ojax.runner import run, run_oco
from ojax.theory.base import Check, CheckConfig, Outcome, as_measured, log_horizons
from ojax.theory.notes import config_dtype, with_precision

NUM_EXPERTS = 10
NUM_SWITCHES = 8  # Fixed Share's switching sequence
GOOD, BAD = 0.2, 0.7  # the good expert's and the others' mean losses
FLH_STEP = 0.5  # the base OGD's eta: its step is eta / sqrt(s) at its s-th update
FLH_ALPHA = 0.25  # exp-concavity of 0.5 (y_hat - y)^2 for |y_hat - y| <= 2


def fixed_share_bound(steps: np.ndarray, num_experts: int, switches: int) -> tuple:
    """`(bound, eta, alpha)` per horizon of the fixed-share check (see the module doc)."""
    t = np.asarray(steps, np.float64)
    alpha = switches / (t - 1)
    log_prior = (
        (switches + 1) * math.log(num_experts)
        + switches * np.log(1 / alpha)
        + (t - switches - 1) * np.log(1 / (1 - alpha))
    )
    eta = np.sqrt(8 * log_prior / t)
    return log_prior / eta + eta * t / 8, eta, alpha


def _switching_losses(key, horizon, t_max: int, dtype) -> tuple:
    """`(losses (t_max, N), best (t_max,), mask (t_max,))`: the first `horizon` rounds of
    :func:`ojax.envs.switching.switching_experts`'s sequence with `NUM_SWITCHES` switches
    equally spaced over `horizon` (traced: every horizon in one program), padding after."""
    t = jnp.arange(t_max, dtype=jnp.int32)
    stage = jnp.minimum(t * (NUM_SWITCHES + 1) // horizon, NUM_SWITCHES)
    k1, k2, k3 = jax.random.split(key, 3)
    moves = 1 + jax.random.randint(k1, (NUM_SWITCHES,), 0, NUM_EXPERTS - 1, jnp.int32)
    first = jax.random.randint(k2, (1,), 0, NUM_EXPERTS, jnp.int32)
    best = (jnp.cumsum(jnp.concatenate([first, moves])) % NUM_EXPERTS)[stage]
    means = jnp.where(jnp.arange(NUM_EXPERTS, dtype=jnp.int32)[None] == best[:, None], GOOD, BAD)
    losses = (jax.random.uniform(k3, (t_max, NUM_EXPERTS), dtype) < means).astype(dtype)
    return losses, best, t < horizon


@with_precision
def _fixed_share(config: CheckConfig) -> Outcome:
    steps = log_horizons(200, 2000 if config.quick else 20_000, 4 if config.quick else 7)
    bound, etas, alphas = fixed_share_bound(steps, NUM_EXPERTS, NUM_SWITCHES)
    dtype, t_max = config_dtype(config), int(steps[-1])
    keys = jax.random.split(jax.random.key(config.seed), config.num_seeds)
    x0 = jnp.full(NUM_EXPERTS, 1 / NUM_EXPERTS, dtype)

    def regrets(key, horizon, eta, alpha):  # (Fixed Share, Hedge) regret to the compound
        losses, best, mask = _switching_losses(key, horizon, t_max, dtype)
        compound = jnp.sum(jnp.where(mask, jnp.take_along_axis(losses, best[:, None], 1)[:, 0], 0))
        out = []
        for share in (alpha, jnp.zeros_like(alpha)):
            params = nonstationary.FixedShareParams(eta, share)
            trace = run_oco(nonstationary.fixed_share(), params, x0, losses, linear_objective,
                            mask=mask)[1]  # fmt: skip
            out.append(jnp.sum(trace.loss) - compound)
        return jnp.stack(out)

    grid = jax.vmap(jax.vmap(regrets, (None, 0, 0, 0)), (0, None, None, None))
    values = np.asarray(
        grid(
            keys,
            jnp.asarray(steps, jnp.int32),
            jnp.asarray(etas, dtype),
            jnp.asarray(alphas, dtype),
        ),
        np.float64,
    )  # (seeds, H, 2)
    return Outcome(
        steps,
        {
            "FixedShare(start)@switching": as_measured(values[..., 0], bound),
            "falsifier:Hedge@switching": as_measured(values[..., 1], bound),
        },
    )


def ader_bound(steps, path_length, diameter: float, lipschitz: float) -> np.ndarray:
    """Theorem 3's bound with the constants of the module doc."""
    t, p = np.asarray(steps, np.float64), np.asarray(path_length, np.float64)
    k = np.floor(0.5 * np.log2(1 + 4 * p / (7 * diameter))) + 1
    experts = 0.75 * lipschitz * np.sqrt(2 * t * (7 * diameter**2 + 4 * diameter * p))
    return experts + lipschitz * diameter * np.sqrt(2 * t) / 4 * (1 + 2 * np.log(k + 1))


def _distance_grad(w: jax.Array, z: jax.Array) -> jax.Array:
    gap = w - z
    norm = jnp.linalg.norm(gap)
    return gap / jnp.where(norm > 0, norm, 1.0)


DISTANCE = Objective("distance", lambda w, z: jnp.linalg.norm(w - z), _distance_grad)
"""`f(x) = ||x - z||`: convex, 1-Lipschitz, 0 at `z`."""


def _ader_comparators(horizon: int, dtype) -> np.ndarray:
    switches = int(math.sqrt(horizon) // 2)
    stage = switching.stages(horizon, switching.switch_times(None, horizon, switches))
    sign = np.where(np.asarray(stage) % 2 == 0, 1.0, -1.0)
    return np.stack([sign, np.zeros(horizon)], 1).astype(dtype)


@with_precision
def _ader(config: CheckConfig) -> Outcome:
    steps = log_horizons(1000, 4000 if config.quick else 40_000, 3 if config.quick else 6)
    dtype, radius, diameter, lipschitz = config_dtype(config), 1.0, 2.0, 1.0
    x0 = jnp.zeros(2, dtype)
    measured: dict[str, list] = {"Ader@switching": [], "falsifier:OGD(static step)@switching": []}
    lengths = []
    for horizon in steps:
        us = _ader_comparators(int(horizon), dtype)
        lengths.append(float(nonstationary.path_length(us)))
        params = nonstationary.AderParams.theory(int(horizon), diameter, lipschitz, radius,
                                                 dtype=dtype)  # fmt: skip
        pool = params.base.learning_rate.shape[0]
        learner = nonstationary.ader(oco.ogd(), oco.hedge(), pool)
        _, trace = run_oco(learner, params, x0, jnp.asarray(us), DISTANCE)
        measured["Ader@switching"].append(float(jnp.sum(trace.loss)))
        step = diameter / (lipschitz * math.sqrt(horizon))
        ogd = oco.OGDParams(jnp.asarray(step, dtype), jnp.asarray(radius, dtype))
        _, trace = run_oco(oco.ogd(), ogd, x0, jnp.asarray(us), DISTANCE)
        measured["falsifier:OGD(static step)@switching"].append(float(jnp.sum(trace.loss)))
    bound = ader_bound(steps, np.asarray(lengths), diameter, lipschitz)
    return Outcome(steps, {k: as_measured([v], bound) for k, v in measured.items()})


def _flh_instance(config: CheckConfig, horizon: int, dtype) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng([config.seed, 3])
    xs = rng.uniform(-1.0, 1.0, size=(config.num_seeds, horizon, 1)).astype(dtype)
    stage = np.arange(horizon) // (horizon // 4)
    ys = np.where(stage % 2 == 0, 1.0, -1.0)[None, :] * xs[..., 0]
    return xs, ys.astype(dtype)


@with_precision
def _flh(config: CheckConfig) -> Outcome:
    horizon = 1024 if config.quick else 2048
    dtype = config_dtype(config)
    xs, ys = _flh_instance(config, horizon, dtype)
    base = oco.ogd(schedule="inverse_sqrt")
    base_params = oco.OGDParams(jnp.asarray(FLH_STEP, dtype), jnp.asarray(1.0, dtype))
    learner = nonstationary.flh(base, square, jnp.zeros(1, dtype), horizon, pruned=False)
    params = nonstationary.FLHParams(base_params, jnp.asarray(FLH_ALPHA, dtype))

    def experts_losses(step: Step) -> jax.Array:  # f_t(x_t^(j)) of every slot (expert j + 1)
        points = jax.vmap(lambda s: base.iterate(s, base_params))(step.state.base)
        return square.value(points @ step.x, step.y)

    cover = nonstationary.geometric_cover(horizon)
    steps = log_horizons(64, horizon, 5 if config.quick else 7)
    methods: dict[str, list] = {"FLH1@switching": [], "falsifier:base alone@switching": []}
    for x, y in zip(xs, ys):  # one seed at a time: the record is (T, T)
        _, trace = run(learner, params, jnp.asarray(x), jnp.asarray(y), square,
                       record=experts_losses, keep_predictions=False)  # fmt: skip
        alone = _alone(base, base_params, x, y, dtype)
        record = np.asarray(trace.record, np.float64)
        prefix = np.vstack([np.zeros(horizon), np.cumsum(record, axis=0)])
        start, end = cover[:, 0], cover[:, 1]
        expert = prefix[end, start - 1] - prefix[start - 1, start - 1]
        for name, paid in (
            ("FLH1@switching", trace.loss),
            ("falsifier:base alone@switching", alone),
        ):
            # in the run's dtype (float64 under x64); a float64 request without x64 warns
            sums = np.asarray(nonstationary.interval_sums(jnp.asarray(paid, dtype), cover))
            gaps = sums - expert
            methods[name].append([gaps[end <= t].max() for t in steps])
    bound = np.log(steps + 1.0) / FLH_ALPHA
    return Outcome(steps, {k: as_measured(np.asarray(v), bound) for k, v in methods.items()})


def _alone(base, params, xs, ys, dtype) -> np.ndarray:
    """The losses of `base` alone as a linear predictor on `(xs, ys)` (square loss)."""
    predictor = linear_predictor(base, square, jnp.zeros(xs.shape[-1], dtype))
    _, trace = run(predictor, params, jnp.asarray(xs), jnp.asarray(ys), square)
    return np.asarray(trace.loss, np.float64)


CHECKS: tuple[Check, ...] = (
    Check(
        "fixed-share-switching",
        "nonstationary",
        "Herbster & Warmuth 1998, the fixed-share bound (Hedge form: Cesa-Bianchi & Lugosi "
        "2006, Section 5.2); Bousquet & Warmuth 2002's share to the start vector",
        "losses in [0, 1], N experts, every expert sequence with m switches: regret <= "
        "ln(1/pi)/eta + eta T/8, ln(1/pi) = (m+1) ln N + m ln(1/alpha) + (T-m-1) ln(1/(1-alpha))",
        f"N = {NUM_EXPERTS} experts, m = {NUM_SWITCHES} equally spaced switches of the good "
        f"expert (Bernoulli losses, mean {GOOD} for the good one, {BAD} for the others; one row "
        "per seed); the compound expert follows the good one; alpha = m / (T - 1), eta tuned "
        "per horizon",
        "bound",
        "T (rounds)",
        _fixed_share,
        falsifier="Hedge (alpha = 0, no mixing) at the same eta on the same sequences: after a "
        "switch it follows the old leader until the new one's lead makes up the old one's",
        note="the theorem's number is not restated (no copy of the papers at hand); the constant "
        "is the prior-of-the-compound-expert argument with Hoeffding's lemma",
    ),
    Check(
        "ader-dynamic-regret",
        "nonstationary",
        "Zhang, Lu & Zhou 2018, Theorem 3 (improved Ader: Algorithms 3 and 4)",
        "||grad f_t|| <= G, diameter D, any comparators of path length P_T: R <= (3G/4) "
        "sqrt(2T(7D^2 + 4 D P_T)) + (G D sqrt(2T)/4)(1 + 2 ln(k+1)), k = floor(log2(1 + "
        "4P_T/(7D))/2) + 1",
        "f_t(x) = ||x - u_t|| on the unit disc (G = 1, D = 2), u_t switching between +e_1 and "
        "-e_1 floor(sqrt(T)/2) times (P_T = 2 floor(sqrt(T)/2)); Theorem 3's pool, prior and "
        "Hedge rate; deterministic (one row)",
        "bound",
        "T (rounds)",
        _ader,
        falsifier="OGD with the fixed static step D / (G sqrt(T)) on the same sequence: each "
        "switch costs it about D^2 / (2 eta) = sqrt(T)",
        note="the experts' term is Theorem 1's OGD bound at the pool's step within a factor 2 "
        "of the best; the meta term's constant is derived here (Hedge with Hoeffding's lemma), "
        "the paper's own may differ",
    ),
    Check(
        "flh-adaptive-regret",
        "nonstationary",
        "Hazan & Seshadhri 2009, FLH1's adaptive regret (the history expert's lemma)",
        "alpha-exp-concave losses, every interval I = [r, s]: sum_{t in I} f_t(x_t) - "
        "f_t(x_t^(r)) <= ln(s + 1) / alpha (adaptive regret: plus the base's R(|I|))",
        "square loss of a 1-D linear model, x_t uniform in [-1, 1], y_t = w*_t x_t with w* "
        "alternating +1 / -1 every T/4 rounds; alpha = 1/4; base OGD with step 0.5 / sqrt(s); "
        "FLH1 (full form, every expert kept); the largest gap over the geometric cover's "
        "intervals inside [1, T] against ln(T + 1) / alpha; one row per seed",
        "bound",
        "T (rounds)",
        _flh,
        falsifier="the base alone (OGD with step 0.5 / sqrt(t) from round 1, no history) "
        "against the same experts: after a switch its step is small and it lags",
        note="the theorem's number is not restated (no copy of the paper at hand); the constant "
        "is FLH1's argument (v_r^(r) = 1/r, the addition step, exp-concave mixing)",
    ),
)


__all__ = [
    "CHECKS",
    "DISTANCE",
    "FLH_ALPHA",
    "FLH_STEP",
    "NUM_EXPERTS",
    "NUM_SWITCHES",
    "ader_bound",
    "fixed_share_bound",
]
