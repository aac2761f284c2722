"""The layout of the package holds: imports run one way, no module reads another's private
names, no module over 600 lines and no function over 80, and no `lax.scan` steps a learner
outside the runner (:data:`SCANS` lists the scans that are not learner runs, and why).

The layers, bottom to top (a module imports from its own layer or below, never above; every
import counts, a function-local one included):

0. ``base``: the protocols and what every layer shares: ``core``, ``losses``, ``projections``,
   ``validation``, the shared data types (``tasks``), the runner (``runner``, and ``game`` for
   learners against environments) and its adapters, metrics, ``sparse``
   (SciPy imported on first use), the one reader and writer of files (``fileio``), the
   program store and compilation cache (``programs``),
   ``plotting`` and ``results`` (what an experiment returns, and a finished run's files read
   back);
1. ``learners``: ``oco``, ``parameter_free``, ``averaging``, ``meta``, ``transfer``,
   ``nonstationary``, ``contextual``;
2. ``data``: ``envs``, ``datasets`` (streams read from disk in blocks included), ``state_io``
   (state files), ``testing`` (the common checks, which run every kind of learner) (streams
   name the learners they feed; learners name their streams in ``ojax.core.STREAMS`` and
   never import them);
3. ``sweep``: the engine, its experiment specs, progress and processes;
4. ``studies``: ``experiments``, ``theory``;
5. ``app``: the application (the command, run folders, outputs and figures, learner sweeps).

``ojax`` itself (``ojax/__init__.py``) is the public facade: a name taken from it counts as an
import of the module that defines it.

A data table is a module-level assignment of a literal (a list, tuple, dict or set display,
e.g. a registry's ``ENTRIES``); its lines do not count toward the 600 of its module. A
function's lines run from its ``def`` to its last line, its docstring included.
"""

from __future__ import annotations

import ast
import functools
import importlib
from pathlib import Path

import ojax

ROOT = Path(ojax.__file__).resolve().parent

LAYERS = {
    "base": (
        "core", "losses", "projections", "validation", "tasks", "runner", "game", "adapters",
        "metrics", "sparse", "fileio", "programs", "plotting", "results",
    ),
    "learners": (
        "oco", "parameter_free", "averaging", "meta", "transfer", "nonstationary", "contextual",
    ),
    "data": ("envs", "datasets", "state_io", "testing"),
    "sweep": ("sweep",),
    "studies": ("experiments", "theory"),
    "app": ("app",),
}  # fmt: skip
RANK = {part: rank for rank, parts in enumerate(LAYERS.values()) for part in parts}
MAX_MODULE_LINES, MAX_FUNCTION_LINES = 600, 80

ALLOWED: set[str] = set()
"""Modules whose offences are known and owned by another change (shrink it, never grow it)."""


SCANS: dict[str, tuple[int, str]] = {
    "ojax.runner": (3, "the runner: a stream, and task blocks (a scan over tasks of scans)"),
    "ojax.game": (1, "the game runner: a learner against an environment that sees its plays"),
    "ojax.datasets.streaming": (1, "run_drawn's scan over drawn blocks; each block is ojax.run"),
    "ojax.averaging.path": (
        2,
        "folds of iterates into averages: chunks of stored iterates (no learner), and the "
        "streamed path's blocks, each block's SGD steps being ojax.run (sgd_scan)",
    ),
    "ojax.averaging.expected": (
        2,
        "the exact means E[w_t], E[v_t]: deterministic recursions over no data, each step "
        "sgd's own update on the expected gradient",
    ),
    "ojax.meta.simulate": (1, "IRLS iterations of a hindsight comparator (a solver, no data)"),
    "ojax.envs.switching": (1, "a comparator's random walk with a set path length (no learner)"),
    "ojax.app.sweep_metrics": (
        1,
        "the running sums x x^T, x y of the least-squares comparator in hindsight (a metric)",
    ),
}
"""Modules with `lax.scan` calls that are not a learner stepping over data: `(count, reason)`.
A learner run goes through `ojax.run` / `ojax.run_oco` (or `ojax.game` against an environment);
a new scan elsewhere, or one more here, fails :func:`test_scans_outside_the_runner_are_listed`."""


@functools.cache
def parse(text: str) -> ast.Module:
    """A module's syntax tree, parsed once per text (each check walks every module; none
    changes a tree)."""
    return ast.parse(text)


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def layer(module: str) -> int | None:
    """The rank of ``module``'s layer (``None`` for the facade ``ojax``)."""
    parts = module.split(".")
    return None if len(parts) == 1 else RANK[parts[1]]


def resolve(base: str, name: str | None, modules: dict[str, Path]) -> str:
    """The module that ``from base import name`` (``import base`` when ``name`` is None) reads."""
    if name and f"{base}.{name}" in modules:
        return f"{base}.{name}"
    if base == "ojax" and name:  # a name of the facade: where it is defined
        defined = getattr(getattr(ojax, name, None), "__module__", None) or "ojax"
        return defined if defined in modules else "ojax"
    return base


def imports(module: str, modules: dict[str, Path]) -> list[tuple[str, str | None, int]]:
    """``(module read, name, line)`` for every ojax import in ``module`` (``name`` None for
    ``import x``; ``ojax.a.b`` attributes of a plain ``import ojax`` resolved)."""
    path = modules[module]
    tree = parse(path.read_text())
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    plain = False
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([base] if base else []))
            if base == "ojax" or base.startswith("ojax."):
                found += [(resolve(base, a.name, modules), a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "ojax" and a.asname is None:
                    plain = True
                elif a.name.startswith("ojax."):
                    found.append((a.name, None, node.lineno))
    if plain:
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                if node.value.id == "ojax":
                    found.append((resolve("ojax", node.attr, modules), node.attr, node.lineno))
    return found


def direction_violations(modules: dict[str, Path] = MODULES) -> list[str]:
    out = []
    for module in modules:
        rank = layer(module)
        for target, _, line in imports(module, modules):
            if rank is None or target == "ojax" or layer(target) is None:
                continue
            if layer(target) > rank:
                out.append(f"{module}:{line} imports {target}")
    return sorted(set(out))


def module_aliases(tree: ast.AST, module: str, modules: dict[str, Path]) -> dict[str, str]:
    """Local name -> ojax module, for the names bound to modules by imports."""
    aliases = {"ojax": "ojax"}
    package = module if modules[module].name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([base] if base else []))
            for a in node.names:
                if f"{base}.{a.name}" in modules:
                    aliases[a.asname or a.name] = f"{base}.{a.name}"
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("ojax") and a.asname:
                    aliases[a.asname] = a.name
    return aliases


def private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def dotted(node: ast.AST, aliases: dict[str, str]) -> str | None:
    """``a.b.c`` for an attribute chain whose first name is bound to an ojax module."""
    if isinstance(node, ast.Name):
        return aliases.get(node.id)
    if isinstance(node, ast.Attribute):
        head = dotted(node.value, aliases)
        return f"{head}.{node.attr}" if head else None
    return None


def private_name_violations(modules: dict[str, Path] = MODULES) -> list[str]:
    out = []
    for module, path in modules.items():
        tree = parse(path.read_text())
        for target, name, line in imports(module, modules):
            if name and private(name) and target != module and f"{target}.{name}" not in modules:
                out.append(f"{module}:{line} reads {target}.{name}")
        aliases = module_aliases(tree, module, modules)
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and private(node.attr):
                owner = dotted(node.value, aliases)
                if owner in modules and owner != module and f"{owner}.{node.attr}" not in modules:
                    out.append(f"{module}:{node.lineno} reads {owner}.{node.attr}")
    return sorted(set(out))


def data_table_lines(tree: ast.Module) -> int:
    lines = 0
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(
            node.value, (ast.List, ast.Tuple, ast.Dict, ast.Set)
        ):
            lines += node.end_lineno - node.lineno + 1
    return lines


def size_violations(table: dict[str, Path] = MODULES) -> tuple[list[str], list[str]]:
    modules, functions = [], []
    for module, path in table.items():
        text = path.read_text()
        tree = parse(text)
        count = len(text.splitlines()) - data_table_lines(tree)
        if count > MAX_MODULE_LINES:
            modules.append(f"{module}: {count} lines")
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                span = node.end_lineno - node.lineno + 1
                if span > MAX_FUNCTION_LINES:
                    functions.append(f"{module}:{node.lineno} {node.name}: {span} lines")
    return sorted(modules), sorted(functions)


def scan_calls(path: Path) -> list[int]:
    """The lines of the `lax.scan` calls in a module (`jax.lax.scan`, `lax.scan`, or `scan`
    imported from `jax.lax`)."""
    tree = parse(path.read_text())
    bare = {
        a.asname or a.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == "jax.lax"
        for a in node.names
        if a.name == "scan"
    }
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr == "scan":
            base = f.value
            if (isinstance(base, ast.Name) and base.id == "lax") or (
                isinstance(base, ast.Attribute)
                and base.attr == "lax"
                and isinstance(base.value, ast.Name)
                and base.value.id == "jax"
            ):
                lines.append(node.lineno)
        elif isinstance(f, ast.Name) and f.id in bare:
            lines.append(node.lineno)
    return lines


def scan_violations(modules: dict[str, Path] = MODULES) -> list[str]:
    out = []
    for module, path in modules.items():
        lines = scan_calls(path)
        allowed = SCANS.get(module, (0, ""))[0]
        if len(lines) != allowed:
            out.append(f"{module}: {len(lines)} lax.scan calls (lines {lines}), {allowed} listed")
    return sorted(out)


def offenders(found: list[str]) -> list[str]:
    return [f for f in found if f.split(":")[0] not in ALLOWED]


def test_the_allowlist_holds_only_offenders():
    modules, functions = size_violations()
    found = direction_violations() + private_name_violations() + modules + functions
    stale = ALLOWED - {f.split(":")[0] for f in found}
    assert not stale, f"no longer offending (remove from ALLOWED): {sorted(stale)}"


def test_every_module_has_a_layer():
    for module in MODULES:
        if module != "ojax":
            assert module.split(".")[1] in RANK, f"{module} is in no layer of LAYERS"


def test_imports_run_one_way():
    assert offenders(direction_violations()) == []


def test_no_module_reads_another_modules_private_names():
    assert offenders(private_name_violations()) == []


def test_modules_and_functions_are_short():
    modules, functions = size_violations()
    assert offenders(modules) == []
    assert offenders(functions) == []


def test_scans_outside_the_runner_are_listed():
    assert set(SCANS) <= set(MODULES), f"not modules: {sorted(set(SCANS) - set(MODULES))}"
    assert scan_violations() == []


def test_the_checks_can_fail(tmp_path):
    # each check finds a planted offender: an import upwards, private names, a long function
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    (tmp_path / "probe.py").write_text(
        "import ojax\nfrom ojax.sweep import engine\nfrom ojax.runner import _private\n"
        "from ojax.oco import registry\nregistry._hidden\nojax.core._secret\n\n"
        f"def long():\n{body}\n"
    )
    modules = {**MODULES, "ojax.oco.probe": tmp_path / "probe.py"}
    assert "ojax.oco.probe:2 imports ojax.sweep.engine" in direction_violations(modules)
    found = private_name_violations(modules)
    for name in ("ojax.runner._private", "ojax.oco.registry._hidden", "ojax.core._secret"):
        assert any(v.startswith("ojax.oco.probe:") and v.endswith(name) for v in found), name
    assert "ojax.oco.probe:8 long: 81 lines" in size_violations(modules)[1]
    # a learner stepped by hand in a scan, in each spelling; one scan too many in a listed module
    (tmp_path / "loop.py").write_text(
        "import jax\nfrom jax import lax\nfrom jax.lax import scan as s\n"
        "jax.lax.scan(f, 0, xs)\nlax.scan(f, 0, xs)\ns(f, 0, xs)\n"
    )
    (tmp_path / "extra.py").write_text(
        (ROOT / "game.py").read_text() + "\njax.lax.scan(f, 0, xs)\n"
    )
    probes = {"ojax.oco.loop": tmp_path / "loop.py", "ojax.game": tmp_path / "extra.py"}
    assert scan_calls(tmp_path / "loop.py") == [4, 5, 6]
    found = scan_violations({**MODULES, **probes})
    assert any(v.startswith("ojax.oco.loop: 3 lax.scan calls") for v in found), found
    assert any(v.startswith("ojax.game: 2 lax.scan calls") for v in found), found


def missing_imports(paths: list[Path]) -> list[str]:
    """`FILE:LINE name` for each `from ojax... import name` in `paths` that names nothing there
    (a script left behind by a move: it fails only when someone runs it)."""
    found = []
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.ImportFrom) or not (node.module or "").startswith("ojax"):
                continue
            try:
                module = importlib.import_module(node.module)
            except ImportError:
                found.append(f"{path.name}:{node.lineno} {node.module}")
                continue
            for alias in node.names:
                if hasattr(module, alias.name):
                    continue
                try:
                    importlib.import_module(f"{node.module}.{alias.name}")
                except ImportError:
                    found.append(f"{path.name}:{node.lineno} {node.module}.{alias.name}")
    return found


def test_scripts_and_tests_import_names_that_exist(tmp_path):
    repo = ROOT.parent
    assert missing_imports(sorted([*repo.glob("scripts/*.py"), *repo.glob("tests/*.py")])) == []
    probe = tmp_path / "probe.py"
    probe.write_text("from ojax.app.cli import parse_bytes\nfrom ojax.nowhere import x\n")
    assert missing_imports([probe]) == [
        "probe.py:1 ojax.app.cli.parse_bytes",
        "probe.py:2 ojax.nowhere",
    ]


if __name__ == "__main__":  # the counts, for a change's closing note
    importlib.import_module("ojax")
    modules, functions = size_violations()
    for title, found in (
        ("files over 600 lines", modules),
        ("functions over 80 lines", functions),
        ("cross-module private names", private_name_violations()),
        ("import-direction violations", direction_violations()),
        ("unlisted lax.scan counts", scan_violations()),
    ):
        print(f"{title}: {len(found)}")
        for f in found:
            print("   ", f)
