"""Padded, masked blocks of tasks: the data layout of online multi-task / meta-learning.

Tasks have different sizes (Schools: 22 to 251 points), so a sequence of tasks is stored as
arrays padded to the largest task with a boolean mask of the real points. Padded points change
nothing and count nothing in every runner of :mod:`ojax.meta`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ojax.core import Array
from ojax.validation import (
    InputError,
    check_finite,
    check_int,
    check_row_norms,
    check_shape,
    fmt_bytes,
    host_memory,
    real_array,
)


class TestPoints(NamedTuple):
    """A task's held-out points (the `task_data` the runner hands to the task records)."""

    x: Array  # (m, d) inputs
    y: Array  # (m,) labels
    mask: Array  # (m,) bool, True on real points


# not a pytest class (set after the class: mypy reads any NamedTuple body entry as a field)
TestPoints.__test__ = False  # type: ignore[attr-defined]


class TaskBlock(NamedTuple):
    """`T` tasks, each with an online (training) part and a held-out (test) part.

    Build one from ragged tasks with :meth:`from_tasks`; the runners of :mod:`ojax.meta` take it.
    """

    x_train: Array  # (T, n, d) inputs of the online part, in the order they arrive
    y_train: Array  # (T, n) labels of the online part
    mask_train: Array  # (T, n) bool, True on real points
    x_test: Array  # (T, m, d) held-out inputs (for the test error of the task's estimator)
    y_test: Array  # (T, m)
    mask_test: Array  # (T, m) bool

    @property
    def num_tasks(self) -> int:
        return self.x_train.shape[-3]

    @property
    def dim(self) -> int:
        return self.x_train.shape[-1]

    @property
    def dtype(self):
        """The float dtype of the inputs."""
        return jnp.result_type(self.x_train)

    def test_points(self) -> TestPoints:
        """The held-out parts, `(T, m, ...)`: the runner's `task_data`."""
        return TestPoints(self.x_test, self.y_test, self.mask_test)

    def reorder(self, order: Array) -> TaskBlock:
        """The tasks in the order `order` (`(T',)` task indices; traceable, so a random task
        order per seed is `jax.vmap(tasks.reorder)(orders)`)."""
        order = jnp.asarray(order)
        return TaskBlock(
            jnp.take(self.x_train, order, axis=-3),
            jnp.take(self.y_train, order, axis=-2),
            jnp.take(self.mask_train, order, axis=-2),
            jnp.take(self.x_test, order, axis=-3),
            jnp.take(self.y_test, order, axis=-2),
            jnp.take(self.mask_test, order, axis=-2),
        )

    @classmethod
    def from_tasks(cls, tasks: Sequence[tuple], dtype=None) -> TaskBlock:
        """A block of ragged tasks `[(X, Y, X_test, Y_test), ...]` (any sizes), padded.

        Args:
          tasks: per task `X` `(n_t, d)` online inputs in their order of arrival, `Y`
            `(n_t,)`, and the held-out `X_test` `(m_t, d)`, `Y_test` `(m_t,)`; every
            part needs at least one point.
          dtype: float dtype of the block; default that of the data, float64 kept under x64
            (float32 otherwise, JAX's default).

        Returns:
          A :class:`TaskBlock` padded to the largest parts, with masks of the real points.

        Raises:
          InputError: no tasks, a task with no online or no held-out points, a task that is not
            four arrays, mismatched dimensions or lengths, complex or non-numeric values, values
            (or row norms) that are not finite in `dtype` (checked after the conversion).

        Examples:
          >>> import numpy as np
          >>> from ojax import meta
          >>> rng = np.random.default_rng(0)
          >>> tasks = [(rng.normal(size=(n, 3)), rng.normal(size=n), rng.normal(size=(2, 3)),
          ...           rng.normal(size=2)) for n in (4, 7, 5)]
          >>> block = meta.TaskBlock.from_tasks(tasks)
          >>> print(block.mask_train.sum(axis=1))
          [4 7 5]
        """
        parts = _ragged_parts(tasks)
        if dtype is None:
            dtype = np.result_type(*(p for part in parts for p in part))
            if not np.issubdtype(dtype, np.floating):
                dtype = np.float64
        dtype = jax.dtypes.canonicalize_dtype(dtype)
        parts = [_in_dtype(t, part, dtype) for t, part in enumerate(parts)]
        x, y, mask = pad_tasks([p[0] for p in parts], [p[1] for p in parts])
        xt, yt, mt = pad_tasks([p[2] for p in parts], [p[3] for p in parts])
        return cls(
            jnp.asarray(x, dtype),
            jnp.asarray(y, dtype),
            jnp.asarray(mask),
            jnp.asarray(xt, dtype),
            jnp.asarray(yt, dtype),
            jnp.asarray(mt),
        )


def _ragged_parts(tasks: Sequence[tuple]) -> list[tuple[np.ndarray, ...]]:
    """Checks ragged tasks (four arrays each, shapes, sizes, finite values)."""
    if isinstance(tasks, TaskBlock) or not isinstance(tasks, Sequence) or len(tasks) == 0:
        raise InputError(
            "tasks must be a non-empty list of (X, Y, X_test, Y_test) tuples, got "
            f"{type(tasks).__name__} of length {len(tasks) if hasattr(tasks, '__len__') else '?'}"
        )
    names = ("X", "Y", "X_test", "Y_test")
    out, dim = [], None
    for t, task in enumerate(tasks):
        if not isinstance(task, (tuple, list)) or len(task) != 4:
            raise InputError(f"tasks[{t}] must be a tuple (X, Y, X_test, Y_test), got {task!r:.60}")
        try:
            arrays = tuple(np.asarray(a) for a in task)
        except ValueError as exc:  # ragged nested lists
            raise InputError(f"tasks[{t}] cannot be read as arrays ({exc})") from None
        for name, a in zip(names, arrays):
            if a.dtype.kind == "c":
                raise InputError(
                    f"tasks[{t}].{name} must hold real numbers, got complex values (dtype "
                    f"{a.dtype}); pass the real part (np.real) if that is what it means"
                )
            if a.dtype == object or not np.issubdtype(a.dtype, np.number):
                raise InputError(f"tasks[{t}].{name} must be numeric, got dtype {a.dtype}")
        x, y, xt, yt = arrays
        dim = x.shape[-1] if dim is None and x.ndim == 2 else dim
        if dim == 0:
            raise InputError(f"tasks[{t}].X has no features (shape {x.shape}); give at least 1")
        for name, a, b in (("X", x, y), ("X_test", xt, yt)):
            if a.ndim != 2 or a.shape[1] != dim or b.shape != (a.shape[0],):
                raise InputError(
                    f"tasks[{t}]: {name} must be (n, {dim}) and its labels (n,), got shapes "
                    f"{a.shape} and {b.shape}"
                )
            if a.shape[0] == 0:
                part = "online" if name == "X" else "held-out"
                raise InputError(f"tasks[{t}] has no {part} points ({name} of shape {a.shape})")
        for name, a in zip(names, arrays):
            check_finite(f"tasks[{t}].{name}", a)
        out.append(arrays)
    return out


def _in_dtype(t: int, part: tuple[np.ndarray, ...], dtype) -> tuple[np.ndarray, ...]:
    """Task `t`'s four arrays converted to `dtype`, finite there, rows of finite norm."""
    names = ("X", "Y", "X_test", "Y_test")
    out = tuple(real_array(f"tasks[{t}].{n}", a, dtype) for n, a in zip(names, part))
    for name, x in (("X", out[0]), ("X_test", out[2])):
        check_row_norms(f"tasks[{t}].{name}", x)
    return out


def check_task_block(name: str, tasks: TaskBlock, batch_dims: int = 0) -> None:
    """Checks shapes, masks and finiteness of a :class:`TaskBlock` (concrete values only).

    Args:
      name: the argument's name, for the messages.
      tasks: the block; its leaves may carry `batch_dims` leading axes (e.g. seeds).
      batch_dims: number of leading batch axes.
    """
    if not isinstance(tasks, TaskBlock):
        raise InputError(f"{name} must be a TaskBlock, got {type(tasks).__name__}")
    shape = np.shape(tasks.x_train)
    if len(shape) != 3 + batch_dims:
        raise InputError(
            f"{name}.x_train must have shape ({'B, ' * batch_dims}T, n, d), got shape {shape}"
        )
    lead = tuple(shape[: batch_dims + 2])
    check_shape(f"{name}.y_train", tasks.y_train, lead)
    check_shape(f"{name}.mask_train", tasks.mask_train, lead)
    test_shape = np.shape(tasks.x_test)
    expected = tuple(shape[: batch_dims + 1]) + (None, shape[-1])
    check_shape(f"{name}.x_test", tasks.x_test, expected)
    test_lead = tuple(test_shape[: batch_dims + 2])
    check_shape(f"{name}.y_test", tasks.y_test, test_lead)
    check_shape(f"{name}.mask_test", tasks.mask_test, test_lead)
    if 0 in lead:
        raise InputError(f"{name} is empty (x_train of shape {shape}); give at least one task")
    for field in ("mask_train", "mask_test"):
        if jnp.asarray(getattr(tasks, field)).dtype != jnp.bool_:
            raise InputError(
                f"{name}.{field} must be boolean, got dtype "
                f"{jnp.asarray(getattr(tasks, field)).dtype}"
            )
    for field in ("x_train", "y_train", "x_test", "y_test"):
        check_finite(f"{name}.{field}", getattr(tasks, field))
    mask = tasks.mask_train
    if not isinstance(mask, jax.core.Tracer) and not np.any(np.asarray(mask)):
        raise InputError(f"{name}.mask_train: every point of every task is masked")


def pad_bytes(num_tasks: int, size: int, dim: int, dtype) -> int:
    """The bytes of `num_tasks` tasks padded to `size` points of `dim` features; an
    :class:`InputError` above a quarter of the host's memory (one huge task among many small
    ones would otherwise exhaust it while padding)."""
    need = num_tasks * size * max(dim, 1) * np.dtype(dtype).itemsize
    limit = host_memory() // 4
    if need > limit:
        raise InputError(
            f"tasks: {num_tasks} tasks padded to the largest ({size} points of {dim} features) "
            f"need {fmt_bytes(need)}, above a quarter of this host's memory ({fmt_bytes(limit)}); "
            "split the largest tasks or drop them"
        )
    return need


def pad_tasks(
    xs: list[np.ndarray], ys: list[np.ndarray], size: int | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Stacks ragged tasks `xs[t]` `(n_t, d)`, `ys[t]` `(n_t,)` into padded arrays.

    Returns:
      `(x (T, n, d), y (T, n), mask (T, n))` with `n = size or max n_t`; padding is zeros.
    """
    if len(xs) != len(ys):
        raise InputError(f"xs and ys must hold as many tasks, got {len(xs)} and {len(ys)}")
    if len(xs) == 0:
        raise InputError("xs must hold at least one task, got none")
    sizes = [len(x) for x in xs]
    n = max(sizes) if size is None else check_int("size", size, max(sizes))
    d = xs[0].shape[1]
    pad_bytes(len(xs), n, d, np.result_type(*xs))
    x = np.zeros((len(xs), n, d), np.result_type(*xs))
    y = np.zeros((len(xs), n), np.result_type(*ys))
    mask = np.zeros((len(xs), n), bool)
    for t, (xt, yt) in enumerate(zip(xs, ys)):
        if xt.ndim != 2 or xt.shape[1] != d or len(yt) != len(xt):
            raise InputError(
                f"task {t}: x must be (n_t, {d}) and y (n_t,), got {xt.shape} and {yt.shape}"
            )
        x[t, : len(xt)] = xt
        y[t, : len(xt)] = yt
        mask[t, : len(xt)] = True
    return x, y, mask


def task_slice(tasks: TaskBlock, start: int, stop: int) -> TaskBlock:
    """Tasks `start..stop-1` of a block (leading batch axes are kept)."""
    x_sl = (..., slice(start, stop), slice(None), slice(None))
    y_sl = (..., slice(start, stop), slice(None))
    return TaskBlock(
        tasks.x_train[x_sl],
        tasks.y_train[y_sl],
        tasks.mask_train[y_sl],
        tasks.x_test[x_sl],
        tasks.y_test[y_sl],
        tasks.mask_test[y_sl],
    )


__all__ = ["TaskBlock", "TestPoints", "check_task_block", "pad_bytes", "pad_tasks", "task_slice"]
