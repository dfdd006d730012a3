"""JAX implementations of ``rewritekit.tensor.sorting`` (stable sorts)."""

import jax.numpy as jnp

from rewritekit.backends.common import arrays, register
from rewritekit.backends.jax import jax_funcify

register(jax_funcify, arrays.sorting(jnp))
