"""JAX implementations of the elementwise Ops (``rewritekit.tensor.elemwise``)."""

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp

from rewritekit.backends.common import elementwise, register
from rewritekit.backends.jax import jax_funcify
from rewritekit.ir import Apply
from rewritekit.tensor import elemwise as ew

TABLE = elementwise.elemwise_functions(jnp) | {
    # jnp.clip is maximum(lo, x), the arguments the other way round: spelled out
    ew.Clip: lambda x, lo, hi: jnp.minimum(jnp.maximum(x, lo), hi),
}


def elemwise_impl(fn: Callable[..., Any], node: Apply) -> Callable[..., Any]:
    """``fn`` with the inputs cast to the Op's computation dtypes and the result to its type.

    The dtypes are static, so the casts cost nothing at run time where they are no-ops.
    """
    return elementwise.elemwise_impl(jnp, fn, node)


register(jax_funcify, elementwise.elemwise(jnp, TABLE))
