"""parameter-free-benchmark: its claims on a small configuration, its outputs, its bad input.

The claims (regression, absolute loss: 1-Lipschitz, so KT's coins stay in [-1, 1]):

* KT's regret is within the log factor of its bound of tuned OGD's at every ``||u||``:
  ``Regret_KT(u) <= eps + sqrt(ln(1 + 24 T^2 ||u||^2 / eps^2)) Regret_OGD*(u)``, the ratio of
  KT's bound ``eps + ||u|| sqrt(T ln(1 + 24 T^2 ||u||^2 / eps^2))`` (Orabona & Pal 2016) to tuned
  OGD's ``||u|| sqrt(T)``; OGD at one fixed step (tuned at ``||u|| = 1``) is not at
  ``||u|| = 1e-2`` and ``1e-1``, where its step is 100x and 10x too large;
* KT does better against tuned OGD than OGD with a step 10x off the tuned one, at every norm;
* COCOB's average loss moves by less than 2x over 8 decades of its constant, OGD's by more than
  10x over its steps.
"""

from __future__ import annotations

import dataclasses
import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ojax import run
from ojax.adapters import linear_predictor
from ojax.app import cli
from ojax.app.files import plot, write_result
from ojax.app.run_folder import RunFolder
from ojax.experiments import EXPERIMENTS, ExperimentConfig
from ojax.experiments import parameter_free_benchmark as pfs
from ojax.experiments import parameter_free_methods as pfb
from ojax.results import load as load_run
from ojax.validation import InputError

STEPS_T = 300
SIZE = pfb.Size(("a1a",), ("logistic",), ("absolute",), tuple(pfb.NORMS[::2]), 200, STEPS_T, None)
SEEDS = 3


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("pfb")
    config = ExperimentConfig(name="parameter-free-benchmark", seeds=SEEDS, out=out, quiet=True)
    sweeps, compile_s = pfb.run_sweeps(config, SIZE, ("KT", "COCOB", "OGD"))
    result = pfs.build_result(sweeps, SIZE)
    result.compile_seconds = compile_s
    write_result(config, result, wall_seconds=1.0)
    return config, sweeps, result


def _regret(sweeps, method: str, norm: float, index: int | None = None) -> float:
    name = pfb.regression_name("absolute", norm)
    sweep = sweeps[method]
    metrics = sweep.outputs[name]
    if index is None:
        index = pfs.chosen_index(sweep.default, sweep.grid, metrics["average_loss"])
    return float(metrics["regret"][:, index].mean())


def _log_factor(norm: float, eps: float = 1.0, steps: int = STEPS_T) -> float:
    return float(np.sqrt(np.log(1.0 + 24.0 * steps**2 * norm**2 / eps**2)))


@pytest.mark.slow
def test_kt_regret_within_log_factors_of_tuned_ogd_and_a_fixed_step_is_not(small_run):
    _, sweeps, _ = small_run
    fixed = pfs.fixed_step_index(sweeps["OGD"], "absolute", SIZE.norms)
    assert fixed is not None
    broken = []
    for norm in SIZE.norms:
        tuned = _regret(sweeps, "OGD", norm)
        allowed = 1.0 + _log_factor(norm) * tuned  # eps = KT's default initial wealth, 1
        assert _regret(sweeps, "KT", norm) <= allowed, norm
        broken.append(_regret(sweeps, "OGD", norm, fixed) > allowed)
    # ||u|| = 1e-2, 1e-1: the fixed step is 100x, 10x too large; at ||u|| = 1 it is the tuned
    # one. (At ||u|| >= 10 and T = 300 even tuned OGD's regret times the log factor exceeds
    # what never learning costs, sum |y_t|: nothing can break the bound there.)
    assert broken[:3] == [True, True, False], broken


@pytest.mark.slow
def test_kt_beats_ogd_with_a_step_ten_times_off(small_run):
    _, sweeps, _ = small_run
    offsets = 0
    for norm in SIZE.norms:
        name = pfb.regression_name("absolute", norm)
        ogd = sweeps["OGD"].outputs[name]["regret"].mean(axis=0)
        best = int(np.argmin(ogd))
        kt = _regret(sweeps, "KT", norm)
        for off in (best - 3, best + 3):  # the steps are 10^(1/3) apart: 3 apart is 10x
            if 0 <= off < len(ogd):
                assert kt < ogd[off], (norm, off)
                offsets += 1
    assert offsets >= len(SIZE.norms)


@pytest.mark.slow
def test_cocob_is_insensitive_to_its_constant_and_ogd_is_not(small_run):
    _, _, result = small_run
    rows = {(r.dataset, r.method, r.metric): r for r in result.rows}
    assert rows[("a1a-logistic", "COCOB", "sensitivity")].mean < 2.0
    assert rows[("a1a-logistic", "OGD", "sensitivity")].mean > 10.0


@pytest.mark.slow
def test_outputs_follow_the_interface(small_run):
    config, sweeps, result = small_run
    out = config.out
    header = (out / "results.csv").read_text().splitlines()[0]
    assert header == "experiment,dataset,method,metric,mean,std,n_seeds"
    rows = {(r.dataset, r.method, r.metric): r for r in result.rows}
    for method, sweep in sweeps.items():
        for dataset in sweep.outputs:
            assert rows[(dataset, method, "average_loss")].n_seeds == SEEDS
            for constant in sweep.grid:
                row = rows[(dataset, pfb.label(method, float(constant)), "average_loss")]
                assert np.isfinite(row.mean)
    assert len(sweeps["KT"].grid) == 9 and np.ptp(np.log10(sweeps["KT"].grid)) >= 8
    for norm in SIZE.norms:
        assert (pfb.regression_name("absolute", norm), "OGD-fixed", "regret") in rows
    for figure in ("sensitivity_logistic.png", "sensitivity_absolute.png", "regret_vs_norm.png"):
        assert (out / figure).stat().st_size > 1000, figure
    assert json.loads((out / "config.json").read_text())["name"] == "parameter-free-benchmark"


@pytest.mark.slow
def test_ojax_plot_redraws_the_figures_from_the_files_alone(small_run, tmp_path):
    config, sweeps, _ = small_run
    out = tmp_path / "run"
    config = dataclasses.replace(config, out=out)
    with RunFolder(out, {"experiment": config.name}) as folder:
        folder.finish(write_result(config, pfs.build_result(sweeps, SIZE), 1.0, folder.record))
    names = ["regret_vs_norm.png", "sensitivity_absolute.png", "sensitivity_logistic.png"]
    assert sorted(p.name for p in out.glob("*.png")) == names
    table = (out / "results.csv").read_bytes()
    for path in out.glob("*.png"):
        path.unlink()
    assert sorted(p.name for p in plot(out, ("png",))) == names
    assert sorted(p.name for p in out.glob("*.png")) == names
    assert (out / "results.csv").read_bytes() == table
    # the files hold every number the figures draw: the sweeps read back are the sweeps run
    read, size = pfs.sweeps_of(load_run(out, pandas=False))
    assert size == SIZE and list(read) == list(sweeps)
    for method, sweep in sweeps.items():
        np.testing.assert_array_equal(read[method].grid, sweep.grid)
        assert read[method].outputs.keys() == sweep.outputs.keys()
        for dataset, metrics in sweep.outputs.items():
            assert read[method].outputs[dataset].keys() == metrics.keys()
            for metric, values in metrics.items():
                np.testing.assert_array_equal(read[method].outputs[dataset][metric], values)
    fig = pfs.sensitivity_figure(read, ["a1a-logistic"], "logistic")
    lines = {line.get_label(): line.get_ydata() for line in fig.axes[0].lines}
    assert lines.keys() == {"KT", "COCOB", "OGD"}
    avg = sweeps["OGD"].outputs["a1a-logistic"]["average_loss"]
    np.testing.assert_array_equal(lines["OGD"], avg.mean(axis=0))


def test_padding_changes_nothing():
    """A padded stack (a longer and a wider dataset beside it) gives the same average loss as
    the learner run alone on the dataset's own rows in the same order."""
    size = pfb.Size(("usenet2", "a1a"), ("logistic",), (), (), 150, 10, None)
    streams = pfb.stack_classification(size, jnp.float32)
    params = pfb.METHODS["KT"].params(jnp.float32(0.5), jnp.float32)
    key = jax.random.key(3)
    cell = pfb.classification_cell("KT", "logistic")
    got, _ = cell(params, jax.tree.map(lambda a: a[0], tuple(streams)), key)
    x, y = pfb.load_classification("usenet2")
    x, y = jnp.asarray(x[:150], jnp.float32), jnp.asarray(y[:150], jnp.float32)
    n = streams.xs.shape[1]
    valid = jnp.arange(n) < 150
    order = jnp.argsort(jnp.where(valid, jax.random.uniform(key, (n,)), 2.0))[:150]
    learner = linear_predictor(pfb.METHODS["KT"].make(), pfb.LOSSES["logistic"], jnp.zeros(100))
    _, trace = run(learner, params, x[order], y[order], pfb.LOSSES["logistic"])
    assert streams.xs.shape[1:] == (150, 124)
    np.testing.assert_allclose(float(got), float(trace.loss.mean()), rtol=1e-5)


def test_every_parameter_free_learner_sweeps_eight_decades_with_its_default():
    assert set(pfb.PARAMETER_FREE) == {"KT", "ONS", "KT-coordinate", "COCOB", "DoG", "Prodigy",
                                       "D-Adapt-SGD", "Mechanic", "Schedule-Free-SGD"}  # fmt: skip
    for name in pfb.PARAMETER_FREE:
        grid = pfb.grid_of(name, pfb.FULL)
        assert np.ptp(np.log10(grid)) >= 8, name
        assert np.min(np.abs(np.log(grid / pfb.METHODS[name].default))) < 1e-9, name
        assert pfb.METHODS[name].default in pfb.grid_of(name, pfb.QUICK), name
    for name in pfb.BASELINES:
        assert len(pfb.grid_of(name, pfb.FULL)) == 20


@pytest.mark.parametrize(
    ("methods", "message"),
    [(("KT", "SGD"), "method must be one of"), ((), "methods must be"), ("KT", "methods must")],
)
def test_bad_methods_are_refused_before_anything_runs(methods, message, tmp_path):
    config = ExperimentConfig(name="parameter-free-benchmark", seeds=1, out=tmp_path / "o")
    with pytest.raises(InputError, match=message):
        pfb.run_sweeps(config, SIZE, methods)
    assert not (tmp_path / "o").exists()


def test_unknown_dataset_and_bad_seeds_are_refused(tmp_path):
    config = ExperimentConfig(name="parameter-free-benchmark", seeds=1, out=tmp_path / "o")
    with pytest.raises(InputError, match="dataset must be one of"):
        pfb.run_sweeps(config, SIZE._replace(datasets=("iris",)), ("KT",))
    with pytest.raises(InputError, match="seeds"):
        pfb.run_sweeps(dataclasses.replace(config, seeds=0), SIZE, ("KT",))


def test_cli_missing_data_exits_2_and_writes_nothing(tmp_path, capsys):
    empty, out = tmp_path / "empty", tmp_path / "out"
    empty.mkdir()
    argv = [
        "run",
        "parameter-free-benchmark",
        "--quick",
        "--data-dir",
        str(empty),
        "--out",
        str(out),
    ]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "a1a.libsvm.gz" in err[0]
    assert not out.exists()
    assert "parameter-free-benchmark" in EXPERIMENTS


def _bench_script():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "scripts" / "bench_parameter_free.py"
    spec = importlib.util.spec_from_file_location("bench_parameter_free", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("argv", [["--streams", "0"], ["--streams", "a,b"], ["--steps", "0"]])
def test_bench_script_refuses_bad_options(argv, tmp_path, capsys):
    bench = _bench_script()
    assert bench.main([*argv, "--out", str(tmp_path / "b")]) == 2
    assert "bench_parameter_free: --streams" in capsys.readouterr().err
    assert not (tmp_path / "b").exists()
    assert set(bench.OPTAX) == set(bench.ojax_pairs())  # every ojax learner has its peer
