"""Saved states: every registered learner's state round-trips; hostile or foreign files are
refused with the file and what differs named, and never execute or import anything."""

from __future__ import annotations

import functools
import io
import json
import pickle
import sys
import zipfile
from pathlib import Path
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import ojax
from ojax import oco
from ojax.runner import entry_start
from ojax.state_io import StateFileError, learner_identity, load_state, save_state


def _state(name: str, dim: int = 3):
    entry = ojax.LEARNERS[name]
    learner, params = entry.make(dim), entry.default_params()
    if entry.kind == "oco":
        zs = entry.make_stream(jax.random.key(0), 4, dim)[0]
        return learner, learner.init(params, entry_start(entry, zs))
    return learner, learner.init(params)


@pytest.mark.parametrize("name", sorted(ojax.LEARNERS))
def test_every_registered_state_round_trips(tmp_path, name):
    learner, state = _state(name)
    path = save_state(tmp_path / "s", state, learner=learner)
    template = jax.eval_shape(lambda: state)  # shapes and dtypes only, as learner.init gives
    for back in (load_state(path, like=template, learner=learner), load_state(path, like=state)):
        assert jax.tree.structure(back) == jax.tree.structure(state)
        for got, want in zip(jax.tree.leaves(back), jax.tree.leaves(state)):
            assert got.dtype == want.dtype and np.array_equal(got, want)


def test_the_file_is_a_zip_of_json_and_npy_members_only(tmp_path):
    learner, state = _state("ogd")
    path = save_state(tmp_path / "s", state, learner=learner)
    with zipfile.ZipFile(path) as archive:
        assert archive.namelist() == ["state.json", "leaf_00000.npy", "leaf_00001.npy"]
        description = json.loads(archive.read("state.json"))
    assert description["format_version"] == 1 and description["ojax_version"] == ojax.__version__
    assert description["learner"] == (
        "ojax.oco.gradient_descent.ogd(feasible_set='l2_ball', schedule='constant')"
    )
    assert description["tree"]["type"] == "ojax.oco.gradient_descent.OGDState"
    assert description["leaves"][1] == {"name": "leaf_00001", "dtype": "int32", "shape": []}


def _rewrite(path: Path, out: Path, change=None, members: dict | None = None) -> Path:
    """A copy of the state file ``path`` whose description went through ``change`` and whose
    members are replaced / added by ``members`` (name -> bytes)."""
    with zipfile.ZipFile(path) as archive:
        files = {n: archive.read(n) for n in archive.namelist()}
    if change is not None:
        description = json.loads(files["state.json"])
        change(description)
        files["state.json"] = json.dumps(description).encode()
    files.update(members or {})
    with zipfile.ZipFile(out, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return out


@pytest.fixture
def saved(tmp_path) -> Path:
    learner, state = _state("ogd")
    return save_state(tmp_path / "good", state, learner=learner)


def test_a_file_of_another_learner_is_refused(saved):
    other = oco.ogd("none")
    with pytest.raises(StateFileError, match=r"'.*good': a state of the learner .*l2_ball.*'none'"):
        load_state(saved, like=_state("ogd")[1], learner=other)


def test_another_structure_is_refused_naming_the_field(saved):
    _, hedge = _state("hedge")
    with pytest.raises(StateFileError, match="state: the file holds type .*OGDState.*HedgeState"):
        load_state(saved, like=hedge)
    _, wider = _state("ogd", dim=4)
    with pytest.raises(StateFileError, match=r"state.point: the file holds float32\[3\].*\[4\]"):
        load_state(saved, like=wider)


def test_another_format_or_ojax_version_is_refused(saved, tmp_path):
    def bump(d):
        d["format_version"] = 2

    def older(d):
        d["ojax_version"] = "0.0.1"

    like = _state("ogd")[1]
    with pytest.raises(StateFileError, match="format version 2, this ojax reads version 1"):
        load_state(_rewrite(saved, tmp_path / "v2", bump), like=like)
    path = _rewrite(saved, tmp_path / "old", older)
    with pytest.raises(StateFileError, match="written by ojax '0.0.1'.*check_version=False"):
        load_state(path, like=like)
    assert load_state(path, like=like, check_version=False).point.shape == (3,)


class Evil:
    def __reduce__(self):
        return (print, ("pwned",))


def test_hostile_files_are_refused_and_run_nothing(saved, tmp_path, capsys):
    def named(kind):
        def change(d):
            d["tree"]["type"] = kind

        return change

    before = set(sys.modules)
    cases = {
        "an importable name": (named("os.system"), {}, "the file holds type 'os.system'"),
        "a name under ojax never imported": (
            named("ojax.not_a_module.Thing"),
            {},
            "the file holds type 'ojax.not_a_module.Thing'",
        ),
        "a pickle member": (
            None,
            {"leaf_00000.npy": pickle.dumps(Evil())},
            "leaf_00000' is not a readable .npy member",
        ),
        "an object array": (
            None,
            {"leaf_00000.npy": _npy_header("|O", (3,)) + pickle.dumps([1, 2, 3])},
            "holds Python objects",
        ),
        "a dtype the description does not declare": (
            None,
            {"leaf_00000.npy": _npy(np.zeros(3, np.float64))},
            r"leaf_00000.npy holds float64\[3\], state.json declares float32\[3\]",
        ),
        "a size larger than the member": (
            None,
            {"leaf_00000.npy": _npy_header("<f4", (10**12,))},
            "declares shape",
        ),
        "an unknown node": (lambda d: d.update(tree={"kind": "eval"}), {}, "holds kind 'eval'"),
        "a leaf used twice": (
            lambda d: d["tree"]["items"].__setitem__(1, {"kind": "leaf", "index": 0}),
            {},
            "state.count: the file holds index 0",
        ),
        "a bad dtype": (
            lambda d: d["leaves"][0].update(dtype="object"),
            {},
            "leaf 0 must be",
        ),
        "too deep": (lambda d: d.update(tree=_nested(100)), {}, "holds kind 'tuple'"),
    }
    like = _state("ogd")[1]
    for label, (change, members, message) in cases.items():
        path = _rewrite(saved, tmp_path / label.replace(" ", "_"), change, members)
        with pytest.raises(StateFileError, match=message):
            load_state(path, like=like)
    assert "pwned" not in capsys.readouterr().out
    assert not {m for m in set(sys.modules) - before if not m.startswith("ojax")}


def test_not_a_state_file_at_all(tmp_path):
    load_state = functools.partial(globals()["load_state"], like=_state("ogd")[1])
    (tmp_path / "text").write_text("hello")
    with pytest.raises(StateFileError, match="'.*text': not an ojax state file"):
        load_state(tmp_path / "text")
    np.savez(tmp_path / "plain.npz", a=np.zeros(2))
    with pytest.raises(StateFileError, match="no state.json member"):
        load_state(tmp_path / "plain.npz")
    with zipfile.ZipFile(tmp_path / "badjson", "w") as archive:
        archive.writestr("state.json", "[" * 100_000)
    with pytest.raises(StateFileError, match="not valid JSON|no format"):
        load_state(tmp_path / "badjson")


class MyState(NamedTuple):
    weights: jax.Array
    steps: jax.Array


def test_a_state_of_ones_own_classes_reads_into_its_template(tmp_path):
    state = MyState(jnp.ones(2), jnp.int32(3))
    path = save_state(tmp_path / "mine", state)
    back = load_state(path, like=state)
    assert isinstance(back, MyState) and int(back.steps) == 3
    other = oco.OGDState(jnp.ones(2), jnp.int32(3))  # the same leaves, another class: refused
    with pytest.raises(StateFileError, match="holds type '.*test_state_io.MyState'"):
        load_state(path, like=other)


def test_the_loader_builds_only_the_templates_classes(saved, tmp_path):
    from ojax.core import Trace

    def as_trace(d):
        d["tree"].update(type="ojax.core.Trace", fields=list(Trace._fields))

    back = load_state(saved, like=_state("ogd")[1])
    assert type(back) is oco.OGDState
    with pytest.raises(StateFileError, match="holds type 'ojax.core.Trace'"):
        load_state(_rewrite(saved, tmp_path / "trace", as_trace), like=_state("ogd")[1])


def test_what_cannot_be_saved_is_refused_by_name(tmp_path):
    with pytest.raises(StateFileError, match=r"state\['key'\]: a PRNG key array cannot be saved"):
        save_state(tmp_path / "k", {"key": jax.random.key(0)})
    with pytest.raises(StateFileError, match="a object node cannot be saved|cannot be saved"):
        save_state(tmp_path / "o", [object()])
    assert not (tmp_path / "k").exists()


def test_float64_state_without_x64_is_refused(tmp_path):
    with jax.enable_x64(True):
        path = save_state(tmp_path / "s", oco.OGDState(jnp.zeros(2, jnp.float64), jnp.int32(0)))
    with jax.enable_x64(False):
        like = oco.OGDState(jax.ShapeDtypeStruct((2,), jnp.float32), jnp.int32(0))
        with pytest.raises(StateFileError, match="enable float64 first"):
            load_state(path, like=like)


def test_the_identity_is_the_same_for_equal_learners_and_names_no_address():
    a = ojax.LEARNERS["optax_cocob"].make(3)
    assert learner_identity(a) == learner_identity(ojax.LEARNERS["optax_cocob"].make(3))
    assert " at 0x" not in learner_identity(a)
    assert learner_identity(oco.ogd()._replace(check_params=print)) is None


def _npy_header(descr: str, shape: tuple) -> bytes:
    header = repr({"descr": descr, "fortran_order": False, "shape": shape}).encode()
    header += b" " * (63 - len(header) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header


def _npy(arr: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, arr, allow_pickle=False)
    return buffer.getvalue()


def _nested(depth: int) -> dict:
    node: dict = {"kind": "leaf", "index": 0}
    for _ in range(depth):
        node = {"kind": "tuple", "items": [node]}
    return node


def test_a_learner_without_an_identity_is_refused_when_saving(tmp_path):
    state = oco.ogd().init(oco.OGDParams(jnp.float32(0.1), jnp.float32(1.0)), jnp.zeros(2))
    own = oco.ogd()._replace(init=lambda params, x0: state)  # not built by a factory
    for learner in ("ogd", own):
        with pytest.raises(StateFileError, match="has no identity to record"):
            save_state(tmp_path / "s", state, learner=learner)
    assert not (tmp_path / "s").exists()
    path = save_state(tmp_path / "s", state, learner=oco.ogd())
    assert load_state(path, like=state, learner=oco.ogd()).point.shape == (2,)
