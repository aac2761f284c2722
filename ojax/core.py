"""The learner protocols, the trace of a run, and the registry of learners.

A learner is a `NamedTuple` of pure functions over a state pytree (the shape of optax's
`GradientTransformation`). Hyperparameters live in a params pytree of arrays passed at call
time, never closed over, so a sweep is `jax.vmap` over params and a new value never
recompiles. Shapes and control flow (dimension, loss kind, projection kind) are static factory
arguments. Code is written for one stream, one task, one seed; batching is the caller's vmap:

* seeds: `jax.vmap(lambda key: run(learner, params, *make_stream(key)))(keys)`;
* hyperparameters: `jax.vmap(run, in_axes=(None, 0, None, None))(learner, grid, xs, ys)`
  with `grid` a params pytree whose leaves carry a leading grid axis;
* tasks: `jax.vmap(..., in_axes=(None, None, 0, 0))` over stacked streams.

A factory decorated with :func:`learner_factory` gives learners equal by value: two built with
the same options are equal and hash-equal, so jit compiles once for both.

A learner is a `NamedTuple` of closures, and the runner takes it as a static argument of
`jax.jit`: jit reuses a compilation for a static argument equal (and hash-equal) to one it has
compiled for. Closures compare by identity, so two calls `ogd()`, `ogd()` would give two
unequal learners and two compilations. A factory decorated with :func:`learner_factory` is
memoized on its arguments normalized, the key `(factory, arguments)`: a second call with equal
options returns the very object the first one built, so jit, `functools.lru_cache` and the
sweep engine treat them as one, and the key (:func:`factory_key`) names the learner for the
sweep's fingerprint, the program store and saved states, which need not walk its closures.

Arguments are normalized after binding them to the factory's signature (defaults filled in, so
`ogd()` equals `ogd("l2_ball")`):

* a learner (or anything else a decorated factory built) by its own key;
* arrays by dtype, shape and a digest of their bytes (`linear_predictor`'s `x0`);
* dtypes by name (`jnp.float32`, `np.float32` and `np.dtype("float32")` agree); numbers
  with their type (`1` and `1.0` differ); tuples, lists, dicts and `functools.partial`
  item by item;
* any other hashable as is, which for a function means by identity: `optax_learner(optax.sgd)`
  equals `optax_learner(optax.sgd)` (the same function object), not an optax factory rebuilt as
  a new `lambda`.

An argument that cannot be normalized (an unhashable object, a traced array) leaves the result
unkeyed: it then compares by the identity of its functions, as a learner written by hand does,
and so does `learner._replace(...)` with other functions. Why memoized results rather than
learners written as classes with static fields (equinox's modules): the protocol stays optax's
`NamedTuple` of pure functions and every factory keeps its closures.

The decorator also serves the other objects built from options and handed to the runner as
static arguments: averagers (a `NamedTuple` of functions) and `record` functions.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import hashlib
import importlib
import importlib.metadata
import inspect
import re
from collections.abc import Callable, Hashable, Iterator, MutableMapping
from typing import Any, NamedTuple, TypeVar

import jax
import jax.numpy as jnp
import numpy as np

from ojax.losses import LOSSES, OBJECTIVES

F = TypeVar("F", bound=Callable[..., Any])


def array_digest(value: Any) -> list:
    """`["array", dtype, shape, sha256 of the bytes]` (typed PRNG keys by their key data)."""
    if is_prng_key(value):
        value = jax.random.key_data(value)
    arr = np.ascontiguousarray(np.asarray(value))
    # the digest of `arr.tobytes()`, read in place: no copy of a Gram matrix's 400 MB
    inplace = arr.size and not arr.dtype.hasobject
    data = arr.reshape(-1).view(np.uint8).data if inplace else arr.tobytes()
    return ["array", str(arr.dtype), list(arr.shape), hashlib.sha256(data).hexdigest()]


def is_prng_key(value: Any) -> bool:
    """Whether `value` is a typed PRNG key array (`jax.random.key`)."""
    dtype = getattr(value, "dtype", None)
    return dtype is not None and jnp.issubdtype(dtype, jax.dtypes.prng_key)


class FactoryKey(NamedTuple):
    """What a factory-built object is equal by: the factory and its normalized arguments. Its
    `repr` is the same text in every process (functions by qualified name, arrays by dtype,
    shape and digest): the learner's identity in a saved state."""

    factory: Callable[..., Any]
    arguments: tuple[tuple[str, Hashable], ...]  # (parameter name, normalized value), in order

    def __repr__(self) -> str:
        arguments = ", ".join(f"{name}={_text(value)}" for name, value in self.arguments)
        return f"{self.factory.__module__}.{self.factory.__qualname__}({arguments})"


class _Unkeyable(Exception):
    """An argument that has no value key (the result stays unkeyed)."""


def _text(value: Any) -> str:
    if isinstance(value, FactoryKey):
        return repr(value)
    if isinstance(value, tuple) and len(value) == 4 and value[0] == "array":
        return f"array({value[1]}{list(value[2])}, sha256={value[3][:16]})"
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], str):
        kind, item = value  # ("int", 3), ("dtype", "float32"), ("Loss", (fields...))
        if kind in ("int", "float", "bool", "complex", "dtype"):
            return str(item)
        if isinstance(item, tuple):
            return f"{kind}({', '.join(_text(v) for v in item)})"
    if isinstance(value, tuple):
        return "(" + ", ".join(_text(v) for v in value) + ")"
    if callable(value) and hasattr(value, "__qualname__"):
        return f"{getattr(value, '__module__', '?')}.{value.__qualname__}"
    return repr(value)


def value_key(value: Any) -> Hashable:
    """`value` normalized for a :class:`FactoryKey` (see the module docstring); raises
    `_Unkeyable` for a value that has no key."""
    key = factory_key(value)
    if key is not None:
        return key
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (bool, int, float, complex)):
        return (type(value).__name__, value)
    if isinstance(value, np.dtype):
        return ("dtype", value.name)
    if isinstance(value, type) and issubclass(value, np.generic):
        return ("dtype", np.dtype(value).name)
    if isinstance(getattr(value, "dtype", None), np.dtype) and not hasattr(value, "shape"):
        return ("dtype", value.dtype.name)  # jnp.float32 and the like
    if isinstance(value, jax.core.Tracer):
        raise _Unkeyable
    if isinstance(value, (np.ndarray, np.generic, jax.Array)):
        kind, dtype, shape, sha = array_digest(value)
        return (kind, dtype, tuple(shape), sha)
    if isinstance(value, (tuple, list)):
        return (type(value).__qualname__, tuple(value_key(v) for v in value))
    if isinstance(value, dict):
        items = sorted(((repr(k), value_key(v)) for k, v in value.items()), key=lambda kv: kv[0])
        return ("dict", tuple(items))
    if isinstance(value, functools.partial):
        return ("partial", value_key(value.func), value_key(value.args), value_key(value.keywords))
    try:
        hash(value)
    except TypeError:
        raise _Unkeyable from None
    return value


_MADE: collections.OrderedDict[FactoryKey, Any] = collections.OrderedDict()
_MADE_MAX = 1024  # the oldest results beyond these are forgotten (then compared by identity)
_KEYS: dict[int, FactoryKey] = {}  # id of a result held in _MADE -> its key


def factory_key(obj: Any) -> FactoryKey | None:
    """The :class:`FactoryKey` of an object a :func:`learner_factory` built, else `None`."""
    key = _KEYS.get(id(obj))
    return key if key is not None and _MADE.get(key) is obj else None


def learner_factory(factory: F) -> F:
    """Makes `factory`'s results compare by value (see the module docstring).

    Two calls with equal arguments return the same object, so `jax.jit` reuses one
    compilation for both. Decorate every function that builds a learner from options (its
    static configuration); nothing else changes in the factory.

    Examples:
      >>> import jax.numpy as jnp
      >>> from ojax import OCOLearner, learner_factory
      >>> @learner_factory
      ... def scaled_gd(scale: float = 1.0) -> OCOLearner:
      ...     return OCOLearner(
      ...         lambda params, x0: x0,
      ...         lambda state, params: state,
      ...         lambda state, params, grad: state - scale * params * grad,
      ...     )
      >>> scaled_gd() == scaled_gd(1.0), scaled_gd() == scaled_gd(2.0)
      (True, False)
      >>> hash(scaled_gd()) == hash(scaled_gd())
      True
    """
    signature = inspect.signature(factory)

    @functools.wraps(factory)
    def build(*args: Any, **kwargs: Any) -> Any:
        try:
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            key = FactoryKey(build, tuple((n, value_key(v)) for n, v in bound.arguments.items()))
            hash(key)
        except (_Unkeyable, TypeError):
            return factory(*args, **kwargs)
        if key in _MADE:
            _MADE.move_to_end(key)
            return _MADE[key]
        made = factory(*args, **kwargs)
        if not (callable(made) or isinstance(getattr(type(made), "_fields", None), tuple)):
            raise TypeError(
                f"learner_factory: {factory.__qualname__} must return a NamedTuple of functions "
                f"(a learner) or a function, got {type(made).__name__}"
            )
        _MADE[key] = made
        _KEYS.setdefault(id(made), key)  # a factory returning another's learner: the first key
        while len(_MADE) > _MADE_MAX:
            _KEYS.pop(id(_MADE.popitem(last=False)[1]), None)
        return made

    return build  # type: ignore[return-value]


__all__ = [
    "FactoryKey",
    "array_digest",
    "factory_key",
    "is_prng_key",
    "learner_factory",
    "value_key",
]


# ----------------------------------------------------------------------------------------------
# protocols

Array = jax.Array
Params = Any  # a pytree of arrays (usually a ``XxxParams`` NamedTuple)
State = Any  # a pytree of arrays (usually a ``XxxState`` NamedTuple)


def _no_check(*args: Any) -> None:
    """No check: the default `check_params` and `check_start` of the protocols."""


def float_dtype(dtype: Any = None) -> Any:
    """`dtype`, or JAX's default float (float64 under x64, else float32)."""
    return jax.dtypes.canonicalize_dtype(jnp.float64 if dtype is None else dtype)


def cast_floats(tree: Any, dtype: Any = None) -> Any:
    """The floating leaves of `tree` as arrays of `dtype` (default: :func:`float_dtype`); the
    other leaves (integers, booleans, keys) as they are."""
    dtype = float_dtype(dtype)

    def cast(leaf: Any) -> Any:
        leaf = leaf if isinstance(leaf, jax.Array) else jnp.asarray(leaf)
        return leaf.astype(dtype) if jnp.issubdtype(leaf.dtype, jnp.floating) else leaf

    return jax.tree.map(cast, tree)


def scalars(*values: float, dtype: Any = None) -> tuple[Array, ...]:
    """`values` as 0-d arrays of `dtype` (default: :func:`float_dtype`): what the
    `default()` presets of the params classes are built from."""
    dtype = float_dtype(dtype)
    return tuple(jnp.asarray(v, dtype) for v in values)


def grid_axis(*values: float) -> Array:
    """`values` as one float32 axis of a registry entry's `params_grid` (grid points are
    stacked on a leading axis; a float64 run casts them)."""
    return jnp.asarray(values, jnp.float32)


def tree_where(condition: Array, new: Any, old: Any) -> Any:
    """`new` where `condition` else `old`, leaf by leaf (how padded steps change nothing)."""
    return jax.tree.map(lambda a, b: jnp.where(condition, a, b), new, old)


class OCOLearner(NamedTuple):
    """An online convex optimization learner: plays iterates, receives (sub)gradients.

    Attributes:
      init: `(params, x0) -> state`; `x0` is the anchor / first point (its shape fixes the
        dimension).
      iterate: `(state, params) -> w`, the point played next. Learners return iterates, never
        deltas: anchored learners (FTRL, dual averaging, coin betting) compute `w` from `x0`
        and sums.
      update: `(state, params, grad) -> state` after the loss at `iterate(state, params)`
        revealed the (sub)gradient `grad`.
      check_params: `(params) -> None`; raises :class:`ojax.validation.InputError` on values
        outside their domain. Called on concrete values before tracing.
      check_start: `(params, x0) -> None`; raises on a start point outside the learner's
        domain (Hedge's prior must be positive; a projected learner's `x0` must lie in its
        set). Called on concrete values before tracing.
    """

    init: Callable[[Params, Array], State]
    iterate: Callable[[State, Params], Array]
    update: Callable[[State, Params, Array], State]
    check_params: Callable[[Params], None] = _no_check
    check_start: Callable[[Params, Array], None] = _no_check


class Predictor(NamedTuple):
    """An online predictor: sees `x`, predicts, sees `y`, updates.

    `x` may be any pytree (a feature vector, padded sparse rows, a kernel point).

    Attributes:
      init: `(params) -> state`.
      predict: `(state, params, x) -> y_hat`.
      update: `(state, params, x, y) -> state`.
      check_params: `(params) -> None`, as in :class:`OCOLearner`.
      predict_update: optional `(state, params, x, y) -> (y_hat, state)`: `predict` and
        `update` in one, for a predictor whose update needs its own prediction (the runner
        then computes it once per step; XLA does not always merge the two computations).
    """

    init: Callable[[Params], State]
    predict: Callable[[State, Params, Any], Array]
    update: Callable[[State, Params, Any, Array], State]
    check_params: Callable[[Params], None] = _no_check
    predict_update: Callable[[State, Params, Any, Array], tuple[Array, State]] | None = None


class TaskInfo(NamedTuple):
    """What a multi-task learner is told about the task at its start and at its end.

    Attributes:
      index: `()` int32, the task's position in the sequence (0-based).
      size: `()` int32, the number of real (unmasked) points of the task.
      data: the task's own pytree given to the runner as `task_data` (e.g. its held-out
        points), or `None`.
    """

    index: Array  # type: ignore[assignment]  # shadows tuple.index
    size: Array
    data: Any = None


class MultiTaskLearner(NamedTuple):
    """A predictor over a sequence of tasks, each a stream of examples.

    Attributes:
      init: `(params) -> state`.
      begin_task: `(state, params, task: TaskInfo) -> state` before the task's first point
        (e.g. resets the within-task learner).
      predict: `(state, params, x) -> y_hat`, as in :class:`Predictor`.
      update: `(state, params, x, y) -> state`, as in :class:`Predictor`.
      end_task: `(state, params, task: TaskInfo) -> state` after the task's last real point
        (e.g. a lazy meta update).
      check_params: `(params) -> None`, as in :class:`OCOLearner`.
    """

    init: Callable[[Params], State]
    begin_task: Callable[[State, Params, TaskInfo], State]
    predict: Callable[[State, Params, Any], Array]
    update: Callable[[State, Params, Any, Array], State]
    end_task: Callable[[State, Params, TaskInfo], State]
    check_params: Callable[[Params], None] = _no_check


def _no_context(state: State, params: Params) -> None:
    del state, params


class Environment(NamedTuple):
    """An environment that answers the learner's play (an adversary, a bandit, a fixed stream).

    Attributes:
      init: `(key, params) -> state`.
      step: `(state, params, play, key) -> (state, feedback)`: the environment sees the play
        (an OCO learner's iterate `w_t`, a predictor's prediction, a bandit learner's arm) and
        answers with the data of the round: `z_t` of the loss `f(.; z_t)` for an OCO
        learner, the label `y_t` for a predictor. What the learner is told of it is the
        runner's `feedback` kind (its gradient, only the played arm's loss, or either `d`
        steps late; :func:`ojax.run_env`).
      context: `(state, params) -> x`, the input a predictor sees before it predicts (`None`
        for an OCO learner: the default).
      check_params: `(params) -> None`, as in :class:`OCOLearner`.
      horizon: `(params) -> int | None` (from shapes), the most rounds it can answer (the
        rows of data fixed in advance; `None`: no limit); `run_env` refuses a longer run.

    Data fixed in advance is the environment that ignores the play
    (:func:`ojax.envs.adversaries.fixed`).
    """

    init: Callable[[Array, Params], State]
    step: Callable[[State, Params, Any, Array], tuple[State, Any]]
    context: Callable[[State, Params], Any] = _no_context
    check_params: Callable[[Params], None] = _no_check
    horizon: Callable[[Params], int | None] = _no_check  # no limit


class Step(NamedTuple):
    """What a `record` function of the runner sees at one step (progressive validation).

    Attributes:
      state: the state the prediction was made with (before the update).
      params: the hyperparameters.
      x: the example's input; `y`: its label.
      prediction: `predict(state, params, x)`.
      new_state: the state after the update (`state` itself on a padded step).
    """

    state: State
    params: Params
    x: Any
    y: Array
    prediction: Array
    new_state: State


class Trace(NamedTuple):
    """Per-step record of a run under progressive validation (predict, record, then learn).

    Attributes:
      loss: `(n,)` loss of each prediction made before its label was seen (0 on padding);
        `(num_tasks, max_points)` for a multi-task run, or `(num_tasks,)` sums per task when
        the runner was asked for `task_sums`.
      prediction: `(n, ...)` the predictions (the played points of an OCO run), or `None`
        when not kept.
      record: the pytree of the `record` function per step (leading axes as `loss`), or
        `None`.
      mask: `(n,)` bool, True on real steps (all True for a plain stream).
      task: for a multi-task run, the pytree of the `task_record` function per task (leading
        axis `num_tasks`), or `None`.
    """

    loss: Array
    prediction: Array | None
    record: Any
    mask: Array
    task: Any = None


LEARNER_KINDS = ("oco", "predictor", "multi_task", "kernel", "contextual")
"""The kinds of registered learners: an :class:`OCOLearner` (gradients in), a :class:`Predictor`
(examples in), a :class:`MultiTaskLearner` (task blocks in), a kernel predictor (over a pool
visited in an ``order``) and a contextual bandit (:func:`ojax.contextual.run_contextual`)."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class LearnerEntry:
    """A registered learner (built by keyword): enough for tests, the CLI and sweeps to run it.

    Attributes:
      name: registry key (letters, digits, `_`, `.`, `-`: it names output folders).
      kind: one of :data:`LEARNER_KINDS`.
      make: `(dim) -> learner` for a problem of dimension `dim`; `dtype` may be passed as a
        keyword (`make(dim, dtype=jnp.float64)`) when `dtyped` is True.
      default_params: `() -> params`: the params class's `default` classmethod
        (`OGDParams.default`), or for params nesting other learners' params a function
        composing their defaults (`lambda: MechanicParams.default(OGDParams.default())`).
      params_grid: `() -> params` with a leading axis of a few distinct values (for the
        vmap-equals-loop test and sweeps).
      stream: the name of the data this learner is meant for in :data:`ojax.envs.STREAMS` (a
        user's own entry may give the function itself): `(key, num_steps, dim) -> (xs, ys[,
        mask[, order[, task_data]]])`, the arguments of :func:`ojax.run` (for OCO learners `xs`
        holds the data `z_t` of the losses and `ys` is ignored; for multi-task learners
        `xs` / `ys` / `mask` are task blocks; for kernel learners `xs` is the pool and
        `order` the visit order).
      objective: for OCO learners, the name of the :data:`ojax.losses.OBJECTIVES` entry their
        stream is played with; otherwise the name of the :data:`ojax.losses.LOSSES` entry
        recorded by the runner (required, checked here: no silent default).
      start: for OCO learners, the start point: `"zeros"` or `"uniform"` (`1 / d` in every
        coordinate: a prior on the simplex).
      dtyped: whether `make` takes a `dtype` keyword (the state's float dtype); otherwise the
        learner follows the data's dtype.
    """

    name: str
    kind: str
    make: Callable[..., Any]
    default_params: Callable[[], Params]
    params_grid: Callable[[], Params]
    stream: str | Callable[[Array, int, int], tuple]
    objective: str
    start: str = "zeros"
    dtyped: bool = False

    def __post_init__(self) -> None:
        if not (isinstance(self.name, str) and re.fullmatch(r"[A-Za-z0-9][\w.-]*", self.name)):
            raise ValueError(  # it names output folders (sweep-NAME) and curve keys
                f"name must be letters, digits, '_', '.' or '-' (not first), got {self.name!r}"
            )
        if self.kind not in LEARNER_KINDS:
            raise ValueError(f"kind must be one of {list(LEARNER_KINDS)}, got {self.kind!r}")
        table = OBJECTIVES if self.kind == "oco" else LOSSES
        if self.objective not in table:
            raise ValueError(
                f"objective of {self.name!r} must name one of {sorted(table)} for a {self.kind} "
                f"learner, got {self.objective!r}"
            )
        if self.start not in ("zeros", "uniform"):
            raise ValueError(f"start must be 'zeros' or 'uniform', got {self.start!r}")
        if not (isinstance(self.stream, str) or callable(self.stream)):
            raise ValueError(
                f"stream of {self.name!r} must be a name in ojax.envs.STREAMS or a function "
                f"(key, num_steps, dim) -> data, got {self.stream!r}"
            )

    def build(self, dim: int, dtype: Any = None) -> Any:
        """The learner for dimension `dim`, built with its state in `dtype` (default:
        :func:`float_dtype`: float64 under x64) where `make` takes a dtype (`dtyped`)."""
        return self.make(dim, dtype=float_dtype(dtype)) if self.dtyped else self.make(dim)

    def _replace(self, **changes: Any) -> LearnerEntry:
        """A copy with `changes` (as a `NamedTuple`'s `_replace`; checked again)."""
        return dataclasses.replace(self, **changes)

    @property
    def make_stream(self) -> Callable[[Array, int, int], tuple]:
        """The stream maker `(key, num_steps, dim) -> data`: `ojax.envs.STREAMS[stream]`."""
        if callable(self.stream):
            return self.stream
        if self.stream not in STREAMS:
            raise ValueError(
                f"stream of {self.name!r} must name one of {sorted(STREAMS)}, got {self.stream!r}"
            )
        return STREAMS[self.stream]


V = TypeVar("V")


class Registry(MutableMapping[str, V]):
    """A table `name -> value` filled on its first read (a registration adds to it without
    loading anything) by importing `modules` (by name: the table sits below the modules that
    fill it), then by the plugins of the entry-point `group` (a module registers on import; a
    :class:`LearnerEntry` is registered): :data:`LEARNERS`' group is `ojax.learners`, e.g.
    `[project.entry-points."ojax.learners"] NAME = "package.module"` (or `"module:ENTRY"`)."""

    def __init__(self, modules: tuple[str, ...], group: str = "") -> None:
        self._data: dict[str, V] = {}
        self._modules, self._group, self._loaded = modules, group, False

    def _load(self) -> dict[str, V]:
        if not self._loaded:
            self._loaded = True
            for module in self._modules:
                importlib.import_module(module)
            for point in importlib.metadata.entry_points(group=self._group):
                try:
                    value = point.load()
                except Exception as exc:
                    raise ImportError(f"{self._group} plugin {point.value!r}: {exc}") from exc
                if isinstance(value, LearnerEntry) and value.name not in self._data:
                    self._data[value.name] = value  # type: ignore[assignment]
        return self._data

    def __getitem__(self, name: str) -> V:
        return self._load()[name]

    def __setitem__(self, name: str, value: V) -> None:
        self._data[name] = value

    def __delitem__(self, name: str) -> None:
        del self._load()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._load())

    def __len__(self) -> int:
        return len(self._load())

    def __repr__(self) -> str:
        return f"Registry({self._load()!r})"


STREAMS: Registry[Callable[..., tuple]] = Registry(("ojax.envs",))
"""Stream name -> stream maker, filled by the data layer (:data:`ojax.envs.STREAMS` is this
table): the learners name their data and never import it."""

_FAMILIES = (
    "ojax.oco", "ojax.parameter_free", "ojax.meta", "ojax.averaging", "ojax.transfer",
    "ojax.nonstationary", "ojax.contextual",
)  # fmt: skip
LEARNERS: Registry[LearnerEntry] = Registry(_FAMILIES, "ojax.learners")


def register_learner(entry: LearnerEntry) -> LearnerEntry:
    """Adds `entry` to :data:`LEARNERS` (names are unique)."""
    if entry.name in LEARNERS:
        raise ValueError(f"learner {entry.name!r} is already registered")
    LEARNERS[entry.name] = entry
    return entry
