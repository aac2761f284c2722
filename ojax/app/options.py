"""The command line's option types and the options `ojax run` and `ojax sweep` share (the
engine's, the output folder's, the figures', every experiment's own flags): what
:mod:`ojax.app.cli` builds its parser from."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from ojax.validation import InputError

_MAX_COUNT = 2**31 - 1  # seeds, steps, combinations are counted in int32


def positive_int(text: str) -> int:
    """A count (`--seeds`, `--steps`, ...): an integer in `[1, 2**31 - 1]`."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}")
    if value > _MAX_COUNT:
        raise argparse.ArgumentTypeError(
            f"must be a positive integer up to 2**31 - 1 = {_MAX_COUNT}, got {text!r}"
        )
    return value


def process_id(text: str) -> int:
    """`--process-id`: an integer >= 0."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be an integer >= 0, got {text!r}")
    return value


_UNITS = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}
_MAX_BYTES = 2**50


def parse_bytes(text: str) -> int:
    """`"512M"`, `"2G"`, `"1.5g"`, `"1000000"` -> bytes."""
    raw = text.strip().lower().removesuffix("ib").removesuffix("b")
    unit = raw[-1] if raw and raw[-1] in _UNITS else ""
    try:
        value = float(raw[: len(raw) - len(unit)])
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be a size such as 512M or 4G, got {text!r}"
        ) from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be a positive size, got {text!r}")
    if not value * _UNITS[unit] <= _MAX_BYTES:  # inf, 1e400, a size no host has
        raise argparse.ArgumentTypeError(f"must be a finite size up to 1024T, got {text!r}")
    if value * _UNITS[unit] < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1 byte, got {text!r}")
    return int(value * _UNITS[unit])


_SEEDS = (-(2**63), 2**63 - 1)  # a PRNG seed is a 64-bit integer


def seed(text: str) -> int:
    """`--key`: a PRNG seed, a 64-bit integer."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer, got {text!r}") from None
    if not _SEEDS[0] <= value <= _SEEDS[1]:
        raise argparse.ArgumentTypeError(
            f"must be a 64-bit integer, in [-2**63, 2**63 - 1], got {text!r}"
        )
    return value


def add_engine_options(parser: argparse.ArgumentParser) -> None:
    """The options shared by `run` and `sweep`: precision and the sweep engine's."""
    parser.add_argument("--x64", action="store_true", help="compute in float64")
    parser.add_argument("--devices", type=positive_int, help="shard over the first N devices")
    parser.add_argument("--memory-budget", type=parse_bytes, help="memory budget, e.g. 4G")
    parser.add_argument(
        "--no-resume",
        dest="resume",
        action="store_false",
        help="recompute finished work instead of resuming",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bars (results print)")
    parser.add_argument(
        "--coordinator",
        metavar="HOST:PORT",
        help="multi-process run: process 0's address (see docs/distributed.md); without the "
        "three flags, a SLURM job of several tasks or $JAX_COORDINATOR_ADDRESS is detected",
    )
    parser.add_argument(
        "--num-processes", type=positive_int, metavar="N", help="multi-process run: N processes"
    )
    parser.add_argument(
        "--process-id", type=process_id, metavar="I", help="multi-process run: this one, 0..N-1"
    )
    parser.add_argument(
        "--compile-cache",
        metavar="DIR|off",
        help="JAX's persistent compilation cache (default: $OJAX_COMPILATION_CACHE, else "
        "~/.cache/ojax/jax); 'off' disables it",
    )
    add_figure_format(parser)


OUT_RULE = (
    "The output folder holds one run: re-running the same command resumes it (finished work is "
    "kept); a different run (another experiment, learner or configuration) is refused unless "
    "--overwrite, which first removes the files the old run wrote (results.csv, curves.npz, "
    "config.json, its figures, .sweep/ and .ojax-run.json, the identity file every run keeps "
    "there). A folder that also holds files ojax did not write is never overwritten. While a run "
    "writes the folder it holds .ojax-lock: another process writing there is refused."
)


def add_overwrite(parser: argparse.ArgumentParser) -> None:
    """`--overwrite` (of `ojax run` and `ojax sweep`)."""
    text = "replace a different run in --out (its files are removed first)"
    parser.add_argument("--overwrite", action="store_true", help=text)


def experiment_flags() -> dict[str, list]:
    """`--flag` -> `[(spec, field), ...]`: the options of every registered experiment
    (the :func:`~ojax.experiments.option` fields of its config class)."""
    from ojax.experiments import EXPERIMENTS, own_options

    flags: dict[str, list] = {}
    for spec in EXPERIMENTS.values():
        for field in own_options(spec.config):
            flags.setdefault("--" + field.name.replace("_", "-"), []).append((spec, field))
    return flags


def takers(names: list[str]) -> str:
    """`"denevi2020-*, theory"`: experiment names, a family written once with `*` when
    every experiment of that prefix is among them."""
    from ojax.experiments import EXPERIMENTS

    out: list[str] = []
    for name in names:
        family = name.rsplit("-", 1)[0] + "-*"
        members = [n for n in EXPERIMENTS if n.rsplit("-", 1)[0] + "-*" == family]
        if "-" in name and len(members) > 1 and set(members) <= set(names):
            name = family
        if name not in out:
            out.append(name)
    return ", ".join(out)


def add_experiment_options(parser: argparse.ArgumentParser) -> None:
    """The flags of the experiments' own options, each once (the help says who takes it)."""
    for flag, owners in experiment_flags().items():
        field = owners[0][1]
        by_help: dict[str, list[str]] = {}
        for spec, f in owners:
            by_help.setdefault(f.metadata["help"], []).append(spec.name)
        text = "; ".join(f"{takers(names)}: {text}" for text, names in by_help.items())
        kind: Callable[[str], Any] = field.metadata["type"] or (
            Path if field.metadata["file"] else str
        )
        parser.add_argument(
            flag,
            dest=field.name,
            type=str if field.metadata["choices"] else kind,
            choices=field.metadata["choices"],
            metavar=field.metadata["metavar"],
            help=text,
        )


def add_figure_format(parser: Any) -> None:
    """`--figure-format` (of `ojax run`, `ojax sweep` and `ojax plot`)."""
    parser.add_argument(
        "--figure-format",
        action="append",
        metavar="png,pdf,svg",
        help="the figures' formats, comma-separated or repeated (default: png, at 200 dpi)",
    )


def figure_formats(values: Sequence[str] | None) -> tuple[str, ...]:
    """The formats `--figure-format` gives (`png` when absent)."""
    from ojax.plotting import parse_figure_formats

    return parse_figure_formats(values or ["png"])


def grid_axis(text: str) -> tuple[str, list[str]]:
    """`"learning_rate=0.01,1e-3"` -> `("learning_rate", ["0.01", "1e-3"])`: the values as
    typed, each checked to be a finite number. The sweep parses them exactly in the dtype of
    the learner's params (refusing what does not fit it) and reports them as typed."""
    from ojax.sweep.grid import parse_number

    field, sep, values = text.partition("=")
    field, items = field.strip(), [v.strip() for v in values.split(",")]
    usage = f"must be FIELD=V1,V2,... with numbers, e.g. learning_rate=0.01,0.1, got {text!r}"
    if not sep or not field or not all(items):
        raise argparse.ArgumentTypeError(usage)
    for item in items:
        try:
            parse_number(item)
        except InputError as exc:
            raise argparse.ArgumentTypeError(f"{field}={item}: {exc}; {usage}") from None
    return field, items


def add_import(parser: argparse.ArgumentParser) -> None:
    """`--import MODULE` (of `ojax list`, `run` and `sweep`), repeatable."""
    parser.add_argument(
        "--import",
        dest="imports",
        action="append",
        default=[],
        metavar="MODULE",
        help="import a module first (a dotted name importable from the current folder, or a "
        ".py file): the learners (ojax.register_learner) and experiments it registers join "
        "the built-in ones; plugins of the entry-point group ojax.learners load by themselves",
    )


class Imported(NamedTuple):
    """What `--import` registered: new learner and experiment names."""

    learners: tuple[str, ...] = ()
    experiments: tuple[str, ...] = ()


NOTHING = Imported()


def methods_takers() -> list[Any]:
    """The experiments that take `--methods` (a list of methods, a user's learner included)."""
    from ojax.experiments import EXPERIMENTS, own_options

    return [s for s in EXPERIMENTS.values() if "methods" in {f.name for f in own_options(s.config)}]


def _import(name: str) -> None:
    """Imports the module `name` or the file `name` (`.py`)."""
    import importlib
    import importlib.util
    import sys

    path = Path(name)
    if not name.endswith(".py"):
        importlib.import_module(name)
        return
    if not path.is_file():
        raise InputError(f"--import: {name!r} is not a file")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[path.stem] = module  # a dataclass of the file needs its module
    spec.loader.exec_module(module)  # type: ignore[union-attr]


def import_modules(names: Sequence[str]) -> Imported:
    """Imports `names` (`--import`: a dotted module name, the current folder first on the path
    as `python -m` has it, or a `.py` file) and returns what they registered (new names of
    :data:`ojax.core.LEARNERS` and :data:`ojax.experiments.EXPERIMENTS`). Raises
    :class:`InputError` naming a module that cannot be found or fails on import."""
    import os
    import sys

    if not names:
        return NOTHING
    from ojax.core import LEARNERS
    from ojax.experiments import EXPERIMENTS

    learners, experiments = set(LEARNERS), set(EXPERIMENTS)
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    for name in names:
        try:
            _import(name)
        except InputError:
            raise
        except ModuleNotFoundError as exc:
            if exc.name is None or not name.startswith(exc.name):
                raise InputError(f"--import {name}: importing it failed: {exc}") from None
            raise InputError(
                f"--import: no module named {name!r} (give a module importable from the "
                "current folder or $PYTHONPATH, or a path ending in .py)"
            ) from None
        except Exception as exc:
            raise InputError(
                f"--import {name}: importing it failed: {type(exc).__name__}: {exc}"
            ) from None
    return Imported(
        tuple(sorted(set(LEARNERS) - learners)), tuple(sorted(set(EXPERIMENTS) - experiments))
    )


__all__ = [
    "Imported",
    "NOTHING",
    "OUT_RULE",
    "add_engine_options",
    "add_experiment_options",
    "add_figure_format",
    "add_import",
    "add_overwrite",
    "experiment_flags",
    "figure_formats",
    "grid_axis",
    "import_modules",
    "methods_takers",
    "parse_bytes",
    "positive_int",
    "process_id",
    "seed",
    "takers",
]
