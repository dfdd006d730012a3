"""(to be written) Op records for rewritekit.tensor.sort."""

RECORDS: list = []
