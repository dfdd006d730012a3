"""NumPy implementations of the indexing Ops (``rewritekit.tensor.subtensor``).

``Subtensor`` returns what ``x[idx]`` returns (a view for basic indexing); the updates
work on a copy of ``x``. An index out of bounds follows the Op's mode: "raise" raises
``GraphIndexError`` (``backends.common.bounds``), "clip" clamps the index, and "fill"
indexes ``x`` padded by one element of the fill value on each axis that has an index out
of bounds, with those indices moved to the pad (so reads give the fill value and writes
land in the pad, which is cut off: NumPy's rules for repeated and broadcast indices hold).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from rewritekit.backends.common import bounds
from rewritekit.backends.common.arrays import index
from rewritekit.backends.numpy import numpy_funcify
from rewritekit.errors import GraphIndexError
from rewritekit.ir import Apply
from rewritekit.tensor.dynamic import DynamicSlice, DynamicUpdateSlice
from rewritekit.tensor.subtensor import (
    IncSubtensor,
    IndexOp,
    SetSubtensor,
    Subtensor,
    default_fill_value,
)


def _resolve(
    op: IndexOp, checks: Sequence[bounds.Position], where: tuple, shape: tuple[int, ...]
) -> tuple[tuple, list[int]]:
    """The index tuple ``where`` with its integer entries made in bounds by the Op's mode,
    and the axes to pad by one element ("fill" only; their out-of-bounds indices point at
    the pad)."""
    where, padded = list(where), []
    for position in checks:
        value, n = where[position.entry], shape[position.axis]
        if op.mode == "clip":
            if n == 0 and np.size(value):
                raise GraphIndexError(bounds.clip_message(op, position))
            where[position.entry] = np.clip(np.where(value < 0, value + n, value), 0, n - 1)
            continue
        ok, bad = bounds.bounds(np, value, n)
        if ok:
            continue
        if op.mode == "raise":
            raise GraphIndexError(bounds.message(op, position, int(bad), n))
        inside = (value >= -n) & (value < n)  # "fill": the others point at the pad
        where[position.entry] = np.where(inside, np.where(value < 0, value + n, value), n)
        padded.append(position.axis)
    return tuple(where), padded


def _padded(x: np.ndarray, axes: list[int], value: Any) -> np.ndarray:
    widths = [(0, 1) if axis in axes else (0, 0) for axis in range(x.ndim)]
    return np.pad(x, widths, constant_values=value)


@numpy_funcify.register(Subtensor)
def _subtensor(op: Subtensor, node: Apply) -> Callable[..., Any]:
    checks = bounds.positions(op, node)
    fill = default_fill_value(node.inputs[0].dtype) if op.fill_value is None else op.fill_value

    def run(x: Any, *parts: Any) -> np.ndarray:
        x = np.asarray(x)
        where = index(op, parts)
        if not checks:
            return x[where]
        where, padded = _resolve(op, checks, where, x.shape)
        return (_padded(x, padded, fill) if padded else x)[where]

    return run


def _updater(
    op: SetSubtensor | IncSubtensor, node: Apply, write: Callable[[np.ndarray, tuple, Any], None]
) -> Callable[..., Any]:
    """An update of a copy of ``x`` by ``write(out, where, value)``; in mode "fill", on a
    padded copy whose pad is cut off after."""
    checks = bounds.positions(op, node)

    def run(x: Any, value: Any, *parts: Any) -> np.ndarray:
        out = np.array(x, copy=True)
        where, padded = _resolve(op, checks, index(op, parts), out.shape)
        if not padded:
            write(out, where, value)
            return out
        grown = _padded(out, padded, 0)
        write(grown, where, value)
        return np.ascontiguousarray(grown[tuple(slice(0, n) for n in out.shape)])

    return run


@numpy_funcify.register(SetSubtensor)
def _set_subtensor(op: SetSubtensor, node: Apply) -> Callable[..., Any]:
    def write(out: np.ndarray, where: tuple, value: Any) -> None:
        out[where] = value  # repeated indices: the last write wins

    return _updater(op, node, write)


@numpy_funcify.register(IncSubtensor)
def _inc_subtensor(op: IncSubtensor, node: Apply) -> Callable[..., Any]:
    advanced = op.is_advanced

    def write(out: np.ndarray, where: tuple, value: Any) -> None:
        if advanced:
            np.add.at(out, where, value)  # every occurrence of a repeated index adds
        else:
            out[where] += value

    return _updater(op, node, write)


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
