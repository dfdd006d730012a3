"""JAX implementations of the reductions (``rewritekit.tensor.reduction``).

Softmax and log-softmax are ``jax.nn``'s; ``logsumexp``'s shift is a constant
(``stop_gradient``), so ``jax.grad`` gives no NaN where a slice is all -inf (its gradient
there is 0).
"""

import jax
import jax.numpy as jnp

from rewritekit.backends.common import reductions, register
from rewritekit.backends.jax import jax_funcify

register(
    jax_funcify,
    reductions.reduction(
        jnp,
        jax.nn.softmax,
        jax.nn.log_softmax,
        lambda x, axis: jax.lax.cumlogsumexp(x, axis=axis),
        jax.lax.stop_gradient,
    ),
)
