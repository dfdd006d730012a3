"""NumPy and SciPy implementations of ``rewritekit.tensor.linalg`` (``rt.linalg``)."""

import functools

import numpy as np
import scipy.linalg

from rewritekit.backends.common import algebra, register
from rewritekit.backends.numpy import numpy_funcify
from rewritekit.tensor import linalg as la

# SciPy's check_finite would raise on inf and NaN; they propagate instead, as in JAX
_solve_triangular = functools.partial(scipy.linalg.solve_triangular, check_finite=False)
register(
    numpy_funcify,
    algebra.linalg(np, _solve_triangular, scipy.linalg.expm)
    | {
        # np.diag returns a read-only view; the copy keeps the caller's array out of reach.
        la.ExtractDiag: lambda op, node: lambda a: np.diag(np.asarray(a), k=op.k).copy(),
    },
)
