"""How the Zhao & Hoi (2010) experiments run their methods over target orders: given orders
(the shipped ones, a split file) in one compiled vmap, or random permutations through the sweep
engine. Methods of the same learner and shapes share one compiled program: learners compare by
value (:func:`ojax.learner_factory`), and the runs record the target's own support vectors, the
source classifier's `|SV(h)|` being added afterwards."""

from __future__ import annotations

import collections
import functools
import time
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ojax import losses, transfer
from ojax.core import learner_factory
from ojax.runner import run
from ojax.sweep import sweep_experiment
from ojax.sweep.experiment import ExperimentConfig
from ojax.sweep.fingerprint import shape_signature


class Timed(NamedTuple):
    """A method's run over several orders."""

    trace: Any  # ojax.core.Trace: loss the mistakes, record the support vectors, (P, T[, H])
    compile_seconds: float
    run_seconds: float


_PROGRAMS: collections.OrderedDict = collections.OrderedDict()  # compiled runs, most recent last


def _compiled_run(learner: Any, args: tuple) -> tuple[Callable[[tuple], Any], float]:
    """The compiled run of `learner` over orders for arguments of these shapes (a function of
    the arguments), and the seconds spent compiling it: 0 when an earlier dataset of the same
    shapes compiled it, little when the compilation cache and the program store
    (:mod:`ojax.programs`) hold it."""
    key = (learner, shape_signature(args), bool(jax.config.jax_enable_x64))  # type: ignore[attr-defined]
    hit = _PROGRAMS.get(key)
    if hit is not None:
        _PROGRAMS.move_to_end(key)
        return hit, 0.0
    start = time.perf_counter()
    fn = functools.partial(transfer.run_kernel, learner, keep_predictions=False)
    lowered = _lower(fn, args)  # ojax's learners are kept in the program store
    compiled = lowered.compile()
    run = lambda a: compiled(*a)  # noqa: E731
    _PROGRAMS[key] = run
    while len(_PROGRAMS) > 8:
        _PROGRAMS.popitem(last=False)
    return run, time.perf_counter() - start


def _lower(fn: Callable, args: tuple) -> Any:
    """The lowered program: the one stored by an earlier process (no trace, no lowering of
    `fn`), else `fn` traced, exported and stored for the next one."""
    from ojax import programs
    from ojax.sweep.chunk import lower_chunk

    name = programs.entry_name(
        "zhao-run", fn, [str(jax.tree.structure(args)), repr(shape_signature(args))]
    )
    return lower_chunk(jax.jit(fn), name, args)


def _with_base(trace: Any, base: Any) -> Any:
    """`trace` with the source classifier's `|SV(h)|` added to its support vectors (the
    runs record the target's own, so that splits of the same shapes share one program)."""
    return trace._replace(record=np.asarray(trace.record) + np.asarray(base, np.int32))


def time_method(method: transfer.MethodRun, orders: Any) -> Timed:
    """Compiles (timed apart) and runs one method over the given orders in one vmap, without
    the sweep engine (for benchmarks, notebooks and a split of one's own). A method of the
    same learner and shapes as an earlier one (usenet2 and newsgroup4: 1200 target rows) runs
    the program compiled then."""
    orders = jnp.asarray(transfer.split.check_orders("orders", orders, method.ys.shape[0]))
    args = (method.params, method.xs, method.ys, orders)
    compiled, compile_seconds = _compiled_run(method.learner, args)
    start = time.perf_counter()
    _, trace = jax.block_until_ready(compiled(args))
    run_seconds = time.perf_counter() - start
    return Timed(_with_base(trace, method.base_support_vectors), compile_seconds, run_seconds)


def _trial(learner: Any, params: Any, pool: Any, key: jax.Array):
    """One permutation of the target pool (drawn from the seed's key) for one method."""
    xs, ys = pool
    order = jax.random.permutation(key, ys.shape[0]).astype(jnp.int32)
    record = transfer.support_vectors_record(0)
    return run(
        learner,
        params,
        xs,
        ys,
        losses.zero_one,
        order=order,
        record=record,
        keep_predictions=False,
    )[1]


@learner_factory  # equal learners give equal cells: one compilation per learner and shapes
def _trial_cell(learner: Any) -> Callable[[Any, Any, jax.Array], Any]:
    """The sweep's function of one learner: :func:`_trial` on the pool and params in `data`
    (the sweep engine compiles once for every method and dataset of that learner and shapes,
    and its program store describes the cell by the learner's key)."""

    def cell(_: Any, data: Any, key: jax.Array) -> Any:
        return _trial(learner, data[0], data[1], key)

    return cell


def run_method(
    config: ExperimentConfig, name: str, method: transfer.MethodRun, key: jax.Array
) -> Timed:
    """Runs one method over `config.seeds` permutations through the sweep engine (the seeds
    are vmapped, chunked and sharded as the configuration says; finished chunks resume)."""
    cell = sweep_experiment(
        config,
        _trial_cell(method.learner),
        key=key,
        data=(method.params, (method.xs, method.ys)),
        name=name,
        num_steps=int(method.ys.shape[0]),
    )
    stats = cell.stats
    run_seconds = max(stats.wall_seconds - stats.compile_seconds, 0.0)
    trace = _with_base(cell.outputs, method.base_support_vectors)
    return Timed(trace, stats.compile_seconds, run_seconds)


def method_traces(
    config: ExperimentConfig,
    dataset: str,
    prepared: transfer.TransferSetup,
    methods: tuple[str, ...],
    key: jax.Array,
    orders: np.ndarray | None = None,
) -> Iterator[tuple[str, np.ndarray, np.ndarray, float, float]]:
    """`(method, mistakes, support vectors, seconds per trial, compile seconds)` for every
    method, over `config.seeds` random permutations, or over `orders` (a split file).

    With `prepared.combined` the methods run together in one scan (one compilation) and each
    method's seconds per trial is that of the whole combined run (all methods together).
    """

    def timed(name: str, method: transfer.MethodRun) -> tuple[Timed, int]:
        if orders is None:
            return run_method(config, name, method, key), config.seeds
        return time_method(method, orders), len(orders)

    if prepared.combined is not None:
        result, num = timed(f"{dataset}-all", prepared.combined)
        mistakes, svs = np.asarray(result.trace.loss), np.asarray(result.trace.record)
        for j, method in enumerate(methods):
            compile_seconds = result.compile_seconds if j == 0 else 0.0
            yield method, mistakes[..., j], svs[..., j], result.run_seconds / num, compile_seconds
        return
    for method in methods:
        result, num = timed(f"{dataset}-{method}", prepared.methods[method])
        mistakes, svs = np.asarray(result.trace.loss), np.asarray(result.trace.record)
        yield method, mistakes, svs, result.run_seconds / num, result.compile_seconds


__all__ = ["Timed", "method_traces", "run_method", "time_method"]
