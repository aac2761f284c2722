"""Learners that compare by value: the :func:`learner_factory` decorator.

A learner is a `NamedTuple` of closures, and the runner takes it as a static argument of
`jax.jit`: jit reuses a compilation for a static argument equal (and hash-equal) to one it has
compiled for. Closures compare by identity, so two calls `ogd()`, `ogd()` would give two
unequal learners and two compilations. A factory decorated with :func:`learner_factory` records
on what it returns the key `(factory, its arguments normalized)` and the result compares (and
hashes) by that key: two learners built by the same factory with equal options are equal, and
jit, `functools.lru_cache` and the sweep engine treat them as one.

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
unkeyed: it then compares by the identity of its functions, as a learner written by hand does.
`learner._replace(...)` gives an unkeyed learner too (its functions are no longer the
factory's). Why a key rather than learners written as classes with static fields (equinox's
modules): the protocol stays optax's `NamedTuple` of pure functions, every factory keeps its
closures, and the key also names the learner for the sweep's fingerprint and program store
(:mod:`ojax.sweep.fingerprint`), which need not walk its closures.

The decorator also serves the other objects built from options and handed to the runner as
static arguments: averagers (a `NamedTuple` of functions) and `record` functions (a function
becomes a :class:`KeyedFunction`).
"""

from __future__ import annotations

import functools
import hashlib
import inspect
from collections.abc import Callable, Hashable
from typing import Any, NamedTuple, TypeVar

import jax
import numpy as np

F = TypeVar("F", bound=Callable[..., Any])


class FactoryKey(NamedTuple):
    """What a factory-built object is equal by: the factory and its normalized arguments."""

    factory: Callable[..., Any]
    arguments: tuple[tuple[str, Hashable], ...]  # (parameter name, normalized value), in order

    def __repr__(self) -> str:
        arguments = ", ".join(f"{name}={_show(value)}" for name, value in self.arguments)
        return f"{self.factory.__module__}.{self.factory.__qualname__}({arguments})"


class _Unkeyable(Exception):
    """An argument that has no value key (the result stays unkeyed)."""


def _show(value: Any) -> str:
    if isinstance(value, FactoryKey):
        return repr(value)
    if isinstance(value, tuple) and len(value) == 2 and value[0] in ("int", "float", "bool"):
        return repr(value[1])
    if isinstance(value, tuple) and value[:1] == ("array",):
        return f"array({value[1]}{list(value[2])})"
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], tuple):
        kind, items = value  # a tuple, or a named tuple (a loss) shown by its first field
        if kind not in ("tuple", "list") and items and isinstance(items[0], str):
            return f"{kind}({items[0]!r})"
        return f"{kind}({', '.join(_show(v) for v in items)})"
    return repr(value)


def _array_key(value: Any) -> tuple:
    if isinstance(value, jax.core.Tracer):
        raise _Unkeyable
    arr = np.ascontiguousarray(np.asarray(value))
    return ("array", str(arr.dtype), arr.shape, hashlib.sha256(arr.tobytes()).hexdigest())


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
    if isinstance(value, (np.ndarray, np.generic, jax.Array)):
        return _array_key(value)
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


def factory_key(obj: Any) -> FactoryKey | None:
    """The :class:`FactoryKey` of an object a :func:`learner_factory` built, else `None`."""
    if isinstance(obj, KeyedFunction):
        return obj.key
    if isinstance(obj, tuple) and type(obj) in _BASES:
        return obj.__dict__.get("_key")
    return None


def _eq(self: tuple, other: Any) -> bool:
    if self is other:
        return True
    mine, theirs = factory_key(self), factory_key(other)
    if mine is None and theirs is None:
        return tuple.__eq__(self, other)
    return mine is not None and mine == theirs


def _ne(self: tuple, other: Any) -> bool:
    return not _eq(self, other)


def _hash(self: tuple) -> int:
    key = self.__dict__.get("_key")
    return tuple.__hash__(self) if key is None else self.__dict__["_hash"]


def _repr(self: tuple) -> str:
    key = self.__dict__.get("_key")
    return tuple.__repr__(self) if key is None else f"{type(self).__name__}<{key!r}>"


_CLASSES: dict[type, type] = {}  # NamedTuple class -> its keyed subclass
_BASES: dict[type, type] = {}  # keyed subclass -> its NamedTuple class


def _keyed_class(cls: type) -> type:
    """`cls`'s subclass whose instances compare by their key (same name, same fields)."""
    keyed = _CLASSES.get(cls)
    if keyed is None:

        def _replace(self: Any, **changes: Any) -> Any:  # other functions: not the factory's
            return cls._make(self)._replace(**changes)  # type: ignore[attr-defined]

        namespace = {
            "__eq__": _eq,
            "__ne__": _ne,
            "__hash__": _hash,
            "__repr__": _repr,
            "_replace": _replace,
            "__module__": cls.__module__,
            "__qualname__": cls.__qualname__,
            "__doc__": cls.__doc__,
        }
        keyed = type(cls.__name__, (cls,), namespace)
        _CLASSES[cls], _BASES[keyed] = keyed, cls
    return keyed


class KeyedFunction:
    """A function built by a :func:`learner_factory` (e.g. a `record` function), equal by its
    :class:`FactoryKey`; calling it calls the function."""

    __slots__ = ("function", "key", "_hash")

    def __init__(self, function: Callable[..., Any], key: FactoryKey):
        self.function, self.key, self._hash = function, key, hash(key)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.function(*args, **kwargs)

    @property
    def __wrapped__(self) -> Callable[..., Any]:  # inspect.unwrap finds the function's source
        return self.function

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, KeyedFunction) and self.key == other.key

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return f"KeyedFunction<{self.key!r}>"


def keyed(made: Any, key: FactoryKey) -> Any:
    """`made` (a `NamedTuple` of functions, or a function) equal by `key`; an object
    that already has a key keeps it (a factory returning another factory's learner)."""
    if factory_key(made) is not None:
        return made
    if isinstance(made, tuple) and hasattr(type(made), "_fields"):
        out = _keyed_class(_BASES.get(type(made), type(made)))._make(made)  # type: ignore[attr-defined]
        out.__dict__.update(_key=key, _hash=hash(key))
        return out
    if callable(made):
        return KeyedFunction(made, key)
    raise TypeError(
        f"learner_factory: {key.factory.__qualname__} must return a NamedTuple of functions "
        f"(a learner) or a function, got {type(made).__name__}"
    )


def learner_factory(factory: F) -> F:
    """Makes `factory`'s results compare by value (see the module docstring).

    Two results of calls with equal arguments are equal and hash-equal, so `jax.jit` reuses
    one compilation for both. Decorate every function that builds a learner from options (its
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
        made = factory(*args, **kwargs)
        try:
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            arguments = tuple((name, value_key(v)) for name, v in bound.arguments.items())
        except _Unkeyable:
            return made
        return keyed(made, FactoryKey(build, arguments))

    return build  # type: ignore[return-value]


__all__ = ["FactoryKey", "KeyedFunction", "factory_key", "keyed", "learner_factory", "value_key"]
