"""Experiments own their options: one registry of typed specs, the command line built from
them, the engine's explicit seeds, and one's own tasks for every Denevi experiment."""

from __future__ import annotations

import csv
import dataclasses
import inspect
import json
from pathlib import Path

import jax
import numpy as np
import pytest

from ojax.app import cli
from ojax.experiments import EXPERIMENTS, SPECS, ExperimentConfig, own_options
from ojax.experiments import denevi2020 as den
from ojax.sweep import sweep
from ojax.sweep.engine import seed_keys
from ojax.sweep.options import EngineOptions
from ojax.validation import InputError

ROOT = Path(__file__).resolve().parents[1]


def test_every_spec_is_typed_and_its_files_exist():
    assert list(EXPERIMENTS) == [spec.name for spec in SPECS]
    for spec in SPECS:
        assert issubclass(spec.config, ExperimentConfig), spec.name
        assert issubclass(spec.config, EngineOptions)  # one dataclass of engine options
        assert spec.config.__dataclass_params__.frozen, spec.name
        assert spec.page is not None and (ROOT / "docs" / spec.page).is_file(), spec.name
        assert spec.figures and all(f.endswith(".png") for f in spec.figures), spec.name
        assert spec.seeds(quick=False) == spec.default_seeds >= spec.seeds(quick=True)
        config = spec.config(name=spec.name, seeds=1, out=Path("x"))
        with pytest.raises(dataclasses.FrozenInstanceError):
            config.seeds = 2  # type: ignore[misc]


def test_the_theory_spec_lists_every_module_of_checks():
    import pkgutil

    import ojax.theory
    from ojax.experiments.theory import SPEC, checks

    modules = {m.name for m in pkgutil.iter_modules(ojax.theory.__path__)}
    helpers = {"base", "qp"}  # the shared machinery, no checks
    assert set(SPEC.checks) == modules - helpers
    assert len(checks()) >= 30 and all(c.name == n for n, c in checks().items())


def test_the_command_line_has_no_branch_on_experiment_names():
    source = inspect.getsource(cli)
    for name in EXPERIMENTS:
        assert f'"{name}"' not in source and f"'{name}'" not in source, name
    flags = {f"--{f.name.replace('_', '-')}" for s in SPECS for f in own_options(s.config)}
    assert flags == {"--tasks", "--split", "--order", "--dataset", "--methods"}
    help_text = cli.build_parser()._subparsers._group_actions[0].choices["run"].format_help()
    assert all(flag in help_text for flag in flags)


def test_the_engine_takes_explicit_integer_seeds():
    def fn(params, data, key):
        return jax.random.uniform(key, (3,))

    got = sweep(fn, seeds=[5, 0, 5], options=EngineOptions(quiet=True)).outputs
    want = np.stack([np.asarray(jax.random.uniform(jax.random.key(s), (3,))) for s in (5, 0, 5)])
    np.testing.assert_array_equal(got, want)  # seed s runs with jax.random.key(s)
    np.testing.assert_array_equal(got[0], got[2])
    keys = jax.random.key_data(seed_keys(np.arange(4)))
    np.testing.assert_array_equal(keys, [jax.random.key_data(jax.random.key(s)) for s in range(4)])
    with pytest.raises(InputError, match="seeds must be a non-empty 1-D sequence of integers"):
        sweep(fn, seeds=[0.5], options=EngineOptions(quiet=True))
    with pytest.raises(InputError, match=r"seeds must lie in \[-2\*\*31, 2\*\*31\)"):
        sweep(fn, seeds=[2**40], options=EngineOptions(quiet=True))
    with pytest.raises(InputError, match="give num_seeds and key"):
        sweep(fn, num_seeds=2, key=0, seeds=[0, 1], options=EngineOptions(quiet=True))
    with pytest.raises(InputError, match="give num_seeds and key"):
        sweep(fn, num_seeds=2, options=EngineOptions(quiet=True))


def _tasks_file(path: Path, num_tasks: int = 8) -> Path:
    rng = np.random.default_rng(0)
    sizes = rng.integers(6, 12, num_tasks)
    task = np.repeat(np.arange(num_tasks), sizes)
    x = rng.normal(size=(len(task), 3))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    y = x @ np.array([1.0, -2.0, 0.5]) + 0.1 * rng.normal(size=len(task))
    np.savez(path, x=x, y=y, task=task)
    return path


@pytest.mark.parametrize("name", ["denevi2020-synthetic", "denevi2020-variance"])
def test_every_denevi_experiment_runs_on_your_tasks(name, tmp_path, capsys, monkeypatch):
    # two methods (compile time): ITL and one meta-learner, Best-bias beside them
    monkeypatch.setattr(
        den, "PF_METHODS", {k: den.PF_METHODS[k] for k in ("ITL", "Oracle", "Lazy")}
    )
    monkeypatch.setattr(den, "SS_METHODS", {})
    tasks = _tasks_file(tmp_path / "mine.npz")
    out = tmp_path / "out"
    argv = ["run", name, "--quick", "--seeds", "2", "--quiet", "--tasks", str(tasks)]
    assert cli.main([*argv, "--out", str(out)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(
        f"ojax: running {name}: 2 seeds of your 8 tasks in mine.npz (no Oracle"
    )
    with open(out / "results.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert {r["dataset"] for r in rows} == {"mine"}
    assert {r["method"] for r in rows} == {"ITL", "Best-bias", "Lazy"}  # no Oracle
    assert {r["n_seeds"] for r in rows} == {"2"}
    config = json.loads((out / "config.json").read_text())
    assert config["tasks"] == str(tasks) and config["seeds"] == 2
    assert "no true mean" in config["oracle"] and config["tasks_run"]["seeds"] == 2
    if name == "denevi2020-variance":
        assert set(config["gain_over_itl_test_error"]) == {"Best-bias", "Lazy"}
