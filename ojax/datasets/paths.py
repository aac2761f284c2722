"""Where the real data is read from: the `data_dir` argument (the CLI's `--data-dir`), else
`$OJAX_DATA_DIR`, else the datasets shipped inside the package (`ojax/datasets/data`, read
through :mod:`importlib.resources`; its README gives each file's provenance and licence).

>>> all((packaged_data_dir() / name).is_file() for name in PACKAGED_FILES)
True
"""

from __future__ import annotations

import importlib.resources
import os
from pathlib import Path

from ojax.fileio import DataError

PACKAGED_FILES = (
    "schools.mat",
    "lenk.mat",
    "usenet1.mat",
    "usenet2.mat",
    "newsgroup4.mat",
    "spambase.csv.gz",
    "a1a.libsvm.gz",
    "a1a_t.libsvm.gz",
    "mushrooms_keel.csv.gz",
)
"""The dataset files shipped with ojax (LIBSVM ``w7a`` is not among them)."""


def packaged_data_dir() -> Path:
    """The folder of the datasets shipped inside the package."""
    folder = importlib.resources.files("ojax.datasets") / "data"
    if not isinstance(folder, Path) or not folder.is_dir():
        raise DataError(
            f"the packaged data folder {str(folder)!r} is not a folder on disk (is ojax installed "
            "from a zip?): pass --data-dir DIR or set OJAX_DATA_DIR to a folder of the datasets"
        )
    return folder


def _resolve(data_dir: str | os.PathLike | None) -> tuple[Path, str]:
    """The data folder and where it came from (for error messages)."""
    if data_dir is not None:
        path = Path(data_dir)
        if not path.is_dir():
            raise DataError(f"data_dir: {str(path)!r} is not a folder")
        return path, "given as data_dir / --data-dir"
    env = os.environ.get("OJAX_DATA_DIR")
    if env:
        path = Path(env)
        if not path.is_dir():
            raise DataError(f"OJAX_DATA_DIR: {env!r} is not a folder")
        return path, "from $OJAX_DATA_DIR"
    return packaged_data_dir(), "shipped with ojax"


def resolve_data_dir(data_dir: str | os.PathLike | None = None) -> Path:
    """The folder holding the real datasets: `data_dir`, else `$OJAX_DATA_DIR`, else the
    packaged one; a :class:`DataError` when the chosen folder does not exist."""
    return _resolve(data_dir)[0]


def check_regular(path: Path, what: str) -> None:
    """A :class:`DataError` when `path` exists but is not a regular file (a folder, a pipe,
    a device such as `/dev/zero`, a dangling link): reading it would fail, wait on a writer
    or never end."""
    if (path.exists() or path.is_symlink()) and not path.is_file():
        kind = "a folder" if path.is_dir() else "not a regular file (a pipe, a device or a link)"
        raise DataError(f"{what} {str(path)!r} is {kind}; expected a file")


def data_file(name: str, data_dir: str | os.PathLike | None = None) -> Path:
    """The path of the dataset file `name`, checked to exist in the resolved folder."""
    folder, source = _resolve(data_dir)
    path = folder / name
    check_regular(path, "data file")
    if not path.is_file():
        hint = (
            f" ({name!r} is not shipped with ojax: pass --data-dir DIR or set OJAX_DATA_DIR to "
            "a folder holding it)"
            if name not in PACKAGED_FILES and source == "shipped with ojax"
            else ""
        )
        raise DataError(
            f"data file {name!r} not found in the data folder {str(folder)!r} ({source}): "
            f"expected the dataset file {str(path)!r}{hint}"
        )
    return path


__all__ = ["PACKAGED_FILES", "check_regular", "data_file", "packaged_data_dir", "resolve_data_dir"]
