"""JAX implementations of the Fourier transforms (``rewritekit.tensor.fft``):
``jax.numpy.fft`` (XLA's FFT; ``jax.grad`` uses JAX's transpose rules)."""

import jax.numpy as jnp

from rewritekit.backends.common import fourier, register
from rewritekit.backends.jax import jax_funcify

register(jax_funcify, fourier.fft(jnp))
