"""The one reader and the one writer of every file ojax reads from or writes to disk.

Reading (a user's data, a saved state, a run's results, a cache entry): :func:`open_regular`
opens without waiting (a pipe opens at once instead of blocking until someone writes into it)
and refuses anything but a regular file (a pipe, a device such as `/dev/zero`, a folder) with
a :class:`DataError` naming the file; a link to a regular file is followed (a user's file may
be a link). :func:`read_bytes` and :func:`read_json` read a whole file of at most `limit`
bytes through it; :func:`read_arrays` reads the arrays of an `.npz` one member at a time, each
checked before it is inflated (declared sizes bounded, alone and together: a small archive
that inflates to gigabytes is refused unread; no object arrays, nothing unpickled).

Writing (results, states, figures, records, chunks, programs): :func:`atomic_write` creates a
fresh temporary file beside the target (`O_CREAT | O_EXCL | O_NOFOLLOW`: never a file or a
link already there), writes, fsyncs and renames it over the target with `os.replace`, which
replaces a link instead of writing through it: a reader sees the whole file or the old one.

A name read from a file (a metric, a figure's stem, a file a record lists) is data, never a
path: :func:`plain_name` says whether it may name a file inside a folder.
"""

from __future__ import annotations

import contextlib
import errno
import json
import math
import os
import stat
import tempfile
import zipfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

import numpy as np

from ojax.validation import InputError, fmt_bytes, host_memory

JSON_LIMIT = 2**24
"""The largest JSON file ojax reads (its own records and configs are a few KiB)."""


class DataError(InputError):
    """A missing or malformed data file; the message names the file and what was expected."""


def _show(path: str | os.PathLike) -> str:
    return repr(str(path))


# ----------------------------------------------------------------------------------- names


def plain_name(name: Any) -> bool:
    """Whether `name` is a plain, visible file name (no folder separator, not `.` or `..`,
    not hidden, not absolute, no NUL): what may name a file inside a folder.

    Examples:
      >>> [plain_name(n) for n in ("loss", "../x", "/etc/passwd", ".hidden", "a/b", "")]
      [True, False, False, False, False, False]
    """
    return (
        isinstance(name, str)
        and bool(name)
        and not name.startswith(".")
        and not any(c in name for c in "/\\\0")
        and not os.path.isabs(name)
    )


# ---------------------------------------------------------------------------------- reading


def open_regular(path: str | os.PathLike, limit: int | None = None, what: str = "file") -> IO:
    """`path` opened for reading in binary mode: a regular file (a link to one is followed) of
    at most `limit` bytes (no limit: `None`).

    Raises:
      DataError: `path` is a pipe, a device, a socket or a folder (opening never waits on a
        pipe: it is opened non-blocking and looked at), or holds more than `limit` bytes.
      OSError: it cannot be opened (missing, no permission).
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = "a folder" if stat.S_ISDIR(info.st_mode) else "a pipe, a device or a socket"
            raise DataError(f"{what} {_show(path)} is {kind}, not a regular file")
        if limit is not None and info.st_size > limit:
            raise DataError(
                f"{what} {_show(path)} holds {fmt_bytes(info.st_size)}, more than the "
                f"{fmt_bytes(limit)} ojax reads from such a file"
            )
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bytes(path: str | os.PathLike, limit: int, what: str = "file") -> bytes:
    """The bytes of the regular file `path` (:func:`open_regular`), at most `limit` of them
    (a file growing while it is read is refused too)."""
    with open_regular(path, limit, what) as f:
        size = os.fstat(f.fileno()).st_size  # read() of n bytes first allocates n
        data = f.read(min(size, limit) + 1)
    if len(data) > limit:
        raise DataError(f"{what} {_show(path)} holds more than {fmt_bytes(limit)}")
    return data


def read_json(path: str | os.PathLike, limit: int = JSON_LIMIT, what: str = "file") -> Any:
    """The JSON value of the regular file `path` of at most `limit` bytes.

    Raises:
      DataError (a `ValueError`): not a regular file, too large, not JSON, nested too deep.
      OSError: it cannot be opened.
    """
    data = read_bytes(path, limit, what)
    try:
        return json.loads(data)
    except RecursionError:
        raise DataError(f"{what} {_show(path)} is nested too deep") from None
    except ValueError as exc:
        raise DataError(f"{what} {_show(path)} is not valid JSON ({exc})") from None


def size_limit() -> int:
    """The most bytes read from a user's `.npz` (all its arrays together): a quarter of the
    host's memory."""
    return host_memory() // 4


@contextlib.contextmanager
def open_zip(path: str | os.PathLike, what: str = "file") -> Iterator[zipfile.ZipFile]:
    """The zip archive (an `.npz`, a state file) `path`, a regular file (:func:`open_regular`);
    a :class:`DataError` naming it when it is not a zip archive."""
    with open_regular(path, what=what) as handle:
        try:
            archive = zipfile.ZipFile(handle)
        except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
            raise DataError(f"{_show(path)}: cannot read as a zip (.npz) file ({exc})") from None
        with archive:
            yield archive


def members(path: str | os.PathLike) -> list[str]:
    """The array names an `.npz` file holds (nothing is inflated)."""
    with open_zip(path) as archive:
        return sorted(name.removesuffix(".npy") for name in archive.namelist())


def _header(path: Path, key: str, member: IO) -> tuple[tuple[int, ...], bool, np.dtype]:
    try:
        version = np.lib.format.read_magic(member)
        if version == (1, 0):
            return np.lib.format.read_array_header_1_0(member)
        return np.lib.format.read_array_header_2_0(member)
    except Exception as exc:
        raise DataError(
            f"{str(path)!r}: array {key!r} is not a readable .npy member ({exc})"
        ) from None


def _member(path: Path, archive: zipfile.ZipFile, key: str, info: zipfile.ZipInfo) -> np.ndarray:
    try:
        member: Any
        with archive.open(info) as member:
            shape, fortran, dtype = _header(path, key, member)
            if dtype.hasobject:
                raise DataError(
                    f"{str(path)!r}: array {key!r} holds Python objects (dtype {dtype}), which "
                    "ojax never unpickles; save numeric arrays"
                )
            nbytes = math.prod(shape) * dtype.itemsize
            if nbytes > info.file_size:
                raise DataError(
                    f"{str(path)!r}: array {key!r} declares shape {shape} of {dtype} "
                    f"({fmt_bytes(nbytes)}) but its member holds {info.file_size} bytes"
                )
            data = bytearray(nbytes)  # read in place: the array's own memory, no copy
            got = member.readinto(data)
    except DataError:
        raise
    except Exception as exc:  # a corrupt member: zlib, CRC, truncated
        raise DataError(f"{str(path)!r}: array {key!r} cannot be read ({exc})") from None
    if got != nbytes:
        raise DataError(f"{str(path)!r}: array {key!r} is truncated")
    flat = np.frombuffer(data, dtype=dtype)
    return flat.reshape(shape, order="F" if fortran else "C")


def read_arrays(
    path: str | os.PathLike, keys: Sequence[str] | None = None, limit: int | None = None
) -> dict[str, np.ndarray]:
    """The arrays `keys` (default: all) of the `.npz` file `path` that it holds (missing ones
    are left out), without inflating any other member.

    Args:
      path: the file (a regular file: :func:`open_regular`).
      keys: the array names to read; `None`: every member.
      limit: the most bytes the arrays read may declare together, uncompressed (default
        :func:`size_limit`); checked on the archive's directory before anything is inflated.

    Raises:
      DataError: not a regular file, not a zip, a member that is not a `.npy` array, an object
        (pickled) array, members declaring more than `limit` bytes or more data than they
        hold, a corrupt member.
    """
    path = Path(path)
    limit = size_limit() if limit is None else limit
    with open_zip(path) as archive:
        found = {name.removesuffix(".npy"): name for name in archive.namelist()}
        wanted = list(found) if keys is None else [k for k in keys if k in found]
        infos = {key: archive.getinfo(found[key]) for key in wanted}
        declared = sum(info.file_size for info in infos.values())
        if declared > limit:
            largest = max(infos, key=lambda k: infos[k].file_size)
            raise DataError(
                f"{str(path)!r}: array {largest!r} declares "
                f"{fmt_bytes(infos[largest].file_size)} uncompressed, the {len(infos)} arrays "
                f"read {fmt_bytes(declared)} together, above the limit of {fmt_bytes(limit)} "
                "(a quarter of this host's memory by default); nothing was inflated"
            )
        return {key: _member(path, archive, key, info) for key, info in infos.items()}


# ---------------------------------------------------------------------------------- writing


def _file_mode() -> int:
    """`0o666` less the process's umask, read from `/proc/self/status` where Linux reports it
    (unchanged); elsewhere set to 0 for a moment and restored (a file another thread created in
    that moment would get no mask)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            mask = next(int(line.split()[1], 8) for line in status if line.startswith("Umask:"))
    except (OSError, StopIteration, ValueError, IndexError):
        mask = os.umask(0)
        os.umask(mask)
    return 0o666 & ~mask


def atomic_write(
    path: str | os.PathLike,
    write: Callable[[Any], None],
    binary: bool = True,
    prefix: str = ".tmp-",
) -> Path:
    """Writes `path` all or nothing, never through a link: `write(f)` fills a fresh temporary
    file `prefix...` in the same folder (created `O_CREAT | O_EXCL | O_NOFOLLOW`), which is
    fsynced and renamed over `path` (`os.replace`: a link at `path` is replaced, not
    followed). Returns `path`."""
    path = Path(path)
    if not path.parent.is_dir():
        raise FileNotFoundError(
            errno.ENOENT,
            f"cannot write it: the folder {_show(path.parent)} does not exist",
            str(path),
        )
    if path.is_dir() and not path.is_symlink():  # os.replace would name the temporary file
        raise IsADirectoryError(
            errno.EISDIR, "cannot write it: a folder is there (give a file name)", str(path)
        )
    fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=path.suffix, dir=path.parent)
    try:
        os.fchmod(fd, _file_mode())
        with os.fdopen(fd, "wb" if binary else "w", newline=None if binary else "") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def atomic_savez(path: str | os.PathLike, arrays: Mapping[str, np.ndarray]) -> Path:
    """`np.savez` of `arrays` into `path` (stored, not deflated), all or nothing."""
    # numpy's stubs match **arrays against savez's allow_pickle: bool too
    return atomic_write(path, lambda f: np.savez(f, **arrays))  # type: ignore[arg-type]


def atomic_json(path: str | os.PathLike, value: Any, prefix: str = ".tmp-") -> Path:
    """`value` as indented JSON into `path`, all or nothing."""
    return atomic_write(
        path,
        lambda f: json.dump(value, f, indent=2, sort_keys=True, default=repr),
        binary=False,
        prefix=prefix,
    )


__all__ = [
    "JSON_LIMIT",
    "DataError",
    "atomic_json",
    "atomic_savez",
    "atomic_write",
    "members",
    "open_regular",
    "open_zip",
    "plain_name",
    "read_arrays",
    "read_bytes",
    "read_json",
    "size_limit",
]
