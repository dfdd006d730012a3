"""NumPy and SciPy implementations of ``rewritekit.tensor.linalg`` (``rt.linalg``).

The LAPACK functions first cast their inputs to the node's computation dtype (bool and
integers to float64), so NumPy computes in the dtype the node declares.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.linalg

from rewritekit.backends.numpy import numpy_funcify
from rewritekit.ir import Apply
from rewritekit.tensor import linalg as la


def _lapack(fn: Callable[..., Any], node: Apply) -> Callable[..., Any]:
    """``fn`` on the inputs cast to the node's dtype; every output cast back to it."""
    dtype = np.dtype(node.outputs[0].dtype)
    several = len(node.outputs) > 1

    def run(*args: Any) -> Any:
        value = fn(*(np.asarray(a, dtype=dtype) for a in args))
        if several:
            return tuple(np.asarray(v, dtype=dtype) for v in value)
        return np.asarray(value, dtype=dtype)

    return run


TABLE: dict[type[la.LapackOp], Callable[..., Any]] = {
    la.Cholesky: np.linalg.cholesky,
    la.Inv: np.linalg.inv,
    la.Det: np.linalg.det,
    la.Slogdet: lambda a: tuple(np.linalg.slogdet(a)),
    la.Solve: np.linalg.solve,
}


@numpy_funcify.register(la.LapackOp)
def _lapack_op(op: la.LapackOp, node: Apply) -> Callable[..., Any]:
    fn = TABLE.get(type(op))
    if fn is None:
        raise NotImplementedError(f"the numpy backend has no implementation for {op}")
    return _lapack(fn, node)


@numpy_funcify.register(la.SolveTriangular)
def _solve_triangular(op: la.SolveTriangular, node: Apply) -> Callable[..., Any]:
    return _lapack(
        lambda a, b: scipy.linalg.solve_triangular(a, b, lower=op.lower, check_finite=False), node
    )


@numpy_funcify.register(la.Trace)
def _trace(op: la.Trace, node: Apply) -> Callable[..., Any]:
    dtype = node.outputs[0].dtype
    return lambda a: np.asarray(np.trace(a, offset=op.offset, dtype=dtype))


@numpy_funcify.register(la.AllocDiag)
def _alloc_diag(op: la.AllocDiag, node: Apply) -> Callable[..., Any]:
    return lambda v: np.diag(np.asarray(v), k=op.k)


@numpy_funcify.register(la.ExtractDiag)
def _extract_diag(op: la.ExtractDiag, node: Apply) -> Callable[..., Any]:
    # np.diag returns a read-only view; the copy keeps the caller's array out of reach.
    return lambda a: np.diag(np.asarray(a), k=op.k).copy()
