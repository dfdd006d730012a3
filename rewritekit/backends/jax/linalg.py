"""(to be written) implementations of rewritekit.tensor.linalg."""
