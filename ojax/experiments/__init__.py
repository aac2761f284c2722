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

for _name, _description, _target, _seeds in [
    (
        "denevi2020-synthetic",
        "Denevi et al. 2020, main figure: parameter-free multi-task learning of low-variance tasks "
        "on the synthetic environment",
        "ojax.experiments.denevi2020:run_synthetic",
        30,
    ),
    (
        "denevi2020-wealth",
        "Denevi et al. 2020, appendix E: sensitivity to the initial wealth "
        "(one vmap over a log grid)",
        "ojax.experiments.denevi2020:run_wealth",
        30,
    ),
    (
        "denevi2020-schools",
        "Denevi et al. 2020, appendix E: the Schools dataset (139 tasks)",
        "ojax.experiments.denevi2020:run_schools",
        30,
    ),
    (
        "denevi2020-lenk",
        "Denevi et al. 2020, appendix E: the Lenk computer-survey dataset (180 tasks)",
        "ojax.experiments.denevi2020:run_lenk",
        30,
    ),
    (
        "neu-rosasco2018",
        "Neu & Rosasco 2018: geometric / tail / Polyak-Ruppert averaging as regularization, the "
        "regularization path from one SGD pass",
        "ojax.experiments.neu_rosasco2018:run_experiment",
        50,
    ),
    (
        "zhao-hoi2010-homogeneous",
        "Zhao & Hoi 2010: online transfer learning, homogeneous domains (usenet2, newsgroup4, "
        "spambase)",
        "ojax.experiments.zhao_hoi2010:run_homogeneous",
        20,
    ),
    (
        "zhao-hoi2010-heterogeneous",
        "Zhao & Hoi 2010: co-regularized online transfer learning, heterogeneous domains (a7a, "
        "mushrooms, spambase)",
        "ojax.experiments.zhao_hoi2010:run_heterogeneous",
        20,
    ),
]:
    register_experiment(ExperimentSpec(_name, _description, _target, _seeds))

__all__ = [
    "EXPERIMENTS",
    "ExperimentConfig",
    "ExperimentResult",
    "ExperimentSpec",
    "Row",
    "register_experiment",
    "write_result",
]
