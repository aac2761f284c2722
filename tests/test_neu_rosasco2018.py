"""The neu-rosasco2018 experiment in its quick configuration: names, shapes, the identity."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ojax.app.files import write_result
from ojax.experiments import EXPERIMENTS, ExperimentConfig

DATASETS = ("identity", "ill-conditioned", "well-conditioned")
METHODS = ("geometric", "ridge-sgd", "tail", "polyak", "ridge", "ridge-sgd-last",
           "geometric-known-cov")  # fmt: skip


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("neu")
    config = ExperimentConfig(name="neu-rosasco2018", seeds=3, out=out, quick=True, quiet=True)
    result = EXPERIMENTS["neu-rosasco2018"].load()(config)
    write_result(config, result, wall_seconds=0.0)
    return config, result


def test_rows_use_the_interface_names(quick_run):
    _, result = quick_run
    rows = {(r.dataset, r.method, r.metric): r for r in result.rows}
    for dataset in DATASETS[1:]:
        for method in METHODS:
            row = rows[(dataset, method, "excess_risk")]
            assert row.n_seeds == 3
            assert np.isfinite(row.mean) and row.mean > 0
    for method in ("geometric", "ridge-sgd-last", "ridge"):  # the identity is about v_n
        assert ("identity", method, "identity_error") in rows
    assert {r.dataset for r in result.rows} == set(DATASETS)
    assert {r.method for r in result.rows} <= set(METHODS)
    assert {r.metric for r in result.rows} == {"excess_risk", "identity_error"}


def test_identity_and_ridge_limit_hold(quick_run):
    _, result = quick_run
    rows = {(r.dataset, r.method): r.mean for r in result.rows if r.dataset == "identity"}
    assert rows[("identity", "geometric")] < 1e-12  # exact means, float64
    assert rows[("identity", "ridge")] < 1e-8  # the ridge limit
    extra = result.extra_config["identity"]
    assert extra["monte_carlo_max_z"] < 4.5  # Monte Carlo means within 4.5 standard errors


def test_the_regularized_comparator_is_averaged(quick_run):
    """The paper compares geometric averaging with averaged regularized SGD: the averaged runs
    are at least as good as geometric averaging's (within 10 %), where the last iterate of
    regularized SGD is several times worse on the well-conditioned problem."""
    _, result = quick_run
    rows = {(r.dataset, r.method): r.mean for r in result.rows if r.metric == "excess_risk"}
    for dataset in DATASETS[1:]:
        assert rows[(dataset, "ridge-sgd")] < 1.1 * rows[(dataset, "geometric")], dataset
    well = "well-conditioned"
    assert rows[(well, "ridge-sgd-last")] > 3 * rows[(well, "ridge-sgd")]
    assert rows[(well, "geometric-known-cov")] > 0  # the Sigma-known iteration ran


def test_curves_against_lambda_and_the_choice(quick_run):
    config, result = quick_run
    for dataset in DATASETS[1:]:
        lams = np.asarray(result.extra_config[dataset]["lams"])
        geo = result.curves[f"{dataset}/geometric/excess_risk_vs_lambda"]
        assert geo.shape == (3, len(lams))
        chosen = result.curves[f"{dataset}/geometric/excess_risk"][:, -1]
        # the held-out choice is one of the points of the path
        assert np.all(np.any(np.isclose(geo, chosen[:, None], rtol=1e-6), axis=1))
        if dataset == "well-conditioned":
            # strong regularization shrinks to w_0 = 0: excess risk -> ||w*||_Sigma^2 > the best
            assert np.all(geo[:, -1] > geo.min(axis=1))
        else:
            # the noise-dominated regime: closed-form ridge needs lambda clearly > 0
            ridge = result.curves[f"{dataset}/ridge/excess_risk_vs_lambda"].mean(axis=0)
            assert np.argmin(ridge) > 0 and ridge.min() < 0.25 * ridge[0]
            assert np.ptp(geo.mean(axis=0)) > 0  # the path responds to lambda
    files = {p.name for p in config.out.iterdir()}
    assert {"results.csv", "curves.npz", "config.json", "identity.png"} <= files
    assert "ill-conditioned_noise_sweep.png" in files
    sweep = result.extra_config["ill-conditioned"]["noise_sweep"]
    assert [row["kappa"] for row in sweep] == [1.0, 4.0]
    assert all(np.isfinite(row[m][0]) for row in sweep for m in METHODS)
    info = json.loads((config.out / "config.json").read_text())
    assert info["speed"]["num_lambdas"] == 100
