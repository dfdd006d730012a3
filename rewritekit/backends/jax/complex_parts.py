"""JAX implementations of the parts of complex numbers (``rewritekit.tensor.complex_parts``):
``jax.numpy``'s, and ``lax.complex`` (which takes operands of one shape: broadcast first)."""

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
from jax import lax

from rewritekit.backends.common import elementwise, register
from rewritekit.backends.jax import jax_funcify
from rewritekit.tensor import complex_parts as cp

TABLE: dict[type, Callable[..., Any]] = {
    cp.Real: jnp.real,
    cp.Imag: jnp.imag,
    cp.Conj: jnp.conj,
    cp.Complex: lambda re, im: lax.complex(*jnp.broadcast_arrays(re, im)),
}

register(
    jax_funcify,
    {
        cls: (lambda op, node, fn=fn: elementwise.elemwise_impl(jnp, fn, node))
        for cls, fn in TABLE.items()
    },
)
