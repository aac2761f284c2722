"""A mechanical pass over the package's docstrings (issue 23): RST double backticks become
Markdown code spans, and every public class without a docstring of its own (a params or state
`NamedTuple` shows `Name(field, ...)` otherwise) gets one built from its fields' comments.

Run from the repository root, then format: `python scripts/markdown_docstrings.py && ruff
format ojax`. It is idempotent: a second run changes nothing. `tests/test_docstrings.py` fails
on what it would change.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOUBLE = re.compile(r"(?<!`)``(?!`)([^`]+?)(?<!`)``(?!`)")  # a span may wrap over lines


def docstring_nodes(tree: ast.AST) -> list[ast.Constant]:
    """The docstring constants of a module, its classes and its functions."""
    found = []
    for node in ast.walk(tree):
        kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
        if isinstance(node, kinds) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                if isinstance(first.value.value, str):
                    found.append(first.value)
    return found


def markdown_spans(source: str) -> str:
    """``x`` -> `x` inside the docstrings of ``source`` (nowhere else)."""
    lines = source.splitlines(keepends=True)
    for node in docstring_nodes(ast.parse(source)):
        assert node.end_lineno is not None
        start, end = node.lineno - 1, node.end_lineno
        text = DOUBLE.sub(r"`\1`", "".join(lines[start:end]))
        lines[start:end] = text.splitlines(keepends=True)  # as many lines: only backticks go
    return "".join(lines)


def _comment(line: str) -> str:
    """The trailing comment of a line, without `type: ignore` parts."""
    if "#" not in line:
        return ""
    parts = [p.strip() for p in line.split("#")[1:]]
    return "; ".join(p for p in parts if p and not p.startswith("type: ignore"))


def _class_docstring(node: ast.ClassDef, lines: list[str]) -> str:
    name = node.name
    kind = "hyperparameters" if name.endswith("Params") else "state"
    kind = kind if name.endswith(("Params", "State")) else "fields"
    subject = name.removesuffix("Params").removesuffix("State")
    if kind == "hyperparameters":
        head = f"The hyperparameters of {subject}: a pytree of arrays passed at call time."
    elif kind == "state":
        head = f"The state of {subject}: a pytree of arrays, carried from step to step."
    else:
        head = f"{name}: a record of the fields below."
    fields = []
    for stmt in node.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            text = _comment(lines[stmt.lineno - 1])
            before = lines[stmt.lineno - 2].strip() if stmt.lineno >= 2 else ""
            if not text and before.startswith("#"):
                text = before.lstrip("# ").strip()
            text = text or f"`{ast.unparse(stmt.annotation)}`"
            fields.append(f"      {stmt.target.id}: {text[0].lower()}{text[1:]}")
    body = "\n\n    Attributes:\n" + "\n".join(fields) + "\n    " if fields else ""
    return f'    """{head}{body}"""\n'


def public_undocumented_classes() -> set[str]:
    """`module.Class` of every public class whose docstring is missing or generated."""
    sys.path.insert(0, str(ROOT))
    import ojax

    names = set()
    for info in pkgutil.walk_packages(ojax.__path__, "ojax."):
        if any(part.startswith("_") for part in info.name.split(".")):
            continue
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if not inspect.isclass(value) or value.__module__ != info.name:
                continue
            if value.__name__.startswith("_"):
                continue
            doc = value.__doc__ or ""
            if not doc.strip() or doc.startswith(f"{value.__name__}("):
                names.add(f"{info.name}.{value.__name__}")
    return names


def add_class_docstrings(path: Path, module: str, missing: set[str]) -> str:
    source = path.read_text()
    lines = source.splitlines(keepends=True)
    inserts = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.ClassDef) and f"{module}.{node.name}" in missing:
            end = node.lineno - 1
            while not lines[end].rstrip().endswith(":"):
                end += 1
            inserts.append((end + 1, _class_docstring(node, lines)))
    for at, text in sorted(inserts, reverse=True):
        lines.insert(at, text)
    return "".join(lines)


def main() -> None:
    missing = public_undocumented_classes()
    for path in sorted((ROOT / "ojax").rglob("*.py")):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        text = add_class_docstrings(path, module, missing)
        text = markdown_spans(text)
        if text != path.read_text():
            path.write_text(text)
            print(f"rewrote {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
