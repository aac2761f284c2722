"""A sweep run in a subprocess by tests/test_sweep.py (interruption and sharding tests).

python tests/sweep_worker.py resume OUT_DIR RESULT.npz [--delay SECONDS]
    a 6-chunk sweep stored under OUT_DIR; sleeps DELAY after each stored chunk (so that the
    test can SIGKILL it mid-run); prints its stats as one JSON line and saves the outputs.
python tests/sweep_worker.py sharded RESULT.npz
    under XLA_FLAGS=--xla_force_host_platform_device_count=4: the same sweep on 1 device
    and sharded over 4 devices (the same batch per device), in chunks of combinations and in
    chunks of whole seeds; saves them. Then a function that calls LAPACK (`eigh`) over the 4
    devices, refused, and on 1 device.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import sys
import time

import jax
import numpy as np

from ojax import InputError, losses, oco, run_oco
from ojax.sweep import EngineOptions, sweep

NUM_STEPS, DIM = 30, 3
GRID = {"learning_rate": [0.02, 0.1, 0.5, 2.0], "radius": [0.5, 3.0]}
NUM_SEEDS = 3  # 3 x 4 x 2 = 24 combinations
CHUNK = 4  # 6 chunks


def ogd_losses(params, data, key):
    """OGD on linear losses z_t = data + noise: the per-step losses and their sum."""
    zs = data[None, :] + jax.random.normal(key, (NUM_STEPS, DIM))
    p = oco.OGDParams(params["learning_rate"], params["radius"])
    _, trace = run_oco(oco.ogd(), p, np.zeros(DIM, np.float32), zs, losses.linear_objective)
    return {"loss": trace.loss, "total": trace.loss.sum()}


DATA = np.linspace(-1.0, 1.0, DIM, dtype=np.float32)


def run(out_dir=None, delay=0.0, **kwargs):
    def pause(info):
        if delay:
            time.sleep(delay)

    return sweep(
        ogd_losses,
        GRID,
        num_seeds=NUM_SEEDS,
        key=jax.random.key(3),
        data=DATA,
        chunk_size=kwargs.pop("chunk_size", CHUNK),
        out_dir=out_dir,
        options=EngineOptions(quiet=True, **kwargs),
        on_chunk=pause,
    )


def main(argv):
    if argv[0] == "resume":
        out_dir, target = argv[1], argv[2]
        delay = float(argv[argv.index("--delay") + 1]) if "--delay" in argv else 0.0
        res = run(out_dir, delay)
        np.savez(target, **res.outputs)
        print(json.dumps(dataclasses.asdict(res.stats)), flush=True)
    elif argv[0] == "sharded":
        target = argv[1]
        assert jax.device_count() == 4, jax.devices()
        one = run(devices=1, chunk_size=2)  # 2 combinations per device
        four = run(devices=4, chunk_size=8)  # 2 combinations per device, sharded
        # chunks of whole seeds (8 combinations each): one seed per device
        seeds = functools.partial(
            sweep, ogd_losses, GRID, num_seeds=4, key=jax.random.key(3), data=DATA
        )
        seeds_one = seeds(chunk_size=8, options=EngineOptions(quiet=True, devices=1))
        seeds_four = seeds(chunk_size=32, options=EngineOptions(quiet=True, devices=4))
        arrays = {}
        runs = (("one", one), ("four", four), ("seeds_one", seeds_one), ("seeds_four", seeds_four))
        for label, res in runs:
            for name, value in res.outputs.items():
                arrays[f"{label}/{name}"] = value
        # The compiled chunk's outputs are split over the 4 devices along the batch axis.
        from ojax.sweep import chunk

        compiled, _ = list(chunk.COMPILED.values())[-1]
        out = jax.tree.leaves(compiled.output_shardings)[0]
        np.savez(target, **arrays)

        def smallest_eigenvalue(params, data, key):
            a = jax.random.normal(key, (3, 3))
            return jax.numpy.linalg.eigh(a @ a.T + params["learning_rate"])[0][0]

        run_eigh = functools.partial(sweep, smallest_eigenvalue, GRID, key=jax.random.key(0))
        refused = ""
        try:
            run_eigh(num_seeds=4, options=EngineOptions(quiet=True, devices=4))
        except InputError as error:
            refused = str(error)
        alone = run_eigh(num_seeds=4, options=EngineOptions(quiet=True, devices=1))
        print(
            json.dumps(
                {
                    "devices": four.stats.num_devices,
                    "chunk_size": four.stats.chunk_size,
                    "output_devices": len(out.device_set),
                    "spec": str(out.spec),
                    "lapack_refused": refused,
                    "lapack_alone_finite": bool(np.isfinite(alone.outputs).all()),
                }
            ),
            flush=True,
        )
    else:  # pragma: no cover
        raise SystemExit(f"unknown mode {argv[0]!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
