"""Runners, losses, projections, metrics and input validation."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from tolerances import scaled_atol

import ojax
from ojax import losses, metrics, oco, projections
from ojax.validation import InputError


def test_projections_invariants():
    key = jax.random.key(0)
    points = 3.0 * jax.random.normal(key, (50, 6))
    for w in points:
        p = projections.l2_ball(w, 1.7)
        assert float(jnp.linalg.norm(p)) <= 1.7 + 1e-5
        if float(jnp.linalg.norm(w)) <= 1.7:
            np.testing.assert_allclose(p, w)
        else:  # on the sphere, same direction
            np.testing.assert_allclose(jnp.linalg.norm(p), 1.7, rtol=1e-5)
            np.testing.assert_allclose(p / jnp.linalg.norm(p), w / jnp.linalg.norm(w), rtol=1e-5)
        s = projections.simplex(w)
        assert float(s.min()) >= 0 and abs(float(s.sum()) - 1) < 1e-5
        b = projections.box(w, 0.5)
        assert float(jnp.abs(b).max()) <= 0.5
        # a projection is idempotent
        np.testing.assert_allclose(projections.project("simplex", s), s, atol=1e-6)
    with pytest.raises(InputError, match="projection"):
        projections.project("sphere", points[0])


@pytest.mark.parametrize("name", ["square", "absolute", "hinge", "logistic", "linear"])
def test_loss_gradients_are_subgradients(name):
    loss = losses.LOSSES[name]
    y_hat = jnp.linspace(-2.0, 2.0, 41) + 0.013
    for y in (-1.0, 1.0):
        g = loss.grad(y_hat, jnp.full_like(y_hat, y))
        # convexity: l(b) >= l(a) + g(a) (b - a) for all a, b on the grid
        la = loss.value(y_hat, y)
        gap = (
            loss.value(y_hat[None, :], y)
            - la[:, None]
            - g[:, None] * (y_hat[None, :] - y_hat[:, None])
        )
        assert float(gap.min()) >= -1e-5
        assert float(jnp.abs(g).max()) <= loss.lipschitz(2.0) * 2.0 + 1e-6


def test_absolute_loss_tie_goes_to_minus_one():
    assert float(losses.absolute.grad(jnp.asarray(1.0), jnp.asarray(1.0))) == -1.0
    assert float(losses.zero_one.value(jnp.asarray(0.0), jnp.asarray(1.0))) == 0.0


def test_padding_changes_nothing_and_counts_nothing():
    learner = ojax.linear_predictor(oco.ogd("none"), losses.square, jnp.zeros(3))
    params = oco.OGDParams(jnp.asarray(0.2), jnp.asarray(1.0))
    xs = jax.random.normal(jax.random.key(1), (12, 3))
    ys = xs @ jnp.array([1.0, -2.0, 0.5])
    mask = jnp.array([1, 1, 0, 1, 0, 0, 1, 1, 1, 0, 1, 1], bool)
    state, trace = ojax.run(learner, params, xs, ys, losses.square, mask=mask)
    dense_state, dense = ojax.run(learner, params, xs[mask], ys[mask], losses.square)
    np.testing.assert_allclose(trace.loss[mask], dense.loss, rtol=1e-6)
    assert float(jnp.abs(trace.loss[~mask]).max()) == 0.0
    jax.tree.map(lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-6), state, dense_state)


def test_the_runner_steps_a_predictor_through_its_predict_update_when_it_has_one():
    """`Predictor.predict_update`, when given, is the step the runner takes (its predictions,
    here shifted by 1, are the trace's), and the OCO predictor's equals its predict and its
    update."""
    inner = ojax.linear_predictor(oco.ogd("none"), losses.square, jnp.zeros(3))

    def predict_update(state, params, x, y):
        return inner.predict(state, params, x) + 1.0, inner.update(state, params, x, y)

    fused = inner._replace(predict_update=predict_update)
    params = oco.OGDParams(jnp.float32(0.2), jnp.float32(1.0))
    xs = jax.random.normal(jax.random.key(2), (10, 3))
    ys = xs @ jnp.array([1.0, -2.0, 0.5])
    _, trace = ojax.run(fused, params, xs, ys, losses.square, keep_predictions=True)
    _, plain = ojax.run(inner, params, xs, ys, losses.square, keep_predictions=True)
    assert bool(jnp.all(trace.prediction == plain.prediction + 1.0))
    wrong = inner._replace(predict_update=lambda s, p, x, y: (jnp.zeros(2), s))
    with pytest.raises(InputError, match=r"predict_update gives \(float32\[2\]"):
        ojax.run(wrong, params, xs, ys, losses.square)

    zs = jax.random.normal(jax.random.key(3), (4, 3))
    sf = ojax.parameter_free.schedule_free_sgd()
    predictor = ojax.adapters.oco_predictor(sf, losses.quadratic_objective)
    start = ojax.adapters.OCOParams(ojax.parameter_free.ScheduleFreeParams.default(), zs[0])
    state = predictor.update(predictor.init(start), start, zs[1], zs[1])  # a state with z != x
    y_hat, new = predictor.predict_update(state, start, zs[2], zs[2])
    np.testing.assert_array_equal(y_hat, predictor.predict(state, start, zs[2]))
    for a, b in zip(
        jax.tree.leaves(new), jax.tree.leaves(predictor.update(state, start, zs[2], zs[2]))
    ):
        np.testing.assert_array_equal(a, b)


def _resetting(inner):
    """Independent tasks: the predictor restarts at the beginning of every task."""
    return ojax.MultiTaskLearner(
        init=inner.init,
        begin_task=lambda state, params, task: inner.init(params),
        predict=inner.predict,
        update=inner.update,
        end_task=lambda state, params, task: state,
    )


@pytest.mark.parametrize("independent", [False, True])
def test_task_blocks_equal_running_each_task_with_resets(independent):
    inner = ojax.linear_predictor(oco.ogd("none"), losses.absolute, jnp.zeros(2))
    params = oco.OGDParams(jnp.asarray(0.3), jnp.asarray(1.0))
    xs = jax.random.normal(jax.random.key(2), (3, 5, 2))
    ys = jnp.sum(xs, axis=-1)
    sizes = [5, 2, 4]
    mask = jnp.arange(5)[None, :] < jnp.array(sizes)[:, None]
    _, trace = ojax.run(
        _resetting(inner),
        params,
        xs,
        ys,
        losses.absolute,
        mask=mask,
        task_record=lambda state, params, task: (task.index, task.size),
        independent_tasks=independent,
    )
    np.testing.assert_array_equal(trace.task[0], [0, 1, 2])
    np.testing.assert_array_equal(trace.task[1], sizes)
    for t, n in enumerate(sizes):
        _, alone = ojax.run(inner, params, xs[t, :n], ys[t, :n], losses.absolute)
        np.testing.assert_allclose(
            trace.loss[t, :n], alone.loss, rtol=1e-6, atol=scaled_atol(alone.loss, 1e-6)
        )
        assert float(jnp.abs(trace.loss[t, n:]).sum()) == 0.0
    _, sums = ojax.run(
        _resetting(inner), params, xs, ys, losses.absolute, mask=mask, task_sums=True
    )
    np.testing.assert_allclose(sums.loss, trace.loss.sum(axis=1), rtol=1e-6)
    assert sums.prediction is None


def test_order_visits_the_pool_rows():
    inner = ojax.linear_predictor(oco.ogd("none"), losses.square, jnp.zeros(2))
    params = oco.OGDParams(jnp.asarray(0.1), jnp.asarray(1.0))
    xs = jax.random.normal(jax.random.key(3), (6, 2))
    ys = xs @ jnp.array([1.0, -1.0])
    orders = jnp.array([[5, 0, 3, 3], [1, 2, 4, 0]], jnp.int32)
    record = ojax.linear_weights(oco.ogd("none"))
    _, trace = jax.vmap(
        lambda o: ojax.run(inner, params, xs, ys, losses.square, order=o, record=record)
    )(orders)
    for row, order in enumerate(orders):
        _, alone = ojax.run(inner, params, xs[order], ys[order], losses.square, record=record)
        np.testing.assert_allclose(trace.loss[row], alone.loss, rtol=1e-6)
        np.testing.assert_allclose(trace.record[row], alone.record, rtol=1e-6)
    with pytest.raises(InputError, match=r"order must index the pool of 6 examples"):
        ojax.run(inner, params, xs, ys, losses.square, order=jnp.array([0, 6]))


def test_optax_adapter_runs_sgd_and_a_parameter_free_optimizer():
    zs = jnp.tile(jnp.array([[1.0, -1.0]]), (200, 1))
    sgd = ojax.optax_learner(optax.sgd)
    _, trace = ojax.run_oco(
        sgd, {"learning_rate": 0.1}, jnp.zeros(2), zs, losses.quadratic_objective
    )
    assert float(trace.loss[-1]) < 1e-6  # converges to z
    cocob = ojax.optax_learner(optax.contrib.cocob)
    _, trace = ojax.run_oco(
        cocob, {"learning_rate": 1.0}, jnp.zeros(2), zs, losses.quadratic_objective
    )
    assert float(trace.loss[-20:].mean()) < float(trace.loss[0])


def test_metrics_running_and_checkpoints():
    values = jnp.arange(1.0, 11.0)
    np.testing.assert_allclose(
        metrics.average_loss(values), np.cumsum(np.arange(1, 11)) / np.arange(1, 11)
    )
    points, since = metrics.loss_since_last_checkpoint(values)
    np.testing.assert_array_equal(points, [1, 2, 4, 8, 10])
    np.testing.assert_allclose(since, [1.0, 2.0, 3.5, 6.5, 9.5])
    mask = jnp.array([1, 0] * 5, bool)
    np.testing.assert_allclose(metrics.average_loss(values, mask)[-1], np.mean(np.arange(1, 11, 2)))
    np.testing.assert_allclose(metrics.regret(values, values - 1.0)[-1], 10.0)
    np.testing.assert_allclose(metrics.mistake_rate(jnp.array([1.0, 0.0, 0.0, 1.0]))[-1], 0.5)


# --- bad input: every kind gets a clear error before anything runs ---------------------------


def test_bad_shapes_are_named():
    learner = ojax.linear_predictor(oco.ogd("none"), losses.square, jnp.zeros(3))
    params = oco.OGDParams(jnp.asarray(0.1), jnp.asarray(1.0))
    with pytest.raises(InputError, match=r"ys must have shape \(4\), got shape \(5,\)"):
        ojax.run(learner, params, jnp.zeros((4, 3)), jnp.zeros(5), losses.square)
    with pytest.raises(InputError, match=r"zs must have shape"):
        ojax.run_oco(oco.ogd(), params, jnp.zeros(3), jnp.zeros((4, 2)), losses.linear_objective)
    with pytest.raises(InputError, match=r"mask must have shape"):
        ojax.run(
            learner, params, jnp.zeros((4, 3)), jnp.zeros(4), losses.square, mask=jnp.ones(3, bool)
        )


def test_non_finite_data_is_rejected():
    learner = ojax.linear_predictor(oco.ogd("none"), losses.square, jnp.zeros(2))
    params = oco.OGDParams(jnp.asarray(0.1), jnp.asarray(1.0))
    xs = jnp.zeros((5, 2)).at[3, 1].set(jnp.nan)
    with pytest.raises(InputError, match=r"xs must be finite.*index \(3, 1\)"):
        ojax.run(learner, params, xs, jnp.zeros(5), losses.square)
    with pytest.raises(InputError, match=r"ys must be finite"):
        ojax.run(learner, params, jnp.zeros((5, 2)), jnp.zeros(5).at[0].set(jnp.inf), losses.square)


@pytest.mark.parametrize(
    "learner,params,message",
    [
        (
            oco.ogd(),
            oco.OGDParams(jnp.asarray(0.0), jnp.asarray(1.0)),
            r"learning_rate must lie in \(0.0, inf\), got 0.0",
        ),
        (oco.ogd(), oco.OGDParams(jnp.asarray(0.1), jnp.asarray(-2.0)), r"radius .* got -2.0"),
        (oco.ftrl(), oco.FTRLParams(jnp.asarray(-1.0), jnp.asarray(1.0)), r"regularization"),
        (oco.hedge(), oco.HedgeParams(jnp.asarray(jnp.nan)), r"learning_rate .* got nan"),
        (oco.ftl(), oco.FTLParams(jnp.array([1.0, 0.0])), r"radius .* got 0.0"),
    ],
)
def test_hyperparameters_outside_their_domain(learner, params, message):
    with pytest.raises(InputError, match=message):
        ojax.run_oco(learner, params, jnp.full(2, 0.5), jnp.zeros((3, 2)), losses.linear_objective)


def test_static_options_are_checked():
    with pytest.raises(InputError, match="schedule must be one of"):
        oco.ogd(schedule="cosine")
    with pytest.raises(InputError, match="objective must be one of"):
        oco.ftl("cubic")


def test_start_point_outside_the_learners_domain_is_rejected():
    zs = jnp.ones((4, 3))
    with pytest.raises(InputError, match=r"x0 \(the prior over experts\) must lie in \(0.0, inf\)"):
        ojax.run_oco(
            oco.hedge(),
            oco.HedgeParams(jnp.asarray(1.0)),
            jnp.zeros(3),
            zs,
            losses.linear_objective,
        )
    with pytest.raises(InputError, match=r"x0 \(the prior"):
        ojax.run_oco(
            oco.hedge(),
            oco.HedgeParams(jnp.asarray(1.0)),
            jnp.array([0.5, -0.1, 0.6]),
            zs,
            losses.linear_objective,
        )


def test_importing_ojax_starts_no_jax_backend():
    """Import stays cheap (and a later jax.distributed.initialize stays possible): the registries
    build arrays only when their entries are called."""
    import subprocess
    import sys

    code = (
        "from jax._src import xla_bridge\nimport ojax, ojax.experiments\n"
        "from ojax.app import cli\ncli.build_parser()\nprint(len(xla_bridge._backends))"
    )  # the command line's parser reads every experiment's options: none may build an array
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "0"
