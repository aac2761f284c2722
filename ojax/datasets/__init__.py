"""Loaders for the real datasets, with clear errors for missing or malformed files."""

from ojax.datasets.paths import DataError, resolve_data_dir, data_file

__all__ = ["DataError", "data_file", "resolve_data_dir"]
