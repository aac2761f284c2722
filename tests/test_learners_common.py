"""One test over every registered learner, of every kind (OCO, predictor, multi-task, kernel):
the common checks of :func:`ojax.testing.check_learner` (float32 and float64 runs with a stable
state dtype, equal by value, no retrace on new values, vmap over a params grid equals a loop,
bad params refused, padding changes nothing, two halves continued from a state equal the whole
run bit for bit), and the shape of the registry tables.

Each learner's checks run in one test, one after the other: they share the learner's compiled
programs (one per dtype, the vmapped and the padded run), where a test per check would compile
them again on whichever worker ran it."""

from __future__ import annotations

import dataclasses
import inspect

import jax
import pytest

import ojax
from ojax import game, runner
from ojax.envs import STREAMS
from ojax.testing import CHECKS, check_learner


@pytest.fixture(params=sorted(ojax.LEARNERS), ids=str)
def entry(request):
    yield ojax.LEARNERS[request.param]
    # A learner's compiled runs are its own (no other learner runs them): dropped after its
    # test, where the worker would keep every learner's until the module ends (2.6 GiB
    # resident at its end, run alone; 1.4 GiB so, in the same time: the small programs the
    # checks share, casts and draws, stay).
    for program in (runner._stream, runner._tasks, game._game):
        program.clear_cache()


# the checks that do not apply to a learner without (floating) hyperparameters
_MAY_SKIP = {"vmap_equals_loop", "bad_params"}


def test_common_checks(entry):
    ran = check_learner(entry)
    # a contextual bandit's padded game draws other arms (one key per round), and a game
    # starts from the learner's init: no padding or continuation check
    games = {"padding", "continuation"} if entry.kind == "contextual" else set()
    may_skip = _MAY_SKIP | games
    assert set(CHECKS) - set(ran) <= may_skip, f"{entry.name}: only {ran} ran"
    if "vmap_equals_loop" not in ran:  # skipped: no hyperparameters to vmap over
        assert not jax.tree.leaves(entry.params_grid()), entry.name


def test_every_kind_is_registered():
    kinds = {entry.kind for entry in ojax.LEARNERS.values()}
    assert kinds <= set(ojax.LEARNER_KINDS)
    assert {"oco", "predictor", "multi_task", "kernel"} <= kinds


def test_entries_name_their_stream_and_take_their_defaults_from_the_params_class(entry):
    assert isinstance(entry.stream, str) and entry.make_stream is STREAMS[entry.stream]
    params = entry.default_params()
    default = getattr(type(params), "default", None)
    own = default is not None and set(inspect.signature(default).parameters) == {"dtype"}
    if own:  # a params class of its own (not one nesting other learners'): its one default()
        assert jax.tree.all(jax.tree.map(lambda a, b: bool(a == b), params, default()))


def test_entries_are_built_by_keyword_and_checked():
    entry = ojax.LEARNERS["ogd"]
    fields = {f.name: getattr(entry, f.name) for f in dataclasses.fields(entry)}
    with pytest.raises(TypeError):
        ojax.LearnerEntry(*fields.values())  # positional rows are refused
    with pytest.raises(TypeError, match="stream"):
        ojax.LearnerEntry(**{k: v for k, v in fields.items() if k != "stream"})  # required
    with pytest.raises(ValueError, match="objective of 'ogd' must name one of"):
        entry._replace(objective="no_such_loss")
    with pytest.raises(ValueError, match="stream of 'ogd' must name one of"):
        entry._replace(stream="no_such_stream").make_stream(jax.random.key(0), 4, 2)
    # a name becomes an output folder (results/sweep-NAME) and a curve key: plain names only
    for name in ("my ogd/../x", "../up", ".hidden", "", "a\\b"):
        with pytest.raises(ValueError, match="name must be letters, digits"):
            entry._replace(name=name)
    assert entry._replace(name="ogd-v2.1_mine").name == "ogd-v2.1_mine"
