"""Several processes, one run: start-up, agreement and liveness on `jax.distributed`.

A multi-process run of `ojax run` / `ojax sweep` / :func:`ojax.sweep.sweep` is N copies of
the same command, one per process (several GPU hosts, the tasks of a SLURM job, or several
processes on one machine). :func:`initialize` joins them through `jax.distributed.initialize`
(a coordinator at `HOST:PORT`, the number of processes and this process's id, given or
detected from the environment), with JAX's gloo collectives on CPU (NCCL on GPUs is JAX's
default there); with the three given, the processes first meet on the coordinator's port
(:mod:`ojax.sweep.rendezvous`), so that a missing process, a port in use or an id given twice is one
clear error within the peer timeout. The processes then talk only through the coordinator's
key-value store:

* :func:`agree` gathers one small JSON payload from every process (and refuses a run whose
  processes were started with different configurations, naming the difference);
* :func:`wait_for` waits for a key another process sets, and fails as soon as that process has
  exited without setting it;
* a watchdog thread in every process publishes a counter every `peer_timeout / 10` seconds
  and watches the others': a process that stops (killed, crashed, its host lost) for more than
  `peer_timeout` seconds (default 60, `$OJAX_PEER_TIMEOUT`) makes every other process print
  one line naming it and exit with status :data:`PEER_LOST_STATUS`. JAX's own heartbeat
  (`2 * peer_timeout`) is the backstop.

The sweep engine splits its chunks among the processes (see `docs/distributed.md`).
"""

from __future__ import annotations

import atexit
import json
import math
import os
import re
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

from ojax.validation import InputError

PEER_LOST_STATUS = 3
"""Exit status of a process whose peer stopped (killed, crashed or unreachable)."""
DEFAULT_PEER_TIMEOUT = 60.0
"""Seconds without a sign of life after which a process counts as lost."""
_PREFIX = "ojax"
_EXITED = "exited"
_WAIT_MS = 500

_state: dict[str, Any] = {"watchdog": None, "client": None, "rounds": {}}


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
    """`$OJAX_PEER_TIMEOUT` (seconds, > 0), else :data:`DEFAULT_PEER_TIMEOUT`."""
    text = os.environ.get("OJAX_PEER_TIMEOUT")
    if not text:
        return DEFAULT_PEER_TIMEOUT
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value < math.inf:
        raise InputError(
            f"$OJAX_PEER_TIMEOUT must be a positive, finite number of seconds, got {text!r}"
        )
    return value


# -------------------------------------------------------------------------- start-up


def initialize(
    coordinator: str | None = None,
    num_processes: int | None = None,
    process_id: int | None = None,
    *,
    peer_timeout: float | None = None,
    initialization_timeout: int = 300,
) -> None:
    """Joins this process to a multi-process run (`jax.distributed.initialize`).

    Call it before anything else uses JAX. Arguments left `None` are detected by JAX from the
    environment (SLURM, Open MPI, `$JAX_COORDINATOR_ADDRESS`...). On CPU the cross-process
    collectives are gloo; on GPUs JAX uses NCCL.

    Args:
      coordinator: `"HOST:PORT"` of process 0 (it listens there).
      num_processes: the number of processes.
      process_id: this process's id in `[0, num_processes)`.
      peer_timeout: seconds without a sign of life after which a peer counts as lost (default
        `$OJAX_PEER_TIMEOUT`, else 60); every other process then exits with status
        :data:`PEER_LOST_STATUS` within about `1.1 * peer_timeout` seconds.
      initialization_timeout: seconds to wait for every process to connect.

    Raises:
      InputError: a malformed argument; with the three arguments given, a process that did not
        join within the peer timeout, a coordinator port held by another program, an id given
        to two processes, a different `num_processes` (:mod:`ojax.sweep.rendezvous`); or JAX
        cannot start the run.
    """
    check_arguments(coordinator, num_processes, process_id)
    timeout = peer_timeout_from_env() if peer_timeout is None else float(peer_timeout)
    if not 0 < timeout < math.inf:
        raise InputError(
            f"peer_timeout must be a positive, finite number of seconds, got {peer_timeout}"
        )
    known = None not in (coordinator, num_processes, process_id)
    if known and num_processes is not None and num_processes > 1:  # what JAX would not say
        from ojax.sweep import rendezvous

        assert coordinator is not None and process_id is not None
        host, port = parse_coordinator(coordinator)
        rendezvous.meet(host, port, num_processes, process_id, timeout)
        initialization_timeout = min(initialization_timeout, max(10, int(2 * timeout)))
    import jax

    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    guard = _StartGuard(initialization_timeout + 5.0, process_id, num_processes)
    guard.start()
    try:
        jax.distributed.initialize(
            coordinator_address=coordinator,
            num_processes=num_processes,
            process_id=process_id,
            initialization_timeout=int(initialization_timeout),
            heartbeat_timeout_seconds=max(10, int(2 * timeout)),
        )
    except (RuntimeError, ValueError) as exc:
        raise InputError(f"cannot start the multi-process run: {exc}") from None
    finally:
        guard.done.set()
    from jax._src import distributed as _distributed

    client = _distributed.global_state.client
    _state["client"] = client
    if jax.process_count() > 1:
        _state["watchdog"] = _Watchdog(client, jax.process_index(), jax.process_count(), timeout)
        _state["watchdog"].start()
        atexit.register(_exiting)


class _StartGuard(threading.Thread):
    """Ends the process with one line if `jax.distributed.initialize` has not returned after
    `seconds` (JAX would abort with a C++ stack, or wait on)."""

    def __init__(self, seconds: float, me: int | None, count: int | None) -> None:
        super().__init__(name="ojax-start-guard", daemon=True)
        self.seconds, self.done = seconds, threading.Event()
        self.who = f"process {me}/{count}" if me is not None and count else "this process"

    def run(self) -> None:
        if not self.done.wait(self.seconds):
            print(
                f"ojax: error: {self.who}: jax.distributed could not start the run within "
                f"{self.seconds:.0f} s (a process stopped while joining, or the coordinator is "
                "unreachable)",
                file=sys.stderr,
                flush=True,
            )
            os._exit(2)


def active() -> bool:
    """Whether this process is one of several (after :func:`initialize`)."""
    if _state["client"] is None:
        return False
    import jax

    return jax.process_count() > 1


def label() -> str:
    """`"process 1/4"` in a multi-process run, else `""`."""
    if not active():
        return ""
    import jax

    return f"process {jax.process_index()}/{jax.process_count()}"


def _exiting() -> None:
    watchdog = _state["watchdog"]
    if watchdog is not None:
        watchdog.stop()
        try:  # the others stop waiting for this process
            _state["client"].key_value_set(watchdog.key(watchdog.me), _EXITED, True)
        except Exception:  # pragma: no cover - the coordinator is already gone
            pass


# -------------------------------------------------------------------------- liveness


class _Watchdog(threading.Thread):
    """Publishes this process's counter and exits the process when a peer's stalls."""

    def __init__(self, client: Any, me: int, count: int, timeout: float) -> None:
        super().__init__(name="ojax-peer-watchdog", daemon=True)
        self.client, self.me, self.count, self.timeout = client, me, count, timeout
        self.interval = min(5.0, max(0.2, timeout / 10))
        self._stop_event = threading.Event()
        self.exited: set[int] = set()

    @staticmethod
    def key(process: int) -> str:
        return f"{_PREFIX}/alive/{process}"

    def stop(self) -> None:
        self._stop_event.set()

    def run(self) -> None:
        beat, seen, since = 0, dict[int, str](), dict[int, float]()
        lost_contact = None
        while not self._stop_event.wait(0 if beat == 0 else self.interval):
            now = time.monotonic()
            try:
                beat += 1
                self.client.key_value_set(self.key(self.me), str(beat), True)
                values = dict(self.client.key_value_dir_get(f"{_PREFIX}/alive/"))
                lost_contact = None
            except Exception as exc:  # the coordinator (process 0) is unreachable
                lost_contact = lost_contact or now
                if now - lost_contact > self.timeout and not self._stop_event.is_set():
                    self._die(f"lost contact with the coordinator (process 0): {exc}")
                continue
            for process in range(self.count):
                if process == self.me:
                    continue
                value = values.get(self.key(process), "")
                if value == _EXITED:
                    self.exited.add(process)
                    continue
                if value != seen.get(process):
                    seen[process], since[process] = value, now
                elif now - since[process] > self.timeout and not self._stop_event.is_set():
                    self._die(
                        f"process {process} gave no sign of life for {now - since[process]:.0f} s "
                        "(killed, crashed or its host is unreachable)"
                    )

    def _die(self, why: str) -> None:
        print(
            f"\nojax: error: process {self.me}/{self.count}: {why}; stopping. Finished chunks "
            "are kept (nothing is half-written): re-run the same command on every process to "
            "resume.",
            file=sys.stderr,
            flush=True,
        )
        os._exit(PEER_LOST_STATUS)


# -------------------------------------------------------------------------- agreement


def _client() -> Any:
    if _state["client"] is None:
        raise RuntimeError("ojax.sweep.distributed.initialize() was not called")
    return _state["client"]


def wait_for(key: str, process: int, what: str) -> str:
    """The value of `key` once `process` sets it; :class:`InputError` if that process
    exits first (a process lost otherwise is the watchdog's: it exits this one)."""
    client = _client()
    while True:
        try:
            return str(client.blocking_key_value_get(key, _WAIT_MS))
        except Exception as exc:
            if "DEADLINE" not in str(exc).upper() and "TIMEOUT" not in str(exc).upper():
                raise
        watchdog = _state["watchdog"]
        if watchdog is not None and process in watchdog.exited:
            raise InputError(f"process {process} exited before {what}")


def agree(tag: str, payload: Mapping[str, Any], what: str) -> list[dict[str, Any]]:
    """Every process's `payload` (JSON-able), in process order; `tag` names the round
    (each process must call the same rounds in the same order)."""
    import jax

    number = _state["rounds"].get(tag, 0)
    _state["rounds"][tag] = number + 1
    key = f"{_PREFIX}/{tag}/{number}"
    _client().key_value_set(f"{key}/{jax.process_index()}", json.dumps(payload, sort_keys=True))
    return [json.loads(wait_for(f"{key}/{p}", p, what)) for p in range(jax.process_count())]


def differences(payloads: Sequence[Mapping[str, Any]], keys: Sequence[str] | None = None) -> str:
    """`"--seeds: process 0 has 4, process 1 has 8; ..."` for the keys whose values are
    not the same in every payload (`""` if none)."""
    first = payloads[0]
    names = keys if keys is not None else sorted({k for p in payloads for k in p})
    parts = []
    for name in names:
        values = [p.get(name) for p in payloads]
        if any(v != values[0] for v in values):
            shown = ", ".join(
                f"process {i} has {json.dumps(v)}"
                for i, v in enumerate(values)
                if v != first.get(name) or i == 0
            )
            parts.append(f"{name}: {shown}")
    return "; ".join(parts)


def check_same(tag: str, payload: Mapping[str, Any], what: str) -> list[dict[str, Any]]:
    """:func:`agree`, then :class:`InputError` (on every process) if the payloads differ."""
    payloads = agree(tag, payload, what)
    diff = differences(payloads)
    if diff:
        raise InputError(f"the processes were started with different configurations ({diff})")
    return payloads


def publish(key: str, value: str) -> None:
    """Sets `ojax/KEY` in the coordinator's store (for :func:`wait_for`)."""
    _client().key_value_set(f"{_PREFIX}/{key}", value, True)


def wait_published(key: str, process: int, what: str) -> str:
    """:func:`wait_for` of a key set by :func:`publish`."""
    return wait_for(f"{_PREFIX}/{key}", process, what)


# -------------------------------------------------------------------------- the output folder


class SharedFolder:
    """An output folder (:class:`ojax.app.run_folder.RunFolder`) of a multi-process run:
    every process first agrees on `options` (the run's identity and options: a process
    started differently is refused, naming the difference), then process 0 alone checks,
    prepares and writes the folder; the others wait until it is ready (`writes` is False)."""

    def __init__(self, folder: Any, options: Mapping[str, Any]) -> None:
        import jax

        self.folder, self.options = folder, dict(options)
        self.writes = jax.process_index() == 0

    def check(self) -> None:
        check_same("run", self.options, "starting the run")
        error = ""
        if self.writes:
            try:
                self.folder.check()
            except InputError as exc:
                error = str(exc)
        first = agree("folder", {"error": error}, "checking the output folder")[0]["error"]
        if first:
            raise InputError(first if self.writes else f"(process 0) {first}")

    def __enter__(self) -> SharedFolder:
        if self.writes:
            self.folder.__enter__()
            publish("folder-ready", "1")
        else:
            wait_published("folder-ready", 0, "preparing the output folder")
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
