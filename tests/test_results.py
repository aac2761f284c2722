"""``ojax.results.load``: a finished run's tidy table (a DataFrame with pandas, records
without) and its curves with their positions, read back equal to what the run computed."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from ojax import results
from ojax.app import cli, sweep_metrics
from ojax.validation import InputError


@pytest.fixture(scope="module")
def sweep_out(tmp_path_factory):
    out = tmp_path_factory.mktemp("run") / "sweep"
    argv = ["sweep", "ogd_square", "--grid", "learning_rate=0.01,0.1,1", "--seeds", "3"]
    assert cli.main([*argv, "--steps", "80", "--quiet", "--out", str(out)]) == 0
    return out


def test_records_without_pandas(sweep_out, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # as if pandas were not installed
    run = results.load(sweep_out)
    assert isinstance(run.table, list) and run.experiment == "sweep"
    assert tuple(run.table[0]) == results.RESULT_COLUMNS
    for row in run.table:
        curve = run.curve(row["dataset"], row["method"], row["metric"])
        assert row["n_seeds"] == curve.values.shape[0] == 3
        assert row["mean"] == pytest.approx(curve.values[:, -1].mean(), rel=1e-12)
        np.testing.assert_array_equal(curve.steps, sweep_metrics.checkpoints(80))
    with pytest.raises(InputError, match=r"ojax\[pandas\]"):
        results.load(sweep_out, pandas=True)
    with pytest.raises(InputError, match="no curve"):
        run.curve("nowhere", "x", "y")


def test_dataframe_with_pandas(sweep_out):
    pd = pytest.importorskip("pandas")
    run = results.load(sweep_out)
    assert isinstance(run.table, pd.DataFrame)
    records = results.load(sweep_out, pandas=False).table
    assert run.table.to_dict("records") == records
    wide = run.table.pivot(index="method", columns="metric", values="mean")
    assert wide.shape == (3, 3)  # average_loss, cumulative_loss, regret


def test_a_folder_without_a_run_is_refused(tmp_path):
    with pytest.raises(InputError, match="not a folder"):
        results.load(tmp_path / "missing")
    (tmp_path / "results.csv").write_text("experiment\n")
    with pytest.raises(InputError, match="no curves.npz, config.json"):
        results.load(tmp_path)


def test_old_curves_files_get_positions_one_to_length(tmp_path):
    np.savez(tmp_path / "curves.npz", **{"d/m/loss": np.ones((2, 4))})
    (curve,) = results.read_curves(tmp_path / "curves.npz").values()
    np.testing.assert_array_equal(curve.steps, [1, 2, 3, 4])
