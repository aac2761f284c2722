"""Several processes, one run: `jax.distributed` and one mesh over every process's devices.

A multi-process run of `ojax run` / `ojax sweep` / :func:`ojax.sweep.sweep` is N copies of
the same command, one per process (several GPU hosts, the tasks of a SLURM job, or several
processes on one machine). :func:`initialize` joins them with `jax.distributed.initialize`
(a coordinator at `HOST:PORT`, the number of processes and this process's id, given or
detected from the environment), with JAX's gloo collectives on CPU (NCCL on GPUs is JAX's
default there). From then on the processes run one SPMD program per chunk over the mesh of
every process's devices (:mod:`ojax.sweep.engine`) and exchange nothing but collectives over
that mesh: :func:`gather_json` (the configurations, compared by :func:`check_same`) and
:func:`broadcast` (the chunks process 0 loaded on resume). Process 0 alone writes.

Faults are JAX's: a collective whose peer went away fails at once (:class:`PeerLost`, exit
status :data:`PEER_LOST_STATUS`), and the coordination service's heartbeat ends every process
(JAX's own message, SIGABRT) when one stops answering for `peer_timeout` seconds. Two ways of
starting badly JAX does not name (tests/test_distributed.py shows both), so :func:`initialize`
keeps a small wrapper for each: with a process missing, `jax.distributed.initialize` aborts
after its timeout with a C++ stack naming no process (a timer ends the process a little
earlier, with one line naming it); on a coordinator port another program holds, JAX's service
crashes the process or raises naming no port (process 0 binds the port first).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import socket
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from ojax.validation import InputError

PEER_LOST_STATUS = 3
"""Exit status of a process whose peer stopped (killed, crashed or unreachable)."""
DEFAULT_PEER_TIMEOUT = 120.0
"""Seconds JAX waits for every process to join, and for a silent process to count as lost."""


_joined = False  # initialize() has run


class PeerLost(RuntimeError):
    """A step across the processes failed: a process of the run stopped (killed, crashed, its
    host lost). Finished chunks are kept; a re-run of the same command resumes."""


# -------------------------------------------------------------------------- arguments


def parse_coordinator(text: str) -> tuple[str, int]:
    """`"host:1234"` -> `("host", 1234)`; :class:`InputError` naming `--coordinator`."""
    match = re.fullmatch(r"\[?([A-Za-z0-9_.\-:]+?)\]?:(\d{1,5})", text.strip())
    if match is None or not 1 <= int(match.group(2)) <= 65535:
        raise InputError(
            f"--coordinator must be HOST:PORT with a port in [1, 65535] (e.g. "
            f"node01:12345), got {text!r}"
        )
    return match.group(1), int(match.group(2))


def check_arguments(
    coordinator: str | None, num_processes: int | None, process_id: int | None
) -> None:
    """Checks the `--coordinator / --num-processes / --process-id` values (any may be
    `None`: detected from the environment); raises :class:`InputError` naming the argument."""
    if coordinator is not None:
        parse_coordinator(coordinator)
    if num_processes is not None and (isinstance(num_processes, bool) or num_processes < 1):
        raise InputError(f"--num-processes must be an integer >= 1, got {num_processes!r}")
    if process_id is not None and (isinstance(process_id, bool) or process_id < 0):
        raise InputError(f"--process-id must be an integer >= 0, got {process_id!r}")
    if num_processes is not None and process_id is not None and process_id >= num_processes:
        raise InputError(
            f"--process-id must be in [0, {num_processes - 1}] (--num-processes "
            f"{num_processes}), got {process_id}"
        )


def detected() -> bool:
    """Whether the environment describes a multi-process job JAX can join by itself:
    `$JAX_COORDINATOR_ADDRESS`, a SLURM step of several tasks, or Open MPI's `mpirun`."""
    env = os.environ
    if env.get("JAX_COORDINATOR_ADDRESS"):
        return True
    for count, rank in (("SLURM_NTASKS", "SLURM_PROCID"), ("OMPI_COMM_WORLD_SIZE", None)):
        try:
            many = int(env.get(count, "1")) > 1
        except ValueError:
            many = False
        if many and (rank is None or rank in env):
            return True
    return False


def peer_timeout_from_env() -> float:
    """`$OJAX_PEER_TIMEOUT` (seconds, >= 1), else :data:`DEFAULT_PEER_TIMEOUT`."""
    return _seconds(
        os.environ.get("OJAX_PEER_TIMEOUT") or DEFAULT_PEER_TIMEOUT, "$OJAX_PEER_TIMEOUT"
    )


def _seconds(value: Any, name: str) -> float:
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        seconds = -1.0
    if not 1 <= seconds < math.inf:  # JAX counts whole seconds
        raise InputError(
            f"{name} must be a positive, finite number of seconds (at least 1), got {value!r}"
        )
    return seconds


# -------------------------------------------------------------------------- start and end


def initialize(
    coordinator: str | None = None,
    num_processes: int | None = None,
    process_id: int | None = None,
    *,
    peer_timeout: float | None = None,
) -> None:
    """Joins this process to a multi-process run (`jax.distributed.initialize`).

    Call it before anything else uses JAX. Arguments left `None` are detected by JAX from the
    environment (SLURM, Open MPI, `$JAX_COORDINATOR_ADDRESS`...). On CPU the cross-process
    collectives are gloo; on GPUs JAX uses NCCL.

    Args:
      coordinator: `"HOST:PORT"` of process 0 (it listens there).
      num_processes: the number of processes.
      process_id: this process's id in `[0, num_processes)`.
      peer_timeout: seconds (default `$OJAX_PEER_TIMEOUT`, else 120) every process waits for
        the others to join, and JAX's heartbeat timeout: a process silent that long is lost and
        JAX ends every other one.

    Raises:
      InputError: a malformed argument, a coordinator port held by another program, or JAX
        cannot start the run. A process missing at the start ends this one with status 2 and
        one line naming it after `peer_timeout` seconds.
    """
    check_arguments(coordinator, num_processes, process_id)
    timeout = (
        peer_timeout_from_env() if peer_timeout is None else _seconds(peer_timeout, "peer_timeout")
    )
    if process_id == 0 and coordinator is not None:
        _check_port(coordinator)
    import jax

    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    # JAX aborts a start with a process missing after its own timeout, naming nobody (see the
    # module's docstring): this timer ends the process first, with a line naming who is missing.
    given = (coordinator, num_processes, process_id, timeout)
    guard = threading.Timer(timeout, _not_started, given)
    guard.daemon = True
    guard.start()
    try:
        jax.distributed.initialize(
            coordinator_address=coordinator,
            num_processes=num_processes,
            process_id=process_id,
            initialization_timeout=int(timeout) + 30,
            heartbeat_timeout_seconds=int(timeout),
            shutdown_timeout_seconds=int(timeout),
        )
    except (RuntimeError, ValueError) as exc:
        raise InputError(f"cannot start the multi-process run: {exc}") from None
    finally:
        guard.cancel()
    global _joined
    _joined = True


def _check_port(coordinator: str) -> None:
    """Process 0 binds the coordinator's port as JAX's service will (every interface) and
    frees it: on a port another program holds, JAX's service crashes the process (SIGSEGV)
    or raises naming no port, by turns (tests/test_distributed.py shows it)."""
    port = parse_coordinator(coordinator)[1]
    dual = socket.has_dualstack_ipv6()
    try:
        family = socket.AF_INET6 if dual else socket.AF_INET
        socket.create_server(("", port), family=family, dualstack_ipv6=dual).close()
    except OSError as exc:
        raise InputError(
            f"--coordinator {coordinator}: process 0 cannot listen on port {port} "
            f"({os.strerror(exc.errno) if exc.errno else exc}); choose a free port"
        ) from None


def _not_started(coordinator: str | None, count: int | None, me: int | None, timeout: float):
    """The start timer's end: one line naming what is missing, then exit status 2."""
    where = f" at {coordinator}" if coordinator else ""
    if me == 0 and count:
        missing = "process 1" if count == 2 else f"one of processes 1..{count - 1}"
        why = f"{missing} did not join within {timeout:g} s{where}: start every process"
    else:
        who = f"process 0 (the coordinator{where})" if coordinator else "the coordinator"
        why = (
            f"the run did not start within {timeout:g} s: {who} or another process is missing, "
            "or the port is held by another program; start every process"
        )
    label = f"process {me}/{count}" if me is not None and count else "this process"
    print(
        f"ojax: error: {label}: {why} with the same command and its own --process-id "
        "($OJAX_PEER_TIMEOUT sets the wait)",
        file=sys.stderr,
        flush=True,
    )
    os._exit(2)


def active() -> bool:
    """Whether this process is one of several (after :func:`initialize`, and after
    :func:`finish`)."""
    if not _joined:
        return False
    import jax

    return jax.process_count() > 1


def label() -> str:
    """`"process 1/4"` in a multi-process run, else `""`."""
    if not active():
        return ""
    import jax

    return f"process {jax.process_index()}/{jax.process_count()}"


def finish() -> None:
    """Leaves the run once every process is done with the others (`jax.distributed.shutdown`,
    a barrier): process 0 may then write alone while the others exit."""
    import jax

    if active() and jax.distributed.is_initialized():
        jax.distributed.shutdown()


@contextlib.contextmanager
def across(where: str) -> Iterator[None]:
    """Runs a step that needs every process; JAX's error of a collective whose peer went away
    (a `JaxRuntimeError`, or a `ValueError` from an array in error) becomes :class:`PeerLost`
    naming `where`, with JAX's message."""
    try:
        yield
    except (RuntimeError, ValueError) as exc:
        if isinstance(exc, (InputError, PeerLost)) or not active():
            raise
        first = (str(exc).strip() or type(exc).__name__).splitlines()[0]
        raise PeerLost(
            f"{label()}: a step across the processes failed {where} ({first}): a process of "
            "the run stopped (killed, crashed or its host lost); stopping. Finished chunks are "
            "kept: re-run the same command on every process to resume."
        ) from exc


# -------------------------------------------------------------------------- collectives


def gather_json(payload: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every process's `payload` (JSON-able), in process order (an all-gather)."""
    from jax.experimental import multihost_utils

    data = np.frombuffer(json.dumps(payload, sort_keys=True).encode(), np.uint8)
    with across("while the processes compared their configurations"):
        sizes = multihost_utils.process_allgather(np.int32(data.size))
        padded = np.zeros(int(sizes.max()), np.uint8)
        padded[: data.size] = data
        rows = multihost_utils.process_allgather(padded)
    return [json.loads(bytes(row[:size])) for row, size in zip(rows, sizes)]


def broadcast(arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Process 0's `arrays` on every process (the same shapes and dtypes everywhere), moved
    as bytes: every bit arrives as it left."""
    from jax.experimental import multihost_utils

    raw = [np.ascontiguousarray(a).reshape(-1).view(np.uint8) for a in arrays]
    with across("while process 0 sent the finished chunks"):
        got = multihost_utils.broadcast_one_to_all(raw)
    return [np.array(g).view(a.dtype).reshape(a.shape) for g, a in zip(got, arrays)]


def differences(payloads: Sequence[Mapping[str, Any]]) -> str:
    """`"--seeds: process 0 has 4, process 1 has 8; ..."` for the keys whose values are
    not the same in every payload (`""` if none)."""
    first, parts = payloads[0], []
    for name in sorted({k for p in payloads for k in p}):
        values = [p.get(name) for p in payloads]
        if any(v != values[0] for v in values):
            shown = ", ".join(
                f"process {i} has {json.dumps(v)}"
                for i, v in enumerate(values)
                if v != first.get(name) or i == 0
            )
            parts.append(f"{name}: {shown}")
    return "; ".join(parts)


def refuse(message: str) -> InputError:
    """The :class:`InputError` every process raises together after a collective: the processes
    first leave the run side by side (:func:`finish`), so that none is ended by another's exit."""
    finish()
    return InputError(message)


def check_same(payload: Mapping[str, Any]) -> None:
    """:func:`gather_json`, then :class:`InputError` on every process if the payloads differ,
    naming the differences."""
    diff = differences(gather_json(payload))
    if diff:
        raise refuse(f"the processes were started with different configurations ({diff})")


def first_error(action: Any) -> None:
    """Runs `action()` on process 0 alone; an :class:`InputError` it raises is raised on every
    process (the others' message says it is process 0's)."""
    import jax

    error = ""
    if jax.process_index() == 0:
        try:
            action()
        except InputError as exc:
            error = str(exc)
    first = gather_json({"error": error})[0]["error"]
    if first:
        raise refuse(first if jax.process_index() == 0 else f"(process 0) {first}")


# -------------------------------------------------------------------------- the output folder


class SharedFolder:
    """An output folder (:class:`ojax.app.run_folder.RunFolder`) of a multi-process run:
    every process first agrees on `options` (the run's identity and options: a process
    started differently is refused, naming the difference), then process 0 alone checks,
    prepares and writes the folder (`writes` is False on the others)."""

    def __init__(self, folder: Any, options: Mapping[str, Any]) -> None:
        import jax

        self.folder, self.options = folder, dict(options)
        self.writes = jax.process_index() == 0

    def check(self) -> None:
        check_same(self.options)
        first_error(self.folder.check)

    def __enter__(self) -> SharedFolder:
        first_error(self.folder.__enter__)
        return self

    def __exit__(self, kind, exc, tb) -> None:
        if self.writes:
            self.folder.__exit__(kind, exc, tb)

    def record(self, names: list[str]) -> None:
        if self.writes:
            self.folder.record(names)

    def finish(self, written: list) -> None:
        if self.writes:
            self.folder.finish(written)


__all__ = [
    "DEFAULT_PEER_TIMEOUT",
    "PEER_LOST_STATUS",
    "PeerLost",
    "SharedFolder",
    "across",
    "active",
    "broadcast",
    "check_arguments",
    "check_same",
    "detected",
    "differences",
    "finish",
    "first_error",
    "gather_json",
    "initialize",
    "label",
    "parse_coordinator",
    "peer_timeout_from_env",
    "refuse",
]
