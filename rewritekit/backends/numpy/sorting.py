"""NumPy implementations of ``rewritekit.tensor.sorting`` (stable sorts)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from rewritekit.backends.common import arrays, register
from rewritekit.backends.numpy import numpy_funcify
from rewritekit.ir import Apply
from rewritekit.tensor.searching import Nonzero

register(numpy_funcify, arrays.sorting(np))


@numpy_funcify.register(Nonzero)
def _nonzero(op: Nonzero, node: Apply) -> Callable[..., Any]:
    def run(x: Any) -> Any:
        found = []
        for positions in np.nonzero(np.asarray(x)):
            padded = np.full(op.size, op.fill_value, dtype=np.int64)
            count = min(op.size, positions.size)
            padded[:count] = positions[:count]
            found.append(padded)
        return found[0] if len(found) == 1 else tuple(found)  # one output: its array

    return run
