"""Sweeps at scale: seeds x hyperparameters x tasks, chunked, sharded, resumable, with progress.

:func:`sweep` evaluates a function `fn(params, data, key) -> pytree of arrays` (a run of a
learner, a multi-task run, one cell of an experiment) on every combination of

* a seed (`num_seeds` keys split from `key`; the same key for every hyperparameter value and
  task, so hyperparameters are compared on common random numbers),
* a hyperparameter value: a `dict` of named axes expanded as their Cartesian product, or a
  pytree with a leading axis (a `XxxParams` of arrays, `entry.params_grid()`) taken as one
  axis named `"grid"` (see :func:`stacked` to name it),
* a task (`tasks`: a pytree with a leading task axis; `fn` gets one task's slice), or else
  the same shared `data` for every combination,

with `jax.vmap`, in chunks of combinations sized from a memory budget. The combinations are
numbered in C order over the axes `(seed, *hyperparameters, task)`; a chunk is a vector of
combination numbers, padded to the chunk size, from which one jitted function gathers its
params, data and keys on the device. A chunk of whole seeds runs `fn` over each seed's
combinations with the seed's key unbatched, so what depends on the key alone (a stream drawn
from it) is computed once per seed. The function compiles once per static configuration
(`fn`, shapes, dtypes, chunk size, devices), whatever the number of chunks, and a second sweep
with other values of the same shapes does not recompile.

Devices and hosts: the chunk's batch axis is sharded over a :class:`jax.sharding.Mesh` of the
first `devices` devices (`NamedSharding` with `PartitionSpec("batch")`); the grid, tasks
and keys are replicated. With several processes (:func:`ojax.sweep.distributed.initialize`), the
mesh holds every process's devices: each chunk is one program over all of them, its outputs
all-gathered, and process 0 alone writes `out_dir` (see `docs/distributed.md`).

Resume: with `out_dir`, every finished chunk is written atomically into
`out_dir/NAME-HASH/` where `HASH` digests everything that decides the numbers
(:mod:`ojax.sweep.fingerprint`). A re-run loads the finished chunks, computes only the missing
combinations and returns exactly the uninterrupted run's arrays; another configuration gets
another folder, and a folder holding another configuration is refused.

The modules: :mod:`~ojax.sweep.grid` (axes, values checked), :mod:`~ojax.sweep.fingerprint`
(the configuration hash), :mod:`~ojax.sweep.memory` (output shapes, bytes per combination,
the chunk size), :mod:`~ojax.sweep.store` (the chunk files), :mod:`~ojax.sweep.chunk` (the
jitted chunk), :mod:`~ojax.sweep.engine` (:func:`sweep`) and :mod:`~ojax.sweep.results`. A registered learner on its own stream (`ojax sweep`) is
:func:`ojax.app.learner_sweep.sweep_learner`.

Examples:
  >>> import jax, jax.numpy as jnp
  >>> from ojax import losses, oco, run_oco, sweep
  >>> def final_loss(params, data, key):
  ...     zs = jax.random.normal(key, (50, 3))
  ...     p = oco.OGDParams(params["learning_rate"], jnp.array(1.0))
  ...     _, trace = run_oco(oco.ogd(), p, jnp.zeros(3), zs, losses.linear_objective)
  ...     return trace.loss.mean()
  >>> res = sweep.sweep(final_loss, {"learning_rate": jnp.array([0.01, 0.1, 1.0])},
  ...                   num_seeds=4, key=jax.random.key(0),
  ...                   options=sweep.EngineOptions(quiet=True))
  >>> res.axes, res.outputs.shape
  (('seed', 'learning_rate'), (4, 3))
  >>> print(res.best(lambda o: o)["index"])
  {'learning_rate': 1}
  >>> sweep.sweep(final_loss, {"learning_rate": [0.1, 1e39]}, num_seeds=4, key=0)
  Traceback (most recent call last):
  ...
  ojax.validation.InputError: grid: learning_rate=1e+39 does not fit float32 (largest 3.4e+38); use float64 (--x64 on the command line, jax.config.update('jax_enable_x64', True))
"""  # noqa: E501

from ojax.sweep.engine import BATCH_AXIS, sweep, sweep_experiment
from ojax.sweep.grid import Stacked, stacked
from ojax.sweep.memory import check_output_memory
from ojax.sweep.options import EngineOptions
from ojax.sweep.results import SweepResult, SweepStats
from ojax.sweep.threads import in_threads

__all__ = [
    "BATCH_AXIS",
    "EngineOptions",
    "Stacked",
    "SweepResult",
    "SweepStats",
    "check_output_memory",
    "in_threads",
    "stacked",
    "sweep",
    "sweep_experiment",
]
