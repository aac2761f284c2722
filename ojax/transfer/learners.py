"""Kernel online learners for online transfer learning (Zhao & Hoi 2010).

Every learner here is a :class:`KernelLearner`: the :class:`~ojax.core.Predictor` functions
``init / predict / update / check_params`` plus ``support_vectors(state)``. ``predict`` returns
a real score whose sign (``sign(0) = +1``) is the predicted label, so a mistake is
``ojax.losses.zero_one`` of the score, counted before the update.

An example is a :class:`~ojax.transfer.kernels.KernelPoint` (or a pair of them for the two-view
learners). A frozen source classifier ``h`` never changes, so its outputs on the target pool are
computed once and carried by the points as ``offset``:

* PA (kernel PA-I) on the target only: points with offset 0.
* PAIO: the same PA-I, started from ``h``'s support vectors and averaged coefficients. Since
  PA-I only appends, ``f = h + (new terms)``: it is :func:`kernel_pa` on points carrying ``h``.
* OTL / OTL(fixed) / HomOTL-II: ``h`` is the offset, ``f`` a PA-I expansion from 0.
* COTL: ``f1`` starts as ``h`` (offset on the first view; COTL0: offset 0), ``f2`` at 0.
* SCT: PAIO on the first view plus PA on the second.

Support vectors: every learner counts those of its own expansions; the runner adds the source
classifier's ``|SV(h)|`` for the methods that carry ``h`` (see
:class:`~ojax.transfer.runner.KernelStream`). A support vector is added on every margin error
(hinge loss > 0), not only on mistakes. COTL stores each margin-error example once (with both of
its views), so its count is the number of updates; SCT's two classifiers count separately.

References:
  Crammer, K., Dekel, O., Keshet, J., Shalev-Shwartz, S., Singer, Y. (2006). Online
  passive-aggressive algorithms.
  Zhao, P., Hoi, S. C. H. (2010). OTL: a framework of online transfer learning.
  Zhao, P., Hoi, S. C. H., Wang, J., Li, B. (2014). Online transfer learning.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from ojax import losses as _losses
from ojax.core import Array
from ojax.transfer import kernels as K
from ojax.transfer.kernels import KernelPoint, SVBuffer
from ojax.validation import check_positive, check_range


class KernelLearner(NamedTuple):
    """A kernel predictor (the :class:`~ojax.core.Predictor` fields) plus its SV count."""

    init: Callable[[Any], Any]
    predict: Callable[[Any, Any, Any], Array]
    update: Callable[[Any, Any, Any, Array], Any]
    check_params: Callable[[Any], None]
    support_vectors: Callable[[Any], Array]
    num_views: int = 1  # examples are one KernelPoint (1) or a pair (2)


def sign(score: Array) -> Array:
    """``+1`` where ``score >= 0`` else ``-1`` (so ``sign(0) = +1``), in ``score``'s dtype."""
    return jnp.where(score >= 0, 1.0, -1.0).astype(score.dtype)


def project(z: Array) -> Array:
    """``Pi(z) = max(0, min(1, (z + 1) / 2))``, mapping a score (or a label) into [0, 1]."""
    return jnp.clip((z + 1.0) / 2.0, 0.0, 1.0)


def _pa_step(
    buffer: SVBuffer,
    point: KernelPoint,
    score: Array,
    y: Array,
    C: Array,
    width: Array,
    mode: str,
    kernel: str,
    when_full: str,
) -> SVBuffer:
    """One PA-I update: ``tau = min(C, l / k(x, x))``, ``alpha = y tau`` when ``l > 0``."""
    loss = _losses.hinge.value(score, y)
    kxx = K.self_kernel(point, width, mode, kernel)
    tau = jnp.minimum(C, loss / jnp.where(kxx > 0, kxx, 1.0))
    tau = jnp.where(kxx > 0, tau, C)
    return K.add(buffer, point, y * tau, loss > 0, when_full, mode)


# --------------------------------------------------------------------------- kernel PA-I


class KernelPAParams(NamedTuple):
    C: Array  # aggressiveness C > 0, shape ()
    width: Array  # Gaussian width sigma > 0 ("direct" mode; in "gram" mode it is in the Gram)


class KernelPAState(NamedTuple):
    buffer: SVBuffer  # the expansion f (without the offset)


def kernel_pa(
    capacity: int,
    mode: str = "gram",
    kernel: str = "gaussian",
    when_full: str = "replace_oldest",
    dim: int | None = None,
) -> KernelLearner:
    """Kernel Passive-Aggressive (PA-I); with points carrying ``h`` as offset it is PAIO.

    The score is ``s = offset + f(x)``; after the label::

        l = max(0, 1 - y s);  if l > 0:  tau = min(C, l / k(x, x)),  f <- f + y tau k(x, .)

    Args:
      capacity: buffer size (static); the stream length for an exact run; in ``"pool"`` mode
        the pool size ``N``.
      mode: ``"gram"`` (points are pool indices with Gram rows), ``"pool"`` (the same points,
        coefficients stored densely by pool index: the fast exact layout, no budget) or
        ``"direct"`` (features).
      kernel: ``"gaussian"`` or ``"linear"`` (``"direct"`` mode; a Gram is data).
      when_full: ``"replace_oldest"`` or ``"discard"`` (see :mod:`ojax.transfer.kernels`).
      dim: feature dimension (``"direct"`` mode only).

    Returns:
      A :class:`KernelLearner`; its state is :class:`KernelPAState`.

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
    K.check_common(capacity, mode, kernel, when_full, dim)

    def init(params: KernelPAParams) -> KernelPAState:
        return KernelPAState(K.empty_buffer(capacity, mode, dim, jnp.asarray(params.C).dtype))

    def predict(state: KernelPAState, params: KernelPAParams, x: Any) -> Array:
        point = K.as_point(x)
        return point.offset + K.evaluate(state.buffer, point, params.width, mode, kernel)

    def update(state: KernelPAState, params: KernelPAParams, x: Any, y: Array) -> KernelPAState:
        point = K.as_point(x)
        score = predict(state, params, point)
        return KernelPAState(
            _pa_step(state.buffer, point, score, y, params.C, params.width, mode, kernel, when_full)
        )

    def check_params(params: KernelPAParams) -> None:
        check_positive("C", params.C)
        check_positive("width", params.width)

    def support_vectors(state: KernelPAState) -> Array:
        return K.held(state.buffer)

    return KernelLearner(init, predict, update, check_params, support_vectors)


paio = kernel_pa
"""PAIO (PA initialized with the old classifier): :func:`kernel_pa` on points whose offset is
the source classifier's output ``h(x)``; ``f = h + `` the target support vectors it appends."""


# --------------------------------------------------------------- averaged source classifier


class AveragedPAState(NamedTuple):
    buffer: SVBuffer  # the running PA-I expansion alpha_t
    average: Array  # (capacity,) averaged coefficients alpha_bar_t (same slots as buffer)
    steps: Array  # (), int32: examples seen t


def averaged_kernel_pa(
    capacity: int,
    mode: str = "gram",
    kernel: str = "gaussian",
    dim: int | None = None,
) -> KernelLearner:
    """Averaged kernel PA-I, the source classifier ``h`` of OTL.

    It predicts and updates as :func:`kernel_pa` (with the running coefficients); after each
    step the coefficient vector is averaged (a new support vector enters both with a zero
    history)::

        alpha_bar_t = ((t - 1) / t) alpha_bar_{t-1} + alpha_t / t

    ``h`` is the expansion with the support vectors of the run and the coefficients
    ``alpha_bar_n`` (:func:`source_classifier`). The buffer never overwrites: ``capacity`` must
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

    def support_vectors(state: AveragedPAState) -> Array:
        return K.held(state.buffer)

    return KernelLearner(init, predict, update, pa.check_params, support_vectors)


def source_classifier(state: AveragedPAState) -> SVBuffer:
    """The source classifier ``h``: the averaged coefficients on the run's support vectors."""
    return SVBuffer(state.buffer.keys, state.average, state.buffer.count)


# -------------------------------------------------------------------------------- OTL


class OTLParams(NamedTuple):
    C: Array  # PA-I aggressiveness of f, C > 0, shape ()
    width: Array  # width sigma_2 of f ("direct" mode), shape ()
    learning_rate: Array  # eta > 0 of the weights, shape () (ignored by OTL(fixed))


class OTLState(NamedTuple):
    buffer: SVBuffer  # the target expansion f
    log_weights: Array  # (2,) log of the normalized weights (w1 of h, w2 of f)


def otl(
    capacity: int,
    mode: str = "gram",
    kernel: str = "gaussian",
    when_full: str = "replace_oldest",
    dim: int | None = None,
    fixed_weights: bool = False,
) -> KernelLearner:
    """Homogeneous OTL (Algorithm 1): a weighted vote of the frozen ``h`` and a PA-I ``f``.

    ``h(x)`` is the point's offset. With ``w1 = w2 = 1/2`` at the start::

        predict  sign(w1 Pi(h(x)) + w2 Pi(f(x)) - 1/2)
        l_1 = (Pi(h(x)) - Pi(y))^2,  l_2 = (Pi(f(x)) - Pi(y))^2
        w_i <- w_i exp(-eta l_i) / (w_1 exp(-eta l_1) + w_2 exp(-eta l_2))
        f   <- PA-I update of f on its own hinge loss max(0, 1 - y f(x))

    The weights are kept as normalized logarithms (so they stay positive and sum to one).
    ``fixed_weights=True`` is OTL(fixed): the weights stay 1/2.

    Mistake bound: ``M <= 4 min(S_h, S_f) + 8 ln 2`` at ``eta = 1/2``, with ``S_g`` the sum of
    the squared losses ``l``.

    References:
      Zhao, P., Hoi, S. C. H. (2010). OTL: a framework of online transfer learning, Alg. 1.

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax.transfer import KernelPoint, OTLParams, otl
      >>> learner = otl(4, mode="direct", dim=2)
      >>> params = OTLParams(jnp.array(5.0), jnp.array(1.0), jnp.array(0.5))
      >>> point = KernelPoint(jnp.array([1.0, 0.0]), None, jnp.array(0.6))
      >>> state = learner.update(learner.init(params), params, point, jnp.array(1.0))
      >>> print([round(float(w), 4) for w in jnp.exp(state.log_weights)])
      [0.5262, 0.4738]
    """
    pa = kernel_pa(capacity, mode, kernel, when_full, dim)

    def init(params: OTLParams) -> OTLState:
        dtype = jnp.asarray(params.C).dtype
        return OTLState(
            pa.init(KernelPAParams(params.C, params.width)).buffer,
            jnp.full((2,), -jnp.log(2.0), dtype),
        )

    def _outputs(state: OTLState, params: OTLParams, point: KernelPoint):
        f = K.evaluate(state.buffer, point, params.width, mode, kernel)
        return point.offset, f

    def predict(state: OTLState, params: OTLParams, x: Any) -> Array:
        point = K.as_point(x)
        h, f = _outputs(state, params, point)
        w = jnp.exp(state.log_weights)
        return w[0] * project(h) + w[1] * project(f) - 0.5

    def update(state: OTLState, params: OTLParams, x: Any, y: Array) -> OTLState:
        point = K.as_point(x)
        h, f = _outputs(state, params, point)
        target = project(y)
        losses = jnp.stack([(project(h) - target) ** 2, (project(f) - target) ** 2])
        if fixed_weights:
            log_weights = state.log_weights
        else:
            log_weights = state.log_weights - params.learning_rate * losses
            log_weights = log_weights - jax.nn.logsumexp(log_weights)
        buffer = _pa_step(
            state.buffer, point, f, y, params.C, params.width, mode, kernel, when_full
        )
        return OTLState(buffer, log_weights)

    def check_params(params: OTLParams) -> None:
        check_positive("C", params.C)
        check_positive("width", params.width)
        check_positive("learning_rate", params.learning_rate)

    def support_vectors(state: OTLState) -> Array:
        return K.held(state.buffer)

    return KernelLearner(init, predict, update, check_params, support_vectors)


def otl_fixed(
    capacity: int,
    mode: str = "gram",
    kernel: str = "gaussian",
    when_full: str = "replace_oldest",
    dim: int | None = None,
) -> KernelLearner:
    """OTL(fixed): :func:`otl` with the weights held at 1/2 (``learning_rate`` is ignored)."""
    return otl(capacity, mode, kernel, when_full, dim, fixed_weights=True)


# ------------------------------------------------------------------------ HomOTL-II (Hedge)


class HomOTL2Params(NamedTuple):
    C: Array  # PA-I aggressiveness of f, C > 0, shape ()
    width: Array  # width of f ("direct" mode), shape ()
    beta: Array  # Hedge discount in (0, 1), shape ()


class HomOTL2State(NamedTuple):
    buffer: SVBuffer  # the target expansion f
    mistakes: Array  # (2,) int32 mistakes so far of sign(h) and sign(f)


def homotl2_weights(state: HomOTL2State, params: HomOTL2Params) -> Array:
    """The normalized weights ``(w_h, w_f)``, proportional to ``beta^mistakes``."""
    return jax.nn.softmax(state.mistakes.astype(params.beta.dtype) * jnp.log(params.beta))


def homotl2(
    capacity: int,
    mode: str = "gram",
    kernel: str = "gaussian",
    when_full: str = "replace_oldest",
    dim: int | None = None,
) -> KernelLearner:
    """HomOTL-II: Hedge over the signs of ``h`` and ``f`` with mistake losses.

    ::

        predict  sign(w1 sign(h(x)) + w2 sign(f(x)))
        z_g = 1[sign(g(x)) != y],  w_g <- w_g beta^{z_g},  normalized to w1 + w2 = 1
        f   <- PA-I update of f on its own hinge loss

    ``sign(0) = +1`` throughout; ``beta = sqrt(T) / (sqrt(T) + sqrt(ln 2))`` is the usual choice
    for a stream of length ``T``. The state keeps the mistake counts ``m_g`` (so
    ``w_g = beta^{m_g} / sum``): a tie (equal counts, signs that disagree) is exact and goes to
    +1.

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

    def init(params: HomOTL2Params) -> HomOTL2State:
        buffer = pa.init(KernelPAParams(params.C, params.width)).buffer
        return HomOTL2State(buffer, jnp.zeros((2,), jnp.int32))

    def predict(state: HomOTL2State, params: HomOTL2Params, x: Any) -> Array:
        point = K.as_point(x)
        f = K.evaluate(state.buffer, point, params.width, mode, kernel)
        w = homotl2_weights(state, params)
        return w[0] * sign(point.offset) + w[1] * sign(f)

    def update(state: HomOTL2State, params: HomOTL2Params, x: Any, y: Array) -> HomOTL2State:
        point = K.as_point(x)
        f = K.evaluate(state.buffer, point, params.width, mode, kernel)
        wrong = jnp.stack([sign(point.offset) != y, sign(f) != y]).astype(jnp.int32)
        buffer = _pa_step(
            state.buffer, point, f, y, params.C, params.width, mode, kernel, when_full
        )
        return HomOTL2State(buffer, state.mistakes + wrong)

    def check_params(params: HomOTL2Params) -> None:
        check_positive("C", params.C)
        check_positive("width", params.width)
        check_range("beta", params.beta, 0.0, 1.0, low_open=True, high_open=True)

    def support_vectors(state: HomOTL2State) -> Array:
        return K.held(state.buffer)

    return KernelLearner(init, predict, update, check_params, support_vectors)


# ------------------------------------------------------------------------------ COTL


class COTLParams(NamedTuple):
    C: Array  # C > 0, shape ()
    width1: Array  # width of the first (source) view's kernel, shape ()
    width2: Array  # width of the second view's kernel, shape ()
    gamma1: Array  # co-regularization weight of f1, > 0, shape ()
    gamma2: Array  # co-regularization weight of f2, > 0, shape ()


class TwoViewState(NamedTuple):
    buffer1: SVBuffer  # terms added to f1 (on the first view; h is the offset)
    buffer2: SVBuffer  # f2 (on the second view)


def cotl(
    capacity: int,
    mode: str = "gram",
    kernel: str = "gaussian",
    when_full: str = "replace_oldest",
    dims: tuple[int, int] | None = None,
) -> KernelLearner:
    """COTL (Algorithm 2): co-regularized PA over two views ``x = (x1, x2)``.

    ``f1`` starts as ``h`` (the first point's offset; COTL0: offset 0), ``f2`` at 0::

        s = (f1(x1) + f2(x2)) / 2,   predict sign(s),   l = max(0, 1 - y s)
        if l > 0:  tau = min(C, 4 g1 g2 l / (g2 k1(x1, x1) + g1 k2(x2, x2)))
                   f1 <- f1 + (tau / (2 g1)) y k1(x1, .),  f2 <- f2 + (tau / (2 g2)) y k2(x2, .)

    An example is a pair ``(point1, point2)`` of :class:`~ojax.transfer.kernels.KernelPoint`.

    References:
      Zhao, P., Hoi, S. C. H. (2010). OTL: a framework of online transfer learning, Alg. 2.

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
    K.check_common(capacity, mode, kernel, when_full, d1)
    K.check_common(capacity, mode, kernel, when_full, d2)

    def init(params: COTLParams) -> TwoViewState:
        dtype = jnp.asarray(params.C).dtype
        return TwoViewState(
            K.empty_buffer(capacity, mode, d1, dtype), K.empty_buffer(capacity, mode, d2, dtype)
        )

    def _parts(state: TwoViewState, params: COTLParams, x: Any):
        p1, p2 = x
        f1 = p1.offset + K.evaluate(state.buffer1, p1, params.width1, mode, kernel)
        f2 = p2.offset + K.evaluate(state.buffer2, p2, params.width2, mode, kernel)
        return p1, p2, f1, f2

    def predict(state: TwoViewState, params: COTLParams, x: Any) -> Array:
        _, _, f1, f2 = _parts(state, params, x)
        return 0.5 * (f1 + f2)

    def update(state: TwoViewState, params: COTLParams, x: Any, y: Array) -> TwoViewState:
        p1, p2, f1, f2 = _parts(state, params, x)
        loss = _losses.hinge.value(0.5 * (f1 + f2), y)
        k1 = K.self_kernel(p1, params.width1, mode, kernel)
        k2 = K.self_kernel(p2, params.width2, mode, kernel)
        g1, g2 = params.gamma1, params.gamma2
        denom = g2 * k1 + g1 * k2
        tau = jnp.where(
            denom > 0,
            jnp.minimum(params.C, 4.0 * g1 * g2 * loss / jnp.where(denom > 0, denom, 1.0)),
            params.C,
        )
        accept = loss > 0
        buffer1 = K.add(state.buffer1, p1, tau / (2.0 * g1) * y, accept, when_full, mode)
        buffer2 = K.add(state.buffer2, p2, tau / (2.0 * g2) * y, accept, when_full, mode)
        return TwoViewState(buffer1, buffer2)

    def check_params(params: COTLParams) -> None:
        check_positive("C", params.C)
        check_positive("width1", params.width1)
        check_positive("width2", params.width2)
        check_positive("gamma1", params.gamma1)
        check_positive("gamma2", params.gamma2)

    def support_vectors(state: TwoViewState) -> Array:
        return K.held(state.buffer1)

    return KernelLearner(init, predict, update, check_params, support_vectors, 2)


cotl0 = cotl
"""COTL0: :func:`cotl` with ``f1`` started at 0 (first-view points carry offset 0)."""


# ------------------------------------------------------------------------------- SCT


class SCTParams(NamedTuple):
    C: Array  # C > 0 of both PA-I classifiers, shape ()
    width1: Array  # width of the first view's kernel (PAIO), shape ()
    width2: Array  # width of the second view's kernel (PA), shape ()


def sct(
    capacity: int,
    mode: str = "gram",
    kernel: str = "gaussian",
    when_full: str = "replace_oldest",
    dims: tuple[int, int] | None = None,
) -> KernelLearner:
    """SCT: the sum of PAIO on the first view and PA on the second, each updated on its own.

    ::

        predict sign(f1(x1) + f2(x2)),  f1 = h + PA-I terms (PAIO),  f2 = PA-I from 0
        f1 <- PA-I update on max(0, 1 - y f1(x1));  f2 <- PA-I update on max(0, 1 - y f2(x2))

    Support vectors: those of both expansions (plus ``h``'s, added by the runner).

    References:
      Zhao, P., Hoi, S. C. H. (2010). OTL: a framework of online transfer learning, sec. 5.

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

    def init(params: SCTParams) -> TwoViewState:
        return TwoViewState(
            first.init(KernelPAParams(params.C, params.width1)).buffer,
            second.init(KernelPAParams(params.C, params.width2)).buffer,
        )

    def predict(state: TwoViewState, params: SCTParams, x: Any) -> Array:
        p1, p2 = x
        f1 = first.predict(
            KernelPAState(state.buffer1), KernelPAParams(params.C, params.width1), p1
        )
        f2 = second.predict(
            KernelPAState(state.buffer2), KernelPAParams(params.C, params.width2), p2
        )
        return f1 + f2

    def update(state: TwoViewState, params: SCTParams, x: Any, y: Array) -> TwoViewState:
        p1, p2 = x
        s1 = first.update(
            KernelPAState(state.buffer1), KernelPAParams(params.C, params.width1), p1, y
        )
        s2 = second.update(
            KernelPAState(state.buffer2), KernelPAParams(params.C, params.width2), p2, y
        )
        return TwoViewState(s1.buffer, s2.buffer)

    def check_params(params: SCTParams) -> None:
        check_positive("C", params.C)
        check_positive("width1", params.width1)
        check_positive("width2", params.width2)

    def support_vectors(state: TwoViewState) -> Array:
        return K.held(state.buffer1) + K.held(state.buffer2)

    return KernelLearner(init, predict, update, check_params, support_vectors, 2)


# ---------------------------------------------- the four homogeneous methods in one scan


class HomogeneousParams(NamedTuple):
    C: Array  # PA-I aggressiveness of every expansion, C > 0, shape ()
    width: Array  # sigma_2 of PA and of OTL's f ("direct" mode), shape ()
    source_width: Array  # sigma_1 of PAIO ("direct" mode), shape ()
    learning_rate: Array  # eta > 0 of OTL's weights, shape ()


class HomogeneousState(NamedTuple):
    f: SVBuffer  # the PA-I expansion at sigma_2: PA's classifier, and OTL's / OTL(fixed)'s f
    paio: SVBuffer  # PAIO's terms at sigma_1 (h is the offset)
    log_weights: Array  # (2,) OTL's normalized log-weights
    fixed_log_weights: Array  # (2,) OTL(fixed)'s, log(1/2) throughout


HOMOGENEOUS_HEADS = ("PA", "PAIO", "OTL_fixed", "OTL")


def homogeneous_methods(
    capacity: int,
    mode: str = "pool",
    kernel: str = "gaussian",
    when_full: str = "replace_oldest",
    dim: int | None = None,
) -> KernelLearner:
    """PA, PAIO, OTL(fixed) and OTL run together on one stream (one scan, shared work).

    The four methods of the homogeneous experiment, each computed by its own learner
    (:func:`kernel_pa`, :func:`paio`, :func:`otl_fixed`, :func:`otl`), with one state
    shared where the algorithms coincide: OTL's and OTL(fixed)'s ``f`` are PA-I runs at the
    same width on their own hinge loss, i.e. exactly PA's classifier, so the three share the
    expansion ``f`` (updated once, by OTL's update). PAIO keeps its own expansion at
    ``source_width``. ``predict`` returns the four scores in the order of
    :data:`HOMOGENEOUS_HEADS` and ``support_vectors`` the four counts (the runner adds
    ``|SV(h)|`` per head from a ``(4,)`` ``base_support_vectors``).

    An example is a pair of points ``(p_target, p_source)`` of the same pool row: the Gram row
    at ``width`` and at ``source_width``, both carrying ``h(x)`` as offset (PA sees offset 0).

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax.transfer import HomogeneousParams, KernelPoint, homogeneous_methods
      >>> learner = homogeneous_methods(4, mode="direct", dim=2)
      >>> one = jnp.array(1.0)
      >>> params = HomogeneousParams(jnp.array(5.0), one, one, jnp.array(0.5))
      >>> p = KernelPoint(jnp.array([1.0, 0.0]), None, jnp.array(0.6))
      >>> state = learner.update(learner.init(params), params, (p, p), one)
      >>> print([round(float(s), 3) for s in learner.predict(state, params, (p, p))])
      [1.0, 1.0, 0.4, 0.395]
    """
    pa = kernel_pa(capacity, mode, kernel, when_full, dim)
    paio_learner = paio(capacity, mode, kernel, when_full, dim)
    adaptive = otl(capacity, mode, kernel, when_full, dim)
    fixed = otl_fixed(capacity, mode, kernel, when_full, dim)

    def _split(params: HomogeneousParams):
        pa_params = KernelPAParams(params.C, params.width)
        paio_params = KernelPAParams(params.C, params.source_width)
        otl_params = OTLParams(params.C, params.width, params.learning_rate)
        return pa_params, paio_params, otl_params

    def init(params: HomogeneousParams) -> HomogeneousState:
        pa_params, paio_params, otl_params = _split(params)
        start = adaptive.init(otl_params)
        return HomogeneousState(
            start.buffer,
            paio_learner.init(paio_params).buffer,
            start.log_weights,
            fixed.init(otl_params).log_weights,
        )

    def _points(x: Any):
        p_target, p_source = x
        return p_target._replace(offset=jnp.zeros_like(p_target.offset)), p_target, p_source

    def predict(state: HomogeneousState, params: HomogeneousParams, x: Any) -> Array:
        pa_params, paio_params, otl_params = _split(params)
        p_plain, p_target, p_source = _points(x)
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
        _, paio_params, otl_params = _split(params)
        _, p_target, p_source = _points(x)
        # OTL's update moves f exactly as PA's and OTL(fixed)'s would (the shared expansion)
        new = adaptive.update(OTLState(state.f, state.log_weights), otl_params, p_target, y)
        g = paio_learner.update(KernelPAState(state.paio), paio_params, p_source, y).buffer
        return HomogeneousState(new.buffer, g, new.log_weights, state.fixed_log_weights)

    def check_params(params: HomogeneousParams) -> None:
        _, paio_params, otl_params = _split(params)
        adaptive.check_params(otl_params)
        check_positive("source_width", params.source_width)

    def support_vectors(state: HomogeneousState) -> Array:
        f, g = K.held(state.f), K.held(state.paio)
        return jnp.stack([f, g, f, f])

    return KernelLearner(init, predict, update, check_params, support_vectors, 2)
