"""The processes of a multi-process run meet before JAX joins them (:mod:`ojax.sweep.distributed`).

`jax.distributed.initialize` does not say what went wrong when a run is started badly: with a
process missing it waits 300 s in silence and aborts with a C++ stack, a coordinator port
already taken makes it crash, two processes given the same id abort or hang. So, when the
coordinator, the number of processes and the process id are known, the processes first meet on
the coordinator's port over a plain TCP socket:

* process 0 binds the port first (a port another program holds is refused at once, naming it)
  and waits for the others; each connects (retrying until process 0 listens) and says its id,
  the number of processes, its host and pid;
* every few seconds, each process prints on stderr what it waits for (`waiting for process 1
  to join`);
* when every id has arrived, process 0 says "go", closes the port, and every process calls
  `jax.distributed.initialize` on it; a process missing after the peer timeout, an id given to
  two processes or a different number of processes stops every process that came, each with one
  `ojax: error:` line naming the cause (exit status 2).
"""

from __future__ import annotations

import errno
import json
import os
import socket
import sys
import time
from typing import Any

from ojax.validation import InputError

_TAG = "ojax-rendezvous"
_RETRY = 0.2  # seconds between connection attempts and between accepts


def _say(text: str) -> None:
    print(f"ojax: {text}", file=sys.stderr, flush=True)


def _ids(ids: list[int]) -> str:
    shown = ", ".join(map(str, ids[:8])) + (", ..." if len(ids) > 8 else "")
    return f"process{'es' if len(ids) > 1 else ''} {shown}"


def _send(conn: socket.socket, message: dict[str, Any]) -> None:
    try:
        conn.sendall((json.dumps({_TAG: 1, **message}) + "\n").encode())
    except OSError:  # the other end is gone: it learns nothing more
        pass


class _Lines:
    """Newline-separated JSON messages read from a socket, with a deadline per read."""

    def __init__(self, conn: socket.socket) -> None:
        self.conn, self.buffer = conn, b""

    def read(self, timeout: float) -> dict[str, Any] | None:
        """The next message; `None` on timeout; `{}` when the other end closed; a
        `ValueError` when what arrives is not an ojax message."""
        end = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            left = end - time.monotonic()
            if left <= 0:
                return None
            self.conn.settimeout(left)
            try:
                chunk = self.conn.recv(4096)
            except TimeoutError:
                return None
            except OSError:
                return {}
            if not chunk:
                return {}
            self.buffer += chunk
            if len(self.buffer) > 65536:
                raise ValueError("too long a message")
        line, self.buffer = self.buffer.split(b"\n", 1)
        message = json.loads(line)
        if not isinstance(message, dict) or message.get(_TAG) != 1:
            raise ValueError("not an ojax message")
        return message


def _server(port: int) -> socket.socket | None:
    """The port bound on every interface (as JAX's coordinator binds it), or `None` when it
    is in use."""
    try:
        if socket.has_dualstack_ipv6():
            return socket.create_server(("", port), family=socket.AF_INET6, dualstack_ipv6=True)
        return socket.create_server(("", port))
    except OSError as exc:
        if exc.errno in (errno.EADDRINUSE, errno.EACCES):
            return None
        raise InputError(f"--coordinator: cannot listen on port {port} ({exc})") from None


def meet(host: str, port: int, count: int, me: int, timeout: float) -> None:
    """Waits until the `count` processes of the run have met at `host:port` (this one is
    `me`), at most `timeout` seconds; :class:`InputError` naming the cause otherwise."""
    where = f"{host}:{port}"
    label = f"process {me}/{count}"
    hello = {"id": me, "count": count, "host": socket.gethostname(), "pid": os.getpid()}
    if me == 0:
        server = _server(port)
        if server is not None:
            with server:
                return _coordinate(server, where, count, hello, timeout)
    _join(host, port, where, label, hello, timeout, bound=me != 0)


def _coordinate(server: socket.socket, where: str, count: int, hello: dict, timeout: float) -> None:
    """Process 0: accepts the others until every id has come (or the deadline, a duplicate id,
    a different count), then tells each "go" (or why not)."""
    start = time.monotonic()
    interval = min(5.0, max(0.5, timeout / 4))
    shown = start
    came: dict[int, tuple[socket.socket, _Lines, dict]] = {}
    server.settimeout(_RETRY)
    error = None
    try:
        while error is None and len(came) < count - 1:
            now = time.monotonic()
            missing = [i for i in range(1, count) if i not in came]
            if now - start > timeout:
                error = (
                    f"{_ids(missing)} did not join within {timeout:g} s (the peer timeout, "
                    f"$OJAX_PEER_TIMEOUT) at {where}: start {'them' if len(missing) > 1 else 'it'}"
                    f" with the same command and --process-id {missing[0]}"
                )
                break
            if now - shown >= interval:
                shown = now
                _say(
                    f"process 0/{count}: waiting for {_ids(missing)} to join at {where} "
                    f"({now - start:.0f} s of {timeout:g} s)"
                )
                for conn, _, _ in came.values():
                    _send(conn, {"missing": missing})
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            lines = _Lines(conn)
            try:
                other = lines.read(5.0) or {}
            except ValueError:
                conn.close()  # not an ojax process: ignored
                continue
            error = _refusal(other, came, count, hello)
            if error is None:
                came[int(other["id"])] = (conn, lines, other)
                _send(conn, {"missing": [i for i in range(1, count) if i not in came]})
            else:
                _send(conn, {"error": error})
                conn.close()
        for conn, _, _ in came.values():
            _send(conn, {"error": error} if error else {"go": True})
        for conn, lines, _ in came.values():  # they close first: the port is free for JAX
            try:
                lines.read(2.0)
            except ValueError:
                pass
            conn.close()
    finally:
        for conn, _, _ in came.values():
            conn.close()
    if error:
        raise InputError(f"process 0/{count}: {error}")


def _who(message: dict) -> str:
    return f"pid {message.get('pid')} on {message.get('host')}"


def _refusal(other: dict, came: dict, count: int, hello: dict) -> str | None:
    """Why a newcomer stops the run (`None`: it joins)."""
    pid, n = other.get("id"), other.get("count")
    if not isinstance(pid, int) or not isinstance(n, int):
        return f"a process sent a malformed greeting ({_who(other)})"
    if n != count:
        return (
            f"the processes were started with different --num-processes (process 0 has "
            f"{count}, process {pid} ({_who(other)}) has {n})"
        )
    if pid == 0 or pid in came:
        first = hello if pid == 0 else came[pid][2]
        return (
            f"--process-id {pid} was given to two processes ({_who(first)} and {_who(other)}); "
            f"give each of the {count} processes its own id in 0..{count - 1}"
        )
    if not 0 < pid < count:
        return f"--process-id {pid} is outside 0..{count - 1} ({_who(other)})"
    return None


def _join(
    host: str, port: int, where: str, label: str, hello: dict, timeout: float, bound: bool
) -> None:
    """A process other than 0 (or a second process 0, whose bind failed): connects to the
    coordinator, says who it is, and waits for "go"."""
    start = time.monotonic()
    interval = min(5.0, max(0.5, timeout / 4))
    shown, waiting = start, "the coordinator (process 0) to listen"
    conn = None
    while conn is None:
        if time.monotonic() - start > timeout:
            raise InputError(
                f"{label}: the coordinator (process 0) did not listen at {where} within "
                f"{timeout:g} s (the peer timeout, $OJAX_PEER_TIMEOUT): start it, or check "
                "--coordinator"
            )
        try:
            conn = socket.create_connection((host, port), timeout=1.0)
        except OSError:
            if not bound:  # process 0 could not bind, and nobody answers: another program
                raise InputError(
                    f"{label}: --coordinator {where}: port {port} is already in use on this "
                    "host by another program; choose a free port"
                ) from None
            time.sleep(_RETRY)
        if time.monotonic() - shown >= interval:
            shown = time.monotonic()
            _say(f"{label}: waiting for {waiting} at {where}")
    with conn:
        _send(conn, hello)
        lines = _Lines(conn)
        answered = False  # an ojax coordinator answers a greeting at once
        while True:
            left = start + timeout + 10.0 - time.monotonic()  # process 0 decides at the timeout
            try:
                message = lines.read(max(0.1, min(interval, left)) if answered else 5.0)
            except ValueError:
                raise InputError(
                    f"{label}: --coordinator {where}: port {port} is held by a program other "
                    "than ojax (its answer is not ojax's); choose a free port"
                ) from None
            if not answered and not message:  # silence, or closed at once: not ojax
                raise InputError(
                    f"{label}: --coordinator {where}: port {port} is held by a program other "
                    "than ojax (it does not answer as process 0 would); choose a free port"
                )
            if message is None:
                if left <= 0:
                    raise InputError(f"{label}: the coordinator at {where} stopped answering")
                continue
            if message == {}:
                raise InputError(f"{label}: the coordinator (process 0) at {where} went away")
            answered = True
            if "error" in message:
                raise InputError(f"{label}: {message['error']}")
            if message.get("go"):
                return
            missing = message.get("missing")
            if isinstance(missing, list) and missing:
                _say(f"{label}: waiting for {_ids(missing)} to join at {where}")


__all__ = ["meet"]
