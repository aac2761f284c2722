"""Simple seeded, jittable streams: `(key, num_steps, dim) -> (xs, ys)`.

Used by the learner registry (by name, in :data:`ojax.envs.STREAMS`: tests, `ojax sweep`)
and the quickstart. Their Gaussian and
uniform draws come from :func:`standard_normal` and :func:`uniform`: the distributions of
`jax.random.normal` / `jax.random.uniform` (other values), about five times cheaper on a
CPU: Philox4x32-10 words (four 32-bit words per ten rounds of multiplications, where threefry's
partitionable bits take twenty rounds per word) and a Box-Muller transform whose sine and
cosine are short polynomials (`jnp.sin` / `jnp.cos` are slow on XLA's CPU backend). 1000
linear-regression streams of 10^4 steps (d = 10) are drawn in about 0.65 s instead of 4.2 s
on 2 CPU cores, one stream of 10^6 steps in 0.055 s, and they compile in a fraction of the
time.
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.typing import ArrayLike

from ojax.core import Array
from ojax.validation import InputError, check_int

# Philox4x32-10 (Salmon, Moraes, Dror, Shaw, "Parallel random numbers: as easy as 1, 2, 3",
# SC 2011): the multipliers and the Weyl increments of its key schedule.
_MULTIPLIERS = (np.uint32(0xD2511F53), np.uint32(0xCD9E8D57))
_WEYL = (np.uint32(0x9E3779B9), np.uint32(0xBB67AE85))
_ROUNDS = 10
_MAX_BLOCKS = 2**32  # one 32-bit counter word
_ROWS = 8


def _mulhi(a: Array, m: np.uint32) -> Array:
    """The high 32 bits of the 64-bit product `a * m` (uint32), from one uint64 product
    (typed 64-bit inside, whether or not x64 is on): `lax.mulhi` does not survive the SPMD
    partitioner of a sharded CPU program, and 16-bit halves in uint32 draw 40% slower."""
    with jax.enable_x64(True):
        wide = lax.convert_element_type(a, jnp.uint64) * np.uint64(m)
        return lax.convert_element_type(wide >> np.uint64(32), jnp.uint32)


def _philox(key: tuple[Array, Array], counter: tuple[Array, ...]) -> tuple[Array, ...]:
    """Philox4x32-10 of the 128-bit `counter` (four uint32 arrays of one shape) under the
    64-bit `key` (two uint32 scalars): four uint32 arrays."""
    k0, k1 = key
    c0, c1, c2, c3 = counter
    for r in range(_ROUNDS):
        if r:
            k0, k1 = k0 + _WEYL[0], k1 + _WEYL[1]
        hi0, lo0 = _mulhi(c0, _MULTIPLIERS[0]), c0 * _MULTIPLIERS[0]
        hi1, lo1 = _mulhi(c2, _MULTIPLIERS[1]), c2 * _MULTIPLIERS[1]
        c0, c1, c2, c3 = hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0
    return c0, c1, c2, c3


def _blocks(key: Array, num_blocks: int, first: Array | None = None) -> tuple[Array, ...]:
    """`4 * num_blocks` independent uniform 32-bit words (four arrays of `num_blocks` counters,
    in up to 8 rows), keyed by two words drawn from `key` (a key of any implementation); the
    counters, flattened row-major, are `first, first + 1, ...` (`first` a uint32, default 0)."""
    if num_blocks > _MAX_BLOCKS:
        raise InputError(f"size: at most {4 * _MAX_BLOCKS} draws per call, got {4 * num_blocks}")
    words = jax.random.bits(key, (2,), jnp.uint32)
    # in rows where the count allows: as one long row, XLA's CPU backend runs the stack of
    # :func:`_transform` element by element (11x slower for 10^7 draws; under vmap the rows
    # change nothing)
    rows = math.gcd(_ROWS, num_blocks)
    counter = lax.iota(jnp.uint32, num_blocks).reshape(rows, -1)
    if first is not None:
        counter = counter + first
    zero = jnp.zeros_like(counter)
    return _philox((words[0], words[1]), (counter, zero, zero, zero))


def _float_dtype(dtype) -> np.dtype:
    dtype = jax.dtypes.canonicalize_dtype(float if dtype is None else dtype)
    if dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise InputError(f"dtype must be float32 or float64, got {dtype}")
    return dtype


def _unit(words: tuple[Array, ...], dtype: np.dtype, open_low: bool) -> Array:
    """A uniform float in `[0, 1)` (`(0, 1]` when `open_low`) on the float's mantissa:
    24 bits of one word for float32, 53 bits of two words for float64."""
    if dtype == np.float32:
        bits = (words[0] >> 8).astype(dtype)
        scale = 2.0**-24
    else:
        bits = (words[0] >> 5).astype(dtype) * 2.0**26 + (words[1] >> 6).astype(dtype)
        scale = 2.0**-53
    return ((bits + 1.0) if open_low else bits) * scale


def _turn(word: Array) -> tuple[Array, Array]:
    """`(cos, sin)` of an angle uniform on the circle (on a grid of `2^24` angles) from a
    32-bit word: its top 2 bits pick a quarter turn, its next 22 an angle `psi` in
    `[-pi/4, pi/4)` whose sine and cosine are Taylor polynomials (float32-exact there; cheaper
    on a CPU than `jnp.cos` / `jnp.sin`)."""
    quarter = word >> 30
    psi = (((word >> 8) & np.uint32(0x3FFFFF)).astype(jnp.float32) * 2.0**-22 - 0.5) * (math.pi / 2)
    p2 = psi * psi
    sin = psi * (1 + p2 * (-1 / 6 + p2 * (1 / 120 + p2 * (-1 / 5040 + p2 / 362880))))
    cos = 1 + p2 * (-1 / 2 + p2 * (1 / 24 + p2 * (-1 / 720 + p2 * (1 / 40320 - p2 / 3628800))))
    odd, back = (quarter & 1) == 1, quarter >= 2  # turn by 90 degrees, by 180 degrees
    cos, sin = jnp.where(odd, -sin, cos), jnp.where(odd, cos, sin)
    return jnp.where(back, -cos, cos), jnp.where(back, -sin, sin)


def _box_muller(first: tuple[Array, ...], second: tuple[Array, ...], dtype) -> tuple[Array, Array]:
    """Two independent standard normals (Box and Muller 1958): the radius from `first`'s
    uniform in `(0, 1]`, the angle from `second`'s words."""
    radius = jnp.sqrt(-2.0 * jnp.log(_unit(first, dtype, open_low=True)))
    if dtype == np.float32:
        cos, sin = _turn(second[0])
    else:
        angle = (2.0 * math.pi) * _unit(second, dtype, open_low=False)
        cos, sin = jnp.cos(angle), jnp.sin(angle)
    return radius * cos, radius * sin


def _per_block(dtype: np.dtype) -> int:
    return 4 if dtype == np.float32 else 2  # draws per counter: float64 takes two words each


@functools.partial(jax.jit, static_argnums=(1, 2, 3))
def _draws(key: Array, size: int, dtype: np.dtype, normal: bool) -> Array:
    """`size` i.i.d. standard normals (or uniforms in `[0, 1)`) as a flat array."""
    blocks = _blocks(key, -(-size // _per_block(dtype)))
    return _transform(blocks, dtype, normal)[:size]


@functools.partial(jax.jit, static_argnums=(2, 3, 4))
def _draws_from(key: Array, first: Array, size: int, dtype: np.dtype, normal: bool) -> Array:
    """Draws `first .. first + size` (`first` a traced uint32) of the flat sequence
    :func:`_draws` gives under `key`, bit for bit: draw `i` comes from counter
    `i // per_block` alone."""
    per_block = _per_block(dtype)
    first = jnp.asarray(first, jnp.uint32)
    blocks = _blocks(key, size // per_block + 2, first // np.uint32(per_block))
    flat = _transform(blocks, dtype, normal)
    return lax.dynamic_slice_in_dim(flat, (first % np.uint32(per_block)).astype(jnp.int32), size)


def _transform(blocks: tuple[Array, ...], dtype: np.dtype, normal: bool) -> Array:
    """The words of `blocks` as draws, counter-major (`per_block` draws per counter)."""
    per_block = _per_block(dtype)
    pairs = [blocks[i : i + 4 // per_block] for i in range(0, 4, 4 // per_block)]
    outs: list[Array] = []
    if normal:
        for first, second in zip(pairs[::2], pairs[1::2]):
            outs.extend(_box_muller(first, second, dtype))
    else:
        outs.extend(_unit(words, dtype, False) for words in pairs)
    return jnp.stack(outs, axis=-1).reshape(-1)


def standard_normal(key: Array, shape: tuple[int, ...], dtype=None) -> Array:
    """I.i.d. standard normals: the distribution of `jax.random.normal(key, shape, dtype)`
    (other values), drawn with Philox4x32-10 words and the Box-Muller transform.

    Args:
      key: a JAX PRNG key (of any implementation; only two words of it are used).
      shape: the static output shape.
      dtype: float32 or float64 (default: JAX's default float, float64 under x64).

    Examples:
      >>> import jax
      >>> from ojax.envs.streams import standard_normal
      >>> z = standard_normal(jax.random.key(0), (100_000,))
      >>> print(z.shape, z.dtype, abs(float(z.mean())) < 0.02, abs(float(z.var()) - 1) < 0.02)
      (100000,) float32 True True
    """
    dtype = _float_dtype(dtype)
    shape = tuple(check_int("shape", n, low=0) for n in shape)
    return _draws(key, math.prod(shape), dtype, normal=True).reshape(shape)


def uniform(key: Array, shape: tuple[int, ...], dtype=None) -> Array:
    """I.i.d. uniforms in `[0, 1)`: the distribution of `jax.random.uniform(key, shape,
    dtype)` (other values), on the same Philox4x32-10 words as :func:`standard_normal`."""
    dtype = _float_dtype(dtype)
    shape = tuple(check_int("shape", n, low=0) for n in shape)
    return _draws(key, math.prod(shape), dtype, normal=False).reshape(shape)


def _sizes(num_steps: int, dim: int) -> tuple[int, int]:
    return check_int("num_steps", num_steps, low=0), check_int("dim", dim, low=1)


def unit_ball_stream(key: Array, num_steps: int, dim: int) -> tuple[Array, Array]:
    """Loss data `z_t` uniform in direction with norms uniform in [0, 1]."""
    num_steps, dim = _sizes(num_steps, dim)
    k1, k2 = jax.random.split(key)
    z = standard_normal(k1, (num_steps, dim))
    z = z / jnp.linalg.norm(z, axis=1, keepdims=True)
    return z * uniform(k2, (num_steps, 1)), jnp.zeros(num_steps)


def expert_losses_stream(key: Array, num_steps: int, dim: int) -> tuple[Array, Array]:
    """Losses in {0, 1} of `dim` experts, each a Bernoulli of its own mean (uniform in [0, 1],
    drawn from `key`)."""
    num_steps, dim = _sizes(num_steps, dim)
    k1, k2 = jax.random.split(key)
    means = uniform(k1, (dim,), jnp.float32)
    losses = uniform(k2, (num_steps, dim), jnp.float32) < means[None, :]
    return losses.astype(jnp.float32), jnp.zeros(num_steps)


def realizable_advice_stream(key: Array, num_steps: int, dim: int) -> tuple[Array, Array]:
    """Binary advice of `dim` experts, fair coins; the labels are those of expert 0
    (realizable)."""
    num_steps, dim = _sizes(num_steps, dim)
    advice = (uniform(key, (num_steps, dim), jnp.float32) < 0.5).astype(jnp.int32)
    return advice, advice[:, 0]


def linear_regression_stream(key: Array, num_steps: int, dim: int) -> tuple[Array, Array]:
    """`y = <w*, x> + noise` with `x ~ N(0, I / dim)`, `w* ~ N(0, I)`, `noise ~ N(0,
    0.01)`, i.i.d. over the steps; `w*` is drawn from `key`, fixed for the stream.

    One :func:`standard_normal` draw of `(num_steps, dim + 1)` gives each step's `x` and
    noise together.
    """
    return _linear_regression(key, *_sizes(num_steps, dim))


def classification_stream(key: Array, num_steps: int, dim: int) -> tuple[Array, Array]:
    """Gaussian inputs labelled by a random hyperplane, 10% of the labels flipped (+-1)."""
    num_steps, dim = _sizes(num_steps, dim)
    k1, k2, k3 = jax.random.split(key, 3)
    w_star = jax.random.normal(k1, (dim,))
    xs = jax.random.normal(k2, (num_steps, dim))
    ys = jnp.where(xs @ w_star >= 0, 1.0, -1.0)
    flip = jax.random.bernoulli(k3, 0.1, (num_steps,))
    return xs, jnp.where(flip, -ys, ys)


def linear_regression_rows(
    key: Array, start: ArrayLike, size: int, dim: int
) -> tuple[Array, Array]:
    """Rows `start .. start + size` of :func:`linear_regression_stream` `(key, n, dim)`
    (any `n >= start + size`), drawn alone: the same `w*` and the same Philox counters, so
    `xs` is bit for bit the slice of the whole stream and `ys` equal up to the rounding of
    the product `xs @ w*` (see `tests/test_streaming.py`). `start` may be traced (the
    block index of a scan, :func:`ojax.run_drawn`); `(start + size) (dim + 1)` must
    stay below `2^32`.

    Examples:
      >>> import jax
      >>> from ojax.envs.streams import linear_regression_rows, linear_regression_stream
      >>> key = jax.random.key(0)
      >>> xs, ys = linear_regression_stream(key, 100, 3)
      >>> rows, labels = linear_regression_rows(key, 40, 20, 3)
      >>> print(bool((rows == xs[40:60]).all()), bool(abs(labels - ys[40:60]).max() < 1e-6))
      True True
    """
    size, dim = check_int("size", size, low=1), check_int("dim", dim, low=1)
    if not isinstance(start, jax.core.Tracer):
        end = int(np.asarray(start)) + size
        if end * (dim + 1) >= 2**32:
            raise InputError(
                f"start, size: rows up to {end} of dim {dim} need (start + size) * (dim + 1) "
                f"< 2^32 draws, got {end * (dim + 1)}"
            )
    return _linear_regression_rows(key, jnp.asarray(start, jnp.uint32), size, dim)


@functools.partial(jax.jit, static_argnums=(2, 3))
def _linear_regression_rows(key: Array, start: Array, size: int, dim: int):
    k_w, k_z = jax.random.split(key)
    dtype = _float_dtype(None)
    w_star = standard_normal(k_w, (dim,))
    z = _draws_from(k_z, start * np.uint32(dim + 1), size * (dim + 1), dtype, True)
    z = z.reshape(size, dim + 1)
    xs = z[:, :dim] * (1.0 / math.sqrt(dim))
    return xs, xs @ w_star + 0.1 * z[:, dim]


@functools.partial(jax.jit, static_argnums=(1, 2))
def _linear_regression(key: Array, num_steps: int, dim: int) -> tuple[Array, Array]:
    k_w, k_z = jax.random.split(key)
    w_star = standard_normal(k_w, (dim,))
    z = standard_normal(k_z, (num_steps, dim + 1))
    xs = z[:, :dim] * (1.0 / math.sqrt(dim))
    return xs, xs @ w_star + 0.1 * z[:, dim]


__all__ = [
    "classification_stream",
    "expert_losses_stream",
    "linear_regression_rows",
    "linear_regression_stream",
    "realizable_advice_stream",
    "standard_normal",
    "uniform",
    "unit_ball_stream",
]
