"""Learners compare by value (ojax.learner_factory): equal options give equal, hash-equal
learners that share one compilation; other options, other functions, or a learner edited by
hand do not."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from jax import monitoring

import ojax
from ojax import adapters, averaging, losses, meta, oco, parameter_free, transfer
from ojax.core import factory_key
from ojax.sweep.fingerprint import describe

TRACES: list[str] = []


def _on_duration(event: str, duration: float, **kwargs) -> None:
    if event == "/jax/core/compile/jaxpr_trace_duration":
        TRACES.append(str(kwargs.get("fun_name", "?")))


monitoring.register_event_duration_secs_listener(_on_duration)


def test_equal_options_equal_learners_other_options_differ():
    assert oco.ogd() == oco.ogd() and hash(oco.ogd()) == hash(oco.ogd())
    assert oco.ogd() == oco.ogd("l2_ball", schedule="constant")  # defaults are bound
    assert oco.ogd() != oco.ogd("none") and oco.ogd() != oco.ogd(schedule="inverse_sqrt")
    assert not (oco.ogd() != oco.ogd())
    assert oco.ftl("linear") != oco.ftl("quadratic")
    assert oco.hedge() != oco.squint()  # other factories, no options
    assert isinstance(oco.ogd(), ojax.OCOLearner) and type(oco.ogd()).__name__ == "OCOLearner"


def test_composites_compare_their_parts():
    kt, ons = parameter_free.direction_magnitude("kt"), parameter_free.direction_magnitude("ons")
    assert meta.aggressive(3, kt, ons) == meta.aggressive(
        3, kt, parameter_free.direction_magnitude()
    )
    assert meta.aggressive(3, kt, kt) != meta.aggressive(3, kt, ons)
    assert meta.aggressive(3) != meta.aggressive(4)
    assert parameter_free.mechanic(oco.ogd("none")) == parameter_free.mechanic(oco.ogd("none"))
    assert parameter_free.mechanic(oco.ogd("none")) != parameter_free.mechanic(oco.ogd())
    geo = averaging.least_squares_sgd(jnp.zeros(3), averaging.geometric_averager())
    assert geo == averaging.least_squares_sgd(
        np.zeros(3, np.float32), averaging.geometric_averager()
    )
    assert geo != averaging.least_squares_sgd(jnp.zeros(3), averaging.polyak_averager())
    assert transfer.kernel_pa(8, "pool") == transfer.kernel_pa(8, "pool")
    assert transfer.kernel_pa(8, "pool") != transfer.kernel_pa(9, "pool")
    # the within-task baseline is the biased learner with OGD inside: one learner, by value
    assert meta.ogd_within_task(3) == meta.biased_within_task(3, oco.ogd("none"))


def test_arrays_compare_by_dtype_shape_and_bytes():
    make = functools.partial(adapters.linear_predictor, oco.ogd("none"), losses.square)
    assert make(jnp.zeros(3)) == make(np.zeros(3, np.float32))
    assert make(jnp.zeros(3)) != make(jnp.ones(3))
    assert make(jnp.zeros(3)) != make(jnp.zeros(4))
    with jax.enable_x64(True):
        assert make(jnp.zeros(3, jnp.float64)) != make(jnp.zeros(3, jnp.float32))


def test_optax_learners_equal_when_built_from_the_same_factory():
    assert adapters.optax_learner(optax.sgd) == adapters.optax_learner(optax.sgd)
    assert adapters.optax_learner(optax.sgd) != adapters.optax_learner(optax.adam)
    adam = functools.partial(optax.adam, b1=0.8)
    assert adapters.optax_learner(adam) == adapters.optax_learner(
        functools.partial(optax.adam, b1=0.8)
    )
    assert adapters.optax_learner(adam) != adapters.optax_learner(
        functools.partial(optax.adam, b1=0.7)
    )
    # a lambda rebuilt is another function: such learners compare by identity
    assert adapters.optax_learner(lambda **p: optax.sgd(**p)) != adapters.optax_learner(
        lambda **p: optax.sgd(**p)
    )


def test_edited_or_traced_learners_are_not_keyed():
    learner = oco.ogd()
    edited = learner._replace(update=lambda *args: learner.update(*args))
    assert factory_key(edited) is None and edited != learner and learner != edited
    assert type(edited) is ojax.OCOLearner
    keys = []

    @jax.jit
    def build(x0):
        made = adapters.linear_predictor(oco.ogd("none"), losses.square, x0)
        keys.append(factory_key(made))
        return x0

    build(jnp.zeros(2))
    assert keys == [None]  # a traced x0 has no value: the learner compares by identity


def test_records_compare_by_value():
    within = parameter_free.direction_magnitude("ons")
    assert factory_key(meta.weights_record(within)) is not None
    assert meta.weights_record(within) == meta.weights_record(parameter_free.direction_magnitude())
    assert transfer.support_vectors_record(3) == transfer.support_vectors_record(3)
    assert transfer.support_vectors_record(3) != transfer.support_vectors_record(4)
    assert ojax.linear_weights(oco.ogd()) == ojax.linear_weights(oco.ogd())


def test_a_learner_built_twice_compiles_once():
    xs = jax.random.normal(jax.random.key(0), (20, 3))
    ys = xs @ jnp.arange(3.0)
    params = oco.OGDParams(jnp.float32(0.1), jnp.float32(1.0))

    def run_fresh():
        learner = adapters.linear_predictor(oco.ogd("none"), losses.square, jnp.zeros(3))
        return ojax.run(learner, params, xs, ys, losses.square)[1].loss

    first = run_fresh()
    before = len(TRACES)
    second = run_fresh()
    assert len(TRACES) == before
    np.testing.assert_array_equal(np.asarray(first), np.asarray(second))
    # the falsifier: a learner edited by hand (not the factory's) traces again
    edited = adapters.linear_predictor(oco.ogd("none"), losses.square, jnp.zeros(3))
    edited = edited._replace(update=lambda *args, made=edited: made.update(*args))
    ojax.run(edited, params, xs, ys, losses.square)
    assert len(TRACES) > before


def test_fingerprint_describes_a_keyed_learner_by_its_key():
    described = describe(meta.aggressive(3))
    assert described[0] == "keyed"
    assert described[1] == ["named", "ojax.meta.learners", "aggressive"]
    assert describe(meta.aggressive(3)) == described != describe(meta.aggressive(4))
    # a learner written by hand is described by its functions, as before
    hand = ojax.OCOLearner(*oco.ogd())
    assert describe(hand)[0] == "OCOLearner"


def test_a_factory_must_return_a_learner_or_a_function():
    @ojax.learner_factory
    def not_a_learner():
        return 3

    with pytest.raises(TypeError, match="must return a NamedTuple of functions"):
        not_a_learner()
