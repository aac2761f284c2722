"""README.md stays true: its quickstart runs, and its test command is the one CI runs."""

from __future__ import annotations

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
