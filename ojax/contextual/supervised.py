"""Supervised-to-bandit conversion: a multiclass data set played as a contextual bandit.

Each example `(x_i, y_i)` of a `K`-class data set is a round: the learner sees `x_i`, plays a
distribution over the `K` classes (the arms), and is told only the loss of the arm drawn from
it: `c_{i, a} = 1[a != y_i]` (:func:`class_costs`), or a cost per class `c_{i, a} = C[y_i, a]`
(:func:`cost_matrix_costs`, cost-sensitive classification). The environment
(:func:`supervised_env`) holds the contexts, the costs and an order of the examples in its
params (`ContextualData`): a `jax.vmap` over orders is a batch of shuffles of one data set.
:func:`run_contextual` is :func:`ojax.run_env` on it with `feedback="bandit"`.

Reference: Beygelzimer, A., Langford, J. (2009), The offset tree for learning with partial
labels (the conversion); Bietti, A., Agarwal, A., Langford, J. (2021), A contextual bandit
bake-off, JMLR 22 (the evaluation: progressive validation loss over shuffles).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ojax.core import Array, Environment, Predictor, Trace
from ojax.game import run_env
from ojax.losses import mismatch
from ojax.validation import InputError, check_finite


class ContextualData(NamedTuple):
    """A supervised data set as a contextual bandit environment's params.

    Attributes:
      contexts: `x_i`, shape (n, d)
      costs: `c_{i, a}`, the loss of every arm on every example, shape (n, K)
      order: the examples in the order of the rounds, int32 shape (T,)
    """

    contexts: Array  # x_i, shape (n, d)
    costs: Array  # c_{i, a} in [0, 1], shape (n, K)
    order: Array  # int32 shape (T,): the example of each round


def class_costs(labels: Any, num_classes: int, dtype: Any = jnp.float32) -> Array:
    """`c_{i, a} = 1[a != y_i]`: shape (n, K), from integer labels in `[0, K)`."""
    y = np.asarray(labels)
    if y.ndim != 1 or not np.issubdtype(y.dtype, np.integer):
        raise InputError(f"labels must be a 1-d integer array, got {y.dtype}{list(y.shape)}")
    if y.size and (y.min() < 0 or y.max() >= num_classes):
        raise InputError(
            f"labels must lie in [0, {num_classes}) (num_classes={num_classes}), "
            f"got values in [{y.min()}, {y.max()}]"
        )
    return jnp.asarray(1.0 - np.eye(num_classes)[y], dtype)


def cost_matrix_costs(labels: Any, cost_matrix: Any, dtype: Any = jnp.float32) -> Array:
    """`c_{i, a} = C[y_i, a]`: the costs of cost-sensitive classification, shape (n, K),
    from labels in `[0, K)` and a `(K, K)` matrix `C` of costs in `[0, 1]`."""
    matrix = np.asarray(cost_matrix, np.float64)
    k = matrix.shape[0] if matrix.ndim == 2 else -1
    if matrix.ndim != 2 or matrix.shape != (k, k):
        raise InputError(f"cost_matrix must be square (K, K), got shape {matrix.shape}")
    if not np.all(np.isfinite(matrix)) or matrix.min() < 0 or matrix.max() > 1:
        raise InputError("cost_matrix must hold finite costs in [0, 1]")
    one_hot = np.asarray(class_costs(labels, k, jnp.float32)) == 0
    return jnp.asarray(one_hot.astype(np.float64) @ matrix, dtype)


def contextual_data(contexts: Any, costs: Any, order: Any = None) -> ContextualData:
    """Checks `contexts` (n, d) and `costs` (n, K) in [0, 1] (finite, of one float dtype)
    and `order` (T,) of indices in `[0, n)` (default: `0, ..., n - 1`)."""
    x, c = jnp.asarray(contexts), jnp.asarray(costs)
    if x.ndim != 2 or c.ndim != 2 or x.shape[0] != c.shape[0] or x.shape[0] == 0:
        raise InputError(
            f"contexts (n, d) and costs (n, K) must have n >= 1 rows each, got shapes "
            f"{x.shape} and {c.shape}"
        )
    if x.dtype != c.dtype or not jnp.issubdtype(x.dtype, jnp.floating):
        raise InputError(f"contexts and costs must share a float dtype, got {x.dtype}, {c.dtype}")
    check_finite("contexts", x)
    check_finite("costs", c)
    if float(jnp.min(c)) < 0 or float(jnp.max(c)) > 1:
        raise InputError(f"costs must lie in [0, 1], got [{float(c.min())}, {float(c.max())}]")
    n = x.shape[0]
    o = jnp.arange(n, dtype=jnp.int32) if order is None else jnp.asarray(order)
    if o.ndim != 1 or not jnp.issubdtype(o.dtype, jnp.integer) or o.size == 0:
        raise InputError(f"order must be a 1-d integer array of indices, got {o.dtype}{o.shape}")
    if int(o.min()) < 0 or int(o.max()) >= n:
        raise InputError(f"order must index the {n} examples (values in [0, {n})), got {o}")
    return ContextualData(x, c, o.astype(jnp.int32))


def _init(key: Array, params: ContextualData) -> Array:
    return jnp.zeros((), jnp.int32)


def _context(t: Array, params: ContextualData) -> Array:
    return params.contexts[params.order[t]]


def _step(t: Array, params: ContextualData, arm: Array, key: Array) -> tuple[Array, Array]:
    return t + 1, params.costs[params.order[t]]


def supervised_env() -> Environment:
    """The environment of a supervised data set (params :class:`ContextualData`): round `t`
    shows `contexts[order[t]]` and answers with the costs of all arms on it (the runner tells
    the learner only the drawn arm's)."""
    return Environment(_init, _step, _context)


def run_contextual(
    learner: Predictor,
    params: Any,
    data: ContextualData,
    key: Array,
    *,
    mask: Array | None = None,
    record: Any = None,
) -> tuple[Any, Trace]:
    """Plays the contextual bandit `learner` on `data` (one round per entry of `data.order`)
    with :func:`ojax.run_env`; returns the learner's final state and the
    :class:`~ojax.core.Trace` (`loss`: the drawn arm's loss per round, progressive
    validation; `prediction`: the arms)."""
    state, _, trace = run_env(
        learner,
        params,
        supervised_env(),
        data,
        key,
        int(data.order.shape[0]),
        mismatch,
        feedback="bandit",
        mask=mask,
        record=record,
        keep_predictions=True,
    )
    return state, trace


def linear_classes_stream(key: Array, num_steps: int, dim: int, num_classes: int = 3) -> tuple:
    """A synthetic multiclass stream: `x ~ N(0, I / dim)`, the label `argmax_a <w_a, x>` of
    `K` Gaussian class vectors drawn from `key`; returns `(contexts, class_costs)`."""
    k1, k2 = jax.random.split(key)
    w = jax.random.normal(k1, (num_classes, dim), jnp.float32)
    x = jax.random.normal(k2, (num_steps, dim), jnp.float32) / jnp.sqrt(dim)
    labels = jnp.argmax(x @ w.T, axis=1)
    return x, 1.0 - jax.nn.one_hot(labels, num_classes, dtype=jnp.float32)


__all__ = [
    "ContextualData",
    "class_costs",
    "contextual_data",
    "cost_matrix_costs",
    "linear_classes_stream",
    "run_contextual",
    "supervised_env",
]
