"""Multiclass data sets as contextual bandit problems (the supervised-to-bandit conversion of
:mod:`ojax.contextual.supervised`).

:func:`load_classes` reads a named data set as `(X, y)` with labels `0..K-1`: the shipped
binary ones through :func:`ojax.datasets.transfer.load_dataset` (`spambase`, `mushrooms`,
`usenet1`, `usenet2`), and scikit-learn's bundled ones (`iris`, `wine`, `digits`,
`breast_cancer`) when scikit-learn is installed. :func:`bandit_problem` turns any `(X, y)`, a
user's own included, into :class:`~ojax.contextual.ContextualData`: features standardized,
a constant feature appended, rows scaled into the unit ball; costs `1[a != y]` or a cost per
class.
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np

from ojax.contextual.supervised import (
    ContextualData,
    class_costs,
    contextual_data,
    cost_matrix_costs,
)
from ojax.datasets.paths import DataError
from ojax.datasets.transfer import load_dataset
from ojax.sparse import issparse
from ojax.validation import InputError

SHIPPED = ("spambase", "mushrooms", "usenet1", "usenet2")
"""The shipped data sets :func:`load_classes` reads (binary: `K = 2`)."""

SKLEARN = ("iris", "wine", "digits", "breast_cancer")
"""scikit-learn's bundled data sets :func:`load_classes` reads when scikit-learn is installed."""


def sklearn_available() -> bool:
    """Whether scikit-learn can be imported."""
    return importlib.util.find_spec("sklearn") is not None


def load_classes(name: str, data_dir: Any = None) -> tuple[np.ndarray, np.ndarray, int]:
    """`(X, y, K)`: dense float64 features (n, d), int labels in `[0, K)` (n,), `K`."""
    if name in SHIPPED:
        x, labels = load_dataset(name, data_dir)
        x = x.toarray() if issparse(x) else np.asarray(x)
    elif name in SKLEARN:
        if not sklearn_available():
            raise DataError(
                f"dataset {name!r} is scikit-learn's: install scikit-learn "
                "(pip install scikit-learn), or use one of the shipped data sets "
                f"{list(SHIPPED)}"
            )
        sets = importlib.import_module("sklearn.datasets")
        x, labels = getattr(sets, f"load_{name}")(return_X_y=True)
    else:
        raise InputError(f"dataset must be one of {list(SHIPPED + SKLEARN)}, got {name!r}")
    classes, y = np.unique(np.asarray(labels), return_inverse=True)
    return np.asarray(x, np.float64), y.astype(np.int32), int(classes.size)


def bandit_problem(
    x: Any, y: Any, *, num_classes: int | None = None, cost_matrix: Any = None, dtype: Any = None
) -> ContextualData:
    """The contextual bandit of the classification data `(x, y)`.

    Args:
      x: `(n, d)` features (finite).
      y: `(n,)` integer labels in `[0, K)`.
      num_classes: `K` (default: `max(y) + 1`, or the cost matrix's size).
      cost_matrix: `(K, K)` costs in `[0, 1]` (`C[y, a]`: playing `a` on class `y`);
        default `1[a != y]`.
      dtype: the float dtype of the result (default float32).

    Returns:
      :class:`~ojax.contextual.ContextualData` in the data's order (`order = 0..n-1`): each
      feature standardized (a constant one left at 0), a constant 1 appended, every row
      divided by the largest row norm.
    """
    features = np.asarray(x, np.float64)
    if features.ndim != 2 or not np.all(np.isfinite(features)):
        raise InputError(f"x must be a finite (n, d) array, got shape {features.shape}")
    spread = features.std(axis=0)
    z = (features - features.mean(axis=0)) / np.where(spread > 0, spread, 1.0)
    z = np.hstack([z, np.ones((z.shape[0], 1))])
    z /= np.max(np.linalg.norm(z, axis=1))
    dtype = np.float32 if dtype is None else dtype
    if cost_matrix is not None:
        costs = cost_matrix_costs(y, cost_matrix, dtype)
    else:
        k = int(np.max(y)) + 1 if num_classes is None else num_classes
        costs = class_costs(y, k, dtype)
    return contextual_data(np.asarray(z, dtype), costs)


__all__ = ["SHIPPED", "SKLEARN", "bandit_problem", "load_classes", "sklearn_available"]
