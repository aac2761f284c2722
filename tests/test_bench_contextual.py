"""scripts/bench_contextual.py at its quick size: ojax's rows always, MABWiser's and Vowpal
Wabbit's where installed (MABWiser's LinUCB then chooses the same arm as ojax's float64 run at
every round)."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_quick_run_writes_every_learner_at_each_order_count(tmp_path, capsys, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "scripts"))  # Vowpal Wabbit's workers import it
    bench = importlib.import_module("bench_contextual")
    assert bench.main(["--quick", "--out", str(tmp_path), "--rows", "120"]) == 0
    result = json.loads((tmp_path / "bench.json").read_text())
    rows = result["rows"]
    assert [(r["learner"], r["orders"]) for r in rows] == [
        (name, count) for name in ("linucb", "lints", "epsilon-greedy", "squarecb")
        for count in (1, 4)
    ]  # fmt: skip
    assert all(0.0 <= r["ojax_pv_loss"] <= 1.0 and r["ojax_seconds"] > 0 for r in rows)
    assert all(r["workers"] == 1 and r["ojax_compile_seconds"] > 0 for r in rows)  # one device
    assert result["rounds"] == 120 and result["arms"] >= 2
    installed = {lib for lib in ("mabwiser", "vowpalwabbit") if bench.importable(lib)}
    assert not bench.importable("ojax_no_such_peer")
    assert set(result["peers"]) == installed
    for r in rows:
        peer = bench.PEERS[r["learner"]]
        if peer not in installed:
            assert "baseline_seconds" not in r
            continue
        assert 0.0 <= r["baseline_pv_loss"] <= 1.0 and r["ratio"] > 0
    if "mabwiser" in installed:
        equality = result["linucb_equality"]
        assert equality["same_arm_rounds"] == equality["rounds"] == 120 * equality["orders"]
        assert "the same arm as MABWiser at" in capsys.readouterr().out
