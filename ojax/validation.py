"""Checks at the boundary, run on concrete values before anything is traced.

Every check raises :class:`InputError` (a ``ValueError``) whose message names the argument, the
value it got and what is allowed. Tracers are skipped, so the checks are free inside ``jit`` and
cost nothing when a caller vmaps over already-checked values.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np


class InputError(ValueError):
    """Bad input to an ojax entry point: names the argument, the value and what is allowed."""


def _is_tracer(value: Any) -> bool:
    return isinstance(value, jax.core.Tracer)


def _show(value: np.ndarray) -> str:
    if value.size == 1:
        return repr(value.reshape(()).item())
    bad = value.ravel()
    return f"array of shape {value.shape} (first values {bad[:4].tolist()})"


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


def check_finite(name: str, value: Any) -> None:
    """Raises if ``value`` holds NaN or +-Inf (reduced on device; details only on failure)."""
    if _is_tracer(value):
        return
    if isinstance(value, jax.Array) and jnp.issubdtype(value.dtype, jnp.floating):
        # eager even inside an outer jit trace (a concrete array closed over by a swept fn)
        with jax.ensure_compile_time_eval():
            if bool(jnp.isfinite(value).all()):
                return
    arr = _values(name, value)
    if arr is None or not np.issubdtype(arr.dtype, np.floating):
        return
    bad = ~np.isfinite(arr)
    if bad.any():
        where = tuple(int(i[0]) for i in np.nonzero(bad))
        raise InputError(
            f"{name} must be finite, got {arr[where]!r} at index {where} "
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
    """Raises unless every element of ``value`` lies in the interval ``low..high``.

    ``low_open`` / ``high_open`` exclude the end points. NaN is always outside.
    """
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
        lo = "-inf" if low is None else repr(low)
        hi = "inf" if high is None else repr(high)
        left = "(" if low_open or low is None else "["
        right = ")" if high_open or high is None else "]"
        interval = f"{left}{lo}, {hi}{right}"
        bad = arr[~ok] if arr.ndim else arr
        raise InputError(f"{name} must lie in {interval}, got {_show(np.asarray(bad))}")


def check_positive(name: str, value: Any) -> None:
    """Raises unless every element of ``value`` is finite and > 0."""
    check_range(name, value, 0.0, None, low_open=True)


def check_nonnegative(name: str, value: Any) -> None:
    """Raises unless every element of ``value`` is finite and >= 0."""
    check_range(name, value, 0.0, None)


def check_shape(name: str, value: Any, expected: Sequence[int | None]) -> None:
    """Raises unless ``value`` has the shape ``expected`` (``None`` matches any size)."""
    shape = tuple(np.shape(value))
    ok = len(shape) == len(expected) and all(e is None or e == s for e, s in zip(expected, shape))
    if not ok:
        want = "(" + ", ".join("*" if e is None else str(e) for e in expected) + ")"
        raise InputError(f"{name} must have shape {want}, got shape {shape}")


def check_labels(name: str, value: Any, allowed: Sequence[float] = (-1.0, 1.0)) -> None:
    """Raises unless every element of ``value`` is one of ``allowed``."""
    arr = _values(name, value)
    if arr is None:
        return
    bad = ~np.isin(arr, np.asarray(allowed))
    if bad.any():
        raise InputError(
            f"{name} must take values in {list(allowed)}, got {_show(np.unique(arr[bad]))}"
        )


def check_choice(name: str, value: Any, allowed: Sequence[Any]) -> None:
    """Raises unless ``value`` is one of ``allowed`` (a static option)."""
    if value not in allowed:
        raise InputError(f"{name} must be one of {list(allowed)}, got {value!r}")


def check_int(name: str, value: Any, low: int | None = None, high: int | None = None) -> int:
    """Returns ``value`` as an int after checking it is an integer in ``low..high``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise InputError(f"{name} must be an integer, got {value!r}")
    if (low is not None and value < low) or (high is not None and value > high):
        lo = "-inf" if low is None else low
        hi = "inf" if high is None else high
        raise InputError(f"{name} must be an integer in [{lo}, {hi}], got {value!r}")
    return int(value)
