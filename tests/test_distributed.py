"""Multi-process runs (ojax.sweep.distributed): two local processes on a localhost coordinator.

Each test starts real processes (``python -m ojax.app.cli`` or tests/distributed_worker.py) on a
free port, with timeouts, and kills whatever is left at the end; the results of two processes
must equal one process's (the same chunks, so the same numbers bit for bit).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import subprocess_env
from tolerances import scaled_atol

from ojax.app.cli import main
from ojax.sweep import distributed

ROOT = Path(__file__).resolve().parents[1]
WORKER = Path(__file__).with_name("distributed_worker.py")
PEER_TIMEOUT = 4.0  # seconds ($OJAX_PEER_TIMEOUT of the processes started here)
SWEEP = [
    "sweep", "ogd", "--grid", "learning_rate=0.01,0.1,0.5,1", "--seeds", "3", "--steps", "200",
    "--dim", "3", "--chunk-size", "1", "--x64", "--quiet",
]  # fmt: skip


def _env(cache: Path | None = None) -> dict:
    """The processes' environment; their compilation cache the session's (``cache``: another)."""
    env = subprocess_env(OJAX_PEER_TIMEOUT=str(PEER_TIMEOUT))
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    if cache is not None:
        env["OJAX_COMPILATION_CACHE"] = str(cache)
    env.pop("XLA_FLAGS", None)
    return env


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


@pytest.fixture
def launch(tmp_path):
    """``launch(args_of_each_process, delay=0, small=False)`` -> the processes (killed at
    teardown); ``small``: the worker's ``--small`` (a two-method denevi2020-synthetic)."""
    started: list[subprocess.Popen] = []

    def start(
        per_process: list[list[str]], delay: float = 0.0, small: bool = False
    ) -> list[subprocess.Popen]:
        port, count = _free_port(), len(per_process)
        procs = []
        for pid, args in enumerate(per_process):
            flags = ["--coordinator", f"localhost:{port}", "--num-processes", str(count)]
            options = ["--delay", str(delay), *(["--small"] if small else [])]
            command = [sys.executable, str(WORKER), *options, "--", *args, *flags]
            procs.append(
                subprocess.Popen(
                    [*command, "--process-id", str(pid)],
                    env=_env(),
                    cwd=tmp_path,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
            )
        started.extend(procs)
        return procs

    yield start
    for proc in started:
        if proc.poll() is None:
            proc.kill()
        with contextlib.suppress(Exception):
            proc.communicate(timeout=10)


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
    """``ojax ARGS`` in one process (it fills the session's compilation cache, from which the
    processes started next load the same programs); ``small``: the worker's ``--small``."""
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


def _assert_same_results(one: Path, two: Path) -> None:
    a, b = np.load(one / "curves.npz"), np.load(two / "curves.npz")
    assert sorted(a.files) == sorted(b.files) and a.files
    for name in a.files:
        np.testing.assert_allclose(
            b[name], a[name], rtol=1e-12, atol=scaled_atol(a[name]), err_msg=name
        )
    assert (one / "results.csv").read_text() == (two / "results.csv").read_text()


def _chunks(out: Path) -> dict[str, tuple[int, int]]:
    return {
        p.name: (p.stat().st_mtime_ns, p.stat().st_ino) for p in out.glob(".sweep/*/chunk-*.npz")
    }


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
    for status, err in _finish(procs, timeout=120):
        assert status == 2, err
        assert "different configurations" in err and "--steps" in err and "200" in err
    assert not (tmp_path / "out").exists()


def test_denevi_quick_on_two_processes_equals_one(tmp_path, launch):
    """An experiment of several sweeps (two of denevi2020-synthetic's methods, one of each kind
    of cell: see tests/distributed_worker.py), each split between the two processes."""
    args = ["run", "denevi2020-synthetic", "--quick", "--x64", "--quiet"]
    _single(tmp_path, [*args, "--out", "one"], small=True)
    procs = launch([[*args, "--out", "two"]] * 2, small=True)
    (status0, err0), (status1, err1) = _finish(procs)
    assert status0 == 0 and status1 == 0, err0 + err1
    assert "process 1/2 finished; process 0 writes" in err1
    _assert_same_results(tmp_path / "one", tmp_path / "two")
    # process 1 computed chunks too (each chunk file is written by the process computing it)
    assert len(_chunks(tmp_path / "two")) == len(_chunks(tmp_path / "one"))


def test_killed_process_stops_the_other_and_a_rerun_resumes(tmp_path, launch):
    _single(tmp_path, [*SWEEP, "--out", "one"])
    total = len(_chunks(tmp_path / "one"))
    assert total == 12
    out = tmp_path / "two"
    procs = launch([[*SWEEP, "--out", "two"]] * 2, delay=1.0)
    deadline = time.monotonic() + 180
    while len(_chunks(out)) < 3:
        assert all(p.poll() is None for p in procs), _finish(procs)
        assert time.monotonic() < deadline, "no chunk appeared"
        time.sleep(0.05)
    procs[1].send_signal(signal.SIGKILL)
    killed = time.monotonic()
    (status, err), _ = _finish(procs, timeout=60)
    stopped = time.monotonic() - killed
    print(f"process 0 stopped {stopped:.1f} s after process 1 was killed (status {status})")
    assert status == distributed.PEER_LOST_STATUS, err
    assert "process 1 gave no sign of life" in err and "re-run the same command" in err
    assert stopped < 1.5 * PEER_TIMEOUT + 5, stopped  # the documented bound, with slack
    before = _chunks(out)
    assert 3 <= len(before) < total
    procs = launch([[*SWEEP, "--out", "two"]] * 2)
    for status, err in _finish(procs):
        assert status == 0, err
    after = _chunks(out)
    assert len(after) == total
    assert all(after[name] == stamp for name, stamp in before.items())  # none recomputed
    assert not list(out.glob(".sweep/*/.tmp-*"))
    _assert_same_results(tmp_path / "one", out)


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


def test_coordinator_and_differences_are_parsed_and_named():
    assert distributed.parse_coordinator("node-01.cluster:12345") == ("node-01.cluster", 12345)
    assert distributed.parse_coordinator("[::1]:80") == ("::1", 80)
    for bad in ("node01", "node01:", ":80", "node01:0", "a b:1"):
        with pytest.raises(distributed.InputError, match="--coordinator"):
            distributed.parse_coordinator(bad)
    same = [{"--seeds": 4, "--x64": True}, {"--seeds": 4, "--x64": True}]
    assert distributed.differences(same) == ""
    text = distributed.differences([{"--seeds": 4, "a": 1}, {"--seeds": 8, "a": 1}, {"a": 1}])
    assert text == "--seeds: process 0 has 4, process 1 has 8, process 2 has null"


# -------------------------------------------------- a run started badly (issue 20): one line each


def _start_one(tmp_path: Path, port: int, count: int, pid: int) -> subprocess.Popen:
    flags = ["--coordinator", f"localhost:{port}", "--num-processes", str(count)]
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ojax.app.cli",
            *SWEEP,
            "--out",
            "out",
            *flags,
            "--process-id",
            str(pid),
        ],
        env=_env(),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _errors(results: list[tuple[int, str]]) -> list[str]:
    lines = []
    for status, err in results:
        assert status == 2, err
        assert "Traceback" not in err and "Fatal" not in err, err
        errors = [line for line in err.splitlines() if line.startswith("ojax: error:")]
        assert len(errors) == 1, err
        lines.append(errors[0])
    return lines


def test_a_missing_process_is_named_within_the_peer_timeout(tmp_path):
    start = time.monotonic()
    ((status, err),) = _finish([_start_one(tmp_path, _free_port(), 2, 0)], timeout=60)
    elapsed = time.monotonic() - start
    (line,) = _errors([(status, err)])
    assert "process 1 did not join within 4 s (the peer timeout" in line
    waits = [x for x in err.splitlines() if "waiting for process 1 to join at localhost:" in x]
    assert len(waits) >= 2  # every few seconds: what it waits for
    assert elapsed < PEER_TIMEOUT + 15, elapsed  # the start-up of the process, then the timeout
    assert not (tmp_path / "out").exists()


def test_a_coordinator_port_in_use_is_refused(tmp_path):
    with socket.socket() as taken:
        taken.bind(("localhost", 0))
        taken.listen()
        port = taken.getsockname()[1]
        procs = [_start_one(tmp_path, port, 2, 0), _start_one(tmp_path, port, 2, 1)]
        for line in _errors(_finish(procs, timeout=60)):
            assert f"port {port} is held by a program other than ojax" in line
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("ids", [(0, 1, 1), (0, 0)])
def test_two_processes_with_the_same_id_are_refused_naming_it(tmp_path, ids):
    port, count = _free_port(), len(ids)
    procs = []
    for pid in ids:  # process 0 first: it listens
        procs.append(_start_one(tmp_path, port, count, pid))
        time.sleep(0.5)
    for line in _errors(_finish(procs, timeout=60)):
        assert f"--process-id {ids[-1]} was given to two processes" in line
    assert not (tmp_path / "out").exists()
