"""Op records for the creation Ops (``rewritekit.tensor.creation``).

Shapes and ``arange`` bounds come from the inputs' shapes (``rt.shape``, ``rt.size``,
``shape_i``), so they are static while JAX traces, as the JAX backend needs; fill values
and ``eye``'s offset ``k`` are traced inputs.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import rewritekit.tensor as rt
from rewritekit.tensor.creation import Alloc, Arange, Eye
from rewritekit.tensor.shapes import BroadcastTo, MakeVector, Shape, ShapeI, shape_i
from tests.records import OpRecord, values

NUMBERS = ("float64", "float32", "int64", "int32")
ALL = (*NUMBERS, "bool", "uint8", "complex128")


def _arr(data, dtype, shape, lo=-5, hi=5):
    return values(data, dtype, shape, 0 if np.dtype(dtype).kind == "u" else lo, hi)


def _template(min_dims=0, max_dims=3, max_side=4, fill=False):
    """A template array (its shape is used), and with ``fill`` a 0-d fill value."""

    def draw(data, dtype):
        shape = data.draw(
            hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=0, max_side=max_side)
        )
        arrays = [_arr(data, dtype, shape)]
        return [*arrays, _arr(data, dtype, ())] if fill else arrays

    return draw


def _array_fill(data, dtype):
    """A template and a fill value that broadcasts to its shape."""
    target = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4))
    ndim = data.draw(st.integers(0, len(target)))
    shape = [data.draw(st.sampled_from([1, d])) for d in target[len(target) - ndim :]]
    return [_arr(data, dtype, target), _arr(data, dtype, shape)]


def _matrix_and_k(data, dtype):
    shape = data.draw(hnp.array_shapes(min_dims=2, max_dims=2, min_side=0, max_side=4))
    return [_arr(data, dtype, shape), values(data, "int64", (), -5, 5)]


_INT_RESULT = "an int64 result: there is no float output to differentiate"


def _record(name, ops, build, reference, draw, dtypes=NUMBERS, **kw):
    return OpRecord(name, ops, build, reference, draw, dtypes, **kw)


RECORDS = [
    # --- alloc: zeros, ones, full and the *_like functions -----------------------------
    _record("zeros_like", (Alloc, Shape), rt.zeros_like, np.zeros_like, _template(), ALL),
    _record(
        "ones_like_dtype",
        (Alloc, Shape),
        lambda x: rt.ones_like(x, dtype="int32"),
        lambda x: np.ones_like(x, dtype="int32"),
        _template(),
        ALL,
    ),
    _record("full_like", (Alloc, Shape), rt.full_like, np.full_like, _template(fill=True), ALL),
    _record(
        "full_like_cast",
        (Alloc, Shape),
        lambda x, v: rt.full_like(x, v, dtype="float32"),
        lambda x, v: np.full_like(x, v, dtype="float32"),
        _template(fill=True),
    ),
    _record(
        "full_symbolic_shape",
        (Alloc, MakeVector, ShapeI),
        lambda x, v: rt.full((2, shape_i(x, 0)), v),
        lambda x, v: np.full((2, x.shape[0]), v),
        _template(min_dims=1, fill=True),
        ALL,
    ),
    _record(
        "full_array_fill",
        (BroadcastTo,),
        lambda x, v: rt.full(x.shape, v),
        lambda x, v: np.full(x.shape, v),
        _array_fill,
    ),
    _record(
        "zeros_static",
        (Alloc,),
        lambda x: rt.zeros(x.type.shape, dtype=x.dtype),
        lambda x: np.zeros(x.shape, dtype=x.dtype),
        _template(),
        static_shapes=True,
    ),
    # a traced fill value without Shape in the graph: checks Alloc's gradient (the sum of g)
    _record(
        "full_static",
        (Alloc,),
        lambda x, v: rt.full(x.type.shape, v),
        lambda x, v: np.full(x.shape, v),
        _template(fill=True),
        static_shapes=True,
    ),
    _record(
        "ones_static",
        (Alloc,),
        lambda x: rt.ones(x.type.shape),
        lambda x: np.ones(x.shape),
        _template(),
        static_shapes=True,
    ),
    # --- arange ------------------------------------------------------------------------
    _record(
        "arange_stop",
        (Arange, ShapeI),
        lambda x: rt.arange(x.size),
        lambda x: np.arange(x.size),
        _template(min_dims=1),
    ),
    _record(
        "arange_start_stop_step",
        (Arange,),
        lambda x: rt.arange(1, x.size * 2, 3),
        lambda x: np.arange(1, x.size * 2, 3),
        _template(min_dims=1),
        grad=False,
        notes=_INT_RESULT,
    ),
    _record(
        "arange_negative_step",
        (Arange,),
        lambda x: rt.arange(x.size, -2, -2),
        lambda x: np.arange(x.size, -2, -2),
        _template(min_dims=1),
        grad=False,
        notes=_INT_RESULT,
    ),
    _record(
        "arange_float",
        (Arange,),
        lambda x: rt.arange(0.5, x.size, 0.25),
        lambda x: np.arange(0.5, x.size, 0.25),
        _template(min_dims=1),
    ),
    _record(
        "arange_dtype",
        (Arange,),
        lambda x: rt.arange(x.size, dtype=x.dtype),
        lambda x: np.arange(x.size, dtype=x.dtype),
        _template(min_dims=1),
    ),
    # --- eye -----------------------------------------------------------------------------
    _record(
        "eye_traced_k",
        (Eye, ShapeI),
        lambda x, k: rt.eye(shape_i(x, 0), shape_i(x, 1), k, dtype=x.dtype),
        lambda x, k: np.eye(x.shape[0], x.shape[1], int(k), dtype=x.dtype),
        _matrix_and_k,
        ALL,
    ),
    _record(
        "eye_square",
        (Eye,),
        lambda x: rt.eye(shape_i(x, 0)),
        lambda x: np.eye(x.shape[0]),
        _template(min_dims=1),
    ),
    _record(
        "eye_static",
        (Eye,),
        lambda x: rt.eye(x.type.shape[0], x.type.shape[1], -1),
        lambda x: np.eye(x.shape[0], x.shape[1], -1),
        _template(min_dims=2, max_dims=2),
        static_shapes=True,
    ),
]
