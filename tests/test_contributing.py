"""CONTRIBUTING.md stays true: its steps run, in order, as one program."""

from __future__ import annotations

import re
from pathlib import Path

import ojax
from ojax.testing import CHECKS

ROOT = Path(__file__).resolve().parents[1]


def test_the_steps_run(capsys):
    text = (ROOT / "CONTRIBUTING.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) == 4
    scope: dict = {}
    try:
        for i, code in enumerate(blocks):
            exec(compile(code, f"CONTRIBUTING block {i + 1}", "exec"), scope)
        out = capsys.readouterr().out
        assert "(3, 500)" in out
        assert str(tuple(CHECKS)) in out  # every common check ran on the new row
        entry = ojax.LEARNERS["adagrad_example"]
        # the registered learner runs like every other one
        data = entry.make_stream(scope["jax"].random.key(3), 30, 4)
        trace = ojax.run_entry(entry, entry.make(4), entry.default_params(), data)
        assert trace.loss.shape == (30,)
    finally:
        ojax.LEARNERS.pop("adagrad_example", None)
