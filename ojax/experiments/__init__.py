"""The experiments of `ojax run`: one module per paper, each `config -> result -> figures`.

:data:`EXPERIMENTS` is the one registry: name -> :class:`ExperimentSpec` (its summary, run
function, plot function, config class whose :func:`option` fields are its flags, seeds, data
files, figures, theory checks and reproduction page). An experiment module defines its specs;
this module lists them (:data:`SPECS`, in the order of `ojax list`). See
`docs/guides/add-an-experiment.md`.
"""

from __future__ import annotations

from ojax.experiments import (
    basics,
    contextual_bake_off,
    denevi2020,
    denevi2020_variance,
    neu_rosasco2018,
    nonstationary,
    parameter_free_benchmark,
    theory,
    zhao_hoi2010,
)
from ojax.results import ExperimentResult, Row
from ojax.sweep.experiment import ExperimentConfig, ExperimentSpec, option, own_options

SPECS: tuple[ExperimentSpec, ...] = (
    basics.SPEC,
    theory.SPEC,
    denevi2020.SYNTHETIC,
    denevi2020.WEALTH,
    denevi2020_variance.SPEC,
    denevi2020.SCHOOLS,
    denevi2020.LENK,
    neu_rosasco2018.SPEC,
    parameter_free_benchmark.SPEC,
    zhao_hoi2010.HOMOGENEOUS,
    zhao_hoi2010.HETEROGENEOUS,
    nonstationary.SPEC,
    contextual_bake_off.SPEC,
)
"""Every experiment shipped with ojax, in the order ``ojax list`` prints them."""

EXPERIMENTS: dict[str, ExperimentSpec] = {spec.name: spec for spec in SPECS}


def register_experiment(spec: ExperimentSpec) -> None:
    """Adds an experiment (e.g. one's own, outside ojax) to :data:`EXPERIMENTS`: `ojax run`
    then runs it, with the flags of its config class, and `ojax plot` redraws its figures with
    its `plot` function."""
    EXPERIMENTS[spec.name] = spec


__all__ = [
    "EXPERIMENTS",
    "SPECS",
    "ExperimentConfig",
    "ExperimentResult",
    "ExperimentSpec",
    "Row",
    "option",
    "own_options",
    "register_experiment",
]
