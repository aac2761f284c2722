"""The chunk store: `out_dir/NAME-HASH/` holds a `sweep.json` manifest and one
`chunk-<first index>.npz` per finished chunk (its combination numbers and outputs).

Every file is written all or nothing (:func:`ojax.fileio.atomic_write`: a temporary file in
the same folder, fsync, then `os.replace`), so a killed run leaves whole chunks or none; a
folder holding another configuration is refused before anything is written.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ojax.fileio import atomic_json, atomic_savez, open_regular, read_arrays, read_json
from ojax.validation import InputError

MANIFEST = "sweep.json"
"""The manifest's file name in a chunk folder."""

_CHUNK_RE = re.compile(r"^chunk-(\d{10})\.npz$")


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("._") or "sweep"


def open_store(out_dir: Path, name: str, digest: str, manifest: dict) -> Path:
    """The chunk folder for this configuration (created if new).

    `out_dir` is either a parent of chunk folders (the folder is `NAME-HASH` inside it) or
    a chunk folder itself, which must hold the same configuration.
    """
    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise InputError(f"out_dir {str(out_dir)!r} exists and is not a folder")
    own = out_dir / MANIFEST
    folder = out_dir if own.exists() else out_dir / f"{_safe(name)}-{digest[:16]}"
    path = folder / MANIFEST
    if path.exists():
        try:
            held = read_json(path)
            if not isinstance(held, dict):
                raise ValueError("not a JSON object")
        except (OSError, ValueError) as exc:
            raise InputError(f"{str(path)!r} is not a readable sweep manifest ({exc})") from exc
        if held.get("hash") != digest:
            raise InputError(
                f"out_dir {str(folder)!r} holds another sweep configuration (hash "
                f"{str(held.get('hash'))[:16]}, fn {held.get('fn')!r}) than this one (hash "
                f"{digest[:16]}); nothing was written. Point out_dir at the parent folder of "
                "sweeps, or at a new folder."
            )
    else:
        folder.mkdir(parents=True, exist_ok=True)
        atomic_json(path, manifest)
    return folder


def chunk_files(folder: Path) -> list[Path]:
    """The finished chunk files of `folder`, in order."""
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if _CHUNK_RE.match(p.name))


def load_chunks(folder: Path, total: int, leaves: list[np.ndarray], done: np.ndarray) -> int:
    """Scatters every finished chunk of `folder` into `leaves`; returns their count."""
    count = 0
    for path in chunk_files(folder):
        try:
            _check_sizes(path, total, leaves)
            arrays = read_arrays(path, ["index", *(f"out{i}" for i in range(len(leaves)))])
            index = arrays["index"]
            values = [arrays[f"out{i}"] for i in range(len(leaves))]
        except InputError:
            raise
        except Exception as exc:
            raise InputError(
                f"chunk file {str(path)!r} cannot be read ({exc}); move it away to recompute it"
            ) from exc
        ok = index.ndim == 1 and index.size and index.min() >= 0 and index.max() < total
        ok = ok and all(
            v.shape == (index.size,) + leaf.shape[1:] and v.dtype == leaf.dtype
            for v, leaf in zip(values, leaves)
        )
        if not ok:
            raise InputError(
                f"chunk file {str(path)!r} does not match this sweep's combinations or output "
                "shapes; move it away to recompute it"
            )
        for leaf, value in zip(leaves, values):
            leaf[index] = value
        done[index] = True
        count += 1
    return count


def _check_sizes(path: Path, total: int, leaves: list[np.ndarray]) -> None:
    """Refuses a chunk file whose members declare more data than the whole sweep's outputs
    (checked before anything is inflated: a planted file could otherwise inflate to any size)."""
    limits = {"index.npy": 8 * total, **{f"out{i}.npy": a.nbytes for i, a in enumerate(leaves)}}
    with zipfile.ZipFile(open_regular(path, what="chunk file")) as archive:
        for info in archive.infolist():
            if info.filename in limits and info.file_size > limits[info.filename] + 4096:
                raise InputError(
                    f"chunk file {str(path)!r}: its array {info.filename!r} declares "
                    f"{info.file_size} bytes, more than this sweep's outputs hold; move it away "
                    "to recompute it"
                )


def prepare(folder: Path, resume: bool, leaves: list, done: np.ndarray) -> int:
    """Removes temporary files a killed writer left; loads the finished chunks (`resume`) or
    deletes them. Returns the number of chunks loaded."""
    for stale in folder.glob(".tmp-*"):  # left by a killed writer; never renamed
        stale.unlink(missing_ok=True)
    if resume:
        return load_chunks(folder, done.size, leaves, done)
    for old in chunk_files(folder):
        old.unlink()
    return 0


def save_chunk(folder: Path, batch: np.ndarray, values: Sequence[np.ndarray]) -> Path:
    """Writes one finished chunk: its combination numbers `batch` and its output leaves."""
    path = folder / f"chunk-{int(batch[0]):010d}.npz"
    arrays = {"index": batch.astype(np.int64)}
    arrays.update({f"out{i}": v[: batch.size] for i, v in enumerate(values)})
    atomic_savez(path, arrays)
    return path


__all__ = [
    "MANIFEST",
    "chunk_files",
    "load_chunks",
    "open_store",
    "prepare",
    "save_chunk",
]
