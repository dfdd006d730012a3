"""(to be written) Op records for rewritekit.tensor.products."""

RECORDS: list = []
