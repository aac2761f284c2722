"""Contextual bandits: the learners against float64 NumPy loops of their papers, step by step
(tests/reference_contextual.py); the supervised-to-bandit conversion and its bad input."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import reference_contextual as ref

from ojax import InputError
from ojax.contextual import (
    EpsilonGreedyParams,
    EXP4Params,
    GreedyParams,
    LinearTSParams,
    LinUCBParams,
    SquareCBParams,
    class_costs,
    contextual_data,
    cost_matrix_costs,
    epsilon_greedy,
    exp4,
    greedy,
    linear_thompson,
    linucb,
    run_contextual,
    squarecb,
)
from ojax.contextual.linear import posterior_normals
from ojax.contextual.policies import random_policies
from ojax.contextual.supervised import linear_classes_stream
from ojax.game import BanditFeedback
from ojax.oco import OGDParams, ogd

T, D, K = 60, 4, 3


def _data():
    xs, costs = linear_classes_stream(jax.random.key(3), T, D, K)
    return contextual_data(xs.astype(jnp.float64), costs.astype(jnp.float64))


def _played(learner, params):
    """The distributions p_t the learner played, the arms drawn and their losses."""

    def record(step):
        return learner.predict(step.state, step.params, step.x)

    _, trace = run_contextual(learner, params, _data(), jax.random.key(11), record=record)
    return np.asarray(trace.record), np.asarray(trace.prediction), np.asarray(trace.loss)


def _ogd(rate):
    return OGDParams(jnp.float64(rate), jnp.float64(1.0))


CASES = {
    "linucb": (
        lambda: (linucb(D, K, jnp.float64), LinUCBParams(jnp.float64(0.7))),
        lambda x, a, paid: ref.linucb(x, a, paid, K, 0.7),
    ),
    "linear_thompson": (
        lambda: (linear_thompson(D, K, jnp.float64), LinearTSParams(jnp.float64(0.3))),
        lambda x, a, paid: ref.linear_thompson(
            x,
            a,
            paid,
            np.stack([np.asarray(posterior_normals(t, K, jnp.float64)) for t in range(T)]),
            K,
            0.3,
        ),
    ),
    "exp4": (
        lambda: (
            exp4(random_policies(1, 6, K, D), jnp.float64),
            EXP4Params(jnp.float64(0.4), jnp.float64(0.15)),
        ),
        lambda x, a, paid: ref.exp4(x, a, paid, random_policies(1, 6, K, D), 0.4, 0.15),
    ),
    "greedy": (
        lambda: (greedy(D, K, ogd("none"), jnp.float64), GreedyParams(_ogd(0.3))),
        lambda x, a, paid: ref.oracle_learner(x, a, paid, K, 0.3, ref.greedy_play),
    ),
    "epsilon_greedy": (
        lambda: (
            epsilon_greedy(D, K, ogd("none"), jnp.float64),
            EpsilonGreedyParams(jnp.float64(0.2), _ogd(0.3)),
        ),
        lambda x, a, paid: ref.oracle_learner(x, a, paid, K, 0.3, ref.epsilon_greedy_play(0.2)),
    ),
    "squarecb": (
        lambda: (
            squarecb(D, K, ogd("none"), jnp.float64),
            SquareCBParams(jnp.float64(7.0), _ogd(0.4)),
        ),
        lambda x, a, paid: ref.oracle_learner(x, a, paid, K, 0.4, ref.squarecb_play(7.0)),
    ),
    "squarecb_power": (
        lambda: (
            squarecb(D, K, ogd("none"), jnp.float64),
            SquareCBParams(jnp.float64(2.0), _ogd(0.4), jnp.float64(0.5)),
        ),
        lambda x, a, paid: ref.oracle_learner(x, a, paid, K, 0.4, ref.squarecb_play(2.0, 0.5)),
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_learners_match_the_papers_loops_step_by_step(name):
    make, reference = CASES[name]
    with jax.enable_x64(True):
        learner, params = make()
        ps, arms, paid = _played(learner, params)
        xs = np.asarray(_data().contexts)
        expected = reference(xs, arms, paid)
    np.testing.assert_allclose(ps, expected, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(ps.sum(axis=1), 1.0, rtol=1e-12)
    assert len(set(arms.tolist())) > 1 or name in ("greedy", "linucb"), "one arm only"


def test_linear_ts_plays_each_arm_as_often_as_algorithm_1s_vector_draw():
    # the learner draws the scores <mu~_a, x> ~ N(<theta_a, x>, v^2 x^T A_a^{-1} x); Agrawal &
    # Goyal's Algorithm 1 draws mu~ ~ N(theta, v^2 B^{-1}) whole: the played arm's law must agree
    # (a draw with the wrong variance, e.g. without the square root, plays other frequencies)
    n, v = 20000, 0.8
    with jax.enable_x64(True):
        learner, params = linear_thompson(D, K, jnp.float64), LinearTSParams(jnp.float64(v))
        data = _data()
        state = learner.init(params)
        for t in range(8):  # a few plays of each arm: wide, overlapping posteriors
            told = BanditFeedback(jnp.int32(t % K), data.costs[t, t % K], jnp.float64(1.0))
            state = learner.update(state, params, data.contexts[t], told)
        x = data.contexts[9]
        ours = jax.vmap(lambda c: learner.predict(state._replace(count=c), params, x))(
            jnp.arange(n, dtype=jnp.int32)
        )
        ours = np.asarray(ours).mean(axis=0)
    inverse, theta = np.asarray(state.inverse), np.asarray(state.theta)
    rng = np.random.default_rng(0)
    draws = np.stack(
        [rng.multivariate_normal(theta[a], v**2 * inverse[a], size=n) for a in range(K)], 1
    )  # (n, K, d): mu~ of every arm
    theirs = np.bincount(np.argmax(draws @ np.asarray(x), axis=1), minlength=K) / n
    assert theirs.min() > 0.05, "an arm is never played: the check cannot tell laws apart"
    np.testing.assert_allclose(ours, theirs, atol=5 * np.sqrt(0.25 * 2 / n))


def test_the_runner_tells_the_drawn_arm_its_loss_and_probability():
    with jax.enable_x64(True):
        data = _data()
        learner, params = CASES["squarecb"][0]()
        _, trace = run_contextual(learner, params, data, jax.random.key(2))
        arms = np.asarray(trace.prediction)
        costs = np.asarray(data.costs)
    np.testing.assert_array_equal(np.asarray(trace.loss), costs[np.arange(T), arms])


def test_conversion_of_labels_and_of_a_cost_matrix():
    labels = np.array([2, 0, 1, 2])
    np.testing.assert_array_equal(
        np.asarray(class_costs(labels, 3)), [[1, 1, 0], [0, 1, 1], [1, 0, 1], [1, 1, 0]]
    )
    matrix = np.array([[0.0, 0.5, 1.0], [0.25, 0.0, 0.75], [1.0, 0.5, 0.0]])
    np.testing.assert_allclose(np.asarray(cost_matrix_costs(labels, matrix)), matrix[labels])


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: class_costs(np.array([0, 3]), 3), r"labels must lie in \[0, 3\)"),
        (lambda: class_costs(np.array([0.5]), 3), "labels must be a 1-d integer array"),
        (lambda: cost_matrix_costs([0], np.ones((2, 3))), "cost_matrix must be square"),
        (lambda: cost_matrix_costs([0], 2 * np.ones((2, 2))), r"costs in \[0, 1\]"),
        (lambda: contextual_data(np.ones((3, 2)), np.ones((4, 2))), "n >= 1 rows each"),
        (lambda: contextual_data(np.ones((3, 2)), 2 * np.ones((3, 2))), r"costs must lie in"),
        (lambda: contextual_data(np.ones((3, 2)), np.ones((3, 2)), [0, 3]), "order must index"),
        (lambda: linucb(0, 3), "dim must be an int >= 1, got 0"),
        (lambda: exp4(np.ones((2, 3))), r"policies must be a finite \(N, K, d\)"),
        (
            lambda: squarecb(D, K, ogd("none")).check_params(
                SquareCBParams(
                    jnp.float32(1.0),
                    OGDParams(jnp.float32(0.4), jnp.float32(1.0)),
                    jnp.float32(-0.5),
                )
            ),
            r"power must lie in \[0.0, inf\)",
        ),
    ],
)
def test_bad_input_is_refused(call, match):
    with pytest.raises(InputError, match=match):
        call()


def test_shipped_data_as_a_bandit_problem():
    from ojax.datasets import bandit_problem, load_classes

    x, y, k = load_classes("usenet2")
    data = bandit_problem(x, y, num_classes=k)
    assert k == 2 and data.contexts.shape == (1500, 100) and data.costs.shape == (1500, 2)
    norms = np.linalg.norm(np.asarray(data.contexts), axis=1)
    assert norms.max() == pytest.approx(1.0, rel=1e-6) and norms.min() > 0
    np.testing.assert_array_equal(np.asarray(data.costs)[np.arange(1500), y], 0.0)
    with pytest.raises(InputError, match="dataset must be one of"):
        load_classes("no_such_set")
