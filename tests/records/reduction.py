"""(to be written) Op records for rewritekit.tensor.reduction."""

RECORDS: list = []
