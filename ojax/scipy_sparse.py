"""`scipy.sparse`, imported only when a sparse matrix is met (SciPy's import is ~0.2 s of
every `ojax` command that never reads one, e.g. `ojax run denevi2020-synthetic`)."""

from __future__ import annotations

import importlib
import sys
from types import ModuleType
from typing import Any


def issparse(x: Any) -> bool:
    """`scipy.sparse.issparse(x)`, without importing SciPy: an object can only be a SciPy
    sparse matrix once `scipy.sparse` is imported."""
    module = sys.modules.get("scipy.sparse")
    return module is not None and bool(module.issparse(x))


def sparse() -> ModuleType:
    """The `scipy.sparse` module (imported on first use)."""
    return importlib.import_module("scipy.sparse")
