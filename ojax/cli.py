"""The ``ojax`` command: ``ojax list``, ``ojax run NAME [options]`` (see INTERFACE.md).

Bad input (an unknown experiment, a bad option value, a missing or malformed data file) exits
with status 2 and a one-line message, before anything is written.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from ojax.experiments.output import ExperimentConfig
from ojax.validation import InputError


class _Parser(argparse.ArgumentParser):
    """Argument errors as one line on stderr and exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"ojax: error: {message}\n")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}")
    return value


_UNITS = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}


def parse_bytes(text: str) -> int:
    """``"512M"``, ``"2G"``, ``"1.5g"``, ``"1000000"`` -> bytes."""
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
    return int(value * _UNITS[unit])


def _add_engine_options(parser: argparse.ArgumentParser) -> None:
    """The options shared by ``run`` and ``sweep``: precision and the sweep engine's."""
    parser.add_argument("--x64", action="store_true", help="compute in float64")
    parser.add_argument("--devices", type=_positive_int, help="shard over the first N devices")
    parser.add_argument("--memory-budget", type=parse_bytes, help="memory budget, e.g. 4G")
    parser.add_argument(
        "--no-resume",
        dest="resume",
        action="store_false",
        help="recompute finished work instead of resuming",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="ojax", description="ojax: online learning in JAX.")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    commands.add_parser("list", help="list the experiments")
    run = commands.add_parser("run", help="run an experiment and write its results")
    run.add_argument("name", help="experiment name (see `ojax list`)")
    run.add_argument("--seeds", type=_positive_int, help="number of seeds (default: the paper's)")
    run.add_argument("--out", type=Path, help="output folder (default: results/NAME)")
    run.add_argument("--data-dir", type=Path, help="folder of the real datasets")
    run.add_argument("--quick", action="store_true", help="a small configuration (seconds)")
    _add_engine_options(run)
    sweep = commands.add_parser(
        "sweep", help="sweep a registered learner over seeds and a hyperparameter grid"
    )
    sweep.add_argument("learner", help="registered learner name (ojax.core.LEARNERS)")
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
    sweep.add_argument("--key", type=int, default=0, help="PRNG seed of the sweep")
    sweep.add_argument("--out", type=Path, help="output folder (default: results/sweep-NAME)")
    sweep.add_argument("--chunk-size", type=_positive_int, help="combinations per chunk")
    _add_engine_options(sweep)
    return parser


def _grid_axis(text: str) -> tuple[str, list[float]]:
    """``"learning_rate=0.01,0.1,1"`` -> ``("learning_rate", [0.01, 0.1, 1.0])``."""
    field, sep, values = text.partition("=")
    try:
        numbers = [float(v) for v in values.split(",")] if values.strip() else []
    except ValueError:
        numbers = None
    if not sep or not field.strip() or not numbers:
        raise argparse.ArgumentTypeError(
            f"must be FIELD=V1,V2,... with numbers, e.g. learning_rate=0.01,0.1, got {text!r}"
        )
    return field.strip(), numbers


def _list() -> int:
    from ojax.experiments import EXPERIMENTS

    width = max(len(name) for name in EXPERIMENTS)
    for spec in EXPERIMENTS.values():
        print(f"{spec.name:<{width}}  {spec.description}")
    return 0


def _engine_config(args: argparse.Namespace, **fields) -> ExperimentConfig:
    """Checks the options ``run`` and ``sweep`` share, switches float64 on if asked, and returns
    the configuration the sweep engine reads."""
    import jax

    if args.devices is not None and args.devices > jax.device_count():
        raise InputError(
            f"--devices must be at most the {jax.device_count()} available device(s), "
            f"got {args.devices}"
        )
    if args.x64:
        jax.config.update("jax_enable_x64", True)
    return ExperimentConfig(
        x64=args.x64,
        devices=args.devices,
        quiet=args.quiet,
        resume=args.resume,
        memory_budget=args.memory_budget,
        **fields,
    )


def _run(args: argparse.Namespace) -> int:
    from ojax.experiments import EXPERIMENTS, write_result

    if args.name not in EXPERIMENTS:
        raise InputError(
            f"unknown experiment {args.name!r}; choose one of: {', '.join(EXPERIMENTS)}"
        )
    spec = EXPERIMENTS[args.name]
    if args.data_dir is not None and not args.data_dir.is_dir():
        raise InputError(f"--data-dir: {str(args.data_dir)!r} is not a folder")
    config = _engine_config(
        args,
        name=spec.name,
        seeds=args.seeds or spec.default_seeds,
        out=args.out or Path("results") / spec.name,
        data_dir=args.data_dir,
        quick=args.quick,
    )
    start = time.perf_counter()
    result = spec.load()(config)
    wall = time.perf_counter() - start
    written = write_result(config, result, wall)
    if not args.quiet:
        for row in result.rows:
            print(
                f"{row.dataset:>18} {row.method:>22} {row.metric:>18} "
                f"{row.mean:12.5g} +- {row.std:.3g}  (n={row.n_seeds})"
            )
    names = ", ".join(p.name for p in written)
    print(f"ojax: {spec.name} finished in {wall:.1f} s; wrote {config.out}/ ({names})")
    return 0


def _sweep(args: argparse.Namespace) -> int:
    from ojax.experiments import write_result

    grid: dict[str, list[float]] = {}
    for field, values in args.grid:
        if field in grid:
            raise InputError(f"--grid: {field!r} is given twice")
        grid[field] = values
    out = args.out or Path("results") / f"sweep-{args.learner}"
    config = _engine_config(args, name="sweep", seeds=args.seeds, out=out)
    from ojax.sweep import sweep_learner

    start = time.perf_counter()
    result, _ = sweep_learner(
        args.learner,
        grid or None,
        num_seeds=args.seeds,
        num_steps=args.steps,
        dim=args.dim,
        key=args.key,
        memory_budget=args.memory_budget,
        chunk_size=args.chunk_size,
        devices=args.devices,
        out_dir=out / ".sweep",
        resume=args.resume,
        progress=not args.quiet,
    )
    wall = time.perf_counter() - start
    written = write_result(config, result, wall)
    best = result.extra_config.get("best")
    if best is not None:
        shown = ", ".join(f"{k}={v:g}" for k, v in best["params"].items())
        print(f"ojax: best {shown} (final average loss {best['average_loss']:.5g})")
    print(f"ojax: wrote {out}/ ({', '.join(p.name for p in written)})")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``ojax`` console script; returns the exit status."""
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # argparse: --help (0) or a bad option (2)
        return int(exc.code or 0)
    try:
        if args.command == "list":
            return _list()
        if args.command == "sweep":
            return _sweep(args)
        return _run(args)
    except InputError as exc:
        print(f"ojax: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("ojax: interrupted; finished work is kept, re-run to resume", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
