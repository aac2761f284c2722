"""The methods of a transfer split, each built when asked, with the Gram matrices held only while
a method still to come needs them (:class:`MethodRuns`, the `methods` of
:func:`~ojax.transfer.prepare_transfer`).

A method needs one Gram matrix per view (a `(view, width)` key: PA the whole vector's,
PAIO the source view's, COTL0, SCT and COTL one per view). Asked for a method, the mapping
drops the matrices that neither it nor a later method (in the order of the methods) needs,
builds those it lacks, and with them, in the same pass over the data, those of the next methods
while no more matrices are held than the most one method needs. The heterogeneous methods PA,
PAIO, COTL0, SCT, COTL (one width per view) thus hold two matrices at once, never three: the
whole vector's and the first view's for PA and PAIO, then the first view's and the second's.
Asking for the methods in their order (a loop over the mapping) builds each matrix once, in
the precision the set-up ran in (a float64 set-up asked outside `jax.enable_x64` still builds
float64).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import jax

GramKey = tuple[str, float]
"""`(view, width)`: a Gram matrix of a split (views `"whole"`, `"view1"`, `"view2"`)."""


class MethodRuns(Mapping[str, Any]):
    """Method name -> its :class:`~ojax.transfer.MethodRun`, built on access (see the module).

    Args:
      needs: method name -> the Gram matrices it uses, in the order the methods run.
      make: `(name, {key: matrix})` -> the method's run, from the matrices it uses.
      build: a tuple of keys -> `{key: matrix}` (one pass over the data; raises on a
        matrix that is not finite).
      built: matrices already built (the set-up's), held as the others.
    """

    def __init__(
        self,
        needs: Mapping[str, frozenset[GramKey]],
        make: Callable[[str, dict[GramKey, Any]], Any],
        build: Callable[[tuple[GramKey, ...]], dict[GramKey, Any]],
        built: Mapping[GramKey, Any] | None = None,
    ) -> None:
        self._needs = dict(needs)
        self._make, self._build = make, build
        self._grams: dict[GramKey, Any] = dict(built or {})
        self._limit = max((len(v) for v in self._needs.values()), default=0)
        self.seconds = 0.0  # spent building matrices on access
        self._x64 = bool(jax.config.read("jax_enable_x64"))  # the set-up's precision

    def __getitem__(self, name: str) -> Any:
        matrices = self.matrices(name)
        with jax.enable_x64(self._x64):  # made as the set-up would have, wherever asked
            return self._make(name, matrices)

    def matrices(self, name: str) -> dict[GramKey, Any]:
        """The Gram matrices of method `name`: those no method from it on needs dropped, the
        missing ones built (with those of the next methods that fit, see the module), in the
        set-up's precision wherever asked."""
        if name not in self._needs:
            raise KeyError(name)
        with jax.enable_x64(self._x64):
            return self._matrices(name)

    def _matrices(self, name: str) -> dict[GramKey, Any]:
        order = list(self._needs)
        later = order[order.index(name) :]
        keep = frozenset().union(*(self._needs[m] for m in later))
        for key in [k for k in self._grams if k not in keep]:
            del self._grams[key]  # no method to come uses it
        self._build_for(later)
        return {k: self._grams[k] for k in self._needs[name]}

    def _build_for(self, methods: list[str]) -> None:
        missing = set(self._needs[methods[0]]) - set(self._grams)
        if not missing:
            return
        for method in methods[1:]:
            more = missing | (self._needs[method] - set(self._grams))
            if len(more | set(self._grams)) > self._limit:
                break
            missing = more
        start = time.perf_counter()
        self._grams.update(self._build(tuple(sorted(missing))))
        self.seconds += time.perf_counter() - start

    @property
    def held(self) -> tuple[GramKey, ...]:
        """The Gram matrices held now."""
        return tuple(self._grams)

    def __contains__(self, name: object) -> bool:
        return name in self._needs

    def __iter__(self) -> Iterator[str]:
        return iter(self._needs)

    def __len__(self) -> int:
        return len(self._needs)


__all__ = ["GramKey", "MethodRuns"]
