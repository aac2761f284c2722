"""The reproduction pages' generator (``scripts/make_reproductions.py``): every test a claim
names exists, every experiment, dataset and method a page names is one of ours, and the
generator turns a tiny results folder into pages with the expected sections. Nothing runs an
experiment here (fast)."""

from __future__ import annotations

import ast
import csv
import importlib.util
import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from ojax import theory
from ojax.experiments import EXPERIMENTS, basics, neu_rosasco2018, zhao_hoi2010
from ojax.experiments import denevi2020 as den
from ojax.experiments import denevi2020_variance as var

ROOT = Path(__file__).resolve().parents[1]


def _load(name: str):
    path = ROOT / "scripts" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


content = _load("reproductions_content")
make = _load("make_reproductions")

DENEVI = {"ITL", "Oracle", *den.PF_METHODS, *den.SS_METHODS, var.BEST_BIAS}
HOMOGENEOUS = set(zhao_hoi2010.HOMOGENEOUS_METHODS)
HETEROGENEOUS = set(zhao_hoi2010.HETEROGENEOUS_METHODS)
BASICS_METHODS = {
    "follow-best-expert", "halving", "FTL", "FTRL", "OGD", "Hedge-random", "Hedge-adversarial",
    "KT", "ONS", "OGD-tuned", "OGD-step/10", "OGD-stepx10",
}  # fmt: skip
# (datasets, methods) of each experiment, from the experiments' own constants
KNOWN = {
    "basics": (set(basics.TITLES), BASICS_METHODS),
    "denevi2020-synthetic": ({"synthetic"}, DENEVI),
    "denevi2020-wealth": ({"synthetic"}, DENEVI),
    "denevi2020-variance": ({"synthetic"}, DENEVI),
    "denevi2020-schools": ({"schools"}, DENEVI - {"Oracle"}),
    "denevi2020-lenk": ({"lenk"}, DENEVI - {"Oracle"}),
    "neu-rosasco2018": (
        {"identity", "ill-conditioned", "well-conditioned"},
        set(neu_rosasco2018.METHODS),
    ),
    "zhao-hoi2010-homogeneous": ({"usenet2", "newsgroup4", "spambase"}, HOMOGENEOUS),
    "zhao-hoi2010-heterogeneous": ({"a7a", "mushrooms", "spambase"}, HETEROGENEOUS),
}


def _tests_in(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}


def _claims():
    return [claim for page in content.PAGES for claim in page.claims]


def test_every_claim_names_an_existing_test():
    claims = _claims()
    assert len(claims) >= 4 * 3
    for claim in claims:
        file, name = claim.test.split("::")
        path = ROOT / file
        assert file.startswith("tests/test_") and path.is_file(), claim.test
        assert name in _tests_in(path), claim.test
    assert any(not c.supported for c in claims)  # the pages say where the data disagrees


def _referenced() -> list[tuple[str, str, str, str]]:
    """(experiment, dataset, method, metric) named by the claims and the published tables."""
    found = []
    for claim in _claims():
        for experiment, path in make.PLACEHOLDER.findall(claim.shows):
            dataset, rest = path.split("/", 1)
            method, metric = rest.rsplit("/", 1)
            found.append((experiment, dataset, method, metric.split("#")[0]))  # #STEP: a curve
    for experiment, published in content.PUBLISHED.items():
        found += [(experiment, *key) for key in published.values]
    return found


def test_pages_name_registered_experiments_datasets_and_methods():
    named = {e for page in content.PAGES for e in page.experiments}
    assert named == set(EXPERIMENTS) - {"theory"}  # every experiment has a page
    assert set(content.TABLES) == set(content.PUBLISHED) == named >= set(content.QUICK_REASONS)
    referenced = _referenced()
    assert len(referenced) > 40
    for experiment, dataset, method, metric in referenced:
        assert experiment in EXPERIMENTS, experiment
        datasets, methods = KNOWN[experiment]
        assert dataset in datasets, (experiment, dataset)
        assert method.split("@", 1)[0] in methods, (experiment, method)
        assert metric in content.TABLES[experiment].metrics or metric == "bound", metric
    documents = {page.document for page in content.PAGES}
    assert documents == set(theory.base.DOCUMENTS)


def test_the_scripts_tolerances_are_the_librarys():
    from ojax.experiments.theory import VERDICT

    assert make.SLOPE_TOLERANCE == theory.SLOPE_TOLERANCE
    assert make.BOUND_RTOL == theory.BOUND_RTOL
    assert make.FLOAT32_RTOL == theory.FLOAT32_RTOL
    assert make.FALSIFIER == theory.FALSIFIER and make.VERDICT == VERDICT
    assert make.VARIANT == theory.VARIANT and make.VACUOUS == theory.VACUOUS
    for method in ("KT", "falsifier:w=0", "variant:no term", "vacuous:w=0@paper"):
        assert make.role(method) == theory.role(method)


def _write_run(folder: Path, rows: list[tuple], config: dict, curves: dict | None = None) -> None:
    folder.mkdir(parents=True)
    with (folder / "results.csv").open("w", newline="") as f:
        out = csv.writer(f, lineterminator="\n")
        out.writerow(["experiment", "dataset", "method", "metric", "mean", "std", "n_seeds"])
        out.writerows([(folder.name, *row) for row in rows])
    (folder / "config.json").write_text(json.dumps(config))
    Image.new("RGBA", (1200, 600), (255, 0, 0, 255)).save(folder / "fig.png")
    if curves:
        np.savez(folder / "curves.npz", **curves)


@pytest.fixture()
def pages(tmp_path):
    results, docs = tmp_path / "results", tmp_path / "docs"
    full = {"quick": False, "seeds": 30, "x64": False, "device": "cpu:cpu", "wall_seconds": 12.5}
    rows = [
        ("synthetic", m, k, 4.6 if m == "ITL" else 3.5, 0.03, 30)
        for m in ("ITL", "Aggressive")
        for k in content.DENEVI_METRICS
    ]
    curve = {"synthetic/Aggressive/cumulative_error": np.array([[4.0, 3.7], [4.2, 3.9]]),
             "synthetic/Aggressive/cumulative_error:steps": np.array([1000, 2000])}  # fmt: skip
    _write_run(results / "denevi2020-synthetic", rows, full, curve)
    rows = [("newsgroup4", m, "mistake_rate", 40.0, 1.0, 20) for m in ("PA", "OTL")]
    _write_run(results / "zhao-hoi2010-homogeneous", rows, full | {"quick": True, "seeds": 3})
    checks = {
        "denevi-prop1": {"document": "denevi2020", "result": "Proposition 1", "kind": "bound",
                         "statement": "regret <= B", "horizon": "k (coins)",
                         "horizons": [16, 64, 256], "rows": 2},
        "zhao-hoi-prop1": {"document": "zhao-hoi2010", "result": "Proposition 1",
                           "kind": "bound", "statement": "M <= 4 S"},
    }  # fmt: skip
    rows = [
        ("denevi-prop1", "KT", "measured", 1.0, 0.0, 2),
        ("denevi-prop1", "KT", "ratio", 0.5, 0.1, 2),
        ("denevi-prop1", "falsifier:no-bet", "measured", 4.0, 0.0, 2),
        ("denevi-prop1", "falsifier:no-bet", "ratio", 2.0, 0.0, 2),
        ("denevi-prop1", "falsifier:w=0", "measured", 6.0, 0.0, 2),
        ("denevi-prop1", "falsifier:w=0", "ratio", 3.0, 0.0, 2),
        ("denevi-prop1", "variant:no log", "measured", 5.0, 0.0, 2),
        ("denevi-prop1", "variant:no log", "ratio", 2.5, 0.0, 2),
        ("denevi-prop1", "vacuous:no-bet@paper", "measured", 0.2, 0.0, 2),
        ("denevi-prop1", "vacuous:no-bet@paper", "ratio", 0.1, 0.0, 2),
        ("denevi-prop1", "verdict", "holds", 1.0, 0.0, 1),
        ("denevi-prop1", "verdict", "sound", 1.0, 0.0, 1),
        ("zhao-hoi-prop1", "OTL", "measured", 3.0, 0.0, 1),
        ("zhao-hoi-prop1", "OTL", "ratio", 1.5, 0.0, 1),  # over its bound: the page says so
        ("zhao-hoi-prop1", "falsifier:uniform", "measured", 1.6, 0.0, 1),
        ("zhao-hoi-prop1", "falsifier:uniform", "ratio", 0.8, 0.0, 1),  # does not break it
        ("zhao-hoi-prop1", "verdict", "holds", 0.0, 0.0, 1),
        ("zhao-hoi-prop1", "verdict", "sound", 0.0, 0.0, 1),
    ]
    curves = {
        "denevi-prop1/KT/measured": np.ones((2, 3)),
        "denevi-prop1/KT/bound": np.full((2, 3), 2.0),
        "denevi-prop1/falsifier:no-bet/measured": np.full((2, 3), 4.0),
        "denevi-prop1/falsifier:no-bet/bound": np.full((2, 3), 2.0),
        "denevi-prop1/falsifier:w=0/measured": np.full((2, 3), 6.0),
        "denevi-prop1/falsifier:w=0/bound": np.full((2, 3), 2.0),
        "denevi-prop1/variant:no log/measured": np.full((2, 3), 5.0),
        "denevi-prop1/variant:no log/bound": np.full((2, 3), 2.0),
        "denevi-prop1/vacuous:no-bet@paper/measured": np.full((2, 3), 0.2),
        "denevi-prop1/vacuous:no-bet@paper/bound": np.full((2, 3), 2.0),
        "zhao-hoi-prop1/OTL/measured": np.full((1, 3), 3.0),
        "zhao-hoi-prop1/OTL/bound": np.full((1, 3), 2.0),
        "zhao-hoi-prop1/falsifier:uniform/measured": np.full((1, 3), 1.6),
        "zhao-hoi-prop1/falsifier:uniform/bound": np.full((1, 3), 2.0),
    }
    _write_run(results / "theory", rows, full | {"x64": True, "checks": checks}, curves)
    (docs / "figures").mkdir(parents=True)
    (docs / "figures" / "stale.png").write_bytes(b"old")
    assert make.main(["--results", str(results), "--docs", str(docs)]) == 0
    return docs


def test_generator_writes_every_page_with_its_sections(pages):
    names = {p.name for p in pages.glob("*.md")}
    assert names == {f"{page.name}.md" for page in content.PAGES}
    for page in content.PAGES:
        text = (pages / f"{page.name}.md").read_text()
        assert text.startswith(f"# {page.title}\n")
        assert "## Claims" in text and "## The document's numbered results" in text
        assert "```python" not in text  # or tests/test_docs.py would have to run it
        for name in page.experiments:
            assert f"## `{name}`" in text
        assert text.count("- Checked by `tests/") == len(page.claims)
    assert not (pages / "figures" / "stale.png").exists()


def test_pages_put_the_documents_numbers_beside_ours(pages):
    denevi = (pages / "denevi2020.md").read_text()
    assert "| synthetic | ITL | about 4.6 | 4.600 +- 0.030 | about 4.6 |" in denevi
    assert "`denevi2020-synthetic`: full size, 30 seeds" in denevi and "float32" in denevi
    assert "No results: `ojax run denevi2020-lenk` was not run" in denevi
    assert "![denevi2020-synthetic: fig](figures/denevi2020-synthetic_fig.png)" in denevi
    with Image.open(pages / "figures" / "denevi2020-synthetic_fig.png") as small:
        assert small.size == (make.MAX_WIDTH, make.MAX_WIDTH // 2) and small.mode == "P"
        assert small.convert("RGB").getpixel((10, 10)) == (255, 0, 0)
    assert "ITL 4.600 +- 0.030" in denevi  # a claim's placeholder filled from the results
    assert "after 2000 points is Aggressive 3.800 +- 0.100" in denevi  # a curve at its step
    assert "Lazy (not in these results)" in denevi
    zhao = (pages / "zhao-hoi2010.md").read_text()
    assert "| newsgroup4 | OTL | 37.58 | 40.0 +- 1.0 |" in zhao
    assert "`zhao-hoi2010-homogeneous`: quick size (`--quick`: fewer" in zhao
    assert "ojax run zhao-hoi2010-homogeneous --quick --out" in zhao
    assert "**not supported by our data**" in zhao


def test_theory_status_comes_from_every_horizon(pages):
    denevi = (pages / "denevi2020.md").read_text()
    assert re.search(
        r"\| `denevi-prop1` \| Proposition 1 \| .* \| KT \| 0\.5\d* \+- 0\.1\d* \| holds", denevi
    )
    assert "| falsifier:no-bet | 2 | breaks it |" in denevi
    assert "| variant:no log | 2.5 | breaks it |" in denevi
    assert "| vacuous:no-bet@paper | 0.1 | under its bound: vacuous here |" in denevi
    assert "none is vacuous on the instance it is checked on" in denevi
    # the summary: the size, the weakest falsifier (non-learner) apart from the variant, the
    # document's own instance
    assert (
        "| `denevi-prop1` | bound | k = 16 .. 256 (3), 2 rows | 0.5 (KT) | 2 (no-bet) | "
        "2.5 (no log) | 0.1 (no-bet@paper): under the bound, vacuous there |"
    ) in denevi
    assert "From `ojax run theory --x64` at full size." in denevi
    zhao = (pages / "zhao-hoi2010.md").read_text()
    assert "| OTL | 1.5 | **fails** |" in zhao
    assert "| falsifier:uniform | 0.8 | **does not break it** |" in zhao
    assert "**Results no falsifier breaks (vacuous on their instance):** `zhao-hoi-prop1`" in zhao
    assert "**Results that do not hold:** `zhao-hoi-prop1`" in zhao
    assert "none is vacuous" not in zhao
    notes = (pages / "notes.md").read_text()
    assert "holds no check of `notes`" in notes and "ojax run theory --x64" in notes
