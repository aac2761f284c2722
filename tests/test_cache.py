"""The persistent compilation cache: a second process compiles nothing that the first compiled
(counted through JAX's monitoring events, not timings); the folder can be moved or disabled."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ojax.programs.cache import compilation_cache_dir, default_cache_dir, enable_compilation_cache
from ojax.validation import InputError

ROOT = Path(__file__).resolve().parents[1]

# One `ojax sweep` in a fresh process, counting the programs it compiled and those it read.
SCRIPT = """
import sys
from jax import monitoring

events, traced = [], set()
monitoring.register_event_listener(lambda name, **kwargs: events.append(name))


def on_duration(name, seconds, **kwargs):
    if name == "/jax/core/compile/jaxpr_trace_duration":
        traced.add(kwargs.get("fun_name"))


monitoring.register_event_duration_secs_listener(on_duration)
from ojax.app import cli

argv = ["sweep", "ogd", "--steps", "50", "--seeds", "2", "--quiet", "--overwrite"]
assert cli.main([*argv, "--out", sys.argv[1], "--compile-cache", sys.argv[2]]) == 0
requests = events.count("/jax/compilation_cache/compile_requests_use_cache")
hits = events.count("/jax/compilation_cache/cache_hits")
print("REQUESTS", requests, "HITS", hits)
print("TRACED", *sorted(map(str, traced)))
"""


def _counts(out: Path, cache: str) -> tuple[int, int, set[str]]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "JAX_PLATFORMS": "cpu"}
    env.pop("OJAX_COMPILATION_CACHE", None)
    env.pop("OJAX_PROGRAM_CACHE", None)  # off in the test process (conftest), on for a user
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(out), cache],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=True,
    )
    words = done.stdout.split()
    traced = set(done.stdout.split("TRACED", 1)[1].split())
    return int(words[words.index("REQUESTS") + 1]), int(words[words.index("HITS") + 1]), traced


@pytest.mark.slow
def test_a_second_process_compiles_nothing_the_first_compiled(tmp_path):
    cache = tmp_path / "cache"
    requests, hits, traced = _counts(tmp_path / "first", str(cache))
    assert requests > 0 and hits == 0  # the first process compiles every program
    written = len(list(cache.glob("*-cache")))  # JAX keeps all but trivial dtype conversions
    assert written >= requests - 2 and any(e.name.startswith("jit_call") for e in cache.iterdir())
    assert "learner_run" in traced  # the sweep's cell, traced and exported to the program store
    # the chunk program and the cell on one combination (its output shapes and memory)
    assert len(list((cache / "ojax-programs").glob("*.jaxexport"))) == 2
    requests2, hits2, traced2 = _counts(tmp_path / "second", str(cache))
    assert requests2 == requests and hits2 == written  # ... the second reads every one of them
    assert "learner_run" not in traced2 and traced2 < traced  # ... and traces no cell again
    off_requests, off_hits, off_traced = _counts(tmp_path / "third", "off")
    assert off_hits == 0 and "learner_run" in off_traced
    assert not (tmp_path / "third" / "ojax-programs").exists()


def test_the_cache_folder_moves_and_switches_off(tmp_path, monkeypatch):
    monkeypatch.delenv("OJAX_COMPILATION_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert compilation_cache_dir() == default_cache_dir() == tmp_path / "xdg" / "ojax" / "jax"
    monkeypatch.setenv("OJAX_COMPILATION_CACHE", str(tmp_path / "mine"))
    assert compilation_cache_dir() == tmp_path / "mine"
    assert compilation_cache_dir("off") is None
    monkeypatch.setenv("OJAX_COMPILATION_CACHE", "off")
    assert compilation_cache_dir() is None and enable_compilation_cache() is None
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.raises(InputError, match="compilation cache: cannot write the folder"):
        enable_compilation_cache(blocker / "cache")


def test_processes_starting_together_share_the_folder(tmp_path):
    """Processes of one multi-process run enable the same folder at the same moment: none may
    trip over another's write probe (they once shared one probe file name)."""
    code = (
        "import sys\n"
        "from ojax.programs.cache import enable_compilation_cache\n"
        "for _ in range(20000):\n"
        "    assert enable_compilation_cache(sys.argv[1]) is not None\n"
    )
    folder = tmp_path / "shared"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    workers = [
        subprocess.Popen([sys.executable, "-c", code, str(folder)], env=env, stderr=subprocess.PIPE)
        for _ in range(2)
    ]
    for worker in workers:
        _, err = worker.communicate(timeout=120)
        assert worker.returncode == 0, err.decode()
    assert not list(folder.glob(".ojax-write-probe*"))


def test_program_store_names_and_files(tmp_path, monkeypatch):
    import jax
    import jax.numpy as jnp

    from ojax import programs
    from ojax.experiments import denevi2020 as den

    assert programs.folder() is None  # the tests run with the store off: nothing is named
    assert programs.entry_name("chunk", den.curve_points, [1]) is None
    monkeypatch.setattr(programs, "folder", lambda: tmp_path / "store")

    setting = den.synthetic_setting(2, den.QUICK_SYNTHETIC, jnp.float32)
    learners = den.method_learners("Lazy", 10)
    cell = den._run_cell(learners, setting.draw, (0, 10))
    other = den._run_cell(learners, setting.draw, (0, 20))  # another closure value
    name = programs.entry_name("chunk", cell, [1])
    assert name is not None and name == programs.entry_name("chunk", cell, [1])
    assert name != programs.entry_name("chunk", other, [1])
    assert name != programs.entry_name("chunk", cell, [2])  # another shape or layout

    def users_cell(params, data, key):  # may read globals: never stored
        return params

    assert programs.entry_name("chunk", users_cell, [1]) is None
    # `jax.vmap`'s wrapper closes over a bare `object()` (a sentinel, described as one): a
    # vmapped ojax function is kept, named by its axes too
    vmapped = programs.entry_name("jit", jax.vmap(den.curve_points), [1])
    assert vmapped is not None and vmapped == programs.entry_name(
        "jit", jax.vmap(den.curve_points), [1]
    )
    assert vmapped != programs.entry_name("jit", jax.vmap(den.curve_points, in_axes=1), [1])
    path = tmp_path / "entry.pkl"
    programs._write(path, b"abc")
    assert programs._read(path) == b"abc"
    path.write_bytes(path.read_bytes()[:-1])  # a torn file is ignored, not read
    assert programs._read(path) is None


def test_stored_jit_is_loaded_by_a_new_wrapper_without_tracing(tmp_path, monkeypatch):
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import monitoring

    from ojax import programs, projections

    monkeypatch.setattr(programs, "folder", lambda: tmp_path)
    traced: list[str] = []

    def on_duration(name, seconds, **kwargs):
        if name == "/jax/core/compile/jaxpr_trace_duration":
            traced.append(str(kwargs.get("fun_name")))

    monitoring.register_event_duration_secs_listener(on_duration)
    w = jnp.asarray([3.0, 4.0, 0.5])
    first = programs.jit(projections.simplex)(w, 2.0)  # traced, exported and stored
    assert "simplex" in traced and len(list(tmp_path.glob("*.jaxexport"))) == 1
    traced.clear()
    again = programs.jit(projections.simplex)(w, 2.0)  # as a new process would: loaded
    assert "simplex" not in traced
    np.testing.assert_array_equal(again, first)
    np.testing.assert_array_equal(first, jax.jit(projections.simplex)(w, 2.0))
    programs.jit(projections.simplex)(w[:2], 2.0)  # another shape: another program
    assert len(list(tmp_path.glob("*.jaxexport"))) == 2


def test_the_store_registers_named_tuples_while_other_threads_import():
    """Sweeps on threads (`ojax.sweep.in_threads`) register the named tuples of the modules
    imported so far while another thread may be importing one: the registration reads a copy
    of `sys.modules` and of each namespace, taken again when a change interrupts it (a cold
    `denevi2020-variance` once failed with `dictionary changed size during iteration`), and
    two threads registering at once both finish."""
    import threading

    from ojax import programs

    class Busy(dict):
        """A namespace another thread changes during the first two copies."""

        interrupted = 0

        def copy(self):
            if self.interrupted < 2:
                self.interrupted += 1
                raise RuntimeError("dictionary changed size during iteration")
            return dict(self)

    busy = Busy(a=1)
    assert programs._snapshot(busy) == {"a": 1} and busy.interrupted == 2
    errors: list[BaseException] = []

    def register():
        try:
            for _ in range(20):
                programs.register_named_tuples()
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=register) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []


def test_the_source_digest_covers_every_file_of_ojax_as_imported(tmp_path, monkeypatch):
    """Programs and chunks are named by a digest of every source file of the package (not one
    subfolder), as this process imported them; a loaded module whose file changed since makes
    the digest this process's own and stores nothing."""
    import ojax
    import ojax.runner  # noqa: F401 (a loaded module, checked below)
    from ojax import programs
    from ojax.programs import identity

    package = Path(ojax.__file__).resolve().parent
    every = {p.relative_to(package).as_posix() for p in package.rglob("*.py")}
    assert set(identity._IMPORTED) == every  # runner.py, meta/learners.py, ... not programs/ only
    assert {"runner.py", "meta/learners.py", "programs/identity.py"} <= every
    assert identity.changed_sources() == []
    unchanged = identity.ojax_source_digest()
    assert unchanged == identity.ojax_source_digest()  # stable within a process

    monkeypatch.setattr(programs, "folder", lambda: tmp_path / "store")
    assert programs.entry_name("jit", programs.jit, [1]) is not None
    # the runner's file as if it had been edited after this process imported it
    monkeypatch.setitem(identity._IMPORTED, "runner.py", (0, 0, "0" * 64))
    assert identity.changed_sources() == ["runner.py"]
    assert identity.ojax_source_digest() != unchanged
    assert programs.entry_name("jit", programs.jit, [1]) is None  # nothing stored or loaded


def test_a_programs_xla_options_yield_to_xla_flags(monkeypatch):
    """A program's preferred XLA options (the `-O1` of Denevi et al.'s scans) hold unless the
    process's XLA_FLAGS sets the option: an option given there holds for every program."""
    from ojax import programs

    preferred = {"xla_backend_optimization_level": 1, "xla_cpu_enable_fast_math": False}
    monkeypatch.setenv("XLA_FLAGS", "--xla_backend_optimization_level=0 --xla_dump_to=/tmp/x")
    assert programs.compiler_options(preferred) == {"xla_cpu_enable_fast_math": False}
    monkeypatch.setenv("XLA_FLAGS", "--xla_cpu_enable_fast_math --xla_backend_optimization_level=3")
    assert programs.compiler_options(preferred) is None  # nothing left: what jax takes for none
    monkeypatch.setenv("XLA_FLAGS", "--xla_force_host_platform_device_count=2")
    assert programs.compiler_options(preferred) == preferred
    monkeypatch.delenv("XLA_FLAGS")
    assert programs.compiler_options(preferred) == preferred
    assert programs.compiler_options(None) is None
