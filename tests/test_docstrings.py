"""The docstrings of the API pages: every public class and function has its own, they use
Markdown code spans (never RST double backticks), and the pages' summaries end at a sentence."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import sys
from pathlib import Path

import ojax

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import markdown_docstrings  # noqa: E402
import mkdocs_hooks  # noqa: E402


def _modules():
    yield ojax
    for info in pkgutil.walk_packages(ojax.__path__, "ojax."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            yield importlib.import_module(info.name)


def _generated(obj) -> bool:
    doc = obj.__doc__ or ""  # a NamedTuple or dataclass without one shows `Name(field, ...)`
    return not doc.strip() or (inspect.isclass(obj) and doc.startswith(f"{obj.__name__}("))


def test_every_public_class_and_function_has_a_docstring():
    missing = set()
    for module in _modules():
        for name, value in vars(module).items():
            if name.startswith("_") or not (inspect.isclass(value) or inspect.isfunction(value)):
                continue
            if getattr(value, "__module__", None) == module.__name__ and _generated(value):
                missing.add(f"{module.__name__}.{name}")
    assert not missing, f"public names without a docstring: {sorted(missing)}"


def test_docstrings_use_markdown_code_spans():
    found = []
    for path in sorted((ROOT / "ojax").rglob("*.py")):
        for node in markdown_docstrings.docstring_nodes(ast.parse(path.read_text())):
            if "``" in node.value.replace("```", ""):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not found, f"RST double backticks (write `x`): {found}"


def test_the_markdown_pass_converts_spans_that_wrap_over_lines():
    fence = "    ```python\n    x\n    ```\n"
    source = f'def f():\n    """Sums ``a +\n    b`` and ``c``.\n\n{fence}    """\n'
    converted = markdown_docstrings.markdown_spans(source)
    assert converted == source.replace("``a +", "`a +").replace("b``", "b`").replace("``c``", "`c`")
    assert markdown_docstrings.markdown_spans(converted) == converted  # idempotent


def test_summaries_end_at_a_sentence():
    # the summary tables show a docstring's first line: the site puts the first paragraph there
    doc = "The ITL (0), the Oracle, the\n    Aggressive learners.\n\n    Args:\n      x: a value."
    assert mkdocs_hooks.one_line_summary(doc).splitlines()[0] == (
        "The ITL (0), the Oracle, the Aggressive learners."
    )
    listing = "Rows:\n* one\n* two"
    assert mkdocs_hooks.one_line_summary(listing) == listing
    assert "OneLineSummary" in (ROOT / "mkdocs.yml").read_text()
