"""JAX implementations of the products (``rewritekit.tensor.products``).

Every contraction runs at ``Precision.HIGHEST``: on GPUs and TPUs the default precision
rounds float32 operands to bfloat16/TF32, which would not match the NumPy reference.
"""

import jax
import jax.numpy as jnp

from rewritekit.backends.common import algebra, register
from rewritekit.backends.jax import jax_funcify

register(jax_funcify, algebra.products(jnp, precision=jax.lax.Precision.HIGHEST))
