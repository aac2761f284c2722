"""Bad input to the runner gets an InputError naming the argument, the value and what is
allowed, before anything runs; inside jit / vmap, through the ``ojax.checked`` opt-in."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import ojax
from ojax import losses, oco
from ojax.validation import InputError

PARAMS = oco.OGDParams(jnp.float32(0.1), jnp.float32(1.0))


def _learner(dim: int = 10, dtype=jnp.float32):
    return ojax.linear_predictor(oco.ogd("none"), losses.square, jnp.zeros(dim, dtype))


def _stream(n: int = 200, dim: int = 10, dtype=jnp.float32):
    xs = jax.random.normal(jax.random.key(0), (n, dim), dtype)
    return xs, xs @ jnp.linspace(-1.0, 1.0, dim, dtype=dtype)


def test_examples_of_the_wrong_width_are_named():
    xs, ys = _stream(dim=5)
    with pytest.raises(InputError, match=r"xs: an example float32\[5\] does not fit the learner"):
        ojax.run(_learner(10), PARAMS, xs, ys, losses.square)


def test_one_dimensional_xs_is_named():
    xs, ys = _stream()
    with pytest.raises(InputError, match=r"xs: an example float32\[\] does not fit"):
        ojax.run(_learner(), PARAMS, xs[:, 0], ys, losses.square)


def test_python_lists_of_numbers_are_named_and_many_leaves_are_counted():
    """A list of numbers is a pytree of scalars to JAX: named as such (the labels' list
    crashed on `.shape`), and a tree of many leaves without a time axis is shown short."""
    xs, ys = _stream(n=5, dim=3)
    rows, labels = np.asarray(xs).tolist(), np.asarray(ys).tolist()
    for given, name in (((rows, ys), "xs"), ((xs, labels), "ys")):
        with pytest.raises(InputError, match=rf"{name} is a Python list of \d+ numbers"):
            ojax.run(_learner(3), PARAMS, *given, losses.square)
    blocks = jnp.ones((2, 4, 3), jnp.float32)
    with pytest.raises(InputError, match=r"ys is a Python list of 8 numbers"):
        ojax.run(ojax.meta.aggressive(3), ojax.meta.MetaParams.paper(), blocks, [[1.0] * 4] * 2,
                 losses.square)  # fmt: skip
    scalars = tuple(jnp.float32(1.0) for _ in range(9))
    with pytest.raises(
        InputError, match=r"shape\(s\) \[\(\), \(\), \(\), \(\), \.\.\. \(9 leaves\)\]"
    ):
        ojax.run(_learner(3), PARAMS, scalars, ys, losses.square)
    _, trace = ojax.run(_learner(3), PARAMS, np.asarray(rows, np.float32), ys, losses.square)
    assert trace.loss.shape == (5,)


def test_labels_with_a_trailing_axis_are_rejected():
    xs, ys = _stream()
    with pytest.raises(InputError, match=r"ys must have shape \(200,\) .* got \(200, 1\)"):
        ojax.run(_learner(), PARAMS, xs, ys[:, None], losses.square)


def test_float64_data_into_a_float32_learner_is_named(x64):
    xs, ys = _stream(dtype=jnp.float64)
    with pytest.raises(
        InputError,
        match=r"data of dtype float64 does not match the learner.s state \(dtype float32\)",
    ):
        ojax.run(_learner(), PARAMS, xs, ys, losses.square)
    # built for the data's dtype, it runs
    params64 = oco.OGDParams(jnp.float64(0.1), jnp.float64(1.0))
    _, trace = ojax.run(_learner(dtype=jnp.float64), params64, xs, ys, losses.square)
    assert trace.loss.dtype == jnp.float64


def test_an_empty_stream_is_rejected():
    xs, ys = _stream()
    with pytest.raises(InputError, match=r"xs: the stream is empty \(0 steps\)"):
        ojax.run(_learner(), PARAMS, xs[:0], ys[:0], losses.square)
    with pytest.raises(InputError, match=r"zs: the stream is empty"):
        ojax.run_oco(oco.ogd(), PARAMS, jnp.zeros(10), xs[:0], losses.linear_objective)


def test_magnitudes_that_overflow_in_the_loss_are_rejected():
    xs, ys = _stream()
    with pytest.raises(InputError, match=r"xs holds a value of magnitude 1e\+30, too large for"):
        ojax.run(_learner(), PARAMS, xs.at[7, 3].set(1e30), ys, losses.square)
    with pytest.raises(InputError, match=r"ys holds a value of magnitude"):
        ojax.run(_learner(), PARAMS, xs, ys.at[0].set(-3e25), losses.square)


def test_params_of_the_wrong_class_are_named():
    xs, ys = _stream()
    with pytest.raises(InputError, match=r"params: got tuple \(0.1, 1.0\), which the learner"):
        ojax.run(_learner(), (0.1, 1.0), xs, ys, losses.square)


def test_start_point_outside_the_ball_is_rejected():
    zs = jnp.ones((5, 3))
    params = oco.OGDParams(jnp.float32(0.1), jnp.float32(1.0))
    with pytest.raises(InputError, match=r"x0 must lie in the feasible set 'l2_ball' of radius 1"):
        ojax.run_oco(oco.ogd(), params, jnp.full(3, 10.0), zs, losses.linear_objective)
    ojax.run_oco(oco.ogd(), params, jnp.full(3, 0.5), zs, losses.linear_objective)  # inside


def test_task_blocks_without_tasks_or_real_points_are_rejected():
    inner = _learner(2)
    multi = ojax.MultiTaskLearner(
        inner.init, lambda s, p, t: s, inner.predict, inner.update, lambda s, p, t: s
    )
    xs, ys = jnp.ones((3, 4, 2)), jnp.ones((3, 4))
    with pytest.raises(InputError, match=r"every point of every task is masked"):
        ojax.run(multi, PARAMS, xs, ys, losses.square, mask=jnp.zeros((3, 4), bool))
    with pytest.raises(InputError, match=r"the task blocks are empty"):
        ojax.run(multi, PARAMS, xs[:0], ys[:0], losses.square)


def _quickstart_curve(step, xs, ys):
    """The README quickstart's pattern: one seed, one step size, traced under vmap."""
    params = oco.OGDParams(step, jnp.float32(1.0))
    return ojax.run(_learner(), params, xs, ys, losses.square)[1].loss


def test_checked_reports_bad_values_inside_vmap():
    xs, ys = _stream()
    steps = jnp.array([0.01, 0.1], jnp.float32)
    batched = jax.jit(jax.vmap(_quickstart_curve, (0, None, None)))
    plain = batched(steps, xs, ys)
    np.testing.assert_allclose(ojax.checked(batched)(steps, xs, ys), plain)
    # unchecked, a negative step or NaN data give nonsense silently; checked, a named error
    with pytest.raises(InputError, match=r"learning_rate must lie in \(0.0, inf\), got -0.5"):
        ojax.checked(batched)(steps.at[1].set(-0.5), xs, ys)
    with pytest.raises(InputError, match=r"xs must be finite, got nan"):
        ojax.checked(batched)(steps, xs.at[3, 2].set(jnp.nan), ys)


@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_a_start_state_that_is_not_finite_is_refused(value):
    xs, ys = _stream(n=20)
    learner = _learner()
    state = learner.init(PARAMS)
    bad = jax.tree.map(lambda a: a.at[..., 0].set(value) if a.dtype == jnp.float32 else a, state)
    with pytest.raises(InputError, match=r"state: the start state holds NaN or infinite values"):
        ojax.run(learner, PARAMS, xs, ys, losses.square, state=bad)
    with pytest.raises(
        InputError, match=r"start state holds NaN or infinite values \(state\.point"
    ):
        ojax.run_oco(oco.ogd(), PARAMS, jnp.zeros(3), jnp.ones((4, 3)), losses.linear_objective,
                     state=oco.ogd().init(PARAMS, jnp.zeros(3))._replace(
                         point=jnp.array([0.0, value, 0.0], jnp.float32)))  # fmt: skip


@pytest.mark.parametrize(
    "name, target, steps, field",
    [
        ("adagrad", 1e18, 400, "sum_squares"),  # 400 gradients of 1e18: past 3.4e38
        ("dog", 1e18, 400, None),
        ("prodigy", 1e18, 50, None),
        ("mechanic", 1e9, 2000, "sum_squares"),
    ],
)
def test_a_state_that_overflows_stops_the_run(name, target, steps, field):
    """Gradients that pass the magnitude check (below ~1.8e19) still overflow a float32 sum of
    squares: the learner's state turns infinite while its losses stay finite and it stops
    moving. The run refuses to return such numbers; in float64 the same run is fine."""
    from ojax.losses import OBJECTIVES
    from ojax.validation import DivergedError

    entry = ojax.LEARNERS[name]
    zs = jnp.full((steps, 3), target, jnp.float32)
    with pytest.raises(DivergedError, match=rf"during the run of {steps} steps \(state\S*") as err:
        ojax.run_oco(entry.make(3), entry.default_params(), jnp.zeros(3), zs,
                     OBJECTIVES["quadratic"])  # fmt: skip
    assert field is None or field in str(err.value)
    with jax.enable_x64(True):  # float64 holds the sums: the same run ends finite
        params64 = jax.tree.map(lambda a: jnp.asarray(a, jnp.float64), entry.default_params())
        state, _ = ojax.run_oco(entry.make(3), params64, jnp.zeros(3, jnp.float64),
                                zs.astype(jnp.float64), OBJECTIVES["quadratic"])  # fmt: skip
        assert all(np.isfinite(np.asarray(a)).all() for a in jax.tree.leaves(state))


def test_a_state_narrower_than_float32_is_refused_and_narrow_data_is_widened():
    # online_newton's eigendecomposition and squint's sums broke inside the scan in float16
    entry = ojax.LEARNERS["online_newton"]
    learner, params = entry.make(3), entry.default_params()
    zs = jnp.ones((10, 3), jnp.float16)
    with pytest.raises(InputError, match="x0 has dtype float16: a learner's state is float32"):
        ojax.run_oco(learner, params, jnp.zeros(3, jnp.float16), zs, losses.linear_objective)
    _, trace = ojax.run_oco(learner, params, jnp.zeros(3), zs, losses.linear_objective)
    assert trace.loss.dtype == jnp.float32
    xs, ys = (a.astype(jnp.bfloat16) for a in _stream(n=5, dim=3))
    with pytest.raises(InputError, match=r"xs, ys: .*bfloat16"):
        ojax.run(_learner(3, jnp.bfloat16), PARAMS, xs, ys, losses.square)
    with pytest.raises(InputError, match="x0 has dtype float16"):
        ojax.run_env(
            oco.hedge(),
            oco.HedgeParams(jnp.float32(1.0)),
            ojax.envs.adversaries.fixed(),
            zs,
            jax.random.key(0),
            10,
            losses.linear_objective,
            x0=jnp.full(3, 1 / 3, jnp.float16),
        )


def test_environment_params_the_environment_cannot_read_are_named():
    from ojax.envs import adversaries

    args = (jax.random.key(0), 5, losses.linear_objective)
    ogd, x0 = oco.ogd("none"), jnp.zeros(2)
    with pytest.raises(InputError, match=r"env_params\['a'\] must be an array or a number.*str"):
        ojax.run_env(ogd, PARAMS, adversaries.fixed(), {"a": "text"}, *args, x0=x0)
    bandit = adversaries.bernoulli_arms()
    with pytest.raises(InputError, match="env_params: got ArrayImpl .* the environment cannot"):
        ojax.run_env(ogd, PARAMS, bandit, jnp.array([0.2, 0.8]), *args, x0=x0, feedback="bandit")
    env = ojax.Environment(init=lambda k, p: jnp.zeros(()), step=lambda s, p, a, k: (s, p["b"]))
    with pytest.raises(InputError, match="env, env_params: one round .* KeyError: 'b'"):
        ojax.run_env(ogd, PARAMS, env, {"a": jnp.ones(2)}, *args, x0=x0)


def test_a_loss_that_is_a_plain_function_is_refused_naming_the_losses():
    xs, ys = _stream(n=5, dim=3)
    with pytest.raises(InputError, match=r"loss: a Predictor is scored with an ojax.losses.Loss"):
        ojax.run(_learner(3), PARAMS, xs, ys, lambda y_hat, y: (y_hat - y) ** 2)


@pytest.mark.parametrize("size", [1000, 70_000])  # read in NumPy / reduced on the device
def test_finite_and_magnitude_checks_agree_on_small_and_large_arrays(size):
    """The checks read arrays of at most 65,536 entries in NumPy and reduce larger device
    arrays on the device: both name a NaN, an infinity and a float32 value whose square
    overflows, and pass a clean array."""
    from ojax import validation

    clean = jnp.linspace(-1.0, 1.0, size, dtype=jnp.float32)
    validation.check_finite("xs", clean)
    validation.check_magnitude("xs", clean)
    assert validation.nonfinite_leaves({"w": clean}) == []
    for bad in (jnp.nan, jnp.inf):
        value = clean.at[size // 2].set(bad)
        with pytest.raises(InputError, match=rf"xs must be finite.*index \({size // 2},\)"):
            validation.check_finite("xs", value)
        assert validation.nonfinite_leaves({"w": value}) == ["['w']"]
    assert validation.nonfinite_leaves({"w": clean.at[3].set(-jnp.inf)}) == []  # a log of 0
    with pytest.raises(InputError, match="xs holds a value of magnitude 1e"):
        validation.check_magnitude("xs", clean.at[7].set(1e30))
