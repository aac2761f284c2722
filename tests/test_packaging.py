"""The datasets ship inside the package: the wheel and the sdist carry them, a bare copy of the
repository runs a real-data experiment, and ``data_dir`` / ``$OJAX_DATA_DIR`` override them."""

from __future__ import annotations

import csv
import math
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import numpy as np
import pytest
from conftest import subprocess_env

import ojax.datasets as datasets
from ojax.datasets.paths import PACKAGED_FILES, DataError, data_file, resolve_data_dir

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "ojax" / "datasets" / "data"
DATA_PREFIX = "ojax/datasets/data/"


def _shipped() -> dict[str, bytes]:
    """The files of the repository's data folder, by name."""
    return {p.name: p.read_bytes() for p in sorted(DATA.iterdir()) if p.is_file()}


def _copy_repository(dest: Path) -> Path:
    """The git-tracked (and untracked, not ignored) files of the repository, copied to ``dest``."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for rel in filter(None, listed.split("\0")):
        src = ROOT / rel
        if src.is_file():  # a tracked file deleted in the working tree is skipped
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    return dest


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("OJAX_DATA_DIR", "PYTHONPATH")}
    env.update(MPLBACKEND="Agg", JAX_PLATFORMS="cpu", **extra)
    return env


def _build(kind: str, tree: Path, out: Path) -> Path:
    """Builds the ``wheel`` or ``sdist`` of ``tree`` into ``out`` with setuptools' PEP 517 hook."""
    out.mkdir()
    code = f"from setuptools import build_meta; print(build_meta.build_{kind}({str(out)!r}))"
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=tree, env=_env(), capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    name = proc.stdout.strip().splitlines()[-1]
    log = (proc.stdout + proc.stderr).lower().splitlines()
    assert not [line for line in log if "deprecat" in line and "license" in line]
    return out / name


def test_repository_data_folder_is_the_listed_files():
    assert DATA.is_dir()
    assert sorted(_shipped()) == sorted((*PACKAGED_FILES, "README.md"))
    readme = (DATA / "README.md").read_text()
    for name in PACKAGED_FILES:  # every file has its provenance and licence row
        assert f"`{name}`" in readme, name


@pytest.mark.slow
def test_wheel_carries_every_data_file(tmp_path):
    tree = _copy_repository(tmp_path / "src")
    wheel = _build("wheel", tree, tmp_path / "dist")
    with zipfile.ZipFile(wheel) as zf:
        inside = {
            n[len(DATA_PREFIX) :]: zf.read(n) for n in zf.namelist() if n.startswith(DATA_PREFIX)
        }
        metadata = next(zf.read(n) for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
    assert inside == _shipped()
    assert b"License-Expression: Apache-2.0" in metadata


@pytest.mark.slow
def test_sdist_carries_every_data_file(tmp_path):
    tree = _copy_repository(tmp_path / "src")
    sdist = _build("sdist", tree, tmp_path / "dist")
    with tarfile.open(sdist) as tf:
        inside = {}
        for member in tf.getmembers():
            rel = member.name.split("/", 1)[1] if "/" in member.name else ""
            if rel.startswith(DATA_PREFIX) and member.isfile():
                inside[rel[len(DATA_PREFIX) :]] = tf.extractfile(member).read()
    assert inside == _shipped()


@pytest.mark.slow
def test_bare_copy_runs_a_real_data_experiment(tmp_path):
    """A fresh clone alone in a folder (nothing beside it, no OJAX_DATA_DIR) runs on real data."""
    tree = _copy_repository(tmp_path / "clone")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["clone"]
    env = _env(PYTHONPATH=str(tree))
    where = subprocess.run(
        [sys.executable, "-c", "import ojax.datasets as d; print(d.resolve_data_dir())"],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
    )
    assert where.returncode == 0, where.stderr[-3000:]
    assert Path(where.stdout.strip()) == tree / "ojax" / "datasets" / "data"
    out = tmp_path / "clone" / "out"
    cmd = [sys.executable, "-m", "ojax.app.cli", "run", "denevi2020-lenk", "--quick", "--quiet"]
    cmd += ["--seeds", "2", "--out", str(out)]
    cached = subprocess_env(env)  # the session's compilation cache (outside the clone)
    proc = subprocess.run(cmd, cwd=tree, env=cached, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    with open(out / "results.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert rows and {r["dataset"] for r in rows} == {"lenk"}
    assert all(r["n_seeds"] == "2" for r in rows)
    # every method of denevi2020-lenk but the Oracle (no true bias for real data), finite
    methods = {r["method"] for r in rows}
    assert "Oracle" not in methods and len(methods) == 7
    assert all(math.isfinite(float(r["mean"])) for r in rows)
    with np.load(out / "curves.npz") as curves:
        assert curves["lenk/ITL/cumulative_error"].shape == (2, 30 * 16)


def test_default_is_the_packaged_folder(monkeypatch):
    monkeypatch.delenv("OJAX_DATA_DIR", raising=False)
    folder = resolve_data_dir()
    assert folder.resolve() == Path(datasets.__file__).resolve().parent / "data"
    assert folder == datasets.packaged_data_dir()
    for name in PACKAGED_FILES:
        assert (folder / name).is_file(), name
        assert data_file(name) == folder / name


def test_environment_and_argument_override_the_packaged_folder(monkeypatch, tmp_path):
    env_dir, arg_dir = tmp_path / "env", tmp_path / "arg"
    env_dir.mkdir()
    arg_dir.mkdir()
    shutil.copy(DATA / "lenk.mat", env_dir / "lenk.mat")
    shutil.copy(DATA / "lenk.mat", arg_dir / "lenk.mat")
    monkeypatch.setenv("OJAX_DATA_DIR", str(env_dir))
    assert resolve_data_dir() == env_dir
    assert data_file("lenk.mat") == env_dir / "lenk.mat"
    assert resolve_data_dir(arg_dir) == arg_dir  # the argument wins over the environment
    assert data_file("lenk.mat", str(arg_dir)) == arg_dir / "lenk.mat"
    monkeypatch.delenv("OJAX_DATA_DIR")
    assert data_file("lenk.mat", arg_dir) == arg_dir / "lenk.mat"


@pytest.mark.parametrize("through", ["argument", "environment"])
def test_a_given_folder_lacking_a_file_names_folder_and_file(monkeypatch, tmp_path, through):
    (tmp_path / "lenk.mat").write_bytes((DATA / "lenk.mat").read_bytes())
    if through == "environment":
        monkeypatch.setenv("OJAX_DATA_DIR", str(tmp_path))
        given = None
    else:
        monkeypatch.delenv("OJAX_DATA_DIR", raising=False)
        given = tmp_path
    with pytest.raises(DataError, match="schools.mat") as err:
        data_file("schools.mat", given)
    assert str(tmp_path) in str(err.value)
    with pytest.raises(DataError, match="schools.mat"):
        datasets.load_schools(given)
    assert data_file("lenk.mat", given) == tmp_path / "lenk.mat"


def test_missing_folders_and_unshipped_files_are_named(monkeypatch, tmp_path):
    monkeypatch.setenv("OJAX_DATA_DIR", str(tmp_path / "nowhere"))
    with pytest.raises(DataError, match="OJAX_DATA_DIR.*nowhere"):
        resolve_data_dir()
    with pytest.raises(DataError, match="data_dir.*absent"):
        resolve_data_dir(tmp_path / "absent")
    monkeypatch.delenv("OJAX_DATA_DIR")
    with pytest.raises(DataError, match="'w7a' is not shipped"):
        data_file("w7a")
