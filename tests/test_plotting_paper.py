"""Figures for a paper: display names from one table, methods apart in greyscale, legends and
labels inside the figure (rendered and measured), the formats of ``--figure-format``, and
``ojax plot`` redrawing a finished run's figures from its files, file for file."""

from __future__ import annotations

import io
import json

import matplotlib.pyplot as plt
import numpy as np
import pytest
from PIL import Image

from ojax import plotting
from ojax.app import cli, sweep_metrics
from ojax.experiments import basics, denevi2020, zhao_hoi2010
from ojax.experiments import denevi2020_variance as var
from ojax.validation import InputError


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _rendered_clipping(fig) -> list[str]:
    """What is clipped once ``fig`` is saved as :func:`plotting.save_figure` saves it."""
    fig.set_dpi(plotting.DPI)
    fig.savefig(io.BytesIO(), format="png", dpi=plotting.DPI)
    return plotting.clipped_texts(fig)


def test_display_names_come_from_one_table():
    assert plotting.display_name("Aggressive") == "Aggressive (ONS)"
    assert plotting.display_name("Lazy_SS") == "Lazy_SS (tuned OGD)"
    assert plotting.display_name("Aggressive_KT@wealth=10") == "Aggressive_KT (KT), wealth = 10"
    assert plotting.display_name("unknown-method") == "unknown-method"
    methods = [*denevi2020.PF_METHODS, *denevi2020.SS_METHODS, *zhao_hoi2010.HOMOGENEOUS_METHODS]
    names = [plotting.display_name(m) for m in methods]
    assert len(set(names)) == len(names)  # no two methods share a legend name
    # a legend line is found by the name a table row gives: the legend starts with it
    assert all(name.split(" (")[0] == method for name, method in zip(names, methods))


def test_methods_stay_apart_in_greyscale():
    pairs = {(plotting.style(i)["linestyle"], plotting.style(i)["marker"]) for i in range(28)}
    assert len(pairs) == 28
    assert min(plotting.style(i)["linewidth"] for i in range(28)) >= 1.3  # no hairlines


def test_figure_formats_are_parsed_and_checked():
    assert plotting.parse_figure_formats("png,PDF") == ("png", "pdf")
    assert plotting.parse_figure_formats(["svg", "png,svg"]) == ("svg", "png")
    with pytest.raises(InputError, match=r"png, pdf, svg .* got 'jpg'"):
        plotting.parse_figure_formats("png,jpg")
    assert cli.main(["plot", ".", "--figure-format", "gif"]) == 2


def _many_labels(count: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {
        f"coin_betting_kt@initial_wealth={10.0**i:g},learning_rate={0.1 * i:g}": rng.random((3, 50))
        for i in range(count)
    }


def test_no_text_is_clipped_in_any_figure_kind():
    x = np.arange(1, 51)
    rng = np.random.default_rng(1)
    figs = {
        "curves, 12 long labels": plotting.curves_figure(
            x, _many_labels(12), xlabel="step t", ylabel="average loss", logx=True
        ),
        "regret": basics._figure(
            "ogd", {"OGD": (rng.random((3, 4)) + 1, np.arange(1.0, 5.0) * 3)}, np.arange(1, 5)
        ),
        "mistake rates, 3 datasets": zhao_hoi2010._figure(
            {d: {m: 100 * rng.random((3, 200)) for m in ("PA", "PAIO", "OTL")} for d in "abc"},
            {"a": {"block": 50, "block_edges": [50, 100, 150]}},
        ),
        "gain": var._gain_figure(
            {m: rng.random((3, 4)) for m in [*var.META_LEARNERS, "Oracle", var.BEST_BIAS]},
            np.array([0.1, 1.0, 10.0, 100.0]),
        ),
    }
    for what, fig in figs.items():
        assert _rendered_clipping(fig) == [], what


def test_the_longest_theory_heading_is_not_clipped():
    from ojax.experiments import theory
    from ojax.experiments.theory import CHECKS

    check = max(CHECKS.values(), key=lambda c: len(f"{c.name}{c.result}{c.document}"))
    x = np.array([10.0, 100.0, 1000.0])
    methods = {"learner": (np.sqrt(x)[None] * [[1.0], [1.2]], 2 * np.sqrt(x)[None]),
               "falsifier:no-learning": (x[None], None)}  # fmt: skip
    fig = theory.check_figure(check, x, methods)
    assert _rendered_clipping(fig) == []
    # the log axes' labels in plain text (no mathtext to parse): the decades as powers of 10
    ax = fig.axes[0]
    xlabels = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    ylabels = [t.get_text() for t in ax.get_yticklabels() if t.get_text()]
    assert {"10\u00b9", "10\u00b2", "10\u00b3"} <= set(xlabels), xlabels
    assert ylabels and not any("$" in label for label in xlabels + ylabels), ylabels
    assert theory._power_label(0.02) == "2\u00d710\u207b\u00b2" and theory._power_label(0) == ""


def test_the_clipping_check_can_fail():
    fig, ax = plt.subplots(figsize=(3, 2))  # no layout, a legend right of the axes
    ax.plot([1, 2], [1, 2], label="a label far too long to fit beside the axes")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.set_xlabel("x")
    fig.subplots_adjust(bottom=0.0)  # the x label below the figure's edge
    clipped = _rendered_clipping(fig)
    assert "legend" in clipped and "x" in clipped


def _sweep(out, *extra) -> None:
    argv = ["sweep", "ogd_square", "--grid", "learning_rate=0.01,0.1,1", "--seeds", "2"]
    assert cli.main([*argv, "--steps", "60", "--quiet", "--out", str(out), *extra]) == 0


def _pixels(path) -> np.ndarray:
    with Image.open(path) as image:
        return np.asarray(image.convert("RGBA"))


def test_ojax_plot_redraws_a_run_file_for_file(tmp_path, capsys):
    out = tmp_path / "sweep"
    _sweep(out, "--figure-format", "png", "--figure-format", "svg")
    names = sorted(p.name for p in out.iterdir() if p.suffix in (".png", ".svg"))
    assert names == ["average_loss.png", "average_loss.svg", "sensitivity.png", "sensitivity.svg"]
    with Image.open(out / "average_loss.png") as image:
        assert image.info["dpi"][0] == pytest.approx(plotting.DPI, abs=1)
    before = {n: ((out / n).read_text() if n.endswith(".svg") else _pixels(out / n)) for n in names}
    for name in names:
        (out / name).unlink()
    assert cli.main(["plot", str(out), "--figure-format", "png,svg"]) == 0
    assert sorted(p.name for p in out.iterdir() if p.suffix in (".png", ".svg")) == names
    for name, old in before.items():
        if name.endswith(".svg"):
            assert (out / name).read_text() == old, name
        else:
            np.testing.assert_array_equal(_pixels(out / name), old, err_msg=name)
    # another format is added beside them, recorded as the run's files
    assert cli.main(["plot", str(out), "--figure-format", "pdf"]) == 0
    assert {"average_loss.pdf", "sensitivity.pdf", "average_loss.png"} <= {
        p.name for p in out.iterdir()
    }
    record = json.loads((out / ".ojax-run.json").read_text())
    assert {"average_loss.pdf", "average_loss.svg", "results.csv"} <= set(record["files"])
    # --overwrite by another run removes them all
    _sweep(out, "--overwrite", "--key", "3")
    assert not (out / "average_loss.pdf").exists() and (out / "average_loss.png").exists()
    assert cli.main(["plot", str(tmp_path)]) == 2  # not a run
    assert "holds no finished ojax run" in capsys.readouterr().err


def test_sweep_curves_carry_their_step_positions(tmp_path):
    out = tmp_path / "sweep"
    _sweep(out)
    curves = np.load(out / "curves.npz")
    key = next(k for k in curves if k.endswith("/average_loss"))
    np.testing.assert_array_equal(curves[key + ":steps"], sweep_metrics.checkpoints(60))
    assert curves[key].shape[1] == len(curves[key + ":steps"])


def test_pngs_encoded_in_the_background_are_the_same_files_and_errors_surface(tmp_path):
    """Inside `pngs_encoded_in_background`, save_figure draws, a worker thread encodes and the
    block's end writes: the same bytes as save_figure alone (a constrained figure, and one
    without a layout engine); a file that cannot be written raises when the block ends."""

    def drawn(layout):
        fig, ax = plotting.new_figure(height=3.0)
        if not layout:
            fig.set_layout_engine("none")
        x = np.geomspace(1.0, 1e3, 12)
        ax.plot(x, x**0.5, marker="o", label="a label")
        ax.set(xlabel="horizon", ylabel="measured", xscale="log", yscale="log")
        plotting.legend(fig, ax)
        return fig

    (alone := tmp_path / "alone").mkdir()
    (background := tmp_path / "background").mkdir()
    for layout in (True, False):
        plotting.save_figure(drawn(layout), alone, f"fig{layout}")
    with plotting.pngs_encoded_in_background():
        for layout in (True, False):
            plotting.save_figure(drawn(layout), background, f"fig{layout}")
    for layout in (True, False):
        name = f"fig{layout}.png"
        assert (background / name).read_bytes() == (alone / name).read_bytes()
    with pytest.raises(OSError), plotting.pngs_encoded_in_background():
        plotting.save_figure(drawn(True), tmp_path / "no such folder", "fig")


def test_a_png_with_its_layout_computed_once_has_savefigs_pixels(tmp_path):
    """save_figure lays a constrained figure out once before its one drawing: the same pixels
    as matplotlib's own savefig (which draws twice), and the layout engine is kept."""

    def drawn():
        fig, ax = plotting.new_figure(height=3.0)
        x = np.geomspace(1.0, 1e3, 12)
        ax.plot(x, x**0.5, marker="o", label="a rather long label for the legend below")
        ax.set_title("a title\non two lines", fontsize=7, y=1.0)
        ax.set(xlabel="horizon", ylabel="measured", xscale="log", yscale="log")
        ax.grid(alpha=0.3, which="both")
        plotting.legend(fig, ax)
        return fig

    reference = drawn()
    reference.savefig(tmp_path / "reference.png", format="png", dpi=plotting.DPI)
    plt.close(reference)
    fig = drawn()
    engine = fig.get_layout_engine()
    (path,) = plotting.save_figure(fig, tmp_path, "once")
    assert fig.get_layout_engine() is engine and fig.dpi != plotting.DPI
    expected = np.asarray(Image.open(tmp_path / "reference.png"))
    assert np.array_equal(np.asarray(Image.open(path)), expected)
