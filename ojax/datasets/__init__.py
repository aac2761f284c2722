"""Loaders for the real datasets, with clear errors for missing or malformed files."""

from ojax.datasets.paths import DataError, resolve_data_dir, data_file
from ojax.datasets.multitask import PooledTasks, load_lenk, load_schools, split_tasks  # noqa: E402,F401,E501
from ojax.datasets import transfer  # noqa: F401  (online transfer learning data)

__all__ = ["DataError", "data_file", "resolve_data_dir"]
