"""Checks of Denevi, Stamos & Pontil (2020) on sequences of tasks: Corollary 4 (a fixed bias),
Theorem 5 (Aggressive, Alg. 4), the Lazy bound (Alg. 5, Appendix D), Theorem 6 (the
statistical multi-task bound), Proposition 7 (online-to-batch) and Lazy's transfer risk on new
tasks (Lazy as a meta-learning method, Section 6).

The right-hand sides are those of :mod:`ojax.theory.denevi` (`B(r, k)`: Prop. 3's bound of the
within-task learner against a comparator at distance `r` from its centre, after `k`
points), summed **per task** as the paper does: Cor. 4 "directly derives from summing over the
datasets the regret bound in Prop. 3", and Thm. 5's term A "coincides with the bound in Eq. 12"
(the same sum, at the bias `theta`), plus the meta learner's own Prop. 3 bound, term B,
against `theta` (evaluated at `theta = m`, the mean of the comparators, the paper's Eq. 16).

**The instance.** The paper's environment (`w_t = 4 * 1 + N(0, I)` in `d = 10`, `x` uniform
on the sphere, absolute loss, `n = 25` online points per task, signal-to-noise ratio 1) makes
every bound vacuous: the non-learner (`w = 0`, `w = h`) stays under them. Each check reports it
there, as its `vacuous:...@paper` rows (the paper's tasks drawn with NumPy from the check's seed,
:func:`paper_tasks`). A bound of order `r sqrt(n log n)` per task only falls below what a
non-learner pays, `n E|<x, u - h>|`, once `n` is in the hundreds (and the label noise small);
the Lazy meta term `n B(||m||, T) / T` only once `T` is too. So the informative instance is
the same environment in `d = 2` (`E|x_1| = 2/pi` on the circle, against about 0.25 in
`d = 10`), with :data:`POINTS` = 300 online points per task, a small label noise (std
:data:`NOISE` = 0.25, against a signal std of about 4) and up to 512 (quick) or 2048 tasks. The
comparators are the true task vectors `u_t = w_t` (every bound holds for every comparator; the
best point in hindsight would only raise the measured regret), the risk `R_t` is estimated on
each task's held-out points.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ojax import meta
from ojax.parameter_free import direction_magnitude
from ojax.theory.base import Check, CheckConfig, Outcome, as_measured
from ojax.theory.denevi import (
    COMMON,
    TASK_MEAN,
    WITHIN,
    check_dtype,
    check_jit,
    powers_of_two,
    precision_context,
    within_bound,
)

DIM = 2
POINTS = 300  # online points per task
NOISE = 0.25  # std of the label noise
META_METHODS = {"Aggressive_KT": "aggressive", "Lazy_KT": "lazy"}


class Tasks(NamedTuple):
    """The tasks of every seed (leaves `(S, T, ...)`) and what the checks need of them."""

    block: meta.TaskBlock
    vectors: np.ndarray  # (S, T, d) the true task vectors: the comparators, the risk minimizers
    noise_loss: np.ndarray  # (S, T) sum_i |y_i - <x_i, w_t>| on the online points
    noise_risk: np.ndarray  # (S, T) the same mean on the held-out points: R_t(w_t)
    horizons: np.ndarray  # numbers of tasks


@functools.cache
def _draw(num_tasks: int, held_out: int, dtype: Any):
    def draw(key: jax.Array):
        k_w, k_x, k_e = jax.random.split(key, 3)
        w = TASK_MEAN + jax.random.normal(k_w, (num_tasks, DIM), dtype)
        x = jax.random.normal(k_x, (num_tasks, POINTS + held_out, DIM), dtype)
        x = x / jnp.linalg.norm(x, axis=-1, keepdims=True)
        noise = NOISE * jax.random.normal(k_e, x.shape[:2], dtype)
        y = jnp.einsum("tnd,td->tn", x, w) + noise
        mask = jnp.ones(x.shape[:2], bool)
        block = meta.TaskBlock(
            x[:, :POINTS], y[:, :POINTS], mask[:, :POINTS],
            x[:, POINTS:], y[:, POINTS:], mask[:, POINTS:],
        )  # fmt: skip
        return block, w, jnp.abs(noise)

    return check_jit(jax.vmap(draw))


@functools.lru_cache(maxsize=4)
def tasks(config: CheckConfig, stream: int = 0) -> Tasks:
    """The instance of the module docstring, one block of tasks per seed; `stream` 1 draws
    other tasks of the same environment (the new tasks of the transfer risk)."""
    horizons = powers_of_two(2, 9 if config.quick else 11)
    held_out = 50 if config.quick else 100
    with precision_context(config):
        key = jax.random.key(config.seed)
        if stream:
            key = jax.random.fold_in(key, stream)
        keys = jax.random.split(key, config.num_seeds)
        block, w, noise = _draw(int(horizons[-1]), held_out, check_dtype(config))(keys)
    noise = np.asarray(noise, np.float64)
    return Tasks(
        block,
        np.asarray(w, np.float64),
        noise[..., :POINTS].sum(-1),
        noise[..., POINTS:].mean(-1),
        horizons,
    )


@functools.cache
def _runner(method: str):
    dm = direction_magnitude("kt")
    if method in META_METHODS:
        make = meta.aggressive if META_METHODS[method] == "aggressive" else meta.lazy
        learner, independent = make(DIM, dm, dm), False
    else:
        learner, independent = meta.biased_within_task(DIM, dm), True

    def one(params: Any, block: meta.TaskBlock):
        trace = meta.run_meta(learner, params, block, task_sums=True, independent_tasks=independent)
        return trace.loss, trace.task.test_error, meta.bias_path(learner, params, trace)[:-1]

    return check_jit(jax.vmap(one, in_axes=(None, 0)))


class Run(NamedTuple):
    """A learner's run on :func:`tasks`: per seed and task, its online loss sum, the held-out
    error of its averaged iterate `w_bar_t`, and the bias it starts the task with."""

    online: np.ndarray  # (S, T)
    test: np.ndarray  # (S, T)
    start: np.ndarray  # (S, T, d)


@functools.lru_cache(maxsize=8)
def run(config: CheckConfig, method: str) -> Run:
    """A KT meta-learner (`"Aggressive_KT"`, `"Lazy_KT"`) or a fixed bias (`"ITL"`: 0,
    `"Oracle"`: the true mean `4 * 1`) on the tasks of every seed."""
    data, dtype = tasks(config), check_dtype(config)
    with precision_context(config):
        if method in META_METHODS:
            params: Any = meta.MetaParams.paper(dtype=dtype)
        else:
            bias = jnp.full(DIM, 0.0 if method == "ITL" else TASK_MEAN, dtype)
            params = meta.FixedBiasParams.paper(bias, dtype=dtype)
        online, test, start = _runner(method if method in META_METHODS else "fixed")(
            params, data.block
        )
    return Run(*(np.asarray(a, np.float64) for a in (online, test, start)))


def constant_losses(data: Tasks, point: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The online loss sums `(S, T)` and the held-out errors `(S, T)` of the constant
    predictor `w_t = point` (`(d,)` or `(S, T, d)`)."""
    point = np.broadcast_to(point, data.vectors.shape)
    b = data.block
    online = np.abs(np.asarray(b.y_train) - np.einsum("stnd,std->stn", b.x_train, point))
    test = np.abs(np.asarray(b.y_test) - np.einsum("stnd,std->stn", b.x_test, point))
    return online.sum(-1), test.mean(-1)


def running_average(values: np.ndarray, horizons: np.ndarray) -> np.ndarray:
    """`(1/T) sum_{t <= T} values_t` at each horizon: `(S, T_max)` -> `(S, H)`."""
    tasks_so_far = np.arange(1, values.shape[-1] + 1)
    return (np.cumsum(values, axis=-1) / tasks_so_far)[:, horizons - 1]


def fixed_bound(
    points: np.ndarray, centre: np.ndarray, horizons: np.ndarray, n: int = POINTS
) -> np.ndarray:
    """Cor. 4 per task: `(1/T) sum_{t <= T} B(||u_t - h||, n)` at each horizon."""
    return running_average(within_bound(np.linalg.norm(points - centre, axis=-1), n), horizons)


def meta_bound(points: np.ndarray, mode: str, horizons: np.ndarray, n: int = POINTS) -> np.ndarray:
    """Thm. 5 (`"aggressive"`) or the Lazy bound on the average across-tasks regret
    `(1/T) sum_t sum_i [l(w_ti) - l(u_t)]` against `points` `(S, T, d)`, at each horizon
    `T` with `theta = m_T = mean(u_1..u_T)`:
    `(1/T) [sum_{t <= T} B(||u_t - m_T||, n) + meta]`, `meta = B(||m_T||, n T)`
    (Aggressive: one learner over all `n T` points) or `n B(||m_T||, T)` (Lazy: `T`
    steps on the task's mean gradient, each weighing `n` points)."""
    out = np.empty((points.shape[0], len(horizons)))
    for j, t in enumerate(horizons):
        first = points[:, :t]
        centre = first.mean(axis=1, keepdims=True)
        inner = within_bound(np.linalg.norm(first - centre, axis=-1), n).sum(axis=1)
        norm = np.linalg.norm(centre[:, 0], axis=-1)
        if mode == "aggressive":
            outer = within_bound(norm, n * t)
        else:
            outer = n * within_bound(norm, t)
        out[:, j] = (inner + outer) / t
    return out


# ---------------------------------------------------------------- the paper's own instance

PAPER_DIM, PAPER_POINTS = 10, 25  # the paper's synthetic environment: d, online points per task
PAPER = f"@paper (d={PAPER_DIM}, n={PAPER_POINTS}, SNR 1)"


class PaperTasks(NamedTuple):
    """The paper's environment (Section 7): `(S, T, ...)` NumPy arrays, float64."""

    vectors: np.ndarray  # (S, T, d) the task vectors w_t = 4 * 1 + N(0, I)
    x_train: np.ndarray  # (S, T, n, d) on the unit sphere
    y_train: np.ndarray  # (S, T, n)
    x_test: np.ndarray  # (S, T, n, d)
    y_test: np.ndarray  # (S, T, n)
    noise_loss: np.ndarray  # (S, T) sum_i |y_i - <x_i, w_t>| on the online points
    noise_risk: np.ndarray  # (S, T) the same mean on the held-out points


@functools.lru_cache(maxsize=2)
def paper_tasks(config: CheckConfig, num_tasks: int) -> PaperTasks:
    """The paper's synthetic environment, drawn with NumPy from the check's seed: `w_t = 4 * 1
    + N(0, I_10)`, 50 points per task on the unit sphere, label noise scaled per task to a
    signal-to-noise ratio of 1 (the spec's `s = sqrt(var(clean) / var(e))`), 25 online and 25
    held-out points."""
    rng = np.random.default_rng([config.seed, 7])
    shape = (config.num_seeds, num_tasks)
    w = TASK_MEAN + rng.normal(size=(*shape, PAPER_DIM))
    x = rng.normal(size=(*shape, 2 * PAPER_POINTS, PAPER_DIM))
    x /= np.linalg.norm(x, axis=-1, keepdims=True)
    clean = np.einsum("stnd,std->stn", x, w)
    e = rng.normal(size=clean.shape)
    noise = np.sqrt(clean.var(axis=-1, keepdims=True) / e.var(axis=-1, keepdims=True)) * e
    y = clean + noise
    n = PAPER_POINTS
    return PaperTasks(
        w, x[..., :n, :], y[..., :n], x[..., n:, :], y[..., n:],
        np.abs(noise[..., :n]).sum(-1), np.abs(noise[..., n:]).mean(-1),
    )  # fmt: skip


def paper_constant(data: PaperTasks, point: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The online regret sums `(S, T)` (against `u_t = w_t`) and held-out excess errors of the
    constant predictor `w = point` on the paper's tasks."""
    online = np.abs(data.y_train - data.x_train @ point).sum(-1) - data.noise_loss
    test = np.abs(data.y_test - data.x_test @ point).mean(-1) - data.noise_risk
    return online, test


def _paper(config: CheckConfig, horizons: np.ndarray) -> PaperTasks:
    return paper_tasks(config, int(horizons[-1]))


# ---------------------------------------------------------------- the checks' computations


def _cor4(config: CheckConfig) -> Outcome:
    data = tasks(config)
    paper = _paper(config, data.horizons)
    methods = {}
    for method, centre in (("ITL", 0.0), ("Oracle", TASK_MEAN)):
        h = np.full(DIM, centre)
        bound = fixed_bound(data.vectors, h, data.horizons)
        regret = running_average(run(config, method).online - data.noise_loss, data.horizons)
        methods[f"{method} (KT)"] = as_measured(regret, bound)
        still, _ = constant_losses(data, h)
        methods[f"falsifier:w=h={centre:g}"] = as_measured(
            running_average(still - data.noise_loss, data.horizons), bound
        )
        h = np.full(PAPER_DIM, centre)
        online, _ = paper_constant(paper, h)
        methods[f"vacuous:w=h={centre:g}{PAPER}"] = as_measured(
            running_average(online, data.horizons),
            fixed_bound(paper.vectors, h, data.horizons, PAPER_POINTS),
        )
    return Outcome(data.horizons.astype(np.float64), methods)


def _meta_check(mode: str):
    def compute(config: CheckConfig) -> Outcome:
        data = tasks(config)
        method = [k for k, v in META_METHODS.items() if v == mode][0]
        bound = meta_bound(data.vectors, mode, data.horizons)
        regret = running_average(run(config, method).online - data.noise_loss, data.horizons)
        still, _ = constant_losses(data, np.zeros(DIM))
        paper = _paper(config, data.horizons)
        online, _ = paper_constant(paper, np.zeros(PAPER_DIM))
        methods = {
            method: as_measured(regret, bound),
            "falsifier:w=0": as_measured(
                running_average(still - data.noise_loss, data.horizons), bound
            ),
            f"vacuous:w=0{PAPER}": as_measured(
                running_average(online, data.horizons),
                meta_bound(paper.vectors, mode, data.horizons, PAPER_POINTS),
            ),
        }
        return Outcome(data.horizons.astype(np.float64), methods)

    return compute


def _excess(data: Tasks, test: np.ndarray) -> np.ndarray:
    """`(1/T) sum_{t <= T} [R_t(w) - R_t(w_t)]` at each horizon, from held-out errors."""
    return running_average(test - data.noise_risk, data.horizons)


def _paper_excess(config: CheckConfig, horizons: np.ndarray, mode: str) -> Any:
    """`w = 0`'s excess risk on the paper's tasks against `mode`'s bound / n there."""
    paper = _paper(config, horizons)
    _, test = paper_constant(paper, np.zeros(PAPER_DIM))
    bound = meta_bound(paper.vectors, mode, horizons, PAPER_POINTS) / PAPER_POINTS
    return as_measured(running_average(test, horizons), bound)


def _thm6(config: CheckConfig) -> Outcome:
    data = tasks(config)
    _, zero = constant_losses(data, np.zeros(DIM))
    methods = {}
    for method, mode in META_METHODS.items():
        bound = meta_bound(data.vectors, mode, data.horizons) / POINTS
        methods[method] = as_measured(_excess(data, run(config, method).test), bound)
        methods[f"falsifier:w=0 ({method}'s bound)"] = as_measured(_excess(data, zero), bound)
        methods[f"vacuous:w=0{PAPER} ({method}'s bound)"] = _paper_excess(
            config, data.horizons, mode
        )
    return Outcome(data.horizons.astype(np.float64), methods)


@functools.cache
def _transfer_runner():
    learner = meta.biased_within_task(DIM, direction_magnitude("kt"))

    def one(params: Any, bias: jax.Array, block: meta.TaskBlock) -> jax.Array:
        """The held-out error of `w_bar` on one task learned from `bias`."""
        trace = meta.run_meta(
            learner, params._replace(bias=bias), block, task_sums=True, independent_tasks=True
        )
        return trace.task.test_error[0]

    over_tasks = jax.vmap(one, in_axes=(None, 0, 0))
    return check_jit(jax.vmap(over_tasks, in_axes=(None, 0, 0)))


def _lazy_transfer(config: CheckConfig) -> Outcome:
    """Lazy's bias `theta_t` (learned on tasks `1..t-1` of the training stream, frozen during
    task `t`) run on task `t` of a second, independent stream of the same environment: the
    mean over `t <= T` of its excess risk there estimates the mean transfer risk of `theta_1
    .. theta_T` on new tasks."""
    data, fresh = tasks(config), tasks(config, 1)
    biases = run(config, "Lazy_KT").start  # (S, T, d)
    with precision_context(config):
        dtype = check_dtype(config)
        params = meta.FixedBiasParams.paper(jnp.zeros(DIM, dtype), dtype=dtype)
        one_task = jax.tree.map(lambda a: a[:, :, None], fresh.block)  # (S, T, 1, ...)
        test = _transfer_runner()(params, jnp.asarray(biases, dtype), one_task)
    bound = meta_bound(data.vectors, "lazy", data.horizons) / POINTS
    _, zero = constant_losses(fresh, np.zeros(DIM))
    methods = {
        "Lazy_KT (bias theta_t, new task t)": as_measured(
            _excess(fresh, np.asarray(test, np.float64)), bound
        ),
        "falsifier:w=0 on the new tasks": as_measured(_excess(fresh, zero), bound),
        f"vacuous:w=0{PAPER}": _paper_excess(config, data.horizons, "lazy"),
    }
    return Outcome(data.horizons.astype(np.float64), methods)


def _prop7(config: CheckConfig) -> Outcome:
    data = tasks(config)
    methods = {}
    for method in META_METHODS:
        result = run(config, method)
        bound = running_average(result.online - data.noise_loss, data.horizons) / POINTS
        methods[method] = as_measured(_excess(data, result.test), bound)
        _, first = constant_losses(data, result.start)
        methods[f"falsifier:first-iterate ({method})"] = as_measured(_excess(data, first), bound)
    return Outcome(data.horizons.astype(np.float64), methods)


_INSTANCE = (
    "the paper's environment (w_t = 4 * 1 + N(0, I), x uniform on the sphere, absolute loss) "
    "in d = 2 with n = 300 online points per task and label noise std 0.25, up to 512 "
    "(quick) / 2048 tasks (seeds); comparators u_t = w_t, the true task vectors"
)
_WHY = (
    " This instance and not the paper's (d = 10, n = 25, SNR 1): there the non-learner stays "
    "under every bound (its rows `vacuous:...@paper`, the same tasks drawn from the check's "
    "seed); the bounds are of order r sqrt(n log n) per task and only fall below what a "
    "non-learner pays, about n E|<x, u>|, with n in the hundreds and little noise."
)

CHECKS: tuple[Check, ...] = (
    Check(
        name="denevi-cor4",
        document="denevi2020",
        result="Corollary 4",
        statement=(
            "a fixed bias h over T tasks of n points: (1/T) sum_t Regret_n(u_t) <= L R (1/T) "
            f"sum_t B(||u_t - h||, n), {WITHIN}"
        ),
        instance=_INSTANCE + "; ITL (h = 0) and the Oracle (h = 4 * 1)",
        kind="bound",
        horizon="T (tasks)",
        compute=_cor4,
        falsifier=(
            "for each bias h, w = h at every point (no within-task learning): it pays about "
            "n (2/pi) ||u_t - h|| per task, above the per-task bound at n = 300"
        ),
        note=(
            f"{COMMON} Prop. 3 summed over the tasks (the corollary's proof), per task: the "
            "tighter form (the root-mean-square Var_h form follows by Jensen, B(sqrt(s), n) "
            "being concave in s)." + _WHY
        ),
        shares="denevi-tasks",
    ),
    Check(
        name="denevi-thm5",
        document="denevi2020",
        result="Theorem 5",
        statement=(
            "Aggressive (Alg. 4, KT in both roles), for every theta: (1/T) sum_t sum_i "
            "[l(w_ti) - l(u_t)] <= L R (1/T) [sum_t B(||u_t - theta||, n) + B(||theta||, n T)] "
            f"(terms A and B), at theta = m = (1/T) sum_t u_t; {WITHIN}"
        ),
        instance=_INSTANCE,
        kind="bound",
        horizon="T (tasks)",
        compute=_meta_check("aggressive"),
        falsifier="w = 0 (no learning at all): it pays about n (2/pi) ||u_t|| per task",
        note=(
            f"{COMMON} Assembled along the paper's proof: w = theta + u splits the linearised "
            "regret into four regrets (within-task magnitudes and directions, meta magnitudes "
            "and directions), bounded by Props. 1 and 2: the within-task ones against u_t - "
            "theta give term A, the meta ones against theta over all n T gradients term B." + _WHY
        ),
        shares="denevi-tasks",
    ),
    Check(
        name="denevi-lazy",
        document="denevi2020",
        result="Lazy bound (Appendix D)",
        statement=(
            "Lazy (Alg. 5, KT in both roles): (1/T) sum_t sum_i [l(w_ti) - l(u_t)] <= L R (1/T) "
            "[sum_t B(||u_t - m||, n) + n B(||m||, T)], m as in Theorem 5"
        ),
        instance=_INSTANCE,
        kind="bound",
        horizon="T (tasks)",
        compute=_meta_check("lazy"),
        falsifier="w = 0 (no learning at all), as for Theorem 5",
        note=(
            f"{COMMON} The meta learner takes T steps on the tasks' mean gradients (norm <= "
            "L R), each weighing n points: n times its Prop. 3 bound. Meta term O(||m|| / "
            "sqrt(T)) per point against Aggressive's O(||m|| / sqrt(n T)) (the paper's "
            "'standard rates' against 'faster rates'). That term keeps the bound above what "
            "w = 0 pays until T is past about 200 at n = 300: the horizons run to 512 tasks "
            "(quick) / 2048." + _WHY
        ),
        shares="denevi-tasks",
    ),
    Check(
        name="denevi-thm6",
        document="denevi2020",
        result="Theorem 6",
        statement=(
            "statistical multi-task bound: E (1/T) sum_t [R_t(w_bar_t) - R_t(w_t)] <= (the "
            "bound of Theorem 5 (Aggressive), or of Lazy, at u_t = w_t) / n, w_bar_t the mean "
            "of the task's iterates"
        ),
        instance=_INSTANCE + "; R_t estimated on 50 (quick) / 100 held-out points per task",
        kind="bound",
        horizon="T (tasks)",
        compute=_thm6,
        falsifier=(
            "the estimator w = 0 (no learning), against each learner's bound: its excess risk "
            "is about (2/pi) ||w_t|| per task"
        ),
        note=(
            f"{COMMON} The paper: 'The desired statement derives from applying on the right "
            "side of Prop. 7 the across-tasks regret bound in Thm. 5 specified to the "
            "sequence of target vectors'. The bound holds in expectation; it is compared per "
            "seed." + _WHY
        ),
        shares="denevi-tasks",
    ),
    Check(
        name="denevi-prop7",
        document="denevi2020",
        result="Proposition 7",
        statement=(
            "online-to-batch: E (1/T) sum_t [R_t(w_bar_t) - R_t(w_t)] <= E (1/(n T)) sum_t "
            "sum_i [l_ti(w_ti) - l_ti(w_t)], the learner's own across-tasks regret / n"
        ),
        instance=_INSTANCE + "; R_t estimated on 50 (quick) / 100 held-out points per task",
        kind="bound",
        horizon="T (tasks)",
        compute=_prop7,
        falsifier=(
            "the first iterate of each task (w_t1 = theta_t, the bias the task starts from) as "
            "the estimator in place of the average of the iterates, against the same run's "
            "regret / n: no online-to-batch conversion, an excess risk of about (2/pi) "
            "||w_t - theta_t||"
        ),
        note=(
            f"{COMMON} Jensen (R_t(w_bar) <= mean_i R_t(w_ti)) and the online order (each w_ti "
            "sees only earlier points, so E l_ti(w_ti) = E R_t(w_ti)); the paper says it applies "
            "to the Lazy variant too. An expectation bound, compared per seed." + _WHY
        ),
        shares="denevi-tasks",
    ),
    Check(
        name="denevi-lazy-transfer",
        document="denevi2020",
        result="Lazy as a meta-learning method (Section 6; Appendix D)",
        statement=(
            "tasks i.i.d. from an environment: the mean over t <= T of the transfer risk of "
            "Lazy's bias theta_t on a new task, E_mu E_Z [R_mu(w_bar(theta_t, Z)) - R_mu(w_mu)], "
            "<= E (1/(n T)) [sum_t B(||w_t - m||, n) + n B(||m||, T)] (the Lazy bound at u_t = "
            "w_t, over n)"
        ),
        instance=_INSTANCE + "; theta_t learned by Lazy_KT on the training tasks 1..t-1 and "
        "frozen during task t, run by the within-task learner (KT) on task t of a second, "
        "independent stream of the environment; R estimated on 50 (quick) / 100 held-out "
        "points per new task",
        kind="bound",
        horizon="T (training tasks)",
        compute=_lazy_transfer,
        falsifier=(
            "the estimator w = 0 on the new tasks (no learning): its excess risk is about "
            "(2/pi) ||w_t|| per task"
        ),
        note=(
            f"{COMMON} The statement's display (Appendix D) is not in the text; the text: the "
            "online-to-batch Prop. 7 'applies also to the lazy variant ... into a statistical "
            "(sub-optimal) meta-learning method', while the aggressive variant could not be "
            "converted. Assembled here: Lazy freezes theta_t during task t, so theta_t is "
            "independent of task t and its transfer risk on a new task has the same expectation "
            "as its excess risk on task t, which Prop. 7 and the Lazy bound bound. Measured on "
            "new tasks: task t of an independent stream, one per bias, whose mean over t "
            "estimates the mean transfer risk. An expectation bound, compared per seed." + _WHY
        ),
        shares="denevi-tasks",
    ),
)


__all__ = [
    "CHECKS",
    "DIM",
    "META_METHODS",
    "NOISE",
    "PAPER",
    "POINTS",
    "PaperTasks",
    "Run",
    "Tasks",
    "constant_losses",
    "fixed_bound",
    "meta_bound",
    "paper_constant",
    "paper_tasks",
    "run",
    "running_average",
    "tasks",
]
