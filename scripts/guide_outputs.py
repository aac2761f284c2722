"""Shows under each code block of the guides what it prints (a `text title="prints"` block).

Runs each guide page (`docs/guides/*.md`) in a fresh process, block after block in one
namespace from a temporary folder (as `tests/test_docs.py` runs them), captures each block's
standard output and writes it into the page right after the block; a block that prints nothing
gets none. Times and temporary paths, which differ from run to run, are shown as `...`.
`tests/test_docs.py` checks that what each page must print is also what it shows.

Usage: `python scripts/guide_outputs.py [PAGE.md ...]` (default: every guide).
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import types
from pathlib import Path

GUIDES = Path(__file__).resolve().parents[1] / "docs" / "guides"
BLOCK = re.compile(r"^```python\n(.*?)^```\n", re.S | re.M)
SHOWN = re.compile(r'\n```text title="prints"\n(.*?)^```\n', re.S | re.M)
"""A block of output after a code block (with the blank line before it)."""
VOLATILE = [
    (re.compile(r"\d+(\.\d+)?(e[+-]\d+)? ?(s|ms|steps/s)\b"), "..."),  # times and rates
    (re.compile(r"/tmp/[\w./-]+"), "..."),  # temporary folders
    (re.compile(r"-[0-9a-f]{16}\b"), "-..."),  # digests of a program and its versions
]


def python_blocks(text: str) -> list[str]:
    return [m.group(1) for m in BLOCK.finditer(text)]


def shown_outputs(text: str) -> list[str | None]:
    """The output `text` (a page) shows after each of its python blocks (`None`: none)."""
    found = (SHOWN.match(text, block.end()) for block in BLOCK.finditer(text))
    return [None if match is None else match.group(1) for match in found]


def block_outputs(page: Path) -> list[str]:
    """What each python block of `page` prints, run in order in one namespace from a
    temporary folder (a block needing a package that is not installed prints nothing)."""
    module = types.ModuleType(f"docs_{page.stem.replace('-', '_')}")
    sys.modules[module.__name__] = module  # a dataclass of the page needs its module
    outputs = []
    with tempfile.TemporaryDirectory() as folder:
        os.chdir(folder)
        for i, code in enumerate(python_blocks(page.read_text())):
            needs = re.match(r"# needs (\w+)\n", code)
            if needs and importlib.util.find_spec(needs.group(1)) is None:
                outputs.append("")
                continue
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(compile(code, f"{page.name} block {i + 1}", "exec"), module.__dict__)
            outputs.append(out.getvalue())
    return outputs


def shown(text: str, outputs: list[str]) -> str:
    """`text` (a page) with each python block followed by its output (and no older one)."""
    text = SHOWN.sub("", text)
    parts, last = [], 0
    for match, output in zip(BLOCK.finditer(text), outputs, strict=True):
        parts.append(text[last : match.end()])
        for pattern, repl in VOLATILE:
            output = pattern.sub(repl, output)
        if output.strip():
            parts.append(f'\n```text title="prints"\n{output.rstrip()}\n```\n')
        last = match.end()
    return "".join([*parts, text[last:]])


def main(argv: list[str]) -> int:
    if argv[:1] == ["--run"]:  # the child: one page's outputs as JSON
        import matplotlib

        matplotlib.use("Agg")
        print(json.dumps(block_outputs(Path(argv[1]))), file=sys.__stdout__)
        return 0
    pages = [GUIDES / name for name in argv] or sorted(GUIDES.glob("*.md"))
    for page in pages:
        if not python_blocks(page.read_text()):
            continue
        child = [sys.executable, __file__, "--run", str(page)]
        done = subprocess.run(child, capture_output=True, text=True, check=True)
        outputs = json.loads(done.stdout.strip().splitlines()[-1])
        page.write_text(shown(page.read_text(), outputs))
        print(f"{page.name}: {sum(bool(o.strip()) for o in outputs)} outputs shown")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
