"""(to be written) Op records for rewritekit.tensor.shape."""

RECORDS: list = []
