"""JAX implementations of the differentiation Ops (``rewritekit.tensor.gradient``).

``Jacobian`` runs its vjp graph under ``jax.vmap`` over the one-hot cotangents, so the
whole Jacobian is one batched computation inside the caller's ``jax.jit``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from rewritekit.backends.common import reductions, register
from rewritekit.backends.jax import _implement, jax_funcify
from rewritekit.backends.lowering import lower
from rewritekit.ir import Apply
from rewritekit.tensor import gradient as gr

register(jax_funcify, reductions.gradient(jnp, stop_gradient=jax.lax.stop_gradient))


@jax_funcify.register(gr.Jacobian)
def _jacobian(op: gr.Jacobian, node: Apply) -> Callable[..., Any]:
    inner = lower([op.cotangent, *op.inner_inputs], [op.vjp_graph], _implement)

    def run(*args: Any) -> Any:
        *values, shape = args
        out_shape = tuple(int(n) for n in shape)
        size = math.prod(out_shape)
        basis = jnp.eye(size, dtype=op.cotangent.dtype).reshape(size, *out_shape)
        rows = jax.vmap(lambda u: inner(u, *values)[0])(basis)
        return rows.reshape((*out_shape, *rows.shape[1:]))

    return run
