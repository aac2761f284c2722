"""scripts/bench_gpu.py at its test size on the CPU: every learner runs, the JSON and the table
are written, the backend is named, the memory guard splits a size into chunks, and the
benchmarks page shows the GPU table when the JSON exists."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _script(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def bench():
    return _script("bench_gpu")


@pytest.fixture(scope="module")
def report(bench, tmp_path_factory):
    out = tmp_path_factory.mktemp("bench_gpu")
    assert bench.main(["--quick", "--no-main-job", "--out", str(out)]) == 0
    return json.loads((out / "bench.json").read_text()), (out / "bench.md").read_text()


def test_quick_run_writes_every_learner(bench, report):
    result, table = report
    assert result["benchmark"] == "gpu" and result["backend"] == "cpu"
    assert result["device"].startswith("cpu")
    assert [r["learner"] for r in result["rows"]] == list(bench.LEARNERS)
    for row in result["rows"]:
        assert row["streams"] == 8 and row["chunks"] == 1
        assert row["steps"] == (bench.QUICK_POOL if row["learner"] == "kernel OTL" else 16)
        assert row["steps_per_second"] > 0 and row["ojax_compile_seconds"] > 0
        assert row["steps_per_second"] == pytest.approx(8 * row["steps"] / row["ojax_seconds"])
    assert "main_job" not in result
    for label in bench.LEARNERS:
        assert f"| {label} |" in table
    assert "cpu:cpu" in table


def test_memory_guard_splits_streams_into_chunks(bench):
    per_stream = bench.bytes_per_stream(bench.jax.random.key(0), "OGD", 16)
    row = bench.bench_learner("OGD", 8, 16, 8, 1, budget=3 * per_stream)
    assert row["chunks"] == 4 and row["streams"] == 8  # 8 -> 4 -> 2 streams per chunk
    assert row["estimated_bytes_per_stream"] == per_stream


def test_main_job_line_and_cpu_note_in_the_table(bench, report):
    result = dict(report[0], note="backend cpu: no GPU")
    result["main_job"] = {"experiment": "denevi2020-synthetic", "quick": False}
    result["main_job"].update(cold_seconds=21.0, warm_seconds=9.5)
    text = bench.markdown(result)
    assert "`ojax run denevi2020-synthetic`: cold 21.0 s, warm 9.5 s" in text
    assert "backend cpu: no GPU" in text


def test_benchmarks_page_shows_the_gpu_table(report, tmp_path):
    page = _script("make_benchmarks_page")
    store = tmp_path / "docs" / "benchmarks"
    store.mkdir(parents=True)
    (store / "gpu-cuda-h200.json").write_text(json.dumps(report[0]))
    found = page.collect([tmp_path / "no-results"], tmp_path / "docs")
    text = page.page(found, figure=False)
    assert "## `gpu`" in text and "| OGD | 16 |" in text
    assert "8e+00 streams" in text
