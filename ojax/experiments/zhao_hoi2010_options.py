"""The options of the Zhao & Hoi (2010) experiments (`--split`, `--order`, `--dataset`):
their config classes and checks."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from ojax.datasets import transfer as transfer_data
from ojax.sweep.experiment import ExperimentConfig, option
from ojax.validation import InputError

ORDERS = ("shipped", "uniform")
"""The target orders of ``zhao-hoi2010-homogeneous`` on the drift streams (``--order``):
``shipped`` (default) the orders ``ID_ALL`` of usenet2.mat / newsgroup4.mat, one run per order
(``--seeds`` at most their number, 20), plus the file's own order as one run reported apart;
``uniform``: ``--seeds`` uniform random permutations of the target (which erase the drift).
Spambase and w7a (no drift) always take uniform permutations."""


def order_option(config: ExperimentConfig) -> str:
    """`config.order` checked (default `"shipped"`)."""
    order = getattr(config, "order", None) or "shipped"
    if order not in ORDERS:
        raise InputError(f"order must be one of {list(ORDERS)}, got {order!r}")
    return order


DATASETS = {
    "zhao-hoi2010-homogeneous": ("usenet2", "newsgroup4", "spambase", "w7a"),
    "zhao-hoi2010-heterogeneous": ("a7a", "mushrooms", "spambase", "w7a"),
}
"""The datasets of each experiment, the values of ``--dataset`` (``config.dataset``): one of
them runs alone, with the numbers it has in the whole run (its PRNG key is the one of its place
in the run's list; the first one's when the run does not have it, e.g. a7a with ``--quick``)."""


def dataset_option(
    experiment: str, dataset: str | None, split: Any = None, data_dir: Any = None
) -> str | None:
    """`dataset` (`--dataset`) checked for `experiment`: one of :data:`DATASETS` (w7a
    only when its file is in the data folder), and not with a split file (which names its own
    dataset); `None` runs them all."""
    if dataset is None:
        return None
    if experiment not in DATASETS or split is not None:
        raise InputError(
            f"--dataset is for {' and '.join(DATASETS)} without --split, not "
            f"{experiment}{' with --split' if split is not None else ''} (got {dataset!r})"
        )
    if dataset not in DATASETS[experiment]:
        raise InputError(
            f"--dataset must be one of {list(DATASETS[experiment])} for {experiment}, got "
            f"{dataset!r}"
        )
    if dataset == "w7a" and not transfer_data.has_w7a(data_dir):
        raise InputError(
            "--dataset w7a needs LIBSVM's w7a in the data folder (it is not shipped; see "
            f"--data-dir), none of {list(transfer_data.W7A_FILES)} is there"
        )
    return dataset


@dataclasses.dataclass(frozen=True)
class ZhaoHoiConfig(ExperimentConfig):
    """The options of `zhao-hoi2010-heterogeneous` (and of the homogeneous experiment)."""

    split: Path | None = option(
        help="your own transfer split (.npz: source_order, target_orders, and dataset or your "
        "own x, y; 0-based rows) instead of the shipped orders (see "
        "ojax.datasets.transfer.load_split_file)",
        metavar="FILE",
        file=True,
    )
    dataset: str | None = option(
        help="run this dataset only (homogeneous: usenet2, newsgroup4, spambase, w7a; "
        "heterogeneous: a7a, mushrooms, spambase, w7a), with its numbers of the whole run",
        metavar="NAME",
    )

    def check(self, seeds_given: bool = True) -> tuple[ExperimentConfig, dict[str, Any]]:
        config: ExperimentConfig = self
        if self.split is not None:  # its target orders are the runs: --seeds does not apply
            orders = len(transfer_data.load_split_file(self.split).target_orders)
            if seeds_given and self.seeds != orders:
                raise InputError(
                    f"--seeds {self.seeds} with --split: the split file's {orders} target "
                    "orders are the runs; leave --seeds out"
                )
            config = dataclasses.replace(self, seeds=orders)
        dataset_option(self.name, self.dataset, self.split, self.data_dir)
        return ExperimentConfig.check(config, seeds_given)

    def header(self) -> str:
        if self.split is None:
            return super().header()
        return f"{self.seeds} order{'' if self.seeds == 1 else 's'}"  # the split's orders


@dataclasses.dataclass(frozen=True)
class HomogeneousConfig(ZhaoHoiConfig):
    """The options of `zhao-hoi2010-homogeneous`."""

    order: str | None = option(
        help="the target orders of usenet2 / newsgroup4: the ones shipped in the files "
        "(default; they keep the concept drift) or uniform permutations",
        choices=ORDERS,
    )

    def check(self, seeds_given: bool = True) -> tuple[ExperimentConfig, dict[str, Any]]:
        if self.order is not None and self.split is not None:
            raise InputError(f"--order is for {self.name} without --split, not with --split")
        return super().check(seeds_given)


__all__ = [
    "DATASETS",
    "HomogeneousConfig",
    "ORDERS",
    "ZhaoHoiConfig",
    "dataset_option",
    "order_option",
]
