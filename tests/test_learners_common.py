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
import os
import subprocess
import sys

import jax
import pytest
from conftest import default_xla_flags, subprocess_env

import ojax
from ojax import game, runner
from ojax.envs import STREAMS
from ojax.testing import CHECKS, check_learner

# learners whose halves continue the whole run bit for bit under XLA's default optimizations
# only: at the suite's `-O0` (tests/conftest.py) D-Adaptation's final state is 1 ulp apart
_CONTINUED_UNDER_DEFAULT_XLA = {"dadapt_sgd"}


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


@pytest.mark.parametrize(
    "entry",
    [
        pytest.param(name, marks=pytest.mark.default_xla)
        if name in _CONTINUED_UNDER_DEFAULT_XLA
        else name
        for name in sorted(ojax.LEARNERS)
    ],
    ids=str,
    indirect=True,
)
def test_common_checks(entry):
    ran = check_learner(entry)
    # a contextual bandit's padded game draws other arms (one key per round), and a game
    # starts from the learner's init: no padding or continuation check
    games = {"padding", "continuation"} if entry.kind == "contextual" else set()
    may_skip = _MAY_SKIP | games
    assert set(CHECKS) - set(ran) <= may_skip, f"{entry.name}: only {ran} ran"
    if "vmap_equals_loop" not in ran:  # skipped: no hyperparameters to vmap over
        assert not jax.tree.leaves(entry.params_grid()), entry.name


# one learner of each kind: OGD, the geometric average (whose float32 bits follow XLA's fusion),
# Aggressive with KT, OTL, SquareCB
_UNDER_DEFAULT_XLA = {
    "oco": "ogd",
    "predictor": "least_squares_sgd_geometric",
    "multi_task": "aggressive_kt",
    "kernel": "otl",
    "contextual": "squarecb",
}


def test_common_checks_hold_under_xlas_default_flags():
    """The suite compiles with XLA's loop emitters and `-O0` (tests/conftest.py), users' runs
    with its fusion emitters and LLVM's optimizations: the checks of the compiled numbers (a
    float32 run, padding, continuation bit for bit) hold there too, for a learner of each kind,
    in a process of its own (the flags are a process's XLA_FLAGS; the compilation cache keys on
    them)."""
    names, checks = _UNDER_DEFAULT_XLA, ["float32", "padding", "continuation"]
    assert {ojax.LEARNERS[name].kind for name in names.values()} == set(names)
    assert set(names) == set(ojax.LEARNER_KINDS)
    code = (
        "import sys, ojax\n"
        "from ojax.testing import check_learner\n"
        "for name in sys.argv[1:]:\n"
        f"    print(name, *check_learner(ojax.LEARNERS[name], checks={checks!r}))\n"
    )
    env = subprocess_env(XLA_FLAGS=default_xla_flags(os.environ["XLA_FLAGS"]))
    done = subprocess.run(
        [sys.executable, "-c", code, *names.values()],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    ran = {line.split()[0]: line.split()[1:] for line in done.stdout.splitlines()}
    assert sorted(ran) == sorted(names.values())
    for kind, name in names.items():  # a game has no padding or start state
        assert ran[name] == (checks[:1] if kind == "contextual" else checks), ran


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
