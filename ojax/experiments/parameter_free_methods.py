"""The methods, sizes, streams and sweeps of `parameter-free-benchmark`
(:mod:`ojax.experiments.parameter_free_benchmark`): :data:`METHODS` with each hidden constant
and its grid, the classification and regression streams, and one sweep per method and loss.

A method is a row of :data:`METHODS` (read when a run starts: a row added to it runs) or a
registered OCO learner (:data:`ojax.core.LEARNERS`: one of ojax's, a plugin's, or one a script
or `ojax run --import` registered): :func:`method_spec` makes it a parameter-free method whose
hidden constant is the first scalar field its `params_grid` varies, swept over :data:`SPAN`
times its default (9 values, 8 decades)."""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ojax import losses, oco, parameter_free
from ojax.adapters import linear_predictor
from ojax.core import OCOLearner
from ojax.datasets import data_file, transfer
from ojax.runner import run
from ojax.sweep import stacked, sweep_experiment
from ojax.sweep.experiment import ExperimentConfig
from ojax.validation import InputError, check_choice, check_int

CLASSIFICATION = ("a1a", "spambase", "mushrooms", "usenet2")
CLASSIFICATION_LOSSES = ("logistic", "hinge")
REGRESSION_LOSSES = ("square", "absolute")
NORMS = 10.0 ** np.arange(-2.0, 2.5, 0.5)  # ||u||: 1e-2 .. 1e2
REGRESSION_DIM = 10
REGRESSION_STEPS = 1000
WEALTH = 10.0 ** np.arange(-4.0, 5.0)  # 1e-4 .. 1e4
DISTANCE = 10.0 ** np.arange(-8.0, 1.0)  # 1e-8 .. 1
STEPS = 10.0 ** (np.arange(20) / 3.0 - 4.0)  # the baselines' 20 steps, 1e-4 .. 215 (10x: 3 apart)
DATA_FILES = ("a1a.libsvm.gz", "spambase.csv.gz", "mushrooms_keel.csv.gz", "usenet2.mat")


class Method(NamedTuple):
    """A benchmarked learner: its factory, the name of its hidden constant, the grid of it,
    the default, `params(constant, dtype)`, and whether the factory takes the dimension."""

    make: Any  # () -> OCOLearner, or (dim) -> OCOLearner when `by_dim` (static)
    constant: str
    grid: np.ndarray
    default: float | None  # None: tuned in hindsight over the grid (a baseline)
    params: Any  # (constant: Array, dtype) -> params
    by_dim: bool = False


def _dm(c, dtype):
    return parameter_free.DirectionMagnitudeParams(c, jnp.ones((), dtype))


def _coin(c, dtype):
    return parameter_free.CoinBettingParams(c, jnp.ones((), dtype))


def _mechanic(c, dtype):
    base = oco.OGDParams(jnp.ones((), dtype), jnp.ones((), dtype))  # base step 1, no projection
    return parameter_free.MechanicParams.default(base, dtype)._replace(s_init=c)


METHODS: dict[str, Method] = {
    "KT": Method(
        lambda: parameter_free.direction_magnitude("kt"), "initial_wealth", WEALTH, 1.0, _dm
    ),
    "ONS": Method(
        lambda: parameter_free.direction_magnitude("ons"), "initial_wealth", WEALTH, 1.0, _dm
    ),
    "KT-coordinate": Method(
        lambda: parameter_free.coin_betting("kt"), "initial_wealth", WEALTH, 1.0, _coin
    ),
    "COCOB": Method(
        parameter_free.cocob,
        "alpha",
        10.0 ** np.arange(-2.0, 7.0),
        100.0,
        lambda c, dt: parameter_free.CocobParams(c),
    ),
    "DoG": Method(
        parameter_free.dog,
        "initial_distance",
        DISTANCE,
        1e-4,
        lambda c, dt: parameter_free.DoGParams(c),
    ),
    "Prodigy": Method(
        parameter_free.prodigy,
        "initial_d",
        DISTANCE,
        1e-6,
        lambda c, dt: parameter_free.ProdigyParams.default(dt)._replace(initial_d=c),
    ),
    "D-Adapt-SGD": Method(
        parameter_free.dadapt_sgd,
        "initial_d",
        DISTANCE,
        1e-6,
        lambda c, dt: parameter_free.DAdaptParams(c, jnp.ones((), dt)),
    ),
    "Mechanic": Method(
        lambda: parameter_free.mechanic(oco.ogd("none")), "s_init", DISTANCE, 1e-8, _mechanic
    ),
    "Schedule-Free-SGD": Method(
        parameter_free.schedule_free_sgd,
        "learning_rate",
        0.5 * 10.0 ** np.arange(-4.0, 5.0),
        0.5,
        lambda c, dt: parameter_free.ScheduleFreeParams.default(dt)._replace(learning_rate=c),
    ),
    "OGD": Method(
        lambda: oco.ogd("none"),
        "learning_rate",
        STEPS,
        None,
        lambda c, dt: oco.OGDParams(c, jnp.ones((), dt)),
    ),
    "AdaGrad": Method(
        lambda: oco.adagrad("none"),
        "learning_rate",
        STEPS,
        None,
        lambda c, dt: oco.AdaGradParams(c, jnp.zeros((), dt), jnp.ones((), dt)),
    ),
}
"""The benchmarked learners (the parameter-free ones first, then the tuned baselines)."""

PARAMETER_FREE = tuple(name for name, m in METHODS.items() if m.default is not None)
BASELINES = tuple(name for name, m in METHODS.items() if m.default is None)
SPAN = 10.0 ** np.arange(-4.0, 5.0)
"""A registered learner's grid: its constant's default times these (1e-4 .. 1e4)."""


def _registered(name: str) -> Method:
    """A registered OCO learner as a parameter-free method (the module's docstring)."""
    from ojax.core import LEARNERS

    entry = LEARNERS[name]
    if entry.kind != "oco":
        raise InputError(
            f"method {name!r} is a {entry.kind} learner; the benchmark runs OCO learners (as "
            "linear predictors)"
        )
    base, grid = entry.default_params(), entry.params_grid()
    fields = base._asdict() if hasattr(base, "_asdict") else dict(base)
    rows = grid._asdict() if hasattr(grid, "_asdict") else dict(grid)
    varied = [f for f, v in fields.items() if np.ndim(v) == 0 and np.ptp(np.asarray(rows[f]))]
    if not varied or not float(fields[varied[0]]) > 0:
        raise InputError(
            f"method {name!r}: the benchmark sweeps the first scalar field its params_grid varies "
            f"(its hidden constant, > 0 by default), found {varied or 'none'}"
        )
    field, default = varied[0], float(fields[varied[0]])

    def params(constant, dtype):  # the defaults in `dtype`, the constant replaced
        floats = {
            k: jnp.asarray(v, dtype)
            for k, v in fields.items()
            if jnp.isdtype(jnp.result_type(v), "real floating")
        }
        values = {**fields, **floats, field: constant}
        return base._replace(**values) if hasattr(base, "_replace") else values

    learner, dtype = entry.make(REGRESSION_DIM), jnp.result_type(float)
    for value in default * SPAN:
        try:
            learner.check_params(params(jnp.asarray(value, dtype), dtype))
        except InputError as exc:
            raise InputError(
                f"method {name!r}: the benchmark sweeps {field} over {default:g} x 1e-4 .. 1e4; "
                f"{field}={value:g} is refused: {exc}"
            ) from None
    return Method(entry.make, field, default * SPAN, default, params, by_dim=True)


def method_spec(name: str) -> Method:
    """The method `name`: its row of :data:`METHODS`, else the registered learner (above)."""
    return METHODS[name] if name in METHODS else _registered(name)


class Size(NamedTuple):
    """What a run covers."""

    datasets: tuple[str, ...]
    classification_losses: tuple[str, ...]
    regression_losses: tuple[str, ...]
    norms: tuple[float, ...]
    max_rows: int | None  # each classification stream cut to its first rows (None: all)
    regression_steps: int
    grid_points: int | None  # a subset of each grid, evenly spread (None: all)


FULL = Size(
    CLASSIFICATION,
    CLASSIFICATION_LOSSES,
    REGRESSION_LOSSES,
    tuple(NORMS),
    None,
    REGRESSION_STEPS,
    None,
)
QUICK = Size(("a1a", "usenet2"), ("logistic",), ("absolute",), tuple(NORMS[::2]), 300, 300, 5)


def label(method: str, constant: float) -> str:
    """A grid point's name in the results: `METHOD@constant=VALUE`."""
    return f"{method}@constant={constant:.3g}"


def classification_name(dataset: str, loss: str) -> str:
    """The dataset column of a classification stream: `DATASET-LOSS`."""
    return f"{dataset}-{loss}"


def regression_name(loss: str, norm: float) -> str:
    """The dataset column of a regression stream: `regression-LOSS-norm=NORM`."""
    return f"regression-{loss}-norm={norm:g}"


def grid_of(method: str, size: Size) -> np.ndarray:
    """The constants a run sweeps for `method` (the default always among them)."""
    spec = method_spec(method)
    grid = np.asarray(spec.grid, np.float64)
    if size.grid_points is None or size.grid_points >= len(grid):
        return grid
    picked = set(np.round(np.linspace(0, len(grid) - 1, size.grid_points)).astype(int).tolist())
    if spec.default is not None:
        picked.add(int(np.argmin(np.abs(np.log(grid / spec.default)))))
    return grid[sorted(picked)]


# ------------------------------------------------------------------------------- data


def _rows(x: Any) -> np.ndarray:
    """Dense float64 rows: columns min-max scaled to [0, 1], a constant 1 appended, each row
    scaled to unit L2 norm."""
    x = np.asarray(x.todense() if hasattr(x, "todense") else x, np.float64)
    x = np.asarray(transfer.minmax_features(x), np.float64)
    x = np.concatenate([x, np.ones((len(x), 1))], axis=1)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def load_classification(name: str, data_dir: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """The rows (see :func:`_rows`) and +-1 labels of a shipped classification dataset."""
    check_choice("dataset", name, CLASSIFICATION)
    if name == "a1a":
        x, y = transfer.load_libsvm(data_file("a1a.libsvm.gz", data_dir), 123)
    else:
        x, y = transfer.load_dataset(name, data_dir)
    return _rows(x), np.asarray(y, np.float64)


class Streams(NamedTuple):
    """Classification datasets stacked as tasks, padded to the longest and widest."""

    xs: Any  # (K, N, d)
    ys: Any  # (K, N)
    length: Any  # (K,) int32: the real number of rows


def stack_classification(size: Size, dtype, data_dir: Any = None) -> Streams:
    """The classification datasets of `size`, padded to one `(datasets, n, d)` block of
    streams."""
    loaded = [load_classification(name, data_dir) for name in size.datasets]
    if size.max_rows is not None:
        loaded = [(x[: size.max_rows], y[: size.max_rows]) for x, y in loaded]
    n = max(len(y) for _, y in loaded)
    d = max(x.shape[1] for x, _ in loaded)
    xs = np.zeros((len(loaded), n, d))
    ys = np.ones((len(loaded), n))
    for k, (x, y) in enumerate(loaded):
        xs[k, : len(y), : x.shape[1]] = x
        ys[k, : len(y)] = y
    lengths = np.asarray([len(y) for _, y in loaded], np.int32)
    return Streams(jnp.asarray(xs, dtype), jnp.asarray(ys, dtype), jnp.asarray(lengths))


LOSSES = {
    "logistic": losses.logistic,
    "hinge": losses.hinge,
    "square": losses.square,
    "absolute": losses.absolute,
}


# ------------------------------------------------------------------------------- cells


def _learner(spec: Method, dim: int) -> OCOLearner:
    return spec.make(dim) if spec.by_dim else spec.make()


@functools.lru_cache(maxsize=64)
def classification_cell(method: str, loss_name: str):
    """`(params, stream, key) -> (average_loss, mistake_rate)` of one learner on one stream
    in the order `key` draws (compiled once per method and loss)."""
    spec, loss = method_spec(method), LOSSES[loss_name]

    def cell(params, stream, key):
        xs, ys, length = stream
        n, learner = xs.shape[0], _learner(spec, xs.shape[1])
        valid = jnp.arange(n) < length
        order = jnp.argsort(jnp.where(valid, jax.random.uniform(key, (n,)), 2.0))
        predictor = linear_predictor(learner, loss, jnp.zeros(xs.shape[1], xs.dtype))
        _, trace = run(predictor, params, xs, ys, loss, order=order, mask=valid)
        count = length.astype(xs.dtype)
        mistakes = jnp.where(valid, trace.prediction * ys[order] <= 0, False)
        return jnp.sum(trace.loss) / count, jnp.sum(mistakes.astype(xs.dtype)) / count

    return cell


def regression_stream(key, norm, num_steps: int, dim: int, dtype):
    """`(xs, ys, u)`: `x_t` uniform on the unit sphere, `u` a random direction of norm
    `norm`, `y_t = <u, x_t>` (noiseless)."""
    k_u, k_x = jax.random.split(key)
    u = jax.random.normal(k_u, (dim,), dtype)
    u = norm * u / jnp.linalg.norm(u)
    xs = jax.random.normal(k_x, (num_steps, dim), dtype)
    xs = xs / jnp.linalg.norm(xs, axis=1, keepdims=True)
    return xs, xs @ u, u


@functools.lru_cache(maxsize=64)
def regression_cell(method: str, loss_name: str, num_steps: int, dim: int):
    """`(params, norm, key) -> (average_loss, regret)` on the synthetic stream of `||u|| =
    norm` that `key` draws (the comparator `u` has loss 0: the regret is the learner's
    cumulative loss)."""
    learner, loss = _learner(method_spec(method), dim), LOSSES[loss_name]

    def cell(params, norm, key):
        xs, ys, _ = regression_stream(key, norm, num_steps, dim, norm.dtype)
        predictor = linear_predictor(learner, loss, jnp.zeros(dim, norm.dtype))
        _, trace = run(predictor, params, xs, ys, loss, keep_predictions=False)
        total = jnp.sum(trace.loss)
        return total / num_steps, total

    return cell


def stacked_params(method: str, grid: np.ndarray, dtype):
    """The method's params at each constant of `grid`, stacked on a leading axis."""
    spec = method_spec(method)
    points = [spec.params(jnp.asarray(c, dtype), dtype) for c in grid]
    return jax.tree.map(lambda *a: jnp.stack(a), *points)


class Sweep(NamedTuple):
    """One method's outputs: name -> dataset -> metric -> `(S, C)` (seed, constant), with
    its grid's constant and default (`None`: a baseline, tuned in hindsight)."""

    grid: np.ndarray
    outputs: dict[str, dict[str, np.ndarray]]
    compile_seconds: float
    constant: str
    default: float | None


def sweep_method(
    config: ExperimentConfig, method: str, size: Size, streams: Streams | None
) -> Sweep:
    """Runs `method` over its grid on every dataset, loss and seed of `size`."""
    dtype = jnp.float64 if config.x64 else jnp.float32
    grid = grid_of(method, size)
    params = stacked(stacked_params(method, grid, dtype), "constant")
    settings = {"size": size._asdict(), "grid": grid.tolist(), "method": method}
    outputs: dict[str, dict[str, np.ndarray]] = {}
    compile_s = 0.0
    tasks = () if streams is None else tuple(streams)
    for loss in size.classification_losses if tasks else ():
        res = sweep_experiment(
            config,
            classification_cell(method, loss),
            params,
            key=0,
            tasks=tasks,
            name=f"pfb-{method}-{loss}",
            settings={**settings, "loss": loss},
        )
        compile_s += res.stats.compile_seconds
        avg, mistakes = (np.asarray(a, np.float64) for a in res.outputs)  # (S, C, K)
        for k, dataset in enumerate(size.datasets):
            name = classification_name(dataset, loss)
            outputs[name] = {"average_loss": avg[:, :, k], "mistake_rate": mistakes[:, :, k]}
    norms = jnp.asarray(size.norms, dtype)
    for loss in size.regression_losses:
        res = sweep_experiment(
            config,
            regression_cell(method, loss, size.regression_steps, REGRESSION_DIM),
            params,
            key=1,
            tasks=norms,
            name=f"pfb-{method}-{loss}",
            settings={**settings, "loss": loss},
        )
        compile_s += res.stats.compile_seconds
        avg, regret = (np.asarray(a, np.float64) for a in res.outputs)
        for k, norm in enumerate(size.norms):
            name = regression_name(loss, norm)
            outputs[name] = {"average_loss": avg[:, :, k], "regret": regret[:, :, k]}
    spec = method_spec(method)
    return Sweep(grid, outputs, compile_s, spec.constant, spec.default)


def check_methods(methods: Any) -> tuple[str, ...]:
    """`methods` as a tuple of known names: rows of :data:`METHODS` or registered OCO
    learners (raises :class:`InputError` naming the bad one)."""
    from ojax.core import LEARNERS

    if isinstance(methods, str) or not methods:
        raise InputError(
            f"methods must be a non-empty list of names of {list(METHODS)} or of registered OCO "
            f"learners, got {methods!r}"
        )
    for method in methods:
        if method not in METHODS and method not in LEARNERS:
            raise InputError(
                f"method must be one of {list(METHODS)} or a registered OCO learner (`ojax list "
                f"--learners`; one's own with --import or the ojax.learners entry points), got "
                f"{method!r}"
            )
        method_spec(method)  # a registered learner the benchmark cannot run is refused here
    if len(set(methods)) < len(methods):
        raise InputError(f"methods must name each method once, got {list(methods)}")
    return tuple(methods)


def run_sweeps(
    config: ExperimentConfig, size: Size, methods: Any = None
) -> tuple[dict[str, Sweep], float]:
    """Every method of `methods` (default: every row of :data:`METHODS`, read now) on `size`:
    `(method -> Sweep, compile seconds)`."""
    methods = check_methods(tuple(METHODS) if methods is None else methods)
    check_int("seeds", config.seeds, 1)
    for dataset in size.datasets:
        check_choice("dataset", dataset, CLASSIFICATION)
    dtype = jnp.float64 if config.x64 else jnp.float32
    streams = stack_classification(size, dtype, config.data_dir) if size.datasets else None
    sweeps = {
        m: sweep_method(config, m, size, streams) for m in config.progress(methods, "methods")
    }
    return sweeps, sum(s.compile_seconds for s in sweeps.values())


__all__ = [
    "BASELINES",
    "CLASSIFICATION",
    "CLASSIFICATION_LOSSES",
    "DATA_FILES",
    "DISTANCE",
    "FULL",
    "LOSSES",
    "METHODS",
    "Method",
    "NORMS",
    "PARAMETER_FREE",
    "QUICK",
    "REGRESSION_DIM",
    "REGRESSION_LOSSES",
    "REGRESSION_STEPS",
    "SPAN",
    "STEPS",
    "Size",
    "Streams",
    "Sweep",
    "WEALTH",
    "check_methods",
    "classification_cell",
    "classification_name",
    "grid_of",
    "label",
    "load_classification",
    "method_spec",
    "regression_cell",
    "regression_name",
    "regression_stream",
    "run_sweeps",
    "stack_classification",
    "stacked_params",
    "sweep_method",
]
