"""The elementwise Ops that exist so far: dtypes, broadcasting, weak scalars, errors."""

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.errors import BroadcastError, DTypeError, GraphTypeError
from rewritekit.ir import SUPPORTED_DTYPES, Constant, TensorType

DTYPES = sorted(SUPPORTED_DTYPES - {"float16"})

BINARY = {
    rt.add: np.add,
    rt.subtract: np.subtract,
    rt.multiply: np.multiply,
    rt.true_divide: np.true_divide,
    rt.maximum: np.maximum,
    rt.power: np.power,
}
FLOAT_UNARY = [rt.exp, rt.log, rt.log1p, rt.sin, rt.sqrt, rt.erf, rt.sigmoid]


def _numpy_dtype(ufunc, *dtypes):
    """The dtype NumPy's own ufunc gives, or None where NumPy has no loop."""
    try:
        with np.errstate(all="ignore"):
            return ufunc(*(np.ones(2, dtype=d) for d in dtypes)).dtype.name
    except TypeError:
        return None


@given(st.sampled_from(list(BINARY)), st.sampled_from(DTYPES), st.sampled_from(DTYPES))
def test_arithmetic_dtypes_match_numpy(op, a, b):
    expected = _numpy_dtype(BINARY[op], a, b)
    assume(expected is not None)  # NumPy has no bool subtract loop: see the error test
    if op is rt.true_divide and expected == "float16":
        expected = "float64"  # integers and bools divide in float64
    assume(not (op in (rt.power, rt.maximum) and expected.startswith("complex")))
    assert op(rt.vector("a", dtype=a), rt.vector("b", dtype=b)).dtype == expected


@given(st.sampled_from(FLOAT_UNARY), st.sampled_from(DTYPES))
def test_float_functions_keep_floats_and_compute_integers_in_float64(op, dtype):
    assume(np.dtype(dtype).kind != "c" or op in (rt.exp, rt.log, rt.sin, rt.sqrt))
    expected = dtype if np.dtype(dtype).kind in "fc" else "float64"
    assert op(rt.vector("x", dtype=dtype)).dtype == expected


@given(
    st.sampled_from([rt.add, rt.multiply, rt.maximum]),
    st.sampled_from(DTYPES),
    st.sampled_from([True, 2, 0.5, 1j]),
)
def test_python_scalars_are_weak(op, dtype, scalar):
    numpy_ops = {rt.add: np.add, rt.multiply: np.multiply, rt.maximum: np.maximum}
    expected = _numpy_dtype(lambda a: numpy_ops[op](a, scalar), dtype)
    assume(expected is not None and not (op is rt.maximum and expected.startswith("complex")))
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


def test_unsupported_dtypes_are_rejected_naming_the_op():
    b = rt.vector("b", dtype="bool")
    with pytest.raises(DTypeError, match="subtract: input 0 has dtype bool, which subtract"):
        b - b
    with pytest.raises(DTypeError, match="erf: input 0 has dtype complex128"):
        rt.erf(rt.vector("z", dtype="complex128"))
    with pytest.raises(DTypeError, match="&: expected bool operands, got float64"):
        rt.vector("x") & b
    with pytest.raises(DTypeError, match="~: expected a bool operand"):
        ~rt.vector("x")


def test_bad_calls_name_the_op():
    x = rt.vector("x", dtype="int8")
    with pytest.raises(GraphTypeError, match="add: expected 2 inputs, got 1"):
        rt.add(x)
    with pytest.raises(
        GraphTypeError, match=r"add: input 1: Python int 1000 is out of bounds for int8"
    ):
        x + 1000


def test_logaddexp_derivative_is_one_half_each_at_a_tie_infinities_included():
    x, y = rt.vector("x"), rt.vector("y")
    grads = rk.grad(rt.sum(rt.logaddexp(x, y)), [x, y])
    a, b = np.array([np.inf, -np.inf, 1.0, 2.0]), np.array([np.inf, -np.inf, 1.0, 0.0])
    gx, gy = rk.function([x, y], grads, backend="numpy")(a, b)
    np.testing.assert_allclose(gx, [0.5, 0.5, 0.5, 1 / (1 + np.exp(-2.0))], rtol=1e-15)
    np.testing.assert_allclose(gy, [0.5, 0.5, 0.5, 1 / (1 + np.exp(2.0))], rtol=1e-15)
