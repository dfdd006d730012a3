"""The elementwise Ops that exist so far: dtypes, broadcasting, weak scalars, errors."""

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import rewritekit.tensor as rt
from rewritekit.errors import BroadcastError, GraphTypeError
from rewritekit.ir import SUPPORTED_DTYPES, Constant, TensorType

DTYPES = sorted(SUPPORTED_DTYPES - {"float16"})

BINARY = {
    rt.add: np.add,
    rt.subtract: np.subtract,
    rt.multiply: np.multiply,
    rt.true_divide: np.true_divide,
}
UNARY = {rt.exp: np.exp, rt.log: np.log, rt.log1p: np.log1p, rt.negative: np.negative}


def _numpy_dtype(ufunc, *dtypes):
    """The dtype NumPy's own ufunc gives, or None where NumPy has no loop."""
    try:
        with np.errstate(all="ignore"):
            return ufunc(*(np.ones(2, dtype=d) for d in dtypes)).dtype.name
    except TypeError:
        return None


@given(st.sampled_from(list(BINARY)), st.sampled_from(DTYPES), st.sampled_from(DTYPES))
def test_binary_dtypes_match_numpy(op, a, b):
    expected = _numpy_dtype(BINARY[op], a, b)
    assume(expected is not None)  # NumPy has no bool subtract loop
    assert op(rt.vector("a", dtype=a), rt.vector("b", dtype=b)).dtype == expected


@given(st.sampled_from(list(UNARY)), st.sampled_from(DTYPES))
def test_unary_dtypes_match_numpy(op, dtype):
    expected = _numpy_dtype(UNARY[op], dtype)
    assume(expected is not None)
    assert op(rt.vector("x", dtype=dtype)).dtype == expected


@given(
    st.sampled_from(list(BINARY)),
    st.sampled_from(DTYPES),
    st.sampled_from([True, 2, 0.5, 1j]),
)
def test_python_scalars_are_weak(op, dtype, scalar):
    expected = _numpy_dtype(lambda a: BINARY[op](a, scalar), dtype)
    assume(expected is not None)
    assert op(rt.vector("x", dtype=dtype), scalar).dtype == expected


def test_weak_scalar_examples_from_the_design():
    x32, x64 = rt.vector("x", dtype="float32"), rt.vector("y")
    assert (x32 * 5.0).dtype == "float32"
    assert (x64 * 5.0).dtype == "float64"
    assert (5.0 * x32).owner.inputs[0] is rt.constant(5.0, dtype="float32")
    assert rt.log(5.0).dtype == "float64"
    assert (rt.vector("i", dtype="int32") * 0.5).dtype == "float64"
    assert (np.float32(2.0) * x64).dtype == "float64"  # NumPy scalars are strong


def test_operators_build_the_ops():
    x, y = rt.vector("x"), rt.vector("y")
    assert x + y is rt.add(x, y)
    assert x - y is rt.subtract(x, y)
    assert x * y is rt.multiply(x, y)
    assert x / y is rt.true_divide(x, y)
    assert -x is rt.negative(x)
    assert 2.0 - x is rt.subtract(rt.constant(2.0), x)
    assert isinstance((1 + x).owner.inputs[0], Constant)


def test_static_shapes_broadcast():
    a = rt.tensor("a", shape=(None, 1))
    b = rt.tensor("b", shape=(3,))
    assert (a + b).type is TensorType("float64", (None, 3))
    assert (a + 1.0).type is a.type


def test_broadcast_errors_name_the_op_and_inputs():
    a, b = rt.vector("a", shape=(3,)), rt.vector("b", shape=(4,))
    with pytest.raises(
        BroadcastError, match=r"add: cannot broadcast shapes \(3,\) and \(4,\) \(inputs 'a', 'b'\)"
    ):
        a + b
    with pytest.raises(BroadcastError, match=r"multiply: .* \(inputs Exp\(\.\.\.\), 'b'\)"):
        rt.exp(a) * b


def test_bad_calls_name_the_op():
    x = rt.vector("x", dtype="int8")
    with pytest.raises(GraphTypeError, match="add: expected 2 inputs, got 1"):
        rt.add(x)
    with pytest.raises(
        GraphTypeError, match=r"add: input 1: Python int 1000 is out of bounds for int8"
    ):
        x + 1000
