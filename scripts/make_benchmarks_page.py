"""Regenerates docs/benchmarks.md and its figure from the bench.json of every benchmark.

    python scripts/make_benchmarks_page.py            # from the results already there
    python scripts/make_benchmarks_page.py --run      # run every benchmark first (full size)
    python scripts/make_benchmarks_page.py --run --quick   # smoke sizes (a page for tests)

Each benchmark ``scripts/bench_NAME.py`` writes ``results/bench_NAME/bench.json`` (the format of
docs/cli.md). This script reads, for each name, ``RESULTS/bench_NAME/bench.json`` for every
``--results RESULTS`` directory given (default ``results``; give a second one holding GPU runs to
put them beside the CPU ones), copies each file it used to ``docs/benchmarks/NAME[-DEVICE].json``
(so the page can be rebuilt from the repository alone: those copies are the fallback source),
and writes ``docs/benchmarks.md`` and ``docs/benchmarks_throughput.png`` (examples per second
against the number of streams, log-log).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = {
    "denevi": "meta-learning of Denevi et al. (2020): tasks x seeds in one vmap",
    "regpath": "the regularization path of one SGD pass (Neu & Rosasco 2018)",
    "transfer": "online transfer learning of Zhao & Hoi (2010): permutations in one vmap",
    "sweep": "the sweep engine: hyperparameters x seeds in one jit(vmap(scan))",
    "peers": "ojax beside river, scikit-learn and Vowpal Wabbit (progressive validation)",
    "distributed": "the same chunked sweep on 1 and on 2 processes",
    "e2e": "every `ojax run` experiment end to end in a fresh process, cold and warm",
    "runner": "`ojax.run` beside a hand-written `lax.scan` / `fori_loop` of each learner's update",
    "gpu": "learner steps per second at 1e3 to 1e6 streams on one GPU, and the main job",
    "parameter_free": "ojax's parameter-free learners beside optax.contrib's under jax.vmap",
    "contextual": "contextual bandits: LinUCB and linear TS beside MABWiser's, "
    "epsilon-greedy and SquareCB beside Vowpal Wabbit's",
}
STANDARD = ("case", "ojax_seconds", "ojax_compile_seconds", "baseline", "baseline_seconds", "ratio")


def command(name: str, quick: bool = False) -> str:
    return f"python scripts/bench_{name}.py {'--quick ' if quick else ''}--out results/bench_{name}"


def result_command(name: str, result: dict[str, Any]) -> str:
    """The command that produced ``result``, with the optional parts it shows it ran."""
    if "command" in result:
        return result["command"]
    cases = " ".join(str(r.get("case", "")) for r in result.get("rows", []))
    extra = ""
    if name == "denevi" and "cold process" in cases:
        extra = " --cold"
    elif name == "sweep" and "chunked" in cases:
        extra = " --large"
    elif name == "regpath" and isinstance(result.get("large_stream"), dict):
        extra = f" --large {result['large_stream'].get('n')}"
    return command(name) + extra


def extras(result: dict[str, Any]) -> list[str]:
    """Lines for the top-level dict fields of a result beyond its table (e.g. a large run)."""
    skip = {"environment", "versions", "main_job"}
    return [
        f"- {key}: " + ", ".join(f"{k} {_cell(v)}" for k, v in value.items())
        for key, value in result.items()
        if isinstance(value, dict) and key not in skip
    ]


def run_all(quick: bool) -> None:
    for name in BENCHMARKS:
        script = ROOT / "scripts" / f"bench_{name}.py"
        if not script.exists():
            print(f"skip {name}: {script.name} not found", file=sys.stderr)
            continue
        print(f"$ {command(name, quick)}", file=sys.stderr)
        proc = subprocess.run([sys.executable, *command(name, quick).split()[1:]], cwd=ROOT)
        if proc.returncode != 0:
            print(f"warning: bench_{name} exited with {proc.returncode}", file=sys.stderr)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()


def collect(results: list[Path], docs: Path) -> dict[str, list[dict[str, Any]]]:
    """name -> the bench.json contents found (one per results directory / device)."""
    store = docs / "benchmarks"
    found: dict[str, list[dict[str, Any]]] = {}
    for name in BENCHMARKS:
        items = []
        for base in results:
            path = base / f"bench_{name}" / "bench.json"
            if path.is_file():
                items.append(json.loads(path.read_text()))
        if items:
            store.mkdir(parents=True, exist_ok=True)
            for old in store.glob(f"{name}*.json"):
                old.unlink()
            for item in items:
                device = _slug(str(item.get("device", "unknown")))
                (store / f"{name}-{device}.json").write_text(json.dumps(item, indent=1) + "\n")
        else:
            items = [json.loads(p.read_text()) for p in sorted(store.glob(f"{name}*.json"))]
        if items:
            found[name] = items
    return found


def _cell(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if value != value:  # NaN
            return "n/a"
        return f"{value:.3g}" if abs(value) < 1e5 else f"{value:.3e}"
    if isinstance(value, (list, tuple)):
        return " / ".join(_cell(v) for v in value)
    if isinstance(value, dict):
        return ", ".join(f"{k}={_cell(v)}" for k, v in value.items())
    return str(value).replace("|", "/")


def _rate(value: float) -> str:
    for unit, scale in (("M", 1e6), ("k", 1e3)):
        if value >= scale:
            return f"{value / scale:.3g}{unit}"
    return f"{value:.3g}"


def markdown_table(header: list[str], rows: list[list[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def generic_table(rows: list[dict[str, Any]]) -> str:
    keys = [k for k in STANDARD if any(k in r for r in rows)]
    for r in rows:
        for k, v in r.items():
            if k not in keys and not isinstance(v, (dict, list)):
                keys.append(k)
    return markdown_table(keys, [[r.get(k, "") for k in keys] for r in rows])


def _metric(row: dict[str, Any], key: str) -> str:
    value = row[key]
    if value != value:  # NaN: no per-example predictions
        return "n/a"
    if row["metric"] == "mistake_rate":
        return f"{value:.5g} ({round(value * row['metric_examples'])} mistakes)"
    return f"{value:.5g}"


def e2e_table(rows: list[dict[str, Any]]) -> str:
    """Cold and warm wall seconds and peak memory of each experiment, the earlier measurement
    (``--baseline``) and the authors' code beside them."""
    has_before = any("before_cold_seconds" in r for r in rows)
    header = ["experiment", "mode", "cold s", "warm s", "peak GiB (cold / warm)"]
    header += ["before: cold s", "before: warm s"] if has_before else []
    header += ["authors' code s"]
    table = []
    for r in rows:
        failed = "cold_error" in r or "warm_error" in r
        line = [
            f"`{r['command']}`",
            r["mode"],
            "failed" if "cold_error" in r else r["cold_seconds"],
            "failed" if "warm_error" in r else r["warm_seconds"],
            "n/a" if failed else [r["cold_peak_rss_gib"], r["warm_peak_rss_gib"]],
        ]
        if has_before:
            line += [r.get("before_cold_seconds", ""), r.get("before_warm_seconds", "")]
        authors = r.get("authors_seconds")
        line.append(f"{authors:g} ({r['authors_run']})" if authors else "")
        table.append(line)
    note = (
        "Each run is a fresh `ojax run` process: cold with an empty compilation cache of its own, "
        "warm with the cache the cold run filled (`--no-resume` is implied: a new `--out`). Wall "
        "seconds cover the whole process (imports, data, tracing, compilation, the run, figures "
        "and files); peak memory is the process's maximum resident set.\n\n"
    )
    text = note + markdown_table(header, table)
    profiled = [r for r in rows if "warm_profile" in r]
    if profiled:  # bench_e2e --profile: a third, warm run with its phases time-stamped
        phases = list(profiled[0]["warm_profile"])
        cells = [
            [f"`{r['command']}`", *(f"{r['warm_profile'][p]:.2f}" for p in phases)]
            for r in profiled
        ]
        text += (
            "\n\nWhere a warm run's seconds go (a third run, warm, its phases time-stamped: "
            "`program loads` is tracing, lowering and loading the compiled programs; "
            "`experiment` the rest of the run up to its files; `figures` drawing and encoding "
            "them):\n\n" + markdown_table(["experiment", *phases], cells)
        )
    return text


def runner_table(result: dict[str, Any]) -> str:
    """Runner parity: each learner's seconds through ``ojax.run`` against its hand-written scan
    and fori_loop, and the loop ops of the compiled programs (the structural check)."""
    config = result.get("config", {})
    target = config.get("target_slowdown", 1.05)
    rows = result["rows"]
    over = [r["case"] for r in rows if r["slowdown"] > target]
    note = (
        f"{config.get('streams')} streams (`vmap`) x {config.get('steps')} steps, median of "
        f"{config.get('repeats')} interleaved rounds; slowdown = ojax seconds / hand-written "
        f"scan seconds (target <= {target}; over it: **{len(over)} of {len(rows)}**"
        + (f", {', '.join(over)}" if over else "")
        + "). Loop ops: what the optimized HLO's loops run per step (ojax / scan); 'extra' "
        "names the ops the runner runs beyond the scan (empty at parity, whatever the load). "
        "fori: the same step in a `lax.fori_loop`.\n\n"
    )
    header = ["case", "kind", "d", "ojax s", "scan s", "slowdown", "fori s", "ojax / fori"]
    header += ["M steps/s", "loop ops", "extra loop ops", "losses rel. diff"]
    table = [
        [
            r["case"],
            r["kind"],
            r["dim"],
            r["ojax_seconds"],
            r["baseline_seconds"],
            f"{r['slowdown']:.3f}" + (" **over**" if r["slowdown"] > target else ""),
            r.get("fori_seconds", "n/a"),
            f"{r['fori_slowdown']:.3f}" if "fori_slowdown" in r else "n/a",
            f"{r['steps_per_second'] / 1e6:.3g}",
            f"{r['loop_ops_ojax']} / {r['loop_ops_baseline']}",
            ", ".join(f"+{v} {k}" for k, v in r["extra_loop_ops"].items()) or "none",
            r["losses_max_rel_diff"],
        ]
        for r in rows
    ]
    timed = time_major_table(rows, config.get("target_time_major_slowdown", 1.1))
    return note + markdown_table(header, table) + timed


def time_major_table(rows: list[dict[str, Any]], target: float) -> str:
    """The same streams laid out time-major `(T, S, ...)`: `jax.vmap(run, in_axes=1)` against a
    hand-written time-major scan (the learner's step vmapped inside one scan over the steps)."""
    rows = [r for r in rows if "time_major_slowdown" in r]
    if not rows:
        return ""
    over = [r["case"] for r in rows if r["time_major_slowdown"] > target]
    same = sum(r["time_major_same_losses"] for r in rows)
    note = (
        "\n\nThe same streams laid out time-major, `(T, S, ...)`: the runner as "
        "`jax.vmap(run, in_axes=1, out_axes=1)` against a hand-written time-major scan (one "
        "`lax.scan` over the steps, the learner's own step vmapped over the streams inside it). "
        f"slowdown = runner / hand-written (target <= {target}; over it: **{len(over)} of "
        f"{len(rows)}**" + (f", {', '.join(over)}" if over else "") + "); speedup = the "
        "streams-major runner's seconds / the time-major runner's; the runner's losses equal "
        f"its streams-major losses bit for bit in **{same} of {len(rows)}** rows. Task blocks "
        "(multi-task learners) have no time-major form here.\n\n"
    )
    header = ["case", "ojax s", "scan s", "slowdown", "speedup", "same losses", "rel. diff"]
    table = [
        [
            r["case"],
            r["time_major_ojax_seconds"],
            r["time_major_scan_seconds"],
            f"{r['time_major_slowdown']:.3f}"
            + (" **over**" if r["time_major_slowdown"] > target else ""),
            f"{r['time_major_speedup']:.2f}",
            "yes" if r["time_major_same_losses"] else "no",
            r["time_major_losses_max_rel_diff"],
        ]
        for r in rows
    ]
    return note + markdown_table(header, table)


def gpu_table(result: dict[str, Any]) -> str:
    """Learner steps per second, a row per learner and a column per number of streams, and the
    main job's wall seconds (``scripts/bench_gpu.py``)."""
    rows = result.get("rows", [])
    sizes = sorted({r["streams"] for r in rows})
    learners = list(dict.fromkeys(r["learner"] for r in rows))
    table = []
    for label in learners:
        mine = {r["streams"]: r for r in rows if r["learner"] == label}
        steps = next(iter(mine.values()))["steps"]
        rates = [_rate(mine[n]["steps_per_second"]) if n in mine else "-" for n in sizes]
        table.append([label, steps, *rates])
    header = ["learner (steps/s)", "steps per stream", *[f"{n:.0e} streams" for n in sizes]]
    out = [markdown_table(header, table)]
    job = result.get("main_job") or {}
    if "cold_seconds" in job and "error" not in job:
        quick = " --quick" if job.get("quick") else ""
        out.append(
            f"\nmain job `ojax run {job['experiment']}{quick}`: cold {job['cold_seconds']:.1f} s, "
            f"warm {job['warm_seconds']:.1f} s (fresh processes)"
        )
    if result.get("note"):
        out.append(f"\n{result['note']}")
    return "\n".join(out)


def peers_tables(result: dict[str, Any]) -> str:
    config = result.get("config", {})
    vw = config.get("vw_cli_binary")
    parts = [
        "Examples per second in progressive validation (predict, record the loss, learn) over S "
        "independent streams, each a shuffle of one dataset (the same orders for every "
        "library). ojax runs all streams in one `jit(vmap(scan))` "
        "(`ojax.transfer.run_orders`); river, scikit-learn `partial_fit` and Vowpal Wabbit's "
        "Python `learn()` run a Python loop over streams and examples, as their users do; "
        "scikit-learn's one-pass `fit` is a bulk upper bound without per-example predictions. "
        + (
            f"Vowpal Wabbit's command line is `{vw}`. "
            if vw
            else "No `vw` binary is on this machine (the `vowpalwabbit` wheel ships the "
            "library only and there is no system package): the 'C++ driver' rows run the "
            "command line's own loop in-process through pylibvw (`Workspace('... -d FILE')`: "
            "C++ parsing and learning over a text file; the file is written untimed, "
            "start-up is timed). "
        )
        + "The metric columns compare the progressive loss of both sides on the same "
        "examples; the last column says where the peer's algorithm differs.\n",
    ]
    workloads = config.get("workloads", {})
    for wname in dict.fromkeys(r["workload"] for r in result["ojax_runs"]):
        info = workloads.get(wname, {})
        parts.append(
            f"#### `{wname}` (n = {info.get('n')}, d = {info.get('d')}; {info.get('source', '')}; "
            f"metric: progressive {info.get('metric', '')})\n"
        )
        header = [
            "streams",
            "ojax",
            "ojax ex/s",
            "baseline",
            "baseline ex/s",
            "speedup",
            "metric ojax",
            "metric baseline",
            "on examples",
            "algorithm",
        ]
        table = []
        for r in result["rows"]:
            if r["workload"] != wname:
                continue
            star = " *" if r["baseline_extrapolated"] else ""
            table.append(
                [
                    r["streams"],
                    r["ojax"],
                    _rate(r["ojax_examples_per_second"]),
                    r["baseline"] + star,
                    _rate(r["baseline_examples_per_second"]),
                    f"{r['ratio']:.3g}x",
                    _metric(r, "ojax_metric"),
                    _metric(r, "baseline_metric"),
                    r["baseline_measured_examples"],
                    r["algorithm"],
                ]
            )
        if table:
            parts.append(markdown_table(header, table) + "\n")
        runs = [r for r in result["ojax_runs"] if r["workload"] == wname]
        if any(isinstance(r["progressive_metric"], list) for r in runs):
            parts.append(
                "ojax's run predicts with both the Polyak-Ruppert average and the SGD iterate; "
                "its progressive metric below is 'average / iterate'. scikit-learn is compared "
                "with the first, river (whose Averager reduces to plain SGD) with the second.\n"
            )
        parts.append(
            markdown_table(
                [
                    "streams",
                    "ojax method",
                    "seconds",
                    "compile seconds",
                    "ex/s",
                    "progressive metric",
                ],
                [
                    [
                        r["streams"],
                        r["method"],
                        r["seconds"],
                        r["compile_seconds"],
                        _rate(r["examples_per_second"]),
                        r["progressive_metric"],
                    ]
                    for r in runs
                ],
            )
            + "\n"
        )
    parts.append(
        "`*`: the peer was stopped at the time budget "
        f"({result.get('config', {}).get('budget_seconds')} s per peer and stream count); its "
        "throughput is measured on the examples it did (column 'on examples'), its time for all "
        "streams extrapolated. Metrics are compared on exactly those examples.\n"
    )
    return "\n".join(parts)


def throughput_figure(found: dict[str, list[dict[str, Any]]], path: Path) -> bool:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    # panel -> line name -> streams -> (examples per second, extrapolated)
    panels: dict[str, dict[str, dict[int, tuple[float, bool]]]] = {}
    for items in found.values():
        for result in items:
            device = str(result.get("device", ""))
            for r in result.get("ojax_runs", []):
                line = panels.setdefault(f"{r['workload']} ({device})", {})
                line.setdefault(r["method"], {})[r["streams"]] = (r["examples_per_second"], False)
            for r in result.get("rows", []):
                if "streams" not in r or "baseline_examples_per_second" not in r:
                    continue
                line = panels.setdefault(f"{r.get('workload', result['benchmark'])} ({device})", {})
                point = (r["baseline_examples_per_second"], bool(r.get("baseline_extrapolated")))
                line.setdefault(r["baseline"], {})[r["streams"]] = point
                if "ojax_examples_per_second" in r and "ojax" in r:
                    line.setdefault(r["ojax"], {})[r["streams"]] = (
                        r["ojax_examples_per_second"],
                        False,
                    )
    panels = {k: v for k, v in panels.items() if v}
    if not panels:
        return False
    fig, axes = plt.subplots(1, len(panels), figsize=(5.4 * len(panels), 5.6), squeeze=False)
    for ax, (title, lines) in zip(axes[0], panels.items()):
        ordered = sorted(lines.items(), key=lambda kv: (not kv[0].startswith("ojax"), kv[0]))
        for index, (name, points) in enumerate(ordered):
            xs = sorted(points)
            ys = [points[x][0] for x in xs]
            ours = name.startswith("ojax")
            color = plt.cm.tab10(index % 10)
            style = "-o" if ours else "--s"
            ax.plot(xs, ys, style, label=name, markersize=5, color=color, lw=2 if ours else 1)
            open_x = [x for x in xs if points[x][1]]
            ax.plot(
                open_x,
                [points[x][0] for x in open_x],
                "s",
                markersize=8,
                markerfacecolor="white",
                markeredgecolor=color,
            )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("independent streams")
        ax.set_ylabel("examples per second (progressive validation)")
        ax.set_title(title, fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=6.5, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=1)
    fig.text(
        0.01,
        0.01,
        "open squares: peer stopped at its time budget, throughput measured on the examples it did",
        fontsize=7,
    )
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def page(found: dict[str, list[dict[str, Any]]], figure: bool) -> str:
    out = [
        "# Benchmarks",
        "",
        "Generated by `python scripts/make_benchmarks_page.py` from the `bench.json` files of the "
        "benchmarks (`--run` runs them all first). Do not edit by hand. Times are medians after "
        "compilation (the compile time is its own column); ratio = baseline seconds / ojax "
        "seconds, higher is better for ojax. On a shared CPU absolute times mean little; ratios "
        "measured side by side in one run mean more, but they too move between runs when other "
        "work loads the machine (see the load averages recorded with each run).",
        "",
        "## Machines and versions",
        "",
    ]
    for name, items in found.items():
        for result in items:
            env = dict(result.get("environment", {}))
            for key in ("ojax_version", "jax_version", "python", "machine", "device"):
                if key in result and key not in env:
                    env[key] = result[key]
            versions = result.get("versions", {})
            out.append(
                f"- `{name}` on **{result.get('device', '?')}**: "
                + ", ".join(f"{k} {v}" for k, v in {**env, **versions}.items())
            )
    out += ["", "## Commands", "", "```"]
    for name, items in found.items():
        for result in items:
            out.append(result_command(name, result))
    out += ["```", ""]
    if figure:
        out += ["![throughput against streams](benchmarks_throughput.png)", ""]
    missing = [n for n in BENCHMARKS if n not in found]
    for name, items in found.items():
        for result in items:
            out += [f"## `{name}`: {BENCHMARKS[name]} ({result.get('device', '?')})", ""]
            if name == "peers" and "ojax_runs" in result:
                out.append(peers_tables(result))
            elif name == "e2e" and result.get("rows"):
                out += [e2e_table(result["rows"]), ""]
            elif name == "runner" and result.get("rows"):
                out += [runner_table(result), ""]
            elif name == "gpu" and result.get("rows"):
                out += [gpu_table(result), ""]
            elif result.get("rows"):
                out += [generic_table(result["rows"]), ""]
            if lines := extras(result):
                out += [*lines, ""]
    if missing:
        out += ["## Not yet run", ""]
        out += [f"- `{n}` ({BENCHMARKS[n]}): `{command(n)}`" for n in missing]
        out.append("")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", action="store_true", help="run every benchmark first")
    parser.add_argument("--quick", action="store_true", help="with --run: smoke sizes")
    parser.add_argument(
        "--results",
        action="append",
        type=Path,
        default=None,
        help="a directory holding bench_NAME/bench.json (repeatable)",
    )
    parser.add_argument("--docs", type=Path, default=ROOT / "docs")
    args = parser.parse_args(argv)
    if args.run:
        run_all(args.quick)
    results = args.results or [ROOT / "results"]
    found = collect(results, args.docs)
    figure = throughput_figure(found, args.docs / "benchmarks_throughput.png")
    text = page(found, figure)
    (args.docs / "benchmarks.md").write_text(text)
    print(f"wrote {args.docs / 'benchmarks.md'} ({len(found)} benchmark(s))")
    return 0


if __name__ == "__main__":
    sys.exit(main())
