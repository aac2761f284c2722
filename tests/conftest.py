"""Shared test configuration: strict numerics, float64 on demand, the data folder."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import jax
import pytest

from ojax.datasets.paths import packaged_data_dir
from ojax.programs.cache import enable_compilation_cache

# The suite compiles its programs to compile fast, not to run fast: with XLA's loop emitters on
# the CPU, not its fusion emitters (jaxlib's default), and without LLVM's optimizations (`-O0`;
# XLA's default is 3). The suite is mostly compiling; the loop emitters took it 521 s -> 417 s
# (denevi2020-synthetic --quick's seven sweeps: 7.3 s -> 4.0 s), `-O0` then 726 s -> 516 s on a
# slower day (tests/test_learners_common.py alone 97 s -> 69 s). The level holds for the programs
# that prefer another (Denevi et al.'s scans, `-O1`: `ojax.programs.compiler_options`; a cold
# `ojax run denevi2020-synthetic --quick` 14.2 s -> 11.2 s). Users' runs and the benchmarks
# keep XLA's defaults. The numbers differ to rounding only; a test that compares the bits of two
# programs that are equal only under LLVM's optimizations (two, 1 ulp apart at `-O0`) is marked
# `default_xla` and runs in a process of its own under XLA's defaults (`pytest_pyfunc_call`
# below), and tests/test_learners_common.py runs the numeric common checks of a learner of each
# kind so. ``XLA_FLAGS="--xla_cpu_use_fusion_emitters=true --xla_backend_optimization_level=3"``
# (`XLA_DEFAULTS`) runs the whole suite under the defaults, the marked tests in-process. JAX
# reads the variable when it starts its backend; subprocesses inherit it.
TEST_XLA_FLAGS = {"--xla_cpu_use_fusion_emitters": "false", "--xla_backend_optimization_level": "0"}
XLA_DEFAULTS = {"--xla_cpu_use_fusion_emitters": "true", "--xla_backend_optimization_level": "3"}
_flags = os.environ.get("XLA_FLAGS", "")
_missing = [f"{name}={value}" for name, value in TEST_XLA_FLAGS.items() if name not in _flags]
os.environ["XLA_FLAGS"] = " ".join([_flags, *_missing]).strip()
# whether this process compiles with a test flag (a `default_xla` test then runs in another)
TEST_FLAGS_ON = any(
    f"{name}={value}" in os.environ["XLA_FLAGS"].split() for name, value in TEST_XLA_FLAGS.items()
)


def default_xla_flags(flags: str) -> str:
    """``flags`` (an XLA_FLAGS value) with XLA's defaults in place of the suite's flags."""
    kept = [f for f in flags.split() if f.split("=")[0] not in TEST_XLA_FLAGS]
    return " ".join([*kept, *(f"{name}={value}" for name, value in XLA_DEFAULTS.items())])


# Tests never write the user's compilation cache (tests/test_cache.py sets its own folder).
os.environ["OJAX_COMPILATION_CACHE"] = "off"

# One compilation cache for the whole test run, in-process and in its subprocesses (`ojax run`,
# workers, scripts, notebook kernels): a folder of this session (0700), made by the first process
# (pytest itself, or the xdist controller: its workers and their subprocesses inherit the
# variable), removed at its end. A program compiled once (by either xdist worker, by a subprocess,
# by an earlier test building the same program through another function) is then read from disk.
# Set OJAX_TEST_COMPILATION_CACHE to keep one across runs.
_CACHE_VAR = "OJAX_TEST_COMPILATION_CACHE"
_OWN_CACHE = not os.environ.get(_CACHE_VAR)
if _OWN_CACHE:
    os.environ[_CACHE_VAR] = tempfile.mkdtemp(prefix="ojax-test-cache-")
COMPILATION_CACHE = Path(os.environ[_CACHE_VAR])
# In-process the program store (ojax.programs, kept beside the cache) stays off: a stored program
# is loaded instead of traced, so what a test counts would depend on which tests ran before it.
# Tests of the store point it at their own folder. The cache itself changes no count: JAX traces,
# lowers and reports a compilation (`backend_compile_duration`) whether XLA compiles the program
# or reads it from disk (`/jax/compilation_cache/cache_hits`).
os.environ["OJAX_PROGRAM_CACHE"] = "off"
enable_compilation_cache(COMPILATION_CACHE)


def subprocess_env(base: dict[str, str] | None = None, **extra: str) -> dict[str, str]:
    """``base`` (default ``os.environ``) with the session's compilation cache and the program
    store on (as a user's `ojax` has it), and ``extra``."""
    env = dict(os.environ if base is None else base)
    env["OJAX_COMPILATION_CACHE"] = str(COMPILATION_CACHE)
    env.pop("OJAX_PROGRAM_CACHE", None)
    env.update(extra)
    return env


def pytest_unconfigure(config):
    if _OWN_CACHE and not hasattr(config, "workerinput"):
        shutil.rmtree(COMPILATION_CACHE, ignore_errors=True)


# Catch silent broadcasting and silent dtype promotion (as equinox's test-suite does).
jax.config.update("jax_numpy_rank_promotion", "raise")
jax.config.update("jax_numpy_dtype_promotion", "strict")

ROOT = Path(__file__).resolve().parents[1]
# The datasets shipped inside the package, unless OJAX_DATA_DIR points elsewhere.
DATA_DIR = Path(os.environ.get("OJAX_DATA_DIR") or packaged_data_dir()).resolve()


@pytest.fixture(autouse=True, scope="module")
def _fresh_jax_caches():
    """Empties JAX's in-memory caches after each test module: a worker would otherwise keep
    every program the modules before compiled (gigabytes over the suite). A later module that
    needs one again reads it from the session's compilation cache on disk."""
    yield
    jax.clear_caches()


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


# Slow tests (subprocesses, notebooks, package builds, real experiments): marked here in one
# place so `pytest -m "not slow"` gives a fast inner loop; CI runs them all.
_SLOW_MODULES = {
    "test_notebooks.py",
    "test_bench_peers.py",
    "test_packaging.py",
    "test_distributed.py",
    "test_bench_gpu.py",  # five compilations of the learners at the test size
    "test_bench_contextual.py",  # MABWiser's Python loop, where installed
}
_SLOW_TESTS = {
    "test_check_holds_at_quick_sizes",  # tests/test_theory.py: one `ojax run theory --quick`
    "test_cli_writes_every_check",
    "test_notes_bounds_are_attained_or_close",
    "test_sigkill_midway_then_resume",
    "test_sharded_over_four_cpu_devices_equals_unsharded",
    "test_the_engine_imports_no_experiment_or_plotting",
    "test_console_script_is_installed",
    "test_sharded_time_axis_matches_serial",
    "test_importing_ojax_starts_no_jax_backend",
    "test_a_bias_helps_only_at_low_variance",
    "test_the_experiment_gives_the_direct_numbers",
    "test_real_data_meta_learners_below_itl_and_aggressive_below_lazy",
    "test_guide_code_runs",
    "test_the_sweep_example_prints_what_readme_says",
    "test_mushrooms_cotl_best_at_the_papers_proportions",
    "test_spambase_paio_best_not_cotl",
    "test_geometric_averaging_helps_in_the_noise_dominated_regime",
    "test_tail_averaging_wins_on_the_well_conditioned_large_n_problem",
    "test_basics_bound_rows_hold_for_their_algorithms_and_titles_state_the_setting",
}


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config):
    """Two xdist workers by default (`-n 2`), when pytest-xdist is installed and loaded and no
    `-n` was given: `pytest ... -p no:xdist` (or without xdist) runs serially instead of failing
    on an option it does not know, as an `-n` in `addopts` would. Without a `--dist` the
    workers share the tests by `loadgroup` (see :func:`pytest_collection_modifyitems`)."""
    if hasattr(config, "workerinput") or not config.pluginmanager.hasplugin("xdist"):
        return None
    if getattr(config.option, "numprocesses", 0) is None:
        config.option.numprocesses = 2
    if config.option.numprocesses and config.option.dist == "no":
        config.option.dist = "loadgroup"
    return None


def _shares_a_module_fixture(item) -> bool:
    """Whether ``item`` uses a module- (or wider-) scoped fixture defined in its own module: its
    tests then run on one worker, which computes the fixture once (``--dist load`` would send
    them to both workers, and each would compute it)."""
    module = getattr(item, "module", None)
    info = getattr(item, "_fixtureinfo", None)
    if module is None or info is None:
        return False
    return any(
        d.scope != "function" and getattr(d.func, "__module__", None) == module.__name__
        for defs in info.name2fixturedefs.values()
        for d in defs
    )


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    """(xdist, in the controller) tells each worker the `--dist` set above: a worker parses the
    command line again, which does not say `loadgroup`."""
    node.workerinput["ojax_dist"] = node.config.option.dist


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the `xdist_group` marks
def pytest_collection_modifyitems(config, items):
    if getattr(config, "workerinput", {}).get("ojax_dist") == "loadgroup":
        config.option.loadgroup = True  # what xdist's hook reads to suffix the nodeids
    for item in items:
        name = getattr(item, "originalname", item.name)
        if item.path.name in _SLOW_MODULES or name in _SLOW_TESTS:
            item.add_marker(pytest.mark.slow)
        if _shares_a_module_fixture(item):
            item.add_marker(pytest.mark.xdist_group(item.path.name))


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    """A test marked `default_xla` runs in a pytest process of its own under XLA's default flags
    (its claim, the bits of two programs equal, follows LLVM's optimizations, which the suite's
    `-O0` turns off); it passes when that process passes it."""
    if pyfuncitem.get_closest_marker("default_xla") is None or not TEST_FLAGS_ON:
        return None
    node = f"{pyfuncitem.path}::{pyfuncitem.name}"
    env = subprocess_env(XLA_FLAGS=default_xla_flags(os.environ["XLA_FLAGS"]))
    command = [sys.executable, "-m", "pytest", "-p", "no:xdist", "-p", "no:cacheprovider", "-q"]
    done = subprocess.run(
        [*command, node], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )
    if done.returncode != 0 or "1 passed" not in done.stdout:  # not deselected, not skipped
        output = done.stdout[-4000:] + done.stderr[-2000:]
        pytest.fail(f"{node} under XLA's default flags:\n{output}")
    return True
