"""ojax.testing.check_learner catches what it checks: each check fails on a learner (or a runner)
broken in its way, and passes on the same learner written right."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import pytest

import ojax
from ojax import testing
from ojax.validation import check_positive


class StepParams(NamedTuple):
    learning_rate: jax.Array

    @classmethod
    def default(cls, dtype=None) -> StepParams:
        return cls(*ojax.core.scalars(0.2, dtype=dtype))


def _gd(check: bool = True, zeros=jnp.zeros_like):
    """Unprojected gradient descent; ``check``: refuse a step <= 0; ``zeros``: the state's
    counter (a float of the run's dtype when right)."""

    def check_params(params):
        if check:
            check_positive("learning_rate", params.learning_rate)

    return ojax.OCOLearner(
        lambda params, x0: (x0, zeros(x0[0])),
        lambda state, params: state[0],
        lambda state, params, grad: (state[0] - params.learning_rate * grad, state[1] + 1),
        check_params,
    )


gd = ojax.learner_factory(_gd)


def _entry(make=lambda dim: gd(), **changes) -> ojax.LearnerEntry:
    fields = {
        "name": "gd_test",
        "kind": "oco",
        "make": make,
        "default_params": StepParams.default,
        "params_grid": lambda: StepParams(jnp.asarray([0.1, 0.5], jnp.float32)),
        "stream": "unit_ball",
        "objective": "quadratic",
    }
    return ojax.LearnerEntry(**{**fields, **changes})


def test_a_learner_written_right_passes_every_check():
    assert testing.check_learner(_entry()) == tuple(testing.CHECKS)


def test_a_factory_not_by_value_fails():
    with pytest.raises(AssertionError, match="gd_test: by_value: .*ojax.learner_factory"):
        testing.check_learner(_entry(make=lambda dim: _gd()), checks=["by_value"])


def test_a_missing_domain_check_fails():
    with pytest.raises(AssertionError, match="bad_params: params given as NaN"):
        testing.check_learner(_entry(make=lambda dim: gd(check=False)), checks=["bad_params"])


def test_a_closed_over_value_fails_vmap_equals_loop():
    constant = StepParams(jnp.float32(0.3))

    def make(dim):
        inner = gd()
        return inner._replace(update=lambda s, p, g: inner.update(s, constant, g))

    with pytest.raises(AssertionError, match="vmap_equals_loop: distinct grid points"):
        testing.check_learner(_entry(make=make), checks=["vmap_equals_loop"])


def test_a_state_that_widens_under_x64_fails():
    def widening(x):  # a Python-float default: float64 once float64 is enabled
        return jnp.zeros(())

    with pytest.raises(AssertionError, match="float32: the state's floats"):
        testing.check_learner(_entry(make=lambda dim: gd(zeros=widening)), checks=["float32"])


def test_data_of_new_shapes_retrace():
    def stream(key, num_steps, dim):  # the stream's length depends on the seed
        extra = int(jax.random.key_data(key)[-1]) % 3
        return ojax.envs.STREAMS["unit_ball"](key, num_steps + extra, dim)

    with pytest.raises(AssertionError, match="no_retrace: traces after each call"):
        testing.check_learner(_entry(stream=stream), checks=["no_retrace"])


def _fresh_zeros(x):  # other options than the other tests': a learner not compiled yet
    return jnp.zeros_like(x)


def test_a_runner_that_ignores_the_mask_fails_padding(monkeypatch):
    entry = _entry(make=lambda dim: gd(zeros=_fresh_zeros))
    monkeypatch.setattr(ojax.runner, "tree_where", lambda condition, new, old: new)
    with pytest.raises(AssertionError, match="padding"):
        testing.check_learner(entry, checks=["padding"])


def test_unknown_checks_are_refused():
    with pytest.raises(ValueError, match="checks must be some of"):
        testing.check_learner(_entry(), checks=["jit"])
