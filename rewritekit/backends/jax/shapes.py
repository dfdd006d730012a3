"""JAX implementations of the shape Ops (``rewritekit.tensor.shapes``)."""

import jax
import jax.numpy as jnp

from rewritekit.backends.common import arrays, register
from rewritekit.backends.jax import jax_funcify
from rewritekit.tensor import shapes as sh


def _make_vector(*scalars: jnp.ndarray) -> jnp.ndarray:
    return jnp.stack([jnp.asarray(s).astype(jnp.int64) for s in scalars])


# JAX's MakeVector stacks its scalars, which may be traced
register(
    jax_funcify,
    arrays.shapes(jnp)
    | {
        sh.MakeVector: lambda op, node: _make_vector,
        sh.Shard: lambda op, node: lambda x: jax.lax.with_sharding_constraint(x, op.spec),
    },
)
