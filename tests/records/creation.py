"""(to be written) Op records for rewritekit.tensor.creation."""

RECORDS: list = []
