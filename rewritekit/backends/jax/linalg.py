"""JAX implementations of ``rewritekit.tensor.linalg`` (``rt.linalg``).

The LAPACK functions cast their inputs to the node's computation dtype (bool and integers
to float64) first. Matrix products inside JAX's decompositions run at JAX's own precision.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import jax.scipy.linalg

from rewritekit.backends.jax import jax_funcify
from rewritekit.ir import Apply
from rewritekit.tensor import linalg as la


def _lapack(fn: Callable[..., Any], node: Apply) -> Callable[..., Any]:
    """``fn`` on the inputs cast to the node's dtype; every output cast back to it."""
    dtype = node.outputs[0].dtype
    several = len(node.outputs) > 1

    def run(*args: Any) -> Any:
        value = fn(*(jnp.asarray(a, dtype=dtype) for a in args))
        if several:
            return tuple(jnp.asarray(v, dtype=dtype) for v in value)
        return jnp.asarray(value, dtype=dtype)

    return run


TABLE: dict[type[la.LapackOp], Callable[..., Any]] = {
    la.Cholesky: jnp.linalg.cholesky,
    la.Inv: jnp.linalg.inv,
    la.Det: jnp.linalg.det,
    la.Slogdet: lambda a: tuple(jnp.linalg.slogdet(a)),
    la.Solve: jnp.linalg.solve,
}


@jax_funcify.register(la.LapackOp)
def _lapack_op(op: la.LapackOp, node: Apply) -> Callable[..., Any]:
    fn = TABLE.get(type(op))
    if fn is None:
        raise NotImplementedError(f"the jax backend has no implementation for {op}")
    return _lapack(fn, node)


@jax_funcify.register(la.SolveTriangular)
def _solve_triangular(op: la.SolveTriangular, node: Apply) -> Callable[..., Any]:
    return _lapack(lambda a, b: jax.scipy.linalg.solve_triangular(a, b, lower=op.lower), node)


@jax_funcify.register(la.Trace)
def _trace(op: la.Trace, node: Apply) -> Callable[..., Any]:
    dtype = node.outputs[0].dtype
    return lambda a: jnp.trace(jnp.asarray(a), offset=op.offset, axis1=0, axis2=1, dtype=dtype)


@jax_funcify.register(la.AllocDiag)
def _alloc_diag(op: la.AllocDiag, node: Apply) -> Callable[..., Any]:
    return lambda v: jnp.diag(jnp.asarray(v), k=op.k)


@jax_funcify.register(la.ExtractDiag)
def _extract_diag(op: la.ExtractDiag, node: Apply) -> Callable[..., Any]:
    return lambda a: jnp.diag(jnp.asarray(a), k=op.k)
