"""JAX implementations of the creation Ops (``rewritekit.tensor.creation``)."""

import jax.numpy as jnp

from rewritekit.backends.common import arrays, register
from rewritekit.backends.jax import jax_funcify

register(jax_funcify, arrays.creation(jnp))
