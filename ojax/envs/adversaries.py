"""Environments (:class:`ojax.core.Environment`) for :func:`ojax.run_env`: fixed data, adaptive
adversaries that answer the play, and K-armed bandits.

* :func:`fixed`: the data `z_t` fixed in advance (params: `zs` of shape `(T, d)`), the
  environment that ignores the play (`run_env` on it is `run_oco`, bit for bit), and
  :func:`examples`, its predictor form (`ojax.run`);
* :func:`answer`: an adaptive adversary `z_t = adversary(w_t)` of the played point, with the
  notes' adversaries :func:`toward` (OGD), :func:`heaviest` (Hedge) and :func:`sign` (the box);
  :func:`play_against` runs an OCO learner against one;
* :func:`opposite`: nature answering the opposite of a binary prediction over fixed advice
  (example 1 of the notes);
* :func:`bernoulli_arms`: a stochastic K-armed bandit, losses `z_{t,i} ~ Bernoulli(mu_i)`
  drawn independently every round;
* :func:`switching_arms`: an adversarial (oblivious, non-stochastic) K-armed bandit whose good
  arm changes at step `switch`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp

from ojax.core import Array, Environment, OCOLearner, Step, learner_factory
from ojax.game import run_env
from ojax.losses import linear_objective
from ojax.validation import check_range


def _counter(key: Array, params: object) -> Array:
    del key, params
    return jnp.zeros((), jnp.int32)


@learner_factory
def fixed() -> Environment:
    """The data `zs[t]` at step `t` whatever the play (params: `zs`, `(T, ...)`; a run of
    more than `T` rounds is refused)."""

    def step(t: Array, zs: Array, play: Array, key: Array) -> tuple[Array, Array]:
        return t + 1, zs[t]

    return Environment(_counter, step, horizon=_rows)


def _rows(params: object) -> int:
    """The rounds data fixed in advance holds: its rows (the leading axis)."""
    return min(jnp.shape(leaf)[0] for leaf in jax.tree.leaves(params))


def _row(t: Array, params: tuple) -> Array:
    return jax.tree.map(lambda a: a[t], params[0])


@learner_factory
def examples() -> Environment:
    """The examples `(xs[t], ys[t])` of a predictor's stream whatever it predicts (params:
    `(xs, ys)`; `run_env` on it is `ojax.run`; a run of more rounds than rows is refused)."""

    def step(t: Array, params: tuple, y_hat: Array, key: Array) -> tuple[Array, Array]:
        return t + 1, params[1][t]

    return Environment(_counter, step, _row, horizon=_rows)


@learner_factory
def answer(adversary: Callable[[Array], Array]) -> Environment:
    """An adaptive adversary of the played point: `z_t = adversary(w_t)` (no params, no
    state; linear losses `<w, z_t>` under `ojax.losses.linear_objective`)."""

    def init(key: Array, params: None) -> None:
        return None

    def step(state: None, params: None, w: Array, key: Array) -> tuple[None, Array]:
        return state, adversary(w)

    return Environment(init, step)


def toward(w: Array) -> Array:
    """The adaptive adversary of OGD: the unit loss along the played point (`e_1` at 0)."""
    norm = jnp.linalg.norm(w)
    first = jnp.zeros_like(w).at[0].set(1.0)
    return jnp.where(norm > 0, w / jnp.where(norm > 0, norm, 1.0), first)


def heaviest(w: Array) -> Array:
    """The adaptive adversary of Hedge: loss 1 on the expert of largest weight (ties to the
    first), 0 elsewhere."""
    return jax.nn.one_hot(jnp.argmax(w), w.shape[-1], dtype=w.dtype)


def sign(w: Array) -> Array:
    """The worst linear loss of the box: `sign(w)` with ties to +1."""
    return jnp.where(w >= 0, 1.0, -1.0).astype(w.dtype)


def _advice(state: None, advice: Array) -> Array:
    return advice


@learner_factory
def opposite() -> Environment:
    """Nature answers `1 - y_hat` to a binary prediction; the context is the fixed advice of
    the experts (params: `advice`, e.g. `[0, 1]`: H = {always 0, always 1})."""

    def init(key: Array, advice: Array) -> None:
        return None

    def step(state: None, advice: Array, y_hat: Array, key: Array) -> tuple[None, Array]:
        return state, 1 - y_hat

    return Environment(init, step, _advice)


class BernoulliArms(NamedTuple):
    """BernoulliArms: a record of the fields below.

    Attributes:
      means: mu_i in [0, 1], shape (K,): the mean loss of each arm
    """

    means: Array  # mu_i in [0, 1], shape (K,): the mean loss of each arm


@learner_factory
def bernoulli_arms() -> Environment:
    """A stochastic K-armed bandit: every round, `z_{t,i} ~ Bernoulli(mu_i)` independently
    (the learner, under bandit feedback, sees only `z_{t, I_t}`)."""

    def step(t: Array, params: BernoulliArms, play: Array, key: Array) -> tuple[Array, Array]:
        means = params.means
        return t + 1, jax.random.bernoulli(key, means).astype(means.dtype)

    def check_params(params: BernoulliArms) -> None:
        check_range("means", params.means, 0.0, 1.0)

    return Environment(_counter, step, check_params=check_params)


class SwitchingArms(NamedTuple):
    """SwitchingArms: a record of the fields below.

    Attributes:
      switch: the step (0-based, int) at which the good arm changes from 0 to 1
      gap: in (0, 0.5]: the good arm's loss is 0.5 - gap, the others' 0.5 + gap
    """

    switch: Array  # the step (0-based, int) at which the good arm changes from 0 to 1
    gap: Array  # in (0, 0.5]: the good arm's loss is 0.5 - gap, the others' 0.5 + gap


@learner_factory
def switching_arms(num_arms: int) -> Environment:
    """An oblivious adversarial K-armed bandit: arm 0 is the good one (loss `0.5 - gap`, the
    others `0.5 + gap`) before step `switch`, arm 1 from it on. With `switch < T / 2`
    arm 1 is the best in hindsight, and a learner that settled on arm 0 pays for it."""

    def step(t: Array, params: SwitchingArms, play: Array, key: Array) -> tuple[Array, Array]:
        good = jnp.where(t < params.switch, 0, 1)
        gap = params.gap
        z = jnp.where(jnp.arange(num_arms) == good, 0.5 - gap, 0.5 + gap)
        return t + 1, z.astype(jnp.result_type(gap))

    def check_params(params: SwitchingArms) -> None:
        check_range("gap", params.gap, 0.0, 0.5)

    return Environment(_counter, step, check_params=check_params)


def play_against(
    learner: OCOLearner, params: object, x0: Array, adversary: Callable, num_steps: int
) -> tuple[Array, Array]:
    """`learner` against the adaptive adversary :func:`answer` `(adversary)` on linear losses:
    `z_t = adversary(w_t)` answers the played point; returns the losses `<w_t, z_t>` and the
    `zs` played against, `(num_steps,)` and `(num_steps, d)`."""
    _, _, trace = run_env(
        learner, params, answer(adversary), None, jax.random.key(0), num_steps,
        linear_objective, x0=x0, record=_played_against,
    )  # fmt: skip
    return trace.loss, trace.record


def _played_against(step: Step) -> Array:
    return step.x


__all__ = [
    "BernoulliArms",
    "SwitchingArms",
    "answer",
    "bernoulli_arms",
    "examples",
    "fixed",
    "heaviest",
    "opposite",
    "play_against",
    "sign",
    "switching_arms",
    "toward",
]
