"""(to be written) Op records for rewritekit.tensor.linalg."""

RECORDS: list = []
