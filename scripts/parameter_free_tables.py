"""The headline tables of ``parameter-free-benchmark`` on its reproduction page.

Used by ``scripts/make_reproductions.py`` in place of the one-row-per-result table: the run has
a row per (dataset, method, constant), too many to list; the page shows per method its final
average loss at the default constant, its sensitivity to that constant, and the regret against
``||u||`` on the synthetic regression.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

NAME = "parameter-free-benchmark"
FIXED = "OGD-fixed"


def _methods(rows: dict, metric: str) -> list[str]:
    return list(dict.fromkeys(m for (_, m, k) in rows if k == metric and "@" not in m))


def _table(
    rows: dict, datasets: list[str], methods: list[str], metric: str, fmt: Callable, head: str
) -> list[str]:
    lines = ["| method | " + " | ".join(datasets) + " |", "| --- " * (len(datasets) + 1) + "|"]
    for method in methods:
        cells = [fmt(rows.get((d, method, metric))) for d in datasets]
        if any(c != "n/a" for c in cells):
            lines.append(f"| {method} | " + " | ".join(cells) + " |")
    return [head, "", *lines, ""]


def _cell(mean_std: Callable) -> Callable:
    """``mean_std`` that names a diverged (NaN) or unbounded (inf) value instead."""

    def cell(value: Any) -> str:
        if value is None:
            return "n/a"
        mean = value[0]
        if math.isnan(mean):
            return "diverged"
        return "inf (a constant diverged)" if math.isinf(mean) else mean_std(value)

    return cell


def _norm(dataset: str) -> float:
    return float(dataset.rsplit("=", 1)[1])


def headline(res: Any, mean_std: Callable) -> list[str]:
    """The page's tables from a run's results (``res.rows``: ``(dataset, method, metric)`` ->
    ``(mean, std, n_seeds)``)."""
    rows = res.rows
    mean_std = _cell(mean_std)
    datasets = list(dict.fromkeys(d for (d, _, _) in rows))
    classification = [d for d in datasets if not d.startswith("regression-")]
    methods = [m for m in _methods(rows, "average_loss") if m != FIXED]
    at_one = [d for d in datasets if d.startswith("regression-") and _norm(d) == 1.0]
    columns = classification + at_one
    lines = _table(
        rows,
        columns,
        methods,
        "average_loss",
        mean_std,
        "Final average loss (progressive validation; mean +- std over seeds) at each method's "
        "default constant; OGD and AdaGrad at the best of their 20 steps in hindsight:",
    )
    lines += _table(
        rows,
        columns,
        methods,
        "sensitivity",
        mean_std,
        "How parameter-free? Worst over best final average loss across the 8-decade sweep of "
        "the hidden constant (per seed; 1 = the constant does not matter). OGD and AdaGrad: "
        "across their 20 steps (6.3 decades):",
    )
    for loss in ("absolute", "square"):
        regression = sorted((d for d in datasets if d.startswith(f"regression-{loss}-")), key=_norm)
        if not regression:
            continue
        lines += _table(
            rows,
            regression,
            [*methods, FIXED],
            "regret",
            mean_std,
            f"Regret against u on the synthetic regression ({loss} loss), one column per "
            f"||u|| (OGD: tuned per norm; {FIXED}: the step tuned at ||u|| = 1 kept at every "
            "norm):",
        )
    return lines
