"""Grids: a sweep's hyperparameter axes, their values as arrays, every value checked first.

A `dict` grid is a Cartesian product of named axes; a pytree with a leading axis (or
:func:`stacked`) is one axis whose leaves are zipped. Before anything runs, every concrete grid
value must be finite and fit the dtype it runs in: a Python `1e39` would become `inf` in
float32 and a `1e-50` would become `0.0`, so both are refused with the value as it was given.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import Decimal, InvalidOperation
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ojax.validation import InputError, check_finite

X64_HINT = "use float64 (--x64 on the command line, jax.config.update('jax_enable_x64', True))"
"""What a message suggests when a value does not fit the default 32-bit dtypes."""


class Stacked(NamedTuple):
    """A pytree whose leaves share a leading axis, swept as ONE named axis (zipped, no product).

    Attributes:
      values: the pytree (e.g. an `OGDParams` whose leaves are `(k,)` arrays).
      name: the axis name in the results.
    """

    values: Any
    name: str = "grid"


def stacked(values: Any, name: str = "grid") -> Stacked:
    """Marks `values` (a pytree with a leading axis) as one axis named `name`.

    A plain `dict` grid is a Cartesian product of its entries; wrap a dict of equally long
    arrays in `stacked` to zip them instead.
    """
    return Stacked(values, name)


class Axis(NamedTuple):
    """One hyperparameter axis of a sweep."""

    name: str
    values: Any  # pytree of arrays with a leading axis of `size`
    size: int


def leading_size(name: str, tree: Any) -> int:
    """The common leading size of the leaves of `tree` (checked)."""
    leaves = jax.tree.leaves(tree)
    if not leaves:
        raise InputError(f"{name} is empty: it has no arrays")
    sizes = set()
    for leaf in leaves:
        if np.ndim(leaf) < 1:
            raise InputError(
                f"{name} must have a leading axis on every array, got a scalar {leaf!r}"
            )
        sizes.add(int(np.shape(leaf)[0]))
    if len(sizes) != 1:
        shapes = [tuple(np.shape(leaf)) for leaf in leaves]
        raise InputError(f"{name}: its arrays must share the leading size, got shapes {shapes}")
    (size,) = sizes
    if size < 1:
        raise InputError(f"{name} is empty: its leading axis has size 0")
    return size


def is_value_list(x: Any) -> bool:
    """A list (or plain tuple) of numbers: one axis of values, not a pytree of scalars."""
    return (
        isinstance(x, (list, tuple))
        and not hasattr(x, "_fields")
        and all(
            isinstance(e, (int, float, bool, np.number))
            or (isinstance(e, (np.ndarray, jax.Array)) and e.ndim == 0)
            for e in x
        )
    )


# --------------------------------------------------------------------------------------------
# exact values


def shown(value: Any) -> str:
    """A value as its user gave it: the text typed, or the repr of a Python number."""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, (bool, int, float)) and not isinstance(value, np.generic):
        return repr(value)
    return str(np.asarray(value)[()])


def parse_number(text: str) -> Decimal:
    """`text` as an exact decimal number (no rounding to a float yet); finite or refused."""
    try:
        number = Decimal(text.strip())
    except (InvalidOperation, AttributeError):
        raise InputError(f"{text!r} is not a number") from None
    if not number.is_finite():
        raise InputError(f"{text.strip()} is not a finite number")
    return number


def _exact(value: Any) -> Decimal | None:
    """The exact value of a number or numeric text (`None` for NaN / Inf)."""
    if isinstance(value, str):
        number = parse_number(value)
    else:
        item = np.asarray(value)[()].item()
        if isinstance(item, float) and not np.isfinite(item):
            return None
        number = Decimal(item)
    return number if number.is_finite() else None


def _refuse(name: str, subject: str, dtype: np.dtype, limit: str) -> InputError:
    # jax sets its flags on Config at run time: its stubs do not know jax_enable_x64
    x64 = jax.config.jax_enable_x64  # type: ignore[attr-defined]
    hint = "" if dtype.itemsize >= 8 or x64 else f"; {X64_HINT}"
    if dtype.kind != "f":
        hint = hint.replace("use float64", "use 64-bit types")
    return InputError(f"{name}: {subject} does not fit {dtype} ({limit}){hint}")


def fit_value(name: str, value: Any, dtype: Any, field: str | None = None) -> np.ndarray:
    """`value` (a number or numeric text, parsed exactly) as a 0-d array of `dtype`.

    Refuses NaN and Inf, a value that overflows `dtype`, a nonzero value that it rounds to 0
    or to a subnormal (flushed to 0 by XLA), and a fraction given for an integer dtype. The
    messages show the value as given, e.g. `grid: learning_rate=1e39 does not fit float32`.
    """
    dtype = np.dtype(dtype)
    subject = shown(value) if field is None else f"{field}={shown(value)}"
    exact = _exact(value)
    if exact is None:
        where = "" if field is None else f" {field}"
        raise InputError(f"{name}:{where} must be finite, got {shown(value)}")
    if dtype.kind == "f":
        info = np.finfo(dtype)
        # through float64 as NumPy converts a list of Python numbers (the same rounding)
        exact_float = isinstance(value, (str, int, np.integer))
        source = np.float64(float(exact)) if exact_float else np.asarray(value)
        with np.errstate(over="ignore", under="ignore"):
            converted = np.asarray(source).astype(dtype)
        if not np.isfinite(converted):
            raise _refuse(name, subject, dtype, f"largest {info.max:.2g}")
        if exact != 0 and abs(converted) < info.smallest_normal:
            raise _refuse(name, subject, dtype, f"smallest normal {info.smallest_normal:.2g}")
        return converted
    if dtype.kind in "iub":
        if exact != exact.to_integral_value():
            raise InputError(f"{name}: {subject} is not an integer, as {dtype} needs")
        low, high = (0, 1) if dtype.kind == "b" else (np.iinfo(dtype).min, np.iinfo(dtype).max)
        if not low <= int(exact) <= high:
            raise _refuse(name, subject, dtype, f"range [{low}, {high}]")
        return np.asarray(int(exact)).astype(dtype)
    raise InputError(f"{name}: {subject}: a {dtype} value cannot be swept")


def fit_values(
    name: str, values: Iterable[Any], dtype: Any, field: str | None = None
) -> np.ndarray:
    """:func:`fit_value` of every element: a 1-d array of `dtype`."""
    fitted = [fit_value(name, v, dtype, field) for v in values]
    return np.stack(fitted) if fitted else np.empty((0,), dtype)


def _check_array_fits(name: str, field: str | None, raw: np.ndarray, dtype: np.dtype) -> None:
    """Vectorized :func:`fit_value` for a NumPy array converted to `dtype`."""
    if dtype == raw.dtype or raw.size == 0 or dtype.kind not in "fiu":
        return
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        converted = raw.astype(dtype)
    if dtype.kind == "f":
        bad = np.isfinite(raw) & ~np.isfinite(converted)
        tiny = np.finfo(dtype).smallest_normal
        bad |= (raw != 0) & (np.abs(converted) < tiny)
    else:
        bad = converted.astype(raw.dtype) != raw
    if bad.any():
        where = tuple(int(i[0]) for i in np.nonzero(bad))
        label = f"{field or ''}{list(where) if where else ''}" or None
        fit_value(name, raw[where], dtype, label)  # raises, naming the value
        raise InputError(f"{name}: {label} does not fit {dtype}")  # pragma: no cover


def _path_name(path: tuple) -> str | None:
    """`learning_rate`, `learner.learning_rate` or `[0]`: a leaf's place in a grid."""
    text = ""
    for key in path:
        if isinstance(key, jax.tree_util.SequenceKey):
            text += f"[{key.idx}]"
        else:
            part = (
                key.name if isinstance(key, jax.tree_util.GetAttrKey) else getattr(key, "key", key)
            )
            text += f"{'.' if text else ''}{part}"
    return text or None


def _target_dtype(raw: np.ndarray) -> np.dtype:
    return np.dtype(jax.dtypes.canonicalize_dtype(raw.dtype))


def as_arrays(name: str, tree: Any, *, check_fit: bool = False) -> Any:
    """`tree` with its value lists and NumPy arrays as JAX arrays, checked finite.

    With `check_fit` (grids), every value must also fit the dtype it is converted to (a
    float64 value in float32 without x64, an int64 in int32), see :func:`fit_value`.
    """

    def convert(path, leaf):
        field = _path_name(path)
        if is_value_list(leaf):
            raw = np.asarray(leaf)
            target = _target_dtype(raw)
            if check_fit and target.kind in "fiub":
                return jnp.asarray(fit_values(name, leaf, target, field).reshape(raw.shape))
            leaf = raw.astype(target) if target.kind == "f" else raw
        if isinstance(leaf, jax.Array):
            arr = leaf
            check_finite(name if field is None else f"{name}: {field}", arr)
        else:
            raw = np.asarray(leaf)
            if raw.dtype == object or not (
                np.issubdtype(raw.dtype, np.number) or raw.dtype == bool
            ):
                raise InputError(f"{name} must hold numeric arrays, got {leaf!r}")
            check_finite(name if field is None else f"{name}: {field}", raw)
            if check_fit:
                _check_array_fits(name, field, raw, _target_dtype(raw))
            arr = jnp.asarray(raw)
        return arr

    return jax.tree_util.tree_map_with_path(convert, tree, is_leaf=is_value_list)


def grid_axes(grid: Any) -> tuple[str, list[Axis]]:
    """`(kind, axes)` with kind `"none"`, `"product"` or `"stacked"`; every value
    checked (finite, fits its dtype)."""
    if grid is None:
        return "none", []
    if isinstance(grid, Stacked):
        name = grid.name
        values = as_arrays(f"grid {name!r}", grid.values, check_fit=True)
        return "stacked", [Axis(name, values, leading_size(f"grid {name!r}", values))]
    if isinstance(grid, Mapping):
        if not grid:
            raise InputError(
                "grid is empty ({}); give at least one axis, e.g. {'learning_rate': [0.1, 1.0]}, "
                "or grid=None to sweep over seeds only"
            )
        axes = []
        for name, value in grid.items():
            if not isinstance(name, str) or not name:
                raise InputError(f"grid axis names must be non-empty strings, got {name!r}")
            if name in ("seed", "task"):
                raise InputError(f"grid axis name {name!r} is reserved (seed and task axes)")
            arrays = as_arrays("grid", {name: value}, check_fit=True)[name]
            axes.append(Axis(name, arrays, leading_size(f"grid[{name!r}]", arrays)))
        return "product", axes
    values = as_arrays("grid", grid, check_fit=True)
    return "stacked", [Axis("grid", values, leading_size("grid", values))]


__all__ = [
    "Axis",
    "Stacked",
    "X64_HINT",
    "as_arrays",
    "fit_value",
    "fit_values",
    "grid_axes",
    "is_value_list",
    "leading_size",
    "parse_number",
    "shown",
    "stacked",
]
