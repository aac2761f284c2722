"""SciPy is imported only when used: `ojax.sparse` and the command's start-up."""

import subprocess
import sys

import numpy as np
import scipy.sparse

from ojax.sparse import issparse, scipy_sparse


def test_issparse_matches_scipy():
    dense = np.eye(3)
    assert not issparse(dense)
    assert issparse(scipy.sparse.csr_matrix(dense))
    assert scipy_sparse() is scipy.sparse


def test_command_start_up_imports_no_scipy():
    code = (
        "import sys, ojax.app.cli, ojax.experiments\n"
        "print(sorted(m for m in sys.modules if m == 'scipy' or m.startswith('scipy.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
