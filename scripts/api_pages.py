"""Writes the API pages of the learner families (`docs/api/ojax.oco.md`, ...): learners first.

Each page opens with its package's docstring and a table of its learners; then, module by
module, the module's docstring (the update rule, the bound and the reference), its learner
factories and, under them, the params and state classes the module defines; the family's other
public names come last. `tests/test_docs.py` checks that the pages are what this script writes.

Usage: `python scripts/api_pages.py` (rewrites the pages) or `--check` (exit 1 if one differs).
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import sys
from pathlib import Path

FAMILIES = (
    "ojax.oco",
    "ojax.parameter_free",
    "ojax.meta",
    "ojax.nonstationary",
    "ojax.averaging",
    "ojax.transfer",
    "ojax.contextual",
)
"""The packages whose pages lead with their learners."""

LEARNER_TYPES = {"OCOLearner", "Predictor", "MultiTaskLearner", "Averager"}
"""Return annotations of a learner factory (an averager wraps a learner's iterates)."""

DOCS = Path(__file__).resolve().parents[1] / "docs" / "api"


def _directive(path: str, level: int, **options: object) -> list[str]:
    lines = [f"::: {path}", "    options:", f"      heading_level: {level}"]
    for key, value in options.items():
        text = str(value).lower() if isinstance(value, bool) else str(value)
        lines.append(f"      {key}: {text}")
    return [*lines, ""]


def _summary(obj: object) -> str:
    doc = inspect.getdoc(obj) or ""
    return doc.split("\n\n", 1)[0].replace("\n", " ").replace("|", "\\|")


def learners(package: str) -> dict[str, list[str]]:
    """`module -> [factory names]` of the package's public learner factories, in `__all__`'s
    order of modules."""
    pkg = importlib.import_module(package)
    found: dict[str, list[str]] = {}
    for name in pkg.__all__:
        obj = getattr(pkg, name)
        if not (inspect.isfunction(obj) and hasattr(obj, "__wrapped__")):
            continue
        returns = inspect.signature(obj).return_annotation
        if str(returns) in LEARNER_TYPES:
            found.setdefault(obj.__module__, []).append(name)
    return found


def render(package: str) -> str:
    """The markdown of `package`'s API page."""
    pkg = importlib.import_module(package)
    modules = learners(package)
    lines = [f"# `{package}`", "", *_directive(package, 1, members="false"), "## Learners", ""]
    lines += ["| learner | |", "| --- | --- |"]
    for names in modules.values():
        for name in names:
            summary = _summary(getattr(pkg, name))
            lines.append(f"| [`{name}`][{package}.{name}] | {summary} |")
    lines.append("")
    shown = set()
    for module, names in modules.items():
        title = ", ".join(f"`{n}`" for n in names)
        lines += [f"## {title}", "", *_directive(module, 2, members="false")]
        for name in names:
            lines += _directive(f"{package}.{name}", 3, show_root_heading=True)
        classes = [
            n
            for n in pkg.__all__
            if inspect.isclass(getattr(pkg, n)) and getattr(pkg, n).__module__ == module
        ]
        for name in classes:
            lines += _directive(f"{package}.{name}", 4, show_root_heading=True)
        shown |= {*names, *classes}
    rest = [n for n in pkg.__all__ if n not in shown and not inspect.ismodule(getattr(pkg, n))]
    if rest:
        lines += ["## Other names", ""]
        lines += _directive(package, 2, members="[" + ", ".join(rest) + "]", members_order="source")
    return "\n".join(lines).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a page is not current")
    args = parser.parse_args(argv)
    stale = []
    for package in FAMILIES:
        path, text = DOCS / f"{package}.md", render(package)
        if path.read_text() != text:
            stale.append(path.name)
            if not args.check:
                path.write_text(text)
    if args.check and stale:
        print(f"stale API pages: {stale}; run python scripts/api_pages.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
