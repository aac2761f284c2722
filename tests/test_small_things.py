"""Small things of issue 23, each with what it does now: a jit-ed `meta.cumulative_error` says
why it cannot run there, label checks name a set of values, mistakes are integers, a float32
best step and a refused value print as their shortest text, the header line states the
precision."""

from __future__ import annotations

import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ojax import meta, transfer
from ojax.validation import InputError, check_labels


def test_cumulative_error_inside_jit_raises_a_clear_error():
    errors, mask = jnp.ones((2, 3)), jnp.ones((2, 3), bool)
    with pytest.raises(InputError, match=r"errors, mask is traced .*outside the trace"):
        jax.jit(meta.cumulative_error)(errors, mask)
    np.testing.assert_array_equal(meta.cumulative_error(errors, mask), np.ones(6))

    # the traced recipe of its docstring gives the same curve where every slot is real
    def recipe(e, m):
        counts = jnp.cumsum(m.ravel(), dtype=e.dtype)
        return jnp.cumsum(jnp.where(m, e, 0.0).ravel()) / jnp.maximum(counts, 1.0)

    traced = jax.jit(recipe)(errors, mask)
    np.testing.assert_allclose(traced, meta.cumulative_error(errors, mask))


def test_labels_are_a_set_of_values_not_an_interval():
    with pytest.raises(InputError, match=r"^y must take only the values \{-1, \+1\}, got 0"):
        check_labels("y", np.array([1.0, 0.0, -1.0]))
    with pytest.raises(InputError, match=r"^mask must take only the values \{0, 1\}, got 2"):
        check_labels("mask", np.array([0, 2]), (0, 1))


def test_mistakes_are_integers():
    rng = np.random.default_rng(2)
    w = rng.normal(size=4)
    sx, tx = rng.normal(size=(30, 4)), rng.normal(size=(30, 4))
    sy, ty = np.sign(sx @ w), np.sign(tx @ w + 0.5 * rng.normal(size=30))
    orders = np.stack([rng.permutation(30) for _ in range(2)])
    (res,) = transfer.run_split(
        sx, sy, rng.permutation(30), tx, ty, orders, methods=("PA",)
    ).values()
    assert res.mistakes.dtype == np.int32
    assert set(np.unique(res.mistakes)) <= {0, 1}
    assert str(res.mistakes.sum()) == str(int(res.mistakes.sum()))  # "72", not "72."


def test_the_best_float32_value_is_its_shortest_text(tmp_path):
    from ojax.app import cli

    out = tmp_path / "s"
    argv = ["sweep", "ogd", "--grid", "learning_rate=0.01,0.3", "--seeds", "2", "--steps", "20"]
    assert cli.main([*argv, "--dim", "2", "--out", str(out), "--quiet"]) == 0
    best = json.loads((out / "config.json").read_text())["best"]["params"]["learning_rate"]
    assert best in (0.01, 0.3)  # not 0.009999999776482582 (float32's value as a double)


def test_the_command_line_page_is_in_the_repository_and_cited():
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    page = (root / "docs" / "cli.md").read_text()
    assert "cli.md" in (root / "mkdocs.yml").read_text()
    for name in ("ridge-sgd-last", "geometric-known-cov", "support_vectors_per_view", "falsifier:"):
        assert name in page, name
    assert "experiment,dataset,method,metric,mean,std,n_seeds" in page
    cited = [p for p in (root / "ojax").rglob("*.py") if "INTERFACE.md" in p.read_text()]
    assert not cited, f"{cited} cite INTERFACE.md, which is not in the repository: cite docs/cli.md"


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (jnp.float32(-0.1), "got -0.1"),  # float32's shortest text, not -0.10000000149011612
        (np.float64(0.0), "got 0.0"),  # not np.float64(0.0)
        (np.array([-0.1, -0.2], np.float32), "(first values [-0.1, -0.2])"),
    ],
)
def test_a_refused_value_reads_as_its_own_dtype_prints_it(value, shown):
    from ojax.validation import check_positive

    with pytest.raises(InputError) as err:
        check_positive("learning_rate", value)
    assert str(err.value).endswith(shown) and "np.float" not in str(err.value), str(err.value)


def test_the_header_line_states_the_precision(tmp_path, capsys):
    from ojax.app import cli

    argv = ["sweep", "ogd", "--seeds", "1", "--steps", "20", "--dim", "2", "--quiet"]
    assert cli.main([*argv, "--out", str(tmp_path / "a")]) == 0
    assert "ojax: running sweep ogd: 1 seed, float32 on " in capsys.readouterr().err
