"""Writes notebooks/denevi2020.ipynb (no outputs): python scripts/make_notebook_denevi.py"""

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

cells = [
    new_markdown_cell(
        "# Parameter-free learning of multiple low-variance tasks\n\n"
        "Denevi, Stamos & Pontil (2020). The meta-learners of `ojax.meta` are multi-task "
        "learners composed of OCO learners: a within-task learner around a bias, and a meta "
        "learner that plays the bias. `ojax.meta.run_meta` runs them with `ojax.run` (one "
        "jitted `lax.scan`); seeds, task orders and grids are a `jax.vmap`. A small run of the "
        "`denevi2020-synthetic` experiment follows: 400 tasks would be the paper's size; here 80 "
        "tasks and 3 seeds, so it runs in about a minute."
    ),
    new_code_cell(
        "from pathlib import Path\n\n"
        "import jax\n"
        "import jax.numpy as jnp\n"
        "import numpy as np\n"
        "import optax\n\n"
        "import ojax\n"
        "from ojax import envs, meta, parameter_free\n"
        "from ojax.experiments import EXPERIMENTS, ExperimentConfig"
    ),
    new_markdown_cell("## The environment: task vectors around 4 * 1, signal-to-noise ratio 1"),
    new_code_cell(
        "tasks, w = envs.low_variance_tasks(jax.random.key(0), num_tasks=5)\n"
        "print(tasks.x_train.shape, tasks.x_test.shape)\n"
        "print(jnp.round(w[:2], 2))"
    ),
    new_markdown_cell(
        "## Aggressive (ONS bettors) against ITL, and the bias it learns\n\n"
        "The trace's `loss` holds the online errors, `task` the test error of each task's "
        "averaged iterate and the bias after each task."
    ),
    new_code_cell(
        "tasks, _ = envs.low_variance_tasks(jax.random.key(1), num_tasks=100)\n"
        "agg = meta.run_meta(meta.aggressive(10), meta.MetaParams.paper(), tasks)\n"
        "itl = meta.run_meta(meta.biased_within_task(10), meta.FixedBiasParams.paper(0.0), tasks,\n"
        "                    independent_tasks=True)\n"
        "for name, tr in [('Aggressive', agg), ('ITL', itl)]:\n"
        "    curve = meta.cumulative_error(tr.loss, tr.mask)\n"
        "    print(f'{name:10s} final cumulative error {curve[-1]:.3f}')\n"
        "print('learned bias', jnp.round(agg.task.bias[-1], 2))"
    ),
    new_markdown_cell(
        "## Your own tasks: ragged sizes, several random task orders\n\n"
        "`TaskBlock.from_tasks` pads tasks of any sizes; a random task order per seed is a vmap."
    ),
    new_code_cell(
        "rng = np.random.default_rng(0)\n"
        "own = []\n"
        "for n in rng.integers(5, 30, size=40):\n"
        "    x = rng.normal(size=(n + 5, 10))\n"
        "    x /= np.linalg.norm(x, axis=1, keepdims=True)\n"
        "    y = x @ (4.0 + rng.normal(size=10)) + rng.normal(size=n + 5)\n"
        "    own.append((x[:n], y[:n], x[n:], y[n:]))\n"
        "block = meta.TaskBlock.from_tasks(own)\n"
        "orders = jax.vmap(lambda k: jax.random.permutation(k, block.num_tasks))(\n"
        "    jax.random.split(jax.random.key(0), 8))\n"
        "kt = parameter_free.direction_magnitude('kt')\n"
        "methods = {\n"
        "    'Aggressive': (meta.aggressive(10), meta.MetaParams.paper()),\n"
        "    'Lazy_KT': (meta.lazy(10, kt, kt), meta.MetaParams.paper()),\n"
        "    'ITL': (meta.biased_within_task(10), meta.FixedBiasParams.paper(0.0)),\n"
        "    'best bias': (meta.biased_within_task(10),\n"
        "                  meta.FixedBiasParams.paper(meta.best_bias_in_hindsight(block))),\n"
        "}\n"
        "for name, (learner, params) in methods.items():\n"
        "    trace = jax.vmap(lambda o: meta.run_meta(learner, params, block.reorder(o)))(orders)\n"
        "    final = meta.cumulative_error(trace.loss, trace.mask)[:, -1]\n"
        "    print(f'{name:10s} {final.mean():.3f} +- {final.std():.3f}')"
    ),
    new_markdown_cell(
        "## Any OCO learner inside: AdaGrad (optax) in both roles, a grid of steps in one vmap"
    ),
    new_code_cell(
        "ada = ojax.optax_learner(optax.adagrad)\n"
        "grid = meta.MetaParams({'learning_rate': jnp.array([0.1, 1.0, 3.0])},\n"
        "                       {'learning_rate': jnp.array([0.1, 1.0, 3.0])})\n"
        "learner = meta.aggressive(10, ada, ada)\n"
        "traces = jax.vmap(lambda p: meta.run_meta(learner, p, tasks))(grid)\n"
        "print(meta.cumulative_error(traces.loss, traces.mask)[:, -1].round(3))"
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
