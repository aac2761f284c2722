"""Multi-process runs (ojax.sweep.distributed): two local processes on a localhost coordinator,
one mesh over both (gloo CPU collectives).

Each test starts real processes (``python -m ojax.app.cli`` or tests/distributed_worker.py) on a
free port, with timeouts, and kills whatever is left at the end. No test holds a process to a
tight wall-clock limit (the machine may be loaded): a bounded failure is one that ends before
the test's own generous timeout.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest
from conftest import TEST_XLA_FLAGS, subprocess_env
from tolerances import scaled_atol

from ojax.app.cli import main
from ojax.sweep import distributed

ROOT = Path(__file__).resolve().parents[1]
WORKER = Path(__file__).with_name("distributed_worker.py")
SWEEP = [
    "sweep", "ogd", "--grid", "learning_rate=0.01,0.1,0.5,1", "--seeds", "3", "--steps", "200",
    "--dim", "3", "--x64", "--quiet",
]  # fmt: skip
ONE, TWO = ["--chunk-size", "1"], ["--chunk-size", "2"]  # one combination per device
BOUND = 120.0  # seconds: what "bounded" means here, far above the timeouts the processes use


def _env(peer_timeout: float = 60) -> dict:
    """The processes' environment: the session's compilation cache, $OJAX_PEER_TIMEOUT."""
    env = subprocess_env(OJAX_PEER_TIMEOUT=str(peer_timeout))
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    # one device per process, whatever the caller's XLA_FLAGS asked; the suite's compile flags kept
    flags = [f for f in env.get("XLA_FLAGS", "").split() if f.split("=")[0] in TEST_XLA_FLAGS]
    env["XLA_FLAGS"] = " ".join(flags)
    return env


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


def _popen(command: list[str], folder: Path | None = None, peer_timeout: float = 60):
    """``command`` started in ``folder`` with the processes' environment, output captured."""
    return subprocess.Popen(
        command,
        env=_env(peer_timeout),
        cwd=folder,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _launch(folder: Path, per_process, delay=0.0, small=False, peer_timeout=60, port=None):
    """One process per entry of ``per_process`` (its ``ojax`` arguments) through
    tests/distributed_worker.py, on one coordinator, in ``folder``; ``small``: the worker's
    ``--small`` (a two-method denevi2020-synthetic)."""
    port, count = port or _free_port(), len(per_process)
    procs = []
    for pid, args in enumerate(per_process):
        flags = ["--coordinator", f"localhost:{port}", "--num-processes", str(count)]
        options = ["--delay", str(delay), *(["--small"] if small else [])]
        command = [sys.executable, str(WORKER), *options, "--", *args, *flags]
        procs.append(_popen([*command, "--process-id", str(pid)], folder, peer_timeout))
    return procs


def _kill(procs: list[subprocess.Popen]) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        with contextlib.suppress(Exception):
            proc.communicate(timeout=10)


@pytest.fixture
def launch(tmp_path):
    """``launch(args_of_each_process, **options)`` -> the processes of :func:`_launch` in
    ``tmp_path`` (killed at teardown)."""
    started: list[subprocess.Popen] = []

    def start(per_process, **options):
        procs = _launch(tmp_path, per_process, **options)
        started.extend(procs)
        return procs

    yield start
    _kill(started)


def _finish(procs: list[subprocess.Popen], timeout: float = 240) -> list[tuple[int, str]]:
    """Every process's (status, stderr); kills them all past ``timeout``."""
    deadline, results = time.monotonic() + timeout, []
    for proc in procs:
        try:
            _, err = proc.communicate(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            for p in procs:
                p.kill()
            pytest.fail(f"a process did not finish within {timeout} s")
        results.append((proc.returncode, err))
    return results


def _single(tmp_path: Path, args: list[str], small: bool = False) -> None:
    """``ojax ARGS`` in one process; ``small``: the worker's ``--small``."""
    command = [str(WORKER), "--small", "--"] if small else ["-m", "ojax.app.cli"]
    done = subprocess.run(
        [sys.executable, *command, *args],
        env=_env(),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr


def _outputs(out: Path) -> tuple[dict[str, np.ndarray], str]:
    with np.load(out / "curves.npz") as z:
        return {k: z[k] for k in z.files}, (out / "results.csv").read_text()


def _chunks(out: Path) -> dict[str, tuple[int, int]]:
    return {
        p.name: (p.stat().st_mtime_ns, p.stat().st_ino) for p in out.glob(".sweep/*/chunk-*.npz")
    }


def _error_line(status: int, err: str, expected_status: int = 2) -> str:
    """The one `ojax: error:` line of a process that stopped with `expected_status`."""
    assert status == expected_status, err
    assert "Traceback" not in err, err
    errors = [line for line in err.splitlines() if line.startswith("ojax: error:")]
    assert len(errors) == 1, err
    return errors[0]


@pytest.mark.parametrize(
    "flags, named",
    [
        ("--coordinator localhost:1 --num-processes 2 --process-id 2", "--process-id"),
        ("--coordinator localhost --num-processes 2 --process-id 0", "--coordinator"),
        ("--coordinator h:70000 --num-processes 2 --process-id 0", "--coordinator"),
        ("--num-processes 0", "--num-processes"),
        ("--process-id -1", "--process-id"),
    ],
)
def test_bad_flags_exit_2_before_anything_runs(tmp_path, capsys, flags, named):
    out = tmp_path / "out"
    assert main([*SWEEP, "--out", str(out), *flags.split()]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ojax: error:") and named in err and len(err.strip().splitlines()) == 1
    assert not out.exists() and not distributed.active()


def test_processes_started_differently_refuse_together(tmp_path, launch):
    out = str(tmp_path / "out")
    procs = launch([[*SWEEP, "--out", out], [*SWEEP, "--out", out, "--steps", "300"]])
    for status, err in _finish(procs, timeout=BOUND):
        line = _error_line(status, err)
        assert "different configurations" in line and "--steps" in line and "200" in line
    assert not (tmp_path / "out").exists()


def test_denevi_quick_on_two_processes_equals_one_to_rounding(tmp_path, launch):
    """An experiment of several sweeps (two of denevi2020-synthetic's methods, one of each kind
    of cell: see tests/distributed_worker.py), each chunk one program over both processes.

    Compared to rounding: the chunk size comes from the memory budget and the sweeps are small,
    so a device holds all of a chunk's n combinations in one process and n / 2 in each of two;
    XLA compiles another vector width for the per-device batch, which may round float64
    results differently in the last ulps (`ojax sweep ogd` with 2 combinations per device
    against 1 differs by ~1e-16 relative in its average loss; here the bits agree). With the
    same combinations per device the numbers must be the same bits (the next test)."""
    args = ["run", "denevi2020-synthetic", "--quick", "--x64", "--quiet"]
    _single(tmp_path, [*args, "--out", "one"], small=True)
    procs = launch([[*args, "--out", "two"]] * 2, small=True)
    (status0, err0), (status1, err1) = _finish(procs)
    assert status0 == 0 and status1 == 0, err0 + err1
    assert "process 1/2 finished; process 0 writes" in err1
    (one, one_csv), (two, two_csv) = _outputs(tmp_path / "one"), _outputs(tmp_path / "two")
    assert sorted(one) == sorted(two) and one
    for name in one:
        np.testing.assert_allclose(
            two[name], one[name], rtol=1e-12, atol=scaled_atol(one[name]), err_msg=name
        )
    rows = [line.split(",") for line in one_csv.splitlines()]
    other = [line.split(",") for line in two_csv.splitlines()]
    assert [r[:4] for r in rows] == [r[:4] for r in other]  # the same rows, in order
    for a, b in zip(rows[1:], other[1:]):
        np.testing.assert_allclose(np.float64(b[4:6]), np.float64(a[4:6]), rtol=1e-12, atol=1e-15)


def test_killed_process_stops_the_other_and_a_rerun_resumes_bit_for_bit(tmp_path, launch):
    _single(tmp_path, [*SWEEP, *ONE, "--out", "one"])
    out = tmp_path / "two"
    procs = launch([[*SWEEP, *TWO, "--out", "two"]] * 2, delay=1.0)
    deadline = time.monotonic() + BOUND
    while len(_chunks(out)) < 2:
        assert all(p.poll() is None for p in procs), _finish(procs)
        assert time.monotonic() < deadline, "no chunk appeared"
        time.sleep(0.05)
    procs[1].send_signal(signal.SIGKILL)
    killed = time.monotonic()
    (status, err), _ = _finish(procs, timeout=BOUND)
    print(f"process 0 stopped {time.monotonic() - killed:.1f} s after process 1 was killed")
    line = _error_line(status, err, distributed.PEER_LOST_STATUS)
    assert "process 0/2: a step across the processes failed" in line, line
    assert "re-run the same command" in line
    before = _chunks(out)
    assert 2 <= len(before) < 6  # 12 combinations in chunks of 2
    procs = launch([[*SWEEP, *TWO, "--out", "two"]] * 2)
    for status, err in _finish(procs):
        assert status == 0, err
    after = _chunks(out)
    assert len(after) == 6
    assert all(after[name] == stamp for name, stamp in before.items())  # none recomputed
    assert not list(out.glob(".sweep/*/.tmp-*"))
    (one, one_csv), (two, two_csv) = _outputs(tmp_path / "one"), _outputs(out)
    assert sorted(one) == sorted(two) and one
    assert all(np.array_equal(one[k], two[k]) for k in one)  # bit for bit
    assert one_csv == two_csv


@pytest.mark.parametrize(
    "env, expected",
    [
        ({}, False),
        ({"JAX_COORDINATOR_ADDRESS": "host0:1234"}, True),
        ({"SLURM_NTASKS": "4", "SLURM_PROCID": "2"}, True),
        ({"SLURM_NTASKS": "1", "SLURM_PROCID": "0"}, False),  # a one-task job: one process
        ({"SLURM_NTASKS": "4"}, False),  # the batch script itself, outside srun
        ({"OMPI_COMM_WORLD_SIZE": "2"}, True),
    ],
)
def test_the_environment_of_a_multi_process_job_is_detected(monkeypatch, env, expected):
    for name in ("JAX_COORDINATOR_ADDRESS", "SLURM_NTASKS", "SLURM_PROCID", "OMPI_COMM_WORLD_SIZE"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert distributed.detected() is expected


def test_coordinator_and_differences_are_parsed_and_named(monkeypatch):
    assert distributed.parse_coordinator("node-01.cluster:12345") == ("node-01.cluster", 12345)
    assert distributed.parse_coordinator("[::1]:80") == ("::1", 80)
    for bad in ("node01", "node01:", ":80", "node01:0", "a b:1"):
        with pytest.raises(distributed.InputError, match="--coordinator"):
            distributed.parse_coordinator(bad)
    same = [{"--seeds": 4, "--x64": True}, {"--seeds": 4, "--x64": True}]
    assert distributed.differences(same) == ""
    text = distributed.differences([{"--seeds": 4, "a": 1}, {"--seeds": 8, "a": 1}, {"a": 1}])
    assert text == "--seeds: process 0 has 4, process 1 has 8, process 2 has null"
    monkeypatch.setenv("OJAX_PEER_TIMEOUT", "7.5")
    assert distributed.peer_timeout_from_env() == 7.5
    monkeypatch.setenv("OJAX_PEER_TIMEOUT", "0.5")  # JAX counts whole seconds
    with pytest.raises(distributed.InputError, match="at least 1"):
        distributed.peer_timeout_from_env()


# -------------------------------------------------- runs that wait out a timeout


def _start_one(folder: Path, port: int, count: int, pid: int, peer_timeout: float):
    flags = ["--coordinator", f"localhost:{port}", "--num-processes", str(count)]
    command = [sys.executable, "-m", "ojax.app.cli", *SWEEP, "--out", "out", *flags]
    return _popen([*command, "--process-id", str(pid)], folder, peer_timeout)


def _jax_alone(port: int) -> subprocess.Popen:
    """Process 0 of 2 starting through `jax.distributed.initialize` alone (3 s timeout)."""
    code = (
        "import jax; jax.distributed.initialize("
        f"'localhost:{port}', 2, 0, initialization_timeout=3)"
    )
    return _popen([sys.executable, "-c", code])


def _held_port(stack: contextlib.ExitStack) -> int:
    """A port that a listening socket of this process holds until ``stack`` closes."""
    taken = stack.enter_context(socket.socket())
    taken.bind(("localhost", 0))
    taken.listen()
    return taken.getsockname()[1]


class Waited(NamedTuple):
    """What a run of :func:`waited` left: each process's (status, stderr), its folder, the
    port it was given (0 for the hung run, whose launch picked one), and (the hung run) the
    chunks written when process 1 stopped / at the end (None: it never stopped)."""

    results: list[tuple[int, str]]
    folder: Path
    port: int
    chunks: tuple[int, int] | None = None


@pytest.fixture(scope="module")
def waited(tmp_path_factory) -> dict[str, Waited]:
    """This module's runs that end by waiting out a timeout (a peer's, a start's, JAX's
    heartbeat), started side by side: each spends its seconds waiting, not computing, so
    together they take about the longest wait (the heartbeat's, ~15 s), not the sum (~40 s
    one after another). Each test checks its own run."""
    root = tmp_path_factory.mktemp("waited")
    folders = {name: root / name for name in ("hung", "missing", "held")}
    for folder in folders.values():
        folder.mkdir()
    with contextlib.ExitStack() as stack:
        hung = _launch(
            folders["hung"], [[*SWEEP, *TWO, "--out", "two"]] * 2, delay=1.0, peer_timeout=10
        )
        stack.callback(_kill, hung)
        free, held = [_free_port(), _free_port()], [_held_port(stack), _held_port(stack)]
        missing, taken = folders["missing"], folders["held"]
        runs = {  # name: (folder, port, processes)
            "jax: a process missing": (root, free[0], [_jax_alone(free[0])]),
            "jax: the port in use": (root, held[0], [_jax_alone(held[0])]),
            "missing": (missing, free[1], [_start_one(missing, free[1], 2, 0, 5)]),
            "held": (taken, held[1], [_start_one(taken, held[1], 2, pid, 5) for pid in (0, 1)]),
        }
        for _, _, procs in runs.values():
            stack.callback(_kill, procs)
        # the hung run: process 1 stops answering (SIGSTOP) once a chunk is written
        out, deadline = folders["hung"] / "two", time.monotonic() + BOUND
        while len(_chunks(out)) < 1 and all(p.poll() is None for p in hung):
            assert time.monotonic() < deadline, "no chunk appeared"
            time.sleep(0.05)
        stopped = None
        if hung[1].poll() is None:
            hung[1].send_signal(signal.SIGSTOP)
            stopped = len(_chunks(out))
        waits = {
            name: Waited(_finish(procs, timeout=BOUND), folder, port)
            for name, (folder, port, procs) in runs.items()
        }
        results = _finish(hung[:1], timeout=BOUND)
        chunks = None if stopped is None else (stopped, len(_chunks(out)))
        waits["hung"] = Waited(results, folders["hung"], 0, chunks)
    return waits


def test_a_hung_process_ends_the_other_through_jax_heartbeat(waited):
    """A process that stops answering without closing its connections (SIGSTOP; a host lost
    looks the same) leaves the other blocked in a collective: JAX's coordination service
    ends it once the heartbeat (the peer timeout) runs out, naming the silent process."""
    run = waited["hung"]
    ((status, err),) = run.results
    assert run.chunks is not None, f"the processes ended before a chunk was written: {err}"
    assert status == -signal.SIGABRT, err
    assert re.search(r"stopped sending heartbeats\):\s*1\b|Task 1 heartbeat timeout", err), err
    assert 1 <= run.chunks[0] <= run.chunks[1] < 6


@pytest.mark.parametrize("cause", ["a process missing", "the port in use"])
def test_jax_alone_does_not_name_what_stops_a_start(waited, cause):
    """Why :func:`ojax.sweep.distributed.initialize` keeps its two small wrappers (its start
    timer, its port check): with a process missing, `jax.distributed.initialize` ends the
    process after its timeout with SIGABRT and a C++ stack that names no process; on a port
    another program holds, JAX's service crashes the process (SIGSEGV) or raises an error that
    names no port, by turns. Were JAX to name them, the wrappers could go."""
    run = waited[f"jax: {cause}"]
    ((status, err),) = run.results
    if cause == "a process missing":
        assert status == -signal.SIGABRT, err
        assert "DEADLINE_EXCEEDED" in err and "RegisterTask" in err
        assert not re.search(r"task[: ]?1\b|process 1\b", err), err
    else:
        assert status in (-signal.SIGSEGV, 1), err
        raised = [line for line in err.splitlines() if "Error:" in line]  # Python's last line
        assert status != 1 or (raised and str(run.port) not in raised[-1]), err


def test_a_missing_process_is_named_within_the_peer_timeout(waited):
    run = waited["missing"]
    ((status, err),) = run.results
    line = _error_line(status, err)
    assert "process 0/2: process 1 did not join within 5 s at localhost:" in line, line
    assert "--process-id" in line and "$OJAX_PEER_TIMEOUT" in line
    assert not (run.folder / "out").exists()


def test_a_coordinator_port_in_use_is_refused(waited):
    run = waited["held"]
    (status0, err0), (status1, err1) = run.results
    line = _error_line(status0, err0)
    assert f"--coordinator localhost:{run.port}: process 0 cannot listen on port {run.port}" in line
    assert "(Address already in use); choose a free port" in line
    line = _error_line(status1, err1)  # process 1 reached the other program: it never starts
    assert "process 1/2: the run did not start within 5 s" in line, line
    assert "or the port is held by another program" in line
    assert not (run.folder / "out").exists()
