"""JAX implementations of ``rewritekit.tensor.linalg`` (``rt.linalg``).

Matrix products inside JAX's decompositions run at JAX's own precision.
"""

import jax.numpy as jnp
import jax.scipy.linalg

from rewritekit.backends.common import algebra, register
from rewritekit.backends.jax import jax_funcify

# eigh reads one triangle, as NumPy's (JAX's default symmetrizes the matrix first)
register(
    jax_funcify,
    algebra.linalg(
        jnp, jax.scipy.linalg.solve_triangular, jax.scipy.linalg.expm, symmetrize_input=False
    ),
)
