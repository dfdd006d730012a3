"""The products (``rewritekit.tensor.products``) and linear algebra
(``rewritekit.tensor.linalg``, ``rt.linalg``) over an array module ``xp``.

Each product is the library's own function on its inputs cast to the node's declared
dtype (NumPy's promotion, which the Ops follow; ``jax.numpy`` promotes int64 with float32
to float32, and a float32 x int64 product computed in it overflowed where NumPy's float64
did not), returned as an array of that dtype, so 0-d results are arrays rather than NumPy
scalars. The LAPACK functions first cast their
inputs to the node's computation dtype (bool and integers to float64), so both libraries
compute in the dtype the node declares.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from rewritekit.backends.common import Table
from rewritekit.ir import Apply
from rewritekit.tensor import linalg as la
from rewritekit.tensor import products as pr


def typed(xp: Any, fn: Callable[..., Any], node: Apply) -> Callable[..., Any]:
    """``fn`` on the inputs cast to the node's dtype, its result in that dtype."""
    out = np.dtype(node.outputs[0].dtype)
    dtypes = [np.dtype(i.dtype) for i in node.inputs]

    def run(*args: Any) -> Any:
        # Inputs may be NumPy constants: give them their declared dtypes before jnp mixes
        # them with traced arrays; then the node's, so that jnp does not promote its way.
        xs = [xp.asarray(a, dtype=d) for a, d in zip(args, dtypes, strict=True)]
        xs = [x if x.dtype == out else x.astype(out) for x in xs]
        value = xp.asarray(fn(*xs))
        return value if value.dtype == out else value.astype(out)

    return run


def products(xp: Any, **precision: Any) -> Table:
    """The products over ``xp``; every contraction but ``outer`` takes ``precision``."""

    def tensordot(op: pr.Tensordot, node: Apply) -> Callable[..., Any]:
        axes = (list(op.axes[0]), list(op.axes[1]))
        return typed(xp, lambda a, b: xp.tensordot(a, b, axes=axes, **precision), node)

    return {
        pr.Dot: lambda op, node: typed(xp, lambda a, b: xp.dot(a, b, **precision), node),
        pr.MatMul: lambda op, node: typed(xp, lambda a, b: xp.matmul(a, b, **precision), node),
        pr.Outer: lambda op, node: typed(xp, xp.outer, node),
        pr.Tensordot: tensordot,
        pr.Einsum: lambda op, node: typed(
            xp, lambda *xs: xp.einsum(op.subscripts, *xs, **precision), node
        ),
    }


def lapack(xp: Any, fn: Callable[..., Any], node: Apply) -> Callable[..., Any]:
    """``fn`` on the inputs cast to the node's dtype; every output cast back to it."""
    dtype = np.dtype(node.outputs[0].dtype)
    several = len(node.outputs) > 1

    def run(*args: Any) -> Any:
        value = fn(*(xp.asarray(a, dtype=dtype) for a in args))
        if several:
            return tuple(xp.asarray(v, dtype=dtype) for v in value)
        return xp.asarray(value, dtype=dtype)

    return run


def linalg(
    xp: Any, solve_triangular: Callable[..., Any], expm: Callable[..., Any], **eigh_options: Any
) -> Table:
    """The linear algebra Ops over ``xp``, with the library's ``solve_triangular(a, b, lower)``
    and ``expm(a)``; ``eigh_options`` go to ``xp.linalg.eigh`` and ``eigvalsh``."""

    def trace(op: la.Trace, node: Apply) -> Callable[..., Any]:
        dtype = node.outputs[0].dtype
        return lambda a: xp.asarray(
            xp.trace(xp.asarray(a), offset=op.offset, axis1=0, axis2=1, dtype=dtype)
        )

    return {
        la.Cholesky: lambda op, node: lapack(xp, xp.linalg.cholesky, node),
        la.Inv: lambda op, node: lapack(xp, xp.linalg.inv, node),
        la.Det: lambda op, node: lapack(xp, xp.linalg.det, node),
        la.Slogdet: lambda op, node: lapack(xp, lambda a: tuple(xp.linalg.slogdet(a)), node),
        la.Solve: lambda op, node: lapack(xp, xp.linalg.solve, node),
        la.SolveTriangular: lambda op, node: lapack(
            xp, lambda a, b: solve_triangular(a, b, lower=op.lower), node
        ),
        la.Trace: trace,
        **decompositions(xp, expm, eigh_options),
        la.AllocDiag: lambda op, node: lambda v: xp.diag(xp.asarray(v), k=op.k),
        la.ExtractDiag: lambda op, node: lambda a: xp.diag(xp.asarray(a), k=op.k),
    }


def decompositions(xp: Any, expm: Callable[..., Any], eigh_options: dict[str, Any]) -> Table:
    """``svd``, ``eigh``, ``qr``, ``pinv`` and ``expm`` (``rewritekit.tensor.decompositions``)."""

    def eigh(op: la.Eigh, node: Apply) -> Callable[..., Any]:
        uplo = "L" if op.lower else "U"
        fn = xp.linalg.eigh if op.vectors else xp.linalg.eigvalsh
        return lapack(xp, lambda a: fn(a, UPLO=uplo, **eigh_options), node)

    def pinv(op: la.Pinv, node: Apply) -> Callable[..., Any]:
        eps = float(np.finfo(node.outputs[0].dtype).eps)

        def run(a: Any) -> Any:
            # NumPy's default rtol (max(m, n) * eps), not JAX's (ten times that)
            rtol = max(a.shape[-2:], default=0) * eps if op.rtol is None else op.rtol
            return xp.linalg.pinv(a, rtol=rtol, hermitian=op.hermitian)

        return lapack(xp, run, node)

    return {
        la.Svd: lambda op, node: lapack(
            xp,
            lambda a: xp.linalg.svd(a, full_matrices=op.full_matrices, compute_uv=op.compute_uv),
            node,
        ),
        la.Eigh: eigh,
        la.Qr: lambda op, node: lapack(xp, lambda a: xp.linalg.qr(a, mode=op.mode), node),
        la.Expm: lambda op, node: lapack(xp, expm, node),
        la.Pinv: pinv,
    }
