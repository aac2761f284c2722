"""The classic baselines (AdaGrad, FTRL-Proximal, Online Newton Step, AdaHedge, Squint) against
independent float64 NumPy loops written from their papers, every iterate; their special cases,
input checks and long float32 streams."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import reference_baselines as ref

from ojax import LEARNERS, InputError, adapters, losses, oco, run, run_oco
from ojax.oco.quantile_experts import log_evidence


def _points(learner, params, x0, zs, objective=losses.linear_objective) -> np.ndarray:
    _, trace = run_oco(
        learner, params, jnp.asarray(x0), jnp.asarray(zs), objective, store_iterates=True
    )
    return np.asarray(trace.prediction)


def _close(actual: np.ndarray, expected: np.ndarray, rtol: float = 1e-10) -> float:
    """Asserts agreement at the scale of the iterates; returns the largest difference."""
    gap = float(np.max(np.abs(actual - expected)))
    assert gap <= rtol * max(1.0, float(np.max(np.abs(expected)))), gap
    return gap


def _linear(seed: int, n: int, d: int, drift: float = 0.3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    sparse = rng.uniform(size=(n, d)) < np.linspace(1.0, 0.2, d)  # rarer coordinates
    return (rng.uniform(-1.0, 1.0, size=(n, d)) + drift) * sparse


# ----------------------------------------------------------------------------- AdaGrad


@pytest.mark.parametrize(
    "domain, delta, radius",
    [("box", 0.0, 0.6), ("box", 0.3, 0.6), ("l2_ball", 0.1, 0.7), ("none", 0.0, 1.0)],
)
def test_adagrad_against_numpy(x64, domain, delta, radius):
    zs = _linear(0, 120, 4)
    params = oco.AdaGradParams(jnp.asarray(0.8), jnp.asarray(delta), jnp.asarray(radius))
    ws = _points(oco.adagrad(domain), params, np.zeros(4), zs)
    expected, projected = ref.adagrad(
        lambda t, w: zs[t], np.zeros(4), 120, 0.8, delta, radius, domain
    )
    _close(ws, expected)
    assert (projected >= 10) == (domain != "none")  # the projection was exercised
    assert np.ptp(expected[-1]) > 0.05


def test_adagrad_on_quadratic_losses_from_a_start_point(x64):
    zs = np.random.default_rng(1).normal(size=(80, 3)) + np.array([1.5, -1.0, 0.5])
    params = oco.AdaGradParams(jnp.asarray(0.5), jnp.asarray(0.2), jnp.asarray(0.8))
    x1 = np.array([0.3, -0.2, 0.1])
    ws = _points(oco.adagrad("l2_ball"), params, x1, zs, losses.quadratic_objective)
    expected, projected = ref.adagrad(lambda t, w: w - zs[t], x1, 80, 0.5, 0.2, 0.8, "l2_ball")
    _close(ws, expected)
    assert projected >= 10


def test_a_coordinate_without_gradients_does_not_move_at_delta_zero(x64):
    zs = np.zeros((20, 3))
    zs[:, 0] = 1.0
    params = oco.AdaGradParams(jnp.asarray(0.1), jnp.asarray(0.0), jnp.asarray(5.0))
    ws = _points(oco.adagrad("box"), params, np.array([0.0, 0.4, -0.2]), zs)
    assert np.all(np.isfinite(ws)) and np.all(ws[:, 1] == 0.4) and np.all(ws[:, 2] == -0.2)
    steps = np.concatenate([[0.0], np.cumsum(1 / np.sqrt(np.arange(1, 20)))])  # 1 / ||g_{1:t}||
    np.testing.assert_allclose(ws[:, 0], -0.1 * steps, rtol=1e-12)


# ----------------------------------------------------------------------------- FTRL-Proximal


def _sparse_logistic(seed: int, n: int, d: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    xs = rng.normal(size=(n, d)) * (rng.uniform(size=(n, d)) < 0.4)
    u = rng.normal(size=d)
    ys01 = (rng.uniform(size=n) < 1 / (1 + np.exp(-xs @ u))).astype(np.float64)
    return xs, ys01


@pytest.mark.parametrize("lambda1, lambda2", [(0.0, 0.0), (3.0, 0.0), (2.0, 1.0)])
def test_ftrl_proximal_is_algorithm_1_on_sparse_logistic_regression(x64, lambda1, lambda2):
    xs, ys01 = _sparse_logistic(2, 150, 6)
    learner = oco.ftrl_proximal()
    params = oco.FTRLProximalParams(*(jnp.asarray(v) for v in (0.4, 1.0, lambda1, lambda2)))
    predictor = adapters.linear_predictor(learner, losses.logistic, jnp.zeros(6))
    labels = jnp.asarray(2 * ys01 - 1)
    record = adapters.linear_weights(learner)
    _, trace = run(predictor, params, jnp.asarray(xs), labels, losses.logistic, record=record)
    expected = ref.ftrl_proximal(xs, ys01, 0.4, 1.0, lambda1, lambda2)
    _close(np.asarray(trace.record), expected)
    zeros = np.mean(expected[20:] == 0)
    assert (zeros > 0.2) == (lambda1 > 0) and np.ptp(expected[-1]) > 0.01  # L1 gives exact 0s


def test_ftrl_proximal_without_regularization_is_unconstrained_adagrad(x64):
    zs = _linear(3, 100, 5)
    ftrl = oco.FTRLProximalParams(*(jnp.asarray(v) for v in (0.7, 0.4, 0.0, 0.0)))
    ada = oco.AdaGradParams(jnp.asarray(0.7), jnp.asarray(0.4), jnp.asarray(1.0))
    first = _points(oco.ftrl_proximal(), ftrl, np.zeros(5), zs)
    second = _points(oco.adagrad("none"), ada, np.zeros(5), zs)
    _close(first, second, rtol=1e-12)
    assert np.max(np.abs(first)) > 0.5


# ----------------------------------------------------------------------------- Online Newton Step


@pytest.mark.parametrize("radius", [0.5, None])
def test_online_newton_against_numpy(x64, radius):
    rng = np.random.default_rng(4)
    zs = rng.normal(size=(100, 3)) * 0.3 + np.array([0.8, -0.4, 0.3])
    gamma, epsilon = 0.25, 2.0
    params = oco.OnlineNewtonParams(*(jnp.asarray(v) for v in (gamma, epsilon, radius or 1.0)))
    learner = oco.online_newton("none" if radius is None else "l2_ball")
    ws = _points(learner, params, np.zeros(3), zs, losses.quadratic_objective)
    expected, projected = ref.online_newton(
        lambda t, w: w - zs[t], np.zeros(3), 100, gamma, epsilon, radius
    )
    _close(ws, expected)
    assert (projected >= 20) == (radius is not None)


def test_online_newton_paper_settings(x64):
    params = oco.OnlineNewtonParams.paper(alpha=0.25, lipschitz=2.0, diameter=2.0, radius=1.0)
    assert float(params.gamma) == 1 / 32 and float(params.epsilon) == 256.0
    params = oco.OnlineNewtonParams.paper(alpha=0.01, lipschitz=1.0, diameter=1.0, radius=0.5)
    assert float(params.gamma) == 0.005 and float(params.epsilon) == pytest.approx(1 / 0.005**2)


def test_metric_ball_projection_is_the_constrained_minimizer(x64):
    from ojax import projections

    rng = np.random.default_rng(5)
    for _ in range(20):
        m = rng.normal(size=(4, 4))
        a = m @ m.T + 0.01 * np.eye(4)
        y = rng.normal(size=4) * 3
        lam, basis = np.linalg.eigh(a)
        coords = projections.l2_ball_in_metric(jnp.asarray(basis.T @ y), jnp.asarray(lam), 1.2)
        got = basis @ np.asarray(coords)
        _close(got, ref.metric_ball(y, a, 1.2), rtol=1e-11)
        assert np.linalg.norm(got) <= 1.2 * (1 + 1e-12)


# ----------------------------------------------------------------------------- experts


def _expert_losses(seed: int, n: int, k: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    means = rng.uniform(0.2, 0.8, size=k)
    return np.clip(means + rng.uniform(-0.5, 0.5, size=(n, k)), 0.0, 1.0)


def _ftl_killer(n: int, extra: int = 2) -> np.ndarray:
    """Losses (1/2, 0), (0, 1), (1, 0), ... of two experts (ties for FTL), plus experts at 1."""
    first = np.where(np.arange(n) % 2 == 1, 0.0, 1.0)
    first[0] = 0.5
    second = 1.0 - first
    second[0] = 0.0
    return np.column_stack([first, second, np.ones((n, extra))])


@pytest.mark.parametrize("case", ["stochastic", "ftl-killer", "prior"])
def test_adahedge_against_the_papers_pseudocode(x64, case):
    zs = _ftl_killer(120) if case == "ftl-killer" else _expert_losses(6, 150, 5)
    if case == "ftl-killer":
        zs = np.column_stack([zs[:, :1], zs])  # a copy of expert 0: exact ties between leaders
    prior = np.array([0.1, 0.2, 0.3, 0.15, 0.25]) if case == "prior" else None
    x0 = np.full(zs.shape[1], 1 / zs.shape[1]) if prior is None else prior
    ws = _points(oco.adahedge(), oco.AdaHedgeParams(), x0, zs)
    expected, _, gaps = ref.adahedge(zs, prior)
    _close(ws, expected)
    assert gaps[-1] > 1.0  # the learning rate was finite most of the time


def test_squint_against_quadrature(x64):
    zs = _expert_losses(7, 100, 4)
    prior = np.array([0.4, 0.3, 0.2, 0.1])
    ws = _points(oco.squint(), oco.SquintParams(), prior, zs)
    _close(ws, ref.squint(zs, prior))
    assert ws[-1].max() > 0.5


def test_squint_evidence_in_closed_form_against_quadrature(x64):
    rng = np.random.default_rng(8)
    variance = np.concatenate([10 ** rng.uniform(-9, 5, 300), [1e-12, 3e-10, 1e-3]])
    spread = 10 ** rng.uniform(0, 5, variance.size)  # |R| up to sqrt(1e5 V): R^2 <= T V
    regret = rng.uniform(-1, 1, variance.size) * np.sqrt(variance * spread)
    got = np.asarray(log_evidence(jnp.asarray(regret), jnp.asarray(variance)))
    expected = np.array([ref.squint_evidence(r, v) for r, v in zip(regret, variance)])
    assert np.all(np.isfinite(got))
    # jax's log_ndtr uses a short asymptotic series beyond |x| = 20: about 1e-9 there
    assert np.all(np.abs(got - expected) <= 1e-8 * np.maximum(1, np.abs(expected)))
    assert expected.max() > 100 and expected.min() < -5  # both tails exercised
    with jax.enable_x64(False):
        got32 = np.asarray(
            log_evidence(jnp.asarray(regret, jnp.float32), jnp.asarray(variance, jnp.float32))
        )
    assert np.all(np.isfinite(got32))
    # the terms that cancel: exp(R^2 / 4V) against the erf tails, and erf(b) - erf(a) (b - a =
    # sqrt(V) / 2) where V is small
    cancelled = 1 + regret**2 / (4 * variance) + np.abs(expected) + 1 / np.sqrt(variance)
    assert np.all(np.abs(got32 - expected) <= 16 * np.finfo(np.float32).eps * cancelled)


# ----------------------------------------------------------------------------- checks and scale


@pytest.mark.parametrize(
    "learner, params, x0, message",
    [
        (oco.adagrad(), oco.AdaGradParams(-1.0, 0.0, 1.0), np.zeros(2), "learning_rate must lie"),
        (oco.adagrad("l2_ball"), oco.AdaGradParams(1.0, 0.0, 1.0), np.zeros(2), "delta \\(the L2"),
        (oco.adagrad(), oco.AdaGradParams(1.0, 0.0, 1.0), np.full(2, 3.0), "x0 must lie in"),
        (oco.ftrl_proximal(), oco.FTRLProximalParams(1.0, -1.0, 0.0, 0.0), np.zeros(2), "beta"),
        (oco.ftrl_proximal(), oco.FTRLProximalParams(1.0, 1.0, 0.0, 0.0), np.ones(2), "x0 must"),
        (oco.online_newton(), oco.OnlineNewtonParams(1.0, 0.0, 1.0), np.zeros(2), "epsilon"),
        (oco.online_newton(), oco.OnlineNewtonParams(1.0, 1.0, 1.0), np.full(2, 2.0), "x0 must"),
        (oco.adahedge(), oco.AdaHedgeParams(), np.array([0.5, 0.0]), "x0 \\(the prior"),
        (oco.squint(), oco.SquintParams(), np.array([1.0, -1.0]), "x0 \\(the prior"),
    ],
)
def test_bad_input_is_refused_before_running(learner, params, x0, message):
    params = type(params)(*(jnp.asarray(v, jnp.float32) for v in params))
    with pytest.raises(InputError, match=message):
        zs = jnp.ones((3, 2), jnp.float32)
        run_oco(learner, params, jnp.asarray(x0, jnp.float32), zs, losses.linear_objective)


@pytest.mark.parametrize(
    "name", ["adagrad", "ftrl_proximal", "online_newton", "adahedge", "squint"]
)
def test_long_float32_streams_stay_finite(name):
    entry = LEARNERS[name]
    zs, _ = entry.make_stream(jax.random.key(9), 200_000, 4)
    x0 = jnp.full(4, 0.25) if entry.start == "uniform" else jnp.zeros(4)
    learner, objective = entry.make(4), losses.OBJECTIVES[entry.objective]
    state, trace = run_oco(learner, entry.default_params(), x0, zs, objective)
    point = np.asarray(learner.iterate(state, entry.default_params()))
    assert np.all(np.isfinite(np.asarray(trace.loss))) and np.all(np.isfinite(point))
    if entry.start == "uniform":
        assert abs(point.sum() - 1) < 1e-5 and point.max() > 0.9  # it found the best expert
