"""What an experiment of `ojax run` is: a typed :class:`ExperimentSpec` and its own frozen
config class (a subclass of :class:`ExperimentConfig`), whose :func:`option` fields are the
experiment's command-line flags (`field_name` -> `--field-name`).

An experiment module defines its config class (if it has options of its own), its run function
`(config) -> ExperimentResult` and a tuple `SPECS` of :class:`ExperimentSpec`; the registry
(:data:`ojax.experiments.EXPERIMENTS`) collects them. See `docs/guides/add-an-experiment.md`.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, Generic, TypeVar

from ojax.fileio import open_regular
from ojax.sweep.options import EngineOptions


@dataclasses.dataclass(frozen=True)
class ExperimentConfig(EngineOptions):
    """The options of every `ojax run` (see docs/cli.md, the command line page) and the engine's
    (:class:`~ojax.sweep.options.EngineOptions`); an experiment with options of its own
    subclasses it with :func:`option` fields.

    `name`: the experiment; `seeds`: the number of seeds (runs); `out`: the output folder;
    `data_dir`: the folder of the real datasets (`None`: the shipped ones); `quick`: the
    small configuration of `--quick`; `figure_formats`: the files of each figure
    (`--figure-format`: png, pdf, svg).
    """

    name: str
    seeds: int
    out: Path
    data_dir: Path | None = None
    quick: bool = False
    figure_formats: tuple[str, ...] = ("png",)

    def check(self, seeds_given: bool = True) -> tuple[ExperimentConfig, dict[str, Any]]:
        """Checks the experiment's own options before anything runs (raises
        :class:`~ojax.validation.InputError`); returns the config to run and the options' part
        of the run's identity (a file: its path and a digest of its bytes). `seeds_given`:
        whether `--seeds` was given (an option may fix the number of runs otherwise)."""
        identity = {}
        for field in own_options(type(self)):
            value = getattr(self, field.name)
            if value is not None:
                identity[field.name] = file_identity(value) if field.metadata["file"] else value
        return self, identity

    def reads_data_files(self) -> bool:
        """Whether the run reads the spec's dataset files (not when one's own data replace
        them)."""
        return True

    def header(self) -> str:
        """What the header line `ojax: running NAME: ...` says of the runs: `N seeds`."""
        return f"{self.seeds} seed{'' if self.seeds == 1 else 's'}"


def option(
    default: Any = None,
    *,
    help: str,
    metavar: str | None = None,
    choices: tuple[str, ...] | None = None,
    file: bool = False,
    type: Callable[[str], Any] | None = None,
) -> Any:
    """A field of an experiment's config that is also its flag `--field-name`: `None`
    (its `default`) unless given. `help` says what it does for this experiment; `type`
    parses the flag's text (default `str`; `Path` for a `file`, whose bytes enter the
    run's identity; a `choices` value is kept as text); raise `argparse.ArgumentTypeError`
    (or `ValueError`) there for a bad value."""
    metadata = {"help": help, "metavar": metavar, "choices": choices, "file": file, "type": type}
    return dataclasses.field(default=default, metadata=metadata)


def own_options(config: type[ExperimentConfig]) -> list[dataclasses.Field]:
    """The :func:`option` fields of a config class: its flags beyond the common ones."""
    return [f for f in dataclasses.fields(config) if "help" in f.metadata]


def file_identity(path: Any) -> str:
    """`"/abs/path (sha256 0123456789abcdef)"`: a file in a run's identity."""
    h = hashlib.sha256()
    with open_regular(path, what="file") as f:  # a pipe or a device is refused, never read
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    digest = h.hexdigest()[:16]
    return f"{Path(path).resolve()} (sha256 {digest})"


C = TypeVar("C", bound=ExperimentConfig)


@dataclasses.dataclass(frozen=True, kw_only=True)
class ExperimentSpec(Generic[C]):
    """An experiment of `ojax run`.

    `name` / `summary`: as `ojax list` prints them; `run`: `config -> ExperimentResult`;
    `plot`: its figures from a finished run's files, `(ojax.results.Results) -> {file stem:
    Figure}` (what `ojax run` draws after writing the data files and `ojax plot` redraws;
    `None`: no figures);
    `config`: its config class (its :func:`option` fields are its flags);
    `default_seeds` / `quick_seeds`: the seeds without `--seeds` (`quick_seeds`: with
    `--quick`; `None`: `default_seeds`); `data_files` / `quick_data_files`: the dataset
    files it reads (checked before anything runs or is written; `None`: `data_files`);
    `figures`: the figure files it writes (`{dataset}` stands for each dataset);
    `checks`: the modules of :mod:`ojax.theory` that check the results of its paper
    (what `ojax run theory` runs, see :func:`ojax.experiments.theory.checks`);
    `page`: its reproduction page under `docs/`.
    """

    name: str
    summary: str
    run: Callable[[C], Any]
    plot: Callable[[Any], dict[str, Any]] | None = None
    config: type[C] = ExperimentConfig  # type: ignore[assignment]
    default_seeds: int
    quick_seeds: int | None = None
    data_files: tuple[str, ...] = ()
    quick_data_files: tuple[str, ...] | None = None
    figures: tuple[str, ...] = ()
    checks: tuple[str, ...] = ()
    page: str | None = None

    @property
    def description(self) -> str:
        return self.summary

    def load(self) -> Callable[[C], Any]:
        """The run function."""
        return self.run

    def seeds(self, quick: bool) -> int:
        """The number of seeds when `--seeds` is not given."""
        return (self.quick_seeds or self.default_seeds) if quick else self.default_seeds

    def files(self, quick: bool) -> tuple[str, ...]:
        """The dataset files a run reads."""
        if quick and self.quick_data_files is not None:
            return self.quick_data_files
        return self.data_files


__all__ = ["ExperimentConfig", "ExperimentSpec", "file_identity", "option", "own_options"]
