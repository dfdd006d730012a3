"""Op records for the shape Ops (``rewritekit.tensor.shapes``).

Records whose graph reads static lengths (``x.type.shape``) or whose meaning depends on
them (``squeeze`` with ``axis=None``) use ``static_shapes=True``; the others run with every
length unknown, so the ``Shape``/``ShapeI`` nodes and the run-time shape vectors are used.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import rewritekit.tensor as rt
from rewritekit.tensor.shapes import (
    BroadcastTo,
    Concatenate,
    ExpandDims,
    MakeVector,
    Reshape,
    Shape,
    ShapeI,
    Shard,
    Squeeze,
    Transpose,
    shape_i,
)
from rewritekit.tensor.specify import SpecifyShape
from tests.records import OpRecord, values

NUMBERS = ("float64", "float32", "int64", "int32")
ALL = (*NUMBERS, "bool", "uint8", "complex128")


def _arr(data, dtype, shape):
    """An array of any dtype (unsigned ones drawn in [0, 5])."""
    return values(data, dtype, shape, 0 if np.dtype(dtype).kind == "u" else -5, 5)


def _one(min_dims=0, max_dims=3, min_side=0, max_side=4, ones=()):
    """Draws one array; the axes in ``ones`` have length 1."""

    def draw(data, dtype):
        shape = list(
            data.draw(
                hnp.array_shapes(
                    min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side
                )
            )
        )
        for axis in ones:
            shape[axis] = 1
        return [_arr(data, dtype, shape)]

    return draw


def _reversed_shape(data, dtype):
    """x and a template whose shape is x's reversed (so x fits it)."""
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
    return [_arr(data, dtype, shape), _arr(data, dtype, shape[::-1])]


def _broadcastable(data, dtype):
    """x and a template of a shape x broadcasts to (x's lengths: 1 or the template's)."""
    target = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4))
    ndim = data.draw(st.integers(0, len(target)))
    shape = [data.draw(st.sampled_from([1, d])) for d in target[len(target) - ndim :]]
    return [_arr(data, dtype, shape), _arr(data, dtype, target)]


def _joinable(n, axis, *, min_dims=1, second=None):
    """``n`` arrays of one shape except along ``axis``; the second of dtype ``second``."""

    def draw(data, dtype):
        shape = list(
            data.draw(hnp.array_shapes(min_dims=min_dims, max_dims=3, max_side=3, min_side=0))
        )
        arrays = []
        for i in range(n):
            if axis is not None:
                shape[axis] = data.draw(
                    hnp.array_shapes(min_dims=1, max_dims=1, min_side=0, max_side=3)
                )[0]
            arrays.append(_arr(data, second if i == 1 and second else dtype, shape))
        return arrays

    return draw


def _same(n, min_dims=0):
    def draw(data, dtype):
        shape = data.draw(hnp.array_shapes(min_dims=min_dims, max_dims=3, min_side=0, max_side=3))
        return [_arr(data, dtype, shape) for _ in range(n)]

    return draw


def _int_scalars(data, dtype):
    return [values(data, dtype, (), 0, 100) for _ in range(3)]


def _record(name, ops, build, reference, draw, dtypes=NUMBERS, **kw):
    return OpRecord(name, ops, build, reference, draw, dtypes, **kw)


def _sharded(x):
    """A constraint to a 1-device mesh, replicated: the JAX backend applies it, the NumPy
    backend is the identity."""
    import jax
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    mesh = jax.make_mesh((1,), ("a",), axis_types=(jax.sharding.AxisType.Auto,))
    return rt.shard(x * 2, NamedSharding(mesh, P()))


RECORDS = [
    _record("shard", (Shard,), _sharded, lambda x: x * 2, _one(), ("float64", "float32")),
    # --- shape, size -------------------------------------------------------------------
    _record("shape", (Shape,), rt.shape, lambda x: np.array(x.shape, dtype=np.int64), _one(), ALL),
    _record(
        "shape_method",
        (Shape,),
        lambda x: x.shape,
        lambda x: np.array(x.shape, dtype=np.int64),
        _one(min_dims=1),
        ALL,
    ),
    _record(
        "shape_static",
        (),
        rt.shape,
        lambda x: np.array(x.shape, dtype=np.int64),
        _one(),
        static_shapes=True,
        grad=False,
        notes="a constant int64 vector: no float output to differentiate",
    ),
    _record("size", (ShapeI,), lambda x: x.size, lambda x: np.int64(x.size), _one(), ALL),
    _record(
        "shape_i",
        (ShapeI,),
        lambda x: shape_i(x, -1),
        lambda x: np.int64(x.shape[-1]),
        _one(min_dims=1),
    ),
    _record(
        "make_vector",
        (MakeVector,),
        lambda a, b, c: MakeVector()(a, b, c),
        lambda a, b, c: np.array([a, b, c], dtype=np.int64),
        _int_scalars,
        ("int64", "int32", "uint8"),
    ),
    # --- reshape, flatten --------------------------------------------------------------
    _record(
        "reshape_flat",
        (Reshape,),
        lambda x: rt.reshape(x, (-1,)),
        lambda x: x.reshape(-1),
        _one(),
        ALL,
    ),
    _record(
        "reshape_flat_static",
        (Reshape,),
        lambda x: rt.reshape(x, -1),
        lambda x: x.reshape(-1),
        _one(min_dims=2),
        static_shapes=True,
    ),
    _record(
        "reshape_symbolic",
        (Reshape, MakeVector, ShapeI),
        lambda x: rt.reshape(x, (shape_i(x, -1), -1, 1)),
        lambda x: x.reshape(x.shape[-1], -1, 1),
        _one(min_dims=1, min_side=1),
    ),
    _record(
        "reshape_static",
        (Reshape,),
        lambda x: x.reshape(1, x.type.shape[0], -1),
        lambda x: x.reshape(1, x.shape[0], -1),
        _one(min_dims=1, min_side=1),
        static_shapes=True,
    ),
    _record(
        "reshape_to_shape_of",
        (Reshape, Shape),
        lambda x, y: rt.reshape(x, rt.shape(y)),
        lambda x, y: x.reshape(y.shape),
        _reversed_shape,
    ),
    _record("flatten", (Reshape,), lambda x: x.flatten(), lambda x: x.flatten(), _one(), ALL),
    # --- transpose, swapaxes, moveaxis ---------------------------------------------------
    _record("transpose_T", (Transpose,), lambda x: x.T, lambda x: x.T, _one(max_dims=4), ALL),
    _record(
        "transpose_axes",
        (Transpose,),
        lambda x: x.transpose(2, 0, 1),
        lambda x: x.transpose(2, 0, 1),
        _one(min_dims=3, max_dims=3),
    ),
    _record(
        "transpose_static",
        (Transpose,),
        lambda x: rt.transpose(x, (1, 0, -1)),
        lambda x: np.transpose(x, (1, 0, -1)),
        _one(min_dims=3, max_dims=3),
        static_shapes=True,
    ),
    _record(
        "swapaxes",
        (Transpose,),
        lambda x: x.swapaxes(0, -1),
        lambda x: np.swapaxes(x, 0, -1),
        _one(min_dims=1, max_dims=4),
    ),
    _record(
        "moveaxis",
        (Transpose,),
        lambda x: rt.moveaxis(x, 0, -1),
        lambda x: np.moveaxis(x, 0, -1),
        _one(min_dims=1, max_dims=4),
    ),
    _record(
        "moveaxis_tuple",
        (Transpose,),
        lambda x: rt.moveaxis(x, (0, 1), (-1, 0)),
        lambda x: np.moveaxis(x, (0, 1), (-1, 0)),
        _one(min_dims=3, max_dims=4),
    ),
    # --- expand_dims, squeeze ----------------------------------------------------------
    _record(
        "expand_dims",
        (ExpandDims,),
        lambda x: rt.expand_dims(x, 0),
        lambda x: np.expand_dims(x, 0),
        _one(),
        ALL,
    ),
    _record(
        "expand_dims_tuple",
        (ExpandDims,),
        lambda x: rt.expand_dims(x, (-1, 1)),
        lambda x: np.expand_dims(x, (-1, 1)),
        _one(min_dims=1),
    ),
    _record(
        "expand_dims_static",
        (ExpandDims,),
        lambda x: rt.expand_dims(x, (0, 2)),
        lambda x: np.expand_dims(x, (0, 2)),
        _one(min_dims=1),
        static_shapes=True,
    ),
    _record(
        "squeeze_axis",
        (Squeeze,),
        lambda x: rt.squeeze(x, 0),
        lambda x: np.squeeze(x, 0),
        _one(min_dims=1, ones=(0,)),
        ALL,
    ),
    _record(
        "squeeze_tuple",
        (Squeeze,),
        lambda x: x.squeeze(axis=(0, -1)),
        lambda x: np.squeeze(x, axis=(0, -1)),
        _one(min_dims=2, ones=(0, -1)),
    ),
    # axis=None drops the lengths statically known to be 1: with static shapes, NumPy's.
    _record(
        "squeeze_none_static",
        (Squeeze,),
        lambda x: x.squeeze(),
        lambda x: np.squeeze(x),
        _one(max_side=2),
        static_shapes=True,
    ),
    # --- broadcast_to ------------------------------------------------------------------
    _record(
        "broadcast_to",
        (BroadcastTo, Shape),
        lambda x, y: rt.broadcast_to(x, y.shape),
        lambda x, y: np.broadcast_to(x, y.shape),
        _broadcastable,
        ALL,
    ),
    _record(
        "broadcast_to_static",
        (BroadcastTo,),
        lambda x, y: rt.broadcast_to(x, y.type.shape),
        lambda x, y: np.broadcast_to(x, y.shape),
        _broadcastable,
        static_shapes=True,
    ),
    # --- concatenate, stack ------------------------------------------------------------
    _record(
        "concatenate_0",
        (Concatenate,),
        lambda x, y: rt.concatenate([x, y]),
        lambda x, y: np.concatenate([x, y]),
        _joinable(2, 0),
        ALL,
    ),
    _record(
        "concatenate_last_3",
        (Concatenate,),
        lambda x, y, z: rt.concatenate((x, y, z), -1),
        lambda x, y, z: np.concatenate((x, y, z), -1),
        _joinable(3, -1),
    ),
    _record(
        "concatenate_mixed_dtypes",
        (Concatenate,),
        lambda x, y: rt.concatenate([x, y], axis=1),
        lambda x, y: np.concatenate([x, y], axis=1),
        _joinable(2, 1, min_dims=2, second="int32"),
    ),
    _record(
        "concatenate_none",
        (Concatenate, Reshape),
        lambda x, y: rt.concatenate([x, y], axis=None),
        lambda x, y: np.concatenate([x, y], axis=None),
        _joinable(2, None, min_dims=0),
    ),
    _record(
        "concatenate_static",
        (Concatenate,),
        lambda x, y: rt.concatenate([x, y], axis=0),
        lambda x, y: np.concatenate([x, y], axis=0),
        _joinable(2, 0),
        static_shapes=True,
    ),
    _record(
        "stack",
        (ExpandDims, Concatenate),
        lambda x, y: rt.stack([x, y]),
        lambda x, y: np.stack([x, y]),
        _same(2),
        ALL,
    ),
    _record(
        "stack_last_3",
        (ExpandDims, Concatenate),
        lambda x, y, z: rt.stack([x, y, z], -1),
        lambda x, y, z: np.stack([x, y, z], -1),
        _same(3),
    ),
    _record(
        "stack_static",
        (ExpandDims, Concatenate),
        lambda x, y: rt.stack((x, y), axis=1),
        lambda x, y: np.stack((x, y), axis=1),
        _same(2, min_dims=1),
        static_shapes=True,
    ),
]


def _specified(x):
    """``x`` (unknown lengths) with its first length stated; the value is ``x``."""
    n = x.type.shape[0] if x.type.shape[0] is not None else None
    return rt.specify_shape(x, (n, *([None] * (x.ndim - 1)))) * 2


RECORDS += [
    _record(
        "specify_shape",
        (SpecifyShape,),
        lambda x: rt.specify_shape(x, (None,) * x.ndim) * 2 + _specified(x),
        lambda x: x * 4,
        _one(min_dims=1),
        ("float64", "float32"),
    ),
]
