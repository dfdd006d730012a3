"""The standard library on hypothesis-drawn graphs: the default pipeline converges, keeps
every value the graph as written computes, and the two backends agree on its output."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.backends.numpy import NumpyBackend
from tests.properties.test_backends import _as_list
from tests.properties.test_backends import _inputs as record_inputs
from tests.records import collect

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


# --- every Op record through the default pipeline ---------------------------------------

RECORDS = collect()
CHECKED_NUMPY = NumpyBackend(check_types=True)


def _graphs(record, inputs):
    """The record's outputs and, where the gradient tests cover it, the gradient of the sum
    of its outputs (as written: the rewrite under test is the compile's)."""
    outputs = list(_as_list(record.build(*inputs)))
    wrt = [v for v in inputs if v.type.kind == "f"]
    if not (record.checks_gradient() and wrt):
        return outputs
    cost = sum(rt.sum(o) for o in outputs if o.type.kind == "f")
    return outputs + list(rk.grad(cost, wrt, disconnected="zero", stabilize=False))


@pytest.mark.parametrize("index", range(len(RECORDS)), ids=[r.name for r in RECORDS])
@settings(max_examples=5)
@given(data=st.data())
def test_the_default_pipeline_keeps_every_op_record(index, data):
    """Every Op, with its gradient graph where it has one: compiled with the default
    pipeline (with the NumPy backend checking every value against its declared type), it
    computes what the graph as written computes, wherever that is finite."""
    record = RECORDS[index]
    dtype = data.draw(st.sampled_from(record.dtypes), label="dtype")
    draw = record.grad_draw if record.grad_draw is not None and dtype == "float64" else None
    arrays = (draw or record.draw)(data, dtype)
    inputs = record_inputs(record, arrays)
    graphs = _graphs(record, inputs)
    written = rk.function(inputs, graphs, backend=CHECKED_NUMPY, rules=None)
    rewritten = rk.function(inputs, graphs, backend=CHECKED_NUMPY)
    with np.errstate(all="ignore"):
        before, after = written(*arrays), rewritten(*arrays)
    for i, (b, a) in enumerate(zip(before, after, strict=True)):
        b, a = np.asarray(b), np.asarray(a)
        assert (a.shape, a.dtype) == (b.shape, b.dtype), f"{record.name} output {i}"
        rtol, atol = record.tolerance(b.dtype.name)
        finite = np.isfinite(b) if b.dtype.kind in "fc" else np.ones(b.shape, bool)
        np.testing.assert_allclose(
            a[finite], b[finite], rtol=rtol, atol=atol, err_msg=f"{record.name} output {i}"
        )
