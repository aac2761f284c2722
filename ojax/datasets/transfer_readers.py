"""The file readers of the transfer datasets (see :mod:`ojax.datasets.transfer`, which
re-exports them), with clear errors.

Files (see the data README): `usenet2.mat` / `newsgroup4.mat` (MATLAB `data`: column 0
the label, the rest int16 features; `ID_ALL` the shipped orders), `spambase.csv.gz` (CSV,
last column `type` in {spam, nonspam}), LIBSVM text files, and the KEEL mushroom stand-in
`mushrooms_keel.csv.gz` (categorical, one-hot encoded here). Every reader returns `(features,
labels)`: features `(n, d)` float64 (a scipy CSR matrix for the sparse newsgroup4 and the
LIBSVM files, else a NumPy array), labels `(n,)` float64 in {-1, +1}. Malformed files raise
:class:`~ojax.datasets.DataError` naming the file, the line or column and what was expected.
"""

from __future__ import annotations

import contextlib
import csv
import functools
import gzip
import io
import os
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from ojax.datasets.paths import DataError
from ojax.fileio import open_regular
from ojax.sparse import issparse, scipy_sparse

Features = Any  # np.ndarray or scipy.sparse.csr_matrix


@contextlib.contextmanager
def open_text(path: Path) -> Iterator[Any]:
    """The text of `path` (gunzipped for `.gz`); a corrupt or truncated file (a bad gzip
    stream, a file cut short, bytes that are not UTF-8) is a :class:`DataError` naming it."""
    try:
        with contextlib.ExitStack() as stack:
            raw: Any = stack.enter_context(open_regular(path, what="data file"))
            if str(path).endswith(".gz"):
                raw = stack.enter_context(gzip.GzipFile(fileobj=raw, mode="rb"))
            handle = stack.enter_context(io.TextIOWrapper(raw, encoding="utf-8", errors="strict"))
            yield handle
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as exc:
        kind = "a gzip-compressed text file" if str(path).endswith(".gz") else "a UTF-8 text file"
        raise DataError(f"{path}: cannot read it as {kind} ({type(exc).__name__}: {exc})") from None


def _check_labels(path: Any, labels: np.ndarray) -> np.ndarray:
    labels = np.asarray(labels, np.float64)
    bad = ~np.isin(labels, (-1.0, 1.0))
    if bad.any():
        i = int(np.nonzero(bad)[0][0])
        raise DataError(
            f"{path}: labels must be -1 or +1, got {labels[i]!r} at row {i} "
            f"({int(bad.sum())} bad label(s))"
        )
    return labels


def _check_finite(path: Any, x: Features) -> None:
    data = x.data if issparse(x) else np.asarray(x)
    if not np.isfinite(data).all():
        raise DataError(f"{path}: features must be finite numbers, found NaN or Inf")


def load_mat_stream(
    path: str | os.PathLike, *, sparse: bool | None = None
) -> tuple[Features, np.ndarray]:
    """A `.mat` concept-drift stream (`data`: label in column 0, then the features).

    The int16 matrix is converted to float64 (as CSR when `sparse` or when fewer than 10% of
    the entries are non-zero and `sparse` is None: newsgroup4's 1600 x 62061 is 0.15% dense).
    A file read once in a process is not read again (the arrays are kept, copied out).
    """
    path = Path(path)
    if not path.is_file():
        raise DataError(f"data file {str(path)!r} not found (expected a MATLAB .mat stream)")
    features, labels = _read_mat(*_file_key(path), sparse)
    return features.copy(), labels.copy()


def _file_key(path: Path) -> tuple[str, int, int]:
    stat = path.stat()
    return str(path.resolve()), stat.st_mtime_ns, stat.st_size


@functools.lru_cache(maxsize=4)
def _read_mat(
    path: str, mtime_ns: int, size: int, sparse: bool | None
) -> tuple[Features, np.ndarray]:
    """`(features, labels)` of a `.mat` stream, kept per file version (newsgroup4's
    compressed `data` takes a second to inflate)."""
    del mtime_ns, size  # in the cache key only: a changed file is read again
    try:
        import scipy.io  # here: SciPy's import is paid only by a run that reads a .mat file

        with open_regular(path, what="data file") as f:
            mat = scipy.io.loadmat(f, variable_names=["data"])
    except Exception as exc:
        raise DataError(f"{path}: cannot read as a MATLAB .mat file ({exc})") from exc
    if "data" not in mat:
        raise DataError(f"{path}: expected a variable 'data' (label column then features)")
    data = mat.pop("data")
    if data.ndim != 2 or data.shape[1] < 2 or not np.issubdtype(data.dtype, np.number):
        raise DataError(
            f"{path}: 'data' must be a numeric (n, 1 + d) matrix, got shape {data.shape} "
            f"dtype {data.dtype}"
        )
    labels = _check_labels(path, data[:, 0])
    raw = data[:, 1:]
    if sparse is None:
        sparse = np.count_nonzero(raw) < 0.1 * raw.size
    features = _sparse_rows(raw) if sparse else raw.astype(np.float64)
    del data, raw
    _check_finite(path, features)
    return features, labels


def _sparse_rows(raw: np.ndarray) -> Features:
    """`raw` as float64 CSR, the same matrix as `scipy.sparse.csr_matrix(raw, dtype=np.float64)`
    without its dense float64 copy (MATLAB's column-major array is scanned in its own order)."""
    # raw.T is row-major when raw is column-major: a fast scan
    columns = scipy_sparse().csr_matrix(raw.T)
    out = columns.T.tocsr().astype(np.float64)
    out.sort_indices()
    return out


def load_spambase(path: str | os.PathLike) -> tuple[np.ndarray, np.ndarray]:
    """UCI Spambase CSV: 57 numeric columns then `type` (spam -> +1, nonspam -> -1). A file
    read once in a process is not parsed again (the arrays are kept, copied out)."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"data file {str(path)!r} not found (expected the Spambase CSV)")
    features, labels = _read_spambase(*_file_key(path))
    return features.copy(), labels.copy()


@functools.lru_cache(maxsize=2)
def _read_spambase(path_name: str, mtime_ns: int, size: int) -> tuple[np.ndarray, np.ndarray]:
    del mtime_ns, size  # in the cache key only: a changed file is read again
    path = Path(path_name)
    rows, labels = [], []
    with open_text(path) as f:
        reader = csv.reader(f)
        header = next(reader, None)
        if header is None:
            raise DataError(f"{path}: empty file (expected a header and 58 columns)")
        width = len(header)
        for line, row in enumerate(reader, start=2):
            if len(row) != width:
                raise DataError(f"{path}, line {line}: expected {width} columns, got {len(row)}")
            label = row[-1].strip()
            if label not in ("spam", "nonspam"):
                raise DataError(
                    f"{path}, line {line}: the last column must be 'spam' or 'nonspam', "
                    f"got {label!r}"
                )
            try:
                rows.append([float(v) for v in row[:-1]])
            except ValueError as exc:
                raise DataError(f"{path}, line {line}: non-numeric feature ({exc})") from exc
            labels.append(1.0 if label == "spam" else -1.0)
    if not rows:
        raise DataError(f"{path}: no data rows")
    features = np.asarray(rows, np.float64)
    _check_finite(path, features)
    return features, np.asarray(labels)


def load_libsvm(
    path: str | os.PathLike, num_features: int | None = None
) -> tuple[Features, np.ndarray]:
    """A LIBSVM text file (`label index:value ...`, 1-based indices) as CSR and +-1 labels.

    Labels `+1` / `1` / `-1` are accepted (and `0` / `2` of two-class files are NOT:
    they raise, so a multi-class file is not silently read as binary; the labels as they are
    come from :func:`read_libsvm`, or mapped to -1 / +1 from :func:`ojax.datasets.read_stream`).

    Args:
      num_features: the dimension (default: the largest index in the file); larger indices
        raise.
    """
    features, labels = read_libsvm(path, num_features)
    return features, _check_labels(path, labels)


MAX_FEATURES = 2**31 - 1
"""The largest 1-based feature index of a LIBSVM file (JAX indexes arrays with int32)."""


def read_libsvm(
    path: str | os.PathLike, num_features: int | None = None
) -> tuple[Features, np.ndarray]:
    """A LIBSVM text file as CSR features and its labels as they are (float64); as
    :func:`load_libsvm` otherwise."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"data file {str(path)!r} not found (expected a LIBSVM text file)")
    labels, indptr, indices, values = [], [0], [], []
    with open_text(path) as f:
        try:
            for line_no, line in enumerate(f, start=1):
                line = line.split("#", 1)[0].strip()
                if not line:
                    continue
                parts = line.split()
                try:
                    labels.append(float(parts[0]))
                except ValueError as exc:
                    raise DataError(
                        f"{path}, line {line_no}: expected a numeric label first, got {parts[0]!r}"
                    ) from exc
                last = 0
                for item in parts[1:]:
                    key, sep, val = item.partition(":")
                    try:
                        index, value = int(key), float(val)
                    except ValueError:
                        index, value = -1, 0.0
                    if not sep or index < 1:
                        raise DataError(
                            f"{path}, line {line_no}: expected 'index:value' with a 1-based "
                            f"integer index, got {item!r}"
                        )
                    if index > MAX_FEATURES:
                        raise DataError(
                            f"{path}, line {line_no}: feature index {index} is above "
                            f"{MAX_FEATURES} (2**31 - 1, the most columns a JAX array indexes); "
                            "hash the features into fewer columns first "
                            "(ojax.datasets.hash_features)"
                        )
                    if index <= last:
                        raise DataError(
                            f"{path}, line {line_no}: feature indices must increase, got "
                            f"{index} after {last}"
                        )
                    last = index
                    indices.append(index - 1)
                    values.append(value)
                indptr.append(len(indices))
        except UnicodeDecodeError as exc:
            raise DataError(f"{path}: not a text file ({exc})") from exc
    if not labels:
        raise DataError(f"{path}: no examples (expected LIBSVM lines 'label index:value ...')")
    width = (max(indices) + 1) if indices else 0
    if num_features is not None:
        if width > num_features:
            raise DataError(f"{path}: feature index {width} exceeds num_features={num_features}")
        width = num_features
    features = scipy_sparse().csr_matrix(
        (np.asarray(values, np.float64), np.asarray(indices, np.int64), np.asarray(indptr)),
        shape=(len(labels), width),
    )
    _check_finite(path, features)
    return features, np.asarray(labels, np.float64)


def load_mushrooms_keel(path: str | os.PathLike) -> tuple[np.ndarray, np.ndarray]:
    """The KEEL mushroom file (22 categorical columns and the class e/p), one-hot encoded.

    Each column's categories are sorted and become 0/1 features, column after column (the
    LIBSVM `mushrooms` encoding); class `e` (edible) -> +1, `p` -> -1.
    """
    path = Path(path)
    if not path.is_file():
        raise DataError(f"data file {str(path)!r} not found (expected the KEEL mushroom CSV)")
    with open_text(path) as f:
        rows = [row for row in csv.reader(f) if row]
    if not rows:
        raise DataError(f"{path}: empty file (expected 23 comma-separated categorical columns)")
    width = len(rows[0])
    for line, row in enumerate(rows, start=1):
        if len(row) != width:
            raise DataError(f"{path}, line {line}: expected {width} columns, got {len(row)}")
        if row[-1].strip() not in ("e", "p"):
            raise DataError(
                f"{path}, line {line}: the last column must be 'e' or 'p', got {row[-1]!r}"
            )
    table = np.asarray([[v.strip() for v in row] for row in rows])
    blocks = []
    for j in range(width - 1):
        categories = np.unique(table[:, j])
        blocks.append((table[:, j][:, None] == categories[None, :]).astype(np.float64))
    labels = np.where(table[:, -1] == "e", 1.0, -1.0)
    return np.concatenate(blocks, axis=1), labels


__all__ = [
    "Features",
    "load_libsvm",
    "load_mat_stream",
    "load_mushrooms_keel",
    "load_spambase",
    "open_text",
    "read_libsvm",
]
