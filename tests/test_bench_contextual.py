"""scripts/bench_contextual.py at its quick size: ojax's rows always, MABWiser's where installed
(LinUCB then chooses the same arm as ojax's float64 run at every round)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _script():
    spec = importlib.util.spec_from_file_location(
        "bench_contextual", ROOT / "scripts" / "bench_contextual.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_quick_run_writes_both_learners_at_each_order_count(tmp_path, capsys):
    bench = _script()
    assert bench.main(["--quick", "--out", str(tmp_path), "--rows", "120"]) == 0
    result = json.loads((tmp_path / "bench.json").read_text())
    rows = result["rows"]
    assert [(r["learner"], r["orders"]) for r in rows] == [
        ("linucb", 1), ("linucb", 4), ("lints", 1), ("lints", 4)
    ]  # fmt: skip
    assert all(0.0 <= r["ojax_pv_loss"] <= 1.0 and r["ojax_seconds"] > 0 for r in rows)
    assert result["rounds"] == 120 and result["arms"] >= 2
    if importlib.util.find_spec("mabwiser") is None:
        assert not result["mabwiser"] and "baseline_seconds" not in rows[0]
        return
    equality = result["linucb_equality"]
    assert equality["same_arm_rounds"] == equality["rounds"] == 120 * equality["orders"]
    assert all(0.0 <= r["baseline_pv_loss"] <= 1.0 and r["ratio"] > 0 for r in rows)
    assert "the same arm as MABWiser at" in capsys.readouterr().out
