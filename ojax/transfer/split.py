"""Online transfer on a source / target split: the source classifier, each method's pool, and
:func:`run_split`, the entry point for a split of one's own (a source order and target orders).

A split is homogeneous when the source and the target have the same features (methods PA, PAIO,
OTL_fixed, OTL, HomOTL2) and heterogeneous when the source has the first `k` of the target's
`d` features (methods PA, PAIO, COTL0, SCT, COTL): the number of views comes from the data.
Every method runs in the pool-indexed Gram layout (exact, no budget) over the target orders in
one vmap; Gram matrices are computed once per width and shared by the orders (a sparse target's
when a method first needs them, dropped after the last that does: :mod:`ojax.transfer.staged`).

The paper's hyperparameters are the presets of the params classes (`KernelPAParams.paper()`,
`OTLParams.paper()`, ...); :func:`paper_params` gives a method's.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ojax.core import Array, Params, Predictor, Trace
from ojax.sparse import issparse, scipy_sparse
from ojax.transfer import heterogeneous, homogeneous
from ojax.transfer.kernels import KernelPoint, SVBuffer, gram_matrix, squared_distances
from ojax.transfer.pa import (
    KernelPAParams,
    averaged_kernel_pa,
    check_pa_params,
    kernel_pa,
    source_classifier,
)
from ojax.transfer.prepare import setup_arrays, sparse_grams, sparse_views
from ojax.transfer.runner import kernel_pool, run_kernel
from ojax.transfer.staged import GramKey, MethodRuns
from ojax.validation import (
    InputError,
    check_int,
    check_labels,
    check_row_norms,
    check_shape,
    real_array,
)

HOMOGENEOUS_METHODS = ("PA", "PAIO", "OTL_fixed", "OTL", "HomOTL2")
"""Methods of a homogeneous split (the first four are the paper's Table 2)."""
HETEROGENEOUS_METHODS = ("PA", "PAIO", "COTL0", "SCT", "COTL")
"""Methods of a heterogeneous split (the paper's Table 4)."""


def paper_params(method: str, num_steps: int | None = None, dtype: Any = None) -> Params:
    """The paper's hyperparameters of `method` (HomOTL2's `beta` needs `num_steps`).

    Examples:
      >>> print(paper_params("PAIO").width, paper_params("OTL").width)
      4.0 8.0
    """
    presets = {
        "PA": lambda: KernelPAParams.paper(dtype),
        "PAIO": lambda: KernelPAParams.paper_source(dtype),
        "OTL": lambda: homogeneous.OTLParams.paper(dtype),
        "OTL_fixed": lambda: homogeneous.OTLParams.paper(dtype),
        "HomOTL2": lambda: homogeneous.HomOTL2Params.paper(
            check_int("num_steps", num_steps, 1), dtype
        ),
        "COTL": lambda: heterogeneous.COTLParams.paper(dtype),
        "COTL0": lambda: heterogeneous.COTLParams.paper(dtype),
        "SCT": lambda: heterogeneous.SCTParams.paper(dtype),
    }
    if method not in presets:
        raise InputError(f"method must be one of {list(presets)}, got {method!r}")
    return presets[method]()


class MethodRun(NamedTuple):
    """One method ready to run over orders of its pool."""

    learner: Predictor
    params: Params
    xs: Any  # the pool (kernel_pool)
    ys: Array
    base_support_vectors: int | tuple[int, ...]  # |SV(h)| the method counts

    def run(self, orders: Any, **options: Any) -> tuple[Any, Trace]:
        """:func:`~ojax.transfer.run_kernel` of this method over `orders`."""
        return run_kernel(
            self.learner,
            self.params,
            self.xs,
            self.ys,
            orders,
            base_support_vectors=self.base_support_vectors,
            **options,
        )


class TransferSetup(NamedTuple):
    """The methods of a split, ready to run (:func:`prepare_transfer`)."""

    methods: MethodRuns  # each method on its own (pool-indexed Gram layout), built on access
    num_target: int  # examples in the target pool
    source_support_vectors: int  # |SV(h)|
    gram_seconds: float  # source classifier, its outputs and the Gram matrices
    combined: MethodRun | None = None  # PA, PAIO, OTL_fixed, OTL in one scan (4 heads)


def _cast(params: Params, dtype: Any) -> Params:
    return jax.tree.map(lambda a: jnp.asarray(a, dtype), params)


def train_source(
    source_x: Any,
    source_y: Any,
    params: KernelPAParams | None = None,
    order: Any = None,
    dtype: Any = None,
) -> SVBuffer:
    """The source classifier `h`: averaged kernel PA-I over the source rows `order`
    (default: in their given order), in the Gram layout.

    Returns `h` as a buffer of source-row indices and averaged coefficients; `h.count` is
    `|SV(h)|`.
    """
    dtype = jnp.zeros(()).dtype if dtype is None else dtype
    params = _cast(KernelPAParams.paper_source() if params is None else params, dtype)
    n = source_x.shape[0]
    order = np.arange(n) if order is None else order
    gram = gram_matrix(squared_distances(source_x, dtype=dtype), float(params.width))
    xs, ys = kernel_pool(source_y, grams=gram, dtype=dtype)
    learner = averaged_kernel_pa(int(np.shape(order)[0]), mode="gram")
    state, _ = run_kernel(learner, params, xs, ys, order, keep_predictions=False)
    return source_classifier(state)


def source_outputs(h: SVBuffer, target_x: Any, source_x: Any, width: float) -> Array:
    """`h(x)` on every target row (one product against the source rows)."""
    dist = squared_distances(target_x, source_x, dtype=h.coef.dtype)
    return gram_matrix(dist, width)[:, h.keys] @ h.coef


class _Target(NamedTuple):
    """What every method's pool is built from (device arrays, checked finite)."""

    y: np.ndarray
    grams: dict[tuple[str, float], Array]  # (view, width) -> Gram matrix, those the method uses
    h_out: Array  # h on the source's view of every target row
    n_h: int
    dtype: Any


def _pool(target: _Target, views: Sequence[tuple[str, float]], offsets, heads=None):
    """The pool of :func:`~ojax.transfer.kernel_pool` from the set-up's arrays (already
    checked: no check and no device computation here)."""
    n = len(target.y)
    keys = jnp.asarray(np.arange(n, dtype=np.int32))
    zeros = jnp.asarray(np.zeros((n,), target.dtype))
    if offsets is None:
        offsets = (None,) * len(views)
    elif not isinstance(offsets, tuple):
        offsets = (offsets,)
    points = tuple(
        KernelPoint(keys, target.grams[v], zeros if o is None else o)
        for v, o in zip(views, offsets)
    )
    labels = np.asarray(target.y, target.dtype)
    if heads is not None:
        labels = np.repeat(labels[:, None], heads, axis=1)
    return (points[0] if len(points) == 1 else points), jnp.asarray(labels)


def _method(name: str, params: Params, target: _Target, source_view: str) -> MethodRun:
    """One method's learner, params and pool (`source_view`: the view `h` was trained on,
    `"whole"` for a homogeneous split, `"view1"` for a heterogeneous one)."""
    n, h_out, n_h = len(target.y), target.h_out, target.n_h
    if name in ("PA", "PAIO"):
        view = "whole" if name == "PA" else source_view
        xs, ys = _pool(target, [(view, float(params.width))], h_out if name == "PAIO" else None)
        return MethodRun(kernel_pa(n, "pool"), params, xs, ys, n_h if name == "PAIO" else 0)
    if name in ("OTL", "OTL_fixed", "HomOTL2"):
        factory = {"OTL": homogeneous.otl, "OTL_fixed": homogeneous.otl_fixed}
        learner = factory.get(name, homogeneous.homotl2)(n, "pool")
        xs, ys = _pool(target, [("whole", float(params.width))], h_out)
        return MethodRun(learner, params, xs, ys, n_h)
    views = [("view1", float(params.width1)), ("view2", float(params.width2))]
    with_h = name != "COTL0"
    xs, ys = _pool(target, views, (h_out if with_h else None, None))
    learner = (heterogeneous.sct if name == "SCT" else heterogeneous.cotl)(n, "pool")
    return MethodRun(learner, params, xs, ys, n_h if with_h else 0)


def _combined(params: Mapping[str, Params], target: _Target) -> MethodRun:
    """PA, PAIO, OTL(fixed) and OTL in one scan (their params must agree where they share)."""
    pa, paio, otl = params["PA"], params["PAIO"], params["OTL"]
    for name in ("OTL", "OTL_fixed"):
        other = params[name]
        if float(other.C) != float(pa.C) or float(other.width) != float(pa.width):
            raise InputError(f"params: combined runs need {name}'s C and width equal to PA's")
    if float(paio.C) != float(pa.C):
        raise InputError("params: combined runs need PAIO's C equal to PA's")
    run_params = homogeneous.HomogeneousParams(pa.C, pa.width, paio.width, otl.learning_rate)
    views = [("whole", float(pa.width)), ("whole", float(paio.width))]
    xs, ys = _pool(target, views, (target.h_out, target.h_out), heads=4)
    n, n_h = len(target.y), target.n_h
    learner = homogeneous.homogeneous_methods(n, "pool")
    return MethodRun(learner, run_params, xs, ys, (0, n_h, n_h, n_h))


def _source_view(source_x, target_x) -> str:
    """`"whole"` (homogeneous: the source sees every feature) or `"view1"` (its first
    `k < d`)."""
    k, d = source_x.shape[1], target_x.shape[1]
    if k == d:
        return "whole"
    if not 1 <= k < d:
        raise InputError(
            f"source_x has {k} features and target_x {d}: the source must see all of the "
            "target's features (homogeneous) or its first k < d (heterogeneous)"
        )
    return "view1"


def _features(name: str, x: Any, dtype: Any) -> Any:
    """`x` (NumPy, a list, or scipy sparse) as a 2-d array or CSR of real numbers whose
    values and row norms are finite in `dtype` (the run's: checked after the conversion);
    the values themselves are kept as given (the setup converts them)."""
    if issparse(x):
        x = scipy_sparse().csr_matrix(x)
        real_array(f"{name} (its stored values)", x.data, dtype)
        scale = np.asarray(abs(x).max(axis=1).toarray(), np.float64).ravel()
        inverse = 1.0 / np.where(scale > 0, scale, 1.0)
        scaled = scipy_sparse().diags(inverse) @ x.astype(np.float64)
        norms = scale * np.sqrt(np.asarray(scaled.multiply(scaled).sum(axis=1)).ravel())
        check_row_norms(name, None, norms=norms, dtype=dtype)
        return x
    arr = np.asarray(real_array(name, x)) if not isinstance(x, np.ndarray) else x
    if arr.ndim != 2:
        raise InputError(f"{name} must be a 2-d array (rows, features), got shape {arr.shape}")
    check_row_norms(name, real_array(name, arr, dtype))
    return arr


def _labels(name: str, y: Any) -> np.ndarray:
    labels = real_array(name, y)
    check_labels(name, labels)
    return labels


def _needs(name: str, p: Params, source_view: str) -> frozenset[GramKey]:
    """The (view, width) Gram matrices method `name` uses."""
    if name in ("COTL", "COTL0", "SCT"):
        return frozenset({("view1", float(p.width1)), ("view2", float(p.width2))})
    return frozenset({(source_view if name == "PAIO" else "whole", float(p.width))})


def _target_grams(target_x: Any, k: int, dtype: Any, keys: tuple[GramKey, ...]):
    """The Gram matrices `keys` of the sparse target rows `target_x` (its first `k`
    features the source view), block by block, checked finite."""
    built, finite = sparse_grams(sparse_views(target_x, k, keys), keys, dtype)
    if not bool(finite):
        raise InputError(_NOT_FINITE.format(np.dtype(dtype).name))
    return dict(zip(keys, built))


_NOT_FINITE = (
    "source_x, target_x: the Gram matrices or the source classifier's outputs are not "
    "finite in {} (features too large?)"
)


def _check_methods(methods: Sequence[str], homogeneous_split: bool) -> tuple[str, ...]:
    allowed = HOMOGENEOUS_METHODS if homogeneous_split else HETEROGENEOUS_METHODS
    methods = tuple(methods)
    bad = [m for m in methods if m not in allowed]
    if bad or not methods:
        kind = "homogeneous" if homogeneous_split else "heterogeneous"
        raise InputError(f"methods must be some of {list(allowed)} on a {kind} split, got {bad}")
    return methods


def prepare_transfer(
    source_x: Any,
    source_y: Any,
    target_x: Any,
    target_y: Any,
    *,
    methods: Sequence[str] | None = None,
    params: Mapping[str, Params] | None = None,
    source_params: KernelPAParams | None = None,
    source_order: Any = None,
    combined: bool = False,
    num_steps: int | None = None,
    dtype: Any = None,
) -> TransferSetup:
    """The source classifier, the Gram matrices and every method's pool of a split.

    Args:
      source_x: the source rows `(n_s, k)`.
      source_y: their labels in {-1, +1}.
      target_x: the target pool `(N, d)` (`k == d`: homogeneous; `k < d`: the source
        sees the first `k` features).
      target_y: its labels.
      methods: method names (default: the paper's table of that kind).
      params: method name -> params (missing ones: :func:`paper_params`).
      source_params: the source classifier's (default `KernelPAParams.paper_source()`).
      source_order: 0-based source rows in the order `h` learns them (default: in order).
      combined: also build PA, PAIO, OTL(fixed), OTL as one learner (homogeneous only).
      num_steps: the target stream's length, for HomOTL2's preset `beta` (default `N`).
      dtype: floating dtype (default: JAX's default float).
    """
    dtype = jnp.zeros(()).dtype if dtype is None else dtype
    source_x, target_x = (
        _features("source_x", source_x, dtype),
        _features("target_x", target_x, dtype),
    )
    source_y, target_y = _labels("source_y", source_y), _labels("target_y", target_y)
    check_shape("source_y", source_y, (np.shape(source_x)[0],))
    check_shape("target_y", target_y, (np.shape(target_x)[0],))
    start = time.perf_counter()
    source_view = _source_view(source_x, target_x)
    homogeneous_split = source_view == "whole"
    default = HOMOGENEOUS_METHODS[:4] if homogeneous_split else HETEROGENEOUS_METHODS
    methods = _check_methods(default if methods is None else methods, homogeneous_split)
    if combined and (
        not homogeneous_split or not set(homogeneous.HOMOGENEOUS_HEADS) <= set(methods)
    ):
        raise InputError(
            "combined: needs a homogeneous split and the methods PA, PAIO, OTL_fixed, OTL"
        )
    n = target_x.shape[0]
    given = dict(params or {})
    unknown = sorted(set(given) - set(methods))
    if unknown:
        raise InputError(f"params: {unknown} are not among the methods {list(methods)}")
    steps = n if num_steps is None else num_steps
    chosen = {
        m: _cast(given[m] if m in given else paper_params(m, steps, dtype), dtype) for m in methods
    }
    source_params = _cast(source_params or KernelPAParams.paper_source(), dtype)
    check_pa_params(source_params)
    order = _source_order(source_order, source_x.shape[0])
    arrays, (needs, build, built) = _method_runs(
        source_x, source_y, target_x, order, source_params, chosen, source_view, dtype
    )
    n_h = int(arrays.h.count)
    target = _Target(np.asarray(target_y), {}, arrays.h_out, n_h, dtype)
    make = functools.partial(_make, chosen, target, source_view)
    runs = MethodRuns(needs, make, build, built)
    del built
    grams = runs.matrices(methods[0])  # the first methods' matrices: built and checked now
    if combined:
        grams = {**runs.matrices("PA"), **runs.matrices("PAIO")}
    both = _combined(chosen, target._replace(grams=grams)) if combined else None
    del grams
    runs.seconds = 0.0  # those built later (in gram_seconds: the set-up's)
    seconds = time.perf_counter() - start
    return TransferSetup(runs, n, n_h, seconds, both)


def _method_runs(source_x, source_y, target_x, order, source_params, chosen, source_view, dtype):
    """The set-up's arrays (dense targets: every Gram matrix; sparse: none, each built when a
    method needs it) and the arguments `(needs, build, built)` of :class:`MethodRuns`."""
    needs = {m: _needs(m, p, source_view) for m, p in chosen.items()}
    views = tuple(sorted(frozenset().union(*needs.values())))
    sparse = issparse(target_x)
    arrays = setup_arrays(
        source_x, source_y, target_x, order, source_params, () if sparse else views, dtype
    )
    if not bool(arrays.finite):
        raise InputError(_NOT_FINITE.format(np.dtype(dtype).name))
    build = functools.partial(_target_grams, target_x, source_x.shape[1], dtype)
    return arrays._replace(grams=()), (needs, build, dict(zip(views, arrays.grams)))


def _make(chosen, target: _Target, source_view: str, name: str, grams) -> MethodRun:
    """Method `name`'s run from the Gram matrices it uses (:class:`MethodRuns`'s `make`)."""
    return _method(name, chosen[name], target._replace(grams=grams), source_view)


def _source_order(order: Any, size: int) -> np.ndarray:
    """`order` (default: the source rows in order) as one int32 order of source rows."""
    if order is None:
        return np.arange(size, dtype=np.int32)
    checked = check_orders("source_order", order, size)
    if checked.shape[0] != 1:
        raise InputError(f"source_order must be one order (S,), got shape {np.shape(order)}")
    return checked[0]


def mistake_rate(mistakes: Any) -> np.ndarray:
    """The average rate of mistakes (percent) after each sample, along the last axis.

    Examples:
      >>> print(mistake_rate([1.0, 0.0, 0.0, 1.0]))
      [100.          50.          33.33333333  50.        ]
    """
    mistakes = np.asarray(mistakes, np.float64)
    return 100.0 * np.cumsum(mistakes, axis=-1) / np.arange(1, mistakes.shape[-1] + 1)


def check_orders(name: str, orders: Any, pool: int) -> np.ndarray:
    """`orders` as an int32 `(P, T)` array of 0-based rows of a pool of `pool` examples
    (a 1-d order is one row); raises :class:`~ojax.validation.InputError` naming `name`."""
    arr = np.asarray(orders)
    if arr.ndim not in (1, 2) or arr.size == 0 or not np.issubdtype(arr.dtype, np.integer):
        raise InputError(
            f"{name} must be a non-empty integer array of 0-based row indices (T,) or (P, T), "
            f"got dtype {arr.dtype} and shape {arr.shape}"
        )
    if arr.min() < 0 or arr.max() >= pool:
        hint = " (1-based MATLAB indices? subtract 1)" if arr.max() == pool else ""
        raise InputError(
            f"{name} must hold 0-based rows in [0, {pool - 1}] of its {pool} examples, got "
            f"values in [{arr.min()}, {arr.max()}]{hint}"
        )
    return np.atleast_2d(arr).astype(np.int32)


class SplitResult(NamedTuple):
    """One method on every target order (:func:`run_split`)."""

    mistakes: np.ndarray  # (P, T) int32, 1 where the prediction was wrong (before the update)
    support_vectors: np.ndarray  # (P, T) int, after each step (h's included where counted)
    mistake_rate: np.ndarray  # (P, T) average rate of mistakes (percent) after each sample
    scores: np.ndarray  # (P, T) the scores; the prediction is sign(score), sign(0) = +1


def run_split(
    source_x: Any,
    source_y: Any,
    source_order: Any,
    target_x: Any,
    target_y: Any,
    target_orders: Any,
    *,
    methods: Sequence[str] | None = None,
    params: Mapping[str, Params] | None = None,
    source_params: KernelPAParams | None = None,
    dtype: Any = None,
) -> dict[str, SplitResult]:
    """Online transfer on a split of one's own: `h` learned on the source rows in
    `source_order`, then each method over each target order (one vmap per method).

    Indices are 0-based rows of `source_x` / `target_x`. MATLAB's 1-based `ID_ALL` (the
    authors' toolbox) must be converted with `- 1` (and offset if it counts rows of another
    matrix than `target_x`); 1-based input is refused with a hint.

    Args:
      source_x: `(n_s, k)` features (NumPy or scipy sparse).
      source_y: their labels in {-1, +1}.
      source_order: `(S,)` 0-based source rows, in the order `h` learns them.
      target_x: `(N, d)` features: `k == d` is a homogeneous split, `k < d` a
        heterogeneous one (the source saw the first `k` features).
      target_y: their labels.
      target_orders: `(P, T)` 0-based target rows, one stream per row (`(T,)`: one).
      methods: names among :data:`HOMOGENEOUS_METHODS` / :data:`HETEROGENEOUS_METHODS`
        (default: the paper's table of that kind).
      params: method name -> its params (default: the paper's, :func:`paper_params`).
      source_params: `h`'s :class:`~ojax.transfer.KernelPAParams` (default
        `KernelPAParams.paper_source()`: C = 5, width 4).
      dtype: floating dtype (default: JAX's default float; float64 needs `jax_enable_x64`).

    Returns:
      Method name -> :class:`SplitResult` (mistakes, support vectors, mistake-rate curves,
      scores; each `(P, T)`).

    Raises:
      InputError: on orders that are not 0-based integer rows (naming `source_order` or
        `target_orders`), labels outside {-1, +1}, unknown methods, bad params.
    """
    dtype = jnp.zeros(()).dtype if dtype is None else dtype
    source_x, target_x = (
        _features("source_x", source_x, dtype),
        _features("target_x", target_x, dtype),
    )
    source_order = check_orders("source_order", source_order, np.shape(source_x)[0])
    if source_order.shape[0] != 1:
        raise InputError(f"source_order must be one order (S,), got shape {source_order.shape}")
    target_orders = check_orders("target_orders", target_orders, np.shape(target_x)[0])
    setup = prepare_transfer(
        source_x,
        source_y,
        target_x,
        target_y,
        methods=methods,
        params=params,
        source_params=source_params,
        source_order=source_order[0],
        num_steps=target_orders.shape[1],
        dtype=dtype,
    )
    results = {}
    for name, method in setup.methods.items():
        _, trace = method.run(target_orders)
        mistakes = np.asarray(trace.loss).astype(np.int32)  # counts: 0 / 1 per step
        results[name] = SplitResult(
            mistakes, np.asarray(trace.record), mistake_rate(mistakes), np.asarray(trace.prediction)
        )
    return results


__all__ = [
    "HETEROGENEOUS_METHODS",
    "HOMOGENEOUS_METHODS",
    "MethodRun",
    "SplitResult",
    "TransferSetup",
    "check_orders",
    "mistake_rate",
    "paper_params",
    "prepare_transfer",
    "run_split",
    "source_outputs",
    "train_source",
]
