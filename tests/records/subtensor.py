"""(to be written) Op records for rewritekit.tensor.subtensor."""

RECORDS: list = []
