"""Writes every notebook under notebooks/ and executes it in place, so that the committed
notebooks show their outputs (figures included) where the code is hosted.

    python scripts/make_notebooks.py            # write and execute all six (a few minutes)
    python scripts/make_notebooks.py --no-run   # write them without outputs
    python scripts/make_notebooks.py sweeps     # only notebooks whose name contains "sweeps"

Each notebook is executed by nbclient in a fresh kernel from a temporary folder (nothing is left
in the repository), with matplotlib's inline backend; figures are stored as PNG (80 dpi).
tests/test_notebooks.py executes copies of them again in CI.
"""

from __future__ import annotations

import argparse
import os
import re
import tempfile
import time
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

ROOT = Path(__file__).resolve().parents[1]
DPI = 80  # figures stored in the notebooks
KERNELSPEC = {"display_name": "Python 3", "language": "python", "name": "python3"}


def cells(text: str) -> list:
    """Notebook cells from ``text``: a line ``# %%`` starts a code cell, ``# %% [markdown]`` a
    markdown cell (the percent format, markdown left uncommented)."""
    out = []
    for part in re.split(r"^(# %%(?: \[markdown\])?)$", text.strip("\n"), flags=re.M)[1:]:
        if part.startswith("# %%"):
            kind = new_markdown_cell if part.endswith("[markdown]") else new_code_cell
        else:
            out.append(kind(part.strip("\n")))
    return out


QUICKSTART = cells(
    r"""
# %% [markdown]
# ojax quickstart

A learner, a run over a stream, then a sweep over seeds and a grid of step sizes with the mean
and a band over seeds. Everything below runs in seconds on a laptop CPU.
# %%
import jax
import jax.numpy as jnp
import numpy as np

import ojax
from ojax import losses, oco
from ojax.envs.streams import linear_regression_stream, unit_ball_stream

DIM, STEPS = 10, 2000
# %% [markdown]
## A learner and a run

A learner is a `NamedTuple` of pure functions; its hyperparameters are a params pytree of arrays
passed at call time. `run_oco` plays the online convex optimization game in one `lax.scan`:
projected online gradient descent on linear losses $f_t(w) = \langle w, z_t \rangle$ over the
unit ball.
# %%
zs, _ = unit_ball_stream(jax.random.key(0), STEPS, DIM)
params = oco.OGDParams(learning_rate=jnp.float32(0.05), radius=jnp.float32(1.0))
state, trace = ojax.run_oco(oco.ogd(), params, jnp.zeros(DIM), zs, losses.linear_objective)
print('average loss', float(trace.loss.mean()))
# %% [markdown]
The same learner as a linear predictor on the square loss, over a noisy linear regression stream
(progressive validation: predict, record the loss, then learn).
# %%
predictor = ojax.linear_predictor(oco.ogd('none'), losses.square, np.zeros(DIM, np.float32))
xs, ys = linear_regression_stream(jax.random.key(1), STEPS, DIM)
_, trace = ojax.run(predictor, params, xs, ys, losses.square)
print('average square loss', float(trace.loss.mean()))
# %% [markdown]
## A sweep over seeds and step sizes

`ojax.sweep.sweep` takes the run of ONE seed and ONE step size, a grid (a dict of named axes,
expanded as a product) and a number of seeds, and vmaps every combination (chunked to a memory
budget, compiled once).
# %%
from ojax.sweep import sweep

def regression_run(params, data, key):
    xs, ys = linear_regression_stream(key, STEPS, DIM)
    p = oco.OGDParams(params['learning_rate'], jnp.float32(1.0))
    _, trace = ojax.run(predictor, p, xs, ys, losses.square)
    return {'average_loss': jnp.cumsum(trace.loss) / jnp.arange(1, STEPS + 1)}

grid = {'learning_rate': np.geomspace(0.01, 1.0, 5).astype(np.float32)}
res = sweep(regression_run, grid, num_seeds=16, key=jax.random.key(0), num_steps=STEPS)
print(res.axes, res.outputs['average_loss'].shape)
# %% [markdown]
The average loss against the step, mean over seeds with a +-std band:
# %%
import matplotlib.pyplot as plt

from ojax.plotting import curves_figure

curves = {f'lr={lr:.3g}': res.outputs['average_loss'][:, i]
          for i, lr in enumerate(grid['learning_rate'])}
fig = curves_figure(np.arange(1, STEPS + 1), curves, title='OGD, square loss',
                    xlabel='step t', ylabel='average loss', logx=True, logy=True)
plt.show()
# %%
best = res.best(lambda o: o['average_loss'][..., -1])
print('best learning rate', float(best['params']['learning_rate']),
      'final average loss', round(best['value'], 4))
summary = res.summary()
print('median over seeds of the final average loss per step size:',
      summary['quantiles']['average_loss'][1][:, -1].round(4))
# %% [markdown]
## Adversaries that answer the play

An `ojax.Environment` is the other player: `ojax.run_env` runs a learner against it in one
`lax.scan`. The adaptive adversaries of the notes' examples: loss 1 on the expert Hedge weighs
most (example 7), and for OGD the unit loss along its own play (example 6). Both learners stay
under their bounds, `sqrt(T ln(m) / 2)` and `B G sqrt(T)`, tuned for the last horizon.
# %%
from ojax import metrics
from ojax.envs import adversaries

m, T = 10, STEPS
hedge_params = oco.HedgeParams(jnp.float32(np.sqrt(8 * np.log(m) / T)))
_, _, hedge_trace = ojax.run_env(
    oco.hedge(), hedge_params, adversaries.answer(adversaries.heaviest), None, jax.random.key(0),
    T, losses.linear_objective, x0=jnp.full(m, 1 / m), record=lambda s: s.x)
ogd_params = oco.OGDParams(jnp.float32(1 / np.sqrt(T)), jnp.float32(1.0))
_, _, ogd_trace = ojax.run_env(
    oco.ogd(), ogd_params, adversaries.answer(adversaries.toward), None, jax.random.key(0),
    T, losses.linear_objective, x0=jnp.zeros(DIM), record=lambda s: s.x)
t = np.arange(1, T + 1)
hedge_regret = metrics.regret_to_best(hedge_trace.loss, hedge_trace.record, 'linear', 'simplex')
ogd_regret = metrics.regret_to_best(ogd_trace.loss, ogd_trace.record, 'linear', 'l2_ball')
fig, ax = plt.subplots(figsize=(6, 3.5))
ax.plot(t, hedge_regret, label='Hedge vs the heaviest-expert adversary')
ax.plot(t, np.sqrt(T * np.log(m) / 2) + 0 * t, '--', label='its bound at T')
ax.plot(t, ogd_regret, label='OGD vs the adversary along its play')
ax.plot(t, np.sqrt(T) + 0 * t, ':', label='its bound at T')
ax.set(xlabel='step t', ylabel='regret', xscale='log')
ax.legend(fontsize=7)
plt.show()
print('final regret / bound: Hedge', round(float(hedge_regret[-1]) / np.sqrt(T * np.log(m) / 2), 3),
      'OGD', round(float(ogd_regret[-1]) / np.sqrt(T), 3))
"""
)

SWEEPS = cells(
    r"""
# %% [markdown]
# Sweeps: chunked, sharded, resumed

A larger sweep split into chunks by a memory budget, sharded over 4 devices, stored chunk by
chunk, interrupted, and resumed without recomputing what was finished. On a CPU, 4 virtual
devices are made with an XLA flag that must be set before jax is imported (on a machine with
several GPUs, skip it).
# %%
import os
os.environ.setdefault('XLA_FLAGS', '--xla_force_host_platform_device_count=4')

import tempfile
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

import ojax
from ojax import losses, oco
from ojax.envs.streams import linear_regression_stream
from ojax.sweep import EngineOptions, sweep

print(jax.devices())
# %%
DIM, STEPS = 10, 1000
# OGD projected on the ball of radius `radius`, as a linear predictor
predictor = ojax.linear_predictor(oco.ogd(), losses.square, np.zeros(DIM, np.float32))

def regression_run(params, data, key):
    xs, ys = linear_regression_stream(key, STEPS, DIM)
    p = oco.OGDParams(params['learning_rate'], params['radius'])
    _, trace = ojax.run(predictor, p, xs, ys, losses.square)
    return {'final': trace.loss.mean(),
            'curve': (jnp.cumsum(trace.loss) / jnp.arange(1, STEPS + 1))[::10]}

grid = {'learning_rate': np.geomspace(0.003, 1.0, 8).astype(np.float32),
        'radius': np.array([0.5, 5.0], np.float32)}
NUM_SEEDS = 32  # 32 x 8 x 2 = 512 streams
BUDGET = 2 * 2**20  # 2 MiB per device: several chunks
OPTIONS = EngineOptions(memory_budget=BUDGET)  # how the engine computes (no number changes)
# %% [markdown]
## Chunked and sharded

The chunk size comes from the budget and an estimate of one combination's memory; each chunk's
batch axis is split over the 4 devices. The function compiles once.
# %%
full = sweep(regression_run, grid, num_seeds=NUM_SEEDS, key=jax.random.key(0),
             options=OPTIONS, num_steps=STEPS)
s = full.stats
print(f'{s.num_combinations} combinations, {s.num_chunks} chunks of {s.chunk_size} '
      f'on {s.num_devices} devices; ~{s.estimated_bytes_per_combination} bytes per '
      f'combination; compile {s.compile_seconds:.2f} s')
# %% [markdown]
## Interrupted, then resumed

With `out_dir`, each finished chunk is written atomically under a folder named by a hash of the
configuration. Here the run is stopped after 3 chunks (as Ctrl-C would); the re-run loads them
and computes only the rest.
# %%
store = Path(tempfile.mkdtemp())

def stop_after_three(info):
    if info['computed'] == 3:
        raise KeyboardInterrupt

try:
    sweep(regression_run, grid, num_seeds=NUM_SEEDS, key=jax.random.key(0),
          options=EngineOptions(memory_budget=BUDGET, quiet=True), out_dir=store,
          on_chunk=stop_after_three)
except KeyboardInterrupt:
    print('interrupted; finished chunks:',
          sorted(p.name for p in store.glob('*/chunk-*.npz')))
# %%
resumed = sweep(regression_run, grid, num_seeds=NUM_SEEDS, key=jax.random.key(0),
                options=OPTIONS, out_dir=store, num_steps=STEPS)
print('loaded', resumed.stats.chunks_loaded, 'computed', resumed.stats.chunks_computed)
print('identical to the uninterrupted run:',
      all(np.array_equal(resumed.outputs[k], full.outputs[k], equal_nan=True)
          for k in full.outputs))
# %% [markdown]
## Summaries over seeds
# %%
mean, std = resumed.mean()['final'], resumed.std()['final']
for j, radius in enumerate(grid['radius']):
    row = ', '.join(f'{m:.3f}+-{s:.3f}' for m, s in zip(mean[:, j], std[:, j]))
    print(f'radius {radius:g}: {row}')
best = resumed.best('final')
print('best', {k: float(v) for k, v in best['params'].items()}, round(best['value'], 4))
# %%
import matplotlib.pyplot as plt
from ojax.plotting import band

fig, ax = plt.subplots(figsize=(5, 3.5))
for j, radius in enumerate(grid['radius']):
    band(ax, grid['learning_rate'], resumed.outputs['final'][:, :, j], f'radius {radius:g}',
         marker='o')
ax.set(xscale='log', yscale='log', xlabel='learning rate', ylabel='average loss')
ax.legend()
plt.show()
"""
)

DENEVI2020 = cells(
    r"""
# %% [markdown]
# Parameter-free learning of multiple low-variance tasks

Denevi, Stamos & Pontil (2020). The meta-learners of `ojax.meta` are multi-task learners
composed of OCO learners: a within-task learner around a bias, and a meta learner that plays the
bias. `ojax.meta.run_meta` runs them with `ojax.run` (one jitted `lax.scan`); seeds, task orders
and grids are a `jax.vmap`. A small run of the `denevi2020-synthetic` experiment follows: 400
tasks would be the paper's size; here 80 tasks and 3 seeds, so it runs in about a minute.
# %%
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import optax

import ojax
from ojax import envs, meta, parameter_free
from ojax.experiments import EXPERIMENTS
# %% [markdown]
## The environment: task vectors around 4 * 1, signal-to-noise ratio 1
# %%
tasks, w = envs.low_variance_tasks(jax.random.key(0), num_tasks=5)
print(tasks.x_train.shape, tasks.x_test.shape)
print(jnp.round(w[:2], 2))
# %% [markdown]
## Aggressive (ONS bettors) against ITL, and the bias it learns

The trace's `loss` holds the online errors, `task` the test error of each task's averaged
iterate and the bias after each task.
# %%
tasks, _ = envs.low_variance_tasks(jax.random.key(1), num_tasks=100)
agg = meta.run_meta(meta.aggressive(10), meta.MetaParams.paper(), tasks)
itl = meta.run_meta(meta.biased_within_task(10), meta.FixedBiasParams.paper(0.0), tasks,
                    independent_tasks=True)
for name, tr in [('Aggressive', agg), ('ITL', itl)]:
    curve = meta.cumulative_error(tr.loss, tr.mask)
    print(f'{name:10s} final cumulative error {curve[-1]:.3f}')
print('learned bias', jnp.round(agg.task.bias[-1], 2))
# %% [markdown]
## Your own tasks: ragged sizes, several random task orders

`TaskBlock.from_tasks` pads tasks of any sizes; a random task order per seed is a vmap.
# %%
rng = np.random.default_rng(0)
own = []
for n in rng.integers(5, 30, size=40):
    x = rng.normal(size=(n + 5, 10))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    y = x @ (4.0 + rng.normal(size=10)) + rng.normal(size=n + 5)
    own.append((x[:n], y[:n], x[n:], y[n:]))
block = meta.TaskBlock.from_tasks(own)
orders = jax.vmap(lambda k: jax.random.permutation(k, block.num_tasks))(
    jax.random.split(jax.random.key(0), 8))
kt = parameter_free.direction_magnitude('kt')
methods = {
    'Aggressive': (meta.aggressive(10), meta.MetaParams.paper()),
    'Lazy_KT': (meta.lazy(10, kt, kt), meta.MetaParams.paper()),
    'ITL': (meta.biased_within_task(10), meta.FixedBiasParams.paper(0.0)),
    'best bias': (meta.biased_within_task(10),
                  meta.FixedBiasParams.paper(meta.best_bias_in_hindsight(block))),
}
for name, (learner, params) in methods.items():
    trace = jax.vmap(lambda o: meta.run_meta(learner, params, block.reorder(o)))(orders)
    final = meta.cumulative_error(trace.loss, trace.mask)[:, -1]
    print(f'{name:10s} {final.mean():.3f} +- {final.std():.3f}')
# %% [markdown]
## Any OCO learner inside: AdaGrad (optax) in both roles, a grid of steps in one vmap
# %%
ada = ojax.optax_learner(optax.adagrad)
grid = meta.MetaParams({'learning_rate': jnp.array([0.1, 1.0, 3.0])},
                       {'learning_rate': jnp.array([0.1, 1.0, 3.0])})
learner = meta.aggressive(10, ada, ada)
traces = jax.vmap(lambda p: meta.run_meta(learner, p, tasks))(grid)
print(meta.cumulative_error(traces.loss, traces.mask)[:, -1].round(3))
# %% [markdown]
## The experiment (quick configuration) and its three panels

What `ojax run denevi2020-synthetic --quick --seeds 3` computes, without writing files: the rows
(mean and std over seeds of the final values) and the figures (`figures.draw_result`: what `ojax
run` writes and `ojax plot` redraws from the files).
# %%
import matplotlib.pyplot as plt

from ojax.app import files as figures
from ojax.app.output import results_table

spec = EXPERIMENTS['denevi2020-synthetic']
config = spec.config(spec.name, seeds=3, out=Path('unused'), quick=True, quiet=True)
result = spec.run(config)
print('\n'.join(results_table([r for r in result.rows if r.metric == 'cumulative_error'])))
panels = figures.draw_result('denevi2020-synthetic', result)
plt.show()  # the three panels
"""
)

NEU_ROSASCO2018 = cells(
    r"""
# %% [markdown]
# Iterate averaging as regularization (Neu & Rosasco, 2018)

Geometric averaging of constant-step SGD iterates behaves like ridge regularization: with $\rho
= 1/(1+\eta\lambda)$, $E[v_n] = (1-\rho^{n+1}) E[\tilde w_n] + \rho^{n+1} E[w_n]$ where $v_n$ is
ridge-regularized SGD. So ONE SGD pass gives a whole regularization path. Small sizes here; the
full experiment is `ojax run neu-rosasco2018`.
# %%
import jax, jax.numpy as jnp, numpy as np
import matplotlib.pyplot as plt
from ojax import averaging
from ojax.envs import regression

problem = regression.make_problem(jax.random.key(0), 1.0 / np.arange(1, 11) ** 2,
                                  w_star_norm=np.sqrt(10.0))
xs, ys = regression.sample(jax.random.key(1), problem, 200)
x_val, y_val = regression.sample(jax.random.key(2), problem, 200)
eta = 0.5 / float(problem.eigenvalues.sum())
lams = jnp.logspace(-4, 1, 30)
print(xs.shape, 'eta =', round(eta, 4))
# %% [markdown]
## The whole path from one SGD pass, and the comparators
# %%
path = averaging.regularization_path(xs, ys, eta, regularization=lams,
                                     tail_start=jnp.arange(0, 200, 20))
ridge = averaging.ridge_regression(xs, ys, lams)
ridge_sgd = averaging.ridge_sgd_runs(xs, ys, averaging.linked_step_size(eta, lams), lams)
risk = {name: regression.excess_risk(w, problem) for name, w in
        [('geometric', path.geometric), ('ridge (closed form)', ridge),
         ('ridge-sgd (last iterate)', ridge_sgd)]}
best, index, _ = averaging.select_on_holdout(path.geometric, x_val, y_val)
print('mode:', path.mode, '| lambda chosen on held-out data:', float(lams[index]),
      '| excess risk:', float(regression.excess_risk(best, problem)))
fig, ax = plt.subplots(figsize=(6, 4))
for name, r in risk.items():
    ax.loglog(lams, r, label=name)
ax.set(xlabel='lambda', ylabel='excess risk'); ax.legend()
plt.show()
# %% [markdown]
## The expectation identity with exact means

The means of SGD and of regularized SGD follow deterministic recursions; in float64 the identity
holds to rounding.
# %%
with jax.enable_x64(True):
    p64 = regression.ill_conditioned_problem(jax.random.key(0), dtype=jnp.float64)
    cov, cross = regression.covariance(p64), regression.cross_moment(p64)
    lam, n, w0 = 0.5, 300, jnp.ones(5)
    gamma = float(averaging.linked_step_size(0.05, lam)); rho = 1 - gamma * lam
    means = averaging.expected_sgd_iterates(cov, cross, jnp.float64(0.05), w0, n)
    log_rho = averaging.log_discount_from_regularization(0.05, lam)
    w_tilde = averaging.geometric_average(means, log_rho)
    v = averaging.expected_ridge_sgd(cov, cross, jnp.float64(gamma), jnp.float64(lam), w0, n)
    rhs = (1 - rho ** (n + 1)) * w_tilde + rho ** (n + 1) * means[-1]
    print('relative error of the identity:', float(jnp.max(jnp.abs(rhs - v)) / jnp.max(jnp.abs(v))))
# %% [markdown]
## Chunks, prefix averages, float32 safety

Chunk averages merge associatively; `lax.associative_scan` gives every prefix average, and tiny
$\eta\lambda$ stays exact in float32 because the discount is kept as $\log\rho$ (formed with
`log1p`).
# %%
ws = averaging.sgd_iterates(xs, ys, eta)
log_discount = averaging.log_discount_from_regularization(eta, lams)
direct = averaging.geometric_path(ws, log_discount)
chunked = averaging.chunked_geometric_average(ws, log_discount, 7)
prefix = averaging.prefix_averages(ws, log_discount[10])
print('chunked vs direct:', float(jnp.max(jnp.abs(chunked - direct))))
print('last prefix vs direct:', float(jnp.max(jnp.abs(prefix[-1] - direct[10]))))
tiny = averaging.log_discount_from_regularization(jnp.float32(0.1), jnp.float32(2e-6))
print('effective lambda at eta*lambda = 2e-7 (float32):',
      float(averaging.effective_regularization(0.1, tiny)))
"""
)

ZHAO_HOI2010 = cells(
    r"""
# %% [markdown]
# Online transfer learning (Zhao & Hoi 2010) on usenet2

A source classifier `h` (averaged kernel PA-I, width 4) is learned on the first 300 rows of
usenet2; then PA, PAIO, OTL(fixed) and OTL run on the other 1200 rows in the 20 orders shipped in
the data file (`ID_ALL`: each shuffles the rows within the four concept blocks of 300 and keeps the
blocks in order, so the concept drift stays in the stream), all orders in one `vmap` over a Gram
matrix computed once. C = 5, target width 8 (the
presets `KernelPAParams.paper()`, `OTLParams.paper()`, ...). The data ships inside the package
(`ojax/datasets/data/`); `ojax run --data-dir DIR` or `$OJAX_DATA_DIR` points elsewhere.
# %%
import jax
import numpy as np
import matplotlib.pyplot as plt

from ojax import transfer
from ojax.datasets import transfer as transfer_data
from ojax.experiments import zhao_hoi2010
from ojax.plotting import band
# %%
split = transfer_data.homogeneous_split('usenet2')  # per-row min-max scaling, 300 + 1200
prepared = zhao_hoi2010.prepare_homogeneous(split)
print('source support vectors |SV(h)|:', prepared.source_support_vectors)
ids = transfer_data.shipped_orders('usenet2')  # (20, 1500), 0-based rows of the file
orders = ids[:, 300:] - 300  # the target stream's orders (the source block comes first)
# %%
results = {}
for method in zhao_hoi2010.HOMOGENEOUS_METHODS:
    timed = zhao_hoi2010.time_method(prepared.methods[method], orders)
    # the loss is the mistake, counted before the update
    rate = transfer.mistake_rate(timed.trace.loss)
    svs = np.asarray(timed.trace.record)[:, -1]  # the record: support vectors after each step
    results[method] = rate
    paper = zhao_hoi2010.PAPER_TABLE2['usenet2'][method]
    print(f'{method:10s} mistakes {rate[:, -1].mean():6.2f} +- {rate[:, -1].std():4.2f} %'
          f'  (paper {paper:5.2f})  SVs {svs.mean():7.1f}'
          f'  {timed.run_seconds / 20 * 1e3:.2f} ms/trial')
# %% [markdown]
A split of one's own: `transfer.run_split` takes a source order and target orders as 0-based row
indices (MATLAB's 1-based `ID_ALL` minus 1) and returns, per method, the mistakes, the support
vectors and the mistake-rate curve of every order. On the same orders it gives the numbers
above.
# %%
own = transfer.run_split(split.source_x, split.source_y, np.arange(300),
                         split.target_x, split.target_y, np.asarray(orders),
                         methods=('PA', 'PAIO', 'OTL_fixed', 'OTL'))
for method, result in own.items():
    gap = np.abs(result.mistake_rate - results[method]).max()
    print(f'{method:10s} {result.mistake_rate[:, -1].mean():6.2f} %'
          f'  SVs {result.support_vectors[:, -1].mean():7.1f}'
          f'  largest gap to the runs above {gap:.2g}')
# %%
fig, ax = plt.subplots(figsize=(6, 4))
x = np.arange(1, prepared.num_target + 1)
for method, rate in results.items():
    band(ax, x, rate, method)
for boundary in range(300, prepared.num_target, 300):
    ax.axvline(boundary, color='gray', linestyle=':')  # a new concept
ax.set(xlabel='number of samples', ylabel='average rate of mistakes (%)',
       title='usenet2, 20 shipped orders (dotted: concept changes)')
ax.grid(alpha=0.3)
ax.legend()
plt.show()
# %% [markdown]
OTL ends below OTL(fixed) and PAIO, and PA is the worst, the paper's ordering; OTL's weights move
to the better classifier after each drift. The numbers are not Table 2's: the authors' own toolbox
on this file gives PA and PAIO several points below the table while OTL lands close to it, as
here. `ojax run zhao-hoi2010-homogeneous` runs this protocol (`--order uniform` permutes the whole
target stream instead).
"""
)


PARAMETER_FREE = cells(
    r"""
# %% [markdown]
# How parameter-free are the parameter-free learners?

`ojax run parameter-free-benchmark` on one dataset: every parameter-free learner of ojax and
OGD / AdaGrad (tuned in hindsight over 20 steps) as linear predictors with the logistic loss on
a1a (progressive validation, one pass in a random order per seed), each hidden constant swept
over 8 decades. One sweep per method over (seed, constant): the sweep engine vmaps it.
# %%
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from ojax.experiments import ExperimentConfig
from ojax.experiments import parameter_free_methods as pfb
from ojax.experiments import parameter_free_benchmark as summary

size = pfb.Size(
    datasets=("a1a",), classification_losses=("logistic",), regression_losses=(), norms=(),
    max_rows=None, regression_steps=1, grid_points=None,
)
with tempfile.TemporaryDirectory() as folder:
    config = ExperimentConfig(name="parameter-free-benchmark", seeds=3, out=Path(folder),
                              quiet=True)
    sweeps, compile_seconds = pfb.run_sweeps(config, size)
print(f"{len(sweeps)} methods, compiled in {compile_seconds:.0f} s")
# %% [markdown]
## The table: at the default constant, the best one, and how much the constant matters
# %%
print(f"{'method':18s} {'default':>8s} {'best':>8s} {'worst/best':>10s}")
for method, sweep in sweeps.items():
    avg = sweep.outputs["a1a-logistic"]["average_loss"]  # (seeds, constants)
    chosen = summary.chosen_index(sweep.default, sweep.grid, avg)
    means = avg.mean(axis=0)
    print(f"{method:18s} {means[chosen]:8.3f} {means.min():8.3f} "
          f"{(avg.max(axis=1) / avg.min(axis=1)).mean():10.1f}")
# %% [markdown]
## The sensitivity figure
# %%
fig = summary.sensitivity_figure(sweeps, ["a1a-logistic"], "logistic")
plt.show()
# %% [markdown]
COCOB, DoG, D-Adaptation and Mechanic move by less than 2x over 8 decades of their constant;
the coin bettors (KT, ONS, per-coordinate KT) lose when the initial wealth is far too large;
Schedule-Free SGD's constant is a learning rate, and its loss moves at least as much as OGD's
over its steps. None of them reaches tuned OGD or AdaGrad here; Prodigy at its default `d_0` is
far from its own best. The full benchmark (four datasets, two losses, the regression against
||u||, 30 seeds) is `ojax run parameter-free-benchmark`.
"""
)


NOTEBOOKS = {
    "quickstart.ipynb": QUICKSTART,
    "sweeps.ipynb": SWEEPS,
    "denevi2020.ipynb": DENEVI2020,
    "neu_rosasco2018.ipynb": NEU_ROSASCO2018,
    "zhao_hoi2010.ipynb": ZHAO_HOI2010,
    "parameter_free.ipynb": PARAMETER_FREE,
}


def write(name: str, cells: list) -> nbformat.NotebookNode:
    """The notebook ``name`` from ``cells`` (no outputs), written under notebooks/."""
    notebook = new_notebook(cells=cells, metadata={"kernelspec": KERNELSPEC})
    nbformat.write(notebook, ROOT / "notebooks" / name)
    return notebook


def execute(name: str, notebook: nbformat.NotebookNode) -> None:
    """Runs ``notebook`` top to bottom in a fresh kernel (from a temporary folder, with the
    inline backend whatever ``MPLBACKEND`` says) and writes it with its outputs."""
    import nbclient

    os.environ["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"  # figures as PNG
    os.environ["OJAX_COMPILATION_CACHE"] = "off"  # the user's cache is not touched
    path = os.environ.get("PYTHONPATH")  # this checkout's ojax, installed or not
    os.environ["PYTHONPATH"] = str(ROOT) + (os.pathsep + path if path else "")
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "matplotlibrc").write_text(f"figure.dpi: {DPI}\n")  # modest PNGs
        os.environ["MATPLOTLIBRC"] = folder
        client = nbclient.NotebookClient(
            notebook, timeout=900, kernel_name="python3", resources={"metadata": {"path": folder}}
        )
        client.execute()
    for cell in notebook.cells:
        cell.metadata.pop("execution", None)  # timestamps: every run would differ
    nbformat.write(notebook, ROOT / "notebooks" / name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("only", nargs="*", help="notebooks whose name contains one of these")
    parser.add_argument("--no-run", action="store_true", help="write without executing")
    args = parser.parse_args()
    for name, cells in NOTEBOOKS.items():
        if args.only and not any(part in name for part in args.only):
            continue
        notebook = write(name, cells)
        if not args.no_run:
            start = time.perf_counter()
            execute(name, notebook)
            print(f"executed notebooks/{name} in {time.perf_counter() - start:.0f} s")
        else:
            print(f"wrote notebooks/{name}")


if __name__ == "__main__":
    main()
