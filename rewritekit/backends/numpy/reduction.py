"""(to be written) numpy implementations of rewritekit.tensor.reduction."""
