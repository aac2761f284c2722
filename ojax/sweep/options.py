"""The sweep engine's options: the one dataclass that `ojax run`, `ojax sweep` and every
experiment's configuration share (an experiment's config class inherits it, see
:class:`ojax.experiments.ExperimentConfig`). The command line builds it once; it reaches the
engine whole: :func:`ojax.sweep.sweep` and
:func:`ojax.app.learner_sweep.sweep_learner` take `options=`, and
:func:`ojax.sweep.sweep_experiment` reads the config's own (:meth:`EngineOptions.engine_options`).
"""

from __future__ import annotations

import dataclasses
import numbers
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Protocol, TypeVar, runtime_checkable

from ojax.sweep.threads import in_threads

T = TypeVar("T")
R = TypeVar("R")


@dataclasses.dataclass(frozen=True, kw_only=True)
class EngineOptions:
    """How a run computes (no option here changes a number: float64 aside, which is the run's
    dtype and enters every configuration hash).

    `x64`: float64; `devices`: shard over the first N local devices (`None`: all);
    `memory_budget`: bytes a device may use for a chunk (`None`: the engine's default);
    `resume`: reuse finished chunks of an interrupted run; `quiet`: no progress bars;
    `compile_cache`: JAX's persistent compilation cache folder (`None`: off). The engine reads
    `devices`, `memory_budget`, `resume` and `quiet`; `x64` and `compile_cache` are the
    process's settings, switched on by the command line before anything runs.

    Examples:
      >>> from ojax.sweep import EngineOptions
      >>> EngineOptions(quiet=True, memory_budget=2**30).devices is None
      True
    """

    x64: bool = False
    devices: int | None = None
    memory_budget: float | None = None
    resume: bool = True
    quiet: bool = False
    compile_cache: str | None = None

    def progress(self, iterable: Iterable, desc: str, total: int | None = None) -> Iterable:
        """`iterable` wrapped in a progress bar on stderr (none when `quiet`; plain lines
        when stderr is not a terminal, see :func:`ojax.sweep.progress.progress_bar`)."""
        if self.quiet:
            return iterable
        from ojax.sweep.progress import progress_bar

        return progress_bar(iterable, desc=desc, total=total)

    def sweeps(self, fn: Callable[[T], R], items: Iterable[T]) -> Iterator[R]:
        """`fn(item)` for each of `items`, independent sweeps, several at once
        (:func:`ojax.sweep.in_threads`) unless a `memory_budget` is set: a budget holds for one
        sweep's chunk, so its sweeps run one after another."""
        return in_threads(fn, items, 1 if self.memory_budget is not None else None)

    def engine_options(self) -> EngineOptions:
        """These options alone (an experiment's config holds them and its own)."""
        names = [f.name for f in dataclasses.fields(EngineOptions)]
        return EngineOptions(**{name: getattr(self, name) for name in names})


def checked_options(options: Any) -> EngineOptions:
    """`options` (`None`: the defaults), checked: an :class:`EngineOptions` (an experiment's
    config is one) with `devices` an integer >= 1 or `None`, `memory_budget` a positive number
    or `None`, `resume` and `quiet` booleans.

    Raises:
      InputError: naming the argument or field, its value and what is allowed.
    """
    from ojax.validation import InputError, check_int

    if options is None:
        return EngineOptions()
    if not isinstance(options, EngineOptions):
        raise InputError(
            "options must be an ojax.sweep.EngineOptions (or an experiment's config), "
            f"got {type(options).__name__} {options!r}"
        )
    devices, budget = options.devices, options.memory_budget
    if devices is not None:
        check_int("options.devices", devices, 1)
    if budget is not None and (
        isinstance(budget, bool) or not isinstance(budget, numbers.Real) or not budget > 0
    ):
        raise InputError(
            f"options.memory_budget must be a positive number of bytes or None, got {budget!r}"
        )
    for name in ("resume", "quiet"):
        if not isinstance(getattr(options, name), bool):
            raise InputError(
                f"options.{name} must be True or False, got {getattr(options, name)!r}"
            )
    return options


@runtime_checkable
class ExperimentRun(Protocol):
    """What :func:`ojax.sweep.sweep_experiment` reads of an experiment's config
    (:class:`ojax.experiments.ExperimentConfig` is one): the run's name, number of seeds, output
    folder, `quick` and `x64` (they enter the configuration hash), and its engine options."""

    @property
    def name(self) -> str: ...
    @property
    def seeds(self) -> int: ...
    @property
    def out(self) -> Path: ...
    @property
    def quick(self) -> bool: ...
    @property
    def x64(self) -> bool: ...
    def engine_options(self) -> EngineOptions: ...


__all__ = ["EngineOptions", "ExperimentRun", "checked_options"]
