"""NumPy's everyday conveniences (``rewritekit.tensor.everyday``) against NumPy, and the
bitwise operators on integer Vars (the bitwise Ops' values are in ``tests/records``)."""

import re

import numpy as np
import pytest

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.errors import BroadcastError, DTypeError, GraphTypeError, ShapeError
from rewritekit.tensor import elemwise as ew

BACKENDS = ["numpy", "jax"]


def run(inputs, outputs, values, backend="numpy"):
    f = rk.function(inputs, outputs, backend=backend)
    result = f(*values)
    return [np.asarray(r) for r in result] if isinstance(result, list) else np.asarray(result)


# --- isclose / allclose -------------------------------------------------------------------

A = np.array([1.0, 1.0 + 1e-9, 1.0, np.inf, np.inf, np.nan, 0.0, 1e-9, -np.inf, 100.0])
B = np.array([1.0, 1.0, 1.1, np.inf, -np.inf, np.nan, 1e-9, 0.0, -np.inf, 100.001])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("equal_nan", [False, True])
def test_isclose_is_numpys(backend, equal_nan):
    x, y = rt.vector("x"), rt.vector("y")
    got = run([x, y], rt.isclose(x, y, equal_nan=equal_nan), [A, B], backend)
    np.testing.assert_array_equal(got, np.isclose(A, B, equal_nan=equal_nan))
    got = run([x, y], rt.isclose(x, y, rtol=1e-3, atol=0.0), [A, B], backend)
    np.testing.assert_array_equal(got, np.isclose(A, B, rtol=1e-3, atol=0.0))


def test_isclose_is_not_symmetric_and_takes_numbers_and_ints():
    x, i = rt.vector("x"), rt.vector("i", dtype="int64")
    xs, ints = np.array([0.0, 10.0, 10.5]), np.array([0, 10, 11])
    # b is the reference: |a - b| <= atol + rtol |b|
    got = run([x, i], [rt.isclose(x, 10.4, rtol=0.01), rt.isclose(i, x, rtol=0.05)], [xs, ints])
    np.testing.assert_array_equal(got[0], np.isclose(xs, 10.4, rtol=0.01))
    np.testing.assert_array_equal(got[1], np.isclose(ints, xs, rtol=0.05))
    # Python numbers are weak: float32 compares in float32
    close = rt.isclose(rt.vector("f", dtype="float32"), 1.0).owner.inputs[0].owner.inputs[0]
    assert close.owner.op == ew.LessEqual() and close.owner.inputs[0].dtype == "float32"


@pytest.mark.parametrize("backend", BACKENDS)
def test_allclose_is_a_bool_scalar(backend):
    x, y = rt.vector("x"), rt.vector("y")
    out = rt.allclose(x, y, equal_nan=True)
    assert out.type == rk.TensorType("bool", ())
    assert run([x, y], out, [A[:4], A[:4]], backend)
    assert not run([x, y], out, [A, B], backend)
    assert run([x, y], rt.allclose(x, y, atol=0.2, equal_nan=True), [A[:3], B[:3]], backend)


def test_isclose_errors_name_the_function_and_input():
    with pytest.raises(GraphTypeError, match="isclose: input 'a': cannot use str"):
        rt.isclose("abc", 1.0)
    with pytest.raises(GraphTypeError, match="isclose: input 'b'"):
        rt.isclose(rt.vector("x"), object())
    with pytest.raises(GraphTypeError, match="isclose: equal_nan must be a bool, got 'yes'"):
        rt.isclose(rt.vector("x"), 1.0, equal_nan="yes")


# --- atleast_nd ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fn", "reference"),
    [
        (rt.atleast_1d, np.atleast_1d),
        (rt.atleast_2d, np.atleast_2d),
        (rt.atleast_3d, np.atleast_3d),
    ],
)
@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (2, 3, 4), (1, 2, 3, 4)])
def test_atleast_nd_is_numpys(fn, reference, shape):
    value = np.arange(int(np.prod(shape)), dtype="float64").reshape(shape)
    x = rt.tensor("x", shape=shape)
    out = fn(x)
    assert out.type.shape == reference(value).shape
    np.testing.assert_array_equal(run([x], out, [value]), reference(value))
    if len(shape) >= {rt.atleast_1d: 1, rt.atleast_2d: 2, rt.atleast_3d: 3}[fn]:
        assert out is x


def test_atleast_nd_takes_several_inputs_and_numbers():
    x, s = rt.vector("x"), rt.scalar("s")
    first, second = rt.atleast_2d(x, s)
    assert (first.type.shape, second.type.shape) == ((1, None), (1, 1))
    assert rt.atleast_1d(2.0).type.shape == (1,)
    assert rt.atleast_1d() == ()
    with pytest.raises(GraphTypeError, match="atleast_3d: input 1: cannot use object"):
        rt.atleast_3d(x, object())


# --- take ---------------------------------------------------------------------------------

M = np.arange(12.0).reshape(3, 4)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    ("indices", "axis", "mode"),
    [
        ([0, 2, -1], 1, "raise"),
        ([[0, 1], [2, 0]], 0, "raise"),
        (5, None, "raise"),
        (np.array(-2), 0, "raise"),
        ([7, -9, 3], 0, "wrap"),
        ([7, -9, 3], -1, "clip"),
        ([13, -1, 4], None, "clip"),
        ([13, -1, 4], None, "wrap"),
    ],
)
def test_take_is_numpys(backend, indices, axis, mode):
    m = rt.matrix("m")
    out = rt.take(m, indices, axis=axis, mode=mode)
    expected = np.take(M, indices, axis=axis, mode=mode)
    assert out.ndim == expected.ndim
    np.testing.assert_array_equal(run([m], out, [M], backend), expected)


def test_take_with_symbolic_indices_and_its_gradient():
    m, i = rt.matrix("m"), rt.vector("i", dtype="int32")
    out = rt.take(m, i, axis=1, mode="wrap")
    indices = np.array([5, 0, 0], dtype="int32")
    np.testing.assert_array_equal(
        run([m, i], out, [M, indices]), np.take(M, indices, 1, mode="wrap")
    )
    g = run([m, i], rk.grad(rt.sum(out), m), [M, indices])
    np.testing.assert_array_equal(g, np.tile([2.0, 1.0, 0.0, 0.0], (3, 1)))


def test_take_out_of_range_raises_on_both_backends_unless_a_mode_says_otherwise():
    m = rt.matrix("m")
    out = rt.take(m, [4], axis=1)
    for backend in ("numpy", "jax"):
        with pytest.raises(rk.GraphIndexError, match="index 4 is out of bounds for axis 1"):
            run([m], out, [M], backend)
        filled = run([m], rt.take(m, [4, -1], axis=1, mode="fill"), [M], backend)
        np.testing.assert_array_equal(filled, np.stack([np.full(3, np.nan), M[:, 3]], 1))


def test_take_errors_name_the_function_and_input():
    x = rt.vector("x")
    with pytest.raises(GraphTypeError, match="take: mode must be 'raise', 'wrap', 'clip' or"):
        rt.take(x, [0], mode="drop")
    with pytest.raises(DTypeError, match=r"take: indices must be integers, got dtype float64"):
        rt.take(x, [0.5])
    with pytest.raises(ShapeError, match="take: axis 1 is out of range for a 1-d input"):
        rt.take(x, [0], axis=1)
    with pytest.raises(GraphTypeError, match="take: input 'a'"):
        rt.take("abc", [0])


# --- broadcasting -------------------------------------------------------------------------


def test_broadcast_shapes_of_static_shapes_is_numpys():
    cases = [((3, 1), (4,)), ((), (2, 3)), ((5,), 5), ((0,), (1,)), ((2, 1, 3), (4, 1))]
    for shapes in cases:
        assert rt.broadcast_shapes(*shapes) == np.broadcast_shapes(*shapes)
    assert rt.broadcast_shapes() == ()


def test_broadcast_shapes_of_symbolic_shapes_gives_shape_vars():
    m, x = rt.matrix("m"), rt.vector("x")
    n = rt.scalar("n", dtype="int64")
    shape = rt.broadcast_shapes(m.shape, x.shape, (1, 1))
    assert len(shape) == 2 and all(isinstance(d, rk.Var) for d in shape)
    assert rt.broadcast_shapes(x.shape, (1, 3)) == (1, 3)  # a static length > 1 wins
    assert rt.broadcast_shapes((n, 3), (1,))[0] is n
    f = rk.function([m, x], rt.zeros(shape), backend="numpy")
    assert f(np.ones((2, 1)), np.ones(4)).shape == (2, 4)
    assert f(np.ones((2, 4)), np.ones(1)).shape == (2, 4)


def test_broadcast_shapes_errors():
    with pytest.raises(
        BroadcastError, match=re.escape("broadcast_shapes: cannot broadcast shapes (3,) and (4,)")
    ):
        rt.broadcast_shapes((3,), (4,))
    with pytest.raises(GraphTypeError, match="broadcast_shapes: shape 1: a length must be an int"):
        rt.broadcast_shapes((3,), (4, "a"))
    with pytest.raises(GraphTypeError, match="broadcast_shapes: shape 0 must be a tuple of ints"):
        rt.broadcast_shapes("abc")
    with pytest.raises(ShapeError, match="broadcast_shapes: shape 0 has a negative length"):
        rt.broadcast_shapes((-1, 2))
    with pytest.raises(GraphTypeError, match="int vector of static length, got float64"):
        rt.broadcast_shapes(rt.vector("v"))


@pytest.mark.parametrize("backend", BACKENDS)
def test_broadcast_arrays_is_numpys(backend):
    m, x, s = rt.tensor("m", shape=(None, 1)), rt.vector("x"), rt.scalar("s")
    values = [np.arange(2.0).reshape(2, 1), np.arange(3.0), np.array(7.0)]
    outs = rt.broadcast_arrays(m, x, s)
    assert isinstance(outs, tuple) and all(o.type.shape == (None, None) for o in outs)
    for got, expected in zip(
        run([m, x, s], list(outs), values, backend), np.broadcast_arrays(*values), strict=True
    ):
        np.testing.assert_array_equal(got, expected)
    y = rt.vector("y", shape=(3,))
    assert rt.broadcast_arrays(y, y) == (y, y)


def test_broadcast_arrays_errors_name_the_inputs():
    message = "broadcast_arrays: cannot broadcast shapes (3,) and (4,) (inputs 'x', 'y')"
    with pytest.raises(BroadcastError, match=re.escape(message)):
        rt.broadcast_arrays(rt.vector("x", shape=(3,)), rt.vector("y", shape=(4,)))


# --- identity_like / eye_like --------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_identity_like_and_eye_like(backend):
    m = rt.matrix("m", dtype="float32")
    value = np.zeros((2, 3), "float32")
    got = run(
        [m],
        [rt.identity_like(m), rt.eye_like(m, k=1), rt.eye_like(m, dtype="int32")],
        [value],
        backend,
    )
    np.testing.assert_array_equal(got[0], np.eye(2, 3, dtype="float32"))
    np.testing.assert_array_equal(got[1], np.eye(2, 3, k=1))
    assert [g.dtype.name for g in got] == ["float32", "float32", "int32"]
    assert rt.identity_like(rt.matrix("s", shape=(4, 4))).type == rk.TensorType("float64", (4, 4))


def test_identity_like_wants_a_matrix():
    with pytest.raises(ShapeError, match="identity_like: expected a 2-d input, got float64"):
        rt.identity_like(rt.vector("x"))
    with pytest.raises(ShapeError, match="eye_like: expected a 2-d input"):
        rt.eye_like(rt.scalar("s"))


def test_the_functions_are_exported():
    names = ["isclose", "allclose", "atleast_1d", "atleast_2d", "atleast_3d", "take"]
    names += ["broadcast_arrays", "broadcast_shapes", "identity_like", "eye_like"]
    assert set(names) <= set(rt.__all__)


# --- bitwise operators ----------------------------------------------------------------------

INTS = np.array([-7, -1, 0, 5, 100], dtype="int32")
SHIFTS = np.array([3, 0, 6, 5, 2], dtype="int32")


@pytest.mark.parametrize("backend", BACKENDS)
def test_bitwise_operators_on_integers_are_numpys(backend):
    i, j = rt.vector("i", dtype="int32"), rt.vector("j", dtype="int32")
    outs = [i & j, i | j, i ^ j, ~i, i << j, i >> j, 6 & i, 1 << j, i ^ 3, i >> 1]
    a, b = INTS, SHIFTS
    expected = [a & b, a | b, a ^ b, ~a, a << b, a >> b, 6 & a, 1 << b, a ^ 3, a >> 1]
    for got, want in zip(run([i, j], outs, [a, b], backend), expected, strict=True):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    assert (i & j).owner.op == ew.BitwiseAnd() and (~i).owner.op == ew.BitwiseNot()


def test_operators_on_bools_stay_logical():
    b, c = rt.vector("b", dtype="bool"), rt.vector("c", dtype="bool")
    assert (b & c) is rt.logical_and(b, c)
    assert (b | True) is rt.logical_or(b, True)
    assert (~b) is rt.logical_not(b)
    assert (b ^ c) is rt.bitwise_xor(b, c) and (b ^ c).dtype == "bool"
    # with an integer, NumPy's promotion: a bool and an int are bitwise, in the int's dtype
    assert (b & rt.vector("i", dtype="int8")).type.dtype == "int8"
    values = [np.array([True, True, False]), np.array([True, False, False])]
    got = run([b, c], [b ^ c, rt.invert(b), rt.bitwise_and(b, c)], values)
    np.testing.assert_array_equal(got[0], values[0] ^ values[1])
    np.testing.assert_array_equal(got[1], ~values[0])
    np.testing.assert_array_equal(got[2], values[0] & values[1])


def test_bitwise_functions_are_numpys_names():
    assert rt.invert is rt.bitwise_not is rt.bitwise_invert
    assert rt.left_shift is rt.bitwise_left_shift and rt.right_shift is rt.bitwise_right_shift
    assert not ew.BitwiseAnd.differentiable


def test_bitwise_operators_reject_floats_naming_the_operator():
    x, i = rt.vector("x"), rt.vector("i", dtype="int64")
    with pytest.raises(
        DTypeError, match=r"\^: expected bool operands, got float64 .*rt.bitwise_xor"
    ):
        x ^ i
    with pytest.raises(DTypeError, match=r"~: expected a bool operand, got float64 .*rt.invert"):
        _ = ~x
    with pytest.raises(DTypeError, match="left_shift: input 0 has dtype float64"):
        x << 1
    b = rt.vector("b", dtype="bool")
    with pytest.raises(DTypeError, match="right_shift: input 0 has dtype bool"):
        b >> b
    with pytest.raises(DTypeError, match="bitwise_or: input 0 has dtype float64"):
        rt.bitwise_or(x, i)
