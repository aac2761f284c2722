"""Timing a jitted function with its compilation apart from its run (benchmarks, experiments)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import jax
import numpy as np


def compile_and_run(
    jitted_fn: jax.stages.Wrapped,
    *args: Any,
    compiler_options: Mapping[str, Any] | None = None,
    repeats: int = 1,
) -> tuple[Any, float, float]:
    """Compiles ``jitted_fn`` for ``args`` ahead of time, then runs the compiled program.

    Args:
      jitted_fn: a ``jax.jit`` function (it needs ``.lower``).
      *args: its arguments (arrays or pytrees; static arguments by closure).
      compiler_options: XLA options for the compilation (e.g.
        ``{"xla_backend_optimization_level": 1}``).
      repeats: runs of the compiled program; ``run_seconds`` is their median (the first run is
        not discarded: with ``repeats > 1`` it is one sample among several).

    Returns:
      ``(out, compile_seconds, run_seconds)``: the output (ready), the seconds spent lowering and
      compiling, and the seconds of a run itself (until the output is ready).

    Examples:
      >>> import jax, jax.numpy as jnp
      >>> from ojax.experiments.timing import compile_and_run
      >>> out, compile_s, run_s = compile_and_run(jax.jit(jnp.cumsum), jnp.arange(4.0))
      >>> print(out, compile_s > 0.0, run_s > 0.0)
      [0. 1. 3. 6.] True True
    """
    start = time.perf_counter()
    compiled = jitted_fn.lower(*args).compile(compiler_options=dict(compiler_options or {}) or None)
    compile_seconds = time.perf_counter() - start
    times = []
    for _ in range(max(1, int(repeats))):
        start = time.perf_counter()
        out = jax.block_until_ready(compiled(*args))
        times.append(time.perf_counter() - start)
    return out, compile_seconds, float(np.median(times))
