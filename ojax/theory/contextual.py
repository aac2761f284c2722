"""Checks of the contextual bandit learners, each played by :func:`ojax.run_env` with bandit
feedback on a supervised data set (:func:`ojax.contextual.run_contextual`).

* EXP4 (loss form, no mixing) over `N` policies: expected regret against the best policy
  `<= ln N / eta + eta K T / 2`, at most `sqrt(2 T K ln N)` at `eta = sqrt(2 ln N / (T K))`
  (Bubeck & Cesa-Bianchi 2012, Theorem 4.2; Exp4 is Auer et al. 2002, Section 7, whose own
  Theorem 7.1 states the reward form with exploration, `(e - 1) gamma G_max + K ln N / gamma`).
  Measured: the mean over :data:`LEARNER_SEEDS` runs of `sum_t <p_t, c_t> - min_j sum_t
  c_{t, pi_j(x_t)}` (the expected loss paid given the past) on an oblivious instance: contexts
  `x_t ~ N(0, I)`, the label `pi_0(x_t)` with probability :data:`AGREEMENT` (else uniform), cost
  `1[a != y_t]`; one row per instance seed.

* SquareCB (`mu = K`) over an online regression oracle, on a realizable instance (the mean loss
  `f*(x, a) = <theta_a, x>` is linear in the context, as the oracle's model): expected regret
  against the best policy `a*(x) = argmin_a f*(x, a)`

      E[Reg_CB(T)] <= 2 K T / gamma + (gamma / 2) E[Reg_Sq(T)],

  `Reg_Sq(T) = sum_t (y^_t(a_t) - l_t)^2 - (f*(x_t, a_t) - l_t)^2` the oracle's square-loss
  regret against `f*` on what it was told. This is Foster & Rakhlin 2020, Theorem 1 (regret
  `O(sqrt(K T Reg_Sq(T)))` at `gamma ~ sqrt(K T / Reg_Sq(T))`) before `gamma` is tuned and
  without its high-probability term, with the constants of its proof redone here: with `b`
  the greedy arm, the inverse gap weights give `sum_a p_a (y^_a - y^_b) <= (K - 1) / gamma`
  and `1 / p_a = K + gamma (y^_a - y^_b)` for `a != b` (`p_b >= 1 / K`), and
  `u <= gamma u^2 / 4 + 1 / gamma` (applied to `f*_a - y^_a` weighted by `p_a`, and to
  `y^_{a*} - f*_{a*}` scaled by `p_{a*}`) gives per round
  `sum_a p_a f*_a - f*_{a*} <= 2 K / gamma + (gamma / 2) sum_a p_a (y^_a - f*_a)^2`; under
  realizability the last sum is, given the past, the expected square-loss regret of the round.
  Measured: the means over :data:`LEARNER_SEEDS` runs of `sum_t <p_t, f*(x_t)> - f*(x_t, a*)`
  (the expected regret given the past) and of `Reg_Sq(T)`; one row per instance seed; the
  oracle is OGD (no projection, step `alpha / sqrt(t)`).

Falsifier of both: the uniform player (no learning) on the same instances: regret linear in
`T`, over the bound (computed from the learner's own oracle) at the largest horizon.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ojax.contextual import (
    ContextualData,
    EXP4Params,
    SquareCBParams,
    contextual_data,
    exp4,
    run_contextual,
    squarecb,
)
from ojax.contextual.oracle import predicted_losses
from ojax.contextual.policies import random_policies
from ojax.core import Step
from ojax.oco import OGDParams, ogd
from ojax.theory.base import Check, CheckConfig, Measured, Outcome, as_measured, log_horizons
from ojax.theory.notes import config_dtype, config_rng, with_precision

NUM_ARMS, NUM_POLICIES, DIM = 3, 8, 5
LEARNER_SEEDS = 50  # runs of the learner per instance (its expectation)
AGREEMENT = 0.8  # the labels follow policy 0 with this probability
SQUARECB_ARMS, SQUARECB_DIM = 3, 4  # the realizable instance: a constant and 3 features
MEAN_LOSSES = (0.2, 0.5, 0.8)  # the arms' mean losses at z = 0 (the constant feature's weights)
SLOPE = 0.15  # the L1 norm of each arm's weights on the features z in [-1, 1]^3
ORACLE_RATE = 0.5  # OGD's alpha (step alpha / sqrt(t))


def _instance(config: CheckConfig, row: int, num_steps: int, policies: np.ndarray):
    """Contexts `(T, d)` and costs `(T, K)` of one oblivious instance."""
    rng = config_rng(config, 10 + row)
    x = rng.standard_normal((num_steps, DIM))
    labels = np.argmax(np.einsum("kd,td->tk", policies[0], x), axis=1)
    noisy = rng.uniform(size=num_steps) > AGREEMENT
    labels = np.where(noisy, rng.integers(0, NUM_ARMS, num_steps), labels)
    dtype = config_dtype(config)
    return x.astype(dtype), (np.arange(NUM_ARMS)[None, :] != labels[:, None]).astype(dtype)


def _policy_losses(x: np.ndarray, costs: np.ndarray, policies: np.ndarray) -> np.ndarray:
    """`sum_{t <= T} c_{t, pi_j(x_t)}` per policy: `(T, N)` cumulative."""
    picks = np.argmax(np.einsum("nkd,td->tnk", policies, x), axis=2)
    return np.cumsum(np.take_along_axis(costs.astype(np.float64), picks, axis=1), axis=0)


def _expected_sums(
    run: Callable[[jax.Array, Any], jax.Array], keys: jax.Array, rows: list
) -> np.ndarray:
    """The running sums `(rows, T, ...)` of `run(key, data)`'s per-round records, in float64,
    averaged over the learner keys (its expectation), for every instance row (data): every run
    in one program (a long scan steps every row at once, the same bits as a program per row,
    compared at quick and full sizes, float32 and float64), reduced row by row on the host
    (float64 copies of one row at a time)."""

    def every(keys: jax.Array, data: Any) -> jax.Array:
        return jax.vmap(lambda one: jax.vmap(lambda key: run(key, one))(keys))(data)

    records = jax.jit(every)(keys, jax.tree.map(lambda *leaves: jnp.stack(leaves), *rows))
    return np.stack([np.cumsum(np.asarray(r, np.float64), axis=1).mean(0) for r in records])


@with_precision
def _exp4(config: CheckConfig) -> Outcome:
    steps = log_horizons(20, 1000 if config.quick else 20_000, 5 if config.quick else 8)
    t_max, dtype = int(steps[-1]), config_dtype(config)
    eta = math.sqrt(2 * math.log(NUM_POLICIES) / (t_max * NUM_ARMS))
    policies = random_policies(config.seed, NUM_POLICIES, NUM_ARMS, DIM)
    learner = exp4(policies, dtype)
    params = EXP4Params(jnp.asarray(eta, dtype), jnp.asarray(0.0, dtype))
    bound = math.log(NUM_POLICIES) / eta + eta * NUM_ARMS * steps / 2

    def expected_loss(step: Step) -> jax.Array:  # <p_t, c_t>
        return jnp.vdot(learner.predict(step.state, step.params, step.x), step.y)

    def run(key: jax.Array, data: ContextualData) -> jax.Array:
        return run_contextual(learner, params, data, key, record=expected_loss)[1].record

    keys = jax.random.split(jax.random.key(config.seed), LEARNER_SEEDS)
    rows = [_instance(config, row, t_max, policies) for row in range(config.num_seeds)]
    paid_ = _expected_sums(run, keys, [contextual_data(x, c) for x, c in rows])[:, steps - 1]
    uniform_ = np.array([np.cumsum(c.astype(np.float64).mean(-1))[steps - 1] for _, c in rows])
    best_ = np.array([_policy_losses(x, c, policies)[steps - 1].min(axis=1) for x, c in rows])
    methods: dict[str, Measured] = {
        "EXP4@noisy-policy": as_measured(paid_ - best_, bound),
        "falsifier:uniform@noisy-policy": as_measured(uniform_ - best_, bound),
    }
    return Outcome(steps, methods)


def _realizable(config: CheckConfig, row: int, num_steps: int):
    """Contexts `x = (1, z)`, `z ~ U[-1, 1]^3` `(T, d)`, the mean losses' weights `theta`
    `(K, d)` and Bernoulli costs of means `f* = x theta^T` `(T, K)`, all in [0, 1]."""
    rng = config_rng(config, 30 + row)
    slopes = rng.uniform(-1.0, 1.0, (SQUARECB_ARMS, SQUARECB_DIM - 1))
    slopes *= SLOPE / np.abs(slopes).sum(axis=1, keepdims=True)
    theta = np.concatenate([np.array(MEAN_LOSSES)[:, None], slopes], axis=1)
    z = rng.uniform(-1.0, 1.0, (num_steps, SQUARECB_DIM - 1))
    x = np.concatenate([np.ones((num_steps, 1)), z], axis=1)
    costs = rng.uniform(size=(num_steps, SQUARECB_ARMS)) < x @ theta.T
    return x, theta, costs


@with_precision
def _squarecb(config: CheckConfig) -> Outcome:
    steps = log_horizons(100, 4000 if config.quick else 40_000, 5 if config.quick else 8)
    t_max, dtype, k = int(steps[-1]), config_dtype(config), SQUARECB_ARMS
    gamma = math.sqrt(k * t_max) / 2
    oracle = ogd("none", "inverse_sqrt")
    learner = squarecb(SQUARECB_DIM, k, oracle, dtype)
    params = SquareCBParams(
        jnp.asarray(gamma, dtype), OGDParams(jnp.asarray(ORACLE_RATE, dtype), jnp.ones((), dtype))
    )

    def run(key: jax.Array, data: tuple[ContextualData, jax.Array]) -> jax.Array:
        played, theta = data

        def record(step: Step) -> jax.Array:  # the round's expected regret and Reg_Sq
            means = theta @ step.x
            p = learner.predict(step.state, step.params, step.x)
            y_hat = predicted_losses(oracle, step.state, step.params, step.x)
            arm, loss = step.prediction, step.y[step.prediction]
            square = (y_hat[arm] - loss) ** 2 - (means[arm] - loss) ** 2
            return jnp.stack([p @ means - jnp.min(means), square])

        return run_contextual(learner, params, played, key, record=record)[1].record

    keys = jax.random.split(jax.random.key(config.seed), LEARNER_SEEDS)
    rows = [_realizable(config, row, t_max) for row in range(config.num_seeds)]
    data = [
        (contextual_data(x.astype(dtype), costs.astype(dtype)), jnp.asarray(theta, dtype))
        for x, theta, costs in rows
    ]
    curves = _expected_sums(run, keys, data)  # (rows, T, 2)
    regret, square = curves[:, steps - 1, 0], curves[:, steps - 1, 1]
    means = [x @ theta.T for x, theta, _ in rows]
    uniform = [np.cumsum(m.mean(axis=1) - m.min(axis=1))[steps - 1] for m in means]
    bound = 2 * k * steps / gamma + gamma / 2 * square
    methods: dict[str, Measured] = {
        "SquareCB(OGD)@realizable": as_measured(regret, bound),
        "falsifier:uniform@realizable": as_measured(uniform, bound),
    }
    return Outcome(steps, methods)


CHECKS: tuple[Check, ...] = (
    Check(
        "bubeck2012-thm4.2-exp4",
        "baselines",
        "Bubeck & Cesa-Bianchi 2012, Theorem 4.2 (Exp4, Auer et al. 2002, in loss form)",
        "losses in [0, 1], K arms, N policies: E[sum_t l_{t,I_t}] - min_j sum_t "
        "l_{t,pi_j(x_t)} <= ln N / eta + eta K T / 2, = sqrt(2 T K ln N) at eta = "
        "sqrt(2 ln N / (T K))",
        f"K = {NUM_ARMS} arms, N = {NUM_POLICIES} linear policies on x_t ~ N(0, I_{DIM}), "
        f"labels those of policy 0 with probability {AGREEMENT:g} (else uniform), cost "
        "1[a != y_t]; bandit feedback (ojax.run_env); eta tuned for the largest horizon; the "
        f"expectation over {LEARNER_SEEDS} runs of the learner",
        "bound",
        "T (rounds)",
        _exp4,
        falsifier="the uniform player (no learning) on the same instances: regret linear in T",
        note="at the largest horizon the bound is sqrt(2 T K ln N); measured: the mean over "
        "the learner's runs of sum_t <p_t, c_t> minus the best policy's loss",
    ),
    Check(
        "foster2020-thm1-squarecb",
        "baselines",
        "Foster & Rakhlin 2020, Theorem 1 (SquareCB, before tuning gamma, in expectation)",
        "realizable mean losses f*(x, a) in [0, 1]: E[sum_t f*(x_t, a_t) - f*(x_t, a*(x_t))] "
        "<= 2 K T / gamma + (gamma / 2) E[Reg_Sq(T)], Reg_Sq the oracle's square-loss regret "
        "against f* (constants of the theorem's proof, redone in ojax.theory.contextual)",
        f"K = {SQUARECB_ARMS} arms, x = (1, z), z ~ U[-1, 1]^{SQUARECB_DIM - 1}, f*(x, a) = "
        f"<theta_a, x> (mean losses {MEAN_LOSSES} at z = 0, slopes of L1 norm {SLOPE:g}), "
        f"Bernoulli losses; the oracle OGD with step {ORACLE_RATE:g} / sqrt(t); gamma = "
        f"sqrt(K T_max) / 2; the expectation over {LEARNER_SEEDS} runs of the learner",
        "bound",
        "T (rounds)",
        _squarecb,
        falsifier="the uniform player (no learning) on the same instances: regret linear in T",
        note="the bound is computed from each instance's measured oracle regret (mean over the "
        "learner's runs); measured: the mean of sum_t <p_t, f*(x_t)> - min_a f*(x_t, a)",
    ),
)

__all__ = [
    "AGREEMENT",
    "CHECKS",
    "LEARNER_SEEDS",
    "MEAN_LOSSES",
    "NUM_ARMS",
    "NUM_POLICIES",
    "ORACLE_RATE",
    "SLOPE",
    "SQUARECB_ARMS",
    "SQUARECB_DIM",
]
