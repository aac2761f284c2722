"""ojax.run_env: a learner against an environment (fixed data, adaptive adversaries, bandit and
delayed feedback), against run_oco / run bit for bit and against NumPy loops of the papers."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import reference_bandits as ref
import reference_oco
from tolerances import scaled_atol

import ojax
from ojax import losses, oco
from ojax.contextual import contextual_data, supervised_env
from ojax.envs import adversaries
from ojax.envs.streams import unit_ball_stream

KEY = jax.random.key(0)


def _equal(a, b) -> None:
    for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


@pytest.mark.parametrize(
    "learner, params, start",
    [
        (oco.ogd(), oco.OGDParams(jnp.float32(0.1), jnp.float32(1.0)), "zeros"),
        (oco.hedge(), oco.HedgeParams(jnp.float32(0.5)), "uniform"),
        (oco.ftrl(), oco.FTRLParams(jnp.float32(3.0), jnp.float32(1.0)), "zeros"),
    ],
    ids=["ogd", "hedge", "ftrl"],
)
def test_fixed_data_is_run_oco_bit_for_bit(learner, params, start):
    zs = jnp.abs(unit_ball_stream(jax.random.key(1), 60, 4)[0])
    x0 = jnp.zeros(4) if start == "zeros" else jnp.full(4, 0.25)
    want_state, want = ojax.run_oco(
        learner, params, x0, zs, losses.linear_objective, store_iterates=True
    )
    state, env_state, got = ojax.run_env(
        learner,
        params,
        adversaries.fixed(),
        zs,
        KEY,
        60,
        losses.linear_objective,
        x0=x0,
        keep_predictions=True,
    )
    _equal(
        (want_state, want.loss, want.prediction, want.mask),
        (state, got.loss, got.prediction, got.mask),
    )
    assert int(env_state) == 60


def test_examples_environment_is_run_bit_for_bit():
    xs, ys = ojax.envs.streams.linear_regression_stream(jax.random.key(2), 50, 3)
    predictor = ojax.linear_predictor(oco.ogd("none"), losses.square, jnp.zeros(3))
    params = oco.OGDParams(jnp.float32(0.3), jnp.float32(1.0))
    want_state, want = ojax.run(predictor, params, xs, ys, losses.square)
    state, _, got = ojax.run_env(
        predictor,
        params,
        adversaries.examples(),
        (xs, ys),
        KEY,
        50,
        losses.square,
        keep_predictions=True,
    )
    _equal((want_state, want.loss, want.prediction), (state, got.loss, got.prediction))


def test_vmap_over_seeds_learner_params_and_env_params_equals_a_loop():
    env, x0 = adversaries.bernoulli_arms(), jnp.full(3, 1 / 3)
    means = jnp.array([[0.2, 0.5, 0.8], [0.6, 0.1, 0.4]])
    etas = jnp.array([0.05, 0.3])
    keys = jax.random.split(jax.random.key(3), 2)

    def one(key, eta, mu):
        params = oco.EXP3Params(eta, jnp.float32(0.0))
        return ojax.run_env(
            oco.exp3(),
            params,
            env,
            adversaries.BernoulliArms(mu),
            key,
            40,
            losses.linear_objective,
            x0=x0,
            feedback="bandit",
        )[2].loss

    batched = jax.vmap(one)(keys, etas, means)
    for i in range(2):
        np.testing.assert_array_equal(
            np.asarray(batched[i]), np.asarray(one(keys[i], etas[i], means[i]))
        )


def test_adaptive_adversary_of_ogd_matches_a_numpy_loop():
    with jax.enable_x64(True):
        params = oco.OGDParams(jnp.float64(0.1), jnp.float64(1.0))
        _, _, trace = ojax.run_env(
            oco.ogd(),
            params,
            adversaries.answer(adversaries.toward),
            None,
            KEY,
            30,
            losses.linear_objective,
            x0=jnp.zeros(3),
            keep_predictions=True,
        )
    w, plays = np.zeros(3), []
    for _ in range(30):
        plays.append(w.copy())
        norm = np.linalg.norm(w)
        z = w / norm if norm > 0 else np.eye(3)[0]
        w = reference_oco.ball(w - 0.1 * z, 1.0)
    plays = np.array(plays)
    np.testing.assert_allclose(np.asarray(trace.prediction), plays, rtol=0, atol=scaled_atol(plays))
    # <w, w / ||w||> = ||w||, and <0, e_1> = 0
    np.testing.assert_allclose(np.asarray(trace.loss), np.linalg.norm(plays, axis=1), atol=1e-12)


def _bandit_run(learner, params, env, env_params, num_arms, steps, key=KEY):
    def probabilities(step):
        return learner.iterate(step.state, step.params)

    return ojax.run_env(
        learner,
        params,
        env,
        env_params,
        key,
        steps,
        losses.linear_objective,
        x0=jnp.full(num_arms, 1.0 / num_arms),
        feedback="bandit",
        keep_predictions=True,
        record=probabilities,
    )[2]


@pytest.mark.parametrize("name", ["exp3", "exp3_ix"])
@pytest.mark.parametrize("env_name", ["bernoulli", "switching"])
def test_bandit_learners_match_the_papers_loops_step_by_step(name, env_name):
    k, steps = 4, 300
    with jax.enable_x64(True):
        if env_name == "bernoulli":
            env, env_params = (
                adversaries.bernoulli_arms(),
                adversaries.BernoulliArms(jnp.array([0.3, 0.5, 0.6, 0.7])),
            )
        else:
            env, env_params = (
                adversaries.switching_arms(k),
                adversaries.SwitchingArms(jnp.asarray(100), jnp.float64(0.2)),
            )
        if name == "exp3":
            learner, params = oco.exp3(), oco.EXP3Params(jnp.float64(0.2), jnp.float64(0.05))
        else:
            learner, params = oco.exp3_ix(), oco.EXP3IXParams(jnp.float64(0.2), jnp.float64(0.1))
        trace = _bandit_run(learner, params, env, env_params, k, steps)
    arms, paid = np.asarray(trace.prediction), np.asarray(trace.loss)
    loop = ref.exp3 if name == "exp3" else ref.exp3_ix
    want = loop(arms, paid, k, 0.2, 0.05 if name == "exp3" else 0.1)
    # probabilities (scale 1) from sums of 300 estimates up to 1 / gamma: round-off ~1e-12
    np.testing.assert_allclose(np.asarray(trace.record), want, rtol=0, atol=1e-10)
    assert len(set(arms.tolist())) > 1  # the arms are drawn, not fixed
    if env_name == "switching":  # the paid loss is the played arm's
        good = np.where(np.arange(steps) < 100, 0, 1)
        np.testing.assert_allclose(paid, np.where(arms == good, 0.3, 0.7), atol=1e-12)


def test_arms_are_drawn_from_the_learners_distribution():
    prior = jnp.array([0.6, 0.3, 0.1])
    params = oco.EXP3Params(jnp.float32(0.1), jnp.float32(0.0))
    env, mu = adversaries.bernoulli_arms(), adversaries.BernoulliArms(jnp.full(3, 0.5))

    def first_arm(key):
        trace = ojax.run_env(
            oco.exp3(),
            params,
            env,
            mu,
            key,
            1,
            losses.linear_objective,
            x0=prior,
            feedback="bandit",
            keep_predictions=True,
        )[2]
        return trace.prediction[0]

    arms = np.asarray(jax.vmap(first_arm)(jax.random.split(jax.random.key(4), 4000)))
    freq = np.bincount(arms, minlength=3) / 4000
    np.testing.assert_allclose(freq, np.asarray(prior), atol=4 * np.sqrt(0.25 / 4000))


@pytest.mark.parametrize("delay", [0, 1, 5])
def test_delayed_ogd_matches_a_numpy_loop(delay):
    with jax.enable_x64(True):
        zs = np.asarray(unit_ball_stream(jax.random.key(5), 80, 3)[0], np.float64)
        params = oco.OGDParams(jnp.float64(0.2), jnp.float64(0.5))
        _, _, trace = ojax.run_env(
            oco.ogd(),
            params,
            adversaries.fixed(),
            jnp.asarray(zs),
            KEY,
            80,
            losses.linear_objective,
            x0=jnp.zeros(3),
            delay=delay,
            keep_predictions=True,
        )
    want = ref.delayed_ogd(zs, 0.2, 0.5, delay)
    np.testing.assert_allclose(np.asarray(trace.prediction), want, rtol=0, atol=scaled_atol(want))
    # progressive validation: the loss is recorded when the point is played
    np.testing.assert_allclose(np.asarray(trace.loss), np.sum(want * zs, 1), atol=1e-12)


def test_delayed_predictor_updates_on_the_example_of_step_t_minus_d():
    xs, ys = ojax.envs.streams.linear_regression_stream(jax.random.key(6), 40, 3)
    xs, ys = np.asarray(xs, np.float64), np.asarray(ys, np.float64)
    predictor = ojax.linear_predictor(oco.ogd("none"), losses.square, jnp.zeros(3))
    with jax.enable_x64(True):
        predictor = ojax.linear_predictor(oco.ogd("none"), losses.square, jnp.zeros(3))
        params = oco.OGDParams(jnp.float64(0.3), jnp.float64(1.0))
        _, _, trace = ojax.run_env(
            predictor,
            params,
            adversaries.examples(),
            (jnp.asarray(xs), jnp.asarray(ys)),
            KEY,
            40,
            losses.square,
            delay=3,
            keep_predictions=True,
        )
    w, preds = np.zeros(3), []
    for t in range(40):
        preds.append(w @ xs[t])
        if t >= 3:
            x, y = xs[t - 3], ys[t - 3]
            w = w - 0.3 * (w @ x - y) * x  # the example arrives; its gradient at today's w
    np.testing.assert_allclose(np.asarray(trace.prediction), preds, atol=scaled_atol(preds))


@pytest.mark.default_xla  # at `-O0` the last real round's loss is 1 ulp apart
def test_padded_rounds_change_nothing():
    zs = unit_ball_stream(jax.random.key(7), 10, 3)[0]
    mask = jnp.array([True, False, True, True, False, False, True, True, True, True])
    params = oco.OGDParams(jnp.float32(0.1), jnp.float32(1.0))
    state, env_state, got = ojax.run_env(
        oco.ogd(),
        params,
        adversaries.fixed(),
        zs,
        KEY,
        10,
        losses.linear_objective,
        x0=jnp.zeros(3),
        mask=mask,
        delay=2,
    )
    _, _, real = ojax.run_env(
        oco.ogd(),
        params,
        adversaries.fixed(),
        zs,
        KEY,
        7,
        losses.linear_objective,
        x0=jnp.zeros(3),
        delay=2,
    )
    np.testing.assert_array_equal(np.asarray(got.loss)[np.asarray(mask)], np.asarray(real.loss))
    assert np.all(np.asarray(got.loss)[~np.asarray(mask)] == 0)
    assert int(env_state) == 7  # the environment did not advance on padding


def _refused(match, **changes):
    args = dict(
        learner=oco.ogd(),
        params=oco.OGDParams(jnp.float32(0.1), jnp.float32(1.0)),
        env=adversaries.answer(adversaries.toward),
        env_params=None,
        key=KEY,
        num_steps=5,
        loss=losses.linear_objective,
        x0=jnp.zeros(2),
    )
    args.update(changes)
    with pytest.raises(ojax.InputError, match=match):
        ojax.run_env(**args)


def test_bad_input_is_refused_before_anything_runs():
    _refused("feedback must be one of", feedback="partial")
    nan = jnp.ones((5, 2)).at[3, 1].set(jnp.nan)
    _refused("env_params must be finite", env=adversaries.fixed(), env_params=nan)
    _refused("delay must be an int >= 0", delay=-1)
    _refused("num_steps must be an int >= 1", num_steps=0)
    _refused("env must be an ojax.core.Environment", env=lambda w: w)
    _refused("x0: an OCOLearner needs", x0=None)
    _refused("an Objective", loss=losses.square)
    _refused("key must be one PRNG key", key=jax.random.split(KEY, 2))
    _refused("learning_rate", params=oco.OGDParams(jnp.float32(-1.0), jnp.float32(1.0)))
    _refused("mask must have shape", mask=jnp.ones(4, bool))
    _refused("z_t must have x0's shape", env=adversaries.fixed(), env_params=jnp.ones((5, 3)))
    _refused(
        "delay=2 with feedback='bandit'",
        learner=oco.exp3(),
        params=oco.EXP3Params.default(),
        x0=jnp.full(2, 0.5),
        feedback="bandit",
        delay=2,
    )
    _refused(
        "means must lie in",
        learner=oco.exp3(),
        params=oco.EXP3Params.default(),
        x0=jnp.full(2, 0.5),
        env=adversaries.bernoulli_arms(),
        env_params=adversaries.BernoulliArms(jnp.array([0.5, 1.5])),
        feedback="bandit",
    )
    predictor = ojax.linear_predictor(oco.ogd("none"), losses.square, jnp.zeros(2))
    _refused(  # a contextual bandit plays a distribution over the arms: not one number
        "a predictor's play is a distribution over the",
        learner=predictor,
        x0=None,
        loss=losses.square,
        env=supervised_env(),
        env_params=contextual_data(jnp.ones((5, 2)), jnp.zeros((5, 3))),
        feedback="bandit",
    )
    with jax.enable_x64(True):
        _refused(
            "wider than the learner's state",
            env=adversaries.fixed(),
            env_params=jnp.ones((5, 2), jnp.float64),
            x0=jnp.zeros(2, jnp.float32),
        )


def _bandit(learner, params, x0, env=None, env_params=None, num_steps=30):
    env = adversaries.bernoulli_arms() if env is None else env
    if env_params is None:
        env_params = adversaries.BernoulliArms(jnp.array([0.2, 0.5, 0.8]))
    return ojax.run_env(
        learner, params, env, env_params, KEY, num_steps, losses.linear_objective, x0=x0,
        feedback="bandit",
    )  # fmt: skip


def test_a_bandit_play_that_is_not_a_distribution_is_refused():
    ogd, params = oco.ogd("none"), oco.OGDParams(jnp.float32(0.1), jnp.float32(1.0))
    with pytest.raises(ojax.InputError, match=r"first play \[0, 0, 0\] is not a distribution"):
        _bandit(ogd, params, jnp.zeros(3))  # before anything runs
    # from the uniform point, OGD without a projection leaves the simplex at its first step
    with pytest.raises(ojax.InputError, match="play at round 1 is not a distribution"):
        _bandit(ogd, params, jnp.full(3, 1 / 3))
    projected = oco.ogd("simplex")  # the same steps kept on the simplex: played to the end
    assert _bandit(projected, params, jnp.full(3, 1 / 3))[2].loss.shape == (30,)


def _poisoned_at(round_: int) -> ojax.core.Environment:
    def init(key, params):
        return jnp.zeros((), jnp.int32)

    def step(t, params, play, key):
        return t + 1, jnp.where(t == round_, jnp.nan, 0.5) * jnp.ones(3, jnp.float32)

    return ojax.core.Environment(init, step)


def test_a_non_finite_loss_from_the_environment_is_refused_naming_its_round():
    x0 = jnp.full(3, 1 / 3)
    with pytest.raises(ojax.InputError, match=r"answer \(z_t\) at round 7 is NaN or infinite"):
        _bandit(oco.exp3(), oco.EXP3Params.default(), x0, _poisoned_at(7), None)
    with pytest.raises(ojax.InputError, match=r"answer \(z_t\) at round 4 is NaN or infinite"):
        ojax.run_env(
            oco.hedge(), oco.HedgeParams(jnp.float32(0.5)), _poisoned_at(4), None, KEY, 10,
            losses.linear_objective, x0=x0,
        )  # fmt: skip
    mask = jnp.arange(10) < 4  # padded rounds' answers (NaN from round 4 on) are not looked at
    ojax.run_env(
        oco.hedge(), oco.HedgeParams(jnp.float32(0.5)), _poisoned_at(4), None, KEY, 10,
        losses.linear_objective, x0=x0, mask=mask,
    )  # fmt: skip


def test_fixed_data_shorter_than_the_run_is_refused():
    zs = jnp.ones((5, 2))
    _refused(r"num_steps=6: the environment holds 5 rounds", env=adversaries.fixed(),
             env_params=zs, num_steps=6)  # fmt: skip
    predictor = ojax.linear_predictor(oco.ogd("none"), losses.square, jnp.zeros(2))
    _refused(
        r"num_steps=6: the environment holds 5 rounds",
        learner=predictor,
        x0=None,
        loss=losses.square,
        env=adversaries.examples(),
        env_params=(zs, jnp.ones(5)),
        num_steps=6,
    )


def test_a_step_returning_the_answer_alone_is_named():
    def step(state, params, w, key):
        return jnp.ones(2)  # not (state, z)

    env = ojax.core.Environment(lambda key, params: None, step)
    _refused(r"step must return the pair \(env_state, feedback\), got an array of shape \(2,\)",
             env=env)  # fmt: skip


def test_a_delay_longer_than_the_run_keeps_a_queue_of_the_run_only():
    from ojax.game import _Game, _game

    zs = jnp.ones((4, 2))
    args = (oco.ogd(), oco.OGDParams(jnp.float32(0.1), jnp.float32(1.0)), jnp.zeros(2))
    game = _Game(losses.linear_objective, "full", 10**9, None, False, False, True)
    mask = jnp.ones(4, bool)
    program = _game.lower(*args, adversaries.fixed(), zs, KEY, mask, 4, game).as_text()
    assert "4x2xf32" in program and "1000000000x" not in program  # d rows would fit no memory
    state, _, trace = ojax.run_env(
        *args[:2], adversaries.fixed(), zs, KEY, 4, losses.linear_objective, x0=args[2],
        delay=10**9,
    )  # fmt: skip
    np.testing.assert_array_equal(state.point, jnp.zeros(2))  # nothing arrived within the run
