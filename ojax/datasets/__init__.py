"""Loaders for the real datasets and one's own stream files (:func:`read_stream`), with clear
errors for missing or malformed files."""

from ojax.datasets import classes, transfer
from ojax.datasets.classes import bandit_problem, load_classes
from ojax.datasets.multitask import (
    PooledTasks,
    load_lenk,
    load_schools,
    load_tasks_file,
    split_tasks,
)
from ojax.datasets.paths import DataError, data_file, packaged_data_dir, resolve_data_dir
from ojax.datasets.stream_files import (
    Stream,
    hash_features,
    read_stream,
    running_standardize,
)

__all__ = [
    "DataError",
    "bandit_problem",
    "classes",
    "load_classes",
    "PooledTasks",
    "Stream",
    "data_file",
    "hash_features",
    "load_lenk",
    "load_schools",
    "load_tasks_file",
    "packaged_data_dir",
    "read_stream",
    "resolve_data_dir",
    "running_standardize",
    "split_tasks",
    "transfer",
]
