"""(to be written) jax implementations of rewritekit.tensor.creation."""
