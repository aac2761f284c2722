"""Where the real data is read from: ``--data-dir``, else ``$OJAX_DATA_DIR``, else
``../shared/data`` (relative to the working directory, then to the repository) when it exists."""

from __future__ import annotations

import os
from pathlib import Path

from ojax.validation import InputError


class DataError(InputError):
    """A missing or malformed data file; the message names the file and what was expected."""


def _candidates() -> list[Path]:
    repo = Path(__file__).resolve().parents[2]
    return [Path.cwd() / ".." / "shared" / "data", repo / ".." / "shared" / "data"]


def resolve_data_dir(data_dir: str | os.PathLike | None = None) -> Path:
    """The folder holding the real datasets, or a :class:`DataError` saying how to set it."""
    if data_dir is not None:
        path = Path(data_dir)
        if not path.is_dir():
            raise DataError(f"data_dir: {str(path)!r} is not a folder")
        return path
    env = os.environ.get("OJAX_DATA_DIR")
    if env:
        path = Path(env)
        if not path.is_dir():
            raise DataError(f"OJAX_DATA_DIR: {env!r} is not a folder")
        return path
    for path in _candidates():
        if path.is_dir():
            return path.resolve()
    raise DataError(
        "no data folder found: pass --data-dir DIR or set OJAX_DATA_DIR to the folder holding "
        "the datasets (schools.mat, usenet2.mat, ...)"
    )


def data_file(name: str, data_dir: str | os.PathLike | None = None) -> Path:
    """The path of the dataset file ``name``, checked to exist."""
    path = resolve_data_dir(data_dir) / name
    if not path.is_file():
        raise DataError(f"data file {str(path)!r} not found (expected the dataset {name!r})")
    return path
