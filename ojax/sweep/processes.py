"""A sweep split among the processes of a multi-process run (:mod:`ojax.sweep.distributed`).

Every process plans, sizes and compiles the same sweep; the chunks (the same boundaries on
every process) are dealt round-robin: process `p` of `N` computes chunks `p, p + N, ...`
on its own devices and writes each one to the shared chunk folder as it finishes. Then every
process waits for the others' chunks and loads them, so each returns the whole result. The
processes exchange only small messages through the coordinator: the configuration (refused
when it differs), process 0's chunk size and list of finished chunks, and "done".
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from ojax.sweep import distributed
from ojax.sweep.store import MANIFEST, chunk_files, load_chunks
from ojax.validation import InputError

_rounds = {"count": 0}  # the sweeps of this run so far (the same sequence on every process)
_VISIBLE_SECONDS = 10.0  # how long a process waits to see process 0's manifest (NFS caches)


def _comparable(manifest: dict[str, Any]) -> dict[str, Any]:
    described = {k: v for k, v in manifest.items() if k not in ("parts", "hash")}
    described.update({f"digest of {k}": v for k, v in manifest.get("parts", {}).items()})
    return json.loads(json.dumps(described, default=repr))


def agree(name: str, manifest: dict[str, Any], folder: Path, chunk: int, loaded: list[str]):
    """Checks that every process runs this sweep (its manifest); returns process 0's chunk size
    and the names of the chunk files process 0 found finished (the same on every process)."""
    import jax

    what = f"sweep {name!r} started"
    _rounds["count"] += 1
    payloads = distributed.agree(
        "sweep", {"manifest": _comparable(manifest), "chunk": chunk, "loaded": loaded}, what
    )
    diff = distributed.differences([p["manifest"] for p in payloads])
    if diff:
        raise InputError(
            f"sweep {name!r}: the processes run different configurations ({diff}); start every "
            "process with the same command"
        )
    if jax.process_index() != 0:
        deadline = time.monotonic() + _VISIBLE_SECONDS
        while not (folder / MANIFEST).exists():
            if time.monotonic() > deadline:
                raise InputError(
                    f"sweep {name!r}: process {jax.process_index()} does not see "
                    f"{str(folder / MANIFEST)!r} written by process 0: out_dir must be on a "
                    "file system every process sees"
                )
            time.sleep(0.2)
    return int(payloads[0]["chunk"]), list(payloads[0]["loaded"])


def agreed(name: str, sizing: Any, store: Any) -> tuple[Any, Any]:
    """The engine's sizing and store once the processes agree (:func:`agree`): process 0's chunk
    size; the others load the chunks process 0 found finished."""
    assert store.folder is not None and store.manifest is not None
    names = [p.name for p in chunk_files(store.folder)] if store.writer else []
    chunk, names = agree(name, store.manifest, store.folder, sizing.chunk, names)
    if not store.writer:
        store = store._replace(loaded=load_listed(store.folder, names, store.leaves, store.done))
    return sizing._replace(chunk=chunk), store


def same_chunk(chunk: int, local_devices: int) -> int:
    """Process 0's chunk size after compilation (it may have shrunk to fit the budget)."""
    payloads = distributed.agree("chunk", {"chunk": chunk}, "the sweep compiled")
    agreed = int(payloads[0]["chunk"])
    if agreed % local_devices:
        import jax

        raise InputError(
            f"process 0 uses chunks of {agreed} combinations, not a multiple of the "
            f"{local_devices} devices of process {jax.process_index()}; give chunk_size "
            "(--chunk-size) a multiple of every process's device count"
        )
    return agreed


def mine(batches: list[np.ndarray]) -> list[np.ndarray]:
    """This process's share of the chunks: chunk `i` goes to process `(i + r) % N` for the
    `r`-th sweep of the run (so that sweeps of one chunk each spread over the processes)."""
    import jax

    count = jax.process_count()
    start = (jax.process_index() - _rounds["count"]) % count
    return batches[start::count]


def load_listed(folder: Path, names: list[str], leaves: list[np.ndarray], done: np.ndarray) -> int:
    """Loads the chunk files `names` of `folder` (those process 0 found finished)."""
    wanted = set(names)
    paths = [p for p in chunk_files(folder) if p.name in wanted]
    if len(paths) != len(wanted):
        missing = sorted(wanted - {p.name for p in paths})[:3]
        raise InputError(f"chunk files {missing} of {str(folder)!r} are not visible here")
    return load_chunks(folder, done.size, leaves, done, only=wanted)


def gather(name: str, folder: Path, leaves: list[np.ndarray], done: np.ndarray) -> int:
    """Says this process's chunks are written, waits for every other process's, loads the
    chunks not yet held; returns how many were loaded."""
    import jax

    me, count = jax.process_index(), jax.process_count()
    round_key = f"sweep-done/{_rounds['count']}"
    distributed.publish(f"{round_key}/{me}", "1")
    for process in range(count):
        if process != me:
            distributed.wait_published(
                f"{round_key}/{process}", process, f"finishing its share of sweep {name!r}"
            )
    held = {p.name for p in chunk_files(folder)} - _held_names(folder, done)
    loaded = load_chunks(folder, done.size, leaves, done, only=held)
    if not done.all():
        raise InputError(
            f"sweep {name!r}: {int((~done).sum())} combinations have no chunk file in "
            f"{str(folder)!r} after every process finished"
        )
    return loaded


def _held_names(folder: Path, done: np.ndarray) -> set[str]:
    """Chunk files whose combinations are all held already (by their first index)."""
    held = set()
    for path in chunk_files(folder):
        first = int(path.name[6:16])
        if done[first]:
            held.add(path.name)
    return held
