"""Nothing lost, no one let in (issue 20): output folders, caches and user files under attack.

Each test is one try of a hostile (or unlucky) user against ``ojax run`` / ``ojax sweep``, the
caches, the files ojax reads and the library, and the outcome it must have now. The destructive
ones run in a temporary tree with sibling files that must survive byte for byte.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from ojax.app import cli, interrupt

LOCK = ".ojax-lock"  # ojax.app.lock.LOCK (imported in the tests: new in issue 20)

ROOT = Path(__file__).resolve().parents[1]
SWEEP = ["sweep", "hedge", "--steps", "20", "--dim", "2", "--seeds", "2", "--quiet"]


def _snapshot(folder: Path) -> dict[str, bytes]:
    """Every file below ``folder`` (recursively) -> its bytes."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _one_error_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert err and err[-1].startswith("ojax: error: "), err
    assert all(not line.startswith(("Traceback", "  File")) for line in err), err
    return err[-1]


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    env["OJAX_COMPILATION_CACHE"] = "off"
    env.pop("OJAX_PROGRAM_CACHE", None)  # off in the test process (conftest), on for a user
    return env


@pytest.fixture(scope="module")
def finished_sweep(tmp_path_factory) -> Path:
    """One finished :data:`SWEEP`: every test attacking a finished run attacks a copy of it
    (:func:`_finished`) instead of running the same sweep again."""
    out = tmp_path_factory.mktemp("finished") / "run"
    assert cli.main([*SWEEP, "--out", str(out)]) == 0
    return out


def _finished(finished_sweep: Path, out: Path) -> Path:
    """A copy of :func:`finished_sweep` at ``out`` (links kept as links, times kept)."""
    shutil.copytree(finished_sweep, out, symlinks=True)
    return out


# ------------------------------------------------------------ a run deletes only what it wrote


@pytest.fixture
def tree(tmp_path) -> Path:
    """``results/`` holding the user's own files: they must survive every failed run."""
    results = tmp_path / "results"
    (results / "old-job").mkdir(parents=True)
    (results / "notes.txt").write_bytes(b"the user's notes\n")
    (results / "old-job" / "table.csv").write_bytes(b"a,b\n1,2\n")
    return results


def _meanwhile(monkeypatch, module, name: str, date: Path) -> None:
    """``module.name`` first writes files into ``date`` (another job, while this run runs)."""
    real = getattr(module, name)

    def another_job_writes_then_runs(*args, **kwargs):
        (date / "other-job").mkdir(parents=True, exist_ok=True)
        (date / "other-job" / "log.txt").write_bytes(b"written by another job\n")
        (date / "README").write_bytes(b"the user's note on this day's runs\n")
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, another_job_writes_then_runs)


def test_a_failed_sweep_never_removes_an_ancestor_others_wrote_into(tree, monkeypatch, capsys):
    from ojax.app import learner_sweep

    before = _snapshot(tree)
    date = tree / "2024-05-01"
    out = date / "lr_x"
    _meanwhile(monkeypatch, learner_sweep, "sweep", date)  # while this run sizes its chunks
    assert cli.main([*SWEEP, "--out", str(out), "--memory-budget", "1"]) == 2
    assert "memory_budget" in _one_error_line(capsys)
    assert not out.exists()  # what this run created is gone
    after = _snapshot(tree)
    assert {k: after[k] for k in before} == before  # the user's files, byte for byte
    assert after["2024-05-01/README"] == b"the user's note on this day's runs\n"
    assert after["2024-05-01/other-job/log.txt"] == b"written by another job\n"


def test_a_bad_grid_field_is_refused_before_any_folder_is_made(tree, capsys):
    before = _snapshot(tree)
    out = tree / "2024-05-01" / "lr_x"
    assert cli.main([*SWEEP, "--out", str(out), "--grid", "no_such_field=1"]) == 2
    assert "'no_such_field' is not a hyperparameter of hedge" in _one_error_line(capsys)
    assert not (tree / "2024-05-01").exists() and _snapshot(tree) == before


def test_a_failed_run_alone_removes_every_folder_it_created(tree, capsys):
    before = _snapshot(tree)
    out = tree / "2024-05-01" / "deep" / "lr_x"
    assert cli.main([*SWEEP, "--out", str(out), "--memory-budget", "1"]) == 2
    _one_error_line(capsys)
    assert not (tree / "2024-05-01").exists()
    assert _snapshot(tree) == before and sorted(p.name for p in tree.iterdir()) == [
        "notes.txt",
        "old-job",
    ]


def test_a_run_failing_on_split_rows_keeps_the_siblings(tree, tmp_path, monkeypatch, capsys):
    from ojax.experiments import zhao_hoi2010

    split = tmp_path / "split.npz"  # rows beyond usenet2's 1500: found while running
    np.savez(split, source_order=np.arange(5), target_orders=np.array([[10, 11, 99999]]),
             dataset=np.array("usenet2"))  # fmt: skip
    date = tree / "2024-05-01"
    out = date / "split-run"
    before = _snapshot(tree)
    _meanwhile(monkeypatch, zhao_hoi2010.transfer_data, "split_from_orders", date)
    argv = ["run", "zhao-hoi2010-homogeneous", "--quick", "--quiet", "--split", str(split)]
    assert cli.main([*argv, "--out", str(out)]) == 2
    assert "target_orders" in _one_error_line(capsys)
    assert not out.exists()
    after = _snapshot(tree)
    assert {k: after[k] for k in before} == before
    assert "2024-05-01/README" in after and "2024-05-01/other-job/log.txt" in after


@pytest.mark.parametrize("entry", ["{outside}", "../../victim", "..", ".sweep", "a/b", ""])
def test_a_run_record_naming_paths_refuses_the_folder(tmp_path, capsys, entry, finished_sweep):
    """A folder received from a colleague (or on shared storage) whose ``.ojax-run.json``
    lists paths: the same command again deletes nothing, inside or outside ``--out``."""
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "thesis.tex").write_bytes(b"years of work\n")
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"outside --out\n")
    out = _finished(finished_sweep, tmp_path / "shared" / "run")
    record = json.loads((out / ".ojax-run.json").read_text())
    record["files"].append(entry.format(outside=outside))
    (out / ".ojax-run.json").write_text(json.dumps(record))
    before, around = _snapshot(out), _snapshot(tmp_path)
    capsys.readouterr()
    assert cli.main([*SWEEP, "--out", str(out)]) == 2  # the same command: it would resume
    line = _one_error_line(capsys)
    assert "is not a plain file name" in line and ".ojax-run.json" in line
    assert _snapshot(out) == before and _snapshot(tmp_path) == around
    assert cli.main([*SWEEP, "--out", str(out), "--overwrite"]) == 2
    assert _snapshot(tmp_path) == around


def test_a_recorded_name_that_is_a_folder_is_never_removed(tmp_path, capsys, finished_sweep):
    out = _finished(finished_sweep, tmp_path / "run")
    (out / "data").mkdir()
    (out / "data" / "mine.csv").write_bytes(b"my data\n")
    record = json.loads((out / ".ojax-run.json").read_text())
    record["files"].append("data")
    (out / ".ojax-run.json").write_text(json.dumps(record))
    for extra in (["--seeds", "3", "--overwrite"], []):  # replace it, or resume it
        capsys.readouterr()
        assert cli.main([*SWEEP, "--out", str(out), *extra]) == 2
        assert "'data' is a folder, where ojax writes a file" in _one_error_line(capsys)
        assert (out / "data" / "mine.csv").read_bytes() == b"my data\n"


def test_a_folder_without_a_run_record_is_never_overwritten(tmp_path, capsys, finished_sweep):
    """A folder of result files without `.ojax-run.json` (another program's, or an ojax older
    than the record) holding the user's own PDF: `--overwrite` refuses the folder (ojax cannot
    know what it wrote there) and the PDF survives byte for byte."""
    out = _finished(finished_sweep, tmp_path / "run")
    (out / ".ojax-run.json").unlink()
    (out / "paper.pdf").write_bytes(b"%PDF my paper\n")
    capsys.readouterr()
    assert cli.main([*SWEEP, "--out", str(out), "--seeds", "3", "--overwrite"]) == 2
    assert "holds no ojax run" in _one_error_line(capsys)
    assert (out / "paper.pdf").read_bytes() == b"%PDF my paper\n"
    assert (out / "results.csv").is_file()  # nothing of the old run removed either


# ------------------------------------------------------------------------------- the lock

_HOLDER = """
import sys, time
from pathlib import Path
from ojax.app.lock import FolderLock
lock = FolderLock(Path(sys.argv[1]))
lock.acquire()
print("locked", flush=True)
time.sleep(120)
"""


def _hold_lock(folder: Path) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(folder)],
        env=_env(),
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
    return proc


def test_overwrite_while_another_process_writes_is_refused_naming_it(
    tmp_path, capsys, finished_sweep
):
    out = _finished(finished_sweep, tmp_path / "run")
    before = _snapshot(out)
    holder = _hold_lock(out)
    try:
        for extra in (["--seeds", "3", "--overwrite"], []):  # replace it, or resume it
            capsys.readouterr()
            assert cli.main([*SWEEP, "--out", str(out), *extra]) == 2
            line = _one_error_line(capsys)
            assert f"in use by another ojax process (pid {holder.pid} on " in line
            assert socket.gethostname() in line
            assert {k: v for k, v in _snapshot(out).items() if not k.startswith(LOCK)} == before
    finally:
        holder.send_signal(signal.SIGKILL)  # killed: its lock file stays, its flock goes
        holder.wait(timeout=30)
    assert (out / LOCK).exists()  # a stale lock of a dead process: taken over
    assert cli.main([*SWEEP, "--out", str(out), "--seeds", "3", "--overwrite"]) == 0
    assert not (out / LOCK).exists()  # released when the run ends
    assert json.loads((out / "config.json").read_text())["seeds"] == 3


def test_a_stale_owner_record_is_taken_over_and_a_foreign_holder_named(tmp_path):
    import filelock

    from ojax.app import lock
    from ojax.app.lock import OWNER, FolderLock

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    folder = tmp_path / "run"
    folder.mkdir()
    owner = {"pid": dead.pid, "host": socket.gethostname(), "started": time.time()}
    (folder / LOCK).write_text("")  # left by a killed run: nobody holds it
    (folder / OWNER).write_text(json.dumps(owner))
    lock.check_free(folder)  # not held
    held = FolderLock(folder)
    held.acquire()
    assert json.loads((folder / OWNER).read_text())["pid"] == os.getpid()
    held.release()
    other = filelock.FileLock(folder / LOCK)  # held by a process of another host
    other.acquire()
    (folder / OWNER).write_text(json.dumps({**owner, "host": "elsewhere.example"}))
    try:
        with pytest.raises(lock.InputError, match=r"pid \d+ on elsewhere.example.*remove"):
            FolderLock(folder).acquire()  # its owner cannot be checked from here: refused
    finally:
        other.release()


# ------------------------------------------------------------------ caches hold data, not code


class _Planted:
    """What a stranger who can write the cache folder plants: unpickling it runs ``mkdir``."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.mkdir, (self.marker,))


def _plant(store: Path, marker: Path) -> None:
    """A crafted pickle (with the store's checksum in front, as the store writes) in place of
    every entry's value, under the old (``.pkl``) and the new (``.json``) name."""
    payload = pickle.dumps(_Planted(str(marker)))
    framed = hashlib.sha256(payload).digest() + payload
    for name in {p.stem for p in store.iterdir() if not p.name.startswith(".")}:
        for suffix in ("pkl", "json"):
            (store / f"{name}.{suffix}").write_bytes(framed)


def test_a_crafted_pickle_in_the_program_store_runs_nothing(tmp_path, monkeypatch):
    import jax
    import jax.numpy as jnp

    from ojax import programs, projections

    store = tmp_path / "ojax-programs"
    monkeypatch.setattr(programs, "folder", lambda: store)
    w = jnp.asarray([3.0, 4.0, 0.5])
    first = programs.jit(projections.simplex)(w, 2.0)  # traced, exported and stored
    marker = tmp_path / "code-ran"
    _plant(store, marker)
    again = programs.jit(projections.simplex)(w, 2.0)  # a new wrapper: reads the store
    assert not marker.exists()
    np.testing.assert_array_equal(again, first)
    for path in store.glob("*.jaxexport"):  # the program entries are read, the planted never
        assert programs.load_exported(path.stem).out_tree == jax.tree.structure(first)


_CACHED_SWEEP = [*SWEEP, "--no-resume", "--compile-cache"]


def _ojax(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ojax.app.cli", *args],
        cwd=cwd,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_planted_cache_entries_run_nothing_and_junk_is_replaced_once(tmp_path):
    """A shared cache folder holding a crafted pickle for every program-store entry and junk
    for every compiled program: the next run executes none of it, warns once (one line per
    program) and leaves a cache the run after reads without a word."""
    cache = tmp_path / "cache"
    args = [*_CACHED_SWEEP, str(cache), "--out", "run"]
    first = _ojax(args, tmp_path)
    assert first.returncode == 0, first.stderr
    expected = _snapshot(tmp_path / "run")["results.csv"]
    marker = tmp_path / "code-ran"
    _plant(cache / "ojax-programs", marker)
    junk = sorted(cache.glob("*-cache"))
    assert junk
    for path in junk:
        path.write_bytes(b"junk")
    second = _ojax(args, tmp_path)
    assert second.returncode == 0, second.stderr
    assert not marker.exists()
    assert "Warning" not in second.stderr and "Traceback" not in second.stderr, second.stderr
    notes = [line for line in second.stderr.splitlines() if line.startswith("ojax: note:")]
    assert notes and all("unreadable" in line and "compiled again" in line for line in notes)
    assert _snapshot(tmp_path / "run")["results.csv"] == expected
    assert all(path.read_bytes() != b"junk" for path in junk if path.exists())
    third = _ojax(args, tmp_path)
    assert third.returncode == 0 and "note" not in third.stderr and "Warning" not in third.stderr


def test_stored_tree_structures_name_only_registered_ojax_classes(tmp_path, monkeypatch):
    import jax
    import jax.numpy as jnp

    from ojax import programs
    from ojax.core import Trace

    monkeypatch.setattr(programs, "folder", lambda: tmp_path)
    value = {"trace": Trace(jnp.ones(2), None, jnp.ones(2), [jnp.ones(1), (2.0, None)]), "n": 1}
    tree = jax.tree.structure(value)
    exported = programs.exported_program("ok", jax.jit(lambda: value), ())
    assert programs.load_exported("ok").out_tree == tree == exported.out_tree
    data = bytearray(programs._read(tmp_path / "ok.jaxexport"))
    name = b"ojax.core:Trace"  # the same length keeps the file's offsets
    for where in (b"os:system______", b"ojax.nothing:X_", b"ojax.core:Trac_"):
        planted = data.replace(name, where)
        programs._write(tmp_path / "bad.jaxexport", bytes(planted))
        assert programs.load_exported("bad") is None  # not a registered name: not read
    programs._write(tmp_path / "junk.jaxexport", b"\x00" * 64)
    assert programs.load_exported("junk") is None
    partial = jax.tree_util.Partial(len, 1)  # a custom pytree class is not kept at all
    programs.exported_program("custom", jax.jit(lambda: partial), ())
    assert not (tmp_path / "custom.jaxexport").exists()


def _tasks(path: Path, **arrays) -> Path:
    rng = np.random.default_rng(3)
    base = {
        "x": rng.normal(size=(9, 3)),
        "y": rng.normal(size=9),
        "task": np.array([0, 0, 0, 0, 1, 1, 1, 1, 1]),
    }
    np.savez(path, **{**base, **arrays})
    return path


def _with(name: str, row: int, value, dtype=float) -> np.ndarray:
    rng = np.random.default_rng(3)
    base = {"x": rng.normal(size=(9, 3)), "y": rng.normal(size=9)}[name].astype(dtype)
    base[row] = value
    return base


@pytest.mark.parametrize(
    "arrays, message",
    [
        ({"y": _with("y", 6, 1e39)}, r"'y': 1e\+39 at index \(6,\) does not fit float32.*task 1"),
        ({"x": _with("x", 2, 1e39)}, None),  # x is scaled to unit rows first: it fits
        ({"x": _with("x", 1, 2j, complex)}, r"'x' must hold real numbers, got complex"),
        ({"y": _with("y", 1, 2j, complex)}, r"'y' must hold real numbers, got complex"),
        ({"num_test": np.array([1.7, 2.2])}, r"'num_test' must hold whole numbers.*1\.7"),
        ({"num_test": np.array([1.0, 2.0])}, None),  # whole numbers stored as floats
        ({"x": np.full((9, 3), "a")}, r"'x' must hold numbers, got dtype <U1"),
        ({"y": np.array(["1"] * 9)}, r"'y' must hold numbers, got dtype <U1"),
        ({"task": np.array(["a"] * 9)}, r"'task' must hold integers"),
        ({"x": _with("x", 5, [1e300, 1e300, 1e300])}, None),  # its norm overflows: scaled
        ({"x": _with("x", 5, [1e-320, 0.0, 0.0])}, None),  # its norm underflows: scaled
    ],
)
def test_a_tasks_file_is_checked_in_the_runs_dtype(tmp_path, arrays, message):
    from ojax.datasets import DataError, load_tasks_file

    path = _tasks(tmp_path / "t.npz", **arrays)
    if message is not None:
        with pytest.raises(DataError, match=message):
            load_tasks_file(path)
        return
    data = load_tasks_file(path)
    assert np.all(np.isfinite(data.x)) and np.all(np.isfinite(data.y))
    norms = np.linalg.norm(data.x.astype(np.float64), axis=-1)[data.mask]
    np.testing.assert_allclose(norms, 1.0, rtol=1e-6)  # every real row of unit norm, none 0


def test_a_tasks_file_for_float64_keeps_what_float32_refuses(tmp_path, capsys):
    from ojax.datasets import load_tasks_file

    path = _tasks(tmp_path / "t.npz", y=_with("y", 6, 1e39))
    assert load_tasks_file(path, np.float64).y.max() == 1e39
    out = tmp_path / "out"
    argv = ["run", "denevi2020-lenk", "--quick", "--seeds", "1", "--quiet", "--tasks", str(path)]
    assert cli.main([*argv, "--out", str(out)]) == 2  # float32: refused before anything runs
    assert "'y': 1e+39 at index (6,) does not fit float32" in _one_error_line(capsys)
    assert not out.exists()


def test_tasks_of_from_tasks_are_checked_after_the_cast():
    from ojax import meta
    from ojax.validation import InputError

    rng = np.random.default_rng(0)

    def task(**kw):
        parts = {"X": rng.normal(size=(4, 3)), "Y": rng.normal(size=4)}
        parts.update(Xt=rng.normal(size=(2, 3)), Yt=rng.normal(size=2))
        parts.update(kw)
        return parts["X"], parts["Y"], parts["Xt"], parts["Yt"]

    cases = [
        (
            {"Y": np.array([0.0, 1e39, 0.0, 0.0])},
            r"tasks\[1\]\.Y: 1e\+39 at index \(1,\) does not fit",
        ),
        ({"X": np.ones((4, 3)) + 1j}, r"tasks\[1\]\.X must hold real numbers"),
        ({"Yt": np.array([1.0, 1j])}, r"tasks\[1\]\.Y_test must hold real numbers"),
        ({"X": np.full((4, 3), 3e38)}, r"tasks\[1\]\.X: row 0 has norm 5\.2e\+38"),
    ]
    for kw, message in cases:
        with pytest.raises(InputError, match=message):
            meta.TaskBlock.from_tasks([task(), task(**kw)], dtype=np.float32)
    import jax

    with jax.enable_x64(True):  # float64 holds it
        tasks = [task(), task(Y=np.array([0.0, 1e39, 0.0, 0.0]))]
        assert float(np.max(meta.TaskBlock.from_tasks(tasks, np.float64).y_train)) == 1e39


def test_run_split_takes_lists_and_refuses_complex_or_overflowing_rows():
    import scipy.sparse as sp

    from ojax import transfer
    from ojax.validation import InputError

    rng = np.random.default_rng(0)
    sx, tx = rng.random((6, 3)), rng.random((8, 3))
    sy, ty = np.sign(rng.normal(size=6)), np.sign(rng.normal(size=8))
    orders = np.arange(8)[None]
    arrays = transfer.run_split(sx, sy, np.arange(6), tx, ty, orders, methods=["PA"])
    lists = transfer.run_split(
        sx.tolist(), sy.tolist(), list(range(6)), tx.tolist(), ty.tolist(), [list(range(8))],
        methods=["PA"],
    )  # fmt: skip
    np.testing.assert_array_equal(lists["PA"].scores, arrays["PA"].scores)
    cases = [
        ({"tx": tx + 1j}, "target_x must hold real numbers"),
        ({"ty": ty + 0j}, "target_y must hold real numbers"),
        ({"tx": np.full((8, 3), 1e39)}, r"target_x: 1e\+39 at index \(0, 0\) does not fit float32"),
        ({"sx": sp.csr_matrix(np.full((6, 3), 3e38))}, r"source_x: row 0 has norm 5\.2e\+38"),
        ({"sx": [[1.0, 2.0], [3.0]]}, "source_x"),  # ragged rows
    ]
    for change, message in cases:
        given = {"sx": sx, "sy": sy, "tx": tx, "ty": ty, **change}
        with pytest.raises(InputError, match=message):
            transfer.run_split(
                given["sx"], given["sy"], np.arange(6), given["tx"], given["ty"], orders
            )


def _npy_member(archive, name: str, shape: tuple, fill_bytes: int) -> None:
    """A ``.npy`` member declaring ``shape`` (float64) whose data is ``fill_bytes`` zeros,
    streamed (never whole in memory). The bombs' archives deflate at level 1: zeros still
    shrink 230-fold, four times faster than at zlib's default level."""
    import zipfile

    header = {"descr": "<f8", "fortran_order": False, "shape": shape}
    with archive.open(name, "w", force_zip64=True) as member:
        np.lib.format.write_array_header_1_0(member, header)
        chunk = bytes(2**24)
        left = fill_bytes
        while left > 0:
            member.write(chunk[: min(left, len(chunk))])
            left -= len(chunk)
    assert isinstance(archive, zipfile.ZipFile)


def test_an_npz_bomb_is_refused_before_it_inflates(tmp_path, monkeypatch, capsys):
    import tracemalloc
    import zipfile

    from ojax import fileio as npz_module
    from ojax.datasets import DataError, load_tasks_file
    from ojax.datasets.transfer import load_split_file

    good = _tasks(tmp_path / "good.npz")
    bomb = tmp_path / "bomb.npz"  # the needed arrays, and 512 MiB of zeros beside them
    bombed = zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED, compresslevel=1)
    with zipfile.ZipFile(good) as src, bombed as dst:
        for name in src.namelist():
            dst.writestr(name, src.read(name))
        _npy_member(dst, "junk.npy", (2**26,), 2**29)
    assert bomb.stat().st_size < 2**22
    tracemalloc.start()
    data = load_tasks_file(bomb)  # only x, y, task (and num_test) are read
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert data.x.shape == (2, 5, 3) and peak < 2**25, peak
    liar = tmp_path / "liar.npz"  # x's header declares 8 TB; its member holds 1 KiB
    with zipfile.ZipFile(good) as src, zipfile.ZipFile(liar, "w", zipfile.ZIP_DEFLATED) as dst:
        for name in ("y.npy", "task.npy"):
            dst.writestr(name, src.read(name))
        _npy_member(dst, "x.npy", (10**9, 1000), 1024)
    with pytest.raises(DataError, match=r"'x' declares shape \(1000000000, 1000\)"):
        load_tasks_file(liar)
    monkeypatch.setattr(npz_module, "size_limit", lambda: 2**20)  # a 1 MiB limit
    big = _tasks(
        tmp_path / "big.npz", x=np.ones((2**17, 3)), y=np.ones(2**17), task=np.zeros(2**17, int)
    )
    with pytest.raises(DataError, match=r"array 'x' declares .* above the limit of"):
        load_tasks_file(big)
    split = tmp_path / "split.npz"
    np.savez(split, source_order=np.arange(2**18), target_orders=np.arange(4))
    with pytest.raises(DataError, match=r"array 'source_order' declares .* above the limit"):
        load_split_file(split)


# ------------------------------------------------------ sweep summaries never name a diverged run

OGD = ["sweep", "ogd_square", "--seeds", "2", "--steps", "200", "--quiet"]


def _sweep_lines(capsys, out: Path, grid: str, *extra: str) -> list[str]:
    capsys.readouterr()
    assert cli.main([*OGD, "--grid", f"learning_rate={grid}", "--out", str(out), *extra]) == 0
    return capsys.readouterr().out.splitlines()


def test_a_diverged_value_is_never_named_best(tmp_path, capsys):
    out = tmp_path / "run"
    lines = _sweep_lines(capsys, out, "1e30,0.1,0.3")
    best = [line for line in lines if line.startswith("ojax: best")]
    assert len(best) == 1 and best[0].startswith("ojax: best learning_rate=0.3: final average")
    assert "next learning_rate=0.1:" in best[0] and "nan" not in best[0]
    config = json.loads((out / "config.json").read_text())
    assert config["best"]["params"]["learning_rate"] == pytest.approx(0.3)
    assert any("learning_rate=1e+30" in line and "nan" in line for line in lines)  # the table


def test_a_diverged_runner_up_loses_on_every_seed(tmp_path, capsys):
    lines = _sweep_lines(capsys, tmp_path / "run", "0.1,1e30")
    (best,) = [line for line in lines if line.startswith("ojax: best")]
    assert best.startswith("ojax: best learning_rate=0.1: final average loss")
    assert best.endswith("; every other value diverged (final average loss NaN or infinite)")
    assert "0 of 2" not in best


def test_wins_count_ties_and_nan_seeds_of_the_runner_up():
    from ojax.app.learner_sweep import best_line
    from ojax.results import ExperimentResult

    result = ExperimentResult()
    result.add("s", "ogd@learning_rate=0.1", "average_loss", np.array([[1.0], [2], [3], [4]]))
    result.add("s", "ogd@learning_rate=0.2", "average_loss", np.array([[1.0], [2.5], [3.5], [4.5]]))
    line = best_line(result, result.rows)
    assert line.endswith("best on 3 of 4 seeds (tied on 1)"), line
    result.rows[1].mean = 2.5  # a runner-up whose seed diverged yet whose row says finite
    result.curves["s/ogd@learning_rate=0.2/average_loss"][2, -1] = np.nan
    assert best_line(result, result.rows).endswith("best on 3 of 4 seeds (tied on 1)")


@pytest.mark.parametrize(
    ("best", "runner_up", "said"),
    [
        ([1.0, 2.0, 3.0], [1.1, 1.9, 3.1], "+- 0.067 (standard error), within 2 standard errors"),
        ([1.0], [1.5], "0.5 (one seed: no standard error)"),
        ([1.0, 2.0, 3.0, 4.0], [1.0, 2.5, 3.5, 4.5], None),  # 0.375 +- 0.125: told apart
    ],
)
def test_no_best_is_named_where_the_seeds_cannot_tell_two_values_apart(best, runner_up, said):
    """The best beats the runner-up on 2 of 3 seeds, yet the paired difference 0.033 is within
    two standard errors (0.067 each): no best; one seed has no standard error: no best."""
    from ojax.app.learner_sweep import best_line
    from ojax.results import ExperimentResult

    result = ExperimentResult()
    result.add("s", "ogd@learning_rate=0.1", "average_loss", np.array(best)[:, None])
    result.add("s", "ogd@learning_rate=0.2", "average_loss", np.array(runner_up)[:, None])
    line = best_line(result, result.rows)
    if said is None:
        assert line.startswith("ojax: best learning_rate=0.1: "), line
    else:
        n = len(best)
        assert line.startswith(f"ojax: no best at {n} seed"), line
        assert said in line and "learning_rate=0.1: final average loss" in line, line


def test_an_all_diverged_grid_writes_its_results_and_says_so(tmp_path, capsys):
    out = tmp_path / "run"
    for _ in range(2):  # a rerun resumes and says the same
        lines = _sweep_lines(capsys, out, "1000,2000")
        assert lines[-2] == (
            "ojax: no value converged: the final average loss is NaN or infinite for all 2 "
            "values of the grid (try smaller values); the table and results.csv hold them"
        )
        assert {"results.csv", "curves.npz", "config.json", "sensitivity.png"} <= {
            p.name for p in out.iterdir()
        }
    config = json.loads((out / "config.json").read_text())
    assert config["best"] is None and config["converged"] is False


def test_an_all_diverged_sweep_result_has_no_best():
    from ojax.sweep import EngineOptions, sweep
    from ojax.validation import InputError

    res = sweep(
        lambda p, d, k: p["x"] * np.nan,
        {"x": [1.0, 2.0]},
        num_seeds=2,
        key=0,
        options=EngineOptions(quiet=True),
    )
    with pytest.raises(InputError, match="no combination has a finite mean.*all 2 diverged"):
        res.best(lambda o: o)
    res = sweep(
        lambda p, d, k: 1.0 / (p["x"] - 1.0),
        {"x": [1.0, 3.0]},
        num_seeds=2,
        key=0,
        options=EngineOptions(quiet=True),
    )
    assert res.best(lambda o: o)["index"] == {"x": 1}  # inf ranks after every finite value


@pytest.mark.parametrize(
    "grid, message",
    [
        ("0.1,0.10,1e-1", "gives the value 0.1 3 times (as 0.1, 0.10, 1e-1)"),
        ("0.1,0.100000001", "0.1, 0.100000001 are equal in float32"),
    ],
)
def test_duplicate_grid_values_are_refused(tmp_path, capsys, grid, message):
    out = tmp_path / "run"
    assert cli.main([*OGD, "--grid", f"learning_rate={grid}", "--out", str(out)]) == 2
    assert message in _one_error_line(capsys)
    assert not out.exists()


# ------------------------------------------------------------------ the rest of the two tables


def test_float16_metrics_accumulate_in_float32():
    import jax.numpy as jnp

    from ojax import metrics

    ones = jnp.ones(70000, jnp.float16)  # longer than float16's 65504
    assert float(metrics.average_loss(ones)[-1]) == 1.0
    assert float(metrics.mistake_rate(ones)[-1]) == 1.0
    assert float(metrics.cumulative_loss(ones)[-1]) == 70000.0
    half = jnp.tile(jnp.asarray([0.0, 1.0], jnp.bfloat16), 3000)
    assert float(metrics.average_loss(half)[-1]) == 0.5  # bfloat16 counts stop at 256


def _ogd_run(mask):
    import jax.numpy as jnp

    import ojax
    from ojax import losses, oco

    learner = ojax.linear_predictor(oco.ogd("none"), losses.square, jnp.zeros(2))
    params = oco.OGDParams(jnp.float32(0.5), jnp.float32(1.0))
    xs, ys = jnp.asarray([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]), jnp.asarray([1.0, 2.0, 3.0])
    return ojax.run(learner, params, xs, ys, losses.square, mask=mask)[1].loss


def test_a_mask_must_be_boolean_or_zeros_and_ones():
    import jax.numpy as jnp

    from ojax import metrics
    from ojax.validation import InputError

    with pytest.raises(InputError, match="mask must be boolean .* got dtype float32"):
        _ogd_run(jnp.full(3, 0.5))
    with pytest.raises(InputError, match=r"mask must take only the values \{0, 1\}, got 2"):
        _ogd_run(jnp.asarray([1, 2, 1]))
    np.testing.assert_array_equal(
        _ogd_run(jnp.asarray([1, 0, 1])), _ogd_run(jnp.asarray([True, False, True]))
    )
    with pytest.raises(InputError, match="mask must be boolean"):
        metrics.average_loss(jnp.ones(3), jnp.full(3, 0.5))


def test_params_of_another_meta_learner_name_the_class_expected():
    from ojax import meta
    from ojax.validation import InputError

    rng = np.random.default_rng(0)
    parts = [
        (rng.normal(size=(n, 3)) / 3, rng.normal(size=n), rng.normal(size=(2, 3)) / 3,
         rng.normal(size=2))
        for n in (4, 5)
    ]  # fmt: skip
    tasks = meta.TaskBlock.from_tasks(parts)
    with pytest.raises(InputError, match="the lazy meta-learner takes MetaParams .* got Fixed"):
        meta.run_meta(meta.lazy(3), meta.FixedBiasParams.paper(0.0), tasks)
    with pytest.raises(InputError, match="takes FixedBiasParams .* got MetaParams"):
        meta.run_meta(meta.biased_within_task(3), meta.MetaParams.paper(), tasks)


def test_a_state_of_another_learner_is_named_before_update():
    import jax.numpy as jnp

    from ojax import oco
    from ojax.validation import InputError, check_state

    learner, params = oco.ogd("none"), oco.OGDParams(jnp.float32(0.1), jnp.float32(1.0))
    hedge = oco.hedge()
    other = hedge.init(oco.HedgeParams(jnp.float32(0.1)), jnp.ones(2) / 2)
    with pytest.raises(InputError, match="not a state of this learner .*expected OGDState"):
        check_state(learner, params, other, jnp.zeros(2))
    good = learner.init(params, jnp.zeros(2))
    check_state(learner, params, learner.update(good, params, jnp.ones(2)), jnp.zeros(2))
    with pytest.raises(InputError, match=r"state.*got shape \(3,\)"):
        check_state(learner, params, learner.init(params, jnp.zeros(3)), jnp.zeros(2))


@pytest.mark.parametrize(
    "flags, named",
    [
        (["--memory-budget", "inf"], "--memory-budget"),
        (["--memory-budget", "1e400"], "--memory-budget"),
        (["--key", str(10**23)], "--key"),
        (["--key", str(-(10**23))], "--key"),
        (["--steps", "1000000000000"], "--steps"),
        (["--steps", "2000000000"], "--steps"),  # int32 fits, the stream's draws do not
        (["--dim", "100000000000"], "--dim"),
    ],
)
def test_numeric_flags_out_of_range_name_their_flag(tmp_path, capsys, flags, named):
    out = tmp_path / "run"
    assert cli.main([*SWEEP, "--out", str(out), *flags]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("ojax: error:") and named in err[-1], err
    assert all(line.startswith("ojax: running ") for line in err[:-1]), err  # the header
    assert not out.exists()


@pytest.mark.parametrize(
    "name, damage, argv",
    [
        ("spambase.csv.gz", "truncate", ["zhao-hoi2010-homogeneous", "--dataset", "spambase"]),
        ("mushrooms_keel.csv.gz", "junk", ["zhao-hoi2010-heterogeneous", "--dataset", "mushrooms"]),
        ("usenet2.mat", "truncate", ["zhao-hoi2010-homogeneous", "--dataset", "usenet2"]),
        ("lenk.mat", "junk", ["denevi2020-lenk"]),
    ],
)
def test_a_corrupt_data_file_is_one_error_line_and_no_stub(tmp_path, capsys, name, damage, argv):
    from ojax.datasets.paths import packaged_data_dir

    data = tmp_path / "data"
    data.mkdir()
    for path in packaged_data_dir().iterdir():
        if path.is_file():
            (data / path.name).write_bytes(path.read_bytes())
    raw = (data / name).read_bytes()
    (data / name).write_bytes(raw[: len(raw) // 2] if damage == "truncate" else b"not the file")
    out = tmp_path / "results" / "day" / "run"
    command = ["run", *argv, "--quick", "--quiet", "--data-dir", str(data), "--out", str(out)]
    assert cli.main(command) == 2
    line = _one_error_line(capsys)
    assert name in line
    assert not (tmp_path / "results").exists()


def test_a_closed_pipe_ends_quietly(tmp_path):
    for args in (["list"], [*SWEEP, "--out", str(tmp_path / "run")]):
        proc = subprocess.Popen(
            [sys.executable, "-m", "ojax.app.cli", *args],
            cwd=tmp_path,
            env=_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert proc.stdout is not None
        proc.stdout.close()  # `| head -0`: the reader is gone before ojax writes
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 141 and b"Traceback" not in err and b"Broken" not in err, err


def test_the_command_ends_at_once_with_its_whole_output(tmp_path, capsys):
    # The command skips the interpreter's teardown (os._exit): stdout, a file here (block
    # buffered), must still hold every line; a program that imports ojax gets the status back.
    assert cli.main(["list"]) == 0
    expected = capsys.readouterr().out
    with open(tmp_path / "out.txt", "w") as stdout:
        proc = subprocess.run(
            [sys.executable, "-m", "ojax.app.cli", "list"], cwd=tmp_path, env=_env(), stdout=stdout
        )
    assert proc.returncode == 0 and (tmp_path / "out.txt").read_text() == expected
    assert interrupt.end(3) == 3


# The console script, with Ctrl-C on (an xdist worker may start its children with it ignored)
_CONSOLE = """
import runpy, signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)
sys.argv = ["ojax", *sys.argv[1:]]
runpy.run_module("ojax.app.cli", run_name="__main__")
"""


@pytest.mark.parametrize("after", [0.3, 1.0, 2.5])  # importing JAX, starting it, running
def test_ctrl_c_at_any_moment_is_one_line_and_status_130(tmp_path, after):
    argv = ["sweep", "ogd_square", "--steps", "200000", "--quiet", "--out", "run"]
    proc = subprocess.Popen(
        [sys.executable, "-c", _CONSOLE, *argv],
        cwd=tmp_path,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(after)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    lines = [line for line in err.splitlines() if line and not line.startswith("ojax: running")]
    assert proc.returncode == 130, err
    assert lines == ["ojax: interrupted; finished work is kept, re-run to resume"], err


def test_a_split_file_of_three_orders_is_reported_as_three_orders(tmp_path, capsys):
    split = tmp_path / "split.npz"
    rng = np.random.default_rng(0)
    orders = np.stack([rng.permutation(np.arange(300, 1500))[:40] for _ in range(3)])
    np.savez(split, source_order=np.arange(300), target_orders=orders, dataset=np.array("usenet2"))
    out = tmp_path / "run"
    argv = ["run", "zhao-hoi2010-homogeneous", "--quick", "--quiet", "--split", str(split)]
    assert cli.main([*argv, "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "ojax: running zhao-hoi2010-homogeneous: 3 orders, quick, float32 on " in err
    assert json.loads((out / "config.json").read_text())["seeds"] == 3
    assert cli.main([*argv, "--seeds", "5", "--out", str(tmp_path / "other")]) == 2
    assert "the split file's 3 target orders are the runs" in _one_error_line(capsys)


# --------------------------------------------------- 20 more tries of a hostile user (issue 20)


def _rerun(out: Path, capsys, *extra) -> str:
    capsys.readouterr()
    assert cli.main([*SWEEP, "--out", str(out), *extra]) == 2
    return _one_error_line(capsys)


def test_attack_01_a_record_listing_its_files_as_a_string(tmp_path, capsys, finished_sweep):
    out = _finished(finished_sweep, tmp_path / "run")
    (out / "a").write_bytes(b"the user's")  # "a" would be one of the 'names' of "a,b"
    record = json.loads((out / ".ojax-run.json").read_text())
    (out / ".ojax-run.json").write_text(json.dumps({**record, "files": "a"}))
    before = _snapshot(out)
    assert "lists its files as a str, not a list" in _rerun(out, capsys)
    assert _snapshot(out) == before


@pytest.mark.parametrize("planted", ["/dev/zero", "deep", "fifo"])
def test_attack_02_a_record_that_never_ends(tmp_path, capsys, planted, finished_sweep):
    out = _finished(finished_sweep, tmp_path / "run")
    record = out / ".ojax-run.json"
    record.unlink()
    if planted == "deep":
        record.write_text("[" * 100000 + "]" * 100000)
    elif planted == "fifo":
        os.mkfifo(record)
    else:
        record.symlink_to(planted)
    start = time.monotonic()
    assert "another or unknown configuration" in _rerun(out, capsys)  # not read, not a hang
    assert time.monotonic() - start < 30


def test_attack_03_a_lock_file_linked_to_a_users_file(tmp_path, capsys, finished_sweep):
    out = _finished(finished_sweep, tmp_path / "run")
    victim = tmp_path / "bashrc"
    victim.write_bytes(b"export PATH=...\n")
    (out / LOCK).symlink_to(victim)
    assert f"{LOCK} is not a regular file" in _rerun(out, capsys)
    assert victim.read_bytes() == b"export PATH=...\n"
    assert f"{LOCK} is not a regular file" in _rerun(out, capsys, "--seeds", "3", "--overwrite")
    assert victim.read_bytes() == b"export PATH=...\n"


def test_attack_04_a_folder_where_ojax_writes_a_file(tmp_path, capsys, finished_sweep):
    out = _finished(finished_sweep, tmp_path / "run")
    (out / "results.csv").unlink()
    (out / "results.csv").mkdir()
    (out / "results.csv" / "mine.txt").write_bytes(b"mine")
    assert "'results.csv' is a folder, where ojax writes a file" in _rerun(out, capsys)
    assert (out / "results.csv" / "mine.txt").read_bytes() == b"mine"


def test_attack_05_a_chunk_store_linked_outside_the_folder(tmp_path, capsys, finished_sweep):
    out = _finished(finished_sweep, tmp_path / "run")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / ".tmp-keep").write_bytes(b"not ojax's")
    shutil.rmtree(out / ".sweep")
    (out / ".sweep").symlink_to(outside)
    assert ".sweep is a link or a file" in _rerun(out, capsys, "--no-resume")
    assert _snapshot(outside) == {".tmp-keep": b"not ojax's"}


def test_attack_06_a_chunk_file_declaring_gigabytes(tmp_path, capsys, finished_sweep):
    import zipfile

    out = _finished(finished_sweep, tmp_path / "run")
    (chunk,) = sorted(out.glob(".sweep/*/chunk-*.npz"))
    with zipfile.ZipFile(chunk, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        archive.writestr("index.npy", b"")  # replaced below by a real header
        _npy_member(archive, "out0.npy", (2**28,), 2**31)
    line = _rerun(out, capsys)
    assert "its array 'out0.npy' declares" in line and "move it away" in line


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_attack_07_a_data_file_that_is_a_pipe_or_a_device(tmp_path, capsys, kind):
    data = tmp_path / "data"
    data.mkdir()
    if kind == "fifo":
        os.mkfifo(data / "lenk.mat")
    else:
        (data / "lenk.mat").symlink_to("/dev/zero")
    out = tmp_path / "run"
    argv = ["run", "denevi2020-lenk", "--quick", "--data-dir", str(data), "--out", str(out)]
    assert cli.main(argv) == 2
    assert "lenk.mat' is not a regular file" in _one_error_line(capsys)
    assert not out.exists()


def test_attack_08_one_huge_task_among_many_small_ones(tmp_path):
    from ojax.datasets import DataError, load_tasks_file

    task = np.concatenate([np.zeros(500_000, np.int64), np.repeat(np.arange(1, 100_001), 2)])
    path = tmp_path / "t.npz"
    np.savez(path, x=np.ones((len(task), 3), np.float32), y=np.ones(len(task)), task=task)
    start = time.monotonic()
    with pytest.raises(DataError, match=r"100001 tasks padded to the largest \(500000 points"):
        load_tasks_file(path)
    assert time.monotonic() - start < 60  # grouped by sorting, refused before padding


@pytest.mark.parametrize(
    "arrays, message",
    [
        ({"x": np.ones((6, 0))}, "of 0 feature"),
        ({"task": np.zeros(9, np.int64)}, "at least 2 tasks"),
    ],
)
def test_attack_09_tasks_without_features_or_a_meta_test(tmp_path, arrays, message):
    from ojax import meta
    from ojax.datasets import DataError, load_tasks_file
    from ojax.validation import InputError

    if "x" in arrays:
        arrays = {**arrays, "y": np.ones(6), "task": np.repeat([0, 1], 3)}
    with pytest.raises(DataError, match=message):
        load_tasks_file(_tasks(tmp_path / "t.npz", **arrays))
    with pytest.raises(InputError, match="has no features"):
        meta.TaskBlock.from_tasks([(np.ones((2, 0)), np.ones(2), np.ones((1, 0)), np.ones(1))])


@pytest.mark.parametrize("value", ["inf", "nan", "-1", "0"])
def test_attack_10_an_endless_peer_timeout(monkeypatch, value):
    from ojax.sweep import distributed

    monkeypatch.setenv("OJAX_PEER_TIMEOUT", value)
    with pytest.raises(distributed.InputError, match="positive, finite number of seconds"):
        distributed.peer_timeout_from_env()


def test_attack_11_narrow_integer_losses_do_not_wrap():
    import jax.numpy as jnp

    from ojax import metrics

    mistakes = jnp.ones(300, jnp.int8)
    assert int(metrics.cumulative_loss(mistakes)[-1]) == 300  # int8 wrapped to 44
    assert float(metrics.mistake_rate(mistakes)[-1]) == 1.0


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--memory-budget", "0.1"], "argument --memory-budget: must be at least 1 byte"),
        (["--seeds", str(10**20)], "argument --seeds: must be a positive integer up to 2**31"),
        (["--chunk-size", str(10**30)], "argument --chunk-size: must be a positive integer"),
    ],
)
def test_attack_12_sizes_and_counts_no_machine_has(tmp_path, capsys, flags, message):
    out = tmp_path / "run"
    assert cli.main([*SWEEP, "--out", str(out), *flags]) == 2
    assert message in _one_error_line(capsys) and not out.exists()
    assert cli.main(["run", "basics", "--quick", "--seeds", str(10**20), "--out", str(out)]) == 2
    assert "--seeds" in _one_error_line(capsys) and not out.exists()


def test_attack_13_a_world_writable_compilation_cache(tmp_path, capsys):
    cache = tmp_path / "shared-cache"
    cache.mkdir()
    cache.chmod(0o777)
    out = tmp_path / "run"
    assert cli.main([*SWEEP, "--out", str(out), "--compile-cache", str(cache)]) == 2
    assert "is writable by every user of this machine" in _one_error_line(capsys)
    assert not out.exists()


def test_attack_14_a_split_file_naming_a_path_as_its_dataset(tmp_path, capsys):
    split = tmp_path / "s.npz"
    np.savez(split, source_order=np.arange(5), target_orders=np.arange(300, 320),
             dataset=np.array("../../etc/passwd"))  # fmt: skip
    out = tmp_path / "run"
    argv = ["run", "zhao-hoi2010-homogeneous", "--quick", "--split", str(split), "--out", str(out)]
    assert cli.main(argv) == 2
    assert "dataset must be one of" in _one_error_line(capsys) and not out.exists()


def test_attack_15_a_manifest_that_is_not_an_object(tmp_path, capsys, finished_sweep):
    out = _finished(finished_sweep, tmp_path / "run")
    (manifest,) = out.glob(".sweep/*/sweep.json")
    manifest.write_text("[1, 2, 3]")
    assert "is not a readable sweep manifest (not a JSON object)" in _rerun(out, capsys)


def test_attack_16_junk_in_the_program_store_with_a_valid_checksum(tmp_path, monkeypatch):
    import jax.numpy as jnp

    from ojax import programs, projections

    monkeypatch.setattr(programs, "folder", lambda: tmp_path)
    w = jnp.asarray([3.0, 4.0, 0.5])
    first = programs.jit(projections.simplex)(w, 2.0)
    for path in tmp_path.glob("*.jaxexport"):
        junk = b"not a program"
        path.write_bytes(hashlib.sha256(junk).digest() + junk)
    np.testing.assert_array_equal(programs.jit(projections.simplex)(w, 2.0), first)
    assert all(programs._read(p) != b"not a program" for p in tmp_path.glob("*.jaxexport"))


def test_attack_17_a_library_seed_beyond_64_bits():
    from ojax.sweep import EngineOptions, sweep
    from ojax.validation import InputError

    with pytest.raises(InputError, match="key must be a 64-bit integer seed"):
        sweep(
            lambda p, d, k: p["x"],
            {"x": [1.0]},
            num_seeds=1,
            key=2**70,
            options=EngineOptions(quiet=True),
        )


def test_attack_18_an_out_name_longer_than_the_file_system_takes(tmp_path, capsys):
    out = tmp_path / ("x" * 300)
    assert cli.main([*SWEEP, "--out", str(out)]) == 2
    assert "--out: cannot inspect" in _one_error_line(capsys)


def test_attack_19_grid_values_in_other_scripts_or_notations(tmp_path, capsys):
    for grid in ("0x10", "1,,2", "1e-50"):  # hexadecimal, an empty value, below float32
        assert (
            cli.main([*SWEEP, "--out", str(tmp_path / "run"), "--grid", f"learning_rate={grid}"])
            == 2
        )
        assert "learning_rate" in _one_error_line(capsys)
    assert not (tmp_path / "run").exists()
    lines = _sweep_lines(capsys, tmp_path / "ok", "\u0661,0.5")  # an Arabic-Indic 1 is 1
    assert any("learning_rate=1:" in line or "learning_rate=1 " in line for line in lines)


def test_attack_20_a_tasks_file_that_is_a_folder_or_a_pipe(tmp_path, capsys):
    folder = tmp_path / "tasks.npz"
    folder.mkdir()
    pipe = tmp_path / "pipe.npz"
    os.mkfifo(pipe)
    for path in (folder, pipe):
        out = tmp_path / "run"
        argv = ["run", "denevi2020-lenk", "--quick", "--tasks", str(path), "--out", str(out)]
        assert cli.main(argv) == 2
        assert "expected a file" in _one_error_line(capsys) and not out.exists()


# ------------------------------------------- names read from a results folder are data, not paths


def _rename_curves(out: Path, metric: str) -> None:
    """Renames every ``.../average_loss`` curve of ``out`` to ``.../METRIC`` and names
    ``metric`` in its config.json (what a crafted results folder holds)."""
    with np.load(out / "curves.npz") as data:
        arrays = {k.replace("/average_loss", f"/{metric}"): data[k] for k in data.files}
    np.savez(out / "curves.npz", **arrays)
    config = json.loads((out / "config.json").read_text())
    (out / "config.json").write_text(json.dumps({**config, "metric": metric}))


@pytest.mark.parametrize("where", ["relative", "absolute"])
def test_attack_21_plot_never_writes_a_figure_outside_its_folder(
    tmp_path, capsys, finished_sweep, where
):
    out = _finished(finished_sweep, tmp_path / "deep" / "run")
    victim = tmp_path / "deep" / "victim.png"  # ../victim from the run, ../../ from its tmp
    victim.write_bytes(b"the user's figure")
    metric = "../../victim" if where == "relative" else str(tmp_path / "deep" / "victim")
    _rename_curves(out, metric)
    before = _snapshot(tmp_path)
    capsys.readouterr()
    assert cli.main(["plot", str(out)]) == 2
    line = _one_error_line(capsys)
    assert "'metric' must be a plain name" in line and "config.json" in line, line
    assert _snapshot(tmp_path) == before  # nothing written, moved or overwritten
    from ojax.plotting import new_figure, save_figure
    from ojax.validation import InputError

    for stem in (metric, ".hidden", "a/b", ""):  # the shared writer of figures refuses too
        with pytest.raises(InputError, match="not a plain file name"):
            save_figure(new_figure()[0], tmp_path, stem)
    assert _snapshot(tmp_path) == before


def test_attack_22_no_file_is_written_through_a_planted_link(tmp_path):
    import jax.numpy as jnp

    from ojax import fileio
    from ojax.state_io import load_state, save_state

    victim = tmp_path / "victim"
    victim.write_bytes(b"the user's")
    state = {"w": jnp.arange(3.0)}
    target = tmp_path / "s.ojax-state"
    (tmp_path / "s.ojax-state.partial").symlink_to(victim)  # the old fixed temporary name
    save_state(target, state)
    assert victim.read_bytes() == b"the user's"
    target.unlink()
    target.symlink_to(victim)  # a link at the target itself is replaced, not followed
    save_state(target, state)
    assert victim.read_bytes() == b"the user's" and not target.is_symlink()
    np.testing.assert_array_equal(load_state(target, like=state)["w"], state["w"])
    for name in ("results.csv", "c.npz", "config.json"):
        (tmp_path / name).symlink_to(victim)
    fileio.atomic_write(tmp_path / "results.csv", lambda f: f.write("a,b\n"), binary=False)
    fileio.atomic_savez(tmp_path / "c.npz", {"x": np.zeros(2)})
    fileio.atomic_json(tmp_path / "config.json", {"a": 1})
    assert victim.read_bytes() == b"the user's"
    assert not any(p.is_symlink() for p in tmp_path.iterdir() if p.name != "s.ojax-state.partial")
    with pytest.raises(FileNotFoundError, match=r"the folder .*missing' does not exist"):
        save_state(tmp_path / "missing" / "s.ojax-state", state)  # named, not a temporary file


def test_a_written_file_takes_the_umask_and_reading_it_does_not_change_it(tmp_path, monkeypatch):
    """atomic_write's file has mode 0o666 less the process's umask; on Linux the umask is read
    from /proc/self/status, never set (setting it, even for a moment, would hand a file another
    thread creates then the mask 0)."""
    from ojax import fileio

    old = os.umask(0o027)
    try:
        fileio.atomic_write(tmp_path / "a.txt", lambda f: f.write(b"a"))
        assert (tmp_path / "a.txt").stat().st_mode & 0o777 == 0o640
        if Path("/proc/self/status").read_text().count("Umask:"):

            def refused(mask):
                raise AssertionError(f"os.umask({mask:o}) called")

            monkeypatch.setattr(fileio.os, "umask", refused)
            fileio.atomic_write(tmp_path / "b.txt", lambda f: f.write(b"b"))
            assert (tmp_path / "b.txt").stat().st_mode & 0o777 == 0o640
    finally:
        monkeypatch.undo()
        os.umask(old)


def _writes(path: Path) -> list[str]:
    """The calls of ``path`` that create or write a file by name (``open(.., "w")``,
    ``write_text`` / ``write_bytes``, ``np.save*``, ``savefig``, ``mkstemp``, a ``ZipFile``
    opened for writing)."""
    import ast

    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.Call):
            continue
        name = getattr(node.func, "attr", getattr(node.func, "id", ""))
        texts = [*node.args, *(k.value for k in node.keywords)]
        modes = [t.value for t in texts if isinstance(t, ast.Constant) and isinstance(t.value, str)]
        writing = any(set(m) & set("wax") and len(m) <= 3 for m in modes)
        if (
            name in ("write_text", "write_bytes", "save", "savez", "savez_compressed", "mkstemp")
            or (name in ("open", "ZipFile", "fdopen") and writing)
            or (name == "savefig" and path.name != "plotting.py")
        ):
            found.append(f"{path.relative_to(ROOT)}:{node.lineno} {name}")
    return found


WRITERS_ELSEWHERE = {
    "ojax/programs/cache.py mkstemp": "a probe that the cache folder is writable, removed",
    "ojax/state_io.py ZipFile": "the archive written into the file atomic_write opened",
}
"""Calls outside :mod:`ojax.fileio` that :func:`_writes` finds, and why each is no writer of
its own."""


def test_every_file_ojax_writes_goes_through_the_one_writer():
    """Only :mod:`ojax.fileio` creates files by name (the lock file, opened without following
    links, is locked in place and never replaced; plotting's ``savefig`` writes into the file
    object the shared writer gives it)."""
    found = {
        call.replace(call.split()[0], call.split()[0].rpartition(":")[0])
        for path in sorted((ROOT / "ojax").rglob("*.py"))
        if "fileio" not in path.parts
        for call in _writes(path)
    }
    assert found == set(WRITERS_ELSEWHERE), found
    assert _writes(ROOT / "ojax" / "fileio" / "__init__.py")  # the check finds writers


# --------------------------------------------------- readers never wait on a pipe, never inflate


def _returns_soon(call, seconds: float = 20.0):
    """``call()``'s exception (or None), failing if it has not returned in ``seconds`` (a
    reader blocked on a pipe never would)."""
    import threading

    box: list = []

    def target():
        try:
            call()
            box.append(None)
        except BaseException as exc:  # noqa: BLE001 - returned to the test
            box.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert box, f"{call} still blocked after {seconds} s"
    return box[0]


def test_attack_23_every_reader_refuses_a_pipe_at_once(tmp_path):
    from ojax import fileio
    from ojax.datasets.streaming import BlockReader
    from ojax.state_io import StateFileError, load_state

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    np.save(tmp_path / "y.npy", np.zeros(3))
    calls = {
        "from_npy": lambda: BlockReader.from_npy(fifo, tmp_path / "y.npy"),
        "from_npz": lambda: BlockReader.from_npz(fifo),
        "load_state": lambda: load_state(fifo, like={"w": np.zeros(3)}),
        "read_arrays": lambda: fileio.read_arrays(fifo),
        "read_json": lambda: fileio.read_json(fifo),
    }
    for name, call in calls.items():
        exc = _returns_soon(call)
        assert isinstance(exc, fileio.DataError), (name, exc)
        assert "fifo' is a pipe, a device or a socket" in str(exc), (name, exc)
    assert isinstance(_returns_soon(calls["load_state"]), StateFileError)


def _bomb_curves(out: Path, declared: int) -> None:
    """``out/curves.npz`` with its own curves and one deflated member declaring ``declared``
    bytes of zeros."""
    import zipfile

    with np.load(out / "curves.npz") as data:
        arrays = {k: data[k] for k in data.files}
    with zipfile.ZipFile(out / "curves.npz", "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        for key, value in arrays.items():
            with archive.open(f"{key}.npy", "w") as member:
                np.lib.format.write_array(member, value)
        _npy_member(archive, "x/junk/average_loss.npy", (declared // 8,), declared)


def test_attack_24_a_curves_file_that_inflates_is_refused_unread(
    tmp_path, capsys, monkeypatch, finished_sweep
):
    import tracemalloc

    from ojax import fileio, results

    out = _finished(finished_sweep, tmp_path / "run")
    _bomb_curves(out, 2**26)  # 64 MiB of zeros in a file of well under 1 MiB
    assert (out / "curves.npz").stat().st_size < 2**20
    monkeypatch.setattr(fileio, "size_limit", lambda: 2**24)  # a 16 MiB host
    tracemalloc.start()
    with pytest.raises(fileio.DataError, match=r"curves.npz.*declares 64\.0 MiB.*above the limit"):
        results.load(out, pandas=False)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 2**22, peak
    capsys.readouterr()
    assert cli.main(["plot", str(out)]) == 2
    assert "above the limit" in _one_error_line(capsys)


@pytest.mark.parametrize(
    "file, content, message",
    [
        ("config.json", "[1, 2]", "config.json' must hold a JSON object, got list"),
        ("config.json", "{", "config.json' is not valid JSON"),
        ("results.csv", "experiment,mean\nsweep,x\n", "results.csv': row 2 is not a row of"),
        ("results.csv", b"\xff\xfe", "results.csv' is not UTF-8 text"),
        ("curves.npz", "not a zip", "curves.npz': cannot read as a zip"),
        ("curves.npz", {"a/b/average_loss": np.zeros(3)}, "curve 'a/b/average_loss' must be"),
        (
            "curves.npz",
            {"a/b/average_loss": np.zeros((1, 3)), "a/b/average_loss:steps": np.zeros(2)},
            "'a/b/average_loss:steps' must be \\(3,\\) numbers",
        ),
        ("config.json", {"grid": {"lr": ["x", "y"]}}, "cannot be drawn \\(ValueError"),
    ],
)
def test_attack_25_a_crafted_results_folder_is_one_line_naming_the_file(
    tmp_path, capsys, finished_sweep, file, content, message
):
    out = _finished(finished_sweep, tmp_path / "run")
    path = out / file
    if isinstance(content, dict) and file == "curves.npz":
        np.savez(path, **content)
    elif isinstance(content, dict):  # a grid of one axis whose values are not numbers
        config = json.loads(path.read_text())
        with np.load(out / "curves.npz") as data:
            keys = [k for k in data.files if k.endswith("/average_loss")]
        content = {"grid": {"lr": ["x"] * len(keys)}}
        path.write_text(json.dumps({**config, **content}))
    else:
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
    capsys.readouterr()
    assert cli.main(["plot", str(out)]) == 2
    line = _one_error_line(capsys)
    assert re.search(message, line), line


def test_attack_26_a_state_saved_onto_a_folder_names_the_folder_and_leaves_nothing(tmp_path):
    import jax.numpy as jnp

    import ojax

    folder = tmp_path / "states"
    folder.mkdir()
    with pytest.raises(IsADirectoryError, match="a folder is there") as info:
        ojax.save_state(folder, {"w": jnp.ones(2)})
    assert info.value.filename == str(folder)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["states"] and not any(folder.iterdir())


def test_attack_27_a_feature_index_no_jax_array_holds_is_refused_by_line(tmp_path):
    from ojax.datasets import read_stream
    from ojax.fileio import DataError

    path = tmp_path / "wide.svm"
    path.write_text("+1 1:1 2147483647:1\n-1 3000000000:1\n")
    with pytest.raises(DataError, match="line 2: feature index 3000000000 is above 2147483647"):
        read_stream(path)
