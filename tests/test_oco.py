"""The basics learners against float64 NumPy loops, step by step, and the spec's bounds."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import reference_oco as ref
from tolerances import scaled_atol

from ojax import losses, metrics, oco, run_oco
from ojax.experiments import basics


def _stream(seed: int, n: int, d: int, radius: float) -> np.ndarray:
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, d)) + 0.4
    return radius * z / np.maximum(np.linalg.norm(z, axis=1, keepdims=True), 1.0) * 0.9


def _iterates(learner, params, x0, zs, objective):
    _, trace = run_oco(
        learner, params, jnp.asarray(x0), jnp.asarray(zs), objective, store_iterates=True
    )
    return np.asarray(trace.prediction), np.asarray(trace.loss)


def test_ftl_quadratic_is_projected_running_mean(x64):
    zs = _stream(0, 60, 3, 2.0)
    ws, loss = _iterates(
        oco.ftl("quadratic"),
        oco.FTLParams(jnp.asarray(0.8)),
        np.zeros(3),
        zs,
        losses.quadratic_objective,
    )
    expected = ref.ftl_quadratic(zs, 0.8)
    np.testing.assert_allclose(ws, expected, rtol=1e-12, atol=scaled_atol(expected))
    np.testing.assert_allclose(loss, 0.5 * np.sum((expected - zs) ** 2, axis=1), rtol=1e-12)


def test_ftl_linear_against_numpy(x64):
    zs = _stream(1, 50, 4, 1.0) - 0.4
    ws, _ = _iterates(
        oco.ftl("linear"), oco.FTLParams(jnp.asarray(1.5)), np.zeros(4), zs, losses.linear_objective
    )
    expected = ref.ftl_linear_ball(zs, 1.5)
    np.testing.assert_allclose(ws, expected, rtol=1e-12, atol=scaled_atol(expected))


def test_ftrl_against_numpy(x64):
    zs = _stream(2, 80, 3, 1.0)
    params = oco.FTRLParams(jnp.asarray(7.0), jnp.asarray(1.3))
    ws, _ = _iterates(oco.ftrl(), params, np.zeros(3), zs, losses.linear_objective)
    expected = ref.ftrl(zs, 7.0, 1.3)
    np.testing.assert_allclose(ws, expected, rtol=1e-12, atol=scaled_atol(expected))


@pytest.mark.parametrize("schedule", ["constant", "inverse_sqrt"])
def test_ogd_against_numpy_on_quadratics(x64, schedule):
    zs = _stream(3, 70, 4, 3.0)
    params = oco.OGDParams(jnp.asarray(0.3), jnp.asarray(1.1))
    ws, _ = _iterates(
        oco.ogd(schedule=schedule), params, np.zeros(4), zs, losses.quadratic_objective
    )
    expected = ref.ogd(lambda t, w: w - zs[t], 4, 70, 0.3, 1.1, schedule == "inverse_sqrt")
    np.testing.assert_allclose(ws, expected, rtol=1e-12, atol=scaled_atol(expected))
    assert np.all(np.linalg.norm(ws, axis=1) <= 1.1 + 1e-12)


def test_hedge_against_numpy_and_softmax(x64):
    rng = np.random.default_rng(4)
    zs = rng.uniform(size=(90, 6))
    ws, _ = _iterates(
        oco.hedge(),
        oco.HedgeParams(jnp.asarray(0.7)),
        np.full(6, 1 / 6),
        zs,
        losses.linear_objective,
    )
    expected = ref.hedge(zs, 0.7)
    np.testing.assert_allclose(ws, expected, rtol=1e-12, atol=scaled_atol(expected))
    cumulative = np.vstack([np.zeros(6), np.cumsum(zs, axis=0)[:-1]])
    softmax = np.exp(-0.7 * cumulative)
    np.testing.assert_allclose(ws, softmax / softmax.sum(1, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(ws.sum(axis=1), 1.0, rtol=1e-14)


def test_hedge_survives_long_streams_in_float32():
    zs = jnp.tile(jnp.array([[1.0, 0.0, 0.5]]), (200_000, 1))
    _, trace = run_oco(
        oco.hedge(),
        oco.HedgeParams(jnp.asarray(5.0)),
        jnp.full(3, 1 / 3),
        zs,
        losses.linear_objective,
    )
    assert np.all(np.isfinite(np.asarray(trace.loss)))
    assert float(trace.loss[-1]) == 0.0


def test_experts_realizable_bounds():
    steps = basics.horizons(500, 6)
    out = basics.example_experts(4, steps, jax.random.key(1))
    for method, bound in (
        ("follow-best-expert", basics.NUM_CLASS - 1),
        ("halving", math.log2(basics.NUM_CLASS)),
    ):
        regret, _ = out["experts-realizable"][method]
        assert np.all(regret <= bound + 1e-9)
        assert np.all(regret >= 0)
    # Against the adversary, follow-the-best alternates between the two experts (regret
    # ceil(t/2)); halving loses both experts in two steps, then predicts 1 forever (regret t - 1).
    fbe, lower = out["experts-adversarial"]["follow-best-expert"]
    np.testing.assert_array_equal(fbe[0], np.ceil(steps / 2))
    halving, _ = out["experts-adversarial"]["halving"]
    np.testing.assert_array_equal(halving[0], steps - 1)
    assert np.all(fbe >= lower) and np.all(halving >= lower)


def test_ftl_linear_regret_is_exactly_linear():
    steps = basics.horizons(400, 6)
    out = basics.example_ftl(2, steps, jax.random.key(2))
    regret, bound = out["ftl-linear"]["FTL"]
    np.testing.assert_array_equal(regret[0], (steps - 1) * basics.RADIUS)
    regret, bound = out["ftl-quadratic"]["FTL"]
    assert np.all(regret <= bound) and np.all(regret > 0)


@pytest.mark.parametrize("example", ["ftrl", "ogd", "hedge"])
def test_tuned_learners_stay_under_their_bounds(example):
    steps = basics.horizons(2_000, 7)
    key = jax.random.key(3)
    out = {
        "ftrl": lambda: basics.example_ftrl(2, steps),
        "ogd": lambda: basics.example_ogd(3, steps, key),
        "hedge": lambda: basics.example_hedge(3, steps, key),
    }[example]()
    for dataset in out.values():
        for method, (regret, bound) in dataset.items():
            if method == "FTL":  # the contrast: FTL is far above FTRL's bound, under its own
                assert np.all(regret[:, -1] > 5 * dataset["FTRL"][1][-1])
                assert np.all(regret <= bound[None, :])
                continue
            assert np.all(regret <= bound[None, :] + 1e-6), method


def test_regret_to_best_closed_forms_match_brute_force(x64):
    rng = np.random.default_rng(5)
    zs = rng.normal(size=(30, 3))
    best = np.asarray(metrics.best_fixed_loss(jnp.asarray(zs), "linear", "simplex"))
    np.testing.assert_allclose(best, np.cumsum(zs, 0).min(axis=1))
    best = np.asarray(metrics.best_fixed_loss(jnp.asarray(zs), "linear", "l2_ball", 2.0))
    sums = np.cumsum(zs, 0)
    np.testing.assert_allclose(best, -2.0 * np.linalg.norm(sums, axis=1))
    best = np.asarray(metrics.best_fixed_loss(jnp.asarray(zs), "quadratic", "none"))
    means = sums / np.arange(1, 31)[:, None]
    brute = [0.5 * np.sum((zs[: t + 1] - means[t]) ** 2) for t in range(30)]
    np.testing.assert_allclose(best, brute, rtol=1e-10)


def test_parameter_free_matches_tuned_ogd_up_to_logs_and_beats_misset_steps():
    steps = basics.horizons(1_000, 5)
    out = basics.example_parameter_free(3, steps, jax.random.key(4))["parameter-free"]
    worst_misset = np.minimum(out["OGD-step/10"][0][:, -1], out["OGD-stepx10"][0][:, -1])
    tuned, bound = out["OGD-tuned"]
    assert np.all(tuned <= bound[None, :])
    for name in ("KT", "ONS"):
        regret = out[name][0][:, -1]
        assert np.all(regret < worst_misset), name
        assert np.all(regret <= bound[-1] * np.log(steps[-1])), name
