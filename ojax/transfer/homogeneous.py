"""Homogeneous online transfer: OTL, OTL(fixed), HomOTL-II, and the four methods in one scan.

The source and the target share the feature space. The frozen source classifier `h` is the
offset the points carry (:class:`~ojax.transfer.kernels.KernelPoint`); `f` is a PA-I expansion
learned on the target from 0. Every learner is a :class:`~ojax.core.Predictor` whose state has
a `support_vectors` property (`f`'s; `|SV(h)|` is added by the caller) and a weight vector
recorded by :func:`ojax.transfer.weights_record`.

References:
  Zhao, P., Hoi, S. C. H. (2010). OTL: a framework of online transfer learning, Alg. 1.
  Zhao, P., Hoi, S. C. H., Wang, J., Li, B. (2014). Online transfer learning (HomOTL-II).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from ojax.core import Array, Predictor, learner_factory, scalars
from ojax.transfer import kernels
from ojax.transfer.kernels import KernelPoint, SVBuffer
from ojax.transfer.pa import (
    PAPER_C,
    PAPER_LEARNING_RATE,
    PAPER_SOURCE_WIDTH,
    PAPER_TARGET_WIDTH,
    KernelPAParams,
    KernelPAState,
    kernel_pa,
    pa_step,
    paio,
    project,
    scalar,
    sign,
)
from ojax.validation import check_int, check_positive, check_range


class OTLParams(NamedTuple):
    """OTL's hyperparameters."""

    C: Array  # PA-I aggressiveness of f, C > 0, shape ()
    width: Array  # width sigma_2 of f ("direct" mode), shape ()
    learning_rate: Array  # eta > 0 of the weights, shape () (ignored by OTL(fixed))

    @classmethod
    def default(cls, dtype: Any = None) -> OTLParams:
        """The paper's OTL (:meth:`paper`)."""
        return cls.paper(dtype)

    @classmethod
    def paper(cls, dtype: Any = None) -> OTLParams:
        """The paper's OTL: `C = 5`, `sigma_2 = 8`, `eta = 1/2`.

        Examples:
          >>> print(OTLParams.paper().learning_rate)
          0.5
        """
        return cls(
            scalar(PAPER_C, dtype),
            scalar(PAPER_TARGET_WIDTH, dtype),
            scalar(PAPER_LEARNING_RATE, dtype),
        )


class OTLState(NamedTuple):
    """The state of OTL: a pytree of arrays, carried from step to step.

    Attributes:
      buffer: the target expansion f
      log_weights: (2,) log of the normalized weights (w1 of h, w2 of f)
    """

    buffer: SVBuffer  # the target expansion f
    log_weights: Array  # (2,) log of the normalized weights (w1 of h, w2 of f)

    @property
    def support_vectors(self) -> Array:
        """`()` int32, the support vectors of `f`."""
        return kernels.held(self.buffer)

    @property
    def weights(self) -> Array:
        """`(2,)` the normalized weights `(w_h, w_f)`."""
        return jnp.exp(self.log_weights)


@learner_factory
def otl(
    capacity: int,
    mode: str = "gram",
    kernel: str = "gaussian",
    when_full: str = "replace_oldest",
    dim: int | None = None,
    fixed_weights: bool = False,
) -> Predictor:
    """Homogeneous OTL (Algorithm 1): a weighted vote of the frozen `h` and a PA-I `f`.

    `h(x)` is the point's offset. With `w1 = w2 = 1/2` at the start::

        predict  sign(w1 Pi(h(x)) + w2 Pi(f(x)) - 1/2)
        l_1 = (Pi(h(x)) - Pi(y))^2,  l_2 = (Pi(f(x)) - Pi(y))^2
        w_i <- w_i exp(-eta l_i) / (w_1 exp(-eta l_1) + w_2 exp(-eta l_2))
        f   <- PA-I update of f on its own hinge loss max(0, 1 - y f(x))

    The weights are kept as normalized logarithms (so they stay positive and sum to one).
    `fixed_weights=True` is OTL(fixed): the weights stay 1/2.

    Mistake bound: `M <= 4 min(S_h, S_f) + 8 ln 2` at `eta = 1/2`, with `S_g` the sum of
    the squared losses `l`.

    References:
      Zhao, P., Hoi, S. C. H. (2010). OTL: a framework of online transfer learning, Alg. 1.

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax.transfer import KernelPoint, OTLParams, otl
      >>> learner = otl(4, mode="direct", dim=2)
      >>> params = OTLParams(jnp.array(5.0), jnp.array(1.0), jnp.array(0.5))
      >>> point = KernelPoint(jnp.array([1.0, 0.0]), None, jnp.array(0.6))
      >>> state = learner.update(learner.init(params), params, point, jnp.array(1.0))
      >>> print([round(float(w), 4) for w in state.weights])
      [0.5262, 0.4738]
    """
    pa = kernel_pa(capacity, mode, kernel, when_full, dim)
    options = (mode, kernel, when_full)

    def init(params: OTLParams) -> OTLState:
        dtype = jnp.asarray(params.C).dtype
        return OTLState(
            pa.init(KernelPAParams(params.C, params.width)).buffer,
            jnp.full((2,), -jnp.log(2.0), dtype),
        )

    def outputs(state: OTLState, params: OTLParams, x: Any) -> tuple[KernelPoint, Array, Array]:
        point = kernels.one_view(x, "OTL")
        f = kernels.evaluate(state.buffer, point, params.width, mode, kernel)
        return point, point.offset, f

    def predict(state: OTLState, params: OTLParams, x: Any) -> Array:
        _, h, f = outputs(state, params, x)
        w = jnp.exp(state.log_weights)
        return w[0] * project(h) + w[1] * project(f) - 0.5

    def update(state: OTLState, params: OTLParams, x: Any, y: Array) -> OTLState:
        point, h, f = outputs(state, params, x)
        target = project(y)
        squared = jnp.stack([(project(h) - target) ** 2, (project(f) - target) ** 2])
        if fixed_weights:
            log_weights = state.log_weights
        else:
            log_weights = state.log_weights - params.learning_rate * squared
            log_weights = log_weights - jax.nn.logsumexp(log_weights)
        buffer = pa_step(state.buffer, point, f, y, params.C, params.width, options)
        return OTLState(buffer, log_weights)

    def check_params(params: OTLParams) -> None:
        check_positive("C", params.C)
        check_positive("width", params.width)
        check_positive("learning_rate", params.learning_rate)

    return Predictor(init, predict, update, check_params)


def otl_fixed(
    capacity: int,
    mode: str = "gram",
    kernel: str = "gaussian",
    when_full: str = "replace_oldest",
    dim: int | None = None,
) -> Predictor:
    """OTL(fixed): :func:`otl` with the weights held at 1/2 (`learning_rate` is ignored)."""
    return otl(capacity, mode, kernel, when_full, dim, fixed_weights=True)


class HomOTL2Params(NamedTuple):
    """HomOTL-II's hyperparameters."""

    C: Array  # PA-I aggressiveness of f, C > 0, shape ()
    width: Array  # width of f ("direct" mode), shape ()
    beta: Array  # Hedge discount in (0, 1), shape ()

    @classmethod
    def default(cls, dtype: Any = None) -> HomOTL2Params:
        """The paper's `C = 5` and `sigma_2 = 8`; `beta = 0.9` (the paper's depends on
        the stream's length: :meth:`paper`)."""
        return cls(*scalars(PAPER_C, PAPER_TARGET_WIDTH, 0.9, dtype=dtype))

    @classmethod
    def paper(cls, num_steps: int, dtype: Any = None) -> HomOTL2Params:
        """`C = 5`, `sigma_2 = 8` and `beta = sqrt(T) / (sqrt(T) + sqrt(ln 2))` for a
        stream of `num_steps = T` examples.

        Examples:
          >>> print(round(float(HomOTL2Params.paper(100).beta), 4))
          0.9231
        """
        t = math.sqrt(check_int("num_steps", num_steps, 1))
        beta = t / (t + math.sqrt(math.log(2.0)))
        return cls(scalar(PAPER_C, dtype), scalar(PAPER_TARGET_WIDTH, dtype), scalar(beta, dtype))


class HomOTL2State(NamedTuple):
    """The state of HomOTL2: a pytree of arrays, carried from step to step.

    Attributes:
      buffer: the target expansion f
      mistakes: (2,) int32 mistakes so far of sign(h) and sign(f)
    """

    buffer: SVBuffer  # the target expansion f
    mistakes: Array  # (2,) int32 mistakes so far of sign(h) and sign(f)

    @property
    def support_vectors(self) -> Array:
        """`()` int32, the support vectors of `f`."""
        return kernels.held(self.buffer)


def homotl2_weights(state: HomOTL2State, params: HomOTL2Params) -> Array:
    """The normalized weights `(w_h, w_f)`, proportional to `beta^mistakes`."""
    return jax.nn.softmax(state.mistakes.astype(params.beta.dtype) * jnp.log(params.beta))


@learner_factory
def homotl2(
    capacity: int,
    mode: str = "gram",
    kernel: str = "gaussian",
    when_full: str = "replace_oldest",
    dim: int | None = None,
) -> Predictor:
    """HomOTL-II: Hedge over the signs of `h` and `f` with mistake losses.

    ::

        predict  sign(w1 sign(h(x)) + w2 sign(f(x)))
        z_g = 1[sign(g(x)) != y],  w_g <- w_g beta^{z_g},  normalized to w1 + w2 = 1
        f   <- PA-I update of f on its own hinge loss

    `sign(0) = +1` throughout; `beta = sqrt(T) / (sqrt(T) + sqrt(ln 2))` is the usual choice
    for a stream of length `T` (:meth:`HomOTL2Params.paper`). The state keeps the mistake
    counts `m_g` (so `w_g = beta^{m_g} / sum`): a tie (equal counts, signs that disagree) is
    exact and goes to +1.

    References:
      Zhao, P., Hoi, S. C. H., Wang, J., Li, B. (2014). Online transfer learning (HomOTL-II).

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax.transfer import HomOTL2Params, KernelPoint, homotl2, homotl2_weights
      >>> learner = homotl2(4, mode="direct", dim=2)
      >>> params = HomOTL2Params(jnp.array(5.0), jnp.array(1.0), jnp.array(0.5))
      >>> point = KernelPoint(jnp.array([1.0, 0.0]), None, jnp.array(-0.6))
      >>> state = learner.update(learner.init(params), params, point, jnp.array(1.0))
      >>> print([round(float(w), 4) for w in homotl2_weights(state, params)])
      [0.3333, 0.6667]
    """
    pa = kernel_pa(capacity, mode, kernel, when_full, dim)
    options = (mode, kernel, when_full)

    def init(params: HomOTL2Params) -> HomOTL2State:
        buffer = pa.init(KernelPAParams(params.C, params.width)).buffer
        return HomOTL2State(buffer, jnp.zeros((2,), jnp.int32))

    def predict(state: HomOTL2State, params: HomOTL2Params, x: Any) -> Array:
        point = kernels.one_view(x, "HomOTL-II")
        f = kernels.evaluate(state.buffer, point, params.width, mode, kernel)
        w = homotl2_weights(state, params)
        return w[0] * sign(point.offset) + w[1] * sign(f)

    def update(state: HomOTL2State, params: HomOTL2Params, x: Any, y: Array) -> HomOTL2State:
        point = kernels.one_view(x, "HomOTL-II")
        f = kernels.evaluate(state.buffer, point, params.width, mode, kernel)
        wrong = jnp.stack([sign(point.offset) != y, sign(f) != y]).astype(jnp.int32)
        buffer = pa_step(state.buffer, point, f, y, params.C, params.width, options)
        return HomOTL2State(buffer, state.mistakes + wrong)

    def check_params(params: HomOTL2Params) -> None:
        check_positive("C", params.C)
        check_positive("width", params.width)
        check_range("beta", params.beta, 0.0, 1.0, low_open=True, high_open=True)

    return Predictor(init, predict, update, check_params)


# ---------------------------------------------- the four homogeneous methods in one scan


class HomogeneousParams(NamedTuple):
    """The hyperparameters of the four homogeneous methods run together."""

    C: Array  # PA-I aggressiveness of every expansion, C > 0, shape ()
    width: Array  # sigma_2 of PA and of OTL's f ("direct" mode), shape ()
    source_width: Array  # sigma_1 of PAIO ("direct" mode), shape ()
    learning_rate: Array  # eta > 0 of OTL's weights, shape ()

    @classmethod
    def paper(cls, dtype: Any = None) -> HomogeneousParams:
        """The paper's Table 2 settings: `C = 5`, `sigma_2 = 8`, `sigma_1 = 4`,
        `eta = 1/2`.

        Examples:
          >>> print(HomogeneousParams.paper().source_width)
          4.0
        """
        return cls(
            scalar(PAPER_C, dtype),
            scalar(PAPER_TARGET_WIDTH, dtype),
            scalar(PAPER_SOURCE_WIDTH, dtype),
            scalar(PAPER_LEARNING_RATE, dtype),
        )


class HomogeneousState(NamedTuple):
    """The state of Homogeneous: a pytree of arrays, carried from step to step.

    Attributes:
      f: the PA-I expansion at sigma_2: PA's classifier, and OTL's / OTL(fixed)'s f
      paio: pAIO's terms at sigma_1 (h is the offset)
      log_weights: (2,) OTL's normalized log-weights
      fixed_log_weights: (2,) OTL(fixed)'s, log(1/2) throughout
    """

    f: SVBuffer  # the PA-I expansion at sigma_2: PA's classifier, and OTL's / OTL(fixed)'s f
    paio: SVBuffer  # PAIO's terms at sigma_1 (h is the offset)
    log_weights: Array  # (2,) OTL's normalized log-weights
    fixed_log_weights: Array  # (2,) OTL(fixed)'s, log(1/2) throughout

    @property
    def support_vectors(self) -> Array:
        """`(4,)` int32, the support vectors of each head (`h`'s not included)."""
        f, g = kernels.held(self.f), kernels.held(self.paio)
        return jnp.stack([f, g, f, f])

    @property
    def weights(self) -> Array:
        """`(2,)` OTL's normalized weights `(w_h, w_f)`."""
        return jnp.exp(self.log_weights)


HOMOGENEOUS_HEADS = ("PA", "PAIO", "OTL_fixed", "OTL")
"""The heads of :func:`homogeneous_methods`, in the order of its scores."""


def _head_params(
    params: HomogeneousParams,
) -> tuple[KernelPAParams, KernelPAParams, OTLParams]:
    """PA's, PAIO's and OTL's params out of the combined ones."""
    pa_params = KernelPAParams(params.C, params.width)
    paio_params = KernelPAParams(params.C, params.source_width)
    otl_params = OTLParams(params.C, params.width, params.learning_rate)
    return pa_params, paio_params, otl_params


def _head_points(x: Any) -> tuple[KernelPoint, KernelPoint, KernelPoint]:
    """PA's point (no offset), OTL's (`h` as offset) and PAIO's (the source width's row)."""
    p_target, p_source = kernels.two_views(x, "homogeneous_methods")
    return p_target._replace(offset=jnp.zeros_like(p_target.offset)), p_target, p_source


@learner_factory
def homogeneous_methods(
    capacity: int,
    mode: str = "pool",
    kernel: str = "gaussian",
    when_full: str = "replace_oldest",
    dim: int | None = None,
) -> Predictor:
    """PA, PAIO, OTL(fixed) and OTL run together on one stream (one scan, shared work).

    The four methods of the homogeneous experiment, each computed by its own learner
    (:func:`~ojax.transfer.kernel_pa`, :func:`~ojax.transfer.paio`, :func:`otl_fixed`,
    :func:`otl`), with one state shared where the algorithms coincide: OTL's and OTL(fixed)'s
    `f` are PA-I runs at the same width on their own hinge loss, i.e. exactly PA's classifier,
    so the three share the expansion `f` (updated once, by OTL's update). PAIO keeps its own
    expansion at `source_width`. `predict` returns the four scores in the order of
    :data:`HOMOGENEOUS_HEADS`, so the labels are `(4,)` per example (the label repeated:
    `ojax.transfer.kernel_pool(..., heads=4)`) and the state's `support_vectors` are the
    four counts.

    An example is a pair of points `(p_target, p_source)` of the same pool row: the Gram row
    at `width` and at `source_width`, both carrying `h(x)` as offset (PA sees offset 0).

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax.transfer import HomogeneousParams, KernelPoint, homogeneous_methods
      >>> learner = homogeneous_methods(4, mode="direct", dim=2)
      >>> one = jnp.array(1.0)
      >>> params = HomogeneousParams(jnp.array(5.0), one, one, jnp.array(0.5))
      >>> p = KernelPoint(jnp.array([1.0, 0.0]), None, jnp.array(0.6))
      >>> state = learner.update(learner.init(params), params, (p, p), jnp.ones(4))
      >>> print([round(float(s), 3) for s in learner.predict(state, params, (p, p))])
      [1.0, 1.0, 0.4, 0.395]
    """
    pa = kernel_pa(capacity, mode, kernel, when_full, dim)
    paio_learner = paio(capacity, mode, kernel, when_full, dim)
    adaptive = otl(capacity, mode, kernel, when_full, dim)
    fixed = otl_fixed(capacity, mode, kernel, when_full, dim)

    def init(params: HomogeneousParams) -> HomogeneousState:
        _, paio_params, otl_params = _head_params(params)
        start = adaptive.init(otl_params)
        return HomogeneousState(
            start.buffer,
            paio_learner.init(paio_params).buffer,
            start.log_weights,
            fixed.init(otl_params).log_weights,
        )

    def predict(state: HomogeneousState, params: HomogeneousParams, x: Any) -> Array:
        pa_params, paio_params, otl_params = _head_params(params)
        p_plain, p_target, p_source = _head_points(x)
        return jnp.stack(
            [
                pa.predict(KernelPAState(state.f), pa_params, p_plain),
                paio_learner.predict(KernelPAState(state.paio), paio_params, p_source),
                fixed.predict(OTLState(state.f, state.fixed_log_weights), otl_params, p_target),
                adaptive.predict(OTLState(state.f, state.log_weights), otl_params, p_target),
            ]
        )

    def update(
        state: HomogeneousState, params: HomogeneousParams, x: Any, y: Array
    ) -> HomogeneousState:
        _, paio_params, otl_params = _head_params(params)
        _, p_target, p_source = _head_points(x)
        label = y[HOMOGENEOUS_HEADS.index("OTL")]
        # OTL's update moves f exactly as PA's and OTL(fixed)'s would (the shared expansion)
        new = adaptive.update(OTLState(state.f, state.log_weights), otl_params, p_target, label)
        paio_label = y[HOMOGENEOUS_HEADS.index("PAIO")]
        g = paio_learner.update(KernelPAState(state.paio), paio_params, p_source, paio_label)
        return HomogeneousState(new.buffer, g.buffer, new.log_weights, state.fixed_log_weights)

    def check_params(params: HomogeneousParams) -> None:
        _, _, otl_params = _head_params(params)
        adaptive.check_params(otl_params)
        check_positive("source_width", params.source_width)

    return Predictor(init, predict, update, check_params)


__all__ = [
    "HOMOGENEOUS_HEADS",
    "HomOTL2Params",
    "HomOTL2State",
    "HomogeneousParams",
    "HomogeneousState",
    "OTLParams",
    "OTLState",
    "homogeneous_methods",
    "homotl2",
    "homotl2_weights",
    "otl",
    "otl_fixed",
]
