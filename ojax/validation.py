"""Checks at the boundary, run on concrete values before anything is traced.

Every check raises :class:`InputError` (a `ValueError`) whose message names the argument, the
value it got and what is allowed. Tracers are skipped, so the checks are free inside `jit` and
cost nothing when a caller vmaps over already-checked values.

Inside `jit` / `vmap` the values are tracers and cannot be looked at. :func:`checked` is the
opt-in for such code: it runs a function under `jax.experimental.checkify` with the same checks
emitted as traced assertions, and raises the same :class:`InputError` messages (with the
offending value) when one fails::

    final = ojax.checked(jax.jit(jax.vmap(one_run)))(keys, steps)   # NaN data or a step <= 0
                                                                     # -> InputError
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import checkify


class InputError(ValueError):
    """Bad input to an ojax entry point: names the argument, the value and what is allowed."""


def _is_tracer(value: Any) -> bool:
    return isinstance(value, jax.core.Tracer)


_TRACED_CHECKS: contextvars.ContextVar[bool] = contextvars.ContextVar("traced", default=False)


@contextlib.contextmanager
def _traced_checks() -> Iterator[None]:
    token = _TRACED_CHECKS.set(True)
    try:
        yield
    finally:
        _TRACED_CHECKS.reset(token)


def _traced_check(ok: Any, message: str, value: Any) -> None:
    """Under :func:`checked`: a traced assertion that `ok` holds everywhere; the message's
    `{}` shows the first failing element of `value` (to 6 significant digits)."""
    if not _TRACED_CHECKS.get():
        return
    ok = jnp.asarray(ok).ravel()
    flat = jnp.asarray(value).ravel()
    first = flat[jnp.argmin(ok)] if flat.size > 1 else flat.reshape(())
    checkify.check(jnp.all(ok), message.replace("{}", "{:.6g}"), first)


def checked(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` with ojax's input checks active inside `jit` / `vmap` (an opt-in).

    Wraps `fn` in `jax.experimental.checkify` and compiles it with `jax.jit`: while it
    traces, every ojax check that meets a tracer (NaN / Inf data, hyperparameters out of their
    domain, labels outside their set) becomes a traced assertion. After the call, the first
    failing check is raised as the same :class:`InputError` the check gives on concrete values.
    Checks cost a reduction each; the unchecked `fn` pays nothing. A `jax.jit`-wrapped
    `fn` is unwrapped first (its compiled code has no checks in it), so its static arguments
    are not kept: pass such arguments by closure.

    Args:
      fn: any function that calls ojax entry points (vmapped inside or not).

    Returns:
      A function with `fn`'s signature and results.

    Examples:
      >>> import jax, jax.numpy as jnp
      >>> import ojax
      >>> from ojax import losses, oco
      >>> learner = ojax.linear_predictor(oco.ogd("none"), losses.square, jnp.zeros(2))
      >>> def final_loss(step, xs, ys):
      ...     params = oco.OGDParams(step, jnp.float32(1.0))
      ...     return ojax.run(learner, params, xs, ys, losses.square)[1].loss[-1]
      >>> xs, ys = jnp.ones((3, 2)), jnp.ones(3)
      >>> print(ojax.checked(jax.vmap(final_loss, (0, None, None)))(jnp.array([0.1, 0.2]),
      ...                                                          xs, ys).round(4))
      [0.2048 0.0648]
      >>> try:
      ...     ojax.checked(jax.vmap(final_loss, (0, None, None)))(jnp.array([0.1, -0.2]), xs, ys)
      ... except ojax.InputError as err:
      ...     print(err)
      learning_rate must lie in (0.0, inf), got -0.2
    """

    inner = getattr(fn, "__wrapped__", fn) if hasattr(fn, "lower") else fn
    checkified = jax.jit(checkify.checkify(inner, errors=checkify.user_checks))

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with _traced_checks():
            error, out = checkified(*args, **kwargs)
        message = error.get()
        if message is not None:
            text = message.split(" (check failed at")[0].split(" (`check` failed)")[0]
            raise InputError(text.strip())
        return out

    return wrapper


def _show(value: np.ndarray) -> str:
    """A value as a message shows it: a number as the shortest text of its own dtype
    (float32's `-0.1`, not the double `-0.10000000149011612`; `0.0`, not `np.float64(0.0)`),
    an array by its shape and first values."""
    value = np.asarray(value)
    if value.size == 1:
        scalar = value.reshape(())[()]
        return str(scalar) if value.dtype.kind in "biuf" else repr(scalar.item())
    first = ", ".join(str(v) for v in value.ravel()[:4])
    return f"array of shape {value.shape} (first values [{first}])"


def _values(name: str, value: Any) -> np.ndarray | None:
    if _is_tracer(value):
        return None
    try:
        arr = np.asarray(value)
    except Exception as exc:  # pragma: no cover - defensive
        raise InputError(f"{name}: cannot read {value!r} as an array ({exc})") from exc
    if arr.dtype == object or not np.issubdtype(arr.dtype, np.number):
        if arr.dtype != bool:
            raise InputError(f"{name} must be numeric, got {value!r} (dtype {arr.dtype})")
    return arr


_HOST_CHECK_SIZE = 1 << 16
"""Arrays of at most this many entries are checked in NumPy on the host (on a CPU device the
array is read in place): a device reduction compiles one program per shape and dtype (~15 ms
cold, ~5 ms from the compilation cache), far more than reading 65k numbers; larger arrays are
reduced on the device by the fused programs below."""


def _on_host(value: Any) -> bool:
    """Whether `value`'s checks read it in NumPy: not a large device array, and of a dtype
    NumPy computes with (bfloat16 and the other narrow floats are reduced on the device)."""
    size = value.size if isinstance(value, jax.Array) else 0
    return size <= _HOST_CHECK_SIZE and np.issubdtype(jnp.result_type(value), np.number)


@jax.jit
def _all_finite(value: Any) -> Any:
    """Whether every entry is finite, fused (no temporary of `value`'s size): `v * 0` is 0
    where `v` is finite and NaN where not, and a sum propagates NaN (a vectorised `max` need
    not); XLA on CPU fuses a float sum with its operand, where `isfinite(v).all()` first
    writes a boolean array of `value`'s size."""
    return jnp.sum(value * 0) == 0


@jax.jit
def _no_nan_or_overflow(value: Any) -> Any:
    """Whether no entry is NaN or +Inf, fused as :func:`_all_finite`: `-inf` passes (a state's
    log-weight of zero, an expert asleep or removed, is one by design). `-inf` becomes 0 by a
    select, not by `maximum(value, 0)`: XLA's CPU `max` returns 0 for a NaN there."""
    return jnp.sum(jnp.where(value == -jnp.inf, 0, value) * 0) == 0


@jax.jit
def _max_abs(value: Any) -> Any:
    """`max |value|`, fused (no temporary of `value`'s size)."""
    return jnp.max(jnp.abs(value))


def check_finite(name: str, value: Any) -> None:
    """Raises if `value` holds NaN or +-Inf (a large device array reduced on its device, a
    small one read in NumPy; details only on failure)."""
    if _is_tracer(value):
        if jnp.issubdtype(value.dtype, jnp.inexact):
            _traced_check(jnp.isfinite(value), f"{name} must be finite, got {{}}", value)
        return
    if (
        isinstance(value, jax.Array)
        and not _on_host(value)
        and jnp.issubdtype(value.dtype, jnp.floating)
    ):
        # eager even inside an outer jit trace (a concrete array closed over by a swept fn)
        with jax.ensure_compile_time_eval():
            if bool(_all_finite(value)):
                return
    arr = _values(name, value)
    if arr is None or not np.issubdtype(arr.dtype, np.floating):
        return
    bad = ~np.isfinite(arr)
    if bad.any():
        where = tuple(int(i[0]) for i in np.nonzero(bad))
        raise InputError(
            f"{name} must be finite, got {_show(arr[where])} at index {where} "
            f"({int(bad.sum())} non-finite value(s) in shape {arr.shape})"
        )


def check_range(
    name: str,
    value: Any,
    low: float | None = None,
    high: float | None = None,
    *,
    low_open: bool = False,
    high_open: bool = False,
) -> None:
    """Raises unless every element of `value` lies in the interval `low..high`.

    `low_open` / `high_open` exclude the end points. NaN is always outside.
    """
    lo = "-inf" if low is None else repr(low)
    hi = "inf" if high is None else repr(high)
    left = "(" if low_open or low is None else "["
    right = ")" if high_open or high is None else "]"
    interval = f"{left}{lo}, {hi}{right}"
    if _is_tracer(value):
        traced_ok = (
            ~jnp.isnan(value) if (low is not None and high is not None) else jnp.isfinite(value)
        )
        if low is not None:
            traced_ok &= (value > low) if low_open else (value >= low)
        if high is not None:
            traced_ok &= (value < high) if high_open else (value <= high)
        _traced_check(traced_ok, f"{name} must lie in {interval}, got {{}}", value)
        return
    arr = _values(name, value)
    if arr is None:
        return
    ok = np.isfinite(arr) if (low is None or high is None) else np.ones(arr.shape, bool)
    ok = ok & ~np.isnan(arr.astype(float))
    if low is not None:
        ok &= (arr > low) if low_open else (arr >= low)
    if high is not None:
        ok &= (arr < high) if high_open else (arr <= high)
    if not ok.all():
        bad = arr[~ok] if arr.ndim else arr
        raise InputError(f"{name} must lie in {interval}, got {_show(np.asarray(bad))}")


def check_positive(name: str, value: Any) -> None:
    """Raises unless every element of `value` is finite and > 0."""
    check_range(name, value, 0.0, None, low_open=True)


def check_nonnegative(name: str, value: Any) -> None:
    """Raises unless every element of `value` is finite and >= 0."""
    check_range(name, value, 0.0, None)


def check_precision(name: str, dtype: Any) -> None:
    """Refuses a floating `dtype` narrower than float32 for a learner's state: 16-bit sums
    lose the step sizes and overflow at 65504 (data may be narrower: it is widened)."""
    if jnp.issubdtype(dtype, jnp.floating) and jnp.finfo(dtype).bits < 32:
        raise InputError(
            f"{name} has dtype {jnp.dtype(dtype).name}: a learner's state is float32 or float64 "
            "(16-bit sums lose the step sizes and overflow at 65504); give it in float32 (data "
            "in float16 is widened exactly)"
        )


def check_shape(name: str, value: Any, expected: Sequence[int | None]) -> None:
    """Raises unless `value` has the shape `expected` (`None` matches any size)."""
    shape = tuple(np.shape(value))
    ok = len(shape) == len(expected) and all(e is None or e == s for e, s in zip(expected, shape))
    if not ok:
        want = "(" + ", ".join("*" if e is None else str(e) for e in expected) + ")"
        raise InputError(f"{name} must have shape {want}, got shape {shape}")


def _value_set(allowed: Sequence[float]) -> str:
    """`{-1, +1}`: a set of allowed values as a set (never an interval's brackets)."""
    signed = any(float(v) < 0 for v in allowed)
    shown = [f"{float(v):+g}" if signed else f"{float(v):g}" for v in allowed]
    return "{" + ", ".join(shown) + "}"


def check_labels(name: str, value: Any, allowed: Sequence[float] = (-1.0, 1.0)) -> None:
    """Raises unless every element of `value` is one of `allowed` (a set of values: the
    message reads `must take only the values {-1, +1}`)."""
    if _is_tracer(value):
        ok = jnp.isin(value, jnp.asarray(allowed, value.dtype))
        _traced_check(
            ok, f"{name} must take only the values {_value_set(allowed)}, got {{}}", value
        )
        return
    arr = _values(name, value)
    if arr is None:
        return
    bad = ~np.isin(arr, np.asarray(allowed))
    if bad.any():
        raise InputError(
            f"{name} must take only the values {_value_set(allowed)}, got "
            f"{_show(np.unique(arr[bad]))}"
        )


def check_mask(name: str, value: Any) -> None:
    """Raises unless `value` is a mask: booleans, or integers that are all 0 or 1 (a float
    mask such as `0.5` would silently count as True)."""
    dtype = jnp.result_type(value)
    if dtype == jnp.bool_:
        return
    if not jnp.issubdtype(dtype, jnp.integer):
        raise InputError(f"{name} must be boolean (or integers 0 / 1), got dtype {dtype}")
    check_labels(name, value, (0, 1))


def check_choice(name: str, value: Any, allowed: Sequence[Any]) -> None:
    """Raises unless `value` is one of `allowed` (a static option)."""
    if value not in allowed:
        raise InputError(f"{name} must be one of {list(allowed)}, got {value!r}")


def check_int(name: str, value: Any, low: int | None = None, high: int | None = None) -> int:
    """Returns `value` as an int after checking it is an integer in `low..high`."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise InputError(f"{name} must be an integer, got {value!r}")
    if (low is not None and value < low) or (high is not None and value > high):
        lo = "-inf" if low is None else low
        hi = "inf" if high is None else high
        raise InputError(f"{name} must be an integer in [{lo}, {hi}], got {value!r}")
    return int(value)


def check_magnitude(name: str, value: Any) -> None:
    """Raises if a floating `value` holds numbers whose square overflows its dtype.

    Losses square predictions and inputs (the square loss, `||x||^2` in a step): a float32
    stream with entries of `1e30` passes a finiteness check and then returns inf / NaN.
    """
    if _is_tracer(value) or not jnp.issubdtype(jnp.result_type(value), jnp.floating):
        return
    dtype = jnp.result_type(value)
    limit = float(np.sqrt(jnp.finfo(dtype).max))
    if not jnp.size(value):
        largest = 0.0
    elif _on_host(value):
        largest = float(np.max(np.abs(np.asarray(value))))
    else:
        with jax.ensure_compile_time_eval():
            largest = float(_max_abs(value))
    if largest > limit:
        raise InputError(
            f"{name} holds a value of magnitude {largest:.3g}, too large for {dtype} (its square "
            f"overflows above {limit:.3g}); rescale the data or compute in float64"
        )


def real_array(name: str, value: Any, dtype: Any = None) -> np.ndarray:
    """`value` as a NumPy array of real numbers in `dtype` (default: its own float dtype,
    float64 for integers), checked AFTER the conversion: complex values, text and objects are
    refused (a cast would drop the imaginary part or fail deep inside), and so is a value that
    is not finite in `dtype` (`1e39` becomes `inf` in float32), named with its index."""
    try:
        raw = np.asarray(value)
    except Exception as exc:
        raise InputError(f"{name}: cannot read it as an array ({exc})") from None
    if raw.dtype.kind == "c":
        raise InputError(
            f"{name} must hold real numbers, got complex values (dtype {raw.dtype}); pass the "
            "real part (np.real) if that is what it means"
        )
    if raw.dtype.kind not in "biuf":
        raise InputError(f"{name} must hold numbers, got dtype {raw.dtype}")
    target = np.dtype(dtype) if dtype is not None else None
    if target is None:
        target = raw.dtype if raw.dtype.kind == "f" else np.dtype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        converted = raw.astype(target)
    bad = ~np.isfinite(converted)
    if bad.any():
        where = tuple(int(i[0]) for i in np.nonzero(bad))
        given = raw[where]
        if raw.dtype.kind == "f" and not np.isfinite(given):  # as check_finite says it
            raise InputError(
                f"{name} must be finite, got {_show(given)} at index {where} ({int(bad.sum())} "
                f"non-finite value(s) in shape {raw.shape})"
            )
        largest = float(jnp.finfo(target).max)
        hint = "; rescale it or compute in float64" if target.itemsize < 8 else ""
        raise InputError(
            f"{name}: {_show(given)} at index {where} does not fit {target} (largest "
            f"{largest:.3g}){hint} ({int(bad.sum())} such value(s))"
        )
    return converted


def row_norms(x: Any) -> np.ndarray:
    """The L2 norm of each row of `x` `(n, d)`, in float64, without overflow or underflow
    (each row divided by its largest entry first)."""
    x = np.asarray(x, np.float64)
    scale = np.max(np.abs(x), axis=-1, keepdims=True) if x.size else np.zeros(x.shape[:-1] + (1,))
    safe = np.where(scale > 0, scale, 1.0)
    return scale[..., 0] * np.linalg.norm(x / safe, axis=-1)


def check_row_norms(name: str, x: Any, *, norms: Any = None, dtype: Any = None) -> None:
    """Raises unless every row of the floating `x` has a norm finite in `x`'s dtype (rows
    of entries near the dtype's largest value overflow there: `||x||` becomes `inf`).
    Or, with `x` None: the rows' `norms` already computed (e.g. of a sparse matrix) against
    `dtype`."""
    if x is not None:
        arr = np.asarray(x)
        if not np.issubdtype(arr.dtype, np.floating) or arr.size == 0 or arr.ndim < 1:
            return
        dtype, norms = arr.dtype, row_norms(arr.reshape(-1, arr.shape[-1]))
    dtype = np.dtype(dtype)
    largest = float(jnp.finfo(dtype).max)
    norms = np.asarray(norms)
    if np.any(norms > largest):
        row = int(np.argmax(norms > largest))
        raise InputError(
            f"{name}: row {row} has norm {norms[row]:.3g}, above the largest {dtype} "
            f"({largest:.3g}); rescale the data or compute in float64"
        )


def check_params_type(
    check: Callable[[Any], None], params: Any, name: str = "params", owner: str = "the learner"
) -> None:
    """Runs a learner's (an environment's) `check_params`, turning a params pytree of the
    wrong class (a plain tuple, a dict missing a field) into an :class:`InputError` that says
    what was expected."""
    try:
        check(params)
    except (AttributeError, KeyError, TypeError, IndexError) as exc:
        raise InputError(
            f"{name}: got {type(params).__name__} {_short(params)}, which {owner} cannot read "
            f"({type(exc).__name__}: {exc}); pass {owner}'s own params, e.g. its XxxParams "
            "NamedTuple with every field"
        ) from None


def check_state(learner: Any, params: Any, state: Any, *init_args: Any) -> None:
    """Raises unless `state` is a state of `learner` (the structure, shapes and dtypes that
    `learner.init(params, *init_args)` gives): call it before `learner.update(state, ...)`
    in a loop of one's own, where a state of another learner would fail deep inside `update`
    with a bare `AttributeError` or `TypeError`.

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax import oco
      >>> learner, params = oco.ogd("none"), oco.OGDParams(jnp.float32(0.1), jnp.float32(1.0))
      >>> state = learner.init(params, jnp.zeros(2))
      >>> check_state(learner, params, state, jnp.zeros(2))
      >>> try:
      ...     check_state(learner, params, (state,), jnp.zeros(2))
      ... except InputError as err:
      ...     print(str(err)[:76])
      state: got tuple, not a state of this learner (expected OGDState with fields
    """
    expected = jax.eval_shape(learner.init, params, *init_args)
    got_tree: Any = jax.tree.structure(state)
    want_tree = jax.tree.structure(expected)
    if got_tree != want_tree:
        fields = getattr(type(expected), "_fields", None)
        what = type(expected).__name__ + (f" with fields {', '.join(fields)}" if fields else "")
        raise InputError(
            f"state: got {type(state).__name__}, not a state of this learner (expected {what}, "
            f"structure {want_tree}); pass the state its init returned, or a later update's"
        )
    for path, leaf, want in zip(
        jax.tree_util.tree_leaves_with_path(state),
        jax.tree.leaves(state),
        jax.tree.leaves(expected),
    ):
        if jnp.shape(leaf) != want.shape or jnp.result_type(leaf) != want.dtype:
            raise InputError(
                f"state{jax.tree_util.keystr(path[0])}: got shape {jnp.shape(leaf)} "
                f"{jnp.result_type(leaf)}, expected {want.shape} {want.dtype}"
            )


class DivergedError(InputError):
    """A run whose learner state became NaN or infinite: from then on its numbers are not the
    algorithm's (a sum overflowed its dtype, a step diverged)."""


def nonfinite_leaves(tree: Any) -> list[str] | None:
    """The paths (e.g. `.sum_squares`) of the floating leaves of `tree` that hold NaN or
    +Inf (`-inf`, a log of zero, is a state's own value); `None` when a leaf is traced
    (nothing can be looked at)."""
    found = []
    for path, leaf in jax.tree_util.tree_leaves_with_path(tree):
        if _is_tracer(leaf):
            return None
        if not jnp.issubdtype(jnp.result_type(leaf), jnp.inexact) or not jnp.size(leaf):
            continue
        if _on_host(leaf):
            values = np.asarray(leaf)
            bad = bool(np.isnan(values).any() or (values == np.inf).any())
        else:
            with jax.ensure_compile_time_eval():
                bad = not bool(_no_nan_or_overflow(leaf))
        if bad:
            found.append(jax.tree_util.keystr(path))
    return found


def check_state_finite(state: Any, num_steps: int | None = None) -> None:
    """Raises if a floating leaf of a learner's `state` holds NaN or +Inf (concrete values;
    nothing is checked under a trace; `-inf`, a log-weight of zero, is a state's own value):
    a start state (`num_steps` None) with an :class:`InputError`, a run's final state (after
    `num_steps` steps) with a :class:`DivergedError`: a learner whose state overflowed stops
    the run instead of freezing or playing NaN without a word."""
    bad = nonfinite_leaves(state)
    if not bad:
        return
    where = ", ".join(f"state{p}" for p in bad[:4]) + (", ..." if len(bad) > 4 else "")
    if num_steps is None:
        raise InputError(
            f"state: the start state holds NaN or infinite values ({where}); a learner starts "
            "from finite numbers: pass its init's state or a finite earlier run's"
        )
    raise DivergedError(
        f"the learner's state became NaN or infinite during the run of {num_steps} steps "
        f"({where}): a sum overflowed its dtype or a step diverged, so the numbers are no "
        "longer the algorithm's; rescale the data, take smaller hyperparameters or compute in "
        "float64 (jax_enable_x64)"
    )


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def host_memory() -> int:
    """The host's physical memory in bytes (8 GiB where the system does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # pragma: no cover
        return 8 * 2**30


def fmt_bytes(n: float) -> str:
    """`1536` -> `"1.5 KiB"`."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1024
    return f"{n} B"  # pragma: no cover


__all__ = [
    "DivergedError",
    "InputError",
    "check_choice",
    "check_finite",
    "check_int",
    "check_labels",
    "check_magnitude",
    "check_mask",
    "check_nonnegative",
    "check_params_type",
    "check_positive",
    "check_precision",
    "check_range",
    "check_row_norms",
    "check_shape",
    "check_state",
    "check_state_finite",
    "checked",
    "fmt_bytes",
    "host_memory",
    "nonfinite_leaves",
    "real_array",
    "row_norms",
]
