"""ojax.envs.streams: the synthetic streams have the distributions their docstrings state
(moments, covariances and Kolmogorov-Smirnov tests at fixed keys, against the exact laws and
against ``jax.random``), the shapes and dtypes of their callers, and are pure functions of their
key (the same under ``jit`` and ``vmap``)."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats
from tolerances import scaled_atol

from ojax.envs import streams
from ojax.validation import InputError

N, D = 20_000, 10
P_MIN = 1e-3  # a fixed-key KS test passes above this p-value (fails on the wrong law, below)


def _ks(sample, law="norm") -> float:
    return float(stats.kstest(np.ravel(sample), law).pvalue)


def _within(value: float, target: float, sigma: float) -> bool:
    """``value`` is within five standard errors of ``target``."""
    return abs(value - target) <= 5 * sigma


def _philox_reference(key, counter):
    """Philox4x32-10 on Python ints, as Random123 specifies it."""
    mask = 0xFFFFFFFF
    (k0, k1), c = key, list(counter)
    for r in range(10):
        if r:
            k0, k1 = (k0 + 0x9E3779B9) & mask, (k1 + 0xBB67AE85) & mask
        p0, p1 = 0xD2511F53 * c[0], 0xCD9E8D57 * c[2]
        c = [(p1 >> 32) ^ c[1] ^ k0, p1 & mask, (p0 >> 32) ^ c[3] ^ k1, p0 & mask]
    return c


@pytest.fixture(scope="module")
def regression():
    xs, ys = streams.linear_regression_stream(jax.random.key(0), N, D)
    return np.asarray(xs, np.float64), np.asarray(ys, np.float64)


def test_philox_words_are_random123s():
    """The words are Philox4x32-10's: Random123's known answers, and a reference loop."""
    known = [
        ((0, 0), (0, 0, 0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
        ((2**32 - 1,) * 2, (2**32 - 1,) * 4, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
        (
            (0xA4093822, 0x299F31D0),
            (0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344),
            (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1),
        ),
    ]
    rng = np.random.default_rng(0)
    for _ in range(3):
        key, counter = rng.integers(0, 2**32, 2).tolist(), rng.integers(0, 2**32, 4).tolist()
        known.append((tuple(key), tuple(counter), tuple(_philox_reference(key, counter))))
    for key, counter, expected in known:
        assert tuple(_philox_reference(key, counter)) == expected
        words = streams._philox(
            tuple(jnp.uint32(k) for k in key), tuple(jnp.full((2,), c, jnp.uint32) for c in counter)
        )
        assert [int(w[1]) for w in words] == list(expected)


def test_draw_i_comes_from_counter_i_over_per_block_whatever_the_rows():
    """The counters laid out in rows (where the count allows) give the draws of one row of
    counters: draw `i` is the `i % 4`-th of counter `i // 4`'s (float32), for counts with 1, 2,
    4 and 8 rows, and from an offset."""
    key = jax.random.key(5)
    words = jax.random.bits(key, (2,), jnp.uint32)
    for size in (4 * 7, 4 * 6, 4 * 12, 4 * 40, 4 * 40 - 3):
        blocks = -(-size // 4)
        counter = jnp.arange(blocks, dtype=jnp.uint32)
        zero = jnp.zeros_like(counter)

        @jax.jit
        def one_row(words, counter=counter, zero=zero):
            row = streams._philox((words[0], words[1]), (counter, zero, zero, zero))
            return streams._transform(row, np.dtype(np.float32), True)

        got = streams._draws(key, size, np.dtype(np.float32), True)
        np.testing.assert_array_equal(got, one_row(words)[:size], err_msg=f"size {size}")
        later = streams._draws_from(key, np.uint32(5), size - 5, np.dtype(np.float32), True)
        np.testing.assert_array_equal(later, got[5:], err_msg=f"size {size} from 5")


def test_ks_check_has_power():
    """The KS check below rejects laws close to the normal at these sizes (so it can fail)."""
    z = np.random.default_rng(0).standard_normal(100_000)
    assert _ks(z) > P_MIN
    assert _ks(1.05 * z) < P_MIN and _ks(z + 0.02) < P_MIN
    assert _ks(stats.t.rvs(8, size=100_000, random_state=0)) < P_MIN


def test_standard_normal_is_the_normal_of_jax_random():
    z = np.asarray(streams.standard_normal(jax.random.key(1), (100_000,)), np.float64)
    n = z.size
    assert _within(z.mean(), 0.0, 1 / math.sqrt(n))
    assert _within(z.var(), 1.0, math.sqrt(2 / n))
    assert _within(stats.skew(z), 0.0, math.sqrt(6 / n))
    assert _within(stats.kurtosis(z), 0.0, math.sqrt(24 / n))
    tail = 2 * stats.norm.sf(3.0)  # P(|z| > 3)
    assert _within(np.mean(np.abs(z) > 3), tail, math.sqrt(tail * (1 - tail) / n))
    assert _ks(z) > P_MIN
    reference = np.asarray(jax.random.normal(jax.random.key(2), (100_000,)), np.float64)
    assert stats.ks_2samp(z, reference).pvalue > P_MIN
    # neighbours (the pairs of one Box-Muller draw): a uniform angle, a chi-square(2) radius
    angle = np.arctan2(z[1::2], z[0::2]) / (2 * np.pi) % 1.0
    assert _ks(angle, "uniform") > P_MIN
    assert _ks(z[0::2] ** 2 + z[1::2] ** 2, stats.chi2(2).cdf) > P_MIN
    for lag in (1, 2, 3, 4):
        assert _within(np.corrcoef(z[:-lag], z[lag:])[0, 1], 0.0, 1 / math.sqrt(n))
        assert _within(np.corrcoef(z[:-lag] ** 2, z[lag:] ** 2)[0, 1], 0.0, 1 / math.sqrt(n))


def test_uniform_is_uniform_on_zero_one():
    u = np.asarray(streams.uniform(jax.random.key(3), (100_000,)), np.float64)
    assert u.min() >= 0.0 and u.max() < 1.0
    assert _within(u.mean(), 0.5, math.sqrt(1 / 12 / u.size))
    assert _ks(u, "uniform") > P_MIN
    assert _within(np.corrcoef(u[:-1], u[1:])[0, 1], 0.0, 1 / math.sqrt(u.size))


def test_float64_under_x64(x64):
    z = streams.standard_normal(jax.random.key(4), (50_000,))
    u = np.asarray(streams.uniform(jax.random.key(4), (50_000,)))
    assert z.dtype == jnp.float64 and u.dtype == np.float64
    assert _ks(np.asarray(z)) > P_MIN and _ks(u, "uniform") > P_MIN
    # 53 random bits, not float32's 24: hardly any value lies on the 2^-24 grid
    assert np.mean(u * 2**24 == np.floor(u * 2**24)) < 0.01
    xs, ys = streams.linear_regression_stream(jax.random.key(0), 30, 4)
    assert xs.dtype == jnp.float64 and ys.dtype == jnp.float64


def test_regression_inputs_are_normal_with_covariance_identity_over_dim(regression):
    xs, _ = regression
    z = xs * math.sqrt(D)  # N(0, I) if x ~ N(0, I / D)
    assert xs.shape == (N, D)
    sigma = 1 / math.sqrt(N)
    assert all(_within(m, 0.0, sigma) for m in z.mean(0))
    assert all(_within(v, 1.0, math.sqrt(2 / N)) for v in z.var(0))
    corr = np.corrcoef(z.T)
    assert np.abs(corr[~np.eye(D, dtype=bool)]).max() <= 5 * sigma
    assert _ks(z) > P_MIN
    assert all(_ks(z[:, j]) > P_MIN / D for j in (0, D - 1))
    assert len(np.unique(xs, axis=0)) == N  # no step repeats another (no short period)
    # independent over time: no correlation between consecutive steps
    lagged = np.corrcoef(z[:-1].ravel(), z[1:].ravel())[0, 1]
    assert _within(lagged, 0.0, 1 / math.sqrt(z.size))


def test_regression_noise_is_normal_with_std_one_tenth(regression):
    xs, ys = regression
    w_star, *_ = np.linalg.lstsq(xs, ys, rcond=None)
    noise = ys - xs @ w_star
    assert _within(noise.var(), 0.01 * (N - D) / N, 0.01 * math.sqrt(2 / N))
    assert _ks(noise / 0.1) > P_MIN
    # independent of the input: its size does not follow the input's
    size = np.corrcoef(noise**2, (xs**2).sum(1))[0, 1]
    assert _within(size, 0.0, 1 / math.sqrt(N))


def test_regression_targets_are_standard_normal_over_keys():
    """``w* ~ N(0, I)``: recovered by least squares from 400 short streams."""
    keys = jax.random.split(jax.random.key(6), 400)
    xs, ys = jax.vmap(lambda k: streams.linear_regression_stream(k, 200, 5))(keys)
    xs, ys = np.asarray(xs, np.float64), np.asarray(ys, np.float64)
    gram = np.einsum("snd,sne->sde", xs, xs)
    w = np.linalg.solve(gram, np.einsum("snd,sn->sd", xs, ys)[..., None]).ravel()
    assert _within(w.mean(), 0.0, 1 / math.sqrt(w.size))
    assert _within(w.var(), 1.0, math.sqrt(2 / w.size) + 1e-3)  # + the fit's error variance
    assert _ks(w) > P_MIN


def test_unit_ball_stream_directions_uniform_norms_uniform():
    zs, ys = streams.unit_ball_stream(jax.random.key(7), N, 4)
    zs = np.asarray(zs, np.float64)
    norms = np.linalg.norm(zs, axis=1)
    assert zs.shape == (N, 4) and ys.shape == (N,) and not np.any(np.asarray(ys))
    assert _ks(norms, "uniform") > P_MIN
    directions = zs / norms[:, None]
    assert np.abs(directions.mean(0)).max() <= 5 / math.sqrt(N)
    second = directions.T @ directions / N  # E[u u^T] = I / d on the sphere
    assert np.abs(second - np.eye(4) / 4).max() <= 5 * math.sqrt(1 / 8 / N)
    assert _ks(directions[:, 0] ** 2, stats.beta(0.5, 1.5).cdf) > P_MIN  # u_1^2 ~ Beta(1/2, 3/2)


def test_shapes_dtypes_and_purity():
    key = jax.random.key(8)
    xs, ys = streams.linear_regression_stream(key, 50, 4)
    assert xs.shape == (50, 4) and ys.shape == (50,)
    assert xs.dtype == jnp.float32 and ys.dtype == jnp.float32
    again = streams.linear_regression_stream(key, 50, 4)
    np.testing.assert_array_equal(xs, again[0])
    np.testing.assert_array_equal(ys, again[1])
    other = streams.linear_regression_stream(jax.random.key(9), 50, 4)
    assert not np.any(np.asarray(xs) == np.asarray(other[0]))
    raw = streams.linear_regression_stream(jax.random.PRNGKey(8), 50, 4)  # a raw uint32 key
    assert raw[0].shape == (50, 4) and not np.array_equal(raw[0], other[0])
    for shape in ((0, 3), (5, 1)):  # empty, and a size that is not a multiple of 4
        z = streams.standard_normal(key, shape)
        assert z.shape == shape and np.all(np.isfinite(np.asarray(z)))


def test_vmap_over_keys_is_each_key_alone():
    keys = jax.random.split(jax.random.key(10), 6)
    xs, ys = jax.jit(jax.vmap(lambda k: streams.linear_regression_stream(k, 50, 4)))(keys)
    for i in (0, 3, 5):  # the same values under jit and vmap as alone
        one = streams.linear_regression_stream(keys[i], 50, 4)
        np.testing.assert_array_equal(xs[i], one[0])
        np.testing.assert_allclose(ys[i], one[1], rtol=1e-6, atol=scaled_atol(one[1], 1e-6))
    flat = np.asarray(xs).reshape(6, -1)
    corr = np.corrcoef(flat)[~np.eye(6, dtype=bool)]
    assert np.abs(corr).max() <= 5 / math.sqrt(flat.shape[1])  # the keys' streams independent


@pytest.mark.parametrize(
    "num_steps, dim, name",
    [(-1, 3, "num_steps"), (10, 0, "dim"), (10.0, 3, "num_steps"), (10, 2.5, "dim")],
)
def test_bad_sizes_are_refused(num_steps, dim, name):
    with pytest.raises(InputError, match=name):
        streams.linear_regression_stream(jax.random.key(0), num_steps, dim)


def test_bad_dtype_and_shape_are_refused():
    with pytest.raises(InputError, match="dtype"):
        streams.standard_normal(jax.random.key(0), (3,), jnp.int32)
    with pytest.raises(InputError, match="shape"):
        streams.uniform(jax.random.key(0), (3, -1))


def test_expert_losses_are_bernoulli_of_uniform_means():
    losses, ys = streams.expert_losses_stream(jax.random.key(11), 2_000, 300)
    losses = np.asarray(losses)
    assert losses.shape == (2_000, 300) and losses.dtype == np.float32 and ys.shape == (2_000,)
    assert set(np.unique(losses)) == {0.0, 1.0}
    means = losses.mean(0)  # each expert's mean, to +- 0.011 (one standard error at most)
    assert _ks(means, "uniform") > P_MIN
    column = losses[:, np.argmin(np.abs(means - 0.5))]  # independent over time
    assert _within(np.corrcoef(column[:-1], column[1:])[0, 1], 0.0, 1 / math.sqrt(2_000))


def test_realizable_advice_is_fair_coins_labelled_by_expert_zero():
    advice, ys = streams.realizable_advice_stream(jax.random.key(12), 2_000, 50)
    advice = np.asarray(advice)
    assert advice.dtype == np.int32 and set(np.unique(advice)) == {0, 1}
    np.testing.assert_array_equal(np.asarray(ys), advice[:, 0])
    assert _within(advice.mean(), 0.5, 0.5 / math.sqrt(advice.size))
    corr = np.corrcoef(advice.T)[~np.eye(50, dtype=bool)]  # the experts independent
    assert np.abs(corr).max() <= 5 / math.sqrt(2_000)
