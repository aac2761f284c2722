"""The figures say what they show: quantile bands that stay positive on log axes, rates within
[0, 100], a bound drawn only beside the algorithm it bounds, distinct line styles, axis ranges
fitted to the curves, no title (a caption says it); and every ``bound`` row of ``basics``
holds for its algorithm (tested through the plotting helpers on small arrays)."""

from __future__ import annotations

import jax
import matplotlib.pyplot as plt
import numpy as np
import pytest

from ojax import plotting
from ojax.experiments import basics, zhao_hoi2010
from ojax.transfer import mistake_rate
from ojax.validation import InputError


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _band_vertices(ax) -> np.ndarray:
    """The y coordinates of every shaded band of ``ax``."""
    polys = [c for c in ax.collections if hasattr(c, "get_paths")]
    return np.concatenate([p.vertices[:, 1] for c in polys for p in c.get_paths()])


def _skewed(seed: int = 0, shape=(8, 30)) -> np.ndarray:
    """Positive curves whose mean - std is negative (a heavy right tail)."""
    return np.exp(3.0 * np.random.default_rng(seed).normal(size=shape))


def test_quantile_band_matches_numpy_per_column():
    curves = _skewed()
    mean, low, high = plotting.quantile_band(curves, (0.1, 0.9))
    for j in range(curves.shape[1]):
        column = np.sort(curves[:, j])
        pos = 0.1 * (len(column) - 1)  # linear interpolation between order statistics
        i = int(np.floor(pos))
        expected = column[i] + (pos - i) * (column[i + 1] - column[i])
        assert low[j] == pytest.approx(expected, rel=1e-12)
        assert mean[j] == pytest.approx(column.mean(), rel=1e-12)
    assert np.all(high >= low)
    with pytest.raises(InputError, match="quantiles"):
        plotting.quantile_band(curves, (0.9, 0.1))


def test_bands_on_log_axes_never_go_below_zero():
    curves = _skewed()
    assert np.any(curves.mean(0) - curves.std(0) < 0)  # a +-std band would cross zero here
    x = np.arange(1, curves.shape[1] + 1)
    fig = plotting.curves_figure(
        x, {"a": curves, "b": 2 * curves}, title="t (x)", xlabel="x", ylabel="y", logy=True
    )
    ys = _band_vertices(fig.axes[0])
    assert ys.size and np.all(ys > 0)
    low, high = fig.axes[0].get_ylim()
    assert low > 0 and high >= curves.max() * 0.99


def test_regret_figure_draws_a_bound_only_beside_its_algorithm():
    horizons = np.array([10, 100, 1000])
    regrets = {"A": np.ones((3, 3)), "B": 2 * np.ones((3, 3)), "C": 3 * np.ones((3, 3))}
    bounds = {"A": np.array([5.0, 50, 500]), "C": np.array([7.0, 70, 700])}
    fig = plotting.regret_figure(horizons, regrets, bounds, title="example (3 seeds)")
    ax = fig.axes[0]
    lines = {line.get_label(): line for line in ax.get_lines()}
    assert set(lines) == {"A", "B", "C", "bound (A)", "bound (C)"}  # none for B
    for method in ("A", "C"):  # in the method's own colour, at its own values
        assert lines[f"bound ({method})"].get_color() == lines[method].get_color()
        np.testing.assert_array_equal(lines[f"bound ({method})"].get_ydata(), bounds[method])
    with pytest.raises(InputError, match="not methods"):
        plotting.regret_figure(horizons, regrets, {"D": bounds["A"]}, title="x y")
    # two methods with the same bound: one line naming both, so neither hides the other
    fig = plotting.regret_figure(horizons, regrets, {"A": bounds["A"], "B": bounds["A"]}, title="t")
    labels = [line.get_label() for line in fig.axes[0].get_lines()]
    assert labels.count("bound (A, B)") == 1 and "bound (A)" not in labels


def test_methods_get_distinct_styles_and_the_range_fits_the_curves():
    x = np.arange(1, 201)
    late = 3.3 + 1.4 * np.random.default_rng(1).random((4, 200))
    late[:, :5] = 8.0  # a running average that starts high
    curves = {f"m{i}": late + 0.01 * i for i in range(5)}
    fig = plotting.curves_figure(x, curves, title="t (x)", xlabel="x", ylabel="y", fit_from=10)
    lines = fig.axes[0].get_lines()
    styles = {(line.get_linestyle(), line.get_marker()) for line in lines}
    assert len(styles) == len(lines)  # no two methods look the same, in greyscale too
    widths = [line.get_linewidth() for line in lines]
    assert widths == sorted(widths, reverse=True)  # a later (thinner) line leaves earlier visible
    low, high = fig.axes[0].get_ylim()
    assert 3.0 < low < 3.5 and 4.6 < high < 5.0  # not 0 to 8


def test_window_rate_matches_a_loop_and_stays_a_rate():
    mistakes = (np.random.default_rng(2).random((3, 50)) < 0.3).astype(float)
    rate = mistake_rate(mistakes)
    window = 7
    got = zhao_hoi2010.window_rate(rate, window)
    for t in range(window, 50):
        np.testing.assert_allclose(got[:, t], 100 * mistakes[:, t - window + 1 : t + 1].mean(1))
    np.testing.assert_allclose(got[:, :window], rate[:, :window])
    assert np.all((got >= 0) & (got <= 100))


def test_mistake_rate_figure_keeps_rates_in_range_and_states_the_setting():
    rng = np.random.default_rng(3)
    curves = {"usenet2": {m: mistake_rate(rng.random((4, 120)) < 0.5) for m in ("PA", "OTL")}}
    details = {"usenet2": {"features": 99, "runs": "4 shipped orders", "block": 30}}
    details["usenet2"]["block_edges"] = [30, 60, 90]
    fig = zhao_hoi2010._figure(curves, details)
    for ax in fig.axes:
        low, high = ax.get_ylim()
        assert 0 <= low < high <= 100
        ys = np.concatenate(
            [line.get_ydata() for line in ax.get_lines() if line.get_label()[0] != "_"]
        )
        assert np.all((ys >= 0) & (ys <= 100))
        assert np.all((_band_vertices(ax) >= 0) & (_band_vertices(ax) <= 100))
        marks = [line for line in ax.get_lines() if line.get_label().startswith("_")]
        edges = [line.get_xdata()[0] for line in marks]
        assert sorted(edges) == [30, 60, 90]  # the concept changes, marked
    assert fig.axes[0].get_title() == "usenet2"  # the panel's dataset, no more


def test_basics_bound_rows_hold_for_their_algorithms():
    steps = basics.horizons(400, 4)
    key = jax.random.key(5)
    examples = {  # the bounds new to the figures (test_oco checks the tuned learners' ones)
        **basics.example_experts(1, steps, key),
        **basics.example_ftrl(1, steps),
        **basics.example_parameter_free(2, steps, key),
    }
    # example 4: FTL's exact regret (T - 1) M (test_oco) is under its bound 2 M (T - 1/2)
    assert np.all((steps - 1) * basics.RADIUS <= basics.ftl_linear_bound(steps, basics.RADIUS, 1))
    checked = 0
    for dataset, methods in examples.items():
        for method, (regret, bound) in methods.items():
            regret = np.asarray(regret)
            if dataset in basics.LOWER_BOUNDS:  # example 1: T/2 bounds every learner below
                assert np.all(regret >= bound[None, :] - 1e-9), (dataset, method)
            else:
                assert np.all(regret <= bound[None, :] + 1e-6), (dataset, method)
            checked += 1
        fig = basics._figure(dataset, methods, steps)
        assert fig.axes[0].get_title() == ""  # a paper's figure has a caption instead
        labels = [line.get_label() for line in fig.axes[0].get_lines()]
        for label in labels:
            if label.startswith("bound ("):  # names only methods of this figure
                assert set(label[7:-1].split(", ")) <= set(methods), label
    assert checked == 11  # every method of these examples has its bound row
    # FTL's own bound in examples 4-5 is linear, and FTL's regret is under it but far above FTRL's
    ftl, ftl_bound = examples["ftrl-linear"]["FTL"]
    assert np.all(ftl[:, -1] <= ftl_bound[-1]) and np.all(
        ftl[:, -1] > 5 * examples["ftrl-linear"]["FTRL"][1][-1]
    )


def test_a_figure_says_what_its_bands_are_and_what_lies_off_its_scale():
    from ojax.plotting import curves_figure

    x = np.arange(1, 101)
    steady = np.vstack([np.full(100, 1.0 + 0.1 * s) for s in range(3)])
    start_high = steady.copy()
    start_high[:, 0] = 50.0  # a running average's first point
    fig = curves_figure(x, {"a": steady, "b": start_high}, xlabel="t", ylabel="y", fit_from=5)
    title = " ".join(fig.legends[0].get_title().get_text().split())
    assert title.startswith("mean over 3 seeds, band from the 10% to 90% quantile over seeds")
    assert "the means over the first 5 points span 1.1 to 50, beyond the scale" in title
    assert fig.axes[0].get_ylim()[1] < 50.0
    one = curves_figure(x, {"a": steady[:1]}, xlabel="t", ylabel="y")  # no band, no note
    assert one.legends[0].get_title().get_text() == ""
    plt.close("all")
