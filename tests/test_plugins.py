"""A learner of one's own is first class: the entry points `ojax.learners`, `--import MODULE`
on the command line, and `--methods` of the parameter-free benchmark (its rows are the learner's
own run, a table row added in a script runs, what the benchmark cannot run is refused)."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import ROOT, subprocess_env

import ojax
from ojax.adapters import linear_predictor
from ojax.app import cli
from ojax.core import LEARNERS, Registry
from ojax.experiments import ExperimentConfig
from ojax.experiments import parameter_free_methods as pfb

LEARNER = '''
from typing import NamedTuple

import jax.numpy as jnp

import ojax
from ojax.validation import check_positive


class ScaledParams(NamedTuple):
    learning_rate: jnp.ndarray

    @classmethod
    def default(cls, dtype=None):
        return cls(*ojax.core.scalars(0.25, dtype=dtype))


@ojax.learner_factory
def scaled_gd() -> ojax.OCOLearner:
    """w_{t+1} = w_t - eta g_t (no projection)."""

    def check_params(params):
        check_positive("learning_rate", params.learning_rate)

    return ojax.OCOLearner(
        lambda params, x0: x0,
        lambda state, params: state,
        lambda state, params, grad: state - params.learning_rate * grad,
        check_params,
    )


ENTRY = ojax.LearnerEntry(
    name="NAME", kind="oco", make=lambda dim: scaled_gd(), default_params=ScaledParams.default,
    params_grid=lambda: ScaledParams(jnp.array([0.1, 1.0], jnp.float32)),
    stream="unit_ball", objective="linear",
)
REGISTER
'''


def _module(folder: Path, module: str, name: str, register: bool = True) -> Path:
    text = LEARNER.replace("NAME", name)
    text = text.replace("REGISTER", "ojax.register_learner(ENTRY)" if register else "")
    path = folder / f"{module}.py"
    path.write_text(text)
    return path


@pytest.fixture
def own(tmp_path, monkeypatch):
    """A module of one's own in tmp_path registering `mine_gd` (removed afterwards)."""
    monkeypatch.syspath_prepend(str(tmp_path))
    path = _module(tmp_path, "own_learners_mod", "mine_gd")
    yield path
    LEARNERS.pop("mine_gd", None)
    sys.modules.pop("own_learners_mod", None)


class _Point:
    def __init__(self, name, value, load):
        self.name, self.value, self.load = name, value, load


def test_entry_points_fill_the_registry_and_a_broken_one_is_named(own, monkeypatch):
    import own_learners_mod  # registers mine_gd (a module plugin would, on import)

    entry = own_learners_mod.ENTRY._replace(name="entry_gd")  # an entry plugin: registered
    points = [_Point("a", "own_learners_mod", lambda: own_learners_mod),
              _Point("b", "own_learners_mod:ENTRY2", lambda: entry)]  # fmt: skip
    asked = []

    def entry_points(group):
        asked.append(group)
        return points

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)
    table = Registry((), "ojax.learners")
    assert sorted(table) == ["entry_gd"] and asked == ["ojax.learners"]
    assert table["entry_gd"] is entry

    def broken():
        raise RuntimeError("no such thing")

    points.append(_Point("c", "broken_pkg:ENTRY", broken))
    with pytest.raises(ImportError, match=r"ojax.learners plugin 'broken_pkg:ENTRY': no such"):
        len(Registry((), "ojax.learners"))


def test_an_installed_plugin_is_listed_by_the_command(tmp_path):
    """A distribution declaring the entry point (its .dist-info on the path, as pip leaves it)."""
    _module(tmp_path, "plugin_learners", "plugin_gd")
    info = tmp_path / "plugin_learners-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: plugin-learners\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[ojax.learners]\nplugin_gd = plugin_learners\n")
    env = subprocess_env(PYTHONPATH=f"{tmp_path}:{ROOT}")
    out = subprocess.run(
        [sys.executable, "-m", "ojax.app.cli", "list", "--learners"],
        env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    line = next(x for x in out.stdout.splitlines() if x.startswith("plugin_gd "))
    assert "oco" in line and "learning_rate=0.25" in line


def test_import_adds_a_learner_to_list_and_sweep(tmp_path, own, capsys):
    assert cli.main(["list", "--learners", "--import", str(own)]) == 0
    assert any(x.startswith("mine_gd ") for x in capsys.readouterr().out.splitlines())
    out = tmp_path / "sweep"
    argv = ["sweep", "mine_gd", "--grid", "learning_rate=0.1,0.5", "--seeds", "2", "--steps", "50",
            "--dim", "3", "--out", str(out), "--quiet"]  # fmt: skip
    assert cli.main(argv) == 0  # registered by the import above, in this process
    printed = capsys.readouterr().out
    assert "mine_gd@learning_rate=0.1" in printed and "mine_gd@learning_rate=0.5" in printed
    assert (out / "results.csv").exists()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["sweep", "ogd", "--import", "no_such_module_here"], "--import: no module named"),
        (["list", "--import", "missing_file.py"], "--import: 'missing_file.py' is not a file"),
        (["run", "basics", "--quick", "--import", "own_learners_mod"],
         "registered the learner(s) mine_gd, which basics would not run"),
        (["run", "parameter-free-benchmark", "--quick", "--import", "own_learners_mod"],
         "name it in --methods"),
        (["run", "parameter-free-benchmark", "--quick", "--methods", "KT,nothing"],
         "method must be one of"),
        (["run", "parameter-free-benchmark", "--quick", "--methods", "KT,,OGD"],
         "--methods: must be names separated by commas"),
        (["run", "parameter-free-benchmark", "--quick", "--methods", "aggressive_kt"],
         "is a multi_task learner"),
    ],
)  # fmt: skip
def test_bad_imports_and_methods_exit_2_before_anything_is_written(
    argv, message, own, tmp_path, capsys
):
    out = tmp_path / "never"
    assert cli.main([*argv, "--out", str(out)] if argv[0] != "list" else argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err
    assert not out.exists()


SIZE = pfb.Size(("usenet2",), ("logistic",), (), (), 80, 60, 3)


def test_a_registered_learner_runs_in_the_benchmark_as_the_table_runs_it(
    own, monkeypatch, tmp_path
):
    """`mine_gd` (gradient descent, no projection) through `--methods` gives, on every seed
    and constant, what the table's OGD row (`ogd("none")`) gives on the same grid; its grid
    spans 8 decades around its default; a regression cell is the learner's own run by hand."""
    import own_learners_mod

    grid = 0.25 * 10.0 ** np.array([-4.0, 0.0, 4.0])
    monkeypatch.setitem(pfb.METHODS, "OGD-same", pfb.METHODS["OGD"]._replace(grid=grid))
    config = ExperimentConfig(name="parameter-free-benchmark", seeds=2, out=tmp_path, quiet=True)
    sweeps, _ = pfb.run_sweeps(config, SIZE, ("OGD-same", "mine_gd"))
    mine, table = sweeps["mine_gd"], sweeps["OGD-same"]
    assert (mine.constant, mine.default) == ("learning_rate", 0.25)
    np.testing.assert_allclose(mine.grid, grid)
    assert set(mine.outputs) == set(table.outputs) == {"usenet2-logistic"}
    for name, metrics in table.outputs.items():
        for metric, values in metrics.items():
            np.testing.assert_allclose(mine.outputs[name][metric], values, rtol=1e-5, err_msg=name)
    cell = pfb.regression_cell("mine_gd", "absolute", 60, pfb.REGRESSION_DIM)
    p = own_learners_mod.ScaledParams(jnp.float32(0.25))
    _, total = cell(p, jnp.float32(10.0), jax.random.key(7))
    xs, ys, _ = pfb.regression_stream(jax.random.key(7), jnp.float32(10.0), 60, 10, jnp.float32)
    learner = linear_predictor(own_learners_mod.scaled_gd(), pfb.LOSSES["absolute"], jnp.zeros(10))
    _, trace = ojax.run(learner, p, xs, ys, pfb.LOSSES["absolute"])
    np.testing.assert_allclose(float(total), float(trace.loss.sum()), rtol=1e-5)


def test_a_row_added_to_the_table_runs_and_duplicates_are_refused(monkeypatch, tmp_path):
    row = pfb.METHODS["OGD"]._replace(default=0.1)  # OGD as a "parameter-free" row of one's own
    monkeypatch.setattr(pfb, "METHODS", {"Mine": row})
    config = ExperimentConfig(name="parameter-free-benchmark", seeds=1, out=tmp_path, quiet=True)
    size = pfb.Size((), (), ("absolute",), (1.0,), None, 30, 2)
    sweeps, _ = pfb.run_sweeps(config, size)
    assert list(sweeps) == ["Mine"]  # the table as it is when the run starts
    assert sweeps["Mine"].default == 0.1 and 0.1 in sweeps["Mine"].grid
    with pytest.raises(ojax.InputError, match="each method once"):
        pfb.check_methods(("Mine", "Mine"))
