"""Online-within-online learners of a bias: ITL / fixed bias, Aggressive, Lazy.

Every learner here is an :class:`ojax.core.MultiTaskLearner` that predicts `y_hat = <x, w>`
with `w = u + theta`: a within-task part `u`, played by an OCO learner restarted at 0 at
the start of every task, and a bias `theta` shared across tasks. They are compositions of OCO
learners (:class:`ojax.core.OCOLearner`):

* :func:`biased_within_task` (Alg. 3): `within` around a fixed bias (ITL: 0; the Oracle: the
  true mean; the meta-test: a learned bias);
* :func:`aggressive` (Alg. 4): a `meta` learner plays the bias and takes every within-task
  gradient;
* :func:`lazy` (Alg. 5): the `meta` learner takes the task's average gradient at its end.

By default both roles are the paper's parameter-free direction-magnitude learner
(:func:`ojax.parameter_free.direction_magnitude`, ONS bettor; `"kt"` for KT). The tuned
baselines of the experiments ("_SS") are the same meta-learners with unprojected online gradient
descent inside (`ojax.oco.ogd("none")`), and any optax optimizer fits through
:func:`ojax.optax_learner`. The params nest the roles' params: :class:`FixedBiasParams`
`(within, bias)` and :class:`MetaParams` `(within, meta)`, with the paper's settings as
presets (:meth:`MetaParams.paper`, :meth:`MetaParams.ogd`, :meth:`MetaParams.step_grid`).

Every state has a `bias` field (the bias the next prediction uses) and a `task` field
(:class:`WithinTask`: the sums behind the task's averaged iterate `w_bar`); the record
functions of :mod:`ojax.meta.simulate` read them.

The state's float dtype is that of the params (their first floating leaf): build them in the
data's dtype (the presets take `dtype`; by default JAX's default float, float64 under x64). A
multi-task learner's `init` sees only its params, so this is how it follows the data; the
runner says clearly when the data's dtype differs.

References:
  Denevi, G., Stamos, D. and Pontil, M. (2020). Online parameter-free learning of multiple low
  variance tasks. UAI.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ojax import losses as _losses
from ojax.core import (
    Array,
    MultiTaskLearner,
    OCOLearner,
    Params,
    TaskInfo,
    learner_factory,
    tree_where,
)
from ojax.oco.gradient_descent import OGDParams, ogd
from ojax.parameter_free.betting import DirectionMagnitudeParams, direction_magnitude
from ojax.validation import InputError, check_choice, check_finite, check_int, check_shape

COUNTERS = ("global", "authors")
META_GRADIENTS = ("mean", "sum")


def _float_dtype(dtype: Any = None) -> Any:
    """`dtype`, or JAX's default float (float64 under x64, else float32)."""
    return jax.dtypes.canonicalize_dtype(jnp.float64 if dtype is None else dtype)


def _scalar(value: Any, dtype: Any) -> Array:
    return jnp.asarray(value, _float_dtype(dtype))


def _ogd_params(step: Any, dtype: Any) -> OGDParams:
    step = _scalar(step, dtype)
    return OGDParams(step, jnp.ones_like(step))  # the radius is unused by ogd("none")


def _dm_params(wealth: Any, scale: Any, dtype: Any) -> DirectionMagnitudeParams:
    return DirectionMagnitudeParams(_scalar(wealth, dtype), _scalar(scale, dtype))


class FixedBiasParams(NamedTuple):
    """Params of :func:`biased_within_task`."""

    within: Params  # the within-task OCO learner's params
    bias: Array  # theta, shape (d,) (or () for the same value in every coordinate)

    @classmethod
    def default(cls, within: Params, dtype: Any = None) -> FixedBiasParams:
        """`within` (the within-task learner's params) around the bias 0 (ITL)."""
        return cls(within, _scalar(0.0, dtype))

    @classmethod
    def paper(
        cls,
        bias: Any = 0.0,
        *,
        inner_wealth: float = 1.0,
        gradient_scale: float = 1.0,
        dtype: Any = None,
    ) -> FixedBiasParams:
        """The paper's settings of the direction-magnitude learner: initial wealth 1 and
        gradient scale `1 / (L R) = 1` (unit-norm inputs, absolute loss); `bias` 0 is ITL."""
        return cls(_dm_params(inner_wealth, gradient_scale, dtype), _scalar(bias, dtype))

    @classmethod
    def ogd(cls, inner_step: Any, bias: Any = 0.0, *, dtype: Any = None) -> FixedBiasParams:
        """Within-task online gradient descent with step `inner_step` around `bias`."""
        return cls(_ogd_params(inner_step, dtype), _scalar(bias, dtype))


class MetaParams(NamedTuple):
    """Params of :func:`aggressive` and :func:`lazy`."""

    within: Params  # the within-task OCO learner's params
    meta: Params  # the meta (bias) OCO learner's params

    @classmethod
    def paper(
        cls,
        *,
        inner_wealth: float = 1.0,
        meta_wealth: float = 1.0,
        gradient_scale: float = 1.0,
        dtype: Any = None,
    ) -> MetaParams:
        """The paper's settings of the two direction-magnitude learners: initial wealths 1 and
        gradient scale `1 / (L R) = 1`."""
        return cls(
            _dm_params(inner_wealth, gradient_scale, dtype),
            _dm_params(meta_wealth, gradient_scale, dtype),
        )

    @classmethod
    def ogd(cls, inner_step: Any, meta_step: Any, *, dtype: Any = None) -> MetaParams:
        """Online gradient descent in both roles ("_SS") with steps `eta_in`, `eta_meta`."""
        return cls(_ogd_params(inner_step, dtype), _ogd_params(meta_step, dtype))

    @classmethod
    def step_grid(cls, num: int = 20, *, dtype: Any = None) -> MetaParams:
        """The authors' grid of the "_SS" baselines: `eta_in, eta_meta` in
        `10^linspace(-6, 4, num)`, `num^2` pairs (`eta_in` major) on a leading axis."""
        num = check_int("num", num, 1)
        steps = 10.0 ** np.linspace(-6.0, 4.0, num)
        inner, outer = np.meshgrid(steps, steps, indexing="ij")
        return cls.ogd(inner.ravel(), outer.ravel(), dtype=dtype)

    def frozen(self, bias: Array) -> FixedBiasParams:
        """The params of the within-task learner with `bias` frozen (the meta-test)."""
        return FixedBiasParams(self.within, bias)


class WithinTask(NamedTuple):
    """Bookkeeping of the current task shared by every learner's state."""

    size: Array  # n_t, real points of the current task, shape (), int32
    # i, real points seen in the current task, shape (), int32
    count: Array  # type: ignore[assignment]  # shadows tuple.count
    sum_iterates: Array  # sum of the pre-update prediction vectors w_i, shape (d,)
    sum_grads: Array  # G = sum of the within-task gradients g_i, shape (d,)


class FixedBiasState(NamedTuple):
    """The state of FixedBias: a pytree of arrays, carried from step to step.

    Attributes:
      within: the within-task OCO learner's state (anchor 0), reset every task
      bias: theta, shape (d,)
      task: `WithinTask`
    """

    within: Any  # the within-task OCO learner's state (anchor 0), reset every task
    bias: Array  # theta, shape (d,)
    task: WithinTask


class MetaState(NamedTuple):
    """The state of Meta: a pytree of arrays, carried from step to step.

    Attributes:
      within: the within-task OCO learner's state (anchor 0), reset every task
      meta: the meta OCO learner's state (anchor 0), never reset
      bias: theta = the meta learner's iterate, shape (d,)
      task: `WithinTask`
      num_tasks: tasks finished, shape (), int32
    """

    within: Any  # the within-task OCO learner's state (anchor 0), reset every task
    meta: Any  # the meta OCO learner's state (anchor 0), never reset
    bias: Array  # theta = the meta learner's iterate, shape (d,)
    task: WithinTask
    num_tasks: Array  # tasks finished, shape (), int32


def _within_init(dim: int, dtype: Any, size: Array | int = 0) -> WithinTask:
    zeros = jnp.zeros(dim, dtype)
    return WithinTask(jnp.asarray(size, jnp.int32), jnp.zeros((), jnp.int32), zeros, zeros)


def _within_step(task: WithinTask, w: Array, g: Array) -> WithinTask:
    return WithinTask(task.size, task.count + 1, task.sum_iterates + w, task.sum_grads + g)


def params_dtype(params: Params) -> Any:
    """The float dtype of the params (their first floating leaf): the state's dtype."""
    for leaf in jax.tree.leaves(params):
        dtype = jnp.result_type(leaf)
        if jnp.issubdtype(dtype, jnp.floating):
            return dtype
    return _float_dtype()


def _grad(loss: _losses.Loss, w: Array, x: Array, y: Array) -> Array:
    return loss.grad(jnp.vdot(x, w), y) * x


def _check_role(role: str, learner: Any) -> OCOLearner:
    if not isinstance(learner, OCOLearner):
        raise InputError(
            f"{role} must be an ojax.core.OCOLearner (e.g. parameter_free.direction_magnitude("
            f"'ons'), oco.ogd('none'), ojax.optax_learner(optax.adagrad)), got "
            f"{type(learner).__name__}"
        )
    return learner


def _check_role_params(role: str, learner: OCOLearner, params: Params, dim: int) -> None:
    """The role's own checks, their messages prefixed with the field (`within: ...`)."""
    try:
        learner.check_params(params)
        learner.check_start(params, jnp.zeros(dim, params_dtype(params)))
    except InputError as exc:
        raise InputError(f"params.{role}: {exc}") from None


def _check_params_class(params: Any, cls: type, learner: str) -> None:
    """Params of another learner (e.g. a `FixedBiasParams` given to `lazy`) are refused,
    naming the class this learner takes."""
    if not isinstance(params, cls):
        fields = ", ".join(getattr(cls, "_fields", ()))
        raise InputError(
            f"params: {learner} takes {cls.__name__} (fields {fields}), got "
            f"{type(params).__name__}; build them with e.g. {cls.__name__}.paper(dtype=...)"
        )


def check_bias(name: str, bias: Array, dim: int) -> None:
    """Checks a bias: shape `(dim,)` or `()` (leading batch axes allowed) and finite."""
    if jnp.ndim(bias) != 0 and jnp.shape(bias)[-1:] != (dim,):
        check_shape(name, bias, (*jnp.shape(bias)[:-1], dim))
    check_finite(name, bias)


@learner_factory
def biased_within_task(
    dim: int, within: OCOLearner | None = None, loss: _losses.Loss = _losses.absolute
) -> MultiTaskLearner:
    """The biased within-task learner (Alg. 3) with a fixed bias: ITL (0), the Oracle, the
    meta-test of a learned bias.

    ::

        w_i = u_i + theta                       (u_i: the within learner's iterate, anchor 0)
        g_i = loss'(<x_i, w_i>, y_i) x_i        (absolute loss: s x_i, s = +1 if y_i < <x_i, w_i>
                                                 else -1)
        u <- within.update(g_i)                 (the within learner restarts every task)
        w_bar = mean(w_1..w_n)                  (the task's estimator)

    Args:
      dim: the input dimension d (static).
      within: the within-task OCO learner (static); default the paper's direction-magnitude
        learner with the ONS bettor.
      loss: a convex Lipschitz loss (static; the experiments use the absolute loss).

    Returns:
      A :class:`~ojax.core.MultiTaskLearner` with params :class:`FixedBiasParams`. Its tasks are
      independent: run it with `independent_tasks=True`. Its state takes the params' dtype
      (`init` sees only the params): build them in the data's dtype.

    References:
      Denevi, G., Stamos, D. and Pontil, M. (2020). Online parameter-free learning of multiple
      low variance tasks.

    Examples:
      >>> import jax
      >>> from ojax import envs, meta
      >>> tasks, _ = envs.low_variance_tasks(jax.random.key(0), num_tasks=20, dim=3)
      >>> trace = meta.run_meta(meta.biased_within_task(3), meta.FixedBiasParams.paper(4.0),
      ...                       tasks, independent_tasks=True)
      >>> print(round(float(meta.cumulative_error(trace.loss, trace.mask)[-1]), 4))
      3.3247
    """
    dim = check_int("dim", dim, 1)
    within = _check_role("within", direction_magnitude("ons") if within is None else within)

    def init(params: FixedBiasParams) -> FixedBiasState:
        dtype = params_dtype(params)
        zeros = jnp.zeros(dim, dtype)
        bias = jnp.broadcast_to(jnp.asarray(params.bias, dtype), (dim,))
        return FixedBiasState(within.init(params.within, zeros), bias, _within_init(dim, dtype))

    def begin_task(state: FixedBiasState, params, task: TaskInfo) -> FixedBiasState:
        zeros = jnp.zeros_like(state.bias)
        fresh = _within_init(dim, state.bias.dtype, task.size)
        return FixedBiasState(within.init(params.within, zeros), state.bias, fresh)

    def predict(state: FixedBiasState, params, x: Array) -> Array:
        return jnp.vdot(x, within.iterate(state.within, params.within) + state.bias)

    def update(state: FixedBiasState, params, x: Array, y: Array) -> FixedBiasState:
        w = within.iterate(state.within, params.within) + state.bias
        g = _grad(loss, w, x, y)
        inner = within.update(state.within, params.within, g)
        return FixedBiasState(inner, state.bias, _within_step(state.task, w, g))

    def end_task(state: FixedBiasState, params, task: TaskInfo) -> FixedBiasState:
        return state

    def check_params(params: FixedBiasParams) -> None:
        _check_params_class(params, FixedBiasParams, "the fixed-bias learner")
        _check_role_params("within", within, params.within, dim)
        check_bias("bias", params.bias, dim)

    return MultiTaskLearner(init, begin_task, predict, update, end_task, check_params)


def _with_count(state: Any, count: Array) -> Any:
    """The meta learner's state with its step count set (the authors' counter)."""
    if not hasattr(state, "count") or not hasattr(state, "_replace"):
        raise InputError(
            "counter='authors' sets the meta learner's step count, so its state needs an int32 "
            "`count` field (parameter_free.direction_magnitude and oco.ogd have one), got "
            f"{type(state).__name__}; use counter='global'"
        )
    return state._replace(count=jnp.asarray(count, jnp.result_type(state.count)))


def _meta_learner(
    dim: int,
    within: OCOLearner,
    meta: OCOLearner,
    loss: _losses.Loss,
    mode: str,
    counter: str,
    meta_gradient: str,
) -> MultiTaskLearner:
    def init(params: MetaParams) -> MetaState:
        dtype = params_dtype(params)
        zeros, zero = jnp.zeros(dim, dtype), jnp.zeros((), jnp.int32)
        meta_state = meta.init(params.meta, zeros)
        bias = meta.iterate(meta_state, params.meta)
        inner = within.init(params.within, zeros)
        return MetaState(inner, meta_state, bias, _within_init(dim, dtype), zero)

    def begin_task(state: MetaState, params, task: TaskInfo) -> MetaState:
        inner = within.init(params.within, jnp.zeros_like(state.bias))
        return state._replace(within=inner, task=_within_init(dim, state.bias.dtype, task.size))

    def predict(state: MetaState, params, x: Array) -> Array:
        return jnp.vdot(x, within.iterate(state.within, params.within) + state.bias)

    def update(state: MetaState, params, x: Array, y: Array) -> MetaState:
        w = within.iterate(state.within, params.within) + state.bias
        g = _grad(loss, w, x, y)
        new = state._replace(
            within=within.update(state.within, params.within, g),
            task=_within_step(state.task, w, g),
        )
        if mode == "aggressive":
            meta_state = state.meta
            if counter == "authors":  # k = (t - 1) n_t + i: the meta learner's count before is k-1
                meta_state = _with_count(
                    meta_state, state.num_tasks * state.task.size + state.task.count
                )
            meta_state = meta.update(meta_state, params.meta, g)
            new = new._replace(meta=meta_state, bias=meta.iterate(meta_state, params.meta))
        return new

    def end_task(state: MetaState, params, task: TaskInfo) -> MetaState:
        if mode == "lazy":
            count, grads = state.task.count, state.task.sum_grads
            if meta_gradient == "mean":
                grads = grads / jnp.maximum(count, 1).astype(grads.dtype)
            meta_state = meta.update(state.meta, params.meta, grads)
            meta_state = tree_where(count > 0, meta_state, state.meta)  # an empty task: no step
            state = state._replace(meta=meta_state, bias=meta.iterate(meta_state, params.meta))
        return state._replace(num_tasks=state.num_tasks + 1)

    def check_params(params: MetaParams) -> None:
        _check_params_class(params, MetaParams, f"the {mode} meta-learner")
        _check_role_params("within", within, params.within, dim)
        _check_role_params("meta", meta, params.meta, dim)

    return MultiTaskLearner(init, begin_task, predict, update, end_task, check_params)


@learner_factory
def aggressive(
    dim: int,
    within: OCOLearner | None = None,
    meta: OCOLearner | None = None,
    loss: _losses.Loss = _losses.absolute,
    counter: str = "global",
) -> MultiTaskLearner:
    """Aggressive (Alg. 4): the bias is played by a meta learner fed every within-task gradient.

    ::

        theta = meta.iterate;  w = u + theta;  g = loss'(<x, w>, y) x
        u <- within.update(g)          (step i of the task; restarted every task)
        theta <- meta.update(g)        (step k over all tasks; never restarted)

    `k` is the global index of the point over all tasks (`counter="global"`, the learner's
    own count), or the authors' `(t - 1) n_t + i` (`counter="authors"`, set into the meta
    learner's `count` before each step), which equals it only when all tasks have the same
    size (it matters on Schools).

    Args:
      dim: the input dimension (static).
      within: the within-task OCO learner (static; default `direction_magnitude("ons")`).
      meta: the meta OCO learner (static; default `direction_magnitude("ons")`).
      loss: the loss (static).
      counter: `"global"` or `"authors"` (static).

    Returns:
      A :class:`~ojax.core.MultiTaskLearner` with params :class:`MetaParams`; its state
      takes the params' dtype (`init` sees only the params): build them in the data's dtype.

    References:
      Denevi, G., Stamos, D. and Pontil, M. (2020). Online parameter-free learning of multiple
      low variance tasks.

    Examples:
      >>> import jax
      >>> from ojax import envs, meta
      >>> tasks, _ = envs.low_variance_tasks(jax.random.key(0), num_tasks=40, dim=3)
      >>> trace = meta.run_meta(meta.aggressive(3), meta.MetaParams.paper(), tasks)
      >>> print(round(float(meta.cumulative_error(trace.loss, trace.mask)[-1]), 4))
      3.5414
    """
    check_choice("counter", counter, COUNTERS)
    return _meta_learner(*_roles(dim, within, meta), loss, "aggressive", counter, "mean")


@learner_factory
def lazy(
    dim: int,
    within: OCOLearner | None = None,
    meta: OCOLearner | None = None,
    loss: _losses.Loss = _losses.absolute,
    meta_gradient: str = "mean",
) -> MultiTaskLearner:
    """Lazy (Alg. 5): the bias is updated once per task with the task's gradients.

    ::

        theta_t = meta.iterate (frozen during task t); u as in Alg. 3
        at the end of task t (if it has points): G = sum_i g_i,
        theta <- meta.update(G / n_t)   (meta_gradient="mean", the paper)
                 meta.update(G)         (meta_gradient="sum", the authors' Lazy_SS)

    With the direction-magnitude meta learner: `c = <G / n_t, v>`,
    `v <- P(v - sqrt(2/t) G / n_t)` and a bettor step with count `t`.

    Args:
      dim: the input dimension (static).
      within: the within-task OCO learner (static; default `direction_magnitude("ons")`).
      meta: the meta OCO learner (static; default `direction_magnitude("ons")`).
      loss: the loss (static).
      meta_gradient: `"mean"` or `"sum"` of the task's gradients (static).

    Returns:
      A :class:`~ojax.core.MultiTaskLearner` with params :class:`MetaParams`; its state
      takes the params' dtype (`init` sees only the params): build them in the data's dtype.

    References:
      Denevi, G., Stamos, D. and Pontil, M. (2020). Online parameter-free learning of multiple
      low variance tasks (Appendix D).

    Examples:
      >>> import jax
      >>> from ojax import envs, meta
      >>> tasks, _ = envs.low_variance_tasks(jax.random.key(0), num_tasks=40, dim=3)
      >>> trace = meta.run_meta(meta.lazy(3), meta.MetaParams.paper(), tasks)
      >>> print(round(float(meta.cumulative_error(trace.loss, trace.mask)[-1]), 4))
      3.6728
    """
    check_choice("meta_gradient", meta_gradient, META_GRADIENTS)
    return _meta_learner(*_roles(dim, within, meta), loss, "lazy", "global", meta_gradient)


def _roles(dim: int, within, meta) -> tuple[int, OCOLearner, OCOLearner]:
    dim = check_int("dim", dim, 1)
    within = _check_role("within", direction_magnitude("ons") if within is None else within)
    meta = _check_role("meta", direction_magnitude("ons") if meta is None else meta)
    return dim, within, meta


def ogd_within_task(dim: int, loss: _losses.Loss = _losses.absolute) -> MultiTaskLearner:
    """Unprojected within-task OGD around a fixed bias, `u <- u - eta_in g` (params
    :meth:`FixedBiasParams.ogd`): :func:`biased_within_task` with `ojax.oco.ogd("none")`."""
    return biased_within_task(dim, ogd("none"), loss)


def aggressive_ogd(dim: int, loss: _losses.Loss = _losses.absolute) -> MultiTaskLearner:
    """Aggressive_SS, the authors' tuned baseline: after each point `theta <- theta - eta_meta
    g` and `u <- u - eta_in g` (params :meth:`MetaParams.ogd`): :func:`aggressive` with
    `ojax.oco.ogd("none")` in both roles."""
    return aggressive(dim, ogd("none"), ogd("none"), loss)


def lazy_ogd(dim: int, loss: _losses.Loss = _losses.absolute) -> MultiTaskLearner:
    """Lazy_SS, the authors' tuned baseline: `u <- u - eta_in g` per point and `theta <- theta
    - eta_meta sum_i g_i` at the end of each task (the SUM, as the authors step; params
    :meth:`MetaParams.ogd`): :func:`lazy` with `ojax.oco.ogd("none")` and
    `meta_gradient="sum"`.

    Examples:
      >>> import jax
      >>> from ojax import envs, meta
      >>> tasks, _ = envs.low_variance_tasks(jax.random.key(0), num_tasks=40, dim=3)
      >>> trace = meta.run_meta(meta.lazy_ogd(3), meta.MetaParams.ogd(0.1, 0.01), tasks)
      >>> print(round(float(meta.cumulative_error(trace.loss, trace.mask)[-1]), 4))
      3.9455
    """
    return lazy(dim, ogd("none"), ogd("none"), loss, meta_gradient="sum")


__all__ = [
    "COUNTERS",
    "FixedBiasParams",
    "FixedBiasState",
    "META_GRADIENTS",
    "MetaParams",
    "MetaState",
    "WithinTask",
    "aggressive",
    "aggressive_ogd",
    "biased_within_task",
    "check_bias",
    "lazy",
    "lazy_ogd",
    "ogd_within_task",
    "params_dtype",
]
