"""The runner: one `jax.lax.scan` step (predict, record, update) over a stream.

:func:`run` is the one way ojax steps a learner through data; :func:`run_oco` plays the OCO game
through it (an OCO learner is a predictor whose prediction is its iterate). Every step uses
progressive validation (as river and Vowpal Wabbit report it): the learner predicts on the unseen
example, the loss of that prediction is recorded, then the learner updates. The runner takes

* a plain stream `(xs, ys)`, or a shared pool and an `order` of pool rows to visit (many
  orders of one pool: `jax.vmap` over `order`, the pool is read, never copied);
* a `mask`: padded steps change nothing and count nothing (without one, each step is the
  learner's bare update: nothing selects the state, so a sparse update stays `O(nnz)`; a mask
  known when the run is traced, NumPy inside `jit` or a concrete array, whose every point is
  real steps as no mask does);
* task blocks for a :class:`~ojax.core.MultiTaskLearner` (`(num_tasks, max_points, ...)`, a
  scan over tasks of scans over points, `begin_task` / `end_task` at the boundaries);
* a `record` hook (a :class:`~ojax.core.Step` -> pytree per step) and a `task_record` hook
  (per task), and returns one :class:`~ojax.core.Trace`.

Inputs are checked on concrete values (shapes against what the learner predicts, dtypes
against its state, NaN / Inf and magnitudes that would overflow, params of the wrong class),
then a jitted scan runs that compiles once per static configuration (learner, loss, hooks,
flags, shapes and dtypes): other hyperparameter values, other data of the same shape or another
seed never recompile. A start state must be finite, and so must the final state: a learner whose
state overflowed stops the run with a :class:`~ojax.validation.DivergedError` instead of freezing
without a word (on concrete values; under a caller's `jit` / `vmap` it is the caller's check).

vmap recipes (`in_axes` follow the argument order `(learner, params, data...)`)::

    # a grid of hyperparameters (leaves of `grid` carry a leading axis)
    jax.vmap(lambda p: run(predictor, p, xs, ys, loss))(grid)
    # seeds: streams stacked on a leading axis
    jax.vmap(lambda x, y: run(predictor, params, x, y, loss))(xs_by_seed, ys_by_seed)
    # orders of one pool (shuffled streams, a published split's permutations)
    jax.vmap(lambda o: run(predictor, params, pool_x, pool_y, loss, order=o))(orders)
"""

from __future__ import annotations

import functools
import numbers
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ojax.adapters import OCOParams, objective_loss, oco_predictor
from ojax.core import (
    Array,
    LearnerEntry,
    MultiTaskLearner,
    OCOLearner,
    Params,
    Predictor,
    State,
    Step,
    TaskInfo,
    Trace,
    tree_where,
)
from ojax.losses import LOSSES, OBJECTIVES, Loss, Objective, check_loss
from ojax.sparse import issparse, sparse_rows
from ojax.validation import (
    InputError,
    check_finite,
    check_int,
    check_magnitude,
    check_mask,
    check_params_type,
    check_precision,
    check_shape,
    check_state,
    check_state_finite,
)

Record = Callable[[Step], Any]
TaskRecord = Callable[[State, Params, TaskInfo], Any]


# the scan


def opaque_start(state: State) -> State:
    """The start state of a scan, opaque to the compiler (`lax.optimization_barrier`): XLA
    would specialise a loop on the constant counters of a state `init` made inside the program
    (a count known to start at 0 becomes the loop's index; what is derived from it rounds
    otherwise), so a run from `init` and one continued from a given state are one loop."""
    return jax.lax.optimization_barrier(state)


def _step(learner, params: Params, loss: Loss, record: Record | None, keep: bool, fetch, masked):
    """One scan step of progressive validation: predict on the unseen example, record its loss,
    then learn. `fetch` maps the scanned input to `(x, y)`. `masked` (static): the input
    is `(item, real)` and a padded step (`real` False) counts 0 and changes nothing; without
    it the step is the bare update, with no select of the state (a sparse update stays
    `O(nnz)`)."""

    def step(state, inputs):
        item, real = inputs if masked else (inputs, None)
        x, y = fetch(item)
        if getattr(learner, "predict_update", None) is None:
            y_hat, new = learner.predict(state, params, x), learner.update(state, params, x, y)
        else:
            y_hat, new = learner.predict_update(state, params, x, y)
        value = loss.value(y_hat, y)
        if masked:
            value = jnp.where(real, value, 0.0)
            new = tree_where(real, new, state)
        else:  # the dtype jnp.where(real, value, 0.0) gives
            value = jnp.asarray(value).astype(jnp.result_type(value, 0.0))
        seen = None if record is None else record(Step(state, params, x, y, y_hat, new))
        return new, (value, y_hat if keep else None, seen)

    return step


def _fetcher(xs: Any, ys: Array | None, pooled: bool):
    """The map from a scanned item to `(x, y)`; `ys` None: the label is the input itself
    (an OCO stream of `z_t`, scanned once instead of as two copies)."""
    if ys is None:
        return lambda z: (z, z)
    if not pooled:
        return lambda item: item
    return lambda index: (jax.tree.map(lambda a: a[index], xs), ys[index])


class _Options(NamedTuple):
    """The static configuration of a run (hashed into the compile cache)."""

    loss: Loss
    record: Record | None
    task_record: TaskRecord | None
    keep_predictions: bool
    task_sums: bool
    independent_tasks: bool
    pooled: bool
    masked: bool  # a mask was given: padded steps select the old state
    unroll: int = 1  # scan steps per loop iteration (lax.scan's unroll)


@functools.partial(jax.jit, static_argnames=("learner", "options"))
def _stream(learner, params, xs, ys, order, mask, options: _Options, state=None):
    step = _step(
        learner,
        params,
        options.loss,
        options.record,
        options.keep_predictions,
        _fetcher(xs, ys, options.pooled),
        options.masked,
    )
    items = order if options.pooled else xs if ys is None else (xs, ys)
    inputs = (items, mask) if options.masked else items
    start = opaque_start(learner.init(params) if state is None else state)
    state, (losses, preds, seen) = jax.lax.scan(step, start, inputs, unroll=options.unroll)
    return state, Trace(losses, preds, seen, mask)


@functools.partial(jax.jit, static_argnames=("learner", "options"))
def _tasks(learner, params, xs, ys, mask, task_data, options: _Options, state=None, first=0):
    keep = options.keep_predictions and not options.task_sums
    step = _step(
        learner, params, options.loss, options.record, keep, lambda item: item, options.masked
    )
    sizes = jnp.sum(mask, axis=1, dtype=jnp.int32)
    indices = jnp.arange(mask.shape[0], dtype=jnp.int32) + jnp.asarray(first, jnp.int32)

    def task(state, block):
        index, size, x, y, real, data = block
        info = TaskInfo(index, size, data)
        state, (losses, preds, seen) = jax.lax.scan(
            step,
            learner.begin_task(state, params, info),
            ((x, y), real) if options.masked else (x, y),
            unroll=options.unroll,
        )
        state = learner.end_task(state, params, info)
        done = None if options.task_record is None else options.task_record(state, params, info)
        if options.task_sums:
            losses = jnp.sum(losses)
        return state, (losses, preds, seen, done)

    blocks = (indices, sizes, xs, ys, mask, task_data)
    init = opaque_start(learner.init(params) if state is None else state)
    if options.independent_tasks:
        state, out = jax.vmap(task, in_axes=(None, 0))(init, blocks)
    else:
        state, out = jax.lax.scan(task, init, blocks)
    losses, preds, seen, done = out
    return state, Trace(losses, preds, seen, mask, done)


# checks (concrete values; shapes and dtypes also under a trace)


def _no_lists(**data: Any) -> None:
    """Refuses a Python list of numbers (nested or not) for the arrays `data`: JAX would read
    it as a pytree of that many scalars, each without the time axis."""
    for name, value in data.items():
        leaves = jax.tree.leaves(value)
        if isinstance(value, list) and all(isinstance(leaf, numbers.Number) for leaf in leaves):
            raise InputError(
                f"{name} is a Python list of {len(leaves)} numbers, which JAX reads as that many "
                f"scalars: give an array, e.g. jnp.asarray({name}, jnp.float32)"
            )


def _leading(name: str, tree: Any) -> int:
    leaves = jax.tree.leaves(tree)
    if not leaves or any(jnp.ndim(leaf) < 1 for leaf in leaves):
        shapes = ", ".join(str(jnp.shape(leaf)) for leaf in leaves[:4])
        more = f", ... ({len(leaves)} leaves)" if len(leaves) > 4 else ""
        raise InputError(
            f"{name} must have a leading time (or pool) axis, got shape(s) [{shapes}{more}]"
        )
    sizes = {jnp.shape(leaf)[0] for leaf in leaves}
    if len(sizes) != 1:
        raise InputError(
            f"{name}: every leaf needs the same leading axis, got sizes {sorted(sizes)}"
        )
    return sizes.pop()


def _check_values(name: str, tree: Any) -> None:
    leaves = jax.tree.leaves(tree)
    for i, leaf in enumerate(leaves):
        label = name if len(leaves) == 1 else f"{name}[leaf {i}]"
        check_finite(label, leaf)
        check_magnitude(label, leaf)


def _describe(tree: Any) -> str:
    leaves = jax.tree.leaves(tree)
    parts = [f"{a.dtype}{list(a.shape)}" for a in leaves]
    return parts[0] if len(parts) == 1 else "(" + ", ".join(parts) + ")"


def _check_fit(learner, params: Params, xs: Any, ys: Any, axes: int) -> None:
    """Abstractly evaluates one step on the first example (`xs` / `ys` without their
    `axes` leading axes): it must fit `predict`, the label must have the prediction's shape,
    and `update` must keep the state's shapes and dtypes (a float32 learner fed float64 data
    fails here with a message instead of a scan-carry TypeError). Cached per learner and
    signature, so a second call with other values traces nothing."""
    leaves, treedef = jax.tree.flatten((params, xs, ys))
    first_data = len(jax.tree.leaves(params))
    types = tuple(
        (tuple(jnp.shape(a))[axes if i >= first_data else 0 :], jnp.result_type(a))
        for i, a in enumerate(leaves)
    )
    problem = _fit_problem(learner, treedef, types, tuple(jnp.shape(ys)[:axes]))
    if problem is not None:
        raise InputError(problem)


def _floats(tree: Any) -> set[str]:
    return {str(a.dtype) for a in jax.tree.leaves(tree) if jnp.issubdtype(a.dtype, jnp.floating)}


def _first_line(exc: Exception) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


@functools.lru_cache(maxsize=512)
def _fit_problem(learner, treedef, types, lead: tuple[int, ...]) -> str | None:
    """The message of the first problem :func:`_check_fit` finds, or `None`."""
    params, x, y = jax.tree.unflatten(treedef, [jax.ShapeDtypeStruct(s, d) for s, d in types])
    state = jax.eval_shape(learner.init, params)
    data_floats, state_floats = _floats((x, y)), _floats(state)
    widest = max((jnp.finfo(t).bits for t in state_floats), default=None)
    if widest is not None and any(jnp.finfo(t).bits > widest for t in data_floats):
        return (
            f"xs, ys: data of dtype {', '.join(sorted(data_floats))} does not match the "
            f"learner's state (dtype {', '.join(sorted(state_floats))}); build the learner for "
            "the data's dtype (e.g. its x0 or dtype argument) or cast the data"
        )
    try:
        y_hat = jax.eval_shape(learner.predict, state, params, x)
    except (TypeError, ValueError) as exc:
        return f"xs: an example {_describe(x)} does not fit the learner ({_first_line(exc)})"
    if y_hat.shape != y.shape:
        return (
            f"ys must have shape {lead + y_hat.shape} (one label per prediction of shape "
            f"{y_hat.shape}), got {lead + y.shape}"
        )
    try:
        new = jax.eval_shape(learner.update, state, params, x, y)
    except (TypeError, ValueError) as exc:
        return f"xs, ys: the learner cannot update on them ({_first_line(exc)})"
    if [(a.shape, a.dtype) for a in jax.tree.leaves(state)] != [
        (a.shape, a.dtype) for a in jax.tree.leaves(new)
    ]:
        return (
            f"xs, ys: an update changes the shapes or dtypes of the learner's state "
            f"({_describe(state)} -> {_describe(new)}); build the learner for the data's dtype "
            "and shape"
        )
    fused = getattr(learner, "predict_update", None)
    if fused is not None:
        both, apart = jax.eval_shape(fused, state, params, x, y), (y_hat, new)
        if [jax.tree.structure(both), _describe(both)] != [
            jax.tree.structure(apart),
            _describe(apart),
        ]:
            return (
                f"learner: predict_update gives {_describe(both)}, where predict and update "
                f"give {_describe(apart)}"
            )
    return None


def _masked(mask: Any) -> bool:
    """Whether the steps select the state by `mask`: not without one, nor for a known (not
    traced) all-True bool mask (cheaper; XLA may round the unmasked loop's last bit otherwise)."""
    if mask is None:
        return False
    if isinstance(mask, jax.core.Tracer) or not hasattr(mask, "dtype") or mask.dtype != bool:
        return True
    values = np.asarray(mask)
    return values.size == 0 or not bool(values.all())


def _check_mask(mask: Any, shape: tuple[int, ...]) -> Array:
    if mask is None:
        return jnp.ones(shape, bool)
    check_shape("mask", mask, shape)
    check_mask("mask", mask)
    return jnp.asarray(mask, bool)


def _check_order(order: Any, pool: int) -> Array:
    dtype = jnp.result_type(order)
    if jnp.ndim(order) != 1 or not jnp.issubdtype(dtype, jnp.integer):
        raise InputError(
            f"order must be a 1-d integer array of pool rows, got dtype {dtype} and shape "
            f"{jnp.shape(order)}"
        )
    if not isinstance(order, jax.core.Tracer) and jnp.size(order):
        arr = np.asarray(order)
        if arr.min() < 0 or arr.max() >= pool:
            raise InputError(
                f"order must index the pool of {pool} examples (0-based), got values in "
                f"[{arr.min()}, {arr.max()}]"
            )
    return jnp.asarray(order, jnp.int32)


def _check_start_state(learner, params: Params, state: Any, *init_args: Any) -> None:
    """A start state must have the structure, shapes and dtypes `learner.init` gives, and
    finite values."""
    if state is not None:
        check_state(learner, params, state, *init_args)
        check_state_finite(state)


def _finite(out: tuple[State, Trace], mask: Array) -> tuple[State, Trace]:
    """`out`, its final state checked finite (:func:`check_state_finite`; not under a trace)."""
    check_state_finite(out[0], int(np.prod(jnp.shape(mask))))
    return out


def _is_multi_task(learner: Any) -> bool:
    return isinstance(learner, MultiTaskLearner) or hasattr(learner, "begin_task")


def _check_learner(learner: Any, params: Params, loss: Any) -> None:
    if isinstance(learner, OCOLearner):
        raise InputError(
            "learner: an OCOLearner plays points, not predictions; use run_oco, or "
            "ojax.linear_predictor(learner, loss, x0) to predict with it"
        )
    if not all(hasattr(learner, name) for name in ("init", "predict", "update", "check_params")):
        raise InputError(
            f"learner must be a Predictor or a MultiTaskLearner, got {type(learner).__name__}"
        )
    check_params_type(learner.check_params, params)
    check_loss(loss)


def _check_stream(
    learner, params, xs, ys, mask, order, state=None, first_task=0
) -> tuple[Any, Array, Array | None]:
    """`(xs, mask, order)` checked; a SciPy sparse matrix `xs` as padded index / value rows
    (:class:`~ojax.sparse.SparseRows`, which :func:`~ojax.adapters.linear_predictor` takes)."""
    if issparse(xs):
        xs = sparse_rows(xs, dtype=jnp.result_type(float))
    if first_task != 0:
        raise InputError(f"first_task: task indices are for a MultiTaskLearner, got {first_task}")
    _check_start_state(learner, params, state)
    _no_lists(xs=xs, ys=ys)
    n = _leading("xs", xs)
    check_shape("ys", ys, (n,) + tuple(jnp.shape(ys)[1:]))  # one label per row (of the pool)
    if order is not None:
        order = _check_order(order, n)
        n = jnp.shape(order)[0]
    if n == 0:
        raise InputError("xs: the stream is empty (0 steps); give at least one example")
    mask = _check_mask(mask, (n,))
    _check_values("xs", xs)
    _check_values("ys", ys)
    _check_fit(learner, params, xs, ys, 1)
    return xs, mask, order


def _check_tasks(learner, params, xs, ys, mask, task_data, state=None, first_task=0) -> Array:
    check_int("first_task", first_task, low=0)
    _check_start_state(learner, params, state)
    _no_lists(xs=xs, ys=ys)
    leading = {jnp.shape(leaf)[:2] for leaf in jax.tree.leaves(xs) if jnp.ndim(leaf) >= 2}
    if len(leading) != 1 or any(jnp.ndim(leaf) < 2 for leaf in jax.tree.leaves(xs)):
        raise InputError(
            "xs must be task blocks (num_tasks, max_points, ...), got shape(s) "
            f"{[jnp.shape(leaf) for leaf in jax.tree.leaves(xs)]}"
        )
    blocks = leading.pop()
    if 0 in blocks:
        raise InputError(f"xs: the task blocks are empty (shape {blocks}); give at least one task")
    check_shape("ys", ys, blocks + tuple(jnp.shape(ys)[2:]))
    mask = _check_mask(mask, blocks)
    if not isinstance(mask, jax.core.Tracer) and not np.any(np.asarray(mask)):
        raise InputError("mask: every point of every task is masked; no task has a real point")
    if task_data is not None:
        _leading("task_data", task_data)
        sizes = {jnp.shape(leaf)[0] for leaf in jax.tree.leaves(task_data)}
        if sizes != {blocks[0]}:
            raise InputError(f"task_data: needs a leading axis of {blocks[0]} tasks, got {sizes}")
        _check_values("task_data", task_data)
    _check_values("xs", xs)
    _check_values("ys", ys)
    _check_fit(learner, params, xs, ys, 2)
    return mask


def run(
    learner: Predictor | MultiTaskLearner,
    params: Params,
    xs: Any,
    ys: Array,
    loss: Loss,
    *,
    mask: Array | None = None,
    order: Array | None = None,
    record: Record | None = None,
    task_data: Any = None,
    task_record: TaskRecord | None = None,
    task_sums: bool = False,
    independent_tasks: bool = False,
    keep_predictions: bool = True,
    state: State | None = None,
    first_task: int = 0,
    unroll: int = 1,
) -> tuple[State, Trace]:
    """Runs `learner` over a stream in one `lax.scan` (progressive validation).

    Args:
      learner: a :class:`~ojax.core.Predictor` (a stream) or a
        :class:`~ojax.core.MultiTaskLearner` (task blocks); static: it keys the compile cache.
      params: its hyperparameters (a pytree of arrays; new values never recompile).
      xs: `(n, ...)` inputs (a pytree with a leading axis: dense rows, sparse rows (a SciPy
        matrix too), kernel points); with `order`, the pool `(N, ...)`; for a multi-task
        learner, task blocks `(num_tasks, max_points, ...)`.
      ys: the labels, with the leading axes of `xs` and the shape of a prediction after them.
      loss: the loss recorded for each prediction (static).
      mask: `(n,)` (or `(num_tasks, max_points)`) bool; False steps are padding: they
        change nothing and count 0 (all True and not traced: it costs nothing).
      order: `(n,)` int pool rows: step `t` sees `xs[order[t]], ys[order[t]]`.
      record: static `Step -> pytree` recorded at every step (e.g. the weights the prediction
        was made with, the support vectors after the update); in `Trace.record`.
      task_data: a pytree with a leading task axis handed to the multi-task learner and to
        `task_record` as `TaskInfo.data` (e.g. each task's held-out points).
      task_record: static `(state, params, TaskInfo) -> pytree` recorded after each task's
        `end_task`; in `Trace.task`.
      task_sums: record each task's summed loss, `(num_tasks,)`, instead of every point's
        (memory of large grids); predictions are then not kept.
      independent_tasks: the learner carries nothing from task to task (a fixed bias): tasks run
        in parallel (`vmap` from the initial state) instead of in sequence; the returned
        state then has a leading task axis.
      keep_predictions: store the predictions in `Trace.prediction` (else `None`); one
        `(n, ...)` output written per step, so pass False when only the losses are needed.
      state: start from this state (an earlier run's, or :func:`ojax.load_state`'s) instead of
        `learner.init(params)`; `T` steps equal `k` continued over `T - k`, bit for bit.
      first_task: a multi-task learner's `TaskInfo.index` of this call's first task.
      unroll: steps per iteration of the compiled loop (`lax.scan`'s, static): faster cheap
        steps, the last bit of the arithmetic may differ (1, the default, is the reference).

    Returns:
      The final state and the :class:`~ojax.core.Trace`; an `InputError` on shapes, dtypes or
      values the learner cannot take, a `DivergedError` on a final state not finite.

    Examples:
      >>> import jax.numpy as jnp
      >>> import ojax
      >>> from ojax import losses, oco
      >>> learner = ojax.linear_predictor(oco.ogd("none"), losses.square, jnp.zeros(2))
      >>> params = oco.OGDParams(jnp.float32(0.5), jnp.float32(1.0))
      >>> xs, ys = jnp.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]), jnp.array([1.0, 2.0, 3.0])
      >>> _, trace = ojax.run(learner, params, xs, ys, losses.square)
      >>> print(trace.loss)
      [0.5   2.    1.125]
    """
    _check_learner(learner, params, loss)
    flags = (keep_predictions, task_sums, independent_tasks, order is not None, _masked(mask))
    options = _Options(loss, record, task_record, *flags, check_int("unroll", unroll, low=1))
    if _is_multi_task(learner):
        if order is not None:
            raise InputError("order: pools with an order are for streams, not task blocks")
        mask = _check_tasks(learner, params, xs, ys, mask, task_data, state, first_task)
        out = _tasks(learner, params, xs, ys, mask, task_data, options, state, first_task)
        return _finite(out, mask)
    if task_data is not None or task_record is not None or task_sums or independent_tasks:
        raise InputError("task_data, task_record, task_sums, independent_tasks: multi-task only")
    xs, mask, order = _check_stream(learner, params, xs, ys, mask, order, state, first_task)
    return _finite(_stream(learner, params, xs, ys, order, mask, options, state), mask)


def run_oco(
    learner: OCOLearner,
    params: Params,
    x0: Array,
    zs: Array,
    objective: Objective,
    *,
    store_iterates: bool = False,
    state: State | None = None,
    mask: Array | None = None,
    unroll: int = 1,
) -> tuple[State, Trace]:
    """Plays the OCO game: at step t the learner plays `w_t`, pays `f(w_t; z_t)`, and
    receives the gradient `grad f(w_t; z_t)`. A thin wrapper of :func:`run`.

    Args:
      learner: an :class:`~ojax.core.OCOLearner` (static).
      params: its hyperparameters.
      x0: `(d,)` the anchor / first point (it must lie in the learner's domain).
      zs: `(n, d)` the data of the losses (static `objective` says which family).
      objective: e.g. :data:`ojax.losses.linear_objective` (static).
      store_iterates: also return the played points `(n, d)` in `Trace.prediction`
        (memory: `n d`).
      state: continue from this state of `learner` (as :func:`run`'s `state`; `x0` is
        still given: it is checked and it is the anchor of anchored learners).
      mask: `(n,)` bool, as in :func:`run`: a False step is padding (the learner does not
        move, the step pays 0), e.g. runs of several horizons in one `vmap`.
      unroll: as in :func:`run`.

    Returns:
      The final state and a :class:`~ojax.core.Trace` whose `loss` is `f_t(w_t)`.
    """
    if not isinstance(learner, OCOLearner):
        raise InputError(f"learner must be an OCOLearner, got {type(learner).__name__}")
    check_shape("zs", zs, (None,) + tuple(jnp.shape(x0)))
    if jnp.shape(zs)[0] == 0:
        raise InputError("zs: the stream is empty (0 steps); give at least one loss")
    if jnp.finfo(jnp.result_type(zs)).bits > jnp.finfo(jnp.result_type(x0)).bits:
        raise InputError(
            f"zs has dtype {jnp.result_type(zs)}, wider than x0's {jnp.result_type(x0)} (the "
            "learner's state follows x0); give x0 the data's dtype or cast the data"
        )
    zs = jnp.asarray(zs, jnp.result_type(x0))  # a narrower stream is widened exactly
    check_finite("x0", x0)
    check_precision("x0", jnp.result_type(x0))
    check_params_type(learner.check_params, params)
    learner.check_start(params, x0)
    _check_start_state(learner, params, state, jnp.asarray(x0))
    predictor = oco_predictor(learner, objective)
    _check_values("zs", zs)
    masked, mask = _masked(mask), _check_mask(mask, jnp.shape(zs)[:1])
    flags = (store_iterates, False, False, False, masked, check_int("unroll", unroll, low=1))
    options = _Options(objective_loss(objective), None, None, *flags)
    start = OCOParams(params, jnp.asarray(x0))
    return _finite(_stream(predictor, start, zs, None, None, mask, options, state), mask)


def entry_start(entry: LearnerEntry, zs: Array) -> Array:
    """The start point of a registered OCO learner for the stream `zs`: zeros, or the uniform
    point `1 / d` (a prior on the simplex)."""
    shape, dtype = jnp.shape(zs)[1:], jnp.result_type(zs)
    if entry.start == "uniform":
        return jnp.full(shape, 1.0 / shape[-1], dtype)
    return jnp.zeros(shape, dtype)


def run_entry(entry: LearnerEntry, learner: Any, params: Params, data: tuple) -> Trace:
    """Runs a registered learner on `data = entry.make_stream(key, num_steps, dim)` with the
    entry's objective or loss; returns the :class:`~ojax.core.Trace` (what tests, sweeps and the
    CLI run for every kind of learner; :func:`run_entry_state` also returns the final state)."""
    return run_entry_state(entry, learner, params, data)[1]


def run_entry_state(
    entry: LearnerEntry, learner: Any, params: Params, data: tuple
) -> tuple[State, Trace]:
    """:func:`run_entry` with the final state: `(state, trace)`."""
    xs, ys, *extra = data
    if entry.kind == "oco":
        zs = xs
        return run_oco(learner, params, entry_start(entry, zs), zs, OBJECTIVES[entry.objective])
    names = ("mask", "order", "task_data")
    return run(learner, params, xs, ys, LOSSES[entry.objective], **dict(zip(names, extra)))


__all__ = [
    "Record",
    "TaskRecord",
    "entry_start",
    "opaque_start",
    "run",
    "run_entry",
    "run_entry_state",
    "run_oco",
]
