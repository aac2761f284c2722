"""Padded, masked blocks of tasks: the data layout of online multi-task / meta-learning.

Tasks have different sizes (Schools: 22 to 251 points), so a sequence of tasks is stored as
arrays padded to the largest task with a boolean mask of the real points. Padded points change
nothing and count nothing in every runner of :mod:`ojax.meta`.
"""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from ojax.core import Array
from ojax.validation import InputError, check_finite, check_int, check_shape


class TaskBlock(NamedTuple):
    """``T`` tasks, each with an online (training) part and a held-out (test) part."""

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


def check_task_block(name: str, tasks: TaskBlock, batch_dims: int = 0) -> None:
    """Checks shapes, masks and finiteness of a :class:`TaskBlock` (concrete values only).

    Args:
      name: the argument's name, for the messages.
      tasks: the block; its leaves may carry ``batch_dims`` leading axes (e.g. seeds).
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
    for field in ("mask_train", "mask_test"):
        if jnp.asarray(getattr(tasks, field)).dtype != jnp.bool_:
            raise InputError(
                f"{name}.{field} must be boolean, got dtype "
                f"{jnp.asarray(getattr(tasks, field)).dtype}"
            )
    for field in ("x_train", "y_train", "x_test", "y_test"):
        check_finite(f"{name}.{field}", getattr(tasks, field))


def pad_tasks(
    xs: list[np.ndarray], ys: list[np.ndarray], size: int | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Stacks ragged tasks ``xs[t]`` ``(n_t, d)``, ``ys[t]`` ``(n_t,)`` into padded arrays.

    Returns:
      ``(x (T, n, d), y (T, n), mask (T, n))`` with ``n = size or max n_t``; padding is zeros.
    """
    if len(xs) != len(ys):
        raise InputError(f"xs and ys must hold as many tasks, got {len(xs)} and {len(ys)}")
    if len(xs) == 0:
        raise InputError("xs must hold at least one task, got none")
    sizes = [len(x) for x in xs]
    n = max(sizes) if size is None else check_int("size", size, max(sizes))
    d = xs[0].shape[1]
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
    """Tasks ``start..stop-1`` of a block (leading batch axes are kept)."""
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
