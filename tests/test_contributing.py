"""CONTRIBUTING.md stays true: the files and scripts it names exist, and its lesson (adding a
learner) points to the guide whose code runs (`tests/test_docs.py`) instead of a second copy."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEXT = (ROOT / "CONTRIBUTING.md").read_text()


def test_the_lesson_is_the_executed_guide():
    from test_docs import EXPECTED

    assert "```python" not in TEXT  # no code of its own: one copy of the lesson, run by test_docs
    guides = re.findall(r"`docs/(guides/[\w-]+\.md)`", TEXT)
    assert "guides/add-a-learner.md" in guides
    for page in guides:  # each guide it names exists and its code runs
        assert page in EXPECTED, page


def test_named_files_exist():  # but the placeholders (tests/test_MODULE.py)
    named = set(re.findall(r"`((?:tests|scripts|docs)/[\w/.-]+\.(?:py|md))`", TEXT))
    assert {"tests/test_learners_common.py", "scripts/bench_runner.py"} <= named
    missing = sorted(p for p in named if "MODULE" not in p and not (ROOT / p).is_file())
    assert not missing, missing
