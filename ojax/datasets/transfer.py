"""Loaders and splits for online transfer learning (Zhao & Hoi 2010), with clear errors.

Files (see the data README): `usenet2.mat` / `newsgroup4.mat` (MATLAB `data`: column 0
the label, the rest int16 features; `ID_ALL` the shipped orders), `spambase.csv.gz` (CSV,
last column `type` in {spam, nonspam}), LIBSVM text files (`a1a.libsvm.gz`,
`a1a_t.libsvm.gz`, or one a user brings: `w7a` is read by name when in the data folder), and
the KEEL mushroom stand-in `mushrooms_keel.csv.gz` (categorical, one-hot encoded here).

Every loader returns `(features, labels)`: features `(n, d)` float64 (a scipy CSR matrix
for the sparse newsgroup4 and the LIBSVM files, else a NumPy array), labels `(n,)` float64 in
{-1, +1}. The integer `.mat` data is converted to floating point before any product or
scaling. Malformed files raise :class:`~ojax.datasets.DataError` naming the file, the line or
column and what was expected.

Scaling: :func:`minmax_rows` (the authors' toolbox: each row min-max scaled to [0, 1] across its
own features; rows with max == min left as they are) is the default; :func:`minmax_features`
scales each column instead.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from ojax.datasets.npz import members, read_arrays
from ojax.datasets.paths import DataError, check_regular, data_file, resolve_data_dir
from ojax.datasets.transfer_readers import (
    Features,
    load_libsvm,
    load_mat_stream,
    load_mushrooms_keel,
    load_spambase,
)
from ojax.fileio import open_regular
from ojax.sparse import issparse, scipy_sparse
from ojax.validation import InputError


class Split(NamedTuple):
    """A source / target split (features already scaled)."""

    source_x: Features  # (n_source, d) (first view only for a heterogeneous split)
    source_y: np.ndarray  # (n_source,) in {-1, +1}
    target_x: Features  # (n_target, d) all features
    target_y: np.ndarray  # (n_target,) in {-1, +1}
    num_source_features: int  # features the source sees (the first ones); d when homogeneous


# ------------------------------------------------------------------------------ scaling


def minmax_rows(x: Features) -> Features:
    """Each row min-max scaled to [0, 1] across its own features (max == min rows unchanged).

    Sparse rows whose minimum is 0 stay sparse (a row's implicit zeros count in its minimum).
    """
    if issparse(x):
        x = scipy_sparse().csr_matrix(x, dtype=np.float64)
        nnz = np.diff(x.indptr)
        full = nnz == x.shape[1]
        stored_max = np.asarray(x.max(axis=1).toarray()).ravel()
        stored_min = np.asarray(x.min(axis=1).toarray()).ravel()
        row_max = np.where(full, stored_max, np.maximum(stored_max, 0.0))
        row_min = np.where(full, stored_min, np.minimum(stored_min, 0.0))
        if np.all(row_min == 0.0):
            span = row_max - row_min
            scale = np.where(span > 0, 1.0 / np.where(span > 0, span, 1.0), 1.0)
            return scipy_sparse().csr_matrix(scipy_sparse().diags(scale) @ x)
        x = x.toarray()
    x = np.asarray(x, np.float64)
    low = x.min(axis=1, keepdims=True)
    span = x.max(axis=1, keepdims=True) - low
    ok = span > 0
    return np.where(ok, (x - low) / np.where(ok, span, 1.0), x)


def minmax_features(x: Features) -> np.ndarray:
    """Each feature (column) min-max scaled to [0, 1] (constant columns unchanged)."""
    x = x.toarray() if issparse(x) else np.asarray(x, np.float64)
    low = x.min(axis=0, keepdims=True)
    span = x.max(axis=0, keepdims=True) - low
    ok = span > 0
    return np.where(ok, (x - low) / np.where(ok, span, 1.0), x)


SCALINGS = ("rows", "features", "none")


def scale(x: Features, scaling: str = "rows") -> Features:
    """`"rows"` (default, the toolbox's), `"features"` or `"none"`."""
    if scaling not in SCALINGS:
        raise InputError(f"scaling must be one of {list(SCALINGS)}, got {scaling!r}")
    if scaling == "rows":
        return minmax_rows(x)
    if scaling == "features":
        return minmax_features(x)
    return x


# ------------------------------------------------------------------------------- splits

HOMOGENEOUS = {
    # name: (file, source size, target size, "sequential" | "random")
    "usenet2": ("usenet2.mat", 300, 1200, "sequential"),
    "newsgroup4": ("newsgroup4.mat", 400, 1200, "sequential"),
    "spambase": ("spambase.csv.gz", 2000, 2601, "random"),
}
"""The homogeneous splits: the paper's sizes for usenet2 / newsgroup4 (the first block is the
source); spambase (not in the paper's Table 2, which has w7a) uses Table 4's sizes, drawn at
random. ``w7a`` (the paper's sizes, random) is read only when its file is in the data folder
(:func:`has_w7a`)."""

HOMOGENEOUS["w7a"] = ("w7a", 10000, 14692, "random")

DRIFT_BLOCKS = {"usenet2": 300, "newsgroup4": 400}
"""The concept-drift streams: their rows come in blocks of this many, one concept per block (the
first block is the source); the orders ``ID_ALL`` shipped in their files shuffle rows within
blocks only, so a stream keeps its drift (:func:`shipped_orders`)."""

HETEROGENEOUS = {
    "a7a": (("a1a.libsvm.gz", "a1a_t.libsvm.gz"), 6100, 10000),
    "mushrooms": ("mushrooms_keel.csv.gz", 2084, 3560),
    "spambase": ("spambase.csv.gz", 2000, 2601),
    "w7a": ("w7a", 10000, 14692),
}
"""The heterogeneous splits (random): a7a's sizes drawn from the a1a + a1a.t pool (32561 rows);
the KEEL mushroom stand-in has 5644 rows, not 8124, so the paper's 3000 + 5124 is scaled to
2084 + 3560 (the same proportion); spambase exactly as the paper (2000 + 2601); w7a as the paper
(10000 + 14692) when the user brings the file."""

W7A_FILES = ("w7a", "w7a.libsvm", "w7a.libsvm.gz", "w7a.gz")  # LIBSVM w7a's possible names


def has_w7a(data_dir: Any = None) -> bool:
    """Whether the data folder holds LIBSVM's `w7a` under one of :data:`W7A_FILES`."""
    folder = resolve_data_dir(data_dir)
    return any((folder / name).is_file() for name in W7A_FILES)


def _w7a_file(data_dir: Any) -> Path:
    folder = resolve_data_dir(data_dir)
    for name in W7A_FILES:
        if (folder / name).is_file():
            return folder / name
    return data_file("w7a", data_dir)  # raises: not found (and not shipped with ojax)


def shipped_orders(name: str, data_dir: Any = None) -> np.ndarray:
    """The row orders `ID_ALL` shipped in a drift stream's `.mat` file, 0-based, `(P, n)`.

    In usenet2.mat and newsgroup4.mat: 20 permutations of the rows that shuffle within each
    block of :data:`DRIFT_BLOCKS` rows only (checked here), so the drift between blocks stays."""
    if name not in DRIFT_BLOCKS:
        raise InputError(f"dataset must be one of {list(DRIFT_BLOCKS)}, got {name!r}")
    path = data_file(f"{name}.mat", data_dir)
    try:  # ID_ALL alone: the compressed data is not inflated
        import scipy.io  # here: SciPy's import is paid only by a run that reads a .mat file

        with open_regular(path, what="data file") as f:
            mat = scipy.io.loadmat(f, variable_names=["ID_ALL"])
    except Exception as exc:
        raise DataError(f"{path}: cannot read as a MATLAB .mat file ({exc})") from exc
    if "ID_ALL" not in mat:
        raise DataError(
            f"{path}: expected a variable 'ID_ALL' (one 1-based row order per trial); without it "
            "run with --order uniform"
        )
    ids = np.asarray(mat["ID_ALL"]).astype(np.int64) - 1
    block = DRIFT_BLOCKS[name]
    ok = ids.ndim == 2 and ids.size > 0 and ids.shape[1] % block == 0
    if ok:
        blocks = np.sort(ids.reshape(len(ids), -1, block), axis=2)
        ok = bool(np.all(blocks == np.arange(ids.shape[1]).reshape(1, -1, block)))
    if not ok:
        raise DataError(
            f"{path}: 'ID_ALL' must hold 1-based permutations of the rows that shuffle within "
            f"blocks of {block} rows, got shape {ids.shape}"
        )
    return ids


def load_dataset(name: str, data_dir: Any = None) -> tuple[Features, np.ndarray]:
    """The raw features and labels of a named dataset (unscaled)."""
    if name in ("usenet2", "newsgroup4", "usenet1"):
        return load_mat_stream(data_file(f"{name}.mat", data_dir))
    if name == "spambase":
        return load_spambase(data_file("spambase.csv.gz", data_dir))
    if name in ("a7a", "adult"):
        a, ya = load_libsvm(data_file("a1a.libsvm.gz", data_dir), 123)
        b, yb = load_libsvm(data_file("a1a_t.libsvm.gz", data_dir), 123)
        return scipy_sparse().vstack([a, b]).tocsr(), np.concatenate([ya, yb])
    if name == "mushrooms":
        return load_mushrooms_keel(data_file("mushrooms_keel.csv.gz", data_dir))
    if name == "w7a":
        return load_libsvm(_w7a_file(data_dir), 300)
    raise InputError(
        "dataset must be one of ['usenet2', 'newsgroup4', 'spambase', 'a7a', 'mushrooms', 'w7a'], "
        f"got {name!r}"
    )


def _take(x: Features, rows: np.ndarray) -> Features:
    return x[rows] if not issparse(x) else x[rows].tocsr()


def _sizes(n: int, source: int, target: int, name: str) -> None:
    if source < 1 or target < 1 or source + target > n:
        raise InputError(
            f"{name}: source {source} + target {target} examples must fit in the {n} rows"
        )


def homogeneous_split(
    name: str,
    data_dir: Any = None,
    *,
    scaling: str = "rows",
    source_size: int | None = None,
    target_size: int | None = None,
    split_seed: int = 0,
) -> Split:
    """The source / target split of a homogeneous dataset (:data:`HOMOGENEOUS`).

    `source_size` / `target_size` override the sizes (e.g. a smaller target for a quick
    run); random splits use a NumPy generator seeded with `split_seed`.
    """
    if name not in HOMOGENEOUS:
        raise InputError(f"dataset must be one of {list(HOMOGENEOUS)}, got {name!r}")
    _, n_src, n_tgt, how = HOMOGENEOUS[name]
    n_src = n_src if source_size is None else source_size
    n_tgt = n_tgt if target_size is None else target_size
    x, y = load_dataset(name, data_dir)
    _sizes(x.shape[0], n_src, n_tgt, name)
    x = scale(x, scaling)
    if how == "sequential":
        src, tgt = np.arange(n_src), np.arange(n_src, n_src + n_tgt)
    else:
        rows = np.random.default_rng(split_seed).permutation(x.shape[0])
        src, tgt = rows[:n_src], rows[n_src : n_src + n_tgt]
    return Split(_take(x, src), y[src], _take(x, tgt), y[tgt], x.shape[1])


def view_split(x: Features, num_source_features: int) -> tuple[Features, Features]:
    """`(x[:, :k], x[:, k:])`: the source's view (the first `k` features) and the rest."""
    d = x.shape[1]
    if (
        isinstance(num_source_features, bool)
        or not isinstance(num_source_features, (int, np.integer))
        or not 1 <= num_source_features < d
    ):
        raise InputError(
            f"num_source_features must be an integer in [1, {d - 1}] for {d} features, got "
            f"{num_source_features!r}"
        )
    k = int(num_source_features)
    return x[:, :k], x[:, k:]


def heterogeneous_split(
    name: str,
    data_dir: Any = None,
    *,
    scaling: str = "rows",
    source_size: int | None = None,
    target_size: int | None = None,
    split_seed: int = 0,
) -> Split:
    """The heterogeneous split (:data:`HETEROGENEOUS`): the source sees the first half of the
    features (`d // 2`), the target all of them. Rows are scaled before the views are cut."""
    if name not in HETEROGENEOUS:
        raise InputError(f"dataset must be one of {list(HETEROGENEOUS)}, got {name!r}")
    _, n_src, n_tgt = HETEROGENEOUS[name]
    n_src = n_src if source_size is None else source_size
    n_tgt = n_tgt if target_size is None else target_size
    x, y = load_dataset(name, data_dir)
    _sizes(x.shape[0], n_src, n_tgt, name)
    x = scale(x, scaling)
    rows = np.random.default_rng(split_seed).permutation(x.shape[0])
    src, tgt = rows[:n_src], rows[n_src : n_src + n_tgt]
    k = x.shape[1] // 2
    source_view, _ = view_split(_take(x, src), k)
    return Split(source_view, y[src], _take(x, tgt), y[tgt], k)


class SplitFile(NamedTuple):
    """A split of one's own read from an `.npz` file (:func:`load_split_file`)."""

    dataset: str | None  # the shipped dataset it indexes, or the name of its own features
    source_order: np.ndarray  # (S,) int64, 0-based dataset rows in the order h learns them
    target_orders: np.ndarray  # (P, T) int64, 0-based dataset rows, one target stream per row
    x: np.ndarray | None = None  # (N, d) float64, the file's own features (None: `dataset`'s)
    y: np.ndarray | None = None  # (N,) float64 in {-1, +1}, the labels of `x`
    num_source_features: int | None = None  # heterogeneous: the source's view (default d // 2)


def _split_array(path: Path, archive: Any, key: str, ndims: tuple[int, ...]) -> np.ndarray:
    if key not in archive:
        raise DataError(f"{path}: expected an array {key!r} (keys found: {members(path)})")
    arr = np.asarray(archive[key])
    if arr.ndim not in ndims or arr.size == 0 or not np.issubdtype(arr.dtype, np.integer):
        raise DataError(
            f"{path}: {key!r} must be a non-empty integer array with {' or '.join(map(str, ndims))}"
            f" axes of 0-based row indices, got dtype {arr.dtype} and shape {arr.shape}"
        )
    return arr.astype(np.int64)


def load_split_file(path: str | os.PathLike) -> SplitFile:
    """A split of one's own, as an `.npz` file with the arrays

    * `source_order`: `(S,)` integers, the 0-based rows of the dataset (in the file's row
      order, before any split) that form the source, in the order the source classifier learns
      them;
    * `target_orders`: `(P, T)` integers (or `(T,)` for one stream), 0-based rows of the
      dataset, one target stream per row (the target pool is the set of rows they visit);
    * the data the rows index, one of: `dataset`, a string naming a shipped dataset
      (`"usenet2"`); or the file's own features `x` `(N, d)` (finite numbers) and labels
      `y` `(N,)` in `{-1, +1}` (`dataset` then only names them; default `"own"`);
    * `num_source_features` (optional, own features of a heterogeneous split): the source's
      view, the first `k` features (default `d // 2`); the target sees all `d`.

    A file with neither `dataset` nor `x` and `y` is refused (never a default dataset).
    MATLAB's 1-based indices (the authors' toolbox's `ID_ALL`) must be converted with `- 1`;
    indices that count rows of the target block only must be offset by the source size.

    Examples:
      >>> import tempfile, numpy as np
      >>> path = tempfile.mkdtemp() + "/split.npz"
      >>> x, y = np.eye(5), np.array([1.0, -1.0, 1.0, -1.0, 1.0])
      >>> np.savez(path, source_order=np.arange(3), target_orders=np.array([[4, 3], [3, 4]]),
      ...          x=x, y=y)
      >>> split = load_split_file(path)
      >>> print(split.dataset, split.target_orders.tolist(), split.x.shape)
      own [[4, 3], [3, 4]] (5, 5)
    """
    path = Path(path)
    check_regular(path, "split file")
    if not path.is_file():
        raise DataError(f"split file {str(path)!r} not found (expected an .npz file)")
    keys = ("source_order", "target_orders", "dataset", "x", "y", "num_source_features")
    archive = read_arrays(path, keys)
    source = _split_array(path, archive, "source_order", (1,))
    target = np.atleast_2d(_split_array(path, archive, "target_orders", (1, 2)))
    dataset = None
    if "dataset" in archive:
        name = np.asarray(archive["dataset"])
        if name.ndim != 0 or name.dtype.kind != "U":
            raise DataError(f"{path}: 'dataset' must be one string, got {name!r}")
        dataset = str(name)
    if "x" not in archive and "y" not in archive:
        if dataset is None:
            raise DataError(
                f"{path}: a split file needs the data its rows index: 'dataset' (a shipped "
                f"dataset's name, e.g. 'usenet2') or its own features 'x' (N, d) and labels 'y' "
                f"(N,) in {{-1, +1}} (keys found: {members(path)})"
            )
        return SplitFile(dataset, source, target)
    x, y, k = _own_features(path, archive)
    return SplitFile(dataset or "own", source, target, x, y, k)


def _own_features(path: Path, archive: Any) -> tuple[np.ndarray, np.ndarray, int | None]:
    """`(x, y, num_source_features)` of a split file with its own features, checked."""
    for key in ("x", "y"):
        if key not in archive:
            raise DataError(f"{path}: own features need both 'x' and 'y', got no {key!r}")
    x, y = np.asarray(archive["x"]), np.asarray(archive["y"])
    if x.ndim != 2 or x.shape[0] == 0 or x.dtype.kind not in "iuf":
        raise DataError(f"{path}: 'x' must be an (N, d) numeric array, got {x.dtype} {x.shape}")
    if y.shape != (x.shape[0],) or y.dtype.kind not in "iuf":
        raise DataError(f"{path}: 'y' must be ({x.shape[0]},) numbers, got {y.dtype} {y.shape}")
    x, y = x.astype(np.float64), y.astype(np.float64)
    if not np.isfinite(x).all():
        raise DataError(f"{path}: 'x' must be finite, got NaN or inf")
    if not np.isin(y, (-1.0, 1.0)).all():
        raise DataError(f"{path}: 'y' must take only the values {{-1, +1}}, got {np.unique(y)}")
    k = None
    if "num_source_features" in archive:
        value = np.asarray(archive["num_source_features"])
        if value.ndim != 0 or value.dtype.kind not in "iu":
            raise DataError(f"{path}: 'num_source_features' must be one integer, got {value!r}")
        k = int(value)
    return x, y, k


def _check_rows(name: str, rows: np.ndarray, n: int) -> None:
    if rows.min() < 0 or rows.max() >= n:
        hint = " (1-based MATLAB indices? subtract 1)" if rows.max() == n else ""
        raise InputError(
            f"{name} must hold 0-based rows in [0, {n - 1}] of the {n} examples, got values in "
            f"[{rows.min()}, {rows.max()}]{hint}"
        )


def split_from_orders(
    name: str,
    source_order: Any,
    target_orders: Any,
    data_dir: Any = None,
    *,
    heterogeneous: bool = False,
    scaling: str = "rows",
) -> tuple[Split, np.ndarray]:
    """The :class:`Split` of a named dataset given by row orders (0-based rows of the file):
    :func:`split_from_arrays` on its features and labels."""
    _check_orders(source_order, target_orders)
    x, y = load_dataset(name, data_dir)
    return split_from_arrays(
        x, y, source_order, target_orders, heterogeneous=heterogeneous, scaling=scaling
    )


def _check_orders(source_order: Any, target_orders: Any) -> None:
    for key, arr in (("source_order", source_order), ("target_orders", target_orders)):
        arr = np.asarray(arr)
        if arr.size == 0 or not np.issubdtype(arr.dtype, np.integer):
            raise InputError(f"{key} must be non-empty integers, got dtype {arr.dtype}")


def split_from_arrays(
    x: Any,
    y: Any,
    source_order: Any,
    target_orders: Any,
    *,
    heterogeneous: bool = False,
    scaling: str = "rows",
    num_source_features: int | None = None,
) -> tuple[Split, np.ndarray]:
    """The :class:`Split` of features `x` `(N, d)` and labels `y` `(N,)` given by row
    orders (0-based rows of `x`).

    The features are scaled (`scaling`, as the shipped datasets); the source is the rows
    `source_order` in that order (its first `num_source_features` features, default
    `d // 2`, when `heterogeneous`: the source's view; the target sees all `d`); the
    target pool is the distinct rows of `target_orders` in increasing order. Returns the
    split and the target orders as `(P, T)` int32 positions in that pool.
    """
    _check_orders(source_order, target_orders)
    source_order = np.asarray(source_order)
    target_orders = np.atleast_2d(np.asarray(target_orders))
    _check_rows("source_order", source_order, x.shape[0])
    _check_rows("target_orders", target_orders, x.shape[0])
    x = scale(x, scaling)
    pool = np.unique(target_orders)
    orders = np.searchsorted(pool, target_orders).astype(np.int32)
    source_x = _take(x, source_order)
    k = x.shape[1]
    if heterogeneous:
        k = x.shape[1] // 2 if num_source_features is None else num_source_features
        source_x, _ = view_split(source_x, k)
    return Split(source_x, y[source_order], _take(x, pool), y[pool], k), orders


__all__ = [
    "HETEROGENEOUS",
    "DRIFT_BLOCKS",
    "HOMOGENEOUS",
    "SCALINGS",
    "W7A_FILES",
    "Split",
    "SplitFile",
    "has_w7a",
    "heterogeneous_split",
    "homogeneous_split",
    "load_dataset",
    "load_libsvm",
    "load_mat_stream",
    "load_mushrooms_keel",
    "load_spambase",
    "load_split_file",
    "minmax_features",
    "minmax_rows",
    "scale",
    "shipped_orders",
    "split_from_arrays",
    "split_from_orders",
    "view_split",
]
