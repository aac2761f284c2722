"""Parameter-free learners: one-dimensional coin betting (KT, ONS) and the direction-magnitude
reduction to a d-dimensional learner.

A bettor starts with an initial wealth `W_0 > 0` and bets the signed amount `m = beta W` on
each coin `c` in `[-1, 1]` (the reward is `-c m`)::

    W   <- W - c m_prev = W (1 - c beta_prev)         (wealth after the coin)
    KT:  beta_k = -(1/k) sum_{j<=k} c_j               (k: the step count given by the caller)
    ONS: z = c / (1 - c beta_prev);  A <- A + z^2 (A_0 = 1);
         beta <- clip(beta_prev - (2 / (2 - ln 3)) z / A, -1/2, 1/2)
    m   <- beta W

The wealth is kept in log form, `log|W| <- log|W| + log|1 - c beta_prev|` (with its sign apart),
and the bet is `m = sign(beta W) exp(log|beta| + log|W|)`: on a stream that keeps paying the
bettor the wealth grows geometrically and `W` itself would overflow float32 after a few hundred
steps, while `log|W|` stays finite for far longer than 10^7 steps, and the bet is finite
whenever it is representable (e.g. 0 when `beta = 0`, however large the wealth). The bet itself
overflows only where it is mathematically beyond the float range.

When is `1 - c beta_prev > 0` (so that the sign stays `+1`)? For coins in `[-1, 1]`:

* ONS: `|beta| <= 1/2` (the clip), so `1 - c beta >= 1/2`;
* KT with the caller's count `k` equal to the number of coins seen and a first coin of 0 (the
  direction-magnitude learners: `v` starts at 0): `|beta_k| <= (k - 1) / k < 1`;
* KT with the textbook divisor `k + 1` (:func:`coin_betting`): `|beta_k| <= k / (k + 1) < 1`.

Warning: outside these cases (coins outside `[-1, 1]`, i.e. `||g|| gradient_scale > 1`; or a
KT count smaller than the number of coins seen, as the authors' counter of Aggressive can give on
tasks of different sizes) `1 - c beta` can be `<= 0`: the wealth then changes sign (or hits 0)
exactly as the direct form `W - c m` would, which is why the sign is kept; the theory of the
bettor no longer applies.

The direction-magnitude reduction plays `w = x0 + m v` with `v` projected online gradient
descent on the unit ball (step `sqrt(2/k) / (L R)`) and `m` a bettor fed the coins
`c = <g, v_prev> / (L R)`.

References:
  Orabona, F. and Pal, D. (2016). Coin betting and parameter-free online learning.
  Cutkosky, A. and Orabona, F. (2018). Black-box reductions for parameter-free online learning
  in Banach spaces.
  Denevi, G., Stamos, D. and Pontil, M. (2020). Online parameter-free learning of multiple low
  variance tasks.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import jax.numpy as jnp

from ojax import projections
from ojax.core import Array, OCOLearner, learner_factory, scalars
from ojax.validation import check_choice, check_positive

BETTORS = ("kt", "ons")
ONS_RATE = 2.0 / (2.0 - math.log(3.0))  # the ONS betting step 2 / (2 - ln 3)


class BettorState(NamedTuple):
    """State of a one-dimensional bettor (leaves may carry extra trailing axes).

    The wealth is `W = wealth_sign * exp(log_wealth)` (see the module docstring).
    """

    log_wealth: Array  # log|W|, shape () (or the shape of the coins for coordinate-wise betting)
    wealth_sign: Array  # sign of W, +1 (or 0) for coins in [-1, 1] (see the module docstring)
    betting_fraction: Array  # beta, same shape; the bet is m = beta W
    sum_coins: Array  # KT: sum of the coins seen, same shape (unused by ONS)
    ons_sum: Array  # ONS: A = 1 + sum of z^2, same shape (unused by KT)


def bettor_init(initial_wealth: Array, shape: tuple[int, ...] = (), dtype=None) -> BettorState:
    """The bettor before any coin: `W = initial_wealth` (> 0), `beta = 0`, `A = 1`."""
    wealth = jnp.broadcast_to(jnp.asarray(initial_wealth, dtype), shape)
    zeros = jnp.zeros_like(wealth)
    ones = jnp.ones_like(wealth)
    return BettorState(jnp.log(wealth), ones, zeros, zeros, ones)


def bettor_wealth(state: BettorState) -> Array:
    """The wealth `W = sign exp(log|W|)` (overflows where `W` is beyond the float range)."""
    return state.wealth_sign * jnp.exp(state.log_wealth)


def bettor_bet(state: BettorState) -> Array:
    """The signed bet `m = beta W`, as `sign(beta) sign(W) exp(log|beta| + log|W|)`.

    Finite whenever `beta W` is representable, even where `W` alone is not.
    """
    beta = state.betting_fraction
    magnitude = jnp.exp(jnp.log(jnp.abs(beta)) + state.log_wealth)
    return (jnp.sign(beta) * state.wealth_sign) * magnitude


def bettor_update(bettor: str, state: BettorState, coin: Array, count: Array) -> BettorState:
    """One coin `c`: wealth `W (1 - c beta_prev)` (in log form), then the new fraction.

    Args:
      bettor: `"kt"` or `"ons"` (static).
      state: the bettor before the coin.
      coin: `c` in `[-1, 1]` (the reward of the bet is `-c m`).
      count: `k` the step count for KT, `beta_k = -(1/k) sum_{j<=k} c_j` (ignored by ONS).
    """
    # log|1 + x| with x = -c beta in one log1p: 1 + x > 0 is the case for valid coins; otherwise
    # |1 + x| = 1 + (-2 - x) and the sign of the wealth flips (see the module docstring).
    x = -coin * state.betting_fraction
    positive = x > -1.0
    log_wealth = state.log_wealth + jnp.log1p(jnp.where(positive, x, -2.0 - x))
    wealth_sign = jnp.where(positive, state.wealth_sign, -state.wealth_sign)
    if bettor == "kt":
        sum_coins = state.sum_coins + coin
        beta = -sum_coins / count.astype(sum_coins.dtype)
        return BettorState(log_wealth, wealth_sign, beta, sum_coins, state.ons_sum)
    z = coin / (1.0 + x)
    ons_sum = state.ons_sum + z * z
    beta = jnp.clip(state.betting_fraction - ONS_RATE * z / ons_sum, -0.5, 0.5)
    return BettorState(log_wealth, wealth_sign, beta, state.sum_coins, ons_sum)


def direction_update(direction: Array, grad: Array, count: Array, scale: Array) -> Array:
    """Projected online gradient step on the unit ball: `P(v - sqrt(2/k) g scale)`."""
    step = jnp.sqrt(2.0 / count.astype(direction.dtype)) * scale
    return projections.l2_ball(direction - step * grad, 1.0)


class CoinBettingParams(NamedTuple):
    """The hyperparameters of CoinBetting: a pytree of arrays passed at call time.

    Attributes:
      initial_wealth: w_0 > 0, shape ()
      gradient_scale: 1 / (L R) > 0, shape (); coins are grad * gradient_scale
    """

    initial_wealth: Array  # W_0 > 0, shape ()
    gradient_scale: Array  # 1 / (L R) > 0, shape (); coins are grad * gradient_scale

    @classmethod
    def default(cls, dtype: Any = None) -> CoinBettingParams:
        """`initial_wealth = 1`, `gradient_scale = 1` (gradients in the unit ball)."""
        return cls(*scalars(1.0, 1.0, dtype=dtype))


class CoinBettingState(NamedTuple):
    """The state of CoinBetting: a pytree of arrays, carried from step to step.

    Attributes:
      anchor: x0, shape (d,)
      bet: one bettor per coordinate, leaves of shape (d,)
      count: shadows tuple.count
    """

    anchor: Array  # x0, shape (d,)
    bet: BettorState  # one bettor per coordinate, leaves of shape (d,)
    # number of updates made, shape (), int32
    count: Array  # type: ignore[assignment]  # shadows tuple.count


def _check_betting(params) -> None:
    check_positive("initial_wealth", params.initial_wealth)
    check_positive("gradient_scale", params.gradient_scale)


@learner_factory
def coin_betting(bettor: str = "kt") -> OCOLearner:
    """Coordinate-wise one-dimensional coin betting (KT or ONS) as an OCO learner.

    Each coordinate is an independent bettor with coins `c_k = g_k * gradient_scale`::

        w_k = x0 + beta_k W_k,   W_k = W_{k-1} - c_k m_{k-1}
        KT:  beta_{k+1} = -(1/(k+1)) sum_{j<=k} c_j    (textbook Krichevsky-Trofimov)
        ONS: beta as in the module docstring (|beta| <= 1/2)

    Standalone, the first coin is arbitrary, so KT uses the textbook divisor `k + 1` (which
    keeps the wealth positive); inside :func:`direction_magnitude` the first coin is always 0 and
    KT divides by `k` (the authors' convention).

    Needs `|g| * gradient_scale <= 1` per coordinate (then `|beta| < 1` and the wealth stays
    positive). KT is registered twice: as `coin_betting_kt` and as `kt_coordinate`, the
    per-coordinate KT baseline (one bettor per coordinate, initial wealth `epsilon` each).
    The wealth is kept in log form; on a stream that keeps paying the bettor the iterate grows
    geometrically and overflows only where it is beyond the float range.

    Args:
      bettor: `"kt"` or `"ons"` (static).

    References:
      Orabona, F. and Pal, D. (2016). Coin betting and parameter-free online learning.
      Cutkosky, A. and Orabona, F. (2018). Black-box reductions for parameter-free online
      learning in Banach spaces.

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax import losses, parameter_free, run_oco
      >>> params = parameter_free.CoinBettingParams(jnp.array(1.0), jnp.array(1.0))
      >>> zs = -jnp.ones((4, 1))  # linear losses -w: bet on +
      >>> _, tr = run_oco(parameter_free.coin_betting("kt"), params, jnp.zeros(1), zs,
      ...                 losses.linear_objective)
      >>> print(tr.loss.round(4))
      [-0.    -0.5   -1.    -1.875]
    """
    check_choice("bettor", bettor, BETTORS)

    def init(params: CoinBettingParams, x0: Array) -> CoinBettingState:
        x0 = jnp.asarray(x0)
        bet = bettor_init(params.initial_wealth, x0.shape, x0.dtype)
        return CoinBettingState(x0, bet, jnp.zeros((), jnp.int32))

    def iterate(state: CoinBettingState, params: CoinBettingParams) -> Array:
        return state.anchor + bettor_bet(state.bet)

    def update(state: CoinBettingState, params: CoinBettingParams, grad: Array):
        count = state.count + 1
        coin = grad * params.gradient_scale
        bet = bettor_update(bettor, state.bet, coin, count + 1)
        return CoinBettingState(state.anchor, bet, count)

    return OCOLearner(init, iterate, update, _check_betting)


class DirectionMagnitudeParams(NamedTuple):
    """The hyperparameters of DirectionMagnitude: a pytree of arrays passed at call time.

    Attributes:
      initial_wealth: w_0 > 0 of the magnitude bettor, shape ()
      gradient_scale: 1 / (L R) > 0, shape (); multiplies coins and direction steps
    """

    initial_wealth: Array  # W_0 > 0 of the magnitude bettor, shape ()
    gradient_scale: Array  # 1 / (L R) > 0, shape (); multiplies coins and direction steps

    @classmethod
    def default(cls, dtype: Any = None) -> DirectionMagnitudeParams:
        """`initial_wealth = 1`, `gradient_scale = 1` (gradients in the unit ball)."""
        return cls(*scalars(1.0, 1.0, dtype=dtype))


class DirectionMagnitudeState(NamedTuple):
    """The state of DirectionMagnitude: a pytree of arrays, carried from step to step.

    Attributes:
      anchor: x0, shape (d,)
      direction: v in the unit ball, shape (d,)
      bet: the magnitude bettor, scalar leaves
      count: shadows tuple.count
    """

    anchor: Array  # x0, shape (d,)
    direction: Array  # v in the unit ball, shape (d,)
    bet: BettorState  # the magnitude bettor, scalar leaves
    # number of updates made, shape (), int32
    count: Array  # type: ignore[assignment]  # shadows tuple.count


def dm_init(params: DirectionMagnitudeParams, x0: Array) -> DirectionMagnitudeState:
    """The direction-magnitude learner before any gradient: `v = 0`, `m = 0`."""
    x0 = jnp.asarray(x0)
    bet = bettor_init(params.initial_wealth, (), x0.dtype)
    return DirectionMagnitudeState(x0, jnp.zeros_like(x0), bet, jnp.zeros((), jnp.int32))


def dm_iterate(state: DirectionMagnitudeState) -> Array:
    """`w = x0 + m v`."""
    return state.anchor + bettor_bet(state.bet) * state.direction


def dm_update(
    bettor: str,
    state: DirectionMagnitudeState,
    params: DirectionMagnitudeParams,
    grad: Array,
    count: Array | None = None,
) -> DirectionMagnitudeState:
    """One step: coin `<g, v_prev> scale`, direction step and bet with the step count `k`.

    `count` defaults to the learner's own count plus one; the meta-learners pass the global
    count of the authors' convention instead.
    """
    own = state.count + 1
    k = own if count is None else count
    coin = jnp.vdot(grad, state.direction) * params.gradient_scale
    direction = direction_update(state.direction, grad, k, params.gradient_scale)
    bet = bettor_update(bettor, state.bet, coin, k)
    return DirectionMagnitudeState(state.anchor, direction, bet, own)


@learner_factory
def direction_magnitude(bettor: str = "ons") -> OCOLearner:
    """A d-dimensional parameter-free OCO learner: a unit-ball direction times a 1-D bet.

    ::

        w_k = x0 + m_k v_k
        c_k = <g_k, v_k> / (L R)                       (the coin; c_1 = 0 since v_1 = 0)
        v_{k+1} = P(v_k - sqrt(2/k) g_k / (L R))       (projection onto the unit ball)
        m_{k+1} = beta_{k+1} W_{k+1}                   (KT or ONS bettor on the coins, count k)

    KT divides by `k` (not the textbook `k + 1`): because `v` starts at 0 the first coin is
    always 0, so this is textbook KT started one step late (the convention of Denevi et al.).

    Regret against any `u`: `O(||u|| L R sqrt(k log(1 + ||u|| k / W_0)))` with no step size.

    Args:
      bettor: `"kt"` or `"ons"` (static).

    Returns:
      An :class:`~ojax.core.OCOLearner` with params :class:`DirectionMagnitudeParams`.

    References:
      Cutkosky, A. and Orabona, F. (2018). Black-box reductions for parameter-free online
      learning in Banach spaces.

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax import losses, parameter_free, run_oco
      >>> learner = parameter_free.direction_magnitude("ons")
      >>> params = parameter_free.DirectionMagnitudeParams(jnp.array(1.0), jnp.array(1.0))
      >>> zs = jnp.tile(jnp.array([[0.3, -0.4]]), (200, 1))  # f(w) = ||w - z||^2 / 2
      >>> state, tr = run_oco(learner, params, jnp.zeros(2), zs, losses.quadratic_objective)
      >>> print(f"{float(tr.loss.mean()):.2e}")
      1.25e-03
    """
    check_choice("bettor", bettor, BETTORS)

    def init(params: DirectionMagnitudeParams, x0: Array) -> DirectionMagnitudeState:
        return dm_init(params, x0)

    def iterate(state: DirectionMagnitudeState, params: DirectionMagnitudeParams) -> Array:
        return dm_iterate(state)

    def update(state, params: DirectionMagnitudeParams, grad: Array):
        return dm_update(bettor, state, params, grad)

    return OCOLearner(init, iterate, update, _check_betting)


__all__ = [
    "BETTORS",
    "BettorState",
    "CoinBettingParams",
    "CoinBettingState",
    "DirectionMagnitudeParams",
    "DirectionMagnitudeState",
    "ONS_RATE",
    "bettor_bet",
    "bettor_init",
    "bettor_update",
    "bettor_wealth",
    "coin_betting",
    "direction_magnitude",
    "direction_update",
    "dm_init",
    "dm_iterate",
    "dm_update",
]
