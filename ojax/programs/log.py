"""What a process spent compiling, program by program (from JAX's monitoring events).

JAX reports, for every program it builds, the seconds spent tracing it to a jaxpr, lowering it to
MLIR and compiling it with XLA (or loading it from the persistent compilation cache). This module
listens to those events and adds them up per program: the innermost :func:`program` label active
when the event fires (the sweep engine labels its chunk programs with the sweep's name), else the
jitted function's name. `ojax run` writes the log to `config.json` (`programs`).

Examples:
  >>> import jax, jax.numpy as jnp
  >>> from ojax.programs import log as compile_log
  >>> with compile_log.program("doc-cumsum"):  # a new function: traced and compiled here
  ...     _ = jax.jit(lambda v: jnp.cumsum(v))(jnp.arange(3.0))
  >>> entry = compile_log.programs()["doc-cumsum"]
  >>> entry["compilations"] >= 1 and entry["compile_seconds"] > 0.0
  True
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

import jax

_FIELDS = {
    "/jax/core/compile/jaxpr_trace_duration": "trace_seconds",
    "/jax/core/compile/jaxpr_to_mlir_module_duration": "lower_seconds",
    "/jax/core/compile/backend_compile_duration": "compile_seconds",
}
_LOG: dict[str, dict[str, float]] = {}
_LABELS = threading.local()
_LOCK = threading.Lock()


def _record(event: str, duration_secs: float, **kwargs: str | int) -> None:
    field = _FIELDS.get(event)
    if field is None:
        return
    stack = getattr(_LABELS, "stack", None)
    name = stack[-1] if stack else str(kwargs.get("fun_name", "?"))
    with _LOCK:
        entry = _LOG.setdefault(name, dict.fromkeys((*_FIELDS.values(), "compilations"), 0.0))
        entry[field] += float(duration_secs)
        if field == "compile_seconds":
            entry["compilations"] += 1


jax.monitoring.register_event_duration_secs_listener(_record)


@contextlib.contextmanager
def program(label: str) -> Iterator[None]:
    """Attributes the compilations inside the block to `label`."""
    stack = getattr(_LABELS, "stack", None)
    if stack is None:
        stack = _LABELS.stack = []
    stack.append(label)
    try:
        yield
    finally:
        stack.pop()


def programs() -> dict[str, dict[str, float]]:
    """`name -> {trace_seconds, lower_seconds, compile_seconds, compilations}` so far
    (`compile_seconds`: XLA, or the load from the persistent cache when it has the program)."""
    with _LOCK:
        return {name: dict(entry) for name, entry in _LOG.items()}


def summary(top: int = 25) -> dict[str, object]:
    """The log for `config.json`: totals and the `top` programs by total seconds (the rest
    summed under `"(others)"`), rounded to milliseconds."""
    log = programs()
    ranked = sorted(
        log.items(), key=lambda kv: -sum(v for k, v in kv[1].items() if k != "compilations")
    )
    shown = dict(ranked[:top])
    if len(ranked) > top:
        rest = dict.fromkeys((*_FIELDS.values(), "compilations"), 0.0)
        for _, entry in ranked[top:]:
            for k, v in entry.items():
                rest[k] += v
        shown[f"(others: {len(ranked) - top})"] = rest
    totals = {f: sum(e[f] for e in log.values()) for f in (*_FIELDS.values(), "compilations")}

    def rounded(entry: dict[str, float]) -> dict[str, float]:
        return {k: (int(v) if k == "compilations" else round(v, 3)) for k, v in entry.items()}

    return {"total": rounded(totals), "by_program": {k: rounded(v) for k, v in shown.items()}}


def reset() -> None:
    """Forgets everything recorded so far."""
    with _LOCK:
        _LOG.clear()


__all__ = ["program", "programs", "reset", "summary"]
