"""Loaders for the real datasets, with clear errors for missing or malformed files."""

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

__all__ = [
    "DataError",
    "bandit_problem",
    "classes",
    "load_classes",
    "PooledTasks",
    "data_file",
    "load_lenk",
    "load_schools",
    "load_tasks_file",
    "packaged_data_dir",
    "resolve_data_dir",
    "split_tasks",
    "transfer",
]
