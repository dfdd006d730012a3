"""Op records for the differentiation Ops (``rewritekit.tensor.gradient``)."""

from __future__ import annotations

import numpy as np
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


def _jacobian_node(y, x):
    """The ``Jacobian`` node itself (``rk.jacobian`` builds a vectorized vjp graph now):
    the vjp graph of a free cotangent, evaluated per one-hot row by the backends."""
    from rewritekit.autodiff import backward
    from rewritekit.ir import Var, graph_inputs

    u = Var(y.type, "_cotangent")
    (g,) = backward([y], [u], [x])
    inner = [v for v in graph_inputs(g) if v is not u]
    return gr.jacobian_node(rt.shape(y), u, g, inner)


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
    OpRecord(
        "jacobian_sin",
        (gr.Jacobian,),
        lambda x: _jacobian_node(rt.sin(x) * 2.0, x),
        lambda x: np.diag(2.0 * np.cos(x)).astype(x.dtype),
        _vector,
        grad=False,
        notes="the gradient of a Jacobian (a third derivative) is not supported",
    ),
    OpRecord(
        "jacobian_outer",
        (gr.Jacobian,),
        lambda x: _jacobian_node(rt.outer(x, rt.exp(x)), x),
        lambda x: (
            np.einsum("ik,j->ijk", np.eye(x.size), np.exp(x))
            + np.einsum("i,jk->ijk", x, np.diag(np.exp(x)))
        ).astype(x.dtype),
        _vector,
        grad=False,
        rtol=1e-6,
        notes="a matrix output: one row per output element",
    ),
]
