"""Kernel Passive-Aggressive (PA-I), PAIO and the averaged source classifier of OTL.

Every learner of :mod:`ojax.transfer` is a :class:`~ojax.core.Predictor`: `predict` returns a
real score whose sign (`sign(0) = +1`) is the predicted label, so a mistake is
:data:`ojax.losses.zero_one` of the score, counted before the update by :func:`ojax.run`. Every
kernel state has a `support_vectors` property (the support vectors its expansions hold), which
:func:`ojax.transfer.support_vectors_record` records after each update.

An example is a :class:`~ojax.transfer.kernels.KernelPoint` (or a pair of them for the two-view
learners of :mod:`ojax.transfer.heterogeneous`). A frozen source classifier `h` never changes,
so its outputs on the target pool are computed once and carried by the points as `offset`:

* PA (kernel PA-I) on the target only: points with offset 0.
* PAIO: the same PA-I, started from `h`'s support vectors and averaged coefficients. Since
  PA-I only appends, `f = h + (new terms)`: it is :func:`kernel_pa` on points carrying `h`.

A support vector is added on every margin error (hinge loss > 0), not only on mistakes; the
support vectors of `h` are counted by the caller (`base_support_vectors` of
:func:`ojax.transfer.run_kernel`).

References:
  Crammer, K., Dekel, O., Keshet, J., Shalev-Shwartz, S., Singer, Y. (2006). Online
  passive-aggressive algorithms.
  Zhao, P., Hoi, S. C. H. (2010). OTL: a framework of online transfer learning.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax.numpy as jnp

from ojax import losses
from ojax.core import Array, Predictor, learner_factory
from ojax.transfer import kernels
from ojax.transfer.kernels import KernelPoint, SVBuffer
from ojax.validation import check_positive

PAPER_C = 5.0
"""The paper's PA-I aggressiveness ``C`` (every method, both tables)."""
PAPER_SOURCE_WIDTH = 4.0
"""The paper's ``sigma_1``: the source classifier ``h``, PAIO, and each view of COTL / SCT."""
PAPER_TARGET_WIDTH = 8.0
"""The paper's ``sigma_2``: PA and OTL's ``f`` on the target (the whole vector in Table 4)."""
PAPER_LEARNING_RATE = 0.5
"""The paper's ``eta`` of OTL's weights."""


def scalar(value: float, dtype: Any = None) -> Array:
    """`value` as a 0-d array of `dtype` (default: JAX's default float)."""
    return jnp.asarray(value, jnp.zeros(()).dtype if dtype is None else dtype)


def sign(score: Array) -> Array:
    """`+1` where `score >= 0` else `-1` (so `sign(0) = +1`), in `score`'s dtype."""
    return jnp.where(score >= 0, 1.0, -1.0).astype(score.dtype)


def project(z: Array) -> Array:
    """`Pi(z) = max(0, min(1, (z + 1) / 2))`, mapping a score (or a label) into [0, 1]."""
    return jnp.clip((z + 1.0) / 2.0, 0.0, 1.0)


def pa_step(
    buffer: SVBuffer,
    point: KernelPoint,
    score: Array,
    y: Array,
    C: Array,
    width: Array,
    options: tuple[str, str, str],
) -> SVBuffer:
    """One PA-I update of `buffer` at `point` of current `score`: `tau = min(C, l /
    k(x, x))` and `alpha = y tau` when `l = max(0, 1 - y score) > 0`. `options` is
    `(mode, kernel, when_full)`."""
    mode, kernel, when_full = options
    loss = losses.hinge.value(score, y)
    kxx = kernels.self_kernel(point, width, mode, kernel)
    tau = jnp.minimum(C, loss / jnp.where(kxx > 0, kxx, 1.0))
    tau = jnp.where(kxx > 0, tau, C)
    return kernels.add(buffer, point, y * tau, loss > 0, when_full, mode)


class KernelPAParams(NamedTuple):
    """Kernel PA-I's hyperparameters."""

    C: Array  # aggressiveness C > 0, shape ()
    width: Array  # Gaussian width sigma > 0 ("direct" mode; in "gram" mode it is in the Gram)

    @classmethod
    def default(cls, dtype: Any = None) -> KernelPAParams:
        """The paper's target PA (:meth:`paper`)."""
        return cls.paper(dtype)

    @classmethod
    def paper(cls, dtype: Any = None) -> KernelPAParams:
        """PA on the target as in the paper: `C = 5`, `sigma_2 = 8`.

        Examples:
          >>> print(KernelPAParams.paper().width)
          8.0
        """
        return cls(scalar(PAPER_C, dtype), scalar(PAPER_TARGET_WIDTH, dtype))

    @classmethod
    def paper_source(cls, dtype: Any = None) -> KernelPAParams:
        """The source classifier `h` and PAIO as in the paper: `C = 5`, `sigma_1 = 4`.

        Examples:
          >>> print(KernelPAParams.paper_source().width)
          4.0
        """
        return cls(scalar(PAPER_C, dtype), scalar(PAPER_SOURCE_WIDTH, dtype))


class KernelPAState(NamedTuple):
    """The state of KernelPA: a pytree of arrays, carried from step to step.

    Attributes:
      buffer: the expansion f (without the offset)
    """

    buffer: SVBuffer  # the expansion f (without the offset)

    @property
    def support_vectors(self) -> Array:
        """`()` int32, the support vectors held."""
        return kernels.held(self.buffer)


def check_pa_params(params: KernelPAParams) -> None:
    """Raises unless `C > 0` and `width > 0`."""
    check_positive("C", params.C)
    check_positive("width", params.width)


@learner_factory
def kernel_pa(
    capacity: int,
    mode: str = "gram",
    kernel: str = "gaussian",
    when_full: str = "replace_oldest",
    dim: int | None = None,
) -> Predictor:
    """Kernel Passive-Aggressive (PA-I); with points carrying `h` as offset it is PAIO.

    The score is `s = offset + f(x)`; after the label::

        l = max(0, 1 - y s);  if l > 0:  tau = min(C, l / k(x, x)),  f <- f + y tau k(x, .)

    Args:
      capacity: buffer size (static); the stream length for an exact run; in `"pool"` mode
        the pool size `N`.
      mode: `"gram"` (points are pool indices with Gram rows), `"pool"` (the same points,
        coefficients stored densely by pool index: the fast exact layout, no budget) or
        `"direct"` (features).
      kernel: `"gaussian"` or `"linear"` (`"direct"` mode; a Gram is data).
      when_full: `"replace_oldest"` or `"discard"` (see :mod:`ojax.transfer.kernels`).
      dim: feature dimension (`"direct"` mode only).

    Returns:
      A :class:`~ojax.core.Predictor` over one view; its state is :class:`KernelPAState`.

    References:
      Crammer, K. et al. (2006). Online passive-aggressive algorithms.

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax import losses, run
      >>> from ojax.transfer import KernelPAParams, kernel_pa
      >>> xs = jnp.array([[0.0, 1.0], [1.0, 0.0], [0.0, 1.0]])
      >>> ys = jnp.array([1.0, -1.0, 1.0])
      >>> pa = kernel_pa(8, mode="direct", dim=2)
      >>> _, tr = run(pa, KernelPAParams(jnp.array(5.0), jnp.array(1.0)), xs, ys, losses.hinge)
      >>> print([round(float(v), 3) for v in tr.prediction])
      [0.0, 0.368, 0.497]
    """
    kernels.check_common(capacity, mode, kernel, when_full, dim)
    options = (mode, kernel, when_full)

    def init(params: KernelPAParams) -> KernelPAState:
        dtype = jnp.asarray(params.C).dtype
        return KernelPAState(kernels.empty_buffer(capacity, mode, dim, dtype))

    def predict(state: KernelPAState, params: KernelPAParams, x: Any) -> Array:
        point = kernels.one_view(x, "kernel PA")
        return point.offset + kernels.evaluate(state.buffer, point, params.width, mode, kernel)

    def update(state: KernelPAState, params: KernelPAParams, x: Any, y: Array) -> KernelPAState:
        point = kernels.one_view(x, "kernel PA")
        score = predict(state, params, point)
        return KernelPAState(
            pa_step(state.buffer, point, score, y, params.C, params.width, options)
        )

    return Predictor(init, predict, update, check_pa_params)


paio = kernel_pa
"""PAIO (PA initialized with the old classifier): :func:`kernel_pa` on points whose offset is
the source classifier's output ``h(x)``; ``f = h + `` the target support vectors it appends."""


class AveragedPAState(NamedTuple):
    """The state of AveragedPA: a pytree of arrays, carried from step to step.

    Attributes:
      buffer: the running PA-I expansion alpha_t
      average: (capacity,) averaged coefficients alpha_bar_t (same slots as buffer)
      steps: (), int32: examples seen t
    """

    buffer: SVBuffer  # the running PA-I expansion alpha_t
    average: Array  # (capacity,) averaged coefficients alpha_bar_t (same slots as buffer)
    steps: Array  # (), int32: examples seen t

    @property
    def support_vectors(self) -> Array:
        """`()` int32, the support vectors held."""
        return kernels.held(self.buffer)


@learner_factory
def averaged_kernel_pa(
    capacity: int,
    mode: str = "gram",
    kernel: str = "gaussian",
    dim: int | None = None,
) -> Predictor:
    """Averaged kernel PA-I, the source classifier `h` of OTL.

    It predicts and updates as :func:`kernel_pa` (with the running coefficients); after each
    step the coefficient vector is averaged (a new support vector enters both with a zero
    history)::

        alpha_bar_t = ((t - 1) / t) alpha_bar_{t-1} + alpha_t / t

    `h` is the expansion with the support vectors of the run and the coefficients
    `alpha_bar_n` (:func:`source_classifier`). The buffer never overwrites: `capacity` must
    be at least the source length.

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax import losses, run
      >>> from ojax.transfer import KernelPAParams, averaged_kernel_pa
      >>> xs = jnp.array([[0.0, 1.0], [1.0, 0.0]])
      >>> learner = averaged_kernel_pa(4, mode="direct", dim=2)
      >>> state, _ = run(learner, KernelPAParams(jnp.array(5.0), jnp.array(1.0)), xs,
      ...                jnp.array([1.0, -1.0]), losses.hinge)
      >>> print([round(float(v), 3) for v in state.average])
      [1.0, -0.684, 0.0, 0.0]
    """
    pa = kernel_pa(capacity, mode, kernel, "discard", dim)

    def init(params: KernelPAParams) -> AveragedPAState:
        buffer = pa.init(params).buffer
        return AveragedPAState(buffer, jnp.zeros_like(buffer.coef), jnp.zeros((), jnp.int32))

    def predict(state: AveragedPAState, params: KernelPAParams, x: Any) -> Array:
        return pa.predict(KernelPAState(state.buffer), params, x)

    def update(state: AveragedPAState, params: KernelPAParams, x: Any, y: Array):
        buffer = pa.update(KernelPAState(state.buffer), params, x, y).buffer
        steps = state.steps + 1
        t = steps.astype(buffer.coef.dtype)
        average = ((t - 1.0) / t) * state.average + buffer.coef / t
        return AveragedPAState(buffer, average, steps)

    return Predictor(init, predict, update, check_pa_params)


def source_classifier(state: AveragedPAState) -> SVBuffer:
    """The source classifier `h`: the averaged coefficients on the run's support vectors."""
    return SVBuffer(state.buffer.keys, state.average, state.buffer.count)


__all__ = [
    "AveragedPAState",
    "KernelPAParams",
    "KernelPAState",
    "PAPER_C",
    "PAPER_LEARNING_RATE",
    "PAPER_SOURCE_WIDTH",
    "PAPER_TARGET_WIDTH",
    "averaged_kernel_pa",
    "check_pa_params",
    "kernel_pa",
    "paio",
    "pa_step",
    "project",
    "scalar",
    "sign",
    "source_classifier",
]
