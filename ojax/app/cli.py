"""The `ojax` command: `ojax list`, `run NAME`, `sweep LEARNER`, `plot OUT`.

Bad input (an unknown experiment, a bad option value, a missing or malformed data file, an
`--out` that is a file, cannot be written or holds another run) exits with status 2 and a
one-line message, before anything is written. An output folder holds one run only
(:class:`ojax.app.run_folder.RunFolder`; `--overwrite` replaces another run).
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

from ojax.app import interrupt, options
from ojax.app.output import results_table
from ojax.app.run_folder import CHUNK_STORE, RunFolder
from ojax.programs import log as compile_log
from ojax.programs.cache import compilation_cache_dir, enable_compilation_cache
from ojax.sweep.experiment import ExperimentConfig
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


def _add_plot_command(commands: Any) -> None:
    """`ojax plot OUT [--figure-format ...]`."""
    parser = commands.add_parser(
        "plot", help="redraw the figures of a finished run (ojax run / ojax sweep) from its files"
    )
    parser.add_argument("out", type=Path, help="the run's output folder")
    options.add_figure_format(parser)


def _plot_command(out: Path, values: Sequence[str] | None) -> int:
    """Runs `ojax plot`: the formats checked, then :func:`plot`; prints what it wrote."""
    from ojax.app.files import plot

    written = plot(out, options.figure_formats(values))
    print(f"ojax: redrew {out}/ ({', '.join(p.name for p in written) or 'no figures'})")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The parser of the `ojax` command: `list`, `run`, `sweep` and `plot` with their options
    (the command line page, docs/cli.md)."""
    parser = _Parser(prog="ojax", description="ojax: online learning in JAX.")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    listing = commands.add_parser("list", help="list the experiments (or the learners)")
    text = "list the registered learners (what `ojax sweep` runs) and their fields"
    listing.add_argument("--learners", action="store_true", help=text)
    options.add_import(listing)
    run = commands.add_parser(
        "run", help="run an experiment, write its results", epilog=options.OUT_RULE
    )
    run.add_argument("name", help="experiment name (see `ojax list`)")
    run.add_argument(
        "--seeds", type=options.positive_int, help="number of seeds (default: the paper's)"
    )
    run.add_argument("--out", type=Path, help="output folder (default: results/NAME)")
    run.add_argument("--data-dir", type=Path, help="folder of the real datasets")
    options.add_experiment_options(run)
    run.add_argument(
        "--quick",
        action="store_true",
        help="a small configuration (most of its time is compiling, once: later runs load the "
        "programs from the compilation cache); honours --seeds, else the experiment's quick seeds",
    )
    options.add_overwrite(run)
    options.add_engine_options(run)
    options.add_import(run)
    sweep = commands.add_parser(
        "sweep",
        help="sweep a registered learner over seeds and a hyperparameter grid",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sweep.lazy_epilog = _sweep_epilog
    sweep.add_argument("learner", help="registered learner name (see the list below)")
    sweep.add_argument(
        "--grid",
        type=options.grid_axis,
        action="append",
        default=[],
        metavar="FIELD=V1,V2,...",
        help="a hyperparameter axis (repeat for a Cartesian product)",
    )
    sweep.add_argument("--seeds", type=options.positive_int, default=10, help="number of seeds")
    sweep.add_argument("--steps", type=options.positive_int, help="steps per stream (default 1000)")
    sweep.add_argument(
        "--dim", type=options.positive_int, help="dimension of the stream (default 10)"
    )
    sweep.add_argument(
        "--data",
        type=Path,
        metavar="FILE",
        help="play this file instead of the learner's stream (LIBSVM, CSV, .npz or Vowpal "
        "Wabbit text, .gz too): one pass in a shuffled order per seed, progressive validation",
    )
    sweep.add_argument(
        "--labels",
        choices=("binary", "real"),
        default="binary",
        help="--data's labels: two classes mapped to -1/+1 (default), or numbers (regression)",
    )
    sweep.add_argument(
        "--loss",
        help="--data: the loss an OCO learner is played with as a linear predictor (default: "
        "logistic for binary labels, square for real ones)",
    )
    sweep.add_argument("--key", type=options.seed, default=0, help="PRNG seed of the sweep")
    sweep.add_argument("--out", type=Path, help="output folder (default: results/sweep-NAME)")
    options.add_overwrite(sweep)
    sweep.add_argument("--chunk-size", type=options.positive_int, help="combinations per chunk")
    options.add_engine_options(sweep)
    options.add_import(sweep)
    _add_plot_command(commands)
    return parser


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
    rule = textwrap.fill(options.OUT_RULE, 88)
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
    from ojax.sweep import distributed

    given = (args.coordinator, args.num_processes, args.process_id)
    distributed.check_arguments(*given)
    if any(v is not None for v in given) or distributed.detected():
        distributed.initialize(*given)


class _Finished(Exception):
    """A process other than 0 of a multi-process run has done its share (process 0 writes)."""


def _write(folder, config: ExperimentConfig, result, wall: float) -> list[Path]:
    from ojax.sweep import distributed

    distributed.finish()  # every process is done computing: process 0 writes alone
    if not getattr(folder, "writes", True):
        raise _Finished(f"{config.out}/")

    from ojax.app.files import write_result

    return write_result(config, result, wall, before_move=folder.record)


def _start(folder: RunFolder, label: str, runs: str, args: argparse.Namespace):
    """The last check (the output folder), then float64 if asked and the header line on stderr:
    `ojax: running NAME: RUNS[, quick], float32|float64 on DEVICE` (`RUNS`: what the config's
    :meth:`~ojax.experiments.ExperimentConfig.header` says, `N seeds` or e.g. `N orders of
    FILE` for a split file). Returns the folder (in a multi-process run, wrapped: the
    processes agree, process 0 writes)."""
    from ojax.sweep import distributed

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
    what += ", float64" if args.x64 else ", float32"
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
    for flag, owners in options.experiment_flags().items():
        name = owners[0][1].name
        if getattr(args, name, None) is None:
            continue
        if name not in mine:
            takers = options.takers([owner.name for owner, _ in owners])
            raise InputError(f"{flag} is for {takers}, not {spec.name}")
        given[name] = getattr(args, name)
    config = spec.config(
        name=spec.name,
        seeds=args.seeds or spec.seeds(args.quick),
        out=args.out or Path("results") / spec.name,
        data_dir=args.data_dir,
        quick=args.quick,
        figure_formats=options.figure_formats(args.figure_format),
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


def _check_imported(spec, config: ExperimentConfig, imported: options.Imported) -> None:
    """A learner `--import` registered is run by the experiment, or refused: named in its
    `--methods`, or the experiment is one the import registered too (it reads them itself)."""
    if not imported.learners or spec.name in imported.experiments:
        return
    if getattr(config, "methods", None) is not None:
        return  # the methods the user chose
    names = ", ".join(imported.learners)
    takers = [s.name for s in options.methods_takers()]
    if spec.name in takers:
        hint = f"name it in --methods (e.g. --methods {imported.learners[0]},KT)"
    else:
        hint = (
            f"it takes no --methods (only {', '.join(takers)} does); `ojax sweep "
            f"{imported.learners[0]} --import ...` sweeps it"
        )
    raise InputError(
        f"--import registered the learner(s) {names}, which {spec.name} would not run: {hint}"
    )


def _run(args: argparse.Namespace, imported: options.Imported = options.NOTHING) -> int:
    from ojax.experiments import EXPERIMENTS

    if args.name not in EXPERIMENTS:
        raise InputError(
            f"unknown experiment {args.name!r}; choose one of: {', '.join(EXPERIMENTS)}"
        )
    spec = EXPERIMENTS[args.name]
    if args.data_dir is not None and not args.data_dir.is_dir():
        raise InputError(f"--data-dir: {str(args.data_dir)!r} is not a folder")
    config, own = _experiment_config(spec, args)
    _check_imported(spec, config, imported)
    identity = _run_identity(
        spec, config.seeds, args.quick, args.x64, args.data_dir, own, config.reads_data_files()
    )
    folder = RunFolder(config.out, identity, args.overwrite)
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


def _sweep_data(args: argparse.Namespace) -> Any:
    """`--data FILE` read (:func:`ojax.datasets.read_stream`), or `None`; `--steps` and
    `--dim` default to 1000 and 10 without it and are refused with it (the file's)."""
    if args.data is None:
        args.steps, args.dim = args.steps or 1000, args.dim or 10
        for flag in ("labels", "loss"):
            if getattr(args, flag) not in (None, "binary"):
                raise InputError(f"--{flag} is for a sweep on --data FILE")
        return None
    if args.steps is not None or args.dim is not None:
        raise InputError("--steps and --dim: with --data the file gives them (its rows, columns)")
    from ojax.datasets import read_stream

    stream = read_stream(args.data, labels=args.labels)
    args.steps, args.dim = stream.xs.shape
    return stream


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
    formats = options.figure_formats(args.figure_format)
    data = _sweep_data(args)
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
    if data is not None:
        from ojax.sweep.experiment import file_identity

        identity.update(data=file_identity(args.data), labels=args.labels, loss=args.loss)
    from ojax.app.learner_sweep import best_line, check_sweep, sweep_learner

    enable_compilation_cache(args.compile_cache)  # before the checks compile anything
    if args.x64:  # the grid's values are checked in the dtype they run in
        import jax

        jax.config.update("jax_enable_x64", True)
    check_sweep(
        args.learner, grid or None, num_steps=args.steps, dim=args.dim, data=data, loss=args.loss
    )
    folder = RunFolder(out, identity, args.overwrite)
    runs = f"{args.seeds} seed{'' if args.seeds == 1 else 's'}"
    runs += "" if data is None else f" (orders) of {args.data.name}"
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
            data=data,
            loss=args.loss,
        )
        wall = time.perf_counter() - start
        written = _write(folder, config, result, wall)
        folder.finish(written)
    metric = result.extra_config["metric"]  # average_loss, or cumulative_error for task blocks
    rows = [r for r in result.rows if r.metric == metric]
    shown = [r for m in (metric, "regret", "mistake_rate") for r in result.rows if r.metric == m]
    print("\n".join(results_table(shown)))  # cumulative_loss, ... are in results.csv
    if result.extra_config.get("grid"):
        print(best_line(result, rows))
    print(f"ojax: wrote {out}/ ({', '.join(p.name for p in written)})")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `ojax` console script; returns the exit status (the command
    itself ends there, at once: :func:`ojax.app.interrupt.end`)."""
    try:
        code = _main(argv)
    except BrokenPipeError:  # the reader of stdout went away (`ojax list | head -1`)
        code = interrupt.closed_pipe()
    except KeyboardInterrupt:
        print(interrupt.INTERRUPTED, file=sys.stderr)
        code = 130
    return interrupt.end(code)


def _main(argv: Sequence[str] | None) -> int:
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # argparse: --help (0) or a bad option (2)
        return int(exc.code or 0)
    try:
        if args.command == "plot":
            return _plot_command(args.out, args.figure_format)
        if args.command != "list":
            _join(args)  # before anything else uses JAX (an --import may)
        imported = options.import_modules(args.imports)
        if args.command == "list":
            return _list(args.learners)
        if args.command == "sweep":
            return _sweep(args)
        return _run(args, imported)
    except InputError as exc:
        print(f"ojax: error: {exc}", file=sys.stderr)
        return 2
    except RuntimeError as exc:
        from ojax.sweep.distributed import PEER_LOST_STATUS, PeerLost

        if not isinstance(exc, PeerLost):
            raise
        print(f"\nojax: error: {exc}", file=sys.stderr)
        return PEER_LOST_STATUS
    except ImportError as exc:  # a plugin of ojax.learners that does not load
        if not str(exc).startswith("ojax.learners plugin"):
            raise
        print(f"ojax: error: {exc}", file=sys.stderr)
        return 2
    except _Finished as done:
        from ojax.sweep import distributed

        print(f"ojax: {distributed.label()} finished; process 0 writes {done}", file=sys.stderr)
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())


__all__ = ["SWEEP_EXAMPLE", "build_parser", "learner_lines", "main"]
