"""Claims of Denevi, Stamos & Pontil (2020) as tests, at quick sizes with fixed seeds.

(a) a learned bias helps when the tasks' variance is small against ``||m||^2`` and the gain
vanishes (no large negative transfer) when it is large; (b) a zero bias gives back independent
task learning exactly; (c) Schools and Lenk: what their quick runs support; (d) the best bias in
hindsight is optimal in hindsight, at least as good as the true mean on the training tasks.

Compilation dominates, so the claims run the learners directly (``meta.run_meta``, one compile
per learner, every ratio and seed in one vmap) and one test checks that the experiment
(``denevi2020-variance``) gives the same numbers.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import reference_denevi as ref
from tolerances import scaled_atol

from ojax import InputError, meta
from ojax.datasets import multitask as mt_data
from ojax.envs import multitask as mt_env
from ojax.experiments import denevi2020 as den
from ojax.experiments import denevi2020_variance as var
from ojax.experiments.denevi2020 import DeneviConfig as ExperimentConfig

SIZE = den.QUICK_SYNTHETIC._replace(num_tasks=40, num_validation=2, num_test=10, num_checkpoints=3)
RATIOS = [1 / 64, 1 / 16, 1.0, 256.0]
SEEDS = 4
PF_META = ["Aggressive", "Lazy", "Aggressive_KT", "Lazy_KT"]
FIXED = ["ITL", "Oracle", var.BEST_BIAS]


class Finals(NamedTuple):
    cumulative: np.ndarray  # (V, S) final cumulative error
    test: np.ndarray  # (V, S) final multi-task test error


def _finals(trace) -> Finals:
    count = jnp.sum(trace.mask, axis=(-2, -1)).astype(trace.loss.dtype)
    cum = jnp.sum(trace.loss, axis=(-2, -1)) / count
    return Finals(np.asarray(cum), np.asarray(jnp.mean(trace.task.test_error, axis=-1)))


class Direct(NamedTuple):
    data: Any  # SeedData with leading (V, S) axes
    w_true: np.ndarray  # (V, S, T, d) the training tasks' true vectors
    w_hat: np.ndarray  # (V, S, T, d) each training task's least-absolute-error solution
    finals: dict[str, Finals]
    itl: Any  # ITL's trace (V, S, ...)


@pytest.fixture(scope="module")
def direct() -> Direct:
    """Every method of the claims at every ratio and seed (float64), run directly."""
    with jax.enable_x64(True):
        env = var.environment_grid(RATIOS, jnp.float64)
        seeds = jnp.arange(SEEDS, dtype=jnp.int32)

        @jax.jit
        def draw(env):  # den.synthetic_data, keeping the true task vectors
            def one(e, s):
                z = SIZE
                sizes = (z.num_tasks, z.num_validation, z.num_test, z.num_points, z.dim)
                return mt_env.synthetic_split(
                    jax.random.key(s), e, *sizes, z.num_train, jnp.float64
                )

            return jax.vmap(lambda e: jax.vmap(lambda s: one(e, s))(seeds))(env)

        split = draw(env)
        data = den.SeedData(split.train, split.validation, split.test)
        # each task alone (a task axis of length 1): its solution; the best bias is their mean
        w_hat = jax.jit(meta.best_bias_in_hindsight)(
            jax.tree.map(lambda a: jnp.expand_dims(a, 3), data.train)
        )
        fixed = den.method_learners("ITL", SIZE.dim).fixed
        oracle = jnp.broadcast_to(env.task_mean[:, None, None], (len(RATIOS), SEEDS, SIZE.dim))
        biases = jnp.stack([jnp.zeros_like(oracle), oracle, jnp.mean(w_hat, axis=2)])

        def run_fixed(bias, tasks):
            params = meta.FixedBiasParams.paper(bias, dtype=jnp.float64)
            return meta.run_meta(fixed, params, tasks, independent_tasks=True)

        batch = jax.vmap(jax.vmap(run_fixed))  # over (V, S)
        traces = jax.jit(jax.vmap(batch, in_axes=(0, None)))(biases, data.train)
        finals = {
            m: _finals(jax.tree.map(lambda a, i=i: a[i], traces)) for i, m in enumerate(FIXED)
        }
        for name in PF_META:
            learner = den.method_learners(name, SIZE.dim).learner
            params = den.method_params(name, SIZE.dim, jnp.float64)
            run = jax.jit(jax.vmap(jax.vmap(lambda t: meta.run_meta(learner, params, t))))  # noqa: B023
            finals[name] = _finals(run(data.train))
        itl = jax.tree.map(lambda a: np.asarray(a[0]), traces)
        return Direct(data, np.asarray(split.task_vectors), np.asarray(w_hat), finals, itl)


def test_environment_grid_holds_the_second_moment_and_meets_the_paper():
    mean, spread = var.mean_and_spread(var.RATIOS)
    np.testing.assert_allclose(mean**2 + spread**2, var.SECOND_MOMENT, rtol=1e-12)
    np.testing.assert_allclose(spread**2 / mean**2, var.RATIOS, rtol=1e-12)
    paper = list(var.RATIOS).index(1 / 16)
    assert (mean[paper], spread[paper]) == (4.0, 1.0)  # exactly the paper's environment
    assert var.RATIOS.min() < 0.02 and var.RATIOS.max() > 100


def test_a_bias_helps_only_at_low_variance(direct):
    # (a) Gains over ITL in final test error (paired per seed), here (40 tasks, 4 seeds) at
    # r = 1/64, 1/16, 1, 256 the means were: Aggressive 1.04 1.01 0.55 0.02, Lazy 0.39 0.37 0.16
    # 0.00, Aggressive_KT 0.99 0.96 0.44 -0.01, Lazy_KT 0.02 0.02 -0.01 -0.02 (ITL ~4.4-4.7).
    # `ojax run denevi2020-variance --quick --x64` (80 tasks, 3 seeds) at r = 1/64, 1/16, 1,
    # 16, 256: Aggressive 1.10 1.07 0.61 0.10 0.03, Lazy 0.82 0.78 0.35 0.03 0.00,
    # Aggressive_KT 1.10 1.05 0.57 0.04 -0.01, Lazy_KT 0.07 0.06 0.01 -0.02 -0.02.
    itl = direct.finals["ITL"].test
    for method in PF_META + ["Oracle", var.BEST_BIAS]:
        gain = itl - direct.finals[method].test  # (V, S)
        mean = gain.mean(axis=1)
        low = 0.005 if method == "Lazy_KT" else 0.3  # KT Lazy barely moves its bias (paper)
        assert np.all(gain[0] > low), (method, gain[0])  # every seed gains at low variance
        # no large negative transfer: at r = 256 within 1% of ITL's error, the gain nearly gone
        assert mean[-1] > -0.01 * itl[-1].mean(), (method, mean)
        assert mean[-1] < 0.25 * mean[0] and abs(mean[-1]) < 0.05, (method, mean)
        assert np.all(np.diff(mean) < 0.0), (method, mean)  # decreasing with the variance


def test_zero_bias_gives_back_independent_learning(direct):
    # (b) ITL (the within-task learner with its bias fixed to 0, run over the stream of tasks) is
    # each task learned alone from scratch: the float64 NumPy loop run task by task.
    for v in (0, len(RATIOS) - 1):
        block = jax.tree.map(lambda a, v=v: np.asarray(a[v, 1]), direct.data.train)
        alone = [ref.run_pf([task], "ons", "fixed") for task in ref.tasks_from_block(block)]
        errors = np.asarray(direct.itl.loss[v, 1])
        expected = np.asarray([a["errors"][0] for a in alone])
        np.testing.assert_allclose(errors, expected, rtol=1e-12, atol=scaled_atol(expected))
        tests = np.asarray(direct.itl.task.test_error[v, 1])
        expected = np.asarray([a["test"][0] for a in alone])
        np.testing.assert_allclose(tests, expected, rtol=1e-12, atol=scaled_atol(expected))


def test_best_bias_is_optimal_in_hindsight(direct):
    # (d) Each task's least-absolute-error solution (IRLS) is within 1e-3 of the exact linear
    # programme's optimum (up to 2e-4 seen), so at least as good as the task's true vector on
    # its online points; their mean h* minimises the hindsight variance
    # F(h) = mean_t ||w_hat_t - h||^2, so F(h*) <= F(m) for the true mean m, with gap ||h* - m||^2.
    x, y = (np.asarray(a[1, 0]) for a in (direct.data.train.x_train, direct.data.train.y_train))
    w_hat = direct.w_hat[1, 0]

    def lae(w):
        return np.abs(y - np.einsum("tnd,td->tn", x, w)).sum(axis=1)

    exact = _exact_lae(x[:3], y[:3])
    assert np.all(lae(w_hat)[:3] >= exact - 1e-9)
    np.testing.assert_allclose(lae(w_hat)[:3], exact, rtol=1e-3)
    assert np.all(lae(w_hat) <= lae(direct.w_true[1, 0]) + 1e-9)
    m = np.full(SIZE.dim, 4.0)
    h_star = w_hat.mean(axis=0)

    def hindsight_variance(h):
        return np.mean(np.sum((w_hat - h) ** 2, axis=1))

    gap = hindsight_variance(m) - hindsight_variance(h_star)
    assert gap > 0
    np.testing.assert_allclose(gap, np.sum((h_star - m) ** 2), rtol=1e-9)
    for u in np.random.default_rng(0).normal(size=(5, SIZE.dim)) * 0.01:
        assert hindsight_variance(h_star + u) > hindsight_variance(h_star)


def _exact_lae(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """min_w sum_i |y_i - <x_i, w>| per task, by scipy's linear programming."""
    from scipy.optimize import linprog

    values = []
    for xt, yt in zip(x, y):
        n, d = xt.shape  # variables: w (free), r (n, >= 0); |y - X w| <= r
        cost = np.concatenate([np.zeros(d), np.ones(n)])
        a_ub = np.block([[xt, -np.eye(n)], [-xt, -np.eye(n)]])
        b_ub = np.concatenate([yt, -yt])
        bounds = [(None, None)] * d + [(0, None)] * n
        values.append(linprog(cost, A_ub=a_ub, b_ub=b_ub, bounds=bounds).fun)
    return np.asarray(values)


def test_best_bias_ties_with_the_true_mean_on_the_training_tasks(direct):
    # (d) in the experiment's terms, the data support a tie, not "at least as good": h* is
    # optimal for the hindsight variance (above), not for the online learner's own error.
    # Online errors on the training tasks, Best-bias minus Oracle (mean over seeds):
    #   here (40 tasks, 4 seeds) at r = 1/64, 1/16, 1, 256: -0.010 -0.010 -0.008 -0.016;
    #   full size (400 tasks, 5 seeds; var.sweep_variance with den.SyntheticSize(), x64) at
    #   r = 1/64 .. 256: +0.0012 +0.0011 +0.0008 +0.0007 +0.0011 +0.0005 +0.0002 +0.0002, and
    #   on held-out points +0.0046 .. +0.0007 (h* estimates m from noisy per-task solutions).
    # So: within 0.005 of the Oracle online; within 0.1 on held-out points (0.048 at 1/64 here).
    best, oracle = direct.finals[var.BEST_BIAS], direct.finals["Oracle"]
    gap = best.cumulative.mean(axis=1) - oracle.cumulative.mean(axis=1)
    assert np.all(gap < 0.005), gap
    assert np.all(best.test.mean(axis=1) < oracle.test.mean(axis=1) + 0.1)
    itl = direct.finals["ITL"].cumulative.mean(axis=1)  # and far from a zero bias when it matters
    assert best.cumulative.mean(axis=1)[0] < itl[0] - 1.0


def test_the_experiment_gives_the_direct_numbers(direct, monkeypatch, tmp_path):
    # run_variance end to end (two methods, two ratios, two seeds): rows, names, figure, and
    # the same numbers as the direct runs; its paper point draws the paper's tasks.
    monkeypatch.setattr(var, "METHODS", ["ITL", var.BEST_BIAS])
    monkeypatch.setattr(var, "QUICK_RATIOS", np.asarray([1 / 16, 256.0]))
    monkeypatch.setattr(var, "QUICK_SIZE", SIZE)
    config = ExperimentConfig("denevi2020-variance", 2, tmp_path, quick=True, x64=True, quiet=True)
    with jax.enable_x64(True):
        result = var.run_variance(config)
        paper = den.synthetic_data(jax.random.key(1), SIZE, jnp.float64)
    # the paper's tasks (params traced here, constants there: equal to rounding)
    want = direct.data.train.y_train[1, 1]
    np.testing.assert_allclose(paper.train.y_train, want, atol=scaled_atol(want))
    rows = {(r.method, r.metric): r for r in result.rows}
    assert {r.dataset for r in result.rows} == {"synthetic"}
    assert set(rows) == {
        (f"{m}@variance={r}", k)
        for m in ("ITL", "Best-bias")
        for r in ("0.0625", "256")
        for k in den.METRICS
    }
    for method in ("ITL", var.BEST_BIAS):
        for r, v in ((1 / 16, 1), (256.0, 3)):
            row = rows[(var.label(method, r), "cumulative_error")]
            assert row.n_seeds == 2
            expected = direct.finals[method].cumulative[v, :2]
            np.testing.assert_allclose(row.mean, expected.mean(), rtol=1e-12)
            curve = result.curves[f"synthetic/{var.label(method, r)}/test_error"]
            np.testing.assert_allclose(curve[:, -1], direct.finals[method].test[v, :2], rtol=1e-12)
    import matplotlib.pyplot as plt

    from ojax.app import files as figures

    assert set(figures.draw_result("denevi2020-variance", result)) == {"synthetic_variance_gain"}
    plt.close("all")
    gains = result.extra_config["gain_over_itl_test_error"]
    assert set(gains) == {var.BEST_BIAS} and gains[var.BEST_BIAS]["mean"][0] > 1.0


def _real_quick(name: str, data_dir, methods: list[str]) -> dict[str, Finals]:
    """The quick protocol of ``ojax run denevi2020-NAME --quick --x64`` (its first 30 tasks, 3
    seeds) for ``methods``, run directly: final values per method, ``(3,)`` each."""
    loader = {"schools": mt_data.load_schools, "lenk": mt_data.load_lenk}[name]
    data = loader(data_dir, np.float64)
    data = mt_data.PooledTasks(data.x[:30], data.y[:30], data.mask[:30], data.num_test[:30])
    with jax.enable_x64(True):
        setting = den.real_setting(data, name, 3, jnp.float64)
        blocks = jax.jit(jax.vmap(lambda s: setting.draw(jax.random.key(s)).train))(jnp.arange(3))
        out = {}
        for method in methods:
            learners = den.method_learners(method, setting.dim)
            params = den.method_params(method, setting.dim, jnp.float64, oracle_bias=None)
            alone = learners.learner is learners.fixed

            def run(tasks, learner=learners.learner, params=params, alone=alone):
                return meta.run_meta(learner, params, tasks, independent_tasks=alone)

            out[method] = _finals(jax.jit(jax.vmap(run))(blocks))
    return out


@pytest.mark.parametrize("name", ["schools", "lenk"])
def test_real_data_meta_learners_below_itl_and_aggressive_below_lazy(name, data_dir):
    # (c) `ojax run denevi2020-NAME --quick --x64` (30 tasks, 3 seeds), final means:
    #   schools  cumulative ITL 13.73, Lazy 12.44, Aggressive 10.70; test 11.89, 11.33, 9.98;
    #            meta-test 11.64, 9.38, 10.16
    #   lenk     cumulative ITL 4.945, Lazy 4.220, Aggressive 2.669; test 4.82, 4.13, 2.60;
    #            meta-test 4.73, 3.38, 2.50
    # At full size (139 tasks, 30 seeds, den.run_methods on real_setting, float64) Schools gives
    # cumulative 13.40 / 10.68 / 10.05, test 11.61 / 10.42 / 9.75 and meta-test 11.54 / 10.15 /
    # 10.35: the paper's ordering holds on its two metrics (on every seed at quick sizes), while
    # on unseen Schools tasks Lazy's bias is the better one (beyond the paper; not asserted).
    got = _real_quick(name, data_dir, ["ITL", "Aggressive", "Lazy"])
    for metric in Finals._fields:
        itl, agg, lazy = (getattr(got[m], metric) for m in ("ITL", "Aggressive", "Lazy"))
        assert np.all(agg < lazy) and np.all(lazy < itl), (metric, itl, lazy, agg)
        assert agg.mean() < itl.mean() - 1.0, (metric, itl, agg)


def test_sweep_variance_bad_input(tmp_path):
    config = ExperimentConfig("denevi2020-variance", 1, tmp_path, quiet=True)
    with pytest.raises(InputError, match="method must be one of .*'Nope'"):
        var.sweep_variance(config, ["ITL", "Nope"], [1.0], SIZE, 1)
    with pytest.raises(InputError, match="ratios"):
        var.sweep_variance(config, ["ITL"], [1.0, 0.0], SIZE, 1)
    assert not any(tmp_path.iterdir())  # nothing ran or was written
