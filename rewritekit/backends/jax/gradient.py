"""JAX implementations of the differentiation Ops (``rewritekit.tensor.gradient``)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from rewritekit.backends.common import reductions, register
from rewritekit.backends.jax import jax_funcify

register(jax_funcify, reductions.gradient(jnp, stop_gradient=jax.lax.stop_gradient))
