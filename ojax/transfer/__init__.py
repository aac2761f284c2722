"""Online transfer learning (Zhao & Hoi 2010): kernels, kernel PA, PAIO, OTL, COTL, baselines.

Every learner is an :class:`ojax.core.Predictor` run by :func:`ojax.run` (mistakes as the
`zero_one` loss, support vectors and weights as `record` functions). Modules:

* :mod:`ojax.transfer.kernels`: Gram matrix, support-vector buffer, budget;
* :mod:`ojax.transfer.pa`: kernel PA-I, PAIO, the averaged source classifier;
* :mod:`ojax.transfer.homogeneous`: OTL, OTL(fixed), HomOTL-II, the four methods in one scan;
* :mod:`ojax.transfer.heterogeneous`: COTL, COTL0, SCT over two views;
* :mod:`ojax.transfer.runner`: the pool, the records, :func:`run_kernel` over orders;
* :mod:`ojax.transfer.split`: :func:`run_split` on a split of one's own (source order and
  target orders), and the methods of a split ready to run;
* :mod:`ojax.transfer.linear_passive_aggressive`: linear PA-I, a plain predictor.

Example (a split of one's own; orders are 0-based rows: MATLAB's `ID_ALL` minus 1)::

    from ojax import transfer
    results = transfer.run_split(source_x, source_y, source_order,
                                 target_x, target_y, target_orders,
                                 methods=("PA", "PAIO", "OTL_fixed", "OTL"))
    results["OTL"].mistakes          # (P, T), counted before each update
    results["OTL"].support_vectors   # (P, T), |SV(h)| included
    results["OTL"].mistake_rate      # (P, T) running rate of mistakes (%)
"""

from ojax.transfer import heterogeneous, homogeneous, kernels, pa, registry, split
from ojax.transfer.heterogeneous import (
    COTLParams,
    COTLState,
    SCTParams,
    SCTState,
    cotl,
    cotl0,
    sct,
)
from ojax.transfer.homogeneous import (
    HOMOGENEOUS_HEADS,
    HomogeneousParams,
    HomogeneousState,
    HomOTL2Params,
    HomOTL2State,
    OTLParams,
    OTLState,
    homogeneous_methods,
    homotl2,
    homotl2_weights,
    otl,
    otl_fixed,
)
from ojax.transfer.kernels import (
    KernelPoint,
    SVBuffer,
    gaussian_kernel,
    gram_matrix,
    linear_kernel,
    squared_distances,
)
from ojax.transfer.linear_passive_aggressive import LinearPAParams, LinearPAState, linear_pa
from ojax.transfer.pa import (
    AveragedPAState,
    KernelPAParams,
    KernelPAState,
    averaged_kernel_pa,
    kernel_pa,
    paio,
    source_classifier,
)
from ojax.transfer.runner import (
    kernel_pool,
    permutations,
    run_kernel,
    run_orders,
    support_vectors,
    support_vectors_record,
    weights_record,
)
from ojax.transfer.split import (
    HETEROGENEOUS_METHODS,
    HOMOGENEOUS_METHODS,
    MethodRun,
    SplitResult,
    TransferSetup,
    mistake_rate,
    paper_params,
    prepare_transfer,
    run_split,
    source_outputs,
    train_source,
)

__all__ = [
    "AveragedPAState",
    "COTLParams",
    "COTLState",
    "HETEROGENEOUS_METHODS",
    "HOMOGENEOUS_HEADS",
    "HOMOGENEOUS_METHODS",
    "HomogeneousParams",
    "HomogeneousState",
    "HomOTL2Params",
    "HomOTL2State",
    "KernelPAParams",
    "KernelPAState",
    "KernelPoint",
    "LinearPAParams",
    "LinearPAState",
    "MethodRun",
    "OTLParams",
    "OTLState",
    "SCTParams",
    "SCTState",
    "SVBuffer",
    "SplitResult",
    "TransferSetup",
    "averaged_kernel_pa",
    "cotl",
    "cotl0",
    "gaussian_kernel",
    "gram_matrix",
    "heterogeneous",
    "homogeneous",
    "homogeneous_methods",
    "homotl2",
    "homotl2_weights",
    "kernel_pa",
    "kernel_pool",
    "kernels",
    "linear_kernel",
    "linear_pa",
    "mistake_rate",
    "otl",
    "otl_fixed",
    "pa",
    "paio",
    "paper_params",
    "permutations",
    "prepare_transfer",
    "registry",
    "run_kernel",
    "run_orders",
    "run_split",
    "sct",
    "source_classifier",
    "source_outputs",
    "split",
    "squared_distances",
    "support_vectors",
    "support_vectors_record",
    "train_source",
    "weights_record",
]
