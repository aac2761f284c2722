"""Timing a jitted function with its compilation apart from its run (benchmarks, experiments),
and counting what its compiled loops do per step (:func:`loop_ops`: a structural profile that
no load on the machine can skew)."""

from __future__ import annotations

import collections
import re
import time
from collections.abc import Mapping
from typing import Any

import jax
import numpy as np

from ojax import programs


def compile_and_run(
    jitted_fn: jax.stages.Wrapped,
    *args: Any,
    compiler_options: Mapping[str, Any] | None = None,
    repeats: int = 1,
) -> tuple[Any, float, float]:
    """Compiles `jitted_fn` for `args` ahead of time, then runs the compiled program.

    Args:
      jitted_fn: a `jax.jit` function (it needs `.lower`).
      *args: its arguments (arrays or pytrees; static arguments by closure).
      compiler_options: XLA options for the compilation (e.g.
        `{"xla_backend_optimization_level": 1}`), those XLA_FLAGS does not set
        (:func:`ojax.programs.compiler_options`, as every ojax program).
      repeats: runs of the compiled program; `run_seconds` is their median (the first run is
        not discarded: with `repeats > 1` it is one sample among several).

    Returns:
      `(out, compile_seconds, run_seconds)`: the output (ready), the seconds spent lowering and
      compiling, and the seconds of a run itself (until the output is ready).

    Examples:
      >>> import jax, jax.numpy as jnp
      >>> from ojax.app.timing import compile_and_run
      >>> out, compile_s, run_s = compile_and_run(jax.jit(jnp.cumsum), jnp.arange(4.0))
      >>> print(out, compile_s > 0.0, run_s > 0.0)
      [0. 1. 3. 6.] True True
    """
    start = time.perf_counter()
    compiled = jitted_fn.lower(*args).compile(
        compiler_options=programs.compiler_options(compiler_options)
    )
    compile_seconds = time.perf_counter() - start
    times = []
    for _ in range(max(1, int(repeats))):
        start = time.perf_counter()
        out = jax.block_until_ready(compiled(*args))
        times.append(time.perf_counter() - start)
    return out, compile_seconds, float(np.median(times))


_HEADER = re.compile(r"^(?:ENTRY )?%?([\w.\-]+) \(.*\{$")
_INSTRUCTION = re.compile(r"^\s*(?:ROOT )?%?[\w.\-]+ = (.+?) ([a-z][\w\-]*)\(")
_CALLED = re.compile(r"(?:calls|to_apply|body|condition)=%?([\w.\-]+)")
_BRANCHES = re.compile(r"branch_computations=\{([^}]*)\}")
FREE_OPS = frozenset({"parameter", "get-tuple-element", "tuple", "constant", "bitcast"})
"""Opcodes that move no data (:func:`loop_ops` leaves them out)."""


def _computations(hlo: str) -> dict[str, list[tuple[str, str, str]]]:
    """name -> its instructions `(opcode, result type, line)` in an HLO module's text."""
    computations: dict[str, list[tuple[str, str, str]]] = {}
    current: list[tuple[str, str, str]] | None = None
    for line in hlo.splitlines():
        header = _HEADER.match(line) if not line.startswith(" ") else None
        if header:
            current = computations.setdefault(header.group(1), [])
        elif current is not None and (found := _INSTRUCTION.match(line)):
            current.append((found.group(2), found.group(1), line))
    return computations


def loop_ops(hlo: str) -> collections.Counter[str]:
    """Opcode counts of what the `while` loops of an optimized HLO module run per iteration.

    Every loop's body and condition count with all they call (fusions, reducers, inner loops),
    each instruction once; :data:`FREE_OPS` are left out. Two programs of the same arithmetic
    give the same counts, so `loop_ops(a) - loop_ops(b)` names what `a` adds per step (a
    `select` over the state, a `copy`, a `dynamic-update-slice` of an output).

    Args:
      hlo: `jax.jit(f).lower(*args).compile().as_text()`.

    Examples:
      >>> import jax, jax.numpy as jnp
      >>> from ojax.app.timing import loop_ops
      >>> f = jax.jit(lambda x: jax.lax.fori_loop(0, 9, lambda i, c: jnp.sin(c) * 2.0, x))
      >>> ops = loop_ops(f.lower(jnp.ones(3)).compile().as_text())
      >>> print(ops["sine"] >= 1, ops["while"])
      True 0
    """
    computations = _computations(hlo)
    roots: list[str] = []
    for instructions in computations.values():
        for opcode, _, line in instructions:
            if opcode == "while":
                roots += _CALLED.findall(line)
    counts: collections.Counter[str] = collections.Counter()
    seen: set[str] = set()
    while roots:
        name = roots.pop()
        if name in seen or name not in computations:
            continue
        seen.add(name)
        for opcode, _, line in computations[name]:
            if opcode not in FREE_OPS:
                counts[opcode] += 1
            roots += _CALLED.findall(line)
            for group in _BRANCHES.findall(line):
                roots += [b.strip().lstrip("%") for b in group.split(",")]
    return counts


__all__ = ["FREE_OPS", "compile_and_run", "loop_ops"]
