"""The experiments of ``ojax run``: one module per paper, each ``config -> result``.

:data:`EXPERIMENTS` maps a name to its description, the function that runs it
(``"module:function"``, imported only when run) and the paper's number of seeds.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import NamedTuple

from ojax.experiments.output import ExperimentConfig, ExperimentResult, Row, write_result


class ExperimentSpec(NamedTuple):
    name: str
    description: str
    target: str  # "package.module:function"
    default_seeds: int

    def load(self) -> Callable[[ExperimentConfig], ExperimentResult]:
        module, function = self.target.split(":")
        return getattr(importlib.import_module(module), function)


EXPERIMENTS: dict[str, ExperimentSpec] = {}


def register_experiment(spec: ExperimentSpec) -> None:
    EXPERIMENTS[spec.name] = spec


register_experiment(
    ExperimentSpec(
        "basics",
        "online learning basics: examples 1-8 (experts, FTL, FTRL, OGD, Hedge) against their "
        "regret bounds",
        "ojax.experiments.basics:run_basics",
        10,
    )
)

__all__ = [
    "EXPERIMENTS",
    "ExperimentConfig",
    "ExperimentResult",
    "ExperimentSpec",
    "Row",
    "register_experiment",
    "write_result",
]
