"""Batching rules (``Op.batch``): a node computed for a batch equals the node computed for
each element of the batch. Elementwise Ops share one rule (``rewritekit.tensor.ufunc``), so
every elementwise record is checked here, with some inputs batched and some not."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.backends.numpy import NumpyBackend
from rewritekit.tensor.ufunc import Elemwise
from tests.properties.test_backends import assert_close
from tests.records import OpRecord, collect

CHECKED_NUMPY = NumpyBackend(check_types=True)


def _elementwise_node(record: OpRecord, inputs: list[rk.Var]) -> rk.Apply | None:
    """The record's node when it is one elementwise Apply on exactly the input Vars."""
    out = record.build(*inputs)
    node = getattr(out, "owner", None)
    if node is None or not isinstance(node.op, Elemwise) or list(node.inputs) != inputs:
        return None
    return node


def _one_node(record: OpRecord) -> bool:
    inputs = [rt.vector(f"x{i}") for i in range(record.ops[0].nin)]
    return _elementwise_node(record, inputs) is not None


ELEMENTWISE = [
    r
    for r in collect()
    if all(issubclass(op, Elemwise) for op in r.ops)
    and "float64" in r.dtypes
    and not r.static_shapes
    and _one_node(r)
]


def test_every_elementwise_op_is_covered():
    covered = {op for r in ELEMENTWISE for op in r.ops}
    assert len(covered) >= 60, sorted(op.__name__ for op in covered)


@pytest.mark.parametrize("record", ELEMENTWISE, ids=lambda r: r.name)
@settings(max_examples=8)
@given(data=st.data())
def test_elementwise_batch_matches_a_loop(record: OpRecord, data: st.DataObject):
    size = data.draw(st.integers(1, 3), label="batch")
    draws = [record.draw(data, "float64") for _ in range(size)]
    first = draws[0]
    inputs = [
        rt.tensor(f"x{i}", shape=(None,) * a.ndim, dtype=a.dtype) for i, a in enumerate(first)
    ]
    node = _elementwise_node(record, inputs)
    which = data.draw(
        st.lists(st.booleans(), min_size=len(inputs), max_size=len(inputs)).filter(any),
        label="batched",
    )
    # a batched input holds one draw per element (of the first draw's shape); the elements
    # share the unbatched inputs
    arrays = [
        np.stack([d[i] if d[i].shape == first[i].shape else first[i] for d in draws])
        if b
        else first[i]
        for i, b in enumerate(which)
    ]
    batched = [
        rt.tensor(f"b{i}", shape=(None,) * a.ndim, dtype=a.dtype) for i, a in enumerate(arrays)
    ]
    (out,) = node.op.batch(node, tuple(batched))
    result = rk.function(batched, out, backend=CHECKED_NUMPY, rules=None)(*arrays)
    single = rk.function(inputs, node.outputs[0], backend=CHECKED_NUMPY, rules=None)
    expected = np.stack(
        [
            single(*[a[k] if b else a for a, b in zip(arrays, which, strict=True)])
            for k in range(size)
        ]
    )
    assert_close(result, expected, record, "batched")


def test_an_op_without_a_batching_rule_says_so():
    x = rt.matrix("x")
    node = rt.sum(x, axis=0).owner
    with pytest.raises(NotImplementedError, match=r"Sum.*has no batching rule"):
        node.op.batch(node, (rt.tensor("b", shape=(None, None, None)),))
