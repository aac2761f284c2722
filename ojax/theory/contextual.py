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

Falsifier: the uniform player (no learning) on the same instances: regret linear in `T`.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from ojax.contextual import EXP4Params, contextual_data, exp4, run_contextual
from ojax.contextual.policies import random_policies
from ojax.core import Step
from ojax.theory.base import Check, CheckConfig, Measured, Outcome, as_measured, log_horizons
from ojax.theory.notes import config_dtype, config_rng, with_precision

NUM_ARMS, NUM_POLICIES, DIM = 3, 8, 5
LEARNER_SEEDS = 50  # runs of the learner per instance (its expectation)
AGREEMENT = 0.8  # the labels follow policy 0 with this probability


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

    keys = jax.random.split(jax.random.key(config.seed), LEARNER_SEEDS)
    paid, uniform, best = [], [], []
    for row in range(config.num_seeds):
        x, costs = _instance(config, row, t_max, policies)
        data = contextual_data(x, costs)

        def run(key: jax.Array, data=data) -> jax.Array:
            return run_contextual(learner, params, data, key, record=expected_loss)[1].record

        runs = jax.vmap(run)
        mean = np.mean(np.cumsum(np.asarray(runs(keys), np.float64), axis=-1), axis=0)
        paid.append(mean[steps - 1])
        uniform.append(np.cumsum(costs.astype(np.float64).mean(-1))[steps - 1])
        best.append(_policy_losses(x, costs, policies)[steps - 1].min(axis=1))
    paid_, uniform_, best_ = np.array(paid), np.array(uniform), np.array(best)
    methods: dict[str, Measured] = {
        "EXP4@noisy-policy": as_measured(paid_ - best_, bound),
        "falsifier:uniform@noisy-policy": as_measured(uniform_ - best_, bound),
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
)

__all__ = ["AGREEMENT", "CHECKS", "LEARNER_SEEDS", "NUM_ARMS", "NUM_POLICIES"]
