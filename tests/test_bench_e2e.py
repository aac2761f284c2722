"""scripts/bench_e2e.py's ``--profile`` wrapper: it runs ``ojax`` with time stamps of its phases
(a renamed function it patches once left the table empty, without a word); the benchmarks page
shows them."""

from __future__ import annotations

import importlib.util
import json
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from ojax.app import files
from ojax.experiments import EXPERIMENTS, ExperimentResult, ExperimentSpec

ROOT = Path(__file__).resolve().parents[1]


def _script(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _tiny(config):
    """A stand-in experiment (no JAX): one row."""
    result = ExperimentResult()
    result.add("data", "method", "metric", np.arange(config.seeds, dtype=np.float64))
    return result


def test_profile_wrapper_stamps_every_phase_of_a_run(tmp_path, monkeypatch):
    bench = _script("bench_e2e")
    spec = ExperimentSpec(name="tiny", summary="a stand-in", run=_tiny, default_seeds=2)
    monkeypatch.setitem(EXPERIMENTS, "tiny", spec)
    for name in ("write_result", "write_figures"):  # the wrapper patches them: restored after
        monkeypatch.setattr(files, name, getattr(files, name))
    stamps_file, out = tmp_path / "profile.json", tmp_path / "out"
    monkeypatch.setenv("OJAX_E2E_PROFILE", str(stamps_file))
    monkeypatch.setattr(sys, "argv", ["-c", "run", "tiny", "--out", str(out), "--quiet"])
    start = time.perf_counter()
    with pytest.raises(SystemExit) as done:
        exec(compile(bench.PROFILED, "PROFILED", "exec"), {})
    end = time.perf_counter()
    assert done.value.code == 0
    recorded = json.loads(stamps_file.read_text())
    stamps, spent = recorded["stamps"], recorded["spent"]
    # both writers ran through the wrapper's timers: the figures inside the outputs
    assert "outputs_start" in stamps and 0 < spent["figures"] < spent["outputs"]
    config = json.loads((out / "config.json").read_text())
    phases = bench.profile_phases(stamps, spent, config, start, end)
    assert list(phases) == [
        "start-up", "imports", "program loads", "experiment", "outputs", "figures", "exit", "wall"
    ]  # fmt: skip
    assert all(seconds >= 0 for seconds in phases.values()), phases
    assert phases["wall"] == pytest.approx(end - start)


def test_the_page_shows_where_a_warm_runs_seconds_go():
    page = _script("make_benchmarks_page")
    row = {
        "case": "basics", "mode": "quick", "command": "ojax run basics --quick",
        "cold_seconds": 11.6, "warm_seconds": 3.5, "cold_peak_rss_gib": 0.6,
        "warm_peak_rss_gib": 0.4,
    }  # fmt: skip
    assert "Where a warm run's seconds go" not in page.e2e_table([row])  # no --profile
    phases = {"start-up": 0.025, "imports": 0.88, "program loads": 0.661, "experiment": 0.632}
    phases |= {"outputs": 0.007, "figures": 1.31, "exit": 0.275, "wall": 3.79}
    text = page.e2e_table(
        [row, {**row, "command": "ojax run theory --quick", "warm_profile": phases}]
    )
    assert "Where a warm run's seconds go" in text
    assert "| experiment | start-up | imports | program loads | experiment | outputs |" in text
    assert (
        "| `ojax run theory --quick` | 0.03 | 0.88 | 0.66 | 0.63 | 0.01 | 1.31 | 0.28 | 3.79 |"
        in text
    )
