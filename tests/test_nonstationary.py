"""The non-stationary learners against float64 NumPy loops written from the papers, step by
step; their invariants; the environments; the metrics against brute force."""

from __future__ import annotations

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
import reference_nonstationary as ref
from tolerances import scaled_atol

from ojax import InputError, losses, nonstationary, oco, optax_learner, run, run_oco
from ojax.envs import switching
from ojax.nonstationary.experts import normal_weights


def _experts(seed: int, n: int = 60, m: int = 4) -> np.ndarray:
    data = switching.switching_experts(jax.random.key(seed), n, m, 3, dtype=jnp.float64)
    return np.asarray(data.losses)


def _stream(seed: int, n: int, d: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, d)) + np.where(np.arange(n)[:, None] < n // 2, 0.5, -0.5)
    return z / np.maximum(np.linalg.norm(z, axis=1, keepdims=True), 1.0)


def _played(learner, params, x0, zs, objective):
    _, trace = run_oco(
        learner, params, jnp.asarray(x0), jnp.asarray(zs), objective, store_iterates=True
    )
    return np.asarray(trace.prediction)


def _close(actual, expected, rtol=1e-10):
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=scaled_atol(expected, 1e-10))


@pytest.mark.parametrize("scheme", ["herbster_warmuth", "start", "uniform_past"])
def test_fixed_share_against_numpy(x64, scheme):
    zs = _experts(0)
    params = nonstationary.FixedShareParams(jnp.asarray(1.3), jnp.asarray(0.07))
    ws = _played(nonstationary.fixed_share(scheme), params, np.full(4, 0.25), zs,
                 losses.linear_objective)  # fmt: skip
    _close(ws, ref.fixed_share(zs, 1.3, 0.07, scheme))
    np.testing.assert_allclose(ws.sum(axis=1), 1.0, rtol=1e-12)


def test_fixed_share_without_sharing_is_hedge(x64):
    zs = _experts(1)
    no_share = nonstationary.FixedShareParams(jnp.asarray(0.9), jnp.asarray(0.0))
    ws = _played(nonstationary.fixed_share(), no_share, np.full(4, 0.25), zs,
                 losses.linear_objective)  # fmt: skip
    hedge = _played(oco.hedge(), oco.HedgeParams(jnp.asarray(0.9)), np.full(4, 0.25), zs,
                    losses.linear_objective)  # fmt: skip
    _close(ws, hedge)


def test_ada_normal_hedge_against_numpy(x64):
    zs = _experts(2, n=150)
    ws = _played(nonstationary.ada_normal_hedge(), nonstationary.AdaNormalHedgeParams(),
                 np.full(4, 0.25), zs, losses.linear_objective)  # fmt: skip
    _close(ws, ref.ada_normal_hedge(zs))


def test_ada_normal_hedge_weights_fall_back_to_the_prior_on_the_awake_experts():
    """Every awake weight 0 (no expert ahead): the prior restricted to the awake experts (the
    paper: "predict arbitrarily"), computed without a NaN on the way (jax_debug_nans on)."""
    prior = jnp.log(jnp.array([0.2, 0.3, 0.5]))
    awake = jnp.array([True, False, True])
    behind, zeros = jnp.full(3, -5.0), jnp.zeros(3)  # R <= -1: w(R, C) = 0
    with jax.debug_nans(True):
        p = normal_weights(prior, behind, zeros, awake)
        ahead = normal_weights(prior, jnp.array([3.0, 1.0, 2.0]), zeros, awake)
    np.testing.assert_allclose(p, [0.2 / 0.7, 0.0, 0.5 / 0.7], rtol=1e-6)
    w = np.array([0.2 * ref.normal_weight(3.0, 0.0), 0.5 * ref.normal_weight(2.0, 0.0)])
    np.testing.assert_allclose(np.asarray(ahead)[[0, 2]], w / w.sum(), rtol=1e-5)
    assert float(ahead[1]) == 0.0


def test_ada_normal_hedge_survives_long_streams_in_float32():
    zs = jnp.tile(jnp.array([[1.0, 0.0, 0.5]]), (20_000, 1))
    learner, params = nonstationary.ada_normal_hedge(), nonstationary.AdaNormalHedgeParams()
    _, trace = run_oco(learner, params, jnp.full(3, 1 / 3), zs, losses.linear_objective,
                       store_iterates=True)  # fmt: skip
    last = np.asarray(trace.prediction[-1])
    assert np.all(np.isfinite(last)) and last[1] > 0.99


@pytest.mark.parametrize("objective", ["linear", "quadratic"])
def test_ader_against_numpy(x64, objective):
    zs = _stream(3, 50, 3)
    steps = np.array([0.05, 0.1, 0.2, 0.4])
    params = nonstationary.AderParams(
        oco.OGDParams(jnp.asarray(steps), jnp.full(4, 0.8)), oco.HedgeParams(jnp.asarray(2.5))
    )
    obj = losses.OBJECTIVES[objective]
    ws = _played(nonstationary.ader(oco.ogd(), oco.hedge(), 4), params, np.zeros(3), zs, obj)
    grad = (lambda t, w: zs[t]) if objective == "linear" else (lambda t, w: w - zs[t])
    _close(ws, ref.ader(grad, 3, 50, steps, 2.5, 0.8))


def test_ader_takes_any_base_and_meta():
    zs = jnp.asarray(_stream(4, 30, 2), jnp.float32)
    pool = {"learning_rate": jnp.asarray([0.01, 0.1, 0.3], jnp.float32)}
    learner = nonstationary.ader(optax_learner(optax.sgd), nonstationary.fixed_share(), 3)
    params = nonstationary.AderParams(pool, nonstationary.FixedShareParams.default())
    _, trace = run_oco(learner, params, jnp.zeros(2), zs, losses.quadratic_objective)
    assert np.all(np.isfinite(np.asarray(trace.loss)))
    with pytest.raises(InputError, match="leading axis of num_experts = 3"):
        run_oco(learner, params._replace(base={"learning_rate": pool["learning_rate"][:2]}),
                jnp.zeros(2), zs, losses.quadratic_objective)  # fmt: skip


def test_ader_theory_settings():
    params = nonstationary.AderParams.theory(1000, 2.0, 1.0, 1.0)
    assert nonstationary.ader_pool_size(1000) == 6 == params.base.learning_rate.shape[0]
    steps = np.asarray(params.base.learning_rate, np.float64)
    np.testing.assert_allclose(steps[0], 2.0 * np.sqrt(7 / 2000), rtol=1e-6)
    np.testing.assert_allclose(steps[1:] / steps[:-1], 2.0, rtol=1e-6)
    assert steps[-1] >= 2.0 * np.sqrt(7 / 2000 + 2)  # covers the largest path length T D
    np.testing.assert_allclose(nonstationary.ader_prior(6).sum(), 1.0, rtol=1e-12)


@pytest.mark.parametrize("meta", ["saol", "ada_normal_hedge_cover"])
def test_cover_learners_against_numpy(x64, meta):
    zs = _stream(5, 45, 2)
    make = getattr(nonstationary, meta)
    params = nonstationary.CoverParams(oco.OGDParams(jnp.asarray(0.6), jnp.asarray(0.9)),
                                       jnp.asarray(0.4))  # fmt: skip
    ws = _played(make(oco.ogd(schedule="inverse_sqrt"), 5), params, np.zeros(2), zs,
                 losses.quadratic_objective)  # fmt: skip
    reference = getattr(ref, meta)
    _close(ws, reference(lambda t, w: w - zs[t], 2, 45, 5, 0.6, 0.9, 0.4))


@pytest.mark.parametrize("pruned", [True, False])
def test_flh_against_numpy(x64, pruned):
    data = switching.piecewise_regression(jax.random.key(6), 70, 3, 2, dtype=jnp.float64)
    xs, ys = np.asarray(data.xs), np.asarray(data.ys)
    learner = nonstationary.flh(oco.ogd(), losses.square, jnp.zeros(3), 70, pruned)
    params = nonstationary.FLHParams(oco.OGDParams(jnp.asarray(0.4), jnp.asarray(1.2)),
                                     jnp.asarray(0.7))  # fmt: skip
    _, trace = run(learner, params, jnp.asarray(xs), jnp.asarray(ys), losses.square)
    _close(np.asarray(trace.prediction), ref.flh(xs, ys, 0.4, 1.2, 0.7, pruned))


def test_flh_pruning_keeps_few_experts_and_slots_never_collide():
    """FLH2's alive set has O(log T) experts; the slots of the alive experts are distinct."""
    horizon = 1000
    learner = nonstationary.flh(oco.ogd(), losses.square, jnp.zeros(1), horizon)
    params = nonstationary.FLHParams(oco.OGDParams(jnp.asarray(0.1), jnp.asarray(1.0)),
                                     jnp.asarray(0.5))  # fmt: skip
    state, _ = run(learner, params, jnp.ones((horizon, 1)), jnp.ones(horizon), losses.square)
    alive = [j for j in range(1, horizon + 2) if j <= horizon + 1 <= j + ref.lifetime(j) - 1]
    births = np.asarray(state.birth)[np.isfinite(np.asarray(state.log_weights))]
    assert sorted(births.tolist()) == alive
    assert len(alive) <= nonstationary.flh_slots(horizon, True)


def test_restarted_and_discounted_ogd_against_numpy(x64):
    zs = _stream(7, 40, 3)
    params = nonstationary.RestartedOGDParams(jnp.asarray(0.3), jnp.asarray(0.9), jnp.asarray(7))
    ws = _played(nonstationary.restarted_ogd(), params, np.zeros(3), zs, losses.linear_objective)
    _close(ws, ref.restarted_ogd(lambda t, w: zs[t], 3, 40, 0.3, 0.9, 7))
    params = nonstationary.DiscountedOGDParams(jnp.asarray(0.3), jnp.asarray(0.9),
                                               jnp.asarray(0.8))  # fmt: skip
    ws = _played(nonstationary.discounted_ogd(), params, np.zeros(3), zs,
                 losses.quadratic_objective)  # fmt: skip
    _close(ws, ref.discounted_ogd(lambda t, w: w - zs[t], 3, 40, 0.3, 0.9, 0.8))


@pytest.mark.parametrize(
    "learner, params, message",
    [
        (nonstationary.fixed_share(), nonstationary.FixedShareParams(1.0, 1.5), "share"),
        (nonstationary.restarted_ogd(), nonstationary.RestartedOGDParams(0.1, 1.0, 0), "period"),
        (
            nonstationary.discounted_ogd(),
            nonstationary.DiscountedOGDParams(0.1, 1.0, 0.0),
            "discount",
        ),  # fmt: skip
    ],
)
def test_bad_params_are_refused(learner, params, message):
    params = jax.tree.map(jnp.asarray, params)
    x0 = jnp.full(2, 0.5)
    with pytest.raises(InputError, match=message):
        run_oco(learner, params, x0, jnp.zeros((3, 2)), losses.linear_objective)


# ----------------------------------------------------------------------------- environments


def test_switching_environments():
    key = jax.random.key(8)
    data = switching.switching_experts(key, 100, 5, 4, random_times=True)
    times = np.asarray(data.times)
    assert times.shape == (4,) and np.all(np.diff(times) > 0) and 1 <= times[0]
    best = np.asarray(data.best)
    changes = np.flatnonzero(np.diff(best)) + 1
    np.testing.assert_array_equal(changes, times)  # a new good expert at every switch
    given = switching.piecewise_regression(key, 90, 3, 2, times=[30, 60])
    comparators = np.asarray(given.comparators)
    assert len(np.unique(comparators, axis=0)) == 3
    assert np.all(np.linalg.norm(comparators, axis=1) <= 1 + 1e-6)
    assert np.all(np.linalg.norm(np.asarray(given.xs), axis=1) <= 1 + 1e-6)
    with pytest.raises(InputError, match="times must increase"):
        switching.piecewise_regression(key, 90, 3, 2, times=[60, 30])


@pytest.mark.parametrize("length", [0.0, 3.0, 40.0])
def test_random_walk_has_the_path_length_it_is_given(x64, length):
    walk = switching.random_walk(jax.random.key(9), 200, 3, length, radius=0.5, dtype=jnp.float64)
    np.testing.assert_allclose(float(nonstationary.path_length(walk)), length, atol=1e-9)
    assert np.all(np.linalg.norm(np.asarray(walk), axis=1) <= 0.5 + 1e-12)
    with pytest.raises(InputError, match="path_length"):
        switching.random_walk(jax.random.key(9), 200, 3, 101.0, radius=0.5)


# ----------------------------------------------------------------------------- metrics


def test_dynamic_regret_and_path_length_by_hand(x64):
    rng = np.random.default_rng(10)
    zs, us, paid = (
        rng.normal(size=(2, 12, 3)),
        rng.normal(size=(2, 12, 3)),
        rng.uniform(size=(2, 12)),
    )
    curve, length = nonstationary.dynamic_regret(paid, zs, us, losses.quadratic_objective)
    expected = np.cumsum(paid - 0.5 * np.sum((us - zs) ** 2, axis=-1), axis=-1)
    _close(np.asarray(curve), expected)
    _close(np.asarray(length), np.linalg.norm(np.diff(us, axis=1), axis=-1).sum(axis=-1))


def test_geometric_cover_covers_every_round_at_every_level():
    cover = nonstationary.geometric_cover(37)
    for k in range(6):  # levels 0..5 (2^5 = 32 <= 37)
        level = cover[(cover[:, 1] - cover[:, 0] + 1 == 2**k) | (cover[:, 1] == 37)]
        assert len(level)
    covered = np.zeros(38, int)
    for start, end in cover:
        covered[start : end + 1] += 1
    # round t lies in one interval of each level k with 2^k <= t
    np.testing.assert_array_equal(covered[1:], [int(np.log2(t)) + 1 for t in range(1, 38)])


@pytest.mark.parametrize("kind", ["linear_ball", "linear_simplex", "quadratic", "square"])
def test_interval_regret_against_brute_force(x64, kind):
    rng = np.random.default_rng(11)
    n, d = 13, 2
    cover = nonstationary.geometric_cover(n)
    paid = rng.uniform(size=n)
    if kind == "square":
        xs, ys = rng.normal(size=(n, d)), rng.normal(size=n)
        data = (xs, ys)
    else:
        zs = rng.uniform(size=(n, d)) if kind == "linear_simplex" else rng.normal(size=(n, d))
        data = zs
    got = np.asarray(nonstationary.interval_regret(paid, kind, data, cover, radius=0.7))
    grid = np.array(list(itertools.product(np.linspace(-3, 3, 121), repeat=d)))
    for (start, end), value in zip(cover, got):
        rows = slice(start - 1, end)
        if kind == "linear_simplex":
            best = zs[rows].sum(0).min()
        elif kind == "linear_ball":
            angles = np.linspace(0, 2 * np.pi, 20001)
            circle = 0.7 * np.stack([np.cos(angles), np.sin(angles)], 1)
            best = (circle @ zs[rows].sum(0)).min()
        elif kind == "quadratic":
            best = (0.5 * ((grid[:, None, :] - zs[rows][None]) ** 2).sum(-1).sum(-1)).min()
        else:  # least squares by NumPy's solver, and no grid point does better
            fit = np.linalg.lstsq(xs[rows], ys[rows], rcond=None)[0]
            best = 0.5 * np.sum((xs[rows] @ fit - ys[rows]) ** 2)
            assert best <= (0.5 * ((grid @ xs[rows].T - ys[rows]) ** 2).sum(-1)).min()
        scale = max(1.0, abs(best))
        assert paid[rows].sum() - value == pytest.approx(best, abs=2e-3 * scale), (start, end)
        if kind in ("quadratic", "square"):  # closed form <= every grid point
            assert paid[rows].sum() - value <= best + 1e-9 * scale


def test_metrics_vmap_over_seeds():
    rng = np.random.default_rng(12)
    zs, paid = rng.normal(size=(5, 20, 3)), rng.uniform(size=(5, 20))
    cover = nonstationary.geometric_cover(20)
    batched = nonstationary.interval_regret(paid, "quadratic", zs, cover)
    looped = jax.vmap(lambda p, z: nonstationary.interval_regret(p, "quadratic", z, cover))(
        jnp.asarray(paid), jnp.asarray(zs)
    )
    np.testing.assert_allclose(np.asarray(batched), np.asarray(looped), rtol=1e-5, atol=1e-5)


# ----------------------------------------------------------------------------- theory


def test_the_checks_hold_and_their_falsifiers_break_them():
    """`ojax run theory --dataset nonstationary --quick`'s computation: each bound holds on
    every row and every falsifier's ratio exceeds 1 at the largest horizon."""
    from ojax.theory import CheckConfig, verdict
    from ojax.theory.nonstationary import CHECKS

    config = CheckConfig(quick=True, num_seeds=2, seed=3, x64=True)
    for check in CHECKS:
        outcome = check.compute(config)
        decided = verdict(check, outcome)
        assert decided.holds and decided.sound, (check.name, decided)
        assert any(name.startswith("falsifier:") for name in outcome.methods)


def test_the_bounds_by_hand():
    from ojax.theory.nonstationary import ader_bound, fixed_share_bound

    bound, eta, alpha = fixed_share_bound(np.array([101.0]), 4, 2)
    log_prior = 3 * np.log(4) + 2 * np.log(50) + 98 * np.log(1 / (1 - 0.02))
    assert alpha[0] == pytest.approx(0.02) and eta[0] == pytest.approx(np.sqrt(8 * log_prior / 101))
    assert bound[0] == pytest.approx(np.sqrt(log_prior * 101 / 2))  # = 2 sqrt(ln(1/pi) T / 8)
    # P_T = 0: k = 1, (3/4) sqrt(2T 7 D^2) + D sqrt(2T)/4 (1 + 2 ln 2) with G = 1
    t = 800.0
    expected = 0.75 * np.sqrt(2 * t * 28) + 2 * np.sqrt(2 * t) / 4 * (1 + 2 * np.log(2))
    assert ader_bound(np.array([t]), np.array([0.0]), 2.0, 1.0)[0] == pytest.approx(expected)


# ----------------------------------------------------------------------------- experiment


def test_quick_run_writes_the_three_parts(tmp_path):
    from ojax.app import cli
    from ojax.results import load

    out = tmp_path / "run"
    assert cli.main(["run", "nonstationary", "--quick", "--seeds", "2", "--quiet",
                     "--out", str(out)]) == 0  # fmt: skip
    curves = load(out, pandas=False).curves
    final = {k.split("/")[1]: v.values[:, -1].mean() for k, v in curves.items()
             if k.endswith("cumulative_loss")}  # fmt: skip
    assert len(final) == 7
    assert final["Ader"] < final["OGD"] and final["AdaNormalHedge (cover)"] < final["OGD"]
    ader = curves["dynamic/Ader/dynamic_regret"].values
    assert np.all(ader <= curves["dynamic/Ader/bound"].values)  # Theorem 3 on each walk
    rates = {k.split("/")[1]: v.values for k, v in curves.items() if k.startswith("usenet2/")}
    assert set(rates) >= {"OTL", "Fixed Share(h+f)", "AdaNormalHedge(h+f)", "source h"}
    for values in rates.values():
        assert values.shape == (2, 4) and np.all((values >= 0) & (values <= 100))
    # the source classifier is fixed: each block's rate is the same in every order
    np.testing.assert_array_equal(rates["source h"][0], rates["source h"][1])
    assert sorted(p.name for p in out.glob("*.png")) == [
        "nonstationary_dynamic.png", "nonstationary_regression.png", "nonstationary_usenet2.png"
    ]  # fmt: skip
