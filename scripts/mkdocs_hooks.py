"""MkDocs hooks of the documentation site (``mkdocs.yml``: ``hooks``).

The docstrings name other objects with Sphinx roles (``:func:`run```,
``:class:`~ojax.core.Trace```), which Markdown shows as text: the API pages keep the name
alone, in code (``~`` keeps the last component, as Sphinx does).

The reproduction pages (``docs/reproductions/NAME.md``) are generated from the experiments'
outputs, so the site cannot name them in advance: every page found there is added under the
"Reproductions" section of the navigation and listed on ``reproductions/index.md``, whether
there are none, some or all of them.
"""

from __future__ import annotations

import re
from typing import Any

SECTION = "Reproductions"
FOLDER = "reproductions/"
INDEX = FOLDER + "index.md"
ROLE = re.compile(r":(?:class|func|mod|data|attr|meth|exc|obj):<code>(~?)([^<]*)</code>")


def _role(match: re.Match) -> str:
    name = match.group(2)
    return f"<code>{name.rsplit('.', 1)[-1] if match.group(1) else name}</code>"


def on_page_content(html: str, page: Any, config: Any, files: Any) -> str:
    """Drops the Sphinx roles of the docstrings, keeping the names they mark."""
    return ROLE.sub(_role, html)


def _reproduction_files(files: Any) -> list:
    found = [
        f
        for f in files.documentation_pages()
        if f.src_uri.startswith(FOLDER) and f.src_uri != INDEX
    ]
    return sorted(found, key=lambda f: f.src_uri)


def _title(file: Any) -> str:
    for line in file.content_string.splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return file.src_uri[len(FOLDER) : -len(".md")]


def on_nav(nav: Any, config: Any, files: Any) -> Any:
    """Adds the reproduction pages present under the section that holds their index."""
    section = next((item for item in nav.items if item.title == SECTION), None)
    if section is None:
        return nav
    for file in _reproduction_files(files):
        page = file.page
        if page is None or page in section.children:
            continue
        page.parent = section
        section.children.append(page)
        nav.pages.append(page)
    return nav


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Lists the reproduction pages present at the end of their index."""
    if page.file.src_uri != INDEX:
        return markdown
    found = _reproduction_files(files)
    if not found:
        return markdown + "\n\nNo reproduction page has been generated yet.\n"
    links = "\n".join(f"- [{_title(f)}]({f.src_uri[len(FOLDER) :]})" for f in found)
    return markdown + "\n\n" + links + "\n"


def one_line_summary(docstring: str) -> str:
    """The docstring with its first paragraph on one line: the API pages' summary tables show a
    docstring's first line, so a summary wrapped over lines would be cut mid-sentence there.
    Markdown renders a paragraph the same on one line or several."""
    head, sep, rest = docstring.strip("\n").partition("\n\n")
    lines = head.splitlines()
    if len(lines) < 2 or any(line.strip().startswith(("*", "-", ">>>", "```")) for line in lines):
        return docstring
    return " ".join(line.strip() for line in lines) + sep + rest


try:  # the griffe extension that applies it (mkdocs.yml: the handler's `extensions`)
    import griffe

    class OneLineSummary(griffe.Extension):
        """Puts every docstring's first paragraph on one line (see `one_line_summary`)."""

        def on_package(self, *, pkg: Any, **kwargs: Any) -> None:
            """Rewrites the docstrings of the whole loaded package."""
            stack = [pkg]
            while stack:
                obj = stack.pop()
                if obj.is_alias:
                    continue
                if obj.docstring is not None:
                    obj.docstring.value = one_line_summary(obj.docstring.value)
                stack.extend(obj.members.values())

except ImportError:  # pragma: no cover  # the docs extra is not installed: no site to build
    pass
