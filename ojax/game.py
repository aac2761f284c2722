"""The game runner: a learner against an :class:`~ojax.core.Environment`, in one `lax.scan`.

:func:`run_env` plays, at every step `t`:

1. the learner's play: an OCO learner's iterate `w_t`, a predictor's prediction on the
   environment's context `x_t`, or (bandit feedback) an arm `I_t` drawn from the learner's
   iterate `p_t`, a distribution over the `K` arms;
2. the environment's answer `env.step(env_state, env_params, play, key_t)`: the data `z_t`
   of the loss (OCO), the label `y_t` (predictor);
3. the loss of the play, recorded when the play is made (progressive validation): `f(w_t;
   z_t)`, `loss(y_hat_t, y_t)`, or the played arm's `z_{t, I_t}`;
4. what the learner is told, by the `feedback` kind:

   * `"full"`: the gradient `grad f(w_t; z_t)` (OCO) or the example `(x_t, y_t)`;
   * `"bandit"`: only the played arm's loss, as the vector `z_{t, I_t} e_{I_t}` (zero on
     the arms not played; the learner divides by its own probabilities: EXP3, EXP3-IX);
     for a predictor (a contextual bandit: its prediction on `x_t` is a distribution `p_t`
     over the `K` arms, the environment's answer the losses `z_t` of the arms), the arm
     `I_t ~ p_t` is drawn, its loss `z_{t, I_t}` recorded, and the learner is told
     `update(state, params, x_t, BanditFeedback(I_t, z_{t, I_t}, p_{t, I_t}))`;

   and `delay = d` hands it over `d` steps late: the update at step `t` uses what step
   `t - d` revealed (nothing in the first `d` steps), while the loss is still recorded at
   step `t`.

Data fixed in advance is the environment that ignores the play
(:func:`ojax.envs.adversaries.fixed`): :func:`run_env` on it gives :func:`ojax.run_oco`'s
numbers bit for bit. The run is one jitted scan, compiled once per (learner, environment, loss,
feedback, delay, hooks, shapes); `jax.vmap` over `key` (seeds), `params` and
`env_params` batches it (1000 seeds of a bandit are one call).

Reference for the protocol of delayed feedback: Weinberger, M., Ordentlich, E. (2002), On
delayed prediction of individual sequences; Joulani, P., Gyorgy, A., Szepesvari, C. (2013),
Online learning under delayed feedback.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ojax.core import (
    Array,
    Environment,
    OCOLearner,
    Params,
    Predictor,
    State,
    Step,
    Trace,
    is_prng_key,
    tree_where,
)
from ojax.losses import Loss, Objective, check_loss
from ojax.runner import Record, opaque_start
from ojax.validation import (
    InputError,
    check_finite,
    check_magnitude,
    check_mask,
    check_params_type,
    check_precision,
    check_shape,
    check_state_finite,
)

FEEDBACK_KINDS = ("full", "bandit")
"""What the learner is told: the full information of the round, or the played arm's loss."""


class BanditFeedback(NamedTuple):
    """What a contextual bandit learner (a :class:`~ojax.core.Predictor` whose prediction is a
    distribution over the arms) is told as its label under `feedback="bandit"`.

    Attributes:
      arm: `I_t`, the arm drawn from the played distribution, int32 shape ()
      loss: `l_{t, I_t}`, its loss, shape ()
      probability: `p_{t, I_t}`, the probability it was played with, shape ()
    """

    arm: Array  # I_t, int32 shape ()
    loss: Array  # l_{t, I_t}, shape ()
    probability: Array  # p_{t, I_t}, shape ()


class _Game(NamedTuple):
    """The static configuration of a game (hashed into the compile cache)."""

    loss: Any  # an Objective (OCO learner) or a Loss (predictor)
    feedback: str
    delay: int
    record: Record | None
    keep: bool
    masked: bool
    oco: bool


def _not_finite(tree: Any) -> Array:
    """Whether a floating leaf of `tree` holds NaN or +-Inf (a traced bool)."""
    leaves = [a for a in jax.tree.leaves(tree) if jnp.issubdtype(jnp.result_type(a), jnp.inexact)]
    if not leaves:
        return jnp.asarray(False)
    return jnp.any(jnp.stack([~jnp.all(jnp.isfinite(a)) for a in leaves]))


def _not_a_distribution(w: Array) -> Array:
    """Whether `w` is not a distribution over its arms: a negative or non-finite entry, or a
    sum off 1 by more than the square root of its dtype's epsilon (a traced bool)."""
    tol = float(np.sqrt(jnp.finfo(jnp.result_type(w)).eps))
    return ~(jnp.all(jnp.isfinite(w) & (w >= 0)) & (jnp.abs(jnp.sum(w) - 1) <= tol))


def _play(learner, params, x0, env, env_params, game: _Game):
    """`(state, env_state, key) -> (env_state, play, x, y, loss, told, problems)` and the
    learner's update; `problems`: `(not a distribution, a non-finite answer)` (bools)."""

    def play(state, env_state, key):
        """One round: the play, the environment's answer, the loss, and what is told."""
        if not game.oco:
            x = env.context(env_state, env_params)
            y_hat = learner.predict(state, params, x)
            if game.feedback == "bandit":  # a contextual bandit: y_hat is p_t over the arms
                k_env, k_arm = jax.random.split(key)
                arm = jax.random.categorical(k_arm, jnp.log(y_hat))
                env_state, z = env.step(env_state, env_params, arm, k_env)
                told = BanditFeedback(arm, z[arm], y_hat[arm])
                problems = jnp.stack([_not_a_distribution(y_hat), _not_finite(z)])
                return env_state, arm, x, z, z[arm], (x, told), problems
            env_state, y = env.step(env_state, env_params, y_hat, key)
            problems = jnp.stack([jnp.asarray(False), _not_finite(y)])
            return env_state, y_hat, x, y, game.loss.value(y_hat, y), (x, y), problems
        w = learner.iterate(state, params)
        if game.feedback == "bandit":
            k_env, k_arm = jax.random.split(key)
            arm = jax.random.categorical(k_arm, jnp.log(w))
            env_state, z = env.step(env_state, env_params, arm, k_env)
            paid = z[arm]
            told = jax.nn.one_hot(arm, w.shape[-1], dtype=z.dtype) * paid
            problems = jnp.stack([_not_a_distribution(w), _not_finite(z)])
            return env_state, arm, z, told, paid, told, problems
        env_state, z = env.step(env_state, env_params, w, key)
        problems = jnp.stack([jnp.asarray(False), _not_finite(z)])
        return env_state, w, z, z, game.loss.value(w, z), game.loss.grad(w, z), problems

    def learn(state, told):
        if game.oco:
            return learner.update(state, params, told)
        x, y = told
        return learner.update(state, params, x, y)

    return play, learn


def _scan_step(learner, params, x0, env, env_params, game: _Game):
    play, learn = _play(learner, params, x0, env, env_params, game)

    def step(carry, inputs):
        key, real = inputs if game.masked else (inputs, None)
        state, env_state, queue, count, first = carry
        new_env, action, x, y, value, told, problems = play(state, env_state, key)
        if game.masked:
            problems = problems & real
        first = jnp.where(problems & (first < 0), count, first)  # the first round of each
        if game.delay:
            slot = count % game.delay
            late = jax.tree.map(lambda q: q[slot], queue)
            queue_new = jax.tree.map(lambda q, t: q.at[slot].set(t), queue, told)
            new = tree_where(count >= game.delay, learn(state, late), state)
        else:
            queue_new, new = queue, learn(state, told)
        if game.masked:
            value = jnp.where(real, value, 0.0)
            new, new_env, queue_new = tree_where(
                real, (new, new_env, queue_new), (state, env_state, queue)
            )
            count = count + real.astype(count.dtype)
        else:
            value = jnp.asarray(value).astype(jnp.result_type(value, 0.0))
            count = count + 1
        seen = None if game.record is None else game.record(Step(state, params, x, y, action, new))
        out = (value, action if game.keep else None, seen)
        return (new, new_env, queue_new, count, first), out

    return step


@functools.partial(jax.jit, static_argnames=("learner", "env", "num_steps", "game"))
def _game(learner, params, x0, env, env_params, key, mask, num_steps: int, game: _Game):
    k_init, k_steps = jax.random.split(key)
    state = opaque_start(learner.init(params, x0) if game.oco else learner.init(params))
    env_state = env.init(k_init, env_params)
    keys = jax.random.split(k_steps, num_steps)
    queue = None
    if game.delay:  # the last `delay` rounds' feedback (no more than the run has)
        play, _ = _play(learner, params, x0, env, env_params, game)
        told = jax.eval_shape(lambda: play(state, env_state, keys[0])[-2])
        size = min(game.delay, num_steps)
        queue = jax.tree.map(lambda t: jnp.zeros((size, *t.shape), t.dtype), told)
    first = jnp.full((2,), -1, jnp.int32)
    carry = (state, env_state, queue, jnp.zeros((), jnp.int32), first)
    step = _scan_step(learner, params, x0, env, env_params, game)
    inputs = (keys, mask) if game.masked else keys
    (state, env_state, _, _, first), (losses, plays, seen) = jax.lax.scan(step, carry, inputs)
    return state, env_state, Trace(losses, plays, seen, mask), first


# ----------------------------------------------------------------------------------------------
# checks (concrete values, before anything runs)


def _check_key(key: Any) -> None:
    typed = is_prng_key(key)
    raw = jnp.result_type(key) == jnp.uint32 and jnp.shape(key) == (2,)
    if not (typed and jnp.shape(key) == ()) and not raw:
        raise InputError(
            "key must be one PRNG key (jax.random.key(seed), or a raw uint32[2] "
            f"jax.random.PRNGKey), got dtype {jnp.result_type(key)} and shape {jnp.shape(key)}; "
            "vmap over keys for seeds"
        )


def _check_options(learner, env, loss, x0, feedback, delay, num_steps) -> bool:
    """The kinds of the arguments; returns whether the learner is an OCO learner."""
    if not isinstance(env, Environment):
        raise InputError(f"env must be an ojax.core.Environment, got {type(env).__name__}")
    if feedback not in FEEDBACK_KINDS:
        raise InputError(f"feedback must be one of {list(FEEDBACK_KINDS)}, got {feedback!r}")
    for name, value, low in (("num_steps", num_steps, 1), ("delay", delay, 0)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise InputError(f"{name} must be an int >= {low}, got {value!r}")
    oco = isinstance(learner, OCOLearner)
    if oco:
        if not isinstance(loss, Objective):
            raise InputError(
                f"loss: an OCOLearner is played with an Objective (e.g. ojax.losses."
                f"linear_objective), got {type(loss).__name__}"
            )
        if x0 is None:
            raise InputError("x0: an OCOLearner needs its start point x0 (shape (d,))")
        check_finite("x0", x0)
        check_precision("x0", jnp.result_type(x0))
        if feedback == "bandit" and delay:
            raise InputError(
                f"delay={delay} with feedback='bandit': a bandit learner weighs the played "
                "arm's loss by the probability it was played with, which a late update no "
                "longer has; use delay=0"
            )
        return True
    if not isinstance(learner, Predictor):
        raise InputError(
            f"learner must be an OCOLearner or a Predictor, got {type(learner).__name__}"
        )
    check_loss(loss)
    if x0 is not None:
        raise InputError("x0: a Predictor has no start point (x0 is for an OCOLearner)")
    if feedback == "bandit" and delay:
        raise InputError(f"delay={delay} with feedback='bandit': use delay=0")
    return False


def _check_round(learner, params, x0, env, env_params, key, game: _Game) -> None:
    """:func:`_round_checks` on the abstract values of the arguments, cached per signature
    (a second call with other values traces nothing)."""
    leaves, treedef = jax.tree.flatten((params, x0, env_params, key))
    types = tuple(
        (jnp.shape(a), jnp.result_type(a), bool(getattr(a, "weak_type", False))) for a in leaves
    )
    problem = _round_problem(learner, env, game, treedef, types)
    if problem is not None:
        raise InputError(problem)


@functools.lru_cache(maxsize=512)
def _round_problem(learner, env, game: _Game, treedef, types) -> str | None:
    """The message of the first problem :func:`_round_checks` finds, or `None`."""
    structs = [jax.ShapeDtypeStruct(s, d, weak_type=w) for s, d, w in types]

    def check(*leaves: Any) -> None:  # traced: the arguments are abstract values
        params, x0, env_params, key = jax.tree.unflatten(treedef, leaves)
        _round_checks(learner, params, x0, env, env_params, key, game)

    try:
        jax.eval_shape(check, *structs)
    except InputError as exc:
        return str(exc)
    except (AttributeError, IndexError, KeyError, TypeError, ValueError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else ""
        return (
            f"env, env_params: one round of the game (env.init, env.step, the learner's play "
            f"and update) fails on these arguments: {type(exc).__name__}: {first}; give the "
            "environment the params it takes (e.g. its own params class)"
        )
    return None


def _round_checks(learner, params, x0, env, env_params, key, game: _Game) -> None:
    """Abstractly plays one round: the environment's answer must fit the learner (the shape
    of `x0` / of a prediction, no dtype wider than the learner's state) and an update must
    keep the state's shapes and dtypes."""
    play, learn = _play(learner, params, x0, env, env_params, game)

    def answer():  # the environment's answer alone (before the loss is taken of it)
        state = learner.init(params, x0) if game.oco else learner.init(params)
        env_state = env.init(key, env_params)
        if not game.oco and game.feedback == "bandit":  # the play p_t, the answer to an arm
            p = learner.predict(state, params, env.context(env_state, env_params))
            arm = jnp.zeros((), jnp.int32)
            return state, p, env.step(env_state, env_params, arm, key)
        if not game.oco:
            action = learner.predict(state, params, env.context(env_state, env_params))
        elif game.feedback == "bandit":
            action = jnp.zeros((), jnp.int32)
        else:
            action = learner.iterate(state, params)
        return state, action, env.step(env_state, env_params, action, key)

    try:
        state, action, answered = jax.eval_shape(answer)
    except (TypeError, ValueError, IndexError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(f"env: it cannot answer the learner's play ({first})") from None
    if not (isinstance(answered, tuple) and len(answered) == 2):
        if hasattr(answered, "shape"):
            got = f"an array of shape {answered.shape}"
        elif isinstance(answered, (tuple, list)):
            got = f"a {type(answered).__name__} of {len(answered)}"
        else:
            got = type(answered).__name__
        raise InputError(f"env: its step must return the pair (env_state, feedback), got {got}")
    y = answered[1]
    if game.oco and y.shape != jnp.shape(x0):
        raise InputError(f"env: its z_t must have x0's shape {jnp.shape(x0)}, got {y.shape}")
    if not game.oco and game.feedback == "bandit":
        if y.ndim != 1 or action.shape != y.shape:
            raise InputError(
                f"env: under feedback='bandit' a predictor's play is a distribution over the "
                f"arms and the environment's answer their losses, of one shape; got a play of "
                f"shape {action.shape} and an answer of shape {y.shape}"
            )
    elif not game.oco and y.shape != action.shape:
        raise InputError(
            f"env: its label must have a prediction's shape {action.shape}, got {y.shape}"
        )
    floats = [a.dtype for a in jax.tree.leaves(state) if jnp.issubdtype(a.dtype, jnp.floating)]
    widest = max((jnp.finfo(t).bits for t in floats), default=None)
    if widest is not None and jnp.issubdtype(y.dtype, jnp.floating):
        if jnp.finfo(y.dtype).bits > widest:
            raise InputError(
                f"env: answers of dtype {y.dtype} are wider than the learner's state "
                f"({', '.join(sorted({str(t) for t in floats}))}); give x0 / the learner the "
                "environment's dtype"
            )

    def one():
        state = learner.init(params, x0) if game.oco else learner.init(params)
        env_state, action, x, y, value, told, _ = play(state, env.init(key, env_params), key)
        return state, action, y, told, learn(state, told)

    try:
        state, action, y, told, new = jax.eval_shape(one)
    except (TypeError, ValueError, IndexError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(f"env: its answer does not fit the learner ({first})") from None

    def kinds(tree: Any, weak: bool) -> list:  # a weakly typed start takes the update's dtype
        return [(a.shape, None if weak else a.dtype) for a in jax.tree.leaves(tree)]

    weak = any(getattr(a, "weak_type", False) for a in jax.tree.leaves(state))
    if kinds(state, weak) != kinds(new, weak):
        raise InputError("env: an update on its answer changes the learner state's shapes/dtypes")


def _check_env(env: Environment, env_params: Params, num_steps: int) -> None:
    """The environment's params (its own check; the data it holds finite and not
    overflowing); data fixed in advance answers only as many rounds as it holds."""
    for path, leaf in jax.tree_util.tree_leaves_with_path(env_params):
        if not isinstance(leaf, (jax.Array, np.ndarray, np.generic, int, float, bool)):
            raise InputError(
                f"env_params{jax.tree_util.keystr(path)} must be an array or a number (the "
                f"environment's params are a pytree of arrays), got {type(leaf).__name__}"
            )
    check_params_type(env.check_params, env_params, "env_params", "the environment")
    leaves = jax.tree.leaves(env_params)
    for i, leaf in enumerate(leaves):
        if jnp.issubdtype(jnp.result_type(leaf), jnp.inexact):
            label = "env_params" if len(leaves) == 1 else f"env_params[leaf {i}]"
            check_finite(label, leaf)
            check_magnitude(label, leaf)
    horizon = env.horizon(env_params)  # from shapes: known under a trace too
    if horizon is not None and num_steps > horizon:
        raise InputError(
            f"num_steps={num_steps}: the environment holds {horizon} rounds of data (its "
            f"params' leading axis); give num_steps <= {horizon} or more rows"
        )


def _is_traced(tree: Any) -> bool:
    return any(isinstance(a, jax.core.Tracer) for a in jax.tree.leaves(tree))


def _check_first_play(learner: OCOLearner, params: Params, x0: Array) -> None:
    """Under bandit feedback the learner's iterate is the distribution its arm is drawn from:
    the first one is looked at before anything runs."""
    if _is_traced((params, x0)):
        return
    with jax.ensure_compile_time_eval():
        w = learner.iterate(learner.init(params, x0), params)
        bad = bool(_not_a_distribution(w))
    if bad:
        raise InputError(
            f"feedback='bandit': the learner's first play {_values(w)} is not a distribution "
            "over the arms (entries >= 0 summing to 1) to draw an arm from; play a learner "
            "over the simplex (ojax.oco.exp3(), a projection onto the simplex) from a "
            "distribution x0"
        )


def _values(w: Array) -> str:
    flat = [float(v) for v in jnp.ravel(w)[:6]]
    return "[" + ", ".join(f"{v:.4g}" for v in flat) + (", ...]" if jnp.size(w) > 6 else "]")


def _check_rounds(first: Array, what: str) -> None:
    """Raises for the first round whose play was not a distribution (bandit feedback) or
    whose answer from the environment was NaN or infinite (a poisoned learner)."""
    if isinstance(first, jax.core.Tracer):
        return
    not_distribution, not_finite = (int(v) for v in first)
    if not_finite >= 0 and not_distribution >= 0 and not_finite < not_distribution:
        not_distribution = -1  # the answer came first (and spoilt the plays after it)
    if not_distribution >= 0:
        raise InputError(
            f"feedback='bandit': the learner's play at round {not_distribution} is not a "
            "distribution over the arms (a negative or non-finite entry, or a sum off 1): no "
            "arm can be drawn from it; play a learner that stays on the simplex"
        )
    if not_finite >= 0:
        raise InputError(
            f"env: its answer ({what}) at round {not_finite} is NaN or infinite; a learner "
            "told it is poisoned for the rest of the run: the environment must answer finite "
            "values"
        )


# ----------------------------------------------------------------------------------------------
# entry point


def run_env(
    learner: OCOLearner | Predictor,
    params: Params,
    env: Environment,
    env_params: Params,
    key: Array,
    num_steps: int,
    loss: Objective | Loss,
    *,
    x0: Array | None = None,
    feedback: str = "full",
    delay: int = 0,
    mask: Array | None = None,
    record: Record | None = None,
    keep_predictions: bool = False,
) -> tuple[State, State, Trace]:
    """Plays `learner` against `env` for `num_steps` rounds in one `lax.scan`.

    Args:
      learner: an :class:`~ojax.core.OCOLearner` (plays `w_t`, or an arm drawn from it under
        bandit feedback) or a :class:`~ojax.core.Predictor` (predicts on `env.context`);
        static.
      params: its hyperparameters.
      env: the :class:`~ojax.core.Environment` (static); `env_params` its params pytree.
      key: one PRNG key: `env.init` gets one split of it, every round one more (and the arm
        draw of a bandit round its own).
      num_steps: the number of rounds (static).
      loss: an :class:`~ojax.losses.Objective` for an OCO learner (`f(w; z_t)`), a
        :class:`~ojax.losses.Loss` for a predictor (static).
      x0: an OCO learner's start point `(d,)`.
      feedback: `"full"` or `"bandit"` (the module doc).
      delay: `d >= 0`: the learner updates at step `t` with what step `t - d` revealed.
      mask: `(num_steps,)` bool; a False round changes nothing (learner, environment, queue
        of late feedback) and counts 0.
      record: static `Step -> pytree` per round; `Step.x` / `Step.y` are the context and
        the label (predictor) or `z_t` and what the learner is told (OCO), `prediction`
        the play (the arm under bandit feedback).
      keep_predictions: keep the plays in `Trace.prediction`.

    Returns:
      The learner's final state, the environment's, and the :class:`~ojax.core.Trace`.

    Examples:
      >>> import jax, jax.numpy as jnp
      >>> from ojax import losses, oco, run_env
      >>> from ojax.envs import adversaries
      >>> env = adversaries.answer(adversaries.heaviest)  # loss 1 on the heaviest expert
      >>> _, _, tr = run_env(oco.hedge(), oco.HedgeParams(jnp.float32(1.0)), env, None,
      ...                    jax.random.key(0), 4, losses.linear_objective, x0=jnp.full(2, 0.5))
      >>> print([round(float(v), 4) for v in tr.loss])
      [0.5, 0.7311, 0.5, 0.7311]
    """
    oco = _check_options(learner, env, loss, x0, feedback, delay, num_steps)
    check_params_type(learner.check_params, params)
    if isinstance(learner, OCOLearner) and x0 is not None:  # (oco: checked above)
        learner.check_start(params, x0)
        x0 = jnp.asarray(x0)
    _check_env(env, env_params, num_steps)
    _check_key(key)
    if mask is not None:
        check_shape("mask", mask, (num_steps,))
        check_mask("mask", mask)
        mask = jnp.asarray(mask, bool)
    game = _Game(loss, feedback, delay, record, keep_predictions, mask is not None, oco)
    _check_round(learner, params, x0, env, env_params, key, game)
    if feedback == "bandit" and isinstance(learner, OCOLearner) and x0 is not None:
        _check_first_play(learner, params, x0)
    full = jnp.ones((num_steps,), bool) if mask is None else mask
    state, env_state, trace, first = _game(
        learner, params, x0, env, env_params, key, full, num_steps, game
    )
    _check_rounds(first, "z_t" if oco else "label")
    check_state_finite(state, num_steps)
    return state, env_state, trace


__all__ = ["BanditFeedback", "FEEDBACK_KINDS", "run_env"]
