"""NumPy implementations of the indexing Ops (``rewritekit.tensor.subtensor``).

``Subtensor`` returns what ``x[idx]`` returns (a view for basic indexing); the updates
work on a copy of ``x``. Out-of-range run-time indices raise NumPy's ``IndexError``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from rewritekit.backends.common import arrays, register
from rewritekit.backends.common.arrays import index
from rewritekit.backends.numpy import numpy_funcify
from rewritekit.ir import Apply
from rewritekit.tensor.subtensor import IncSubtensor, SetSubtensor

register(numpy_funcify, arrays.subtensor(np))


@numpy_funcify.register(SetSubtensor)
def _set_subtensor(op: SetSubtensor, node: Apply) -> Callable[..., Any]:
    def run(x: Any, value: Any, *parts: Any) -> np.ndarray:
        out = np.array(x, copy=True)
        out[index(op, parts)] = value  # repeated indices: the last write wins
        return out

    return run


@numpy_funcify.register(IncSubtensor)
def _inc_subtensor(op: IncSubtensor, node: Apply) -> Callable[..., Any]:
    advanced = op.is_advanced

    def run(x: Any, value: Any, *parts: Any) -> np.ndarray:
        out = np.array(x, copy=True)
        where = index(op, parts)
        if advanced:
            np.add.at(out, where, value)  # every occurrence of a repeated index adds
        else:
            out[where] += value
        return out

    return run
