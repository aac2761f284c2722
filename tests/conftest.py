"""Shared test configuration: strict numerics, float64 on demand, the data folder."""

from __future__ import annotations

import os
from pathlib import Path

import jax
import pytest

from ojax.datasets.paths import packaged_data_dir

# Catch silent broadcasting and silent dtype promotion (as equinox's test-suite does).
jax.config.update("jax_numpy_rank_promotion", "raise")
jax.config.update("jax_numpy_dtype_promotion", "strict")

ROOT = Path(__file__).resolve().parents[1]
# The datasets shipped inside the package, unless OJAX_DATA_DIR points elsewhere.
DATA_DIR = Path(os.environ.get("OJAX_DATA_DIR") or packaged_data_dir()).resolve()


@pytest.fixture
def x64():
    """Runs the test body with float64 enabled (the numerical oracles use it)."""
    with jax.enable_x64(True):
        yield


@pytest.fixture
def data_dir() -> Path:
    """The folder of the real datasets: the packaged one, or ``$OJAX_DATA_DIR`` when set."""
    if not DATA_DIR.is_dir():
        pytest.fail(f"the data folder {DATA_DIR} is missing (OJAX_DATA_DIR names no folder)")
    return DATA_DIR
