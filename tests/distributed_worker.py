"""One process of a multi-process ``ojax`` command, for tests/test_distributed.py.

python tests/distributed_worker.py [--delay SECONDS] [--small] -- ARGS...
    runs ``ojax ARGS...`` (``ojax.app.cli.main``), sleeping SECONDS after each chunk it
    computes, so that a test can kill a process midway; exits at once with main's status.
    ``--small``: `denevi2020-synthetic --quick` runs two of its methods (:func:`small_denevi`).
"""

from __future__ import annotations

import os
import sys
import time


def small_denevi() -> None:
    """`denevi2020-synthetic --quick` with two methods, one of each kind of sweep (ITL: a run
    cell, Aggressive_SS: a tuned grid cell), on 20 tasks: a run of several sweeps that compiles
    in a fraction of the eight methods' time."""
    import ojax.experiments.denevi2020 as denevi

    denevi.PF_METHODS = {"ITL": denevi.PF_METHODS["ITL"]}
    denevi.SS_METHODS = {"Aggressive_SS": denevi.SS_METHODS["Aggressive_SS"]}
    denevi.QUICK_SYNTHETIC = denevi.QUICK_SYNTHETIC._replace(num_tasks=20)


def main(argv: list[str]) -> int:
    split = argv.index("--")
    options, args = argv[:split], argv[split + 1 :]
    delay = float(options[options.index("--delay") + 1]) if "--delay" in options else 0.0
    if delay:
        from ojax.sweep import engine

        fetch = engine._fetch

        def slow_fetch(*a, **k):
            values = fetch(*a, **k)
            time.sleep(delay)
            return values

        engine._fetch = slow_fetch
    if "--small" in options:
        small_denevi()
    from ojax.app.cli import main as ojax_main

    return ojax_main(args)


if __name__ == "__main__":
    code = main(sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # as the `ojax` command ends (ojax.app.interrupt.end)
