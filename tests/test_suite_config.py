"""The test-suite's own configuration: it runs with and without pytest-xdist."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _collect(*extra: str) -> subprocess.CompletedProcess:
    """pytest on this file (collection only, unless `extra` runs a test by `-k`)."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    command = [sys.executable, "-m", "pytest", "tests/test_suite_config.py", "-q"]
    if "-k" not in extra:
        command.append("--collect-only")
    return subprocess.run(
        [*command, *extra], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )


def test_the_suite_runs_without_xdist():
    done = _collect("-p", "no:xdist")  # `unrecognized arguments: -n` when addopts held `-n 2`
    assert done.returncode == 0, done.stdout + done.stderr
    assert "unrecognized arguments" not in done.stderr


def test_two_workers_by_default_where_xdist_is_loaded():
    done = _collect("-k", "no_option", "-p", "no:randomly")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "bringing up nodes" in done.stdout + done.stderr  # the run went through xdist


def test_no_option_of_a_plugin_in_addopts():
    text = (ROOT / "pyproject.toml").read_text()
    (line,) = [line for line in text.splitlines() if line.startswith("addopts")]
    assert " -n " not in f"{line} ", line
