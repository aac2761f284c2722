"""README.md stays true: its quickstart runs, and its test command is the one CI runs."""

from __future__ import annotations

import csv
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def test_quickstart_runs(tmp_path, monkeypatch):
    code = re.search(r"```python\n(.*?)```", README, re.S).group(1)
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README quickstart", "exec"), {})
    assert (tmp_path / "quickstart.png").stat().st_size > 0


def test_ci_runs_the_readme_test_command():
    command = re.search(r"# 2\. the tests.*?\n(.*?)\n```", README, re.S).group(1).strip()
    test_part = command.split("&&")[-1].strip()
    assert test_part in (ROOT / ".ci" / "run").read_text()


def _decimals(text: str) -> int:
    return len(text.partition(".")[2])


def test_the_sweep_example_prints_what_readme_says(tmp_path, capsys):
    """The README's `ojax sweep` example: its table (each mean and std to one unit of the last
    digit shown), the best step size, the runner-up and the paired count are what it prints."""
    from ojax.app import cli

    pattern = r"```bash\n(ojax sweep [^\n]*)\n```\n\nprints[^`]*```\n(.*?)```"
    found = re.search(pattern, README, re.S)
    command, expected = found.group(1).split(), found.group(2).strip().splitlines()
    assert cli.main([*command[1:], "--out", str(tmp_path / "out"), "--quiet"]) == 0
    printed = capsys.readouterr().out.strip().splitlines()
    assert printed[0] == expected[0]  # the header row
    rows = [line.split() for line in expected[1:] if not line.startswith("ojax:")]
    with open(tmp_path / "out" / "results.csv") as f:
        got = {(r["method"], r["metric"]): r for r in csv.DictReader(f)}
    assert len(rows) == 2 * len(got) // 3  # every average_loss and regret row, and only those
    # (not cumulative_loss)
    assert {metric for _, _, metric, *_ in rows} == {"average_loss", "regret"}
    for _, method, metric, mean, std, seeds in rows:
        row = got[(method, metric)]
        assert abs(float(row["mean"]) - float(mean)) <= 10.0 ** -_decimals(mean), method
        assert abs(float(row["std"]) - float(std)) <= 10.0 ** -_decimals(std), method
        assert row["n_seeds"] == seeds
    best = [line for line in expected if line.startswith("ojax: best")]
    assert best and best[0] in printed  # best, runner-up and "best on k of n seeds"
    claim = re.search(r"best (\w+)=([\d.]+):.*best on (\d+) of (\d+)", best[0])
    means = {m: float(r["mean"]) for (m, metric), r in got.items() if metric == "average_loss"}
    assert min(means, key=means.get) == f"ogd_square@{claim.group(1)}={claim.group(2)}"


def test_every_relative_link_and_image_exists():
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README)
    local = [t for t in targets if "://" not in t]
    assert "docs/index.md" in local and "notebooks/quickstart.ipynb" in local
    assert [t for t in local if not (ROOT / t).exists()] == []


def test_the_results_table_names_and_rounds_as_the_cli():
    """The main job's table: the CLI's method names, each cell rounded by the CLI's rule."""
    from ojax.app.output import format_mean_std

    table = re.search(r"\| method \| cumulative error .*?\n\n", README, re.S).group(0)
    rows = [line.split(" | ") for line in table.strip().splitlines()[2:]]
    methods = [row[0].removeprefix("| ") for row in rows]
    assert methods == [
        "ITL", "Oracle", "Aggressive", "Lazy", "Aggressive_KT", "Lazy_KT", "Aggressive_SS",
        "Lazy_SS",
    ]  # fmt: skip
    for row in rows:
        for cell in row[1:]:
            mean, std = cell.removesuffix(" |").split(" +- ")
            assert format_mean_std(float(mean), float(std)) == (mean, std), cell
