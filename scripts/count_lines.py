"""Count the code lines of `ojax/`: not blank, not a comment, not a docstring.

A line counts when a token other than a comment, a newline or an indent starts or runs on it;
docstrings (the first statement of a module, class or function when it is a string) are dropped
by their line span, found with `ast`.

Run: `python scripts/count_lines.py [ROOT]` (ROOT defaults to the `ojax` folder beside this
script). Prints the total and the lines of each top-level part (a module or a subpackage).
"""

from __future__ import annotations

import ast
import io
import sys
import tokenize
from collections import Counter
from pathlib import Path

__all__ = ["code_lines", "count_tree"]

_NOT_CODE = {
    tokenize.COMMENT,
    tokenize.NL,
    tokenize.NEWLINE,
    tokenize.INDENT,
    tokenize.DEDENT,
    tokenize.ENCODING,
    tokenize.ENDMARKER,
}


def _docstring_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if (
                body
                and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)
            ):
                end = body[0].end_lineno or body[0].lineno
                lines.update(range(body[0].lineno, end + 1))
    return lines


def code_lines(source: str) -> int:
    """The number of lines of `source` that hold code (not blank, comment or docstring)."""
    lines: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type not in _NOT_CODE:
            lines.update(range(token.start[0], token.end[0] + 1))
    return len(lines - _docstring_lines(ast.parse(source)))


def count_tree(root: Path) -> Counter[str]:
    """Code lines per top-level part of the package at `root` (a module or a subpackage)."""
    counts: Counter[str] = Counter()
    for path in sorted(root.rglob("*.py")):
        part = path.relative_to(root).parts[0]
        counts[part] += code_lines(path.read_text(encoding="utf-8"))
    return counts


def main(argv: list[str]) -> None:
    root = Path(argv[0]) if argv else Path(__file__).resolve().parent.parent / "ojax"
    counts = count_tree(root)
    for part, lines in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        print(f"{lines:7d}  {part}")
    print(f"{sum(counts.values()):7d}  total ({root.name}/)")


if __name__ == "__main__":
    main(sys.argv[1:])
