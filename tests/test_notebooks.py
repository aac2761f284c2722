"""Every notebook under notebooks/ is committed with its outputs (a figure at least) and runs top
to bottom (small configurations). `python scripts/make_notebooks.py` writes and executes them."""

from __future__ import annotations

import copy
import os
from pathlib import Path

import nbclient
import nbformat
import pytest
from conftest import COMPILATION_CACHE

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def _outputs(notebook) -> list[dict]:
    return [o for c in notebook.cells if c.cell_type == "code" for o in c.get("outputs", [])]


def test_the_script_writes_every_notebook_as_committed():
    """scripts/make_notebooks.py is the source of every notebook: the same cells."""
    import runpy

    script = runpy.run_path(str(ROOT / "scripts" / "make_notebooks.py"))
    assert sorted(script["NOTEBOOKS"]) == [p.name for p in NOTEBOOKS]
    for path in NOTEBOOKS:
        committed = nbformat.read(path, as_version=4).cells
        written = script["NOTEBOOKS"][path.name]
        assert [(c.cell_type, c.source) for c in committed] == [
            (c.cell_type, c.source) for c in written
        ], f"{path.name} differs from scripts/make_notebooks.py: rerun it"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_committed_with_its_outputs(path):
    """Where the code is hosted a notebook shows what it stored: every code cell ran, without
    an error, and at least one figure is there as a PNG of modest size."""
    notebook = nbformat.read(path, as_version=4)
    code = [c for c in notebook.cells if c.cell_type == "code"]
    assert all(c.get("execution_count") for c in code), "run python scripts/make_notebooks.py"
    outputs = _outputs(notebook)
    assert not [o for o in outputs if o.get("output_type") == "error"]
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert images, f"{path.name} stores no figure; run python scripts/make_notebooks.py"
    assert path.stat().st_size < 600_000


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_executes(path, tmp_path, monkeypatch):
    """A copy without its outputs runs top to bottom with this checkout's ojax (the stored
    outputs need not be current)."""
    notebook = copy.deepcopy(nbformat.read(path, as_version=4))
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    path_now = os.environ.get("PYTHONPATH")
    monkeypatch.setenv("PYTHONPATH", str(ROOT) + (os.pathsep + path_now if path_now else ""))
    # the kernel reads and writes the session's compilation cache (JAX's own variables: a
    # notebook does not call ojax's enable_compilation_cache), e.g. the programs of the quick
    # experiment it shares with tests/test_denevi2020.py
    for name, value in (
        ("JAX_COMPILATION_CACHE_DIR", str(COMPILATION_CACHE)),
        ("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0"),
        ("JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES", "0"),
    ):
        monkeypatch.setenv(name, value)
    client = nbclient.NotebookClient(
        notebook,
        timeout=600,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    )
    client.execute()
    assert not [o for o in _outputs(notebook) if o.get("output_type") == "error"]
