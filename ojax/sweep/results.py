"""What a sweep returns: the outputs with named axes (:class:`SweepResult`) and what it did
(:class:`SweepStats`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np

from ojax.validation import InputError


@dataclasses.dataclass
class SweepStats:
    """What a sweep did. `steps` counts `num_steps` per combination when given."""

    num_combinations: int
    chunk_size: int
    num_chunks: int
    chunks_computed: int
    chunks_loaded: int
    combinations_computed: int
    num_devices: int
    memory_budget: int
    estimated_bytes_per_combination: int
    compile_seconds: float
    wall_seconds: float
    num_steps: int | None = None
    folder: str | None = None

    @property
    def steps(self) -> int | None:
        return None if self.num_steps is None else self.num_combinations * self.num_steps

    @property
    def steps_per_second(self) -> float | None:
        """Steps computed in this run per second of running (compile time excluded)."""
        if self.num_steps is None:
            return None
        seconds = max(self.wall_seconds - self.compile_seconds, 1e-9)
        return self.combinations_computed * self.num_steps / seconds

    def summary_line(self, name: str = "sweep") -> str:
        """One line: combinations, steps, steps per second, wall time, compile time."""
        parts = [f"{name}: {self.num_combinations} combinations"]
        if self.chunks_loaded:
            parts.append(
                f"({self.combinations_computed} computed, "
                f"{self.num_combinations - self.combinations_computed} resumed)"
            )
        parts.append(
            f"in {self.num_chunks} chunk(s) of {self.chunk_size} on {self.num_devices} device(s)"
        )
        if self.num_steps is not None:
            parts.append(f"| {self.steps:.3g} steps, {self.steps_per_second:.3g} steps/s")
        parts.append(f"| wall {self.wall_seconds:.2f} s, compile {self.compile_seconds:.2f} s")
        return " ".join(parts)


@dataclasses.dataclass
class SweepResult:
    """The outputs of every combination, with named axes.

    Attributes:
      outputs: `fn`'s output pytree; each leaf has the axes :attr:`axes` first (`seed`,
        each hyperparameter axis, `task` when tasks were given), then `fn`'s own shape.
      axes: the axis names.
      coords: axis name -> its values (`seed`: `0..num_seeds-1`; `task`: `0..T-1`; a
        hyperparameter axis: its values, a pytree with a leading axis).
      stats: a :class:`SweepStats`.
    """

    outputs: Any
    axes: tuple[str, ...]
    coords: dict[str, Any]
    stats: SweepStats

    def axis(self, name: str) -> int:
        """The position of the axis `name`."""
        if name not in self.axes:
            raise InputError(f"axis must be one of {list(self.axes)}, got {name!r}")
        return self.axes.index(name)

    def _reduce(self, fn: Callable, axis: str) -> Any:
        where = self.axis(axis)
        return jax.tree.map(lambda a: fn(np.asarray(a), where), self.outputs)

    def mean(self, axis: str = "seed") -> Any:
        """Mean over `axis` (default: seeds) of every output."""
        return self._reduce(lambda a, i: a.mean(axis=i), axis)

    def std(self, axis: str = "seed") -> Any:
        """Standard deviation (ddof 0) over `axis` of every output."""
        return self._reduce(lambda a, i: a.std(axis=i), axis)

    def quantile(self, q: float | Sequence[float], axis: str = "seed") -> Any:
        """Quantile(s) `q` over `axis`; a sequence of `q` adds a leading axis."""
        return self._reduce(lambda a, i: np.quantile(a, q, axis=i), axis)

    def summary(self, quantiles: Sequence[float] = (0.1, 0.5, 0.9)) -> dict[str, Any]:
        """Mean, std and quantiles over seeds: `{"mean", "std", "quantiles", "q"}`."""
        return {
            "mean": self.mean(),
            "std": self.std(),
            "quantiles": self.quantile(list(quantiles)),
            "q": list(quantiles),
        }

    def best(self, metric: str | Callable[[Any], Any], *, minimize: bool = True) -> dict[str, Any]:
        """The hyperparameter combination with the best mean over seeds (and tasks).

        Args:
          metric: a key of a dict output, or `outputs -> array` with one value per
            combination (shape :attr:`axes` sizes), e.g. `lambda o: o["loss"][..., -1]`.
          minimize: the smaller the better (default) or the larger.

        Returns:
          `{"index": {axis: i}, "params": {axis: value}, "value": mean metric}`: the best
          combination whose mean is finite (a diverged one, NaN or infinite, is never the best).

        Raises:
          InputError: the metric's shape is not one value per combination, or no combination
            has a finite mean (every one diverged).
        """
        values = self.outputs[metric] if isinstance(metric, str) else metric(self.outputs)
        values = np.asarray(values, dtype=np.float64)
        sizes = tuple(
            len(self.coords["seed"]) if a == "seed" else _axis_len(self.coords[a])
            for a in self.axes
        )
        if values.shape != sizes:
            raise InputError(
                f"metric must give one value per combination, shape {sizes}, got shape "
                f"{values.shape}; select a final value, e.g. lambda o: o['loss'][..., -1]"
            )
        reduce_axes = tuple(i for i, a in enumerate(self.axes) if a in ("seed", "task"))
        score = values.mean(axis=reduce_axes)
        hyper = [a for a in self.axes if a not in ("seed", "task")]
        if not hyper:
            return {"index": {}, "params": {}, "value": float(score)}
        finite = np.isfinite(score)
        if not finite.any():
            raise InputError(
                f"no combination has a finite mean of the metric: all {score.size} diverged "
                "(NaN or infinite)"
            )
        flat = np.argmin(np.where(finite, score, np.inf)) if minimize else None
        if flat is None:
            flat = np.argmax(np.where(finite, score, -np.inf))
        where = np.unravel_index(flat, score.shape)
        index = {a: int(i) for a, i in zip(hyper, where)}
        params = {
            a: jax.tree.map(lambda v, i=i: np.asarray(v)[i], self.coords[a])
            for a, i in index.items()
        }
        return {"index": index, "params": params, "value": float(score[where])}


def _axis_len(values: Any) -> int:
    return int(np.shape(jax.tree.leaves(values)[0])[0])


__all__ = ["SweepResult", "SweepStats"]
