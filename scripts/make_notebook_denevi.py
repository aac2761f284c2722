"""Writes notebooks/denevi2020.ipynb (no outputs): python scripts/make_notebook_denevi.py"""

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

cells = [
    new_markdown_cell(
        "# Parameter-free learning of multiple low-variance tasks\n\n"
        "Denevi, Stamos & Pontil (2020). "
        "A small run of the `denevi2020-synthetic` experiment: 400 tasks would be the paper's "
        "size; here 80 tasks and 3 seeds, so it runs in well under a minute. Every method is one "
        "jitted `lax.scan` vmapped over seeds; the tuned OGD baselines evaluate their whole "
        "20 x 20 step grid as one vmap."
    ),
    new_code_cell(
        "from pathlib import Path\n\n"
        "import jax\n"
        "import jax.numpy as jnp\n\n"
        "from ojax import envs, meta\n"
        "from ojax.experiments import EXPERIMENTS, ExperimentConfig"
    ),
    new_markdown_cell("## The environment: task vectors around 4 * 1, signal-to-noise ratio 1"),
    new_code_cell(
        "tasks, w = envs.low_variance_tasks(jax.random.key(0), num_tasks=5)\n"
        "print(tasks.x_train.shape, tasks.x_test.shape)\n"
        "print(jnp.round(w[:2], 2))"
    ),
    new_markdown_cell("## One learner by hand: Aggressive (ONS bettors) against ITL"),
    new_code_cell(
        "tasks, _ = envs.low_variance_tasks(jax.random.key(1), num_tasks=100)\n"
        "one = jnp.asarray(1.0)\n"
        "agg = meta.run_meta(meta.aggressive(10), meta.MetaParams(one, one, one), tasks)\n"
        "itl = meta.run_meta(meta.biased_within_task(10),\n"
        "                    meta.FixedBiasParams(jnp.zeros(10), one, one), tasks)\n"
        "for name, tr in [('Aggressive', agg), ('ITL', itl)]:\n"
        "    curve = meta.cumulative_error(tr.errors, tasks.mask_train)\n"
        "    print(f'{name:10s} final cumulative error {curve[-1]:.3f}')\n"
        "print('learned bias', jnp.round(agg.biases[-1], 2))"
    ),
    new_markdown_cell("## The experiment (quick configuration) and its three panels"),
    new_code_cell(
        "config = ExperimentConfig('denevi2020-synthetic', seeds=3, out=Path('unused'),\n"
        "                          quick=True, quiet=True)\n"
        "result = EXPERIMENTS['denevi2020-synthetic'].load()(config)\n"
        "for r in result.rows:\n"
        "    if r.metric == 'cumulative_error':\n"
        "        print(f'{r.method:14s} {r.mean:.3f} +- {r.std:.3f}')"
    ),
    new_code_cell(
        "from IPython.display import display\n\n"
        "for name, fig in result.figures.items():\n"
        "    display(fig)"
    ),
]
nb = new_notebook(
    cells=cells,
    metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
)
nbformat.write(nb, "notebooks/denevi2020.ipynb")
