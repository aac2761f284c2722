"""One's own data as a stream: :func:`read_stream` reads a LIBSVM, CSV, `.npz` or Vowpal Wabbit
text file (gzipped or not) into `(xs, ys)` that :func:`ojax.run` and `ojax sweep --data` take,
and two transforms work on what it returns: :func:`running_standardize` and
:func:`hash_features`.

Rows stay sparse where the file is (LIBSVM, Vowpal Wabbit: a SciPy CSR matrix, which
:func:`ojax.run` takes as it is) and dense otherwise (CSV, `.npz`: a float64 array). Labels are
mapped to -1 / +1 for classification (`labels="binary"`: exactly two distinct values, the
smaller one -1; anything else is refused, naming the values found) or kept as numbers
(`labels="real"`, regression). A missing or malformed file is a :class:`DataError` naming the
file, the line and what was expected.
"""

from __future__ import annotations

import csv
import os
import zlib
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from ojax.datasets.npz import read_arrays
from ojax.datasets.paths import DataError
from ojax.datasets.transfer_readers import open_text, read_libsvm
from ojax.sparse import issparse, scipy_sparse
from ojax.validation import InputError, check_choice, check_int

FORMATS = {
    "libsvm": (".libsvm", ".svm", ".svmlight"),
    "csv": (".csv",),
    "npz": (".npz",),
    "vw": (".vw",),
}
"""Format -> the file suffixes it is told by (a `.gz` after them is read through gzip)."""

LABELS = ("binary", "real")
LABEL_COLUMNS = ("label", "y", "target", "class")
"""The names a CSV header's label column is found by (else the last column is the label)."""


class Stream(NamedTuple):
    """A stream read from a file.

    Attributes:
      xs: `(n, d)` features: a float64 array, or a SciPy CSR matrix (sparse files).
      ys: `(n,)` float64 labels: -1 / +1 (`labels="binary"`) or as in the file.
      names: the feature names (a CSV header, Vowpal Wabbit's `namespace^feature`), or `None`.
      classes: for binary labels, the file's two label values mapped to -1 and +1.
      source: the file's name.
    """

    xs: Any
    ys: np.ndarray
    names: tuple[str, ...] | None = None
    classes: tuple[float, float] | None = None
    source: str | None = None


def file_format(path: str | os.PathLike) -> str:
    """The format of `path` told by its suffix (`a1a.libsvm.gz` -> `"libsvm"`)."""
    name = str(path).lower().removesuffix(".gz")
    for fmt, suffixes in FORMATS.items():
        if name.endswith(suffixes):
            return fmt
    known = ", ".join(s for suffixes in FORMATS.values() for s in suffixes)
    raise InputError(
        f"format: cannot tell the format of {str(path)!r} from its name (known suffixes: "
        f"{known}, each optionally .gz); pass format= one of {list(FORMATS)}"
    )


def _binary(path: Path, raw: np.ndarray) -> tuple[np.ndarray, tuple[float, float]]:
    values = np.unique(raw)
    if len(values) != 2:
        shown = ", ".join(f"{v:g}" for v in values[:6]) + (", ..." if len(values) > 6 else "")
        raise DataError(
            f"{path}: labels='binary' needs exactly two distinct labels, found {len(values)} "
            f"({shown}); map a multi-class file to two classes first, or pass labels='real' "
            "to keep them as numbers (regression)"
        )
    return np.where(raw == values[1], 1.0, -1.0), (float(values[0]), float(values[1]))


def _number(path: Path, line: int, column: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = np.nan
    if not np.isfinite(value):
        raise DataError(f"{path}, line {line}, column {column}: expected a number, got {text!r}")
    return value


def _read_csv(path: Path, label_column: str | int | None) -> tuple[np.ndarray, np.ndarray, Any]:
    with open_text(path) as f:
        rows = [row for row in csv.reader(f) if row]
    if not rows:
        raise DataError(f"{path}: no rows (expected CSV lines of numbers, a label among them)")
    try:
        [float(v) for v in rows[0]]
        header = None
    except ValueError:
        header, rows = [h.strip() for h in rows[0]], rows[1:]
    width = len(header or rows[0])
    if label_column is None:
        found = [i for i, h in enumerate(header or []) if h.lower() in LABEL_COLUMNS]
        label = found[0] if found else width - 1
    elif isinstance(label_column, str):
        if header is None or label_column not in header:
            raise DataError(f"{path}: no column named {label_column!r} (header: {header})")
        label = header.index(label_column)
    else:
        label = check_int("label_column", label_column, -width, width - 1) % width
    table = np.empty((len(rows), width))
    for i, row in enumerate(rows):
        line = i + (2 if header else 1)
        if len(row) != width:
            raise DataError(f"{path}, line {line}: expected {width} columns, got {len(row)}")
        table[i] = [_number(path, line, header[j] if header else str(j + 1), v)
                    for j, v in enumerate(row)]  # fmt: skip
    names = None if header is None else tuple(h for j, h in enumerate(header) if j != label)
    return np.delete(table, label, axis=1), table[:, label], names


def _read_vw(path: Path) -> tuple[Any, np.ndarray, tuple[str, ...]]:
    """`label [importance] ['tag]|namespace feature[:value] ...`; columns in order of first
    appearance of each `namespace^feature` (importance and tag are not used)."""
    columns: dict[str, int] = {}
    labels: list[float] = []
    indptr, indices, values = [0], [], []  # type: ignore[var-annotated]
    with open_text(path) as f:
        for line_no, line in enumerate(f, start=1):
            if not line.strip():
                continue
            head, *sections = line.rstrip("\n").split("|")
            parts = head.split()
            if not parts or not sections:
                raise DataError(
                    f"{path}, line {line_no}: expected 'label |namespace feature[:value] ...'"
                )
            labels.append(_number(path, line_no, "label", parts[0]))
            row: dict[int, float] = {}
            for section in sections:
                namespace, *features = section.split(" ")
                for item in filter(None, features):
                    name, _, value = item.partition(":")
                    column = columns.setdefault(f"{namespace}^{name}", len(columns))
                    row[column] = row.get(column, 0.0) + (
                        _number(path, line_no, name, value) if value else 1.0
                    )
            indices.extend(row)
            values.extend(row.values())
            indptr.append(len(indices))
    if not labels:
        raise DataError(f"{path}: no examples (expected Vowpal Wabbit text lines)")
    xs = scipy_sparse().csr_matrix(
        (np.asarray(values, np.float64), np.asarray(indices, np.int64), np.asarray(indptr)),
        shape=(len(labels), len(columns)),
    )
    return xs, np.asarray(labels), tuple(columns)


def read_stream(
    path: str | os.PathLike,
    format: str | None = None,
    *,
    labels: str = "binary",
    label_column: str | int | None = None,
) -> Stream:
    """Reads a stream of examples from a file (see the module's docstring).

    Args:
      path: a LIBSVM (`label index:value ...`, 1-based indices), CSV (numbers; a header
        line optional), `.npz` (arrays `x` `(n, d)` and `y` `(n,)`) or Vowpal Wabbit text
        (`label |namespace feature[:value] ...`) file, optionally gzipped.
      format: one of :data:`FORMATS` (default: told by the file's suffix).
      labels: `"binary"`: two distinct labels mapped to -1 (the smaller) and +1;
        `"real"`: the labels as numbers.
      label_column: CSV only: the label column's name or index (default: a column named
        label, y, target or class, else the last one).

    Returns:
      A :class:`Stream`: `xs` (a CSR matrix for LIBSVM and Vowpal Wabbit, else an array)
      and `ys` as above.

    Raises:
      DataError: a missing file, a malformed line (named), labels that are not two
        classes under `labels="binary"`.
    """
    path = Path(path)
    if format is not None:
        check_choice("format", format, list(FORMATS))
    fmt = file_format(path) if format is None else format
    check_choice("labels", labels, list(LABELS))
    if label_column is not None and fmt != "csv":
        raise InputError(f"label_column is for CSV files, not {fmt} ({str(path)!r})")
    if not path.is_file():
        raise DataError(f"data file {str(path)!r} not found (expected a {fmt} file)")
    names = None
    if fmt == "libsvm":
        xs, ys = read_libsvm(path)
    elif fmt == "csv":
        xs, ys, names = _read_csv(path, label_column)
    elif fmt == "vw":
        xs, ys, names = _read_vw(path)
    else:
        arrays = read_arrays(path, ("x", "y"))
        if set(arrays) != {"x", "y"}:
            raise DataError(f"{path}: expected arrays 'x' and 'y', found {sorted(arrays)}")
        xs, ys = (np.asarray(arrays[k], np.float64) for k in ("x", "y"))
        if xs.ndim != 2 or ys.shape != (len(xs),):
            raise DataError(f"{path}: expected x (n, d), y (n,), got {xs.shape}, {ys.shape}")
        if not (np.isfinite(xs).all() and np.isfinite(ys).all()):
            raise DataError(f"{path}: x or y has values that are not finite")
    if labels == "real":
        return Stream(xs, np.asarray(ys, np.float64), names, None, path.name)
    ys, classes = _binary(path, np.asarray(ys, np.float64))
    return Stream(xs, ys, names, classes, path.name)


def running_standardize(xs: Any, eps: float = 1e-12) -> np.ndarray:
    """Each row standardized by the mean and standard deviation of the rows up to it
    (itself included, as river's `StandardScaler` learns then transforms): no row sees a
    later one. `z_{t,j} = (x_{t,j} - mean_{<=t,j}) / std_{<=t,j}`, and 0 where that standard
    deviation is below `eps` (the first row, a constant column). Dense float64 out (a sparse
    input is densified: centring makes it dense)."""
    x = np.asarray(xs.toarray() if issparse(xs) else xs, np.float64)
    if x.ndim != 2 or not len(x):
        raise InputError(f"xs must have shape (n, d) with n >= 1, got {x.shape}")
    shifted = x - x[0]  # sums of shifted values keep the variance accurate
    count = np.arange(1, len(x) + 1, dtype=np.float64)[:, None]
    mean = np.cumsum(shifted, axis=0) / count
    var = np.maximum(np.cumsum(shifted**2, axis=0) / count - mean**2, 0.0)
    std = np.sqrt(var)
    return np.where(std > eps, (shifted - mean) / np.where(std > eps, std, 1.0), 0.0)


def hash_features(xs: Any, bits: int, names: Any = None) -> Any:
    """Feature hashing: column `j` (named `names[j]`, else `str(j)`) is added, with a sign
    `+-1`, to bucket `h(name) mod 2**bits` (`h`: CRC-32; the sign: the hash's top bit), so a
    stream of any width (a vocabulary growing with the data) has `2**bits` columns. Sparse in,
    sparse out; dense in, dense out."""
    check_int("bits", bits, 1, 30)
    width = xs.shape[1]
    keys = [str(j) for j in range(width)] if names is None else [str(n) for n in names]
    if len(keys) != width:
        raise InputError(f"names must name the {width} columns of xs, got {len(keys)} names")
    codes = np.asarray([zlib.crc32(k.encode()) for k in keys], np.int64)
    signs = np.where(codes >> 31, -1.0, 1.0)
    buckets = codes % (1 << bits)
    projection = scipy_sparse().csr_matrix(
        (signs, (np.arange(width), buckets)), shape=(width, 1 << bits)
    )
    if issparse(xs):
        return (scipy_sparse().csr_matrix(xs) @ projection).tocsr()
    return np.asarray(projection.T @ np.asarray(xs, np.float64).T).T


__all__ = [
    "FORMATS",
    "LABELS",
    "Stream",
    "file_format",
    "hash_features",
    "read_stream",
    "running_standardize",
]
