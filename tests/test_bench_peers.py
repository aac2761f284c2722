"""Smoke test of scripts/bench_peers.py --quick: it runs, skips absent peers cleanly, and writes
bench.json in the INTERFACE.md format (the optional peers need not be installed)."""

from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import subprocess_env

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "bench_peers.py"
ROW_KEYS = {"case", "ojax_seconds", "baseline", "baseline_seconds", "ratio", "ojax_compile_seconds"}


def _run(tmp_path: Path, *extra: str) -> dict:
    out = tmp_path / "bench_peers"
    env = subprocess_env(MPLBACKEND="Agg", JAX_PLATFORMS="cpu")
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--out", str(out), *extra],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "ojax runs" in proc.stdout
    return json.loads((out / "bench.json").read_text())


def _check_format(result: dict) -> None:
    assert result["benchmark"] == "peers"
    assert isinstance(result["device"], str) and result["device"]
    for row in result["rows"]:
        assert ROW_KEYS <= set(row)
        assert row["ojax_seconds"] > 0 and row["baseline_seconds"] > 0
        assert math.isclose(row["ratio"], row["baseline_seconds"] / row["ojax_seconds"])
        assert row["baseline_measured_examples"] <= row["examples"]
    workloads = {run["workload"] for run in result["ojax_runs"]}
    assert workloads == {"pa1-a1a", "lsq-asgd", "param-free"}
    for run in result["ojax_runs"]:
        assert run["examples_per_second"] > 0 and run["streams"] == 2


def test_quick_without_peers(tmp_path):
    result = _run(tmp_path, "--peers", "none")
    _check_format(result)
    # Only ojax-side comparisons remain (optax's cocob in the same scan).
    assert {row["baseline"] for row in result["rows"]} == {"optax contrib.cocob in a scan"}
    assert result["skipped_peers"] == []
    assert set(result["peers_not_requested"]) == {"river", "scikit-learn", "vowpalwabbit"}
    # The results page is generated from it (and from nothing else in tmp_path).
    docs = tmp_path / "docs"
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "make_benchmarks_page.py"),
            "--results",
            str(tmp_path),
            "--docs",
            str(docs),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env=dict(os.environ, MPLBACKEND="Agg"),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    text = (docs / "benchmarks.md").read_text()
    assert "## `peers`" in text and "optax contrib.cocob in a scan" in text
    assert (docs / "benchmarks_throughput.png").stat().st_size > 0
    assert list((docs / "benchmarks").glob("peers-*.json"))


def test_quick_with_installed_peers(tmp_path):
    result = _run(tmp_path)
    _check_format(result)
    installed = {
        name
        for name, mod in (
            ("river", "river"),
            ("scikit-learn", "sklearn"),
            ("vowpalwabbit", "vowpalwabbit"),
        )
        if importlib.util.find_spec(mod) is not None
    }
    assert set(result["skipped_peers"]) == {"river", "scikit-learn", "vowpalwabbit"} - installed
    if "river" not in installed:
        pytest.skip("river is not installed: nothing to compare PA-I mistakes with")
    # river's PA-I is the same algorithm: the same mistakes on the same examples.
    pa = [r for r in result["rows"] if r["baseline"] == "river PAClassifier"]
    assert pa and all(r["metric_abs_diff"] == 0.0 for r in pa)
