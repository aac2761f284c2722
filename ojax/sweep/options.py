"""The sweep engine's options: the one dataclass that `ojax run`, `ojax sweep` and every
experiment's configuration share (an experiment's config class inherits it, see
:class:`ojax.experiments.ExperimentConfig`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable


@dataclasses.dataclass(frozen=True, kw_only=True)
class EngineOptions:
    """How a run computes (no option here changes a number: float64 aside, which is the run's
    dtype and enters every configuration hash).

    `x64`: float64; `devices`: shard over the first N local devices (`None`: all);
    `memory_budget`: bytes a device may use for a chunk (`None`: the engine's default);
    `resume`: reuse finished chunks of an interrupted run; `quiet`: no progress bars;
    `compile_cache`: JAX's persistent compilation cache folder (`None`: off).
    """

    x64: bool = False
    devices: int | None = None
    memory_budget: float | None = None
    resume: bool = True
    quiet: bool = False
    compile_cache: str | None = None

    def progress(self, iterable: Iterable, desc: str, total: int | None = None) -> Iterable:
        """`iterable` wrapped in a progress bar on stderr (none when `quiet`; plain lines
        when stderr is not a terminal, see :func:`ojax.progress.progress_bar`)."""
        if self.quiet:
            return iterable
        from ojax.progress import progress_bar

        return progress_bar(iterable, desc=desc, total=total)

    def engine_options(self) -> EngineOptions:
        """These options alone (an experiment's config holds them and its own)."""
        names = [f.name for f in dataclasses.fields(EngineOptions)]
        return EngineOptions(**{name: getattr(self, name) for name in names})
