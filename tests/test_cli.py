"""The `ojax` command: outputs of INTERFACE.md and exit status 2 on bad input."""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import numpy as np
import pytest

from ojax import cli
from ojax.experiments import EXPERIMENTS
from ojax.experiments.output import RESULT_COLUMNS


def test_list_prints_every_experiment(capsys):
    assert cli.main(["list"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert [line.split()[0] for line in lines] == list(EXPERIMENTS)
    assert all(len(line.split(None, 1)) == 2 for line in lines)


def test_run_basics_quick_writes_the_contract(tmp_path):
    out = tmp_path / "basics"
    assert cli.main(["run", "basics", "--quick", "--seeds", "3", "--out", str(out), "--quiet"]) == 0
    with open(out / "results.csv") as f:
        rows = list(csv.reader(f))
    assert tuple(rows[0]) == RESULT_COLUMNS
    body = [dict(zip(rows[0], r)) for r in rows[1:]]
    datasets = {r["dataset"] for r in body}
    assert {
        "ftl-quadratic",
        "ftl-linear",
        "ftrl-linear",
        "ogd",
        "hedge",
        "experts-adversarial",
        "experts-realizable",
    } <= datasets
    assert {r["metric"] for r in body} == {"regret", "bound"}
    assert all(r["experiment"] == "basics" and r["n_seeds"] == "3" for r in body)
    curves = np.load(out / "curves.npz")
    for r in body:
        curve = curves[f"{r['dataset']}/{r['method']}/{r['metric']}"]
        assert curve.shape[0] == 3
        np.testing.assert_allclose(curve[:, -1].mean(), float(r["mean"]), rtol=1e-12)
    figures = sorted(p.name for p in out.glob("*.png"))
    assert len(figures) == len(datasets)
    config = json.loads((out / "config.json").read_text())
    for field in ("wall_seconds", "jax_version", "ojax_version", "device", "seeds", "quick"):
        assert field in config


@pytest.mark.parametrize(
    "argv,message",
    [
        (["run", "no-such-experiment"], "unknown experiment 'no-such-experiment'"),
        (["run", "basics", "--seeds", "-3"], "--seeds: must be a positive integer, got '-3'"),
        (["run", "basics", "--data-dir", "/no/such/folder"], "--data-dir"),
        (["run", "basics", "--devices", "999"], "--devices must be at most"),
        (["run", "basics", "--memory-budget", "lots"], "must be a size"),
        (["frobnicate"], "invalid choice"),
    ],
)
def test_bad_input_exits_2_with_one_line(argv, message, tmp_path, capsys):
    out = tmp_path / "never"
    assert cli.main([*argv, "--out", str(out)] if argv[0] == "run" else argv) == 2
    err = capsys.readouterr().err
    assert message in err
    assert len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_console_script_is_installed(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "ojax.cli", "list"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0 and "basics" in done.stdout
    done = subprocess.run(
        [sys.executable, "-m", "ojax.cli", "run", "nope"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and done.stderr.count("\n") == 1
