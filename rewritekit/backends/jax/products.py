"""JAX implementations of the products (``rewritekit.tensor.products``).

Every contraction runs at ``Precision.HIGHEST``: on GPUs and TPUs the default precision
rounds float32 operands to bfloat16/TF32, which would not match the NumPy reference.
Results are cast to the node's declared dtype (NumPy's promotion).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from rewritekit.backends.jax import jax_funcify
from rewritekit.ir import Apply
from rewritekit.tensor import products as pr

HIGHEST = jax.lax.Precision.HIGHEST


def _typed(fn: Callable[..., Any], node: Apply) -> Callable[..., Any]:
    out = node.outputs[0].dtype
    dtypes = [i.dtype for i in node.inputs]

    def run(*args: Any) -> jax.Array:
        # Inputs may be NumPy constants: give them their declared dtypes before jnp mixes
        # them with traced arrays.
        xs = [jnp.asarray(a, dtype=d) for a, d in zip(args, dtypes, strict=True)]
        value = fn(*xs)
        return value if value.dtype == out else value.astype(out)

    return run


@jax_funcify.register(pr.Dot)
def _dot(op: pr.Dot, node: Apply) -> Callable[..., Any]:
    return _typed(lambda a, b: jnp.dot(a, b, precision=HIGHEST), node)


@jax_funcify.register(pr.MatMul)
def _matmul(op: pr.MatMul, node: Apply) -> Callable[..., Any]:
    return _typed(lambda a, b: jnp.matmul(a, b, precision=HIGHEST), node)


@jax_funcify.register(pr.Outer)
def _outer(op: pr.Outer, node: Apply) -> Callable[..., Any]:
    return _typed(jnp.outer, node)


@jax_funcify.register(pr.Tensordot)
def _tensordot(op: pr.Tensordot, node: Apply) -> Callable[..., Any]:
    axes = (list(op.axes[0]), list(op.axes[1]))
    return _typed(lambda a, b: jnp.tensordot(a, b, axes=axes, precision=HIGHEST), node)


@jax_funcify.register(pr.Einsum)
def _einsum(op: pr.Einsum, node: Apply) -> Callable[..., Any]:
    return _typed(lambda *xs: jnp.einsum(op.subscripts, *xs, precision=HIGHEST), node)
