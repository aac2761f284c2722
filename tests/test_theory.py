"""The documents' results checked numerically (ojax.theory): the soundness mechanism (a bound
that no falsifier breaks fails), `ojax run theory` on the notes' checks, and online mirror
descent against an independent float64 NumPy loop, step by step, for each mirror map."""

from __future__ import annotations

import csv
import json
import threading
import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from tolerances import scaled_atol

from ojax import InputError, losses, oco, run_oco
from ojax.app import cli
from ojax.experiments.theory import CHECKS, VERDICT, selected_checks
from ojax.theory import (
    IDENTITY_TOLERANCE,
    SLOPE_TOLERANCE,
    Check,
    CheckConfig,
    Outcome,
    as_measured,
    fitted_slope,
    role,
    verdict,
    within_bound,
)
from ojax.theory import base as theory_base

QUICK = CheckConfig(quick=True, num_seeds=2, seed=0, x64=True)


@pytest.fixture(scope="module")
def theory_run(tmp_path_factory):
    """``ojax run theory --quick --x64 --dataset notes`` through the CLI entry, once for the
    module: the notes' checks at quick sizes in float64 (2 seeds; the papers' checks are
    computed by tests/test_theory_denevi.py and tests/test_theory_papers.py); returns (folder,
    rows, curves, config)."""
    out = tmp_path_factory.mktemp("theory") / "run"
    argv = ["run", "theory", "--quick", "--x64", "--quiet", "--dataset", "notes"]
    try:
        code = cli.main([*argv, "--out", str(out)])
    finally:
        jax.config.update("jax_enable_x64", False)
    assert code == 0
    with open(out / "results.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    curves = dict(np.load(out / "curves.npz"))
    return out, rows, curves, json.loads((out / "config.json").read_text())


def _methods(rows: list[dict], name: str) -> list[str]:
    return sorted({row["method"] for row in rows if row["dataset"] == name})


NOTES = sorted(name for name, check in CHECKS.items() if check.document == "notes")


@pytest.mark.parametrize("name", NOTES)
def test_check_holds_at_quick_sizes(theory_run, name):
    _, rows, curves, config = theory_run
    check = CHECKS[name]
    horizons = np.asarray(config["checks"][name]["horizons"], np.float64)
    assert horizons.ndim == 1 and len(horizons) >= 3 and np.all(np.diff(horizons) > 0)
    methods = _methods(rows, name)
    learners = [m for m in methods if role(m) == "learner" and m != VERDICT]
    assert learners
    for method in learners:
        measured = curves[f"{name}/{method}/measured"]
        assert np.all(np.isfinite(measured)), method
        if check.kind in ("bound", "shape", "inequality"):
            bound = curves[f"{name}/{method}/bound"]
            assert measured.shape == bound.shape and measured.shape[1] == len(horizons), method
            bad = ~within_bound(measured, bound)
            assert not bad.any(), f"{method}: {measured[bad]} > {bound[bad]}"
            np.testing.assert_allclose(curves[f"{name}/{method}/ratio"], measured / bound)
        elif check.kind == "identity":
            assert measured.shape[1] == 1
            assert np.all(measured <= IDENTITY_TOLERANCE), f"{method}: {measured.max()}"
            assert np.all(curves[f"{name}/{method}/bound"] == IDENTITY_TOLERANCE)
        else:
            assert measured.shape[1] == len(horizons), method
            slope = fitted_slope(horizons, measured)
            assert curves[f"{name}/{method}/slope"][0, 0] == pytest.approx(slope)
            assert check.rate is not None and slope <= check.rate + SLOPE_TOLERANCE, (method, slope)
    assert curves[f"{name}/{VERDICT}/holds"][0, 0] == 1.0


@pytest.mark.parametrize("name", NOTES)
def test_every_bound_is_broken_by_its_falsifier(theory_run, name):
    """The check is sound: each falsifier's (a non-learner's) and variant's ratio at the
    largest horizon exceeds 1 on every seed (a bound that a non-learner satisfies checks
    nothing); a bound has a falsifier, an inequality (no learner) a variant; identities need
    none."""
    _, rows, curves, config = theory_run
    check = CHECKS[name]
    falsifiers = [m for m in _methods(rows, name) if role(m) == "falsifier"]
    variants = [m for m in _methods(rows, name) if role(m) == "variant"]
    assert bool(falsifiers) == (check.kind in ("bound", "shape", "rate")), falsifiers
    assert bool(variants) == bool(check.variant), variants
    for method in falsifiers + variants:
        ratio = curves[f"{name}/{method}/ratio"][:, -1]
        assert np.all(ratio > 1.0), (method, ratio)
    assert curves[f"{name}/{VERDICT}/sound"][0, 0] == 1.0
    for label, found in (("falsifier", falsifiers), ("variant", variants)):
        if found:
            smallest = min(curves[f"{name}/{m}/ratio"][:, -1].min() for m in found)
            assert curves[f"{name}/{VERDICT}/{label}_ratio"][0, 0] == pytest.approx(smallest)
    assert config["checks"][name]["verdict"]["sound"] is True


def _check(kind: str, **fields) -> Check:
    return Check("toy", "notes", "Toy", "m <= b", "toy", kind, "T", lambda c: None, **fields)


def test_run_theory_computes_checks_at_once_in_order_under_the_callers_float64(
    monkeypatch, tmp_path
):
    """`run_theory` computes its checks on threads (`ojax.sweep.in_threads`): the rows come in
    the checks' order, each check computes under the caller's float64 setting (a
    `jax.enable_x64` context, which a thread does not inherit), one thread or four give the same
    rows, and a check that raises stops the run with its error and cancels the checks not
    started."""
    from ojax.experiments import theory
    from ojax.sweep import threads as sweep_threads

    started: list[str] = []

    gate, waited = threading.Event(), []

    def toy(name: str, delay: float = 0.0, fail: bool = False, held: bool = False) -> Check:
        def compute(config: CheckConfig) -> Outcome:
            started.append(name)
            time.sleep(delay)  # the first check finishes last (the rows come in order anyway)
            if held and not gate.wait(timeout=20):  # its thread busy until the gate opens
                waited.append(name)  # the run waited for it instead of raising
            if fail:
                raise RuntimeError(f"{name} broke")
            bits = jnp.zeros(()).dtype.itemsize * 8  # 64 only under the caller's float64
            measured = [[bits * (config.seed % 97) * t for t in (1.0, 2.0, 4.0)]]
            return Outcome(np.array([1.0, 2.0, 4.0]), {"L": as_measured(measured, 1e9)})

        return Check(name, "notes", "Toy", "m <= b", "toy", "bound", "T", compute,
                     falsifier="none")  # fmt: skip

    config = theory.TheoryConfig(name="theory", seeds=1, out=tmp_path, quick=True, quiet=True)
    checks = [toy("toy-a", 0.3), toy("toy-b", 0.0), toy("toy-c", 0.1)]
    monkeypatch.setattr(theory, "selected_checks", lambda value: checks)
    runs = []
    for threads in (1, 4):
        monkeypatch.setattr(sweep_threads, "THREADS", threads)
        with jax.enable_x64(True):
            runs.append(theory.run_theory(config))
    one, four = ([(r.dataset, r.method, r.metric, repr(r.mean)) for r in run.rows] for run in runs)
    assert one == four
    assert [d for d, m, metric, _ in four if metric == "measured"] == ["toy-a", "toy-b", "toy-c"]
    for name, _, metric, mean in four:
        if metric == "measured":
            assert float(mean) == 64 * (theory.check_seed(name) % 97) * 4.0, name
    started.clear()
    monkeypatch.setattr(sweep_threads, "THREADS", 2)
    # two threads: a fails at once, b and c hold the threads, so d and e cannot start before
    # the error cancels them (whatever the machine's speed); the error is raised without
    # waiting for the checks still running
    failing = [toy("toy-a", fail=True), toy("toy-b", held=True), toy("toy-c", held=True)]
    failing += [toy("toy-d"), toy("toy-e")]
    monkeypatch.setattr(theory, "selected_checks", lambda value: failing)
    try:
        with pytest.raises(RuntimeError, match="toy-a broke"):
            theory.run_theory(config)
    finally:
        gate.set()
    for thread in threading.enumerate():  # the checks that were running end on their threads
        if thread.name.startswith("ojax-piece"):
            thread.join(timeout=60)
    assert waited == [] and "toy-a" in started and not {"toy-d", "toy-e"} & set(started)


def test_pieces_that_call_lapack_never_run_at_once():
    """`in_threads(..., lapack=...)`: the pieces marked as calling LAPACK run one at a time
    (two LAPACK programs at once deadlock on the CPU), the others beside them. Each LAPACK
    piece waits for another to enter: marked, a moment (none can: the lock), unmarked, until
    one does (on the other thread: whatever the machine's load, it comes)."""
    from ojax.sweep import in_threads

    inside: list[str] = []
    overlaps: list[tuple[str, str]] = []
    entered = threading.Condition()

    def piece(name: str, wait: float) -> str:
        with entered:
            inside.append(name)
            entered.notify_all()
            others = lambda: [n for n in inside if n != name and n.startswith("lapack")]  # noqa: E731
            if name.startswith("lapack"):  # until another is inside, or one saw this one
                seen = lambda: any(name in pair for pair in overlaps)  # noqa: E731
                entered.wait_for(lambda: others() or seen(), timeout=wait)
                overlaps.extend((name, other) for other in others())
                entered.notify_all()
        with entered:
            inside.remove(name)
        return name

    names = ["lapack-a", "free-b", "lapack-c", "lapack-d"]
    marked = lambda name: name.startswith("lapack")  # noqa: E731
    assert list(in_threads(lambda n: piece(n, 0.5), names, threads=2, lapack=marked)) == names
    assert overlaps == []
    pair = ["lapack-a", "lapack-c"]  # unmarked: at once, and the test sees it
    assert list(in_threads(lambda n: piece(n, 60.0), pair, threads=2)) == pair and overlaps


# Every check at quick size in a fresh process, JAX's lowered modules dumped: the checks whose
# programs call LAPACK kernels.
LAPACK_SCRIPT = """
import os, sys
from pathlib import Path
from ojax.experiments.theory import check_seed, selected_checks
from ojax.theory import CheckConfig

dump = Path(sys.argv[1])
seen = set()
for check in selected_checks(None):
    check.compute(CheckConfig(True, 2, check_seed(check.seed_name), False))
    new = set(dump.rglob("*")) - seen
    seen |= new
    if any("lapack_" in f.read_text(errors="ignore") for f in new if f.is_file()):
        print("LAPACK", check.name)
"""


def test_the_checks_whose_programs_call_lapack_say_so(tmp_path):
    """`ojax run theory` runs the checks marked `lapack` one at a time (two LAPACK programs at
    once deadlock on the CPU: `ojax.sweep.threads.LAPACK`): the marked checks are exactly those
    whose programs call a LAPACK kernel, found from every program the checks lower."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    env = {
        **os.environ,
        "PYTHONPATH": str(root),
        "JAX_PLATFORMS": "cpu",
        "OJAX_PROGRAM_CACHE": "off",
    }
    env["JAX_DUMP_IR_TO"] = str(tmp_path / "dump")  # compiled with the suite's quick flags
    command = [sys.executable, "-c", LAPACK_SCRIPT, str(tmp_path / "dump")]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600, check=True)
    found = {line.split()[1] for line in done.stdout.splitlines() if line.startswith("LAPACK ")}
    assert found, "no check lowered a LAPACK program: the dump was not read"
    assert found == {check.name for check in CHECKS.values() if check.lapack}


def test_verdict_fails_a_vacuous_or_broken_bound():
    horizons = np.array([1.0, 2.0, 4.0])
    bound = np.array([10.0, 10.0, 10.0])
    learner = as_measured([[1.0, 2.0, 3.0]], bound)
    check = _check("bound", falsifier="w = 0")
    sound = Outcome(horizons, {"L": learner, "falsifier:w=0": as_measured([[5, 9, 11.0]], bound)})
    assert verdict(check, sound)[:5] == (True, True, 0.3, 1.1, "")
    vacuous = Outcome(horizons, {"L": learner, "falsifier:w=0": as_measured([[5, 9, 9.0]], bound)})
    decided = verdict(check, vacuous)
    assert decided.holds and not decided.sound and "does not break" in decided.reason
    lonely = verdict(check, Outcome(horizons, {"L": learner}))
    assert not lonely.sound and lonely.reason == "no falsifier"
    broken = Outcome(horizons, {"L": as_measured([[1, 11, 3.0]], bound)})
    assert not verdict(check, broken).holds  # over the bound at one horizon
    # every seed of a falsifier must break it at the largest horizon
    two = as_measured([[5, 9, 11.0], [5, 9, 9.0]], bound)
    assert not verdict(check, Outcome(horizons, {"L": learner, "falsifier:w=0": two})).sound
    # a variant alone does not make a bound sound; it must break it too; vacuous rows are
    # reported, not counted
    wrong = as_measured([[5, 9, 12.0]], bound)
    only_variant = verdict(check, Outcome(horizons, {"L": learner, "variant:no term": wrong}))
    assert not only_variant.sound and only_variant.variant == pytest.approx(1.2)
    both = {"L": learner, "falsifier:w=0": as_measured([[5, 9, 11.0]], bound),
            "variant:no term": as_measured([[1, 1, 1.0]], bound),
            "vacuous:w=0@paper": as_measured([[1, 1, 1.0]], bound)}  # fmt: skip
    decided = verdict(check, Outcome(horizons, both))
    assert not decided.sound and "a variant does not break it" in decided.reason
    del both["variant:no term"]
    assert verdict(check, Outcome(horizons, both)).sound  # the vacuous row is not counted


def test_verdict_of_rates_shapes_and_identities():
    horizons = np.array([10.0, 100.0, 1000.0])
    nan = np.full(3, np.nan)
    rate = _check("rate", rate=-1.0, falsifier="last iterate")
    decaying = as_measured(1.0 / horizons, nan)
    flat = as_measured(np.ones(3), nan)
    assert verdict(rate, Outcome(horizons, {"L": decaying, "falsifier:f": flat})).sound
    assert not verdict(rate, Outcome(horizons, {"L": decaying, "falsifier:f": decaying})).sound
    assert not verdict(rate, Outcome(horizons, {"L": flat, "falsifier:f": flat})).holds
    shape = _check("shape", falsifier="last iterate", constant=2.0)
    form = 3.0 / horizons  # the bound is the stated constant times the form
    methods = {
        "L": as_measured(1.5 * form, 2 * form),
        "falsifier:f": as_measured(np.ones(3), 2 * form),
    }
    ok = verdict(shape, Outcome(horizons, methods))
    assert ok.holds and ok.sound and ok.learner == pytest.approx(0.75)
    methods["L"] = as_measured(2.5 * form, 2 * form)  # over the stated constant
    assert not verdict(shape, Outcome(horizons, methods)).holds
    inequality = _check("inequality", variant="outside the hypothesis")
    under = as_measured([[0.5, 0.9, 1.0]], np.ones(3))
    out = {"f": under, "variant:v": as_measured([[2.0, 2, 2]], np.ones(3))}
    assert verdict(inequality, Outcome(horizons, out)).sound  # no falsifier needed
    assert not verdict(inequality, Outcome(horizons, {"f": under})).sound
    identity = _check("identity")
    exact = as_measured([[1e-12, 1e-13]], np.full(2, IDENTITY_TOLERANCE))
    assert verdict(identity, Outcome(horizons[:2], {"L": exact})).sound  # needs no falsifier
    wrong = as_measured([[1e-3, 1e-3]], np.full(2, IDENTITY_TOLERANCE))
    assert verdict(identity, Outcome(horizons[:2], {"L": exact, "falsifier:f": wrong})).sound
    assert not verdict(identity, Outcome(horizons[:2], {"L": wrong})).holds


def test_a_bound_check_must_name_its_falsifier():
    with pytest.raises(ValueError, match="needs a falsifier"):
        _check("bound")
    with pytest.raises(ValueError, match="needs a falsifier"):
        _check("shape", constant=2.0)
    with pytest.raises(ValueError, match="needs a variant"):
        _check("inequality")
    with pytest.raises(ValueError, match="constant"):
        _check("shape", falsifier="f")  # a shape states its largest ratio
    with pytest.raises(ValueError, match="constant"):
        _check("bound", falsifier="f", constant=2.0)
    assert _check("identity").falsifier == ""


def test_every_registered_check_follows_the_convention():
    assert len(CHECKS) >= 30
    for name, check in CHECKS.items():
        assert check.kind in ("identity", "inequality") or check.falsifier, name
        assert check.kind != "inequality" or check.variant, name
        assert check.statement and check.instance and check.result, name
        assert check.document in theory_base.DOCUMENTS and check.name == name, name


def test_cli_writes_every_selected_check(theory_run):
    out, rows, curves, config = theory_run
    assert {row["dataset"] for row in rows} == set(NOTES) == set(config["checks"])
    assert len(list(out.glob("theory_*.png"))) == len(NOTES)
    for name in NOTES:
        check = CHECKS[name]
        assert (out / f"theory_{name}.png").is_file()
        assert config["checks"][name]["statement"] == check.statement
        assert config["checks"][name]["kind"] == check.kind
        assert config["checks"][name]["falsifier"] == check.falsifier
        assert config["checks"][name]["variant"] == check.variant
        metrics = {
            row["metric"] for row in rows if row["dataset"] == name and row["method"] != VERDICT
        }
        if check.kind == "rate":
            assert {"measured", "slope", "expected_slope"} <= metrics, (name, metrics)
        else:
            assert {"measured", "bound", "ratio"} <= metrics, (name, metrics)
        decided = {
            row["metric"] for row in rows if row["dataset"] == name and row["method"] == VERDICT
        }
        value = "slope" if check.kind == "rate" else "ratio"
        assert decided == {"holds", "sound", *(f"{r}_{value}" for r in ("learner", "falsifier",
                                                                         "variant"))}  # fmt: skip
    for row in rows:
        key = f"{row['dataset']}/{row['method']}/{row['metric']}"
        assert curves[key].shape[0] == int(row["n_seeds"])
        final = curves[key][:, -1].mean()
        if np.isnan(final):  # no falsifier (an identity, an inequality) or no variant
            assert row["metric"] in ("falsifier_ratio", "variant_ratio"), row
            continue
        assert float(row["mean"]) == pytest.approx(final)


def test_dataset_selects_checks_by_name_or_document():
    assert selected_checks(None) == list(CHECKS.values())
    notes = selected_checks("notes")
    assert [c.name for c in notes] == [n for n in CHECKS if n in NOTES] and len(notes) >= 15
    both = selected_checks("notes-ogd, denevi2020")
    assert both[0].name == "notes-ogd" and {c.document for c in both} == {"notes", "denevi2020"}
    with pytest.raises(InputError, match=r"--dataset: 'notes-nope' is neither a check"):
        selected_checks("notes-nope")


def test_notes_bounds_are_attained_or_close(theory_run):
    """The adaptive adversary of OGD attains the OGD theorem's bound at even T (its losses sum
    to 0 there, so u* = 0 and regret = bound), and the stochastic instances measure something
    (a regret within a factor 3 of the bound somewhere)."""
    _, rows, curves, config = theory_run
    horizons = np.asarray(config["checks"]["notes-ogd"]["horizons"])
    even = horizons % 2 == 0
    assert even.sum() >= 2
    for eta in ("0.01", "0.1"):
        key = f"notes-ogd/OGD@adversarial,eta={eta}"
        measured, bound = curves[f"{key}/measured"], curves[f"{key}/bound"]
        np.testing.assert_allclose(measured[0, even], bound[0, even], rtol=1e-12)
    for name in ("notes-ftl-btl", "notes-ftrl-lemma", "notes-ols", "notes-omd"):
        for method in _methods(rows, name):
            if "stochastic" in method and role(method) == "learner":
                assert np.max(curves[f"{name}/{method}/ratio"]) > 1 / 3, (name, method)
    for name in ("notes-follow-best", "notes-halving"):  # attained: ratio 1 at the end
        (learner,) = [m for m in _methods(rows, name) if role(m) == "learner" and m != VERDICT]
        np.testing.assert_allclose(curves[f"{name}/{learner}/ratio"][0, -1], 1.0, rtol=1e-12)


def test_a_check_computes_in_float64_without_the_cli():
    outcome = CHECKS["notes-ftrl-gd"].compute(QUICK)
    (curves,) = outcome.methods.values()
    assert curves.measured.shape == (2, len(outcome.horizons))
    assert 0 <= curves.measured.max() <= IDENTITY_TOLERANCE


def test_fitted_slope_recovers_a_power():
    horizons = np.array([10, 100, 1000])
    assert fitted_slope(horizons, 3.0 * horizons[None] ** 0.5) == pytest.approx(0.5)


# ----------------------------------------------------------------------------- mirror descent


def _power(v: np.ndarray, r: float) -> np.ndarray:
    """sign(v) |v|^(r-1) / ||v||_r^(r-2), one coordinate at a time (0 at v = 0)."""
    norm = sum(abs(x) ** r for x in v) ** (1 / r)
    if norm == 0:
        return np.zeros_like(v)
    return np.array([np.sign(x) * abs(x) ** (r - 1) / norm ** (r - 2) for x in v])


def omd_reference(mirror_map, zs, eta, mirror, radius, x0):
    """Greedy OMD written from its definition: grad psi(w') = grad psi(w) - eta g, then the
    Bregman projection (the rescaling onto the map's ball; normalization on the simplex).
    Returns the played points and how many steps the ball's projection was active."""
    w, out, projected = np.array(x0, np.float64), [], 0
    for g in zs:
        out.append(w.copy())
        if mirror_map == "entropy":
            v = np.array([w[i] * np.exp(-eta * g[i]) for i in range(len(w))])
            w = v / v.sum()
            continue
        if mirror_map == "p_norm":
            q = mirror
            p = q / (q - 1)
            theta = _power(w, q) / (q - 1) - eta * g
            w = _power(theta, p) / (p - 1)
            norm = sum(abs(x) ** q for x in w) ** (1 / q)
        else:
            a = np.atleast_1d(mirror)
            w = w - eta * (np.linalg.solve(a, g) if a.ndim == 2 else g / a)
            norm = np.sqrt(w @ (a @ w if a.ndim == 2 else a * w))
        if radius is not None and norm > radius:
            w, projected = w * (radius / norm), projected + 1
    return np.array(out), projected


def _spd(d: int, seed: int) -> np.ndarray:
    m = np.random.default_rng(seed).normal(size=(d, d))
    return m @ m.T / d + 0.5 * np.eye(d)


CASES = {
    "p_norm-ball": ("p_norm", "ball", 1.4, 0.8),
    "p_norm-none": ("p_norm", "none", 1.8, None),
    "quadratic-matrix-ball": ("quadratic", "ball", _spd(4, 1), 0.9),
    "quadratic-diagonal": ("quadratic", "none", np.array([0.5, 1.0, 2.0, 4.0]), None),
    "entropy": ("entropy", None, 1.0, None),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_mirror_descent_against_numpy(x64, case):
    mirror_map, domain, mirror, radius = CASES[case]
    rng = np.random.default_rng(5)
    zs = rng.uniform(-1.0, 1.0, size=(60, 4)) + 0.2
    x0 = np.full(4, 0.25) if mirror_map == "entropy" else np.zeros(4)
    params = oco.OMDParams(
        jnp.asarray(0.3), jnp.asarray(1.0 if radius is None else radius), jnp.asarray(mirror)
    )
    _, trace = run_oco(
        oco.mirror_descent(mirror_map, domain),
        params,
        jnp.asarray(x0),
        jnp.asarray(zs),
        losses.linear_objective,
        store_iterates=True,
    )
    expected, projected = omd_reference(mirror_map, zs, 0.3, mirror, radius, x0)
    np.testing.assert_allclose(
        np.asarray(trace.prediction), expected, rtol=1e-10, atol=scaled_atol(expected)
    )
    assert np.ptp(expected[-1]) > 1e-3  # the points moved
    assert (projected >= 10) == (radius is not None)  # the ball's projection was exercised


def test_mirror_descent_special_cases(x64):
    """q = 2 (or A = I) is projected OGD; the entropy on the simplex is Hedge."""
    zs = jnp.asarray(np.random.default_rng(6).uniform(-1.0, 1.0, size=(50, 3)))
    one = jnp.asarray(1.0)

    def points(learner, params, x0):
        run = run_oco(learner, params, x0, zs, losses.linear_objective, store_iterates=True)
        return np.asarray(run[1].prediction)

    ogd = points(oco.ogd(), oco.OGDParams(jnp.asarray(0.2), one), jnp.zeros(3))
    for mirror_map, mirror in (("p_norm", 2.0), ("quadratic", 1.0)):
        omd_params = oco.OMDParams(jnp.asarray(0.2), one, jnp.asarray(mirror))
        omd = points(oco.mirror_descent(mirror_map, "ball"), omd_params, jnp.zeros(3))
        np.testing.assert_allclose(omd, ogd, rtol=1e-12, atol=scaled_atol(ogd))
    prior = jnp.full(3, 1 / 3)
    hedge = points(oco.hedge(), oco.HedgeParams(jnp.asarray(0.7)), prior)
    omd = points(oco.mirror_descent("entropy"), oco.OMDParams(jnp.asarray(0.7), one, one), prior)
    np.testing.assert_allclose(omd, hedge, rtol=1e-12, atol=scaled_atol(hedge))


@pytest.mark.parametrize(
    "mirror_map, mirror, x0, message",
    [
        ("p_norm", 2.5, np.zeros(2), "mirror (q of the p-norm map) must lie in (1.0, 2.0]"),
        ("quadratic", [[1.0, 2.0], [2.0, 1.0]], np.zeros(2), "positive definite"),
        ("quadratic", [1.0, 2.0, 3.0], np.zeros(2), "mirror (A) has shape (3,)"),
        ("p_norm", 1.5, np.array([3.0, 0.0]), "x0 must lie in the ball of radius 1.0"),
        ("entropy", 1.0, np.array([0.2, 0.2]), "x0 must lie on the simplex"),
    ],
)
def test_mirror_descent_rejects_bad_input(mirror_map, mirror, x0, message):
    domain = None if mirror_map == "entropy" else "ball"
    params = oco.OMDParams(jnp.asarray(0.1), jnp.asarray(1.0), jnp.asarray(mirror, jnp.float32))
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        run_oco(
            oco.mirror_descent(mirror_map, domain),
            params,
            jnp.asarray(x0, jnp.float32),
            jnp.ones((3, 2), jnp.float32),
            losses.linear_objective,
        )
    with pytest.raises(InputError, match="feasible_set"):
        oco.mirror_descent("entropy", "ball")
