"""Heterogeneous online transfer: COTL, COTL0 and SCT over two views `x = (x1, x2)`.

The target feature space contains the source one: `x1` are the features the source saw,
`x2` the new ones. An example is a pair `(point1, point2)` of
:class:`~ojax.transfer.kernels.KernelPoint` (one per view, each with its own Gram rows); the
number of views comes from the data, and a single point given to these learners raises a clear
:class:`~ojax.validation.InputError` (a mismatched view split) when :func:`ojax.run` checks the
data, before anything runs. The frozen source classifier `h` is the first view's offset.

Support vectors (the state's `support_vectors` property; `|SV(h)|` is added by the caller):
COTL stores each margin-error example once (with both of its views), so its count is the number
of updates; SCT's two classifiers count separately.

References:
  Zhao, P., Hoi, S. C. H. (2010). OTL: a framework of online transfer learning, Alg. 2, sec. 5.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax.numpy as jnp

from ojax import losses
from ojax.core import Array, Predictor, learner_factory
from ojax.transfer import kernels
from ojax.transfer.kernels import SVBuffer
from ojax.transfer.pa import (
    PAPER_C,
    PAPER_SOURCE_WIDTH,
    KernelPAParams,
    KernelPAState,
    kernel_pa,
    scalar,
)
from ojax.validation import check_positive


class COTLParams(NamedTuple):
    """COTL's (and COTL0's) hyperparameters."""

    C: Array  # C > 0, shape ()
    width1: Array  # width of the first (source) view's kernel, shape ()
    width2: Array  # width of the second view's kernel, shape ()
    gamma1: Array  # co-regularization weight of f1, > 0, shape ()
    gamma2: Array  # co-regularization weight of f2, > 0, shape ()

    @classmethod
    def default(cls, dtype: Any = None) -> COTLParams:
        """The paper's Table 4 (:meth:`paper`)."""
        return cls.paper(dtype)

    @classmethod
    def paper(cls, dtype: Any = None) -> COTLParams:
        """The paper's Table 4: `C = 5`, width 4 on each view, `gamma1 = gamma2 = 1`.

        Examples:
          >>> print(COTLParams.paper().width2)
          4.0
        """
        one = scalar(1.0, dtype)
        width = scalar(PAPER_SOURCE_WIDTH, dtype)
        return cls(scalar(PAPER_C, dtype), width, width, one, one)


class COTLState(NamedTuple):
    """The state of COTL: a pytree of arrays, carried from step to step.

    Attributes:
      buffer1: terms added to f1 (on the first view; h is the offset)
      buffer2: f2 (on the second view)
    """

    buffer1: SVBuffer  # terms added to f1 (on the first view; h is the offset)
    buffer2: SVBuffer  # f2 (on the second view)

    @property
    def support_vectors(self) -> Array:
        """`()` int32, the examples stored (each with both views): the updates so far."""
        return kernels.held(self.buffer1)


@learner_factory
def cotl(
    capacity: int,
    mode: str = "gram",
    kernel: str = "gaussian",
    when_full: str = "replace_oldest",
    dims: tuple[int, int] | None = None,
) -> Predictor:
    """COTL (Algorithm 2): co-regularized PA over two views `x = (x1, x2)`.

    `f1` starts as `h` (the first point's offset; COTL0: offset 0), `f2` at 0::

        s = (f1(x1) + f2(x2)) / 2,   predict sign(s),   l = max(0, 1 - y s)
        if l > 0:  tau = min(C, 4 g1 g2 l / (g2 k1(x1, x1) + g1 k2(x2, x2)))
                   f1 <- f1 + (tau / (2 g1)) y k1(x1, .),  f2 <- f2 + (tau / (2 g2)) y k2(x2, .)

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax.transfer import COTLParams, KernelPoint, cotl
      >>> learner = cotl(4, mode="direct", dims=(1, 1))
      >>> one = jnp.array(1.0)
      >>> params = COTLParams(jnp.array(5.0), one, one, one, one)
      >>> x = (KernelPoint(jnp.ones(1), None, jnp.array(0.5)),
      ...      KernelPoint(jnp.ones(1), None, jnp.array(0.0)))
      >>> state = learner.update(learner.init(params), params, x, one)
      >>> print(round(float(learner.predict(state, params, x)), 4))
      1.0
    """
    d1, d2 = (None, None) if dims is None else dims
    kernels.check_common(capacity, mode, kernel, when_full, d1)
    kernels.check_common(capacity, mode, kernel, when_full, d2)

    def init(params: COTLParams) -> COTLState:
        dtype = jnp.asarray(params.C).dtype
        return COTLState(
            kernels.empty_buffer(capacity, mode, d1, dtype),
            kernels.empty_buffer(capacity, mode, d2, dtype),
        )

    def parts(state: COTLState, params: COTLParams, x: Any):
        p1, p2 = kernels.two_views(x, "COTL")
        f1 = p1.offset + kernels.evaluate(state.buffer1, p1, params.width1, mode, kernel)
        f2 = p2.offset + kernels.evaluate(state.buffer2, p2, params.width2, mode, kernel)
        return p1, p2, f1, f2

    def predict(state: COTLState, params: COTLParams, x: Any) -> Array:
        _, _, f1, f2 = parts(state, params, x)
        return 0.5 * (f1 + f2)

    def update(state: COTLState, params: COTLParams, x: Any, y: Array) -> COTLState:
        p1, p2, f1, f2 = parts(state, params, x)
        loss = losses.hinge.value(0.5 * (f1 + f2), y)
        k1 = kernels.self_kernel(p1, params.width1, mode, kernel)
        k2 = kernels.self_kernel(p2, params.width2, mode, kernel)
        g1, g2 = params.gamma1, params.gamma2
        denom = g2 * k1 + g1 * k2
        tau = jnp.where(
            denom > 0,
            jnp.minimum(params.C, 4.0 * g1 * g2 * loss / jnp.where(denom > 0, denom, 1.0)),
            params.C,
        )
        accept = loss > 0
        buffer1 = kernels.add(state.buffer1, p1, tau / (2.0 * g1) * y, accept, when_full, mode)
        buffer2 = kernels.add(state.buffer2, p2, tau / (2.0 * g2) * y, accept, when_full, mode)
        return COTLState(buffer1, buffer2)

    def check_params(params: COTLParams) -> None:
        check_positive("C", params.C)
        check_positive("width1", params.width1)
        check_positive("width2", params.width2)
        check_positive("gamma1", params.gamma1)
        check_positive("gamma2", params.gamma2)

    return Predictor(init, predict, update, check_params)


cotl0 = cotl
"""COTL0: :func:`cotl` with ``f1`` started at 0 (first-view points carry offset 0)."""


class SCTParams(NamedTuple):
    """SCT's hyperparameters."""

    C: Array  # C > 0 of both PA-I classifiers, shape ()
    width1: Array  # width of the first view's kernel (PAIO), shape ()
    width2: Array  # width of the second view's kernel (PA), shape ()

    @classmethod
    def default(cls, dtype: Any = None) -> SCTParams:
        """The paper's Table 4 (:meth:`paper`)."""
        return cls.paper(dtype)

    @classmethod
    def paper(cls, dtype: Any = None) -> SCTParams:
        """The paper's Table 4: `C = 5`, width 4 on each view.

        Examples:
          >>> print(SCTParams.paper().width1)
          4.0
        """
        width = scalar(PAPER_SOURCE_WIDTH, dtype)
        return cls(scalar(PAPER_C, dtype), width, width)


class SCTState(NamedTuple):
    """The state of SCT: a pytree of arrays, carried from step to step.

    Attributes:
      buffer1: the PAIO terms on the first view (h is the offset)
      buffer2: the PA expansion on the second view
    """

    buffer1: SVBuffer  # the PAIO terms on the first view (h is the offset)
    buffer2: SVBuffer  # the PA expansion on the second view

    @property
    def support_vectors(self) -> Array:
        """`()` int32, the support vectors of both expansions."""
        return kernels.held(self.buffer1) + kernels.held(self.buffer2)


@learner_factory
def sct(
    capacity: int,
    mode: str = "gram",
    kernel: str = "gaussian",
    when_full: str = "replace_oldest",
    dims: tuple[int, int] | None = None,
) -> Predictor:
    """SCT: the sum of PAIO on the first view and PA on the second, each updated on its own.

    ::

        predict sign(f1(x1) + f2(x2)),  f1 = h + PA-I terms (PAIO),  f2 = PA-I from 0
        f1 <- PA-I update on max(0, 1 - y f1(x1));  f2 <- PA-I update on max(0, 1 - y f2(x2))

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax.transfer import KernelPoint, SCTParams, sct
      >>> learner = sct(4, mode="direct", dims=(1, 1))
      >>> one = jnp.array(1.0)
      >>> x = (KernelPoint(jnp.ones(1), None, jnp.array(0.5)),
      ...      KernelPoint(jnp.ones(1), None, jnp.array(0.0)))
      >>> params = SCTParams(jnp.array(5.0), one, one)
      >>> state = learner.update(learner.init(params), params, x, one)
      >>> print(round(float(learner.predict(state, params, x)), 4))
      2.0
    """
    d1, d2 = (None, None) if dims is None else dims
    first = kernel_pa(capacity, mode, kernel, when_full, d1)
    second = kernel_pa(capacity, mode, kernel, when_full, d2)

    def views(params: SCTParams):
        return KernelPAParams(params.C, params.width1), KernelPAParams(params.C, params.width2)

    def init(params: SCTParams) -> SCTState:
        params1, params2 = views(params)
        return SCTState(first.init(params1).buffer, second.init(params2).buffer)

    def predict(state: SCTState, params: SCTParams, x: Any) -> Array:
        p1, p2 = kernels.two_views(x, "SCT")
        params1, params2 = views(params)
        f1 = first.predict(KernelPAState(state.buffer1), params1, p1)
        f2 = second.predict(KernelPAState(state.buffer2), params2, p2)
        return f1 + f2

    def update(state: SCTState, params: SCTParams, x: Any, y: Array) -> SCTState:
        p1, p2 = kernels.two_views(x, "SCT")
        params1, params2 = views(params)
        s1 = first.update(KernelPAState(state.buffer1), params1, p1, y)
        s2 = second.update(KernelPAState(state.buffer2), params2, p2, y)
        return SCTState(s1.buffer, s2.buffer)

    def check_params(params: SCTParams) -> None:
        check_positive("C", params.C)
        check_positive("width1", params.width1)
        check_positive("width2", params.width2)

    return Predictor(init, predict, update, check_params)


__all__ = ["COTLParams", "COTLState", "SCTParams", "SCTState", "cotl", "cotl0", "sct"]
