"""The standard library on hypothesis-drawn graphs: the default pipeline converges, keeps
every value the graph as written computes, and the two backends agree on its output."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import rewritekit as rk
import rewritekit.tensor as rt

x, y = rt.vector("x", shape=(5,)), rt.vector("y")
m = rt.matrix("m", shape=(3, 5))


def _pos(v):
    return rt.abs(v) + 0.5


# Motifs that the library's phases rewrite, so that its rules meet each other's output
UNARY = [
    rt.exp,
    rt.tanh,
    rt.negative,
    rt.sigmoid,
    lambda v: rt.log(1 + rt.exp(v)),
    lambda v: rt.log(1 - rt.sigmoid(v)),
    lambda v: rt.log(rt.sigmoid(v)),
    lambda v: rt.exp(v) - 1,
    lambda v: rt.log(_pos(v)) * v,
    lambda v: rt.log1p(-rt.exp(-_pos(v))),
    lambda v: 1 - rt.erf(v),
    lambda v: v**2,
    lambda v: v**3,
    lambda v: rt.sqrt(rt.square(v)),
    lambda v: rt.exp(rt.log(v)),
    lambda v: rt.log(rt.exp(v)),
    lambda v: rt.negative(rt.negative(v)),
    lambda v: v * 1 + 0,
    lambda v: (2 * v) / 2,
    lambda v: 1 / (1 + rt.exp(-v)),
    lambda v: rt.where(True, v, v + 1),
    lambda v: rt.cast(rt.cast(v, "float64"), "float64"),
    lambda v: rt.log(rt.sum(rt.exp(v), axis=-1, keepdims=True)) + 0 * v if v.ndim else v,
    lambda v: rt.log(rt.softmax(v, axis=-1)) if v.ndim else v,
]
BINARY = [
    rt.add,
    rt.subtract,
    rt.multiply,
    lambda u, v: u * v / u,
    lambda u, v: (u + v) - u,
    lambda u, v: rt.exp(u) * rt.exp(v),
    lambda u, v: rt.log(rt.exp(u) + rt.exp(v)),
    lambda u, v: u - (-v),
    lambda u, v: rt.sum(2.0 * u * v, axis=-1, keepdims=True) + 0 * u * v if u.ndim else u * v,
]
LEAVES = st.sampled_from([x, m, x, m, x, rt.constant(1.0), rt.constant(0.5), rt.constant(-2.0)])


@st.composite
def graphs(draw, depth=5):
    if depth == 0 or (depth < 4 and draw(st.integers(0, 3)) == 0):
        return draw(LEAVES)
    if draw(st.booleans()):
        return draw(st.sampled_from(UNARY))(_bounded(draw(graphs(depth=depth - 1))))
    u, v = draw(graphs(depth=depth - 1)), draw(graphs(depth=depth - 1))
    return draw(st.sampled_from(BINARY))(_bounded(u), _bounded(v))


def _bounded(v):
    """Motifs see arguments in [-2, 2]: the graph as written stays well conditioned (in
    `log(1 - sigmoid(t))` at t = 30, it has no correct digit left to compare with)."""
    return v if v.owner is None else 2 * rt.tanh(v)


def _inputs(graph):
    inputs = [v for v in (x, m) if v in set(rk.graph_inputs(graph))]
    rng = np.random.default_rng(len(rk.toposort(graph)))
    values = [rng.uniform(-2.0, 2.0, size=v.type.shape) for v in inputs]
    return inputs, values


@settings(max_examples=150)
@given(graphs())
def test_the_default_pipeline_keeps_values(graph):
    rewritten = rk.rewrite(graph, "default")
    assert rewritten.type == graph.type
    assert rk.rewrite(rewritten, "default") is rewritten  # a fixpoint
    inputs, values = _inputs(graph)
    f = rk.function(inputs, [graph, rewritten], backend="numpy", rules=None)
    with np.errstate(all="ignore"):
        before, after = (np.asarray(v) for v in f(*values))
    assert before.shape == after.shape
    exact = np.isfinite(before)  # where the written graph overflows, the rewrite may not
    np.testing.assert_allclose(after[exact], before[exact], rtol=1e-7, atol=1e-10)


@settings(max_examples=12)
@given(graphs())
def test_both_backends_agree_on_the_rewritten_graph(graph):
    inputs, values = _inputs(graph)
    with np.errstate(all="ignore"):
        ref = np.asarray(rk.function(inputs, graph, backend="numpy")(*values))
        got = np.asarray(rk.function(inputs, graph, backend="jax")(*values))
    np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-12, equal_nan=True)
