"""Reading a user's `.npz` file as data: only the arrays asked for, each checked before it is
inflated.

An `.npz` is a zip of `.npy` members. :func:`read_arrays` opens only the members it is asked
for (other members, however large, are never decompressed), refuses a member whose declared size
(the zip's uncompressed size, and the shape in its `.npy` header) is above a limit or does not
match, and never unpickles (object arrays are refused). Every problem is a
:class:`~ojax.datasets.DataError` naming the file and the array.
"""

from __future__ import annotations

import math
import zipfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ojax.datasets.paths import DataError
from ojax.validation import host_memory


def size_limit() -> int:
    """The largest array (bytes) read from a user's file: a quarter of the host's memory."""
    return host_memory() // 4


def _header(path: Path, key: str, member) -> tuple[tuple[int, ...], bool, np.dtype]:
    try:
        version = np.lib.format.read_magic(member)
        if version == (1, 0):
            return np.lib.format.read_array_header_1_0(member)
        return np.lib.format.read_array_header_2_0(member)
    except Exception as exc:
        raise DataError(
            f"{str(path)!r}: array {key!r} is not a readable .npy member ({exc})"
        ) from None


def _gib(size: float) -> str:
    return f"{size / 2**30:.3g} GiB"


def members(path: str | Path) -> list[str]:
    """The array names an `.npz` file holds (nothing is inflated)."""
    try:
        with zipfile.ZipFile(path) as archive:
            return sorted(name.removesuffix(".npy") for name in archive.namelist())
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise DataError(f"{str(path)!r}: cannot read as an .npz file ({exc})") from None


def read_arrays(
    path: str | Path, keys: Sequence[str], limit: int | None = None
) -> dict[str, np.ndarray]:
    """The arrays `keys` of the `.npz` file `path` that it holds (missing ones are left
    out), without inflating any other member.

    Args:
      path: the file.
      keys: the array names to read.
      limit: the largest array in bytes (default :func:`size_limit`).

    Raises:
      DataError: not a zip, a member that is not a `.npy` array, an object (pickled) array, a
        member declaring more than `limit` bytes or more data than it holds, a corrupt
        member.
    """
    path = Path(path)
    limit = size_limit() if limit is None else limit
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise DataError(f"{str(path)!r}: cannot read as an .npz file ({exc})") from None
    arrays: dict[str, np.ndarray] = {}
    with archive:
        members = {name.removesuffix(".npy"): name for name in archive.namelist()}
        for key in keys:
            if key not in members:
                continue
            info = archive.getinfo(members[key])
            if info.file_size > limit:
                raise DataError(
                    f"{str(path)!r}: array {key!r} declares {_gib(info.file_size)} uncompressed, "
                    f"above the limit of {_gib(limit)} (a quarter of this host's memory)"
                )
            try:
                with archive.open(info) as member:
                    shape, fortran, dtype = _header(path, key, member)
                    if dtype.hasobject:
                        raise DataError(
                            f"{str(path)!r}: array {key!r} holds Python objects (dtype {dtype}), "
                            "which ojax never unpickles; save numeric arrays"
                        )
                    nbytes = math.prod(shape) * dtype.itemsize
                    if nbytes > info.file_size:
                        raise DataError(
                            f"{str(path)!r}: array {key!r} declares shape {shape} of {dtype} "
                            f"({_gib(nbytes)}) but its member holds {info.file_size} bytes"
                        )
                    data = member.read(nbytes)
            except DataError:
                raise
            except Exception as exc:  # a corrupt member: zlib, CRC, truncated
                raise DataError(f"{str(path)!r}: array {key!r} cannot be read ({exc})") from None
            if len(data) != nbytes:
                raise DataError(f"{str(path)!r}: array {key!r} is truncated")
            flat = np.frombuffer(data, dtype=dtype)
            arrays[key] = flat.reshape(shape, order="F" if fortran else "C").copy()
    return arrays


__all__ = ["members", "read_arrays", "size_limit"]
