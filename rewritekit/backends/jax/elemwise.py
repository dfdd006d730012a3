"""JAX implementations of the elementwise Ops (``rewritekit.tensor.elemwise``)."""

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from rewritekit.backends.common import elementwise, register
from rewritekit.backends.jax import jax_funcify
from rewritekit.ir import Apply
from rewritekit.tensor import elemwise as ew


def expensive_identity(v: jax.Array) -> jax.Array:
    """``v`` itself, bit for bit (NaN stays NaN), computed as ``v / (1 + 0 * min(|v|, 1))``.

    XLA's fusion copies an op it counts as cheap (add, multiply, select, max, abs) into
    every use; a ``divide`` it does not copy. Ending a multi-op lowering with this divide
    stops XLA from copying a deep chain's earlier steps into each step (docs/backends.md,
    "What XLA punishes"). XLA does not fold ``0 * x`` for floats (it is NaN for inf), so the
    divide stays; the denominator is exactly 1 for every number, inf included.
    """
    return v / (1 + 0 * jnp.minimum(jnp.abs(v), 1))


def _logaddexp(a: jax.Array, b: jax.Array) -> jax.Array:
    """``jnp.logaddexp`` (``max(a, b) + log1p(exp(-|a - b|))``, ``a + b`` where ``a - b`` is
    NaN) ended on ``expensive_identity``: its ``max`` and ``where`` are cheap paths from the
    inputs to the result, and a deep chain compiled 11.7 s at K = 100 without the cut
    (``bench/xla_depth.py``, case ``logaddexp``; docs/backends.md, "What XLA punishes")."""
    return expensive_identity(jnp.logaddexp(a, b))


TABLE = elementwise.elemwise_functions(jnp) | {
    # jnp.clip is maximum(lo, x), the arguments the other way round: spelled out
    ew.Clip: lambda x, lo, hi: jnp.minimum(jnp.maximum(x, lo), hi),
    ew.Logaddexp: _logaddexp,
}


def elemwise_impl(fn: Callable[..., Any], node: Apply) -> Callable[..., Any]:
    """``fn`` with the inputs cast to the Op's computation dtypes and the result to its type.

    The dtypes are static, so the casts cost nothing at run time where they are no-ops.
    """
    return elementwise.elemwise_impl(jnp, fn, node)


register(jax_funcify, elementwise.elemwise(jnp, TABLE))
