"""Op records for the differentiation Ops (``rewritekit.tensor.gradient``)."""

from __future__ import annotations

from hypothesis import strategies as st

import rewritekit.tensor as rt
from rewritekit.tensor import gradient as gr
from tests.records import OpRecord, broadcastable_shapes, values


def _sum_to_draw(data, dtype):
    """``g`` of a shape ``x`` broadcasts to (leading axes added, length-1 axes stretched)."""
    (small,) = data.draw(broadcastable_shapes(1, min_dims=0, max_dims=3))
    lead = data.draw(st.lists(st.integers(1, 3), max_size=2))
    stretched = [data.draw(st.integers(1, 3)) if n == 1 else n for n in small]
    shape = (*lead, *stretched)
    return [values(data, dtype, shape), values(data, dtype, small)]


def _sum_to_reference(g, x):
    lead = g.ndim - x.ndim
    g = g.sum(axis=tuple(range(lead)))
    axes = tuple(
        a for a, (want, have) in enumerate(zip(x.shape, g.shape, strict=True)) if want == 1 != have
    )
    return g.sum(axis=axes, keepdims=True).astype(g.dtype) if axes else g


def _vector(data, dtype):
    n = data.draw(broadcastable_shapes(1, min_dims=1, max_dims=1))[0]
    return [values(data, dtype, n, -3, 3)]


RECORDS = [
    OpRecord(
        "stop_gradient",
        (gr.StopGradient,),
        rt.stop_gradient,
        lambda x: x,
        _vector,
        fd=False,
        notes="the forward is the identity, the gradient zero: finite differences see x",
    ),
    OpRecord("sum_to", (gr.SumTo,), rt.sum_to, _sum_to_reference, _sum_to_draw),
]
