"""The `ojax` command: `ojax list`, `run NAME`, `sweep LEARNER`, `plot OUT`.

Bad input (an unknown experiment, a bad option value, a missing or malformed data file, an
`--out` that is a file, cannot be written or holds another run) exits with status 2 and a
one-line message, before anything is written. An output folder holds one run only
(:class:`ojax.experiments.run_folder.RunFolder`; `--overwrite` replaces another run).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import textwrap
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ojax import compile_log, interrupt
from ojax.cache import compilation_cache_dir, enable_compilation_cache
from ojax.experiments import figures
from ojax.experiments.output import results_table
from ojax.experiments.run_folder import CHUNK_STORE, RunFolder
from ojax.experiments.spec import ExperimentConfig
from ojax.validation import InputError


class _Parser(argparse.ArgumentParser):
    """Argument errors as one line on stderr and exit status 2."""

    lazy_epilog: Callable[[], str] | None = None  # built when the help is shown (imports JAX)

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"ojax: error: {message}\n")

    def format_help(self) -> str:
        if self.lazy_epilog is not None:
            self.epilog = self.lazy_epilog()
        return super().format_help()


_MAX_COUNT = 2**31 - 1  # seeds, steps, combinations are counted in int32


def _positive_int(text: str) -> int:
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


def _process_id(text: str) -> int:
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


def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer, got {text!r}") from None
    if not _SEEDS[0] <= value <= _SEEDS[1]:
        raise argparse.ArgumentTypeError(
            f"must be a 64-bit integer, in [-2**63, 2**63 - 1], got {text!r}"
        )
    return value


def _add_engine_options(parser: argparse.ArgumentParser) -> None:
    """The options shared by `run` and `sweep`: precision and the sweep engine's."""
    parser.add_argument("--x64", action="store_true", help="compute in float64")
    parser.add_argument("--devices", type=_positive_int, help="shard over the first N devices")
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
        "--num-processes", type=_positive_int, metavar="N", help="multi-process run: N processes"
    )
    parser.add_argument(
        "--process-id", type=_process_id, metavar="I", help="multi-process run: this one, 0..N-1"
    )
    parser.add_argument(
        "--compile-cache",
        metavar="DIR|off",
        help="JAX's persistent compilation cache (default: $OJAX_COMPILATION_CACHE, else "
        "~/.cache/ojax/jax); 'off' disables it",
    )
    figures.add_figure_format(parser)


_OUT_RULE = (
    "The output folder holds one run: re-running the same command resumes it (finished work is "
    "kept); a different run (another experiment, learner or configuration) is refused unless "
    "--overwrite, which first removes the files the old run wrote (results.csv, curves.npz, "
    "config.json, its figures, .sweep/ and .ojax-run.json, the identity file every run keeps "
    "there). A folder that also holds files ojax did not write is never overwritten. While a run "
    "writes the folder it holds .ojax-lock: another process writing there is refused."
)


def _add_overwrite(parser: argparse.ArgumentParser) -> None:
    text = "replace a different run in --out (its files are removed first)"
    parser.add_argument("--overwrite", action="store_true", help=text)


def _experiment_flags() -> dict[str, list]:
    """`--flag` -> `[(spec, field), ...]`: the options of every registered experiment
    (the :func:`~ojax.experiments.option` fields of its config class)."""
    from ojax.experiments import EXPERIMENTS, own_options

    flags: dict[str, list] = {}
    for spec in EXPERIMENTS.values():
        for field in own_options(spec.config):
            flags.setdefault("--" + field.name.replace("_", "-"), []).append((spec, field))
    return flags


def _takers(names: list[str]) -> str:
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


def _add_experiment_options(parser: argparse.ArgumentParser) -> None:
    """The flags of the experiments' own options, each once (the help says who takes it)."""
    for flag, owners in _experiment_flags().items():
        field = owners[0][1]
        by_help: dict[str, list[str]] = {}
        for spec, f in owners:
            by_help.setdefault(f.metadata["help"], []).append(spec.name)
        text = "; ".join(f"{_takers(names)}: {text}" for text, names in by_help.items())
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


def build_parser() -> argparse.ArgumentParser:
    """The parser of the `ojax` command: `list`, `run`, `sweep` and `plot` with their options
    (the command line page, docs/cli.md)."""
    parser = _Parser(prog="ojax", description="ojax: online learning in JAX.")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    listing = commands.add_parser("list", help="list the experiments (or the learners)")
    text = "list the registered learners (what `ojax sweep` runs) and their fields"
    listing.add_argument("--learners", action="store_true", help=text)
    run = commands.add_parser("run", help="run an experiment, write its results", epilog=_OUT_RULE)
    run.add_argument("name", help="experiment name (see `ojax list`)")
    run.add_argument("--seeds", type=_positive_int, help="number of seeds (default: the paper's)")
    run.add_argument("--out", type=Path, help="output folder (default: results/NAME)")
    run.add_argument("--data-dir", type=Path, help="folder of the real datasets")
    _add_experiment_options(run)
    run.add_argument(
        "--quick",
        action="store_true",
        help="a small configuration (seconds); honours --seeds, else the experiment's quick seeds",
    )
    _add_overwrite(run)
    _add_engine_options(run)
    sweep = commands.add_parser(
        "sweep",
        help="sweep a registered learner over seeds and a hyperparameter grid",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sweep.lazy_epilog = _sweep_epilog
    sweep.add_argument("learner", help="registered learner name (see the list below)")
    sweep.add_argument(
        "--grid",
        type=_grid_axis,
        action="append",
        default=[],
        metavar="FIELD=V1,V2,...",
        help="a hyperparameter axis (repeat for a Cartesian product)",
    )
    sweep.add_argument("--seeds", type=_positive_int, default=10, help="number of seeds")
    sweep.add_argument("--steps", type=_positive_int, default=1000, help="steps per stream")
    sweep.add_argument("--dim", type=_positive_int, default=10, help="dimension of the stream")
    sweep.add_argument("--key", type=_seed, default=0, help="PRNG seed of the sweep")
    sweep.add_argument("--out", type=Path, help="output folder (default: results/sweep-NAME)")
    _add_overwrite(sweep)
    sweep.add_argument("--chunk-size", type=_positive_int, help="combinations per chunk")
    _add_engine_options(sweep)
    figures.add_plot_command(commands)
    return parser


def _grid_axis(text: str) -> tuple[str, list[str]]:
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


def learner_lines() -> list[str]:
    """One line per registered learner: name, kind, its stream and loss, and its scalar
    hyperparameter fields with their defaults (what `--grid FIELD=...` can sweep)."""
    import numpy as np

    from ojax.core import LEARNERS

    rows = []
    for name in sorted(LEARNERS):
        entry = LEARNERS[name]
        params = entry.default_params()
        items = params._asdict() if hasattr(params, "_asdict") else dict(params)
        fields = [
            f"{field}={np.asarray(value).item():g}"
            for field, value in items.items()
            if np.ndim(value) == 0 and np.asarray(value).dtype.kind in "fiub"
        ]
        stream = getattr(entry.make_stream, "__name__", "stream").removesuffix("_stream")
        where = f"{entry.objective} on {stream}" if stream.strip("_") not in ("", "make") else ""
        where = where or f"{entry.objective} on its {entry.kind} data"
        rows.append((name, entry.kind, where, ", ".join(fields) or "(no scalar fields)"))
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    return ["  ".join(c.ljust(w) for c, w in zip(row, widths)) + "  " + row[3] for row in rows]


SWEEP_EXAMPLE = (
    "ojax sweep ogd_square --grid learning_rate=0.01,0.03,0.1,0.3,0.6,1 --seeds 8 --steps 1000"
)


def _sweep_epilog() -> str:
    rule = textwrap.fill(_OUT_RULE, 88)
    lines = "\n".join(f"  {line}" for line in learner_lines())
    return (
        "learners (name, kind, loss on its stream, the fields --grid sweeps = their defaults):\n"
        f"{lines}\n\nexample: {SWEEP_EXAMPLE}\n\n{rule}"
    )


def _list(learners: bool = False) -> int:
    from ojax.experiments import EXPERIMENTS

    if learners:
        print("\n".join(learner_lines()))
        return 0
    width = max(len(name) for name in EXPERIMENTS)
    for spec in EXPERIMENTS.values():
        print(f"{spec.name:<{width}}  {spec.description}")
    return 0


def _engine_options(args: argparse.Namespace) -> dict[str, Any]:
    """Checks the options `run` and `sweep` share and returns the fields of
    :class:`~ojax.sweep.options.EngineOptions` (:func:`_start` switches float64 on)."""
    import jax

    from ojax.sweep.options import EngineOptions

    if args.devices is not None and args.devices > jax.local_device_count():
        raise InputError(
            f"--devices must be at most the {jax.local_device_count()} available device(s), "
            f"got {args.devices}"
        )
    cache = compilation_cache_dir(args.compile_cache)
    names = [f.name for f in dataclasses.fields(EngineOptions) if f.name != "compile_cache"]
    return {**{n: getattr(args, n) for n in names}, "compile_cache": cache and str(cache)}


def _device_label(count: int | None) -> str:
    """`"cpu"`, `"gpu (NVIDIA H200)"`, `"4 x gpu (...)"`: what the run computes on."""
    import jax

    device = jax.local_devices()[0]
    kind = str(getattr(device, "device_kind", "") or device.platform)
    label = device.platform if kind.lower() == device.platform else f"{device.platform} ({kind})"
    n = count or jax.local_device_count()
    return label if n == 1 else f"{n} x {label}"


def _join(args: argparse.Namespace) -> None:
    """A multi-process run (the three flags, or a job JAX detects): checks the flags, then
    `jax.distributed.initialize` (before anything else uses JAX)."""
    from ojax import distributed

    given = (args.coordinator, args.num_processes, args.process_id)
    distributed.check_arguments(*given)
    if any(v is not None for v in given) or distributed.detected():
        distributed.initialize(*given)


class _Finished(Exception):
    """A process other than 0 of a multi-process run has done its share (process 0 writes)."""


def _write(folder, config: ExperimentConfig, result, wall: float) -> list[Path]:
    if not getattr(folder, "writes", True):
        raise _Finished(f"{config.out}/")
    from ojax.experiments import write_result

    return write_result(config, result, wall, before_move=folder.record)


def _start(folder: RunFolder, label: str, runs: str, args: argparse.Namespace):
    """The last check (the output folder), then float64 if asked and the header line on stderr:
    `ojax: running NAME: RUNS[, quick][, float64] on DEVICE` (`RUNS`: what the config's
    :meth:`~ojax.experiments.ExperimentConfig.header` says, `N seeds` or e.g. `N orders of
    FILE` for a split file). Returns the folder (in a multi-process run, wrapped: the
    processes agree, process 0 writes)."""
    from ojax import distributed

    if distributed.active():
        flags = ("out", "overwrite", "resume", "memory_budget", "chunk_size", "key")
        options = {f"--{k.replace('_', '-')}": v for k, v in folder.identity.items()}
        options.update({f"--{k.replace('_', '-')}": str(getattr(args, k, None)) for k in flags})
        folder = distributed.SharedFolder(folder, options)  # type: ignore[assignment]
    folder.check()
    enable_compilation_cache(args.compile_cache)
    if args.x64:
        import jax

        jax.config.update("jax_enable_x64", True)
    what = runs
    what += ", quick" if getattr(args, "quick", False) else ""
    what += ", float64" if args.x64 else ""
    where = _device_label(args.devices)
    if distributed.active():
        where += f" ({distributed.label()}; process 0 writes the outputs)"
    print(f"ojax: running {label}: {what} on {where}", file=sys.stderr)
    return folder


def _experiment_config(spec, args: argparse.Namespace) -> tuple[ExperimentConfig, dict]:
    """The experiment's config from the command line: the common options, the engine's and its
    own (a flag of another experiment is refused, naming who takes it), checked by the config
    (:meth:`~ojax.experiments.ExperimentConfig.check`); returns it and its options' part of
    the run's identity."""
    from ojax.experiments import own_options

    mine = {f.name for f in own_options(spec.config)}
    given = {}
    for flag, owners in _experiment_flags().items():
        name = owners[0][1].name
        if getattr(args, name, None) is None:
            continue
        if name not in mine:
            takers = _takers([owner.name for owner, _ in owners])
            raise InputError(f"{flag} is for {takers}, not {spec.name}")
        given[name] = getattr(args, name)
    config = spec.config(
        name=spec.name,
        seeds=args.seeds or spec.seeds(args.quick),
        out=args.out or Path("results") / spec.name,
        data_dir=args.data_dir,
        quick=args.quick,
        figure_formats=figures.formats(args.figure_format),
        **_engine_options(args),
        **given,
    )
    return config.check(seeds_given=args.seeds is not None)


def _run_identity(
    spec, seeds: int | None, quick: bool, x64: bool, data_dir, own=None, reads_files=True
) -> dict:
    """What makes two `ojax run` runs the same; checks the data files it reads first."""
    folder = None
    files = spec.files(quick) if reads_files else ()
    if files:
        from ojax.datasets import data_file

        folder = str(data_file(files[0], data_dir).parent.resolve())
        for name in files[1:]:
            data_file(name, data_dir)
    identity = {"experiment": spec.name, "seeds": seeds, "quick": quick, "x64": x64}
    return {**identity, "data_dir": folder, **(own or {})}


def _legacy_run_identity(spec, config: dict) -> dict | None:
    """The identity of a run written before `.ojax-run.json` existed, from its config.json."""
    old = {k: config.get(k) for k in ("seeds", "quick", "x64", "data_dir")}
    if config.get("name") != spec.name:
        return {"experiment": config.get("name"), **old}
    try:
        return _run_identity(
            spec, old["seeds"], bool(old["quick"]), bool(old["x64"]), old["data_dir"]
        )
    except InputError:
        return None


def _run(args: argparse.Namespace) -> int:
    from ojax.experiments import EXPERIMENTS

    if args.name not in EXPERIMENTS:
        raise InputError(
            f"unknown experiment {args.name!r}; choose one of: {', '.join(EXPERIMENTS)}"
        )
    spec = EXPERIMENTS[args.name]
    if args.data_dir is not None and not args.data_dir.is_dir():
        raise InputError(f"--data-dir: {str(args.data_dir)!r} is not a folder")
    config, own = _experiment_config(spec, args)
    identity = _run_identity(
        spec, config.seeds, args.quick, args.x64, args.data_dir, own, config.reads_data_files()
    )
    folder = RunFolder(
        config.out, identity, args.overwrite, lambda old: _legacy_run_identity(spec, old)
    )
    folder = _start(folder, spec.name, config.header(), args)
    with folder:
        start = time.perf_counter()
        compile_log.reset()  # config.json records this run's programs
        result = spec.run(config)
        wall = time.perf_counter() - start
        written = _write(folder, config, result, wall)
        folder.finish(written)
    print("\n".join(results_table(result.rows)))  # --quiet hides progress only (docs/cli.md)
    names = ", ".join(p.name for p in written)
    print(f"ojax: {spec.name} finished in {wall:.1f} s; wrote {config.out}/ ({names})")
    return 0


def _sweep(args: argparse.Namespace) -> int:
    grid: dict[str, list[str]] = {}
    for field, values in args.grid:
        if field in grid:
            raise InputError(f"--grid: {field!r} is given twice")
        grid[field] = values
    from ojax.core import LEARNERS

    if args.learner not in LEARNERS:
        raise InputError(
            f"unknown learner {args.learner!r}; choose one of: {', '.join(sorted(LEARNERS))}"
        )
    out = args.out or Path("results") / f"sweep-{args.learner}"
    formats = figures.formats(args.figure_format)
    config = ExperimentConfig(
        name="sweep", seeds=args.seeds, out=out, figure_formats=formats, **_engine_options(args)
    )
    identity = {
        "experiment": "sweep",
        "learner": args.learner,
        "grid": list(grid.items()),
        "seeds": args.seeds,
        "steps": args.steps,
        "dim": args.dim,
        "key": args.key,
        "x64": args.x64,
    }
    from ojax.experiments.learner_sweep import best_line, check_sweep, sweep_learner

    enable_compilation_cache(args.compile_cache)  # before the checks compile anything
    if args.x64:  # the grid's values are checked in the dtype they run in
        import jax

        jax.config.update("jax_enable_x64", True)
    check_sweep(args.learner, grid or None, num_steps=args.steps, dim=args.dim)
    folder = RunFolder(out, identity, args.overwrite)
    runs = f"{args.seeds} seed{'' if args.seeds == 1 else 's'}"
    folder = _start(folder, f"sweep {args.learner}", runs, args)

    with folder:
        start = time.perf_counter()
        result, _ = sweep_learner(
            args.learner,
            grid or None,
            num_seeds=args.seeds,
            num_steps=args.steps,
            dim=args.dim,
            key=args.key,
            options=config.engine_options(),
            chunk_size=args.chunk_size,
            out_dir=out / CHUNK_STORE,
        )
        wall = time.perf_counter() - start
        written = _write(folder, config, result, wall)
        folder.finish(written)
    metric = result.extra_config["metric"]  # average_loss, or cumulative_error for task blocks
    rows = [r for r in result.rows if r.metric == metric]
    print("\n".join(results_table(rows)))  # the other metrics (regret, ...) are in results.csv
    if result.extra_config.get("grid"):
        print(best_line(result, rows))
    print(f"ojax: wrote {out}/ ({', '.join(p.name for p in written)})")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `ojax` console script; returns the exit status (the command
    itself ends there, at once: :func:`ojax.interrupt.end`)."""
    try:
        code = _main(argv)
    except BrokenPipeError:  # the reader of stdout went away (`ojax list | head -1`)
        code = interrupt.closed_pipe()
    except KeyboardInterrupt:
        print(interrupt.INTERRUPTED, file=sys.stderr)
        code = 130
    from ojax import distributed

    return interrupt.end(code, at_once=not distributed.active())


def _main(argv: Sequence[str] | None) -> int:
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # argparse: --help (0) or a bad option (2)
        return int(exc.code or 0)
    try:
        if args.command == "list":
            return _list(args.learners)
        if args.command == "plot":
            return figures.plot_command(args.out, args.figure_format)
        _join(args)
        if args.command == "sweep":
            return _sweep(args)
        return _run(args)
    except InputError as exc:
        print(f"ojax: error: {exc}", file=sys.stderr)
        return 2
    except _Finished as done:
        from ojax import distributed

        print(f"ojax: {distributed.label()} finished; process 0 writes {done}", file=sys.stderr)
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
