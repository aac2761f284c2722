"""Writes notebooks/quickstart.ipynb and notebooks/sweeps.ipynb (no outputs committed).

python scripts/make_sweep_notebooks.py
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

ROOT = Path(__file__).resolve().parents[1]

QUICKSTART = [
    new_markdown_cell(
        "# ojax quickstart\n\n"
        "A learner, a run over a stream, then a sweep over seeds and a grid of step sizes with "
        "the mean and a band over seeds. Everything below runs in seconds on a laptop CPU."
    ),
    new_code_cell(
        "import jax\n"
        "import jax.numpy as jnp\n"
        "import numpy as np\n"
        "\n"
        "import ojax\n"
        "from ojax import losses, oco\n"
        "from ojax.envs.streams import linear_regression_stream, unit_ball_stream\n"
        "\n"
        "DIM, STEPS = 10, 2000"
    ),
    new_markdown_cell(
        "## A learner and a run\n\n"
        "A learner is a `NamedTuple` of pure functions; its hyperparameters are a params "
        "pytree of arrays passed at call time. `run_oco` plays the online convex optimization "
        "game in one `lax.scan`: projected online gradient descent on linear losses "
        "$f_t(w) = \\langle w, z_t \\rangle$ over the unit ball."
    ),
    new_code_cell(
        "zs, _ = unit_ball_stream(jax.random.key(0), STEPS, DIM)\n"
        "params = oco.OGDParams(learning_rate=jnp.float32(0.05), radius=jnp.float32(1.0))\n"
        "state, trace = ojax.run_oco(oco.ogd(), params, jnp.zeros(DIM), zs, "
        "losses.linear_objective)\n"
        "print('average loss', float(trace.loss.mean()))"
    ),
    new_markdown_cell(
        "The same learner as a linear predictor on the square loss, over a noisy linear "
        "regression stream (progressive validation: predict, record the loss, then learn)."
    ),
    new_code_cell(
        "predictor = ojax.linear_predictor(oco.ogd('none'), losses.square, np.zeros(DIM, "
        "np.float32))\n"
        "xs, ys = linear_regression_stream(jax.random.key(1), STEPS, DIM)\n"
        "_, trace = ojax.run(predictor, params, xs, ys, losses.square)\n"
        "print('average square loss', float(trace.loss.mean()))"
    ),
    new_markdown_cell(
        "## A sweep over seeds and step sizes\n\n"
        "`ojax.sweep.sweep` takes the run of ONE seed and ONE step size, a grid (a dict of "
        "named axes, expanded as a product) and a number of seeds, and vmaps every "
        "combination (chunked to a memory budget, compiled once)."
    ),
    new_code_cell(
        "from ojax.sweep import sweep\n"
        "\n"
        "def regression_run(params, data, key):\n"
        "    xs, ys = linear_regression_stream(key, STEPS, DIM)\n"
        "    p = oco.OGDParams(params['learning_rate'], jnp.float32(1.0))\n"
        "    _, trace = ojax.run(predictor, p, xs, ys, losses.square)\n"
        "    return {'average_loss': jnp.cumsum(trace.loss) / jnp.arange(1, STEPS + 1)}\n"
        "\n"
        "grid = {'learning_rate': np.geomspace(0.01, 1.0, 5).astype(np.float32)}\n"
        "res = sweep(regression_run, grid, num_seeds=16, key=jax.random.key(0), "
        "num_steps=STEPS)\n"
        "print(res.axes, res.outputs['average_loss'].shape)"
    ),
    new_markdown_cell("The average loss against the step, mean over seeds with a +-std band:"),
    new_code_cell(
        "from ojax.plotting import curves_figure\n"
        "\n"
        "curves = {f'lr={lr:.3g}': res.outputs['average_loss'][:, i]\n"
        "          for i, lr in enumerate(grid['learning_rate'])}\n"
        "fig = curves_figure(np.arange(1, STEPS + 1), curves, title='OGD, square loss',\n"
        "                    xlabel='step t', ylabel='average loss', logx=True, logy=True)\n"
        "fig"
    ),
    new_code_cell(
        "best = res.best(lambda o: o['average_loss'][..., -1])\n"
        "print('best learning rate', float(best['params']['learning_rate']), "
        "'final average loss', round(best['value'], 4))\n"
        "summary = res.summary()\n"
        "print('median over seeds of the final average loss per step size:',\n"
        "      summary['quantiles']['average_loss'][1][:, -1].round(4))"
    ),
]

SWEEPS = [
    new_markdown_cell(
        "# Sweeps: chunked, sharded, resumed\n\n"
        "A larger sweep split into chunks by a memory budget, sharded over 4 devices, stored "
        "chunk by chunk, interrupted, and resumed without recomputing what was finished. On a "
        "CPU, 4 virtual devices are made with an XLA flag that must be set before jax is "
        "imported (on a machine with several GPUs, skip it)."
    ),
    new_code_cell(
        "import os\n"
        "os.environ.setdefault('XLA_FLAGS', '--xla_force_host_platform_device_count=4')\n"
        "\n"
        "import tempfile\n"
        "from pathlib import Path\n"
        "\n"
        "import jax\n"
        "import jax.numpy as jnp\n"
        "import numpy as np\n"
        "\n"
        "import ojax\n"
        "from ojax import losses, oco\n"
        "from ojax.envs.streams import linear_regression_stream\n"
        "from ojax.sweep import sweep\n"
        "\n"
        "print(jax.devices())"
    ),
    new_code_cell(
        "DIM, STEPS = 10, 1000\n"
        "# OGD projected on the ball of radius `radius`, as a linear predictor\n"
        "predictor = ojax.linear_predictor(oco.ogd(), losses.square, np.zeros(DIM, np.float32))\n"
        "\n"
        "def regression_run(params, data, key):\n"
        "    xs, ys = linear_regression_stream(key, STEPS, DIM)\n"
        "    p = oco.OGDParams(params['learning_rate'], params['radius'])\n"
        "    _, trace = ojax.run(predictor, p, xs, ys, losses.square)\n"
        "    return {'final': trace.loss.mean(),\n"
        "            'curve': (jnp.cumsum(trace.loss) / jnp.arange(1, STEPS + 1))[::10]}\n"
        "\n"
        "grid = {'learning_rate': np.geomspace(0.003, 1.0, 8).astype(np.float32),\n"
        "        'radius': np.array([0.5, 5.0], np.float32)}\n"
        "NUM_SEEDS = 32  # 32 x 8 x 2 = 512 streams\n"
        "BUDGET = 2 * 2**20  # 2 MiB per device: several chunks"
    ),
    new_markdown_cell(
        "## Chunked and sharded\n\n"
        "The chunk size comes from the budget and an estimate of one combination's memory; "
        "each chunk's batch axis is split over the 4 devices. The function compiles once."
    ),
    new_code_cell(
        "full = sweep(regression_run, grid, num_seeds=NUM_SEEDS, key=jax.random.key(0),\n"
        "             memory_budget=BUDGET, num_steps=STEPS)\n"
        "s = full.stats\n"
        "print(f'{s.num_combinations} combinations, {s.num_chunks} chunks of {s.chunk_size} '\n"
        "      f'on {s.num_devices} devices; ~{s.estimated_bytes_per_combination} bytes per '\n"
        "      f'combination; compile {s.compile_seconds:.2f} s')"
    ),
    new_markdown_cell(
        "## Interrupted, then resumed\n\n"
        "With `out_dir`, each finished chunk is written atomically under a folder named by a "
        "hash of the configuration. Here the run is stopped after 3 chunks (as Ctrl-C would); "
        "the re-run loads them and computes only the rest."
    ),
    new_code_cell(
        "store = Path(tempfile.mkdtemp())\n"
        "\n"
        "def stop_after_three(info):\n"
        "    if info['computed'] == 3:\n"
        "        raise KeyboardInterrupt\n"
        "\n"
        "try:\n"
        "    sweep(regression_run, grid, num_seeds=NUM_SEEDS, key=jax.random.key(0),\n"
        "          memory_budget=BUDGET, out_dir=store, on_chunk=stop_after_three, "
        "progress=False)\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted; finished chunks:',\n"
        "          sorted(p.name for p in store.glob('*/chunk-*.npz')))"
    ),
    new_code_cell(
        "resumed = sweep(regression_run, grid, num_seeds=NUM_SEEDS, key=jax.random.key(0),\n"
        "                memory_budget=BUDGET, out_dir=store, num_steps=STEPS)\n"
        "print('loaded', resumed.stats.chunks_loaded, 'computed', "
        "resumed.stats.chunks_computed)\n"
        "print('identical to the uninterrupted run:',\n"
        "      all(np.array_equal(resumed.outputs[k], full.outputs[k], equal_nan=True)\n"
        "          for k in full.outputs))"
    ),
    new_markdown_cell("## Summaries over seeds"),
    new_code_cell(
        "mean, std = resumed.mean()['final'], resumed.std()['final']\n"
        "for j, radius in enumerate(grid['radius']):\n"
        "    row = ', '.join(f'{m:.3f}+-{s:.3f}' for m, s in zip(mean[:, j], std[:, j]))\n"
        "    print(f'radius {radius:g}: {row}')\n"
        "best = resumed.best('final')\n"
        "print('best', {k: float(v) for k, v in best['params'].items()}, round(best['value'], 4))"
    ),
    new_code_cell(
        "import matplotlib.pyplot as plt\n"
        "from ojax.plotting import band\n"
        "\n"
        "fig, ax = plt.subplots(figsize=(5, 3.5))\n"
        "for j, radius in enumerate(grid['radius']):\n"
        "    band(ax, grid['learning_rate'], resumed.outputs['final'][:, :, j], "
        "f'radius {radius:g}', marker='o')\n"
        "ax.set(xscale='log', yscale='log', xlabel='learning rate', ylabel='average loss')\n"
        "ax.legend()\n"
        "fig"
    ),
]


def write(name: str, cells: list) -> None:
    notebook = new_notebook(cells=cells)
    notebook.metadata["kernelspec"] = {
        "display_name": "Python 3",
        "language": "python",
        "name": "python3",
    }
    path = ROOT / "notebooks" / name
    path.parent.mkdir(exist_ok=True)
    nbformat.write(notebook, path)
    print(f"wrote {path}")


if __name__ == "__main__":
    write("quickstart.ipynb", QUICKSTART)
    write("sweeps.ipynb", SWEEPS)
