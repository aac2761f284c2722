"""One process of a multi-process ``ojax`` command, for tests/test_distributed.py.

python tests/distributed_worker.py [--delay SECONDS] -- ARGS...
    runs ``ojax ARGS...`` (``ojax.cli.main``), sleeping SECONDS after each chunk file it
    stores, so that a test can kill a process midway; exits with main's status.
"""

from __future__ import annotations

import sys
import time


def main(argv: list[str]) -> int:
    split = argv.index("--")
    options, args = argv[:split], argv[split + 1 :]
    delay = float(options[options.index("--delay") + 1]) if "--delay" in options else 0.0
    if delay:
        from ojax.sweep import engine

        save = engine.save_chunk

        def slow_save(*a, **k):
            path = save(*a, **k)
            time.sleep(delay)
            return path

        engine.save_chunk = slow_save
    from ojax.cli import main as ojax_main

    return ojax_main(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
