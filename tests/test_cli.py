"""The `ojax` command: outputs of INTERFACE.md and exit status 2 on bad input."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ojax.app import cli
from ojax.experiments import EXPERIMENTS, ExperimentSpec
from ojax.results import RESULT_COLUMNS


def test_list_prints_every_experiment(capsys):
    assert cli.main(["list"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert [line.split()[0] for line in lines] == list(EXPERIMENTS)
    assert all(len(line.split(None, 1)) == 2 for line in lines)


def test_run_basics_quick_writes_the_contract(tmp_path):
    from ojax.sweep import chunk

    chunk.COMPILED.clear()  # this process may have compiled the same programs already
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
    # what the process spent compiling, program by program, and its peak memory
    assert 0.05 < config["peak_rss_gib"] < 64
    programs = config["programs"]["by_program"]
    ogd = programs["basics-ogd"]  # the sweep of example 6, labelled with its name
    assert ogd["compilations"] >= 1 and ogd["compile_seconds"] > 0 and ogd["lower_seconds"] > 0
    total = config["programs"]["total"]
    assert total["compilations"] == sum(p["compilations"] for p in programs.values())


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
        [sys.executable, "-m", "ojax.app.cli", "list"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0 and "basics" in done.stdout
    done = subprocess.run(
        [sys.executable, "-m", "ojax.app.cli", "run", "nope"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and done.stderr.count("\n") == 1


# --------------------------------------------------------------- output folders (issue 10)


def _sweep(out, *extra) -> int:
    """A fast real sweep (Hedge, 20 steps): writes results, figures and the chunk store."""
    argv = ["sweep", "hedge", "--steps", "20", "--dim", "2", "--out", str(out), "--quiet"]
    return cli.main([*argv, *extra])


def _snapshot(folder: Path) -> dict[str, bytes]:
    """Every file below ``folder`` (recursively) -> its bytes."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def sweep_run(tmp_path_factory) -> Path:
    """A finished sweep over a two-value grid (so it also writes ``sensitivity.png``)."""
    out = tmp_path_factory.mktemp("sweep") / "run"
    assert _sweep(out, "--seeds", "2", "--grid", "learning_rate=0.1,1") == 0
    return out


@pytest.fixture
def old_run(sweep_run, tmp_path) -> Path:
    """A private copy of :func:`sweep_run`."""
    out = tmp_path / "old"
    shutil.copytree(sweep_run, out)
    return out


@pytest.mark.parametrize("command", [["run", "basics", "--quick"], ["sweep", "hedge"]])
def test_out_that_is_a_file_exits_2_and_keeps_it(command, tmp_path, capsys):
    target = tmp_path / "results.txt"
    target.write_bytes(b"mine\n")
    assert cli.main([*command, "--out", str(target)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ojax: error: --out: ") and str(target) in err
    assert "not a folder" in err and len(err.strip().splitlines()) == 1
    assert target.read_bytes() == b"mine\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.txt"]


@pytest.mark.parametrize("command", [["run", "basics", "--quick"], ["sweep", "hedge"]])
def test_out_that_cannot_be_created_exits_2(command, tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_bytes(b"x")
    out = blocker / "sub" / "out"  # below a regular file: unwritable even as root
    assert cli.main([*command, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ojax: error: --out: ") and str(out) in err
    assert str(blocker) in err and len(err.strip().splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


def test_missing_data_file_exits_2_before_the_out_folder(tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    out = tmp_path / "out"
    argv = ["run", "denevi2020-lenk", "--quick", "--data-dir", str(empty), "--out", str(out)]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "lenk.mat" in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


@pytest.mark.parametrize(
    "argv,message",
    [
        (["sweep", "hedge", "--steps", "20", "--dim", "2", "--seeds", "3"], "seeds=3"),
        (["sweep", "hedge", "--steps", "20", "--dim", "2", "--seeds", "2"], "grid="),
        (["sweep", "hedge", "--steps", "30", "--dim", "2", "--seeds", "2"], "steps=30"),
        (["sweep", "ogd", "--steps", "20", "--dim", "2", "--seeds", "2"], "learner=ogd"),
        (["run", "basics", "--quick", "--seeds", "2"], "this run is basics"),
    ],
)
def test_a_different_run_is_refused_and_nothing_changes(argv, message, old_run, capsys):
    before = _snapshot(old_run)
    assert cli.main([*argv, "--out", str(old_run)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert f"--out {str(old_run)!r} holds a run of sweep" in err
    assert message in err and "pass --overwrite to replace it" in err
    assert _snapshot(old_run) == before


def test_overwrite_replaces_every_file_of_the_old_run(old_run):
    before = _snapshot(old_run)
    assert any(name.startswith(".sweep/") for name in before)
    assert "sensitivity.png" in before
    assert _sweep(old_run, "--seeds", "3", "--overwrite") == 0
    after = _snapshot(old_run)
    # no file of the old run remains: every path is gone or holds the new run's bytes
    assert all(after.get(name) != data for name, data in before.items())
    assert "sensitivity.png" not in after
    old_store = {name.split("/")[1] for name in before if name.startswith(".sweep/")}
    new_store = {name.split("/")[1] for name in after if name.startswith(".sweep/")}
    assert new_store and not old_store & new_store
    record = json.loads(after[".ojax-run.json"])
    assert record["identity"]["seeds"] == 3
    top = {name for name in after if "/" not in name}
    assert top == {*record["files"], ".ojax-run.json"}
    with open(old_run / "results.csv") as f:
        assert {row["n_seeds"] for row in csv.DictReader(f)} == {"3"}


def test_overwrite_never_removes_files_ojax_did_not_write(old_run, tmp_path, capsys):
    (old_run / "notes.txt").write_text("mine")
    before = _snapshot(old_run)
    assert _sweep(old_run, "--seeds", "3", "--overwrite") == 2
    assert "'notes.txt'" in capsys.readouterr().err
    assert _snapshot(old_run) == before
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "data.csv").write_text("1,2\n")
    assert _sweep(foreign, "--seeds", "2", "--overwrite") == 2
    assert "holds no ojax run" in capsys.readouterr().err
    assert _snapshot(foreign) == {"data.csv": b"1,2\n"}


def test_the_same_run_resumes_in_its_folder_with_header_line_table_and_best(old_run, capsys):
    before = _snapshot(old_run)
    capsys.readouterr()
    assert _sweep(old_run, "--seeds", "2", "--grid", "learning_rate=0.1,1") == 0
    after = _snapshot(old_run)
    assert set(after) == set(before)
    config = json.loads(after["config.json"])
    assert config["sweep"]["chunks_loaded"] == config["sweep"]["num_chunks"] > 0
    assert config["sweep"]["chunks_computed"] == 0
    for name in ("results.csv", "curves.npz"):
        assert after[name] == before[name]
    # what the resumed run prints: the header line, the table and the best value
    printed = capsys.readouterr()
    assert "ojax: running sweep hedge: 2 seeds, float32 on " in printed.err
    lines = printed.out.splitlines()
    assert lines[0].split() == ["dataset", "method", "metric", "mean", "std", "seeds"]
    with open(old_run / "results.csv", newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["metric"] == "average_loss"]
    assert [line.split()[1] for line in lines[1:3]] == [r["method"] for r in rows]
    assert [line.split()[2] for line in lines[3:5]] == ["regret", "regret"]  # a comparator
    best = min(rows, key=lambda r: float(r["mean"]))["method"].partition("@")[2]
    # better on 1 of the 2 seeds, within two standard errors: no best is named
    assert lines[5].startswith(f"ojax: no best at 2 seeds: {best}: final average loss ")
    assert "within 2 standard errors (best on 1 of 2 seeds)" in lines[5]


def test_quick_honours_seeds_with_a_header_and_unix_line_endings(tmp_path, capsys, monkeypatch):
    import ojax.experiments.denevi2020 as denevi

    # one method on fewer tasks (compile time): the seeds are what is checked here
    monkeypatch.setattr(denevi, "PF_METHODS", {"ITL": denevi.PF_METHODS["ITL"]})
    monkeypatch.setattr(denevi, "SS_METHODS", {})
    small = denevi.QUICK_SYNTHETIC._replace(num_tasks=20, num_checkpoints=3)
    monkeypatch.setattr(denevi, "QUICK_SYNTHETIC", small)
    out = tmp_path / "synthetic"
    argv = ["run", "denevi2020-synthetic", "--quick", "--seeds", "5", "--out", str(out)]
    assert cli.main([*argv, "--quiet"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("ojax: running denevi2020-synthetic: 5 seeds, quick, float32 on ")
    raw = (out / "results.csv").read_bytes()
    assert b"\r" not in raw and raw.endswith(b"\n")
    with open(out / "results.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert rows and {row["n_seeds"] for row in rows} == {"5"}
    curves = np.load(out / "curves.npz")
    assert all(curves[k].shape[0] == 5 for k in curves if not k.endswith(":steps"))


def _tiny_experiment(config):
    """A stand-in experiment (no JAX): one row per seed count, so the CLI's choices show."""
    from ojax.experiments import ExperimentResult

    result = ExperimentResult()
    for _ in config.progress(range(3), "tiny"):  # a progress bar, unless --quiet
        pass
    result.add("data", "method", "metric", np.arange(config.seeds, dtype=np.float64))
    result.add("data", "method", "constant", np.full(config.seeds, 2.5))
    return result


@pytest.fixture
def tiny(monkeypatch):
    """Registers ``tiny`` (paper: 7 seeds, --quick: 2)."""
    spec = ExperimentSpec(
        name="tiny", summary="a stand-in", run=_tiny_experiment, default_seeds=7, quick_seeds=2
    )
    monkeypatch.setitem(EXPERIMENTS, "tiny", spec)
    return spec


@pytest.mark.parametrize(
    "flags,seeds,header",
    [
        (["--quick"], 2, "2 seeds, quick"),  # the experiment's quick default
        (["--quick", "--seeds", "9"], 9, "9 seeds, quick"),
        ([], 7, "7 seeds"),
        (["--seeds", "1"], 1, "1 seed"),
    ],
)
def test_run_seeds_and_header(flags, seeds, header, tiny, tmp_path, capsys):
    out = tmp_path / "tiny"
    assert cli.main(["run", "tiny", *flags, "--out", str(out), "--quiet"]) == 0
    printed = capsys.readouterr()
    err = printed.err.splitlines()
    assert err[0].startswith(f"ojax: running tiny: {header}, float32 on ")
    # --quiet hides progress only: the results table still prints, under its header
    table = printed.out.splitlines()
    assert table[0].split() == ["dataset", "method", "metric", "mean", "std", "seeds"]
    assert table[1].split()[:3] == ["data", "method", "metric"]
    assert table[1].split()[-1] == str(seeds)
    assert table[2].split()[3:] == ["2.5", "-", str(seeds)]  # the same for every seed: no std
    assert (table[1].split()[4] == "-") == (seeds == 1)
    with open(out / "results.csv", newline="") as f:
        assert [row["n_seeds"] for row in csv.DictReader(f)] == [str(seeds)] * 2
    assert json.loads((out / "config.json").read_text())["seeds"] == seeds


def test_run_folder_holds_one_run(tiny, tmp_path, capsys):
    out = tmp_path / "tiny"
    assert cli.main(["run", "tiny", "--quick", "--out", str(out), "--quiet"]) == 0
    before = _snapshot(out)
    assert cli.main(["run", "tiny", "--quick", "--x64", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "holds a run of tiny with x64=false; this run is tiny with x64=true" in err
    assert _snapshot(out) == before
    assert cli.main(["run", "tiny", "--out", str(out), "--quiet", "--overwrite"]) == 0
    assert json.loads((out / "config.json").read_text())["seeds"] == 7
    assert cli.main(["run", "tiny", "--out", str(out), "--quiet"]) == 0  # the same run again


def test_quick_defaults_keep_the_seed_counts():
    """``--quick`` without ``--seeds`` runs as many seeds as before ``--quick`` honoured
    ``--seeds`` (the experiments then clamped the paper's count)."""
    quick = {
        "basics": 10,
        "denevi2020-synthetic": 4,
        "denevi2020-wealth": 3,
        "denevi2020-schools": 3,
        "denevi2020-lenk": 3,
        "neu-rosasco2018": 50,
        "zhao-hoi2010-homogeneous": 20,
        "zhao-hoi2010-heterogeneous": 20,
    }
    for name, seeds in quick.items():
        spec = EXPERIMENTS[name]
        assert spec.seeds(quick=True) == seeds, name
        assert spec.seeds(quick=False) == spec.default_seeds


def _tasks_file(path: Path, num_tasks: int = 8) -> Path:
    """A ragged multi-task regression file in the documented layout (x, y, task)."""
    rng = np.random.default_rng(4)
    sizes = rng.integers(6, 12, num_tasks)
    task = np.repeat(np.arange(num_tasks), sizes)
    x = rng.normal(size=(len(task), 3))
    y = x @ np.array([1.0, -0.5, 0.2]) + 0.1 * rng.normal(size=len(task))
    np.savez(path, x=x, y=y, task=task)
    return path


def test_run_on_your_own_tasks_file(tmp_path, capsys, monkeypatch):
    import ojax.experiments.denevi2020 as denevi

    # two methods (compile time): the file, the run's identity and the refusal are checked here
    methods = {m: denevi.PF_METHODS[m] for m in ("ITL", "Lazy")}
    monkeypatch.setattr(denevi, "PF_METHODS", methods)
    monkeypatch.setattr(denevi, "SS_METHODS", {})
    tasks = _tasks_file(tmp_path / "mytasks.npz")
    out = tmp_path / "out"
    argv = ["run", "denevi2020-lenk", "--quick", "--seeds", "2", "--quiet", "--tasks", str(tasks)]
    assert cli.main([*argv, "--out", str(out)]) == 0
    with open(out / "results.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert {r["dataset"] for r in rows} == {"mytasks"}
    assert {r["method"] for r in rows} == {"ITL", "Lazy", "Best-bias"}  # own tasks: Best-bias too
    assert {r["n_seeds"] for r in rows} == {"2"}
    assert json.loads((out / ".ojax-run.json").read_text())["identity"]["tasks"].startswith(
        str(tasks.resolve())
    )
    # another file is another run: refused in the same folder
    _tasks_file(tmp_path / "other.npz", num_tasks=9)
    capsys.readouterr()
    other = [*argv[:-1], str(tmp_path / "other.npz"), "--out", str(out)]
    assert cli.main(other) == 2
    assert "--overwrite" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv,message",
    [
        (
            ["run", "basics", "--tasks", "{tasks}"],
            "--tasks is for denevi2020-*, not basics",
        ),
        (["run", "denevi2020-lenk", "--split", "{tasks}"], "--split is for zhao-hoi2010-*"),
        (["run", "denevi2020-lenk", "--tasks", "{bad}"], "expected an array 'task'"),
        (["run", "zhao-hoi2010-homogeneous", "--split", "{bad}"], "expected an array"),
    ],
)
def test_own_data_files_are_checked_before_anything_runs(argv, message, tmp_path, capsys):
    tasks = _tasks_file(tmp_path / "t.npz")
    bad = tmp_path / "bad.npz"
    np.savez(bad, x=np.ones((3, 2)), y=np.ones(3))
    argv = [a.format(tasks=tasks, bad=bad) for a in argv]
    out = tmp_path / "out"
    assert cli.main([*argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_more_seeds_than_memory_exits_2_naming_the_memory(tmp_path, capsys):
    out = tmp_path / "out"
    argv = ["run", "denevi2020-synthetic", "--seeds", "100000", "--quiet", "--out", str(out)]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("ojax: error: the outputs of 100000 runs need ")
    assert "GiB on the host" in err[-1]
    assert not out.exists()


def test_a_tasks_file_needs_online_and_held_out_points_in_every_task(tmp_path):
    from ojax.datasets import DataError, load_tasks_file

    x, y = np.ones((5, 2)), np.ones(5)
    single = tmp_path / "single.npz"
    np.savez(single, x=x, y=y, task=np.array([0, 0, 0, 1, 2]))
    with pytest.raises(DataError, match=r"at least 2 points .* tasks \[1, 2\] have 1"):
        load_tasks_file(single)
    no_test = tmp_path / "no_test.npz"  # a task without held-out points would score 0
    np.savez(no_test, x=x, y=y, task=np.array([0, 0, 0, 1, 1]), num_test=np.array([1, 0]))
    with pytest.raises(DataError, match=r"num_test must give each of the 2 tasks 1 to n_t - 1"):
        load_tasks_file(no_test)


# ------------------------------------------------------------------ console output (issue 15)


@pytest.mark.parametrize(
    "mean,std,expected",
    [
        (42.98123, 0.94871, ("42.98", "0.95")),  # the mean to the std's 2nd significant digit
        (8.1583, 1.0147, ("8.2", "1.0")),
        (408.46, 178.57, ("408", "179")),
        (-0.0015, 0.0041, ("-0.0015", "0.0041")),
        (1.234e-7, 5.6e-9, ("1.234e-07", "5.6e-09")),
        (63.245553, None, ("63.2456", "-")),  # the same for every seed
    ],
)
def test_mean_and_std_are_rounded_to_what_the_std_supports(mean, std, expected):
    from ojax.app.output import format_mean_std

    assert format_mean_std(mean, std) == expected


def test_results_table_header_noise_and_shared_rows():
    from ojax.app.output import results_table
    from ojax.results import Row

    rows = [
        Row("d", "A", "regret", 42.98, 0.95, 10),
        Row("d", "A", "bound", 63.245553203367585, 7.105e-15, 10),  # float noise of a constant
        Row("d", "A", "seconds_per_trial", 0.0316432, 0.0, 10, shared="A+B"),
        Row("d", "B", "regret", 1.5, 0.0, 1),  # one seed
        Row("d", "B", "seconds_per_trial", 0.0316432, 0.0, 10, shared="A+B"),
    ]
    lines = results_table(rows)
    assert lines[0].split() == ["dataset", "method", "metric", "mean", "std", "seeds"]
    cells = [line.split() for line in lines[1:-1]]
    assert cells == [
        ["d", "A", "regret", "42.98", "0.95", "10"],
        ["d", "A", "bound", "63.2456", "-", "10"],
        ["d", "B", "regret", "1.5", "-", "1"],
        ["d", "A+B", "(together)", "seconds_per_trial", "0.0316", "-", "10"],
    ]
    assert lines[-1] == "(std -: the same value for every seed)"
    assert "+-" not in "".join(lines) and "e-15" not in "".join(lines)
    assert len({len(line) for line in lines[:-1]}) == 1  # aligned columns


def test_rows_of_detail_are_counted_not_printed():
    from ojax.app.output import results_table
    from ojax.results import Row

    grid = [Row("d", f"OGD@{c}", "average_loss", c, 0.1, 2, detail=True) for c in range(50)]
    lines = results_table([*grid, Row("d", "OGD", "average_loss", 3.0, 0.1, 2)])
    assert [line.split()[:2] for line in lines[1:-1]] == [["d", "OGD"]]
    assert lines[-1] == "(50 more rows in results.csv)"


def test_plain_progress_lines_when_stderr_is_not_a_terminal(monkeypatch):
    import io

    from ojax.sweep import progress

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert type(progress.progress_bar(range(2), file=Terminal())).__name__ == "tqdm"
    monkeypatch.setattr(progress, "PLAIN_INTERVAL", 0.0)
    log = io.StringIO()
    bar = progress.progress_bar(desc="work", total=3, unit="chunk", file=log)
    assert isinstance(bar, progress.PlainProgress)
    for _ in range(3):
        bar.update()
    bar.close()
    lines = log.getvalue().splitlines()
    assert [line.split(",")[0] for line in lines] == [f"work: {i}/3 chunk" for i in (1, 2, 3, 3)]
    assert lines[-1].startswith("work: 3/3 chunk, done in ")
    assert "\r" not in log.getvalue() and "\x1b" not in log.getvalue()
    quiet = io.StringIO()  # a short run (nothing printed before the interval) stays silent
    monkeypatch.setattr(progress, "PLAIN_INTERVAL", 3600.0)
    assert list(progress.progress_bar(range(4), desc="short", file=quiet)) == [0, 1, 2, 3]
    assert quiet.getvalue() == ""


@pytest.mark.parametrize("quiet", [False, True])
def test_quiet_hides_the_progress_only(quiet, tiny, tmp_path, capsys, monkeypatch):
    from ojax.sweep import progress

    monkeypatch.setattr(progress, "PLAIN_INTERVAL", 0.0)
    flags = ["--quiet"] if quiet else []
    assert cli.main(["run", "tiny", "--quick", "--out", str(tmp_path / "t"), *flags]) == 0
    printed = capsys.readouterr()
    err = printed.err.splitlines()
    assert err[0].startswith("ojax: running tiny")
    assert [line.split(",")[0] for line in err[1:]] == (
        [] if quiet else ["tiny: 1/3 it", "tiny: 2/3 it", "tiny: 3/3 it", "tiny: 3/3 it"]
    )
    assert "\r" not in printed.err
    assert printed.out.splitlines()[0].split()[0] == "dataset"  # the table prints either way


def test_sweep_help_and_list_learners_name_every_learner_and_field(capsys):
    from ojax.core import LEARNERS

    assert cli.main(["sweep", "--help"]) == 0
    help_text = capsys.readouterr().out
    assert cli.main(["list", "--learners"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in listed] == sorted(LEARNERS)
    for line in listed:
        assert line in help_text
    fields = {line.split()[0]: line for line in listed}
    for name in ("ogd", "ogd_square", "hedge", "kernel_pa"):
        params = LEARNERS[name].default_params()
        for field, value in params._asdict().items():
            assert f"{field}={float(value):g}" in fields[name], (name, field)
    assert "ogd_square" in fields and "square on linear_regression" in fields["ogd_square"]
    assert cli.SWEEP_EXAMPLE in help_text
