"""Follow-the-Leading-History (Hazan & Seshadhri 2009) over any OCO learner, for exp-concave
losses: a linear predictor `y_hat = <x_t, x>` whose point `x_t` mixes experts started at
every round.

At round `t` a new expert `E^t` (a fresh copy of the base learner, started at `x0`) joins;
the point played is `x_t = sum_j v_t^(j) x_t^(j)`. After the loss `f_t(x) = loss(<x, x_t>,
y_t)` (each expert's own value, so the meta-learner needs the loss, not only a gradient)::

    v_hat^(i) = v_t^(i) exp(-alpha f_t(x_t^(i))) / sum_j v_t^(j) exp(-alpha f_t(x_t^(j)))
    v_{t+1}^(t+1) = 1 / (t + 1),   v_{t+1}^(i) = (1 - 1 / (t + 1)) v_hat^(i)   (i <= t)

and every expert takes its own gradient `loss.grad(<x_t^(i), x_t>, y_t) x_t`. For
`alpha`-exp-concave losses, on every interval `[r, s]` the regret to the expert `E^r`
is at most `ln(s + 1) / alpha` (FLH1), so FLH's adaptive regret is the base's regret plus that.

Two forms, by the static `pruned`:

* `pruned=True` (FLH2): the paper's pruning keeps `O(log T)` experts: the expert started at
  `i = r 2^k` (`r` odd) lives `2^(k+2) + 1` rounds; after the addition step the dead are
  removed and the weights renormalized. `3 (L - 1) + 5` slots for `L = floor(log2 T) + 1`
  levels (`horizon = T`): exactly the paper's pruning for `t < 2^L`, beyond which the top
  level's lifetimes stay `2^(L+1) + 1`.
* `pruned=False` (FLH1, the full form with a cap): every expert is kept, in `horizon` slots;
  beyond `horizon` rounds the oldest expert gives its slot to the newest.

References:
  Hazan, E., Seshadhri, C. (2009). Efficient learning algorithms for changing environments.
  ICML.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
from jax.scipy.special import logsumexp

from ojax.core import Array, OCOLearner, Params, Predictor, learner_factory, tree_where
from ojax.losses import Loss
from ojax.validation import check_int, check_positive


class FLHParams(NamedTuple):
    """The params of :func:`flh`.

    Attributes:
      base: the base learner's params (every expert's)
      exp_concavity: alpha > 0, shape (): the losses are alpha-exp-concave
    """

    base: Params  # the base learner's params (every expert's)
    exp_concavity: Array  # alpha > 0, shape ()


class FLHState(NamedTuple):
    """The state of FLH: a pytree of arrays, carried from step to step.

    Attributes:
      base: the experts' base states (a leading axis of slots)
      log_weights: log v_t^(j) per slot, -inf for an empty or removed slot, shape (S,)
      birth: the round each slot's expert started (0: never), shape (S,), int32
      count: rounds played, shape (), int32
    """

    base: Any  # the experts' base states, leading axis S
    log_weights: Array  # log v_t^(j), -inf when empty, shape (S,)
    birth: Array  # round each slot's expert started (0: never), shape (S,), int32
    count: Array  # type: ignore[assignment]  # rounds played, shape (), int32


def trailing_zeros(i: Array) -> Array:
    """The exponent `k` of `i = r 2^k` with `r` odd (`i >= 1`, int32)."""
    return jax.lax.population_count((i & -i) - 1)


def flh_slots(horizon: int, pruned: bool) -> int:
    """The slots of :func:`flh`: `3 (L - 1) + 5` for the pruned form (`L = floor(log2 T) + 1`),
    `horizon` for the full form."""
    horizon = check_int("horizon", horizon, low=1)
    return 3 * int(math.log2(horizon)) + 5 if pruned else horizon


def _slot_and_lifetime(birth: Array, levels: int, pruned: bool, slots: int) -> tuple[Array, Array]:
    """The slot of the expert started at `birth` and its lifetime (rounds alive)."""
    if not pruned:
        return (birth - 1) % slots, jnp.full_like(birth, jnp.iinfo(jnp.int32).max // 2)
    k = jnp.minimum(trailing_zeros(birth), levels - 1)
    low = 3 * k + (birth >> (k + 1)) % 3
    top = 3 * (levels - 1) + (birth >> (levels - 1)) % 5
    return jnp.where(k < levels - 1, low, top), (1 << (k + 2)) + 1


@learner_factory
def flh(base: OCOLearner, loss: Loss, x0: Array, horizon: int, pruned: bool = True) -> Predictor:
    """Follow-the-Leading-History over copies of `base` (see the module docstring).

    Args:
      base: the experts' OCO learner (static), e.g. :func:`ojax.oco.online_newton`.
      loss: the loss of the prediction `<x, x_t>` (static), alpha-exp-concave in `x` on the
        base's set (the square loss is, for bounded predictions and labels).
      x0: `(d,)` where every expert starts (static).
      horizon: `T` (static): the pruned form's levels, the full form's slots.
      pruned: FLH2's pruning (True) or the full form FLH1 with a cap (False).

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax import losses, nonstationary, oco, run
      >>> learner = nonstationary.flh(oco.ogd(), losses.square, jnp.zeros(1), 8)
      >>> params = nonstationary.FLHParams(oco.OGDParams(jnp.array(0.5), jnp.array(2.0)),
      ...                                  jnp.array(0.25))
      >>> xs, ys = jnp.ones((4, 1)), jnp.array([1.0, 1.0, -1.0, -1.0])
      >>> _, tr = run(learner, params, xs, ys, losses.square)
      >>> print(" ".join(f"{p:.4f}" for p in tr.prediction))
      0.0000 0.2500 0.4206 -0.2301
    """
    x0 = jnp.asarray(x0)
    levels = int(math.log2(check_int("horizon", horizon, low=1))) + 1
    slots = flh_slots(horizon, pruned)

    def fresh(params: FLHParams) -> Any:
        return jax.vmap(lambda _: base.init(params.base, x0))(jnp.arange(slots))

    def init(params: FLHParams) -> FLHState:
        log_weights = jnp.full((slots,), -jnp.inf, x0.dtype).at[0].set(0.0)
        birth = jnp.zeros((slots,), jnp.int32).at[0].set(1)  # E^1 in slot 0 (both forms)
        return FLHState(fresh(params), log_weights, birth, jnp.zeros((), jnp.int32))

    def points(state: FLHState, params: FLHParams) -> Array:
        return jax.vmap(lambda s: base.iterate(s, params.base))(state.base)  # (S, d)

    def predict(state: FLHState, params: FLHParams, x: Array) -> Array:
        return jnp.vdot(jnp.exp(state.log_weights) @ points(state, params), x)

    def update(state: FLHState, params: FLHParams, x: Array, y: Array) -> FLHState:
        experts = points(state, params)
        outputs = experts @ x
        values = loss.value(outputs, y)
        scores = state.log_weights - params.exp_concavity * values
        log_v = scores - logsumexp(scores)  # v_hat (-inf stays -inf)
        grads = loss.grad(outputs, y)[:, None] * x[None, :]
        states = jax.vmap(lambda s, g: base.update(s, params.base, g))(state.base, grads)
        count = state.count + 1
        new = count + 1  # the expert E^(t+1) joins
        wide = new.astype(log_v.dtype)
        log_v = log_v + jnp.log1p(-1.0 / wide)
        slot, _ = _slot_and_lifetime(new, levels, pruned, slots)
        mine = jnp.arange(slots, dtype=jnp.int32) == slot
        states = jax.vmap(tree_where, (0, None, 0))(mine, base.init(params.base, x0), states)
        log_v = jnp.where(mine, -jnp.log(wide), log_v)
        birth = jnp.where(mine, new, state.birth)
        if pruned:
            _, lifetime = _slot_and_lifetime(jnp.maximum(birth, 1), levels, pruned, slots)
            alive = (birth > 0) & (birth + lifetime - 1 >= new)
            log_v = jnp.where(alive, log_v, -jnp.inf)
            log_v = log_v - logsumexp(log_v)
        return FLHState(states, log_v, birth, count)

    def check_params(params: FLHParams) -> None:
        base.check_params(params.base)
        check_positive("exp_concavity", params.exp_concavity)

    return Predictor(init, predict, update, check_params)


__all__ = ["FLHParams", "FLHState", "flh", "flh_slots", "trailing_zeros"]
