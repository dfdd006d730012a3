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
from rewritekit.tensor.dynamic import DynamicSlice, DynamicUpdateSlice
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


def _window(shape: tuple[int, ...], axes: tuple[int, ...], sizes: Any, starts: Any) -> tuple:
    """The index of the window at the starts, JAX's rule: a negative start counts from the
    end, then it is clamped into ``[0, n - size]``."""
    where = [slice(None)] * len(shape)
    for axis, size, start in zip(axes, sizes, starts, strict=True):
        n, first = shape[axis], int(start)
        first = min(max(first + n if first < 0 else first, 0), n - size)
        where[axis] = slice(first, first + size)
    return tuple(where)


@numpy_funcify.register(DynamicSlice)
def _dynamic_slice(op: DynamicSlice, node: Apply) -> Callable[..., Any]:
    def run(x: Any, *starts: Any) -> np.ndarray:
        x = np.asarray(x)
        return x[_window(x.shape, op.axes, op.sizes, starts)]

    return run


@numpy_funcify.register(DynamicUpdateSlice)
def _dynamic_update_slice(op: DynamicUpdateSlice, node: Apply) -> Callable[..., Any]:
    def run(x: Any, update: Any, *starts: Any) -> np.ndarray:
        out = np.array(x, copy=True)
        update = np.asarray(update)
        sizes = [update.shape[a] for a in op.axes]
        out[_window(out.shape, op.axes, sizes, starts)] = update
        return out

    return run
