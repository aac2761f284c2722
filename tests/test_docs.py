"""The documentation site stays true: every guide's code runs, the API reference is complete.

Each page's ```python blocks run in order in one namespace (a fresh one per page), in a
temporary folder, and what they print is checked; a page that cannot run here (a launch on
several hosts) is listed in ``NOT_RUN`` with the reason. The site itself is built by
``.ci/run`` (``mkdocs build --strict``: a warning fails).
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import re
import sys
import types
from pathlib import Path

import jax
import matplotlib
import pytest

import ojax

matplotlib.use("Agg")

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

# What each page must print (each block prints something the test can check).
EXPECTED = {
    "guides/concepts.md": [
        "True True",  # the first loss is the start point's; the loss goes down
        "] True",  # regret under its bound at every horizon
        "slope of the regret 0.52, of the bound 0.5",  # the measured regret's log-log slope
        "denevi2020-synthetic",
        "(4, 200) [1 4 6] 500",  # a sweep curve and its checkpoints
        "(0.1, 0.9) True",
    ],
    "guides/own-data.md": [
        "(500,) True",
        "True 0.0\nTrue",  # padding changes nothing and counts nothing
        "(4, 500)",
        "(500, 8) True",  # the time-major vmap gives the streams-major losses bit for bit
        "refused: xs must be finite",
        "refused: ys must have shape",
        "csr_matrix (500, 4) (0.0, 1.0) [-1.  1.]",
        "refused: labels='binary' needs exactly two distinct labels, found 3",
        "mistake rate",
        "AUC",
        "(500, 4) (500, 8)",
        "mine.libsvm  ogd@learning_rate=1    mistake_rate",
        "exit 0",
        "(10, 11, 3) float64",
        "'best bias':",
        "['cumulative_error.png']",
        "OTL (3, 30)",
        "stream (100, 10) (2, 10) lambda:",
    ],
    "guides/add-a-learner.md": [
        "(300,) regret to the best point of the unit ball: 10.45",  # float32 text, not a double
        "refused: learning_rate must lie in (0.0, inf), got -1",
        "(50,)",
        "('float32', 'float64', 'by_value', 'no_retrace', 'vmap_equals_loop', 'bad_params', "
        "'padding', 'continuation')",
        "caught: by_value",
        "matches the loop",
        "('seed', 'learning_rate') (8, 4) best step: 0.01\n",  # float32's shortest text
        # (never float32 as a double: 0.009999999776482582)
        "(6, 4, 750) (6, 750)",
        "final error by step:",
        "unit_ball  adagrad_norm_guide@learning_rate=5     regret",  # ojax sweep, the regret
        "exit 0",
        "a1a-logistic                 adagrad_norm_guide  average_loss",
    ],
    "guides/add-a-dataset.md": [
        "tiny.npz\nrefused: data file 'tiny.npz' not found",
        "(120, 5) float32 [-1.0, 1.0]",
        "refused: y must hold labels -1 and +1",
        "refused: x has values that are not finite",
        "refused: expected x (n, d), y (n,), got (120, 5), (119,)",
        "refused: expected arrays 'x' and 'y', found ['x']",
        "tiny: mistakes",
        "\nTrue\n",  # every shipped file is in the folder and the README
    ],
    "guides/environments.md": [
        "bound B G sqrt(T) 44.7 True",  # OGD against one's own adaptive adversary
        "(1000,) EXP3 mean",  # 1000 seeds of a bandit in one vmap
        "EXP3-IX 95% quantile",
        "d=0: regret",
        "d=50: regret",
        "True True 1000",  # T steps = T/2, saved, loaded, T/2 more
        "Fixed Share: loss 30.6",  # a switching environment of one's own: tracked
        "Hedge: loss 750.9",  # Hedge, which never forgets, pays most rounds after a switch
        "refused: a state of the learner ojax.adapters.linear_predictor(",
        "LinearPredictorState",
        "True\n(1000,) True\n(100, 1000)",  # blocks from disk; drawn in the scan; vmapped
    ],
    "guides/add-an-experiment.md": [
        "flags: ['--horizon']",
        "unit-ball  OGD     regret",
        "exit 0\nexit 2\nexit 2",  # a bad value, a flag of another experiment: refused
    ],
    "guides/contextual.md": [
        "(3, 30) LinUCB by alpha:",  # three widths x 30 orders in one call
        "LinUCB, alpha 0.5  0.3",
        "SquareCB, COCOB",  # a parameter-free regression oracle
    ],
    "guides/sweeps.md": [
        "('seed', 'learning_rate')\n(20, 3, 500)\n(3, 500)\n{'learning_rate':",
        "1 0\nTrue",  # resumed: every chunk loaded, none computed, the same arrays
        "(4, 300) ['my-cell-",
    ],
}
# What a block needing an optional package prints ("# needs PACKAGE" on its first line: run
# where the package is installed, as in CI, whose test extra has pandas).
EXPECTED_WITH = {
    ("guides/concepts.md", "pandas"): ["average_loss  cumulative_loss   regret\nmethod"],
}
# Pages whose python blocks are read, not run, and why.
NOT_RUN = {"distributed.md": "several processes on several hosts (tests/test_distributed.py)"}
# Names a page registers in global registries, removed after it ran.
REGISTERED = {"guides/add-a-learner.md": ["adagrad_norm_guide"]}
# Names a page adds to the stream table (ojax.envs.STREAMS), removed after it ran.
STREAMS_ADDED = {"guides/add-a-dataset.md": ["tiny"]}
REGISTERED_EXPERIMENTS = {"guides/add-an-experiment.md": ["ogd-regret"]}


def python_blocks(page: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", (DOCS / page).read_text(), re.S | re.M)


def test_every_page_with_code_is_checked():
    pages = {
        str(p.relative_to(DOCS))
        for p in DOCS.rglob("*.md")
        if python_blocks(str(p.relative_to(DOCS)))
    }
    assert pages == set(EXPECTED) | set(NOT_RUN)


@pytest.mark.parametrize("page", sorted(EXPECTED))
def test_guide_code_runs(page, tmp_path, monkeypatch, capsys):
    import matplotlib.pyplot as plt

    blocks = python_blocks(page)
    assert blocks, f"{page} has no python block"
    spec = importlib.util.spec_from_file_location("outputs", ROOT / "scripts" / "guide_outputs.py")
    outputs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(outputs)
    shown = outputs.shown_outputs((DOCS / page).read_text())  # a block's output under it
    printed = []
    monkeypatch.chdir(tmp_path)
    # the page runs as a module that is imported (as a script's __main__ is): a dataclass needs
    # its module in sys.modules
    module = types.ModuleType(f"docs_{Path(page).stem.replace('-', '_')}")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    scope: dict = module.__dict__
    x64 = jax.config.jax_enable_x64
    expected = list(EXPECTED[page])
    try:
        for i, code in enumerate(blocks):
            needs = re.match(r"# needs (\w+)\n", code)
            if needs and importlib.util.find_spec(needs.group(1)) is None:
                continue  # the optional package is not installed here
            if needs:
                expected += EXPECTED_WITH[(page, needs.group(1))]
            exec(compile(code, f"{page} block {i + 1}", "exec"), scope)
            printed.append(capsys.readouterr().out)
            assert bool(printed[-1].strip()) == (shown[i] is not None), (
                f"{page} block {i + 1} prints {printed[-1]!r} and shows {shown[i]!r}: run "
                "python scripts/guide_outputs.py"
            )
    finally:
        for name in REGISTERED.get(page, []):
            ojax.LEARNERS.pop(name, None)
        for name in STREAMS_ADDED.get(page, []):
            ojax.envs.STREAMS.pop(name, None)
        for name in REGISTERED_EXPERIMENTS.get(page, []):
            from ojax.experiments import EXPERIMENTS

            EXPERIMENTS.pop(name, None)
        plt.close("all")
        jax.config.update("jax_enable_x64", x64)
    out, on_page = "".join(printed), "".join(text for text in shown if text)
    for text in expected:
        assert text in out, f"{page}: {text!r} not printed; got:\n{out}"
        assert text in on_page, f"{page}: {text!r} not shown; run python scripts/guide_outputs.py"


def public_modules() -> set[str]:
    """ojax and its modules and subpackages whose name does not start with an underscore."""
    names = {"ojax"}
    for info in pkgutil.iter_modules(ojax.__path__):
        if not info.name.startswith("_"):
            names.add(f"ojax.{info.name}")
    return names


def test_api_reference_covers_every_public_module():
    nav = (ROOT / "mkdocs.yml").read_text()
    for name in sorted(public_modules()):
        page = DOCS / "api" / f"{name}.md"
        assert page.is_file(), f"no API page for {name}"
        assert f"::: {name}\n" in page.read_text(), f"{page} does not document {name}"
        assert f"api/{name}.md" in nav, f"{name}'s page is not in mkdocs.yml's nav"


def test_no_name_of_a_package_shadows_its_module():
    # `from ojax.oco.ogd import ogd` would make the function shadow the module at run time while
    # the docs tool reads the source and sees the module (the function missing from the page):
    # a factory never shares its module's name, so every page lists its package's members.
    for name in sorted(public_modules()):
        module = importlib.import_module(name)
        if not hasattr(module, "__path__"):
            continue
        for info in pkgutil.iter_modules(module.__path__):
            value = getattr(module, info.name, None)
            assert value is None or isinstance(value, types.ModuleType), (
                f"{name}.{info.name} is a {type(value).__name__}, not the module {info.name}.py"
            )


def test_site_hooks_list_reproductions_and_drop_sphinx_roles():
    spec = importlib.util.spec_from_file_location("hooks", ROOT / "scripts" / "mkdocs_hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    html = "see :func:<code>run</code> and :class:<code>~ojax.core.Trace</code>"
    assert hooks.on_page_content(html, None, None, None) == (
        "see <code>run</code> and <code>Trace</code>"
    )

    class File(types.SimpleNamespace):
        pass

    class Files:
        def __init__(self, *files):
            self.files = files

        def documentation_pages(self):
            return self.files

    index = types.SimpleNamespace(file=File(src_uri="reproductions/index.md"))
    pages = [File(src_uri=f"reproductions/{n}.md", content_string=f"# {n.upper()}\n") for n in "ba"]
    assert hooks.on_page_markdown("X", index, None, Files(index.file)).endswith("yet.\n")
    listed = hooks.on_page_markdown("X", index, None, Files(index.file, *pages))
    assert listed.endswith("- [A](a.md)\n- [B](b.md)\n")
    other = types.SimpleNamespace(file=File(src_uri="guides/concepts.md"))
    assert hooks.on_page_markdown("X", other, None, Files(*pages)) == "X"


def test_the_learner_families_pages_lead_with_their_learners():
    # docs/api/ojax.oco.md, ...: written by scripts/api_pages.py; a learner added (or a class
    # moved) without running it leaves a page stale
    spec = importlib.util.spec_from_file_location("pages", ROOT / "scripts" / "api_pages.py")
    pages = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(pages)
    assert pages.main(["--check"]) == 0, "run python scripts/api_pages.py"
    text = (ROOT / "docs" / "api" / "ojax.oco.md").read_text()
    learners, params = text.index("::: ojax.oco.ogd\n"), text.index("::: ojax.oco.OGDParams\n")
    assert text.index("## Learners") < text.index("::: ojax.oco.gradient_descent") < learners
    assert learners < params < text.index("::: ojax.oco.OGDState\n")
    for family in pages.FAMILIES:  # every registered learner's factory is on its family's page
        assert pages.learners(family), family
    factories = {n for f in pages.FAMILIES for names in pages.learners(f).values() for n in names}
    assert {"ogd", "coin_betting", "lazy", "fixed_share", "sgd", "otl", "linucb"} <= factories


def test_every_public_module_says_what_it_exports():
    # an __all__ in every public module: what it imports (numpy, jax, another module's
    # names) is not its interface, and each name listed exists
    walked = pkgutil.walk_packages(ojax.__path__, "ojax.")
    names = {"ojax"} | {
        info.name
        for info in walked
        if not any(part.startswith("_") for part in info.name.split("."))
    }
    assert public_modules() <= names and len(names) > 100
    for name in sorted(names):
        module = importlib.import_module(name)
        assert isinstance(getattr(module, "__all__", None), list), f"{name} has no __all__"
        missing = [n for n in module.__all__ if not hasattr(module, n)]
        assert not missing, f"{name}.__all__ lists {missing}, which it does not define"
