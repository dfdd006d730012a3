"""NumPy implementations of the sorting family: ``rewritekit.tensor.sorting`` (stable
sorts), ``searching`` (nonzero positions, searchsorted) and ``extremes`` (running maxima
and minima, NumPy's ``maximum.accumulate``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from rewritekit.backends.common import arrays, register
from rewritekit.backends.numpy import numpy_funcify
from rewritekit.ir import Apply
from rewritekit.tensor.extremes import Cummax, Cummin, RunningExtreme
from rewritekit.tensor.searching import Nonzero

register(numpy_funcify, arrays.sorting(np))
register(numpy_funcify, arrays.searching(np))


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


@numpy_funcify.register(Cummax)
@numpy_funcify.register(Cummin)
def _running(op: RunningExtreme, node: Apply) -> Callable[..., Any]:
    ufunc = np.maximum if isinstance(op, Cummax) else np.minimum
    return lambda x: ufunc.accumulate(np.asarray(x), axis=op.axis)
