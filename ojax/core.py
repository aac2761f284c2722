"""The learner protocols, the trace of a run, and the registry of learners.

A learner is a ``NamedTuple`` of pure functions over a state pytree (the shape of optax's
``GradientTransformation``). Hyperparameters live in a params pytree of arrays passed at call
time, never closed over, so a sweep is ``jax.vmap`` over params and a new value never
recompiles. Shapes and control flow (dimension, loss kind, projection kind) are static factory
arguments. Code is written for one stream, one task, one seed; batching is the caller's vmap:

* seeds: ``jax.vmap(lambda key: run(learner, params, *make_stream(key)))(keys)``;
* hyperparameters: ``jax.vmap(run, in_axes=(None, 0, None, None))(learner, grid, xs, ys)``
  with ``grid`` a params pytree whose leaves carry a leading grid axis;
* tasks: ``jax.vmap(..., in_axes=(None, None, 0, 0))`` over stacked streams.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import jax

Array = jax.Array
Params = Any  # a pytree of arrays (usually a ``XxxParams`` NamedTuple)
State = Any  # a pytree of arrays (usually a ``XxxState`` NamedTuple)


def _no_check(params: Params) -> None:
    del params


class OCOLearner(NamedTuple):
    """An online convex optimization learner: plays iterates, receives (sub)gradients.

    Attributes:
      init: ``(params, x0) -> state``; ``x0`` is the anchor / first point (its shape fixes the
        dimension).
      iterate: ``(state, params) -> w``, the point played next. Learners return iterates, never
        deltas: anchored learners (FTRL, dual averaging, coin betting) compute ``w`` from ``x0``
        and sums.
      update: ``(state, params, grad) -> state`` after the loss at ``iterate(state, params)``
        revealed the (sub)gradient ``grad``.
      check_params: ``(params) -> None``; raises :class:`ojax.validation.InputError` on values
        outside their domain. Called on concrete values before tracing.
      check_start: ``(x0) -> None``; raises on a start point outside the learner's domain
        (e.g. Hedge's prior must be positive). Called on concrete values before tracing.
    """

    init: Callable[[Params, Array], State]
    iterate: Callable[[State, Params], Array]
    update: Callable[[State, Params, Array], State]
    check_params: Callable[[Params], None] = _no_check
    check_start: Callable[[Array], None] = _no_check


class Predictor(NamedTuple):
    """An online predictor: sees ``x``, predicts, sees ``y``, updates.

    Attributes:
      init: ``(params) -> state``.
      predict: ``(state, params, x) -> y_hat``.
      update: ``(state, params, x, y) -> state``.
      check_params: ``(params) -> None``, as in :class:`OCOLearner`.
    """

    init: Callable[[Params], State]
    predict: Callable[[State, Params, Array], Array]
    update: Callable[[State, Params, Array, Array], State]
    check_params: Callable[[Params], None] = _no_check


class MultiTaskLearner(NamedTuple):
    """A learner over a sequence of tasks, each a stream of examples.

    ``begin_task`` runs before the first point of a task (inner resets), ``end_task`` after its
    last real point (a lazy meta update). ``predict`` / ``update`` are as in :class:`Predictor`.
    """

    init: Callable[[Params], State]
    begin_task: Callable[[State, Params], State]
    predict: Callable[[State, Params, Array], Array]
    update: Callable[[State, Params, Array, Array], State]
    end_task: Callable[[State, Params], State]
    check_params: Callable[[Params], None] = _no_check


class Trace(NamedTuple):
    """Per-step record of a run under progressive validation (predict, record, then learn).

    Attributes:
      loss: ``(n,)`` loss of each prediction made before its label was seen (0 on padding).
      prediction: ``(n, ...)`` the predictions (or played points' losses for OCO runs).
      iterate: ``(n, d)`` the iterate used at each step, or ``None`` unless asked for.
      mask: ``(n,)`` bool, True on real steps (all True for a plain stream).
    """

    loss: Array
    prediction: Array
    iterate: Array | None
    mask: Array


class LearnerEntry(NamedTuple):
    """A registered learner: enough for tests, the CLI and the sweep engine to run it.

    Attributes:
      name: registry key.
      kind: ``"oco"`` (gradients in) or ``"predictor"`` (examples in).
      make: ``(dim) -> learner`` for a problem of dimension ``dim``.
      default_params: ``() -> params``.
      params_grid: ``() -> params`` with a leading axis of a few distinct values (for the
        vmap-equals-loop test and sweeps).
      make_stream: ``(key, num_steps, dim) -> (xs, ys)`` data this learner is meant for
        (for OCO learners ``xs`` holds the data ``z_t`` of the losses and ``ys`` is ignored).
      objective: for OCO learners, the name of the :data:`ojax.losses.OBJECTIVES` entry their
        stream is played with; for predictors, the name of the :data:`ojax.losses.LOSSES` entry
        recorded by the runner.
    """

    name: str
    kind: str
    make: Callable[[int], Any]
    default_params: Callable[[], Params]
    params_grid: Callable[[], Params]
    make_stream: Callable[[Array, int, int], tuple[Array, Array]]
    objective: str = "linear"


LEARNERS: dict[str, LearnerEntry] = {}


def register_learner(entry: LearnerEntry) -> LearnerEntry:
    """Adds ``entry`` to :data:`LEARNERS` (names are unique)."""
    if entry.name in LEARNERS:
        raise ValueError(f"learner {entry.name!r} is already registered")
    if entry.kind not in ("oco", "predictor"):
        raise ValueError(f"kind must be 'oco' or 'predictor', got {entry.kind!r}")
    LEARNERS[entry.name] = entry
    return entry
