"""The persistent compilation cache: a second process compiles nothing that the first compiled
(counted through JAX's monitoring events, not timings); the folder can be moved or disabled."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ojax.cache import compilation_cache_dir, default_cache_dir, enable_compilation_cache
from ojax.validation import InputError

ROOT = Path(__file__).resolve().parents[1]

# One `ojax sweep` in a fresh process, counting the programs it compiled and those it read.
SCRIPT = """
import sys
from jax import monitoring

events = []
monitoring.register_event_listener(lambda name, **kwargs: events.append(name))
from ojax import cli

argv = ["sweep", "ogd", "--steps", "50", "--seeds", "2", "--quiet", "--overwrite"]
assert cli.main([*argv, "--out", sys.argv[1], "--compile-cache", sys.argv[2]]) == 0
requests = events.count("/jax/compilation_cache/compile_requests_use_cache")
hits = events.count("/jax/compilation_cache/cache_hits")
print("REQUESTS", requests, "HITS", hits)
"""


def _counts(out: Path, cache: str) -> tuple[int, int]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "JAX_PLATFORMS": "cpu"}
    env.pop("OJAX_COMPILATION_CACHE", None)
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(out), cache],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=True,
    )
    words = done.stdout.split()
    return int(words[words.index("REQUESTS") + 1]), int(words[words.index("HITS") + 1])


@pytest.mark.slow
def test_a_second_process_compiles_nothing_the_first_compiled(tmp_path):
    cache = tmp_path / "cache"
    requests, hits = _counts(tmp_path / "first", str(cache))
    assert requests > 0 and hits == 0  # the first process compiles every program
    written = len(list(cache.glob("*-cache")))  # JAX keeps all but trivial dtype conversions
    assert written >= requests - 2 and any(
        e.name.startswith("jit__chunk_fn") for e in cache.iterdir()
    )
    requests2, hits2 = _counts(tmp_path / "second", str(cache))
    assert requests2 == requests and hits2 == written  # ... the second reads every one of them
    off_requests, off_hits = _counts(tmp_path / "third", "off")
    assert off_hits == 0


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
        "from ojax.cache import enable_compilation_cache\n"
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
