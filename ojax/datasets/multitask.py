"""Multi-task regression datasets of Denevi et al. (2020): Schools and Lenk.

Each loader returns a :class:`PooledTasks`: every task's points, padded and masked, with the
number of held-out points of each task. :func:`split_tasks` then draws one seed's random task
order and random per-task online / held-out split (jittable, vmappable over keys), returning a
:class:`~ojax.meta.TaskBlock`.

Preprocessing (the spec, `specs/denevi2020.md`):

* Schools (`schools.mat`): 139 schools; `X{t}` (26 x n_t) is transposed to rows, each row is
  scaled to unit L2 norm (no centring); labels are the raw exam scores; per task
  `ceil(0.25 n_t)` held-out points.
* Lenk (`lenk.mat`): 180 people x 20 computers; the file's train / test split is discarded:
  each person's 16 `Traindata` rows and 4 `Testdata` rows are pooled; columns 0..13 are the
  features (0 is a constant 1), column 14 the rating; rows scaled to unit norm; 4 held-out points
  per task.
"""

from __future__ import annotations

import functools
import math
import os
from pathlib import Path
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ojax.core import Array
from ojax.datasets.npz import members, read_arrays
from ojax.datasets.paths import DataError, check_regular, data_file
from ojax.fileio import open_regular
from ojax.tasks import TaskBlock, pad_bytes, pad_tasks
from ojax.validation import InputError, real_array


class PooledTasks(NamedTuple):
    """All points of every task, padded (NumPy arrays; task order as in the file)."""

    x: np.ndarray  # (T, n_max, d) float, rows of unit norm
    y: np.ndarray  # (T, n_max) float
    mask: np.ndarray  # (T, n_max) bool, True on real points
    num_test: np.ndarray  # (T,) int, held-out points of each task


def _loadmat(path) -> dict:
    import scipy.io

    try:
        with open_regular(path, what="data file") as f:
            return scipy.io.loadmat(f)
    except Exception as exc:  # scipy raises several types on a corrupt file
        raise DataError(f"{str(path)!r} is not a readable MATLAB .mat file ({exc})") from exc


def _unit_rows(x: np.ndarray, path, name: str) -> np.ndarray:
    """Each row of `x` divided by its L2 norm. A row whose plain norm overflows or underflows
    (entries near 1e300, or 1e-200) is first divided by its largest entry (the other rows are
    divided by their plain norm, to the bit as before)."""
    with np.errstate(over="ignore", under="ignore"):
        norms = np.linalg.norm(x, axis=1, keepdims=True)
    redo = (~np.isfinite(norms) | (norms < np.finfo(norms.dtype).tiny)).ravel()
    scale = np.max(np.abs(x[redo]), axis=1, keepdims=True)
    if np.any(scale == 0):
        raise DataError(f"{str(path)!r}: {name} has an all-zero row (cannot scale to unit norm)")
    with np.errstate(divide="ignore", invalid="ignore", under="ignore"):
        out = x / norms
    rows = x[redo] / scale  # largest entry 1: the norm neither overflows nor underflows
    out[redo] = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    return out


def load_schools(data_dir: str | os.PathLike | None = None, dtype=np.float32) -> PooledTasks:
    """Loads Schools (139 tasks, 22 to 251 students) with the spec's preprocessing.

    Args:
      data_dir: the data folder (default: :func:`ojax.datasets.resolve_data_dir`).
      dtype: float dtype of the arrays.

    Returns:
      A :class:`PooledTasks` with `d = 26` and `num_test = ceil(0.25 n_t)`.

    Raises:
      DataError: the file is missing or not the expected layout (cells `X`, `Y`).

    Examples:
      >>> from ojax.datasets import load_schools
      >>> data = load_schools()
      >>> print(data.x.shape, int(data.mask.sum()))
      (139, 251, 26) 15362
    """
    path = data_file("schools.mat", data_dir)
    mat = _loadmat(path)
    for key in ("X", "Y"):
        if key not in mat:
            raise DataError(f"{str(path)!r}: expected the cell arrays 'X' and 'Y', no {key!r}")
    cx, cy = np.ravel(mat["X"]), np.ravel(mat["Y"])
    if cx.dtype != object or cy.dtype != object or len(cx) != len(cy) or len(cx) == 0:
        raise DataError(f"{str(path)!r}: 'X' and 'Y' must be cell arrays of the same length")
    xs, ys = [], []
    for t, (xt, yt) in enumerate(zip(cx, cy)):
        xt, yt = np.asarray(xt, float), np.ravel(np.asarray(yt, float))
        if xt.ndim != 2 or xt.shape[1] != len(yt) or xt.shape[0] != cx[0].shape[0]:
            raise DataError(
                f"{str(path)!r}: task {t}: X must be (features, n_t) and Y (n_t, 1), "
                f"got {xt.shape} and {np.shape(cy[t])}"
            )
        if not (np.all(np.isfinite(xt)) and np.all(np.isfinite(yt))):
            raise DataError(f"{str(path)!r}: task {t} holds non-finite values")
        xs.append(_unit_rows(xt.T, path, f"X{{{t + 1}}}").astype(dtype))
        ys.append(yt.astype(dtype))
    x, y, mask = pad_tasks(xs, ys)
    num_test = np.array([math.ceil(0.25 * len(yt)) for yt in ys])
    return PooledTasks(x, y, mask, num_test)


def load_lenk(data_dir: str | os.PathLike | None = None, dtype=np.float32) -> PooledTasks:
    """Loads Lenk (180 people x 20 computers) with the spec's preprocessing.

    Args:
      data_dir: the data folder (default: :func:`ojax.datasets.resolve_data_dir`).
      dtype: float dtype of the arrays.

    Returns:
      A :class:`PooledTasks` with `d = 14` (the rating column dropped), 20 points and 4
      held-out points per task.

    Raises:
      DataError: the file is missing or not the expected layout.

    Examples:
      >>> from ojax.datasets import load_lenk
      >>> data = load_lenk()
      >>> print(data.x.shape, data.num_test[:3])
      (180, 20, 14) [4 4 4]
    """
    path = data_file("lenk.mat", data_dir)
    mat = _loadmat(path)
    for key in ("Traindata", "Testdata"):
        if key not in mat:
            raise DataError(f"{str(path)!r}: expected 'Traindata' and 'Testdata', no {key!r}")
    train = np.asarray(mat["Traindata"], float)
    test = np.asarray(mat["Testdata"], float)
    if train.ndim != 2 or test.ndim != 2 or train.shape[1] != 15 or test.shape[1] != 15:
        raise DataError(
            f"{str(path)!r}: 'Traindata' and 'Testdata' must have 15 columns, got "
            f"{train.shape} and {test.shape}"
        )
    if train.shape[0] % 16 or test.shape[0] % 4 or train.shape[0] // 16 != test.shape[0] // 4:
        raise DataError(
            f"{str(path)!r}: expected 16 training and 4 test rows per person, got "
            f"{train.shape[0]} and {test.shape[0]} rows"
        )
    if not (np.all(np.isfinite(train)) and np.all(np.isfinite(test))):
        raise DataError(f"{str(path)!r}: the data holds non-finite values")
    people = train.shape[0] // 16
    rows = np.concatenate(
        [train.reshape(people, 16, 15), test.reshape(people, 4, 15)], axis=1
    )  # (people, 20, 15)
    x = _unit_rows(rows[..., :14].reshape(-1, 14), path, "a row").reshape(people, 20, 14)
    y = rows[..., 14]
    return PooledTasks(
        x.astype(dtype), y.astype(dtype), np.ones((people, 20), bool), np.full(people, 4)
    )


def load_tasks_file(path: str | os.PathLike, dtype=np.float32) -> PooledTasks:
    """Tasks of one's own from an `.npz` file, for the real-data protocol of Denevi et al.

    The file holds the arrays

    * `x`: `(N, d)` floats, every point of every task (rows are scaled to unit norm, as the
      Schools and Lenk preprocessing does: the methods assume `||x|| <= 1`);
    * `y`: `(N,)` floats, the labels;
    * `task`: `(N,)` integers, the task of each row (tasks are numbered in order of their
      first row; a task's rows keep their order);
    * `num_test` (optional): `(T,)` integers, the held-out points of each task (default
      `ceil(0.25 n_t)`, Schools' split), from 1 to `n_t - 1`: every task has at least one
      online and one held-out point, so it needs at least 2 points.

    Each seed then shuffles the task order and splits every task at random, as for Schools
    (`ojax run denevi2020-schools --tasks FILE`).

    Examples:
      >>> import tempfile, numpy as np
      >>> path = tempfile.mkdtemp() + "/tasks.npz"
      >>> rng = np.random.default_rng(0)
      >>> np.savez(path, x=rng.normal(size=(9, 3)), y=rng.normal(size=9),
      ...          task=np.array([0, 0, 0, 0, 1, 1, 1, 1, 1]))
      >>> data = load_tasks_file(path)
      >>> print(data.x.shape, data.num_test.tolist())
      (2, 5, 3) [1, 2]
    """
    path = Path(path)
    check_regular(path, "tasks file")
    if not path.is_file():
        raise DataError(f"tasks file {str(path)!r} not found (expected an .npz file)")
    arrays = read_arrays(path, ("x", "y", "task", "num_test"))  # no other member is inflated
    for key in ("x", "y", "task"):
        if key not in arrays:
            found = members(path)
            raise DataError(f"{str(path)!r}: expected an array {key!r} (found {found})")
    x, y, task = arrays["x"], arrays["y"], arrays["task"]
    if x.ndim != 2 or y.shape != (x.shape[0],) or task.shape != (x.shape[0],) or not len(x):
        raise DataError(
            f"{str(path)!r}: expected x (N, d), y (N,) and task (N,) with N >= 1, got shapes "
            f"{x.shape}, {y.shape}, {task.shape}"
        )
    if not np.issubdtype(task.dtype, np.integer):
        raise DataError(f"{str(path)!r}: 'task' must hold integers, got dtype {task.dtype}")
    x = _checked(path, "x", x, np.float64, task)  # scaled to unit rows below, then cast
    y = _checked(path, "y", y, dtype, task)  # the labels the run uses: finite in its dtype
    ids, first, inverse = np.unique(task, return_index=True, return_inverse=True)
    rank = np.empty(len(ids), np.int64)
    rank[np.argsort(first)] = np.arange(len(ids))  # tasks in order of their first row
    row_task = rank[inverse.ravel()]
    ids = ids[np.argsort(first)]
    if len(ids) < 2 or x.shape[1] == 0:
        raise DataError(
            f"{str(path)!r}: expected at least 2 tasks (one to learn from, one unseen for the "
            f"meta-test) of at least 1 feature, got {len(ids)} task(s) of {x.shape[1]} feature(s)"
        )
    zero = ~np.any(x != 0, axis=1)
    if zero.any():
        row = int(np.argmax(zero))
        raise DataError(
            f"{str(path)!r}: x of task {task[row]} has an all-zero row (row {row} of the file: "
            "cannot scale it to unit norm)"
        )
    sizes = np.bincount(row_task, minlength=len(ids))
    try:  # before anything is padded
        pad_bytes(len(ids), int(sizes.max()), x.shape[1], dtype)
    except InputError as exc:
        raise DataError(f"{str(path)!r}: {exc}") from None
    rows = np.split(np.argsort(row_task, kind="stable"), np.cumsum(sizes)[:-1])
    unit = _unit_rows(x, path, "x").astype(dtype)  # row by row: as task by task
    xs, ys = [unit[r] for r in rows], [y[r] for r in rows]
    num_test = _num_test(path, arrays.get("num_test"), sizes, ids)
    padded_x, padded_y, mask = pad_tasks(xs, ys)
    return PooledTasks(padded_x, padded_y, mask, num_test.astype(np.int64))


def _num_test(path: Path, num_test: Any, sizes: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """The held-out points of each task (default `ceil(0.25 n_t)`), checked: 1 to `n_t - 1`."""
    if num_test is None:
        num_test = np.array([math.ceil(0.25 * n) for n in sizes])
    if np.any(sizes < 2):
        raise DataError(
            f"{str(path)!r}: every task needs at least 2 points (one online, one held out); "
            f"tasks {ids[sizes < 2].tolist()} have 1"
        )
    num_test = _counts(path, "num_test", num_test)
    if num_test.shape != sizes.shape or np.any(num_test < 1) or np.any(num_test >= sizes):
        raise DataError(
            f"{str(path)!r}: num_test must give each of the {len(sizes)} tasks 1 to n_t - 1 "
            f"held-out points, got {num_test.tolist()} for sizes {sizes.tolist()}"
        )
    return num_test


def _checked(path: Path, key: str, values: np.ndarray, dtype, task: np.ndarray) -> np.ndarray:
    """`values` (the file's array `key`) as real numbers in `dtype`, finite after the
    conversion; the message names the file, the array, the row and its task."""
    try:
        return real_array(f"{key!r}", values, dtype)
    except InputError as exc:
        where = ""
        if values.dtype.kind in "biuf":
            with np.errstate(over="ignore", invalid="ignore"):
                bad = ~np.isfinite(values.astype(dtype)).reshape(len(values), -1).all(axis=1)
            row = int(np.argmax(bad))
            where = f" (row {row} of the file, in task {task[row]})" if bad.any() else ""
        raise DataError(f"{str(path)!r}: {exc}{where}") from None


def _counts(path: Path, key: str, values: np.ndarray) -> np.ndarray:
    """`values` as integers: integer dtypes, or floats holding whole numbers (`1.7` is
    refused, not truncated)."""
    values = np.asarray(values)
    if values.dtype.kind in "iu":
        return values.astype(np.int64)
    whole = values.dtype.kind == "f" and np.all(np.isfinite(values))
    if whole and np.all(values == np.round(values)):
        return values.astype(np.int64)
    shown = values.ravel()[:6].tolist() if values.dtype.kind in "biufc" else values.dtype
    raise DataError(f"{str(path)!r}: {key!r} must hold whole numbers of points, got {shown}")


def split_tasks_core(
    key: Array, x: Array, y: Array, mask: Array, num_test: Array, num_train_max: int
) -> TaskBlock:
    """The traceable body of :func:`split_tasks` (no checks; vmap it over keys)."""
    k_order, k_split = jax.random.split(key)
    order = jax.random.permutation(k_order, x.shape[0])
    x, y, mask, num_test = x[order], y[order], mask[order], num_test[order]
    sizes = jnp.sum(mask, axis=1)
    # A random permutation of each task's real points (padding sorts last).
    scores = jnp.where(mask, jax.random.uniform(k_split, mask.shape), 2.0)
    perm = jnp.argsort(scores, axis=1)
    xs = jnp.take_along_axis(x, perm[..., None], axis=1)
    ys = jnp.take_along_axis(y, perm, axis=1)
    num_train = sizes - num_test
    index = jnp.arange(x.shape[1])
    mask_train = index[None, :] < num_train[:, None]
    mask_test = (index[None, :] >= num_train[:, None]) & (index[None, :] < sizes[:, None])
    return TaskBlock(
        xs[:, :num_train_max],
        ys[:, :num_train_max],
        mask_train[:, :num_train_max],
        xs,
        ys,
        mask_test,
    )


@functools.partial(jax.jit, static_argnames=("num_train_max",))
def _split(key, x, y, mask, num_test, num_train_max):
    return split_tasks_core(key, x, y, mask, num_test, num_train_max)


def split_tasks(key: Array, data: PooledTasks) -> TaskBlock:
    """One seed's random task order and random per-task online / held-out split.

    The online points of a task come in the order of the random split; the held-out block keeps
    the padded width `n_max` (its mask picks the held-out points).

    Args:
      key: a PRNG key.
      data: the pooled tasks of a loader.

    Returns:
      A :class:`~ojax.meta.TaskBlock`.
    """
    return _split(key, *map(jnp.asarray, data), num_train_max(data))


def num_train_max(data: PooledTasks) -> int:
    """The largest number of online points of a task (the padded width of `x_train`)."""
    return int(np.max(data.mask.sum(axis=1) - data.num_test))


__all__ = [
    "PooledTasks",
    "load_lenk",
    "load_schools",
    "load_tasks_file",
    "num_train_max",
    "split_tasks",
    "split_tasks_core",
]
