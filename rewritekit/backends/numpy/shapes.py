"""NumPy implementations of the shape Ops (``rewritekit.tensor.shapes``).

Reshape, transpose, expand_dims, squeeze and broadcast_to return NumPy views of their
input, as NumPy does; nothing in a compiled graph writes to its values.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from rewritekit.backends.numpy import numpy_funcify
from rewritekit.ir import Apply
from rewritekit.tensor.shapes import (
    BroadcastTo,
    Concatenate,
    ExpandDims,
    MakeVector,
    Reshape,
    Shape,
    ShapeI,
    Squeeze,
    Transpose,
)


def _ints(vector: Any) -> tuple[int, ...]:
    return tuple(int(d) for d in np.asarray(vector))


@numpy_funcify.register(Shape)
def _shape(op: Shape, node: Apply) -> Callable[..., Any]:
    return lambda x: np.asarray(np.shape(x), dtype=np.int64).reshape(-1)


@numpy_funcify.register(ShapeI)
def _shape_i(op: ShapeI, node: Apply) -> Callable[..., Any]:
    return lambda x: np.asarray(np.shape(x)[op.axis], dtype=np.int64)


@numpy_funcify.register(MakeVector)
def _make_vector(op: MakeVector, node: Apply) -> Callable[..., Any]:
    return lambda *scalars: np.array([int(s) for s in scalars], dtype=np.int64).reshape(-1)


@numpy_funcify.register(Reshape)
def _reshape(op: Reshape, node: Apply) -> Callable[..., Any]:
    return lambda x, shape: np.reshape(x, _ints(shape))


@numpy_funcify.register(BroadcastTo)
def _broadcast_to(op: BroadcastTo, node: Apply) -> Callable[..., Any]:
    return lambda x, shape: np.broadcast_to(x, _ints(shape))


@numpy_funcify.register(Transpose)
def _transpose(op: Transpose, node: Apply) -> Callable[..., Any]:
    return lambda x: np.transpose(x, op.axes)


@numpy_funcify.register(ExpandDims)
def _expand_dims(op: ExpandDims, node: Apply) -> Callable[..., Any]:
    return lambda x: np.expand_dims(x, op.axes)


@numpy_funcify.register(Squeeze)
def _squeeze(op: Squeeze, node: Apply) -> Callable[..., Any]:
    return lambda x: np.squeeze(x, axis=op.axes)


@numpy_funcify.register(Concatenate)
def _concatenate(op: Concatenate, node: Apply) -> Callable[..., Any]:
    out = np.dtype(node.outputs[0].dtype)
    return lambda *xs: np.concatenate(xs, axis=op.axis, dtype=out)
