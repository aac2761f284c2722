"""The experiments of ``ojax run``: one module per paper, each ``config -> result``.

:data:`EXPERIMENTS` maps a name to its description, the function that runs it
(``"module:function"``, imported only when run), the paper's number of seeds, the seeds of
``--quick`` and the dataset files it reads.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import NamedTuple

from ojax.experiments.learner_sweep import sweep_learner
from ojax.experiments.output import ExperimentConfig, ExperimentResult, Row, write_result


class ExperimentSpec(NamedTuple):
    """An experiment of ``ojax run``.

    ``quick_seeds``: the seeds of ``--quick`` without ``--seeds`` (``None``: ``default_seeds``).
    ``data_files``: the dataset files it reads (checked before anything runs or is written);
    ``quick_data_files``: those of ``--quick`` (``None``: ``data_files``).
    ``own_data``: ``"tasks"`` or ``"split"`` when the experiment takes one's own tasks
    (``--tasks FILE``) or transfer split (``--split FILE``) instead of its dataset, else ``None``.
    """

    name: str
    description: str
    target: str  # "package.module:function"
    default_seeds: int
    quick_seeds: int | None = None
    data_files: tuple[str, ...] = ()
    quick_data_files: tuple[str, ...] | None = None
    own_data: str | None = None

    def load(self) -> Callable[[ExperimentConfig], ExperimentResult]:
        module, function = self.target.split(":")
        return getattr(importlib.import_module(module), function)

    def seeds(self, quick: bool) -> int:
        """The number of seeds when ``--seeds`` is not given."""
        return (self.quick_seeds or self.default_seeds) if quick else self.default_seeds

    def files(self, quick: bool) -> tuple[str, ...]:
        """The dataset files a run reads."""
        if quick and self.quick_data_files is not None:
            return self.quick_data_files
        return self.data_files


EXPERIMENTS: dict[str, ExperimentSpec] = {}


def register_experiment(spec: ExperimentSpec) -> None:
    """Adds `spec` to `EXPERIMENTS` under its name (what `ojax list` and `ojax run` see)."""
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

register_experiment(
    ExperimentSpec(
        "theory",
        "the documents' numbered results (lemmas, theorems, propositions) against their bounds "
        "over a range of horizons",
        "ojax.experiments.theory:run_theory",
        10,
        2,
    )
)

# name, description, target, seeds, quick seeds, data files, quick data files, own data
for _fields in [
    (
        "denevi2020-synthetic",
        "Denevi et al. 2020, main figure: parameter-free multi-task learning of low-variance tasks "
        "on the synthetic environment",
        "ojax.experiments.denevi2020:run_synthetic",
        30,
        4,
        (),
        None,
        None,
    ),
    (
        "denevi2020-wealth",
        "Denevi et al. 2020, appendix E: sensitivity to the initial wealth "
        "(one vmap over a log grid)",
        "ojax.experiments.denevi2020:run_wealth",
        30,
        3,
        (),
        None,
        None,
    ),
    (
        "denevi2020-variance",
        "Denevi et al. 2020, Section 5: the gain of a learned bias over independent learning "
        "against the tasks' variance (one sweep over a log grid)",
        "ojax.experiments.denevi2020_variance:run_variance",
        30,
        3,
        (),
        None,
        None,
    ),
    (
        "denevi2020-schools",
        "Denevi et al. 2020, appendix E: the Schools dataset (139 tasks)",
        "ojax.experiments.denevi2020:run_schools",
        30,
        3,
        ("schools.mat",),
        None,
        "tasks",
    ),
    (
        "denevi2020-lenk",
        "Denevi et al. 2020, appendix E: the Lenk computer-survey dataset (180 tasks)",
        "ojax.experiments.denevi2020:run_lenk",
        30,
        3,
        ("lenk.mat",),
        None,
        "tasks",
    ),
    (
        "neu-rosasco2018",
        "Neu & Rosasco 2018: geometric / tail / Polyak-Ruppert averaging as regularization, the "
        "regularization path from one SGD pass",
        "ojax.experiments.neu_rosasco2018:run_experiment",
        50,
        None,
        (),
        None,
        None,
    ),
    (
        "zhao-hoi2010-homogeneous",
        "Zhao & Hoi 2010: online transfer learning, homogeneous domains (usenet2, newsgroup4, "
        "spambase)",
        "ojax.experiments.zhao_hoi2010:run_homogeneous",
        20,
        None,
        ("usenet2.mat", "newsgroup4.mat", "spambase.csv.gz"),
        ("usenet2.mat",),
        "split",
    ),
    (
        "zhao-hoi2010-heterogeneous",
        "Zhao & Hoi 2010: co-regularized online transfer learning, heterogeneous domains (a7a, "
        "mushrooms, spambase)",
        "ojax.experiments.zhao_hoi2010:run_heterogeneous",
        20,
        None,
        ("a1a.libsvm.gz", "a1a_t.libsvm.gz", "mushrooms_keel.csv.gz", "spambase.csv.gz"),
        ("spambase.csv.gz", "mushrooms_keel.csv.gz"),
        "split",
    ),
]:
    register_experiment(ExperimentSpec(*_fields))

__all__ = [
    "EXPERIMENTS",
    "ExperimentConfig",
    "ExperimentResult",
    "ExperimentSpec",
    "Row",
    "register_experiment",
    "sweep_learner",
    "write_result",
]
