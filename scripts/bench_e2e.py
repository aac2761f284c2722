"""Benchmark: every ``ojax run`` experiment end to end, as a user feels it.

    python scripts/bench_e2e.py [--quick] [--out DIR] [--only NAME,...] [--modes quick,full]
                                [--baseline OLD_BENCH_JSON [--baseline-note TEXT]]

Each experiment runs as a fresh ``ojax run`` subprocess, twice per mode: **cold** (an empty
compilation cache of its own) and **warm** (the same cache, now filled; ``--no-resume`` and a new
``--out``, so nothing but compiled programs carries over). Modes: ``quick`` (``--quick``) and
``full`` (the paper's configuration). Each row gives the wall time of the whole process (start-up,
imports, data, compilation, the run, the outputs) and its peak resident memory (``wait4``'s
``ru_maxrss``), and, where the authors' code publishes a whole-run time for the same job, that
time beside it:

* Denevi et al. (2020), their code: 276 s for the six parameter-free methods x 30 seeds of the
  synthetic experiment (the main job runs those and the two tuned grids);
* the OTL toolbox of Zhao & Hoi (2010): usenet2 9.3 s, newsgroup4 181 s, spambase 50 s whole runs
  (the homogeneous experiment runs all three).

``--quick`` benchmarks the quick mode only (smoke size); ``--quick-only NAME,...`` leaves those
experiments' full runs out (e.g. ``denevi2020-variance``, whose full run takes many minutes).
``--baseline`` puts the cold and warm
times of an earlier ``bench.json`` (e.g. before a change) beside the new ones, and
``--baseline-note`` says what that run was (its commit, machine, when): the page prints it with
the table. Writes ``DIR/bench.json`` (the format of docs/cli.md, with the command line that
produced it) and prints the table.

``--profile`` runs each case a third time, warm, through a wrapper that time-stamps where the
process's seconds go (``warm_profile`` in the row, and a table printed at the end): ``start-up``
(the interpreter, before the wrapper's first line: the process's wall time less the wrapper's),
``imports`` (``import ojax.app.cli``), ``program loads`` (tracing, lowering and compiling or loading
compiled programs: the run's ``config.json`` ``programs`` totals, from JAX's monitoring events),
``experiment`` (from the command's start to its outputs, less the program loads: the Python
set-up, the runs, eager operations outside compiled programs), ``outputs`` (``write_result``:
the CSV, curves, ``config.json``), ``figures`` (``write_figures``: drawn from the run's files,
laid out, rendered, PNG-encoded) and ``exit`` (the table printed, the process's end: without
the interpreter's teardown, as the command ends). Instrumentation only: nothing is timed by
repetition, so the phases of one run add up to its wall time.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ojax.app.output import environment_info  # noqa: E402
from ojax.experiments import EXPERIMENTS  # noqa: E402

# (experiment, mode) -> (seconds, what the authors' code ran)
AUTHORS = {
    ("denevi2020-synthetic", "full"): (
        276.0,
        "Denevi et al.'s code, the six parameter-free methods x 30 seeds (no tuned grid)",
    ),
    ("zhao-hoi2010-homogeneous", "full"): (
        9.3 + 181.0 + 50.0,
        "OTL toolbox: usenet2 9.3 s + newsgroup4 181 s + spambase 50 s",
    ),
}
# an extra case: one dataset of the homogeneous experiment, against the toolbox's usenet2 run
EXTRA = {
    "zhao-hoi2010-homogeneous[usenet2]": (
        "zhao-hoi2010-homogeneous",
        ["--dataset", "usenet2"],
        (9.3, "OTL toolbox, usenet2 whole run"),
    ),
}


# The --profile wrapper: `ojax run ARGS` with time stamps of its phases, written as JSON to
# $OJAX_E2E_PROFILE (perf_counter is system-wide monotonic on Linux: comparable across processes).
PROFILED = r"""
import json, os, sys, time
t = {"wrapper": time.perf_counter()}
import ojax.app.cli
t["imported"] = time.perf_counter()
from ojax.app import files
spent = {"outputs": 0.0, "figures": 0.0}
def timed(phase, function):
    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        t.setdefault(f"{phase}_start", start)  # outputs_start ends the experiment phase
        try:
            return function(*args, **kwargs)
        finally:
            spent[phase] += time.perf_counter() - start
    return wrapper
# the CLI imports write_result from ojax.app.files when it writes; write_result calls
# write_figures by its module's name
files.write_result = timed("outputs", files.write_result)
files.write_figures = timed("figures", files.write_figures)
code = ojax.app.cli.main(sys.argv[1:])
t["done"] = time.perf_counter()
with open(os.environ["OJAX_E2E_PROFILE"], "w") as f:
    json.dump({"stamps": t, "spent": spent}, f)
sys.stdout.flush()
sys.stderr.flush()
if __name__ == "__main__":  # the profiled process (`python -c`): it ends as the command does
    os._exit(code)  # (ojax.app.interrupt.end: no teardown of JAX's backend)
sys.exit(code)
"""


def profile_phases(stamps: dict, spent: dict, config: dict, start: float, end: float) -> dict:
    """The seconds of each phase of a profiled run (see the module doc), and their sum."""
    programs = (config.get("programs") or {}).get("total") or {}
    loads = sum(programs.get(k, 0.0) for k in ("trace_seconds", "lower_seconds", "compile_seconds"))
    outputs_start = stamps.get("outputs_start", stamps["done"])
    phases = {
        "start-up": stamps["wrapper"] - start,
        "imports": stamps["imported"] - stamps["wrapper"],
        "program loads": loads,
        "experiment": outputs_start - stamps["imported"] - loads,
        "outputs": spent["outputs"] - spent["figures"],
        "figures": spent["figures"],
        "exit": end - outputs_start - spent["outputs"],
    }
    return {**phases, "wall": end - start}


def run_once(
    args: list[str], cache: Path, out: Path, profile: Path | None = None
) -> dict[str, Any]:
    """One ``ojax run`` process: wall seconds, peak RSS (GiB), exit status, compile seconds
    (with ``profile``, a file for the wrapper's time stamps: ``row["profile"]``, the phases)."""
    env = dict(os.environ, OJAX_COMPILATION_CACHE=str(cache), PYTHONUNBUFFERED="1")
    cmd = [sys.executable, "-m", "ojax.app.cli", "run", *args, "--out", str(out), "--quiet"]
    if profile is not None:
        env["OJAX_E2E_PROFILE"] = str(profile)
        cmd = [sys.executable, "-c", PROFILED, "run", *args, "--out", str(out), "--quiet"]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    stderr = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    end = time.perf_counter()
    wall = end - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    row: dict[str, Any] = {
        "seconds": wall,
        "peak_rss_gib": usage.ru_maxrss / 2**20,  # Linux: KiB
        "returncode": proc.returncode,
    }
    if proc.returncode != 0:
        row["error"] = stderr.decode(errors="replace")[-2000:]
    config = out / "config.json"
    if config.is_file():
        recorded = json.loads(config.read_text())
        if recorded.get("compile_seconds") is not None:
            row["compile_seconds"] = recorded["compile_seconds"]
        if profile is not None and profile.is_file() and proc.returncode == 0:
            stamps = json.loads(profile.read_text())
            row["profile"] = profile_phases(stamps["stamps"], stamps["spent"], recorded, start, end)
    return row


def bench_case(args: list[str], work: Path, profile: bool = False) -> dict[str, Any]:
    cache = work / "cache"
    cold = run_once(args, cache, work / "cold")
    warm = run_once(args, cache, work / "warm")
    row = {
        "cold_seconds": cold["seconds"],
        "warm_seconds": warm["seconds"],
        "cold_peak_rss_gib": cold["peak_rss_gib"],
        "warm_peak_rss_gib": warm["peak_rss_gib"],
    }
    for name, r in (("cold", cold), ("warm", warm)):
        if "compile_seconds" in r:
            row[f"{name}_compile_seconds"] = r["compile_seconds"]
        if r["returncode"] != 0:
            row[f"{name}_error"] = r["error"]
    if profile:
        profiled = run_once(args, cache, work / "profiled", work / "profile.json")
        if "profile" not in profiled:  # the wrapper failed: say so, never a table left empty
            why = profiled.get("error", "no time stamps written")
            raise RuntimeError(f"the profiled run of {args} failed: {why}")
        row["warm_profile"] = profiled["profile"]
    return row


def profile_table(rows: list[dict[str, Any]]) -> str:
    """Where each profiled warm second goes, a row per case (seconds)."""
    profiled = [r for r in rows if "warm_profile" in r]
    if not profiled:
        return ""
    phases = list(profiled[0]["warm_profile"])
    lines = ["| case | mode | " + " | ".join(phases) + " |", "|---|---|" + "---|" * len(phases)]
    for r in profiled:
        cells = " | ".join(f"{r['warm_profile'][p]:.2f}" for p in phases)
        lines.append(f"| {r['case']} | {r['mode']} | {cells} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the quick mode only")
    parser.add_argument("--out", default="results/bench_e2e")
    parser.add_argument("--only", default="", help="comma-separated experiment names")
    parser.add_argument("--modes", default="quick,full", help="quick, full or both")
    parser.add_argument("--baseline", default=None, help="an earlier bench.json to compare with")
    parser.add_argument(
        "--baseline-note",
        default=None,
        help="what the baseline is (its code, machine, when), shown with the 'before' columns",
    )
    parser.add_argument(
        "--quick-only", default="", help="comma-separated experiments run in the quick mode only"
    )
    parser.add_argument(
        "--profile", action="store_true", help="a third, profiled warm run: where its time goes"
    )
    args = parser.parse_args(argv)
    modes = ["quick"] if args.quick else [m for m in args.modes.split(",") if m]
    for mode in modes:
        if mode not in ("quick", "full"):
            parser.error(f"--modes: {mode!r} is not one of quick, full")
    names = [n for n in args.only.split(",") if n] or list(EXPERIMENTS)
    for name in names:
        if name not in EXPERIMENTS and name not in EXTRA:
            parser.error(f"--only: unknown experiment {name!r}")
    baseline: dict[tuple[str, str], dict[str, Any]] = {}
    if args.baseline:
        for r in json.loads(Path(args.baseline).read_text())["rows"]:
            baseline[(r["case"], r["mode"])] = r

    cases: list[tuple[str, list[str], tuple[float, str] | None]] = []
    for name in names:
        if name in EXTRA:
            experiment, extra, authors = EXTRA[name]
            cases.append((name, [experiment, *extra], authors))
            continue
        cases.append((name, [name], None))
        cases += [(k, [v[0], *v[1]], v[2]) for k, v in EXTRA.items() if v[0] == name]

    rows = []
    for mode in modes:
        for case, cli_args, authors in cases:
            if mode == "full" and cli_args[0] in args.quick_only.split(","):
                continue
            with tempfile.TemporaryDirectory(prefix="ojax-e2e-") as tmp:
                flags = ["--quick"] if mode == "quick" else []
                row = {
                    "case": case,
                    "mode": mode,
                    "command": "ojax run " + " ".join(cli_args + flags),
                }
                row.update(bench_case(cli_args + flags, Path(tmp), args.profile))
            known = authors or AUTHORS.get((case, mode))
            if known is not None and mode == "full":
                row["authors_seconds"] = known[0]
                row["authors_run"] = known[1]
                row["authors_over_cold"] = known[0] / row["cold_seconds"]
            old = baseline.get((case, mode))
            if old is not None:
                row["before_cold_seconds"] = old["cold_seconds"]
                row["before_warm_seconds"] = old["warm_seconds"]
                row["before_cold_peak_rss_gib"] = old["cold_peak_rss_gib"]
            rows.append(row)
            print(
                f"{mode:5s} {case:36s} cold {row['cold_seconds']:7.1f} s  warm "
                f"{row['warm_seconds']:7.1f} s  peak {row['cold_peak_rss_gib']:.2f} / "
                f"{row['warm_peak_rss_gib']:.2f} GiB"
                + ("  FAILED" if "cold_error" in row or "warm_error" in row else ""),
                flush=True,
            )
    info = environment_info()
    given = sys.argv[1:] if argv is None else argv
    report = {
        "benchmark": "e2e",
        "device": info["device"],
        "environment": info,
        "command": shlex.join(["python", "scripts/bench_e2e.py", *given]),
        "rows": rows,
    }
    if args.baseline_note:
        report["before"] = {"code": args.baseline_note}
    if args.profile:
        print("where the warm seconds go (seconds):\n" + profile_table(rows))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench.json").write_text(json.dumps(report, indent=1) + "\n")
    print(f"wrote {out / 'bench.json'}")
    return 1 if any("cold_error" in r or "warm_error" in r for r in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
