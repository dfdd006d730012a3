"""The creation Ops: static shapes and dtypes, hash-consing, errors, end to end."""

import numpy as np
import pytest

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.errors import DTypeError, GraphTypeError, ShapeError
from rewritekit.ir import Constant, TensorType
from rewritekit.tensor.creation import Alloc, Arange, Eye
from rewritekit.tensor.shapes import BroadcastTo, MakeVector, Shape, shape_i


def T(dtype, *shape):
    return TensorType(dtype, shape)


# --- zeros, ones, full ------------------------------------------------------------------


def test_zeros_is_an_alloc_not_a_big_constant():
    z = rt.zeros((1000, 1000))
    assert z.type == T("float64", 1000, 1000)
    assert z.owner.op == Alloc((1000, 1000))
    value, shape = z.owner.inputs
    assert value is rt.constant(0.0) and shape is rt.constant(np.array([1000, 1000]))
    assert rt.zeros((1000, 1000)) is z and rt.zeros([1000, 1000]) is z


@pytest.mark.parametrize(
    ("build", "reference"),
    [
        (lambda: rt.zeros(3), lambda: np.zeros(3)),
        (lambda: rt.zeros((2, 3), dtype="int32"), lambda: np.zeros((2, 3), dtype="int32")),
        (lambda: rt.zeros((2,), dtype=None), lambda: np.zeros((2,), dtype=None)),
        (lambda: rt.ones((), dtype=bool), lambda: np.ones((), dtype=bool)),
        (lambda: rt.full((2, 1), 7), lambda: np.full((2, 1), 7)),
        (lambda: rt.full(2, 7.5), lambda: np.full(2, 7.5)),
        (lambda: rt.full(2, True), lambda: np.full(2, True)),
        (lambda: rt.full(2, 1j), lambda: np.full(2, 1j)),
        (lambda: rt.full(2, np.float32(1)), lambda: np.full(2, np.float32(1))),
        (lambda: rt.full(2, 7.9, dtype="int8"), lambda: np.full(2, 7.9, dtype="int8")),
    ],
)
def test_dtypes_and_shapes_follow_numpy(build, reference):
    expected = reference()
    assert build().type == T(expected.dtype, *expected.shape)


def test_symbolic_shapes_and_fill_values():
    n = rt.scalar("n", dtype="int32")
    z = rt.zeros((n, 3))
    assert z.type == T("float64", None, 3)
    assert z.owner.op == Alloc((None, 3)) and type(z.owner.inputs[1].owner.op) is MakeVector
    v = rt.scalar("v", dtype="float32")
    assert rt.full((2, n), v).type == T("float32", 2, None)
    assert rt.full(3, v, dtype="int64").type == T("int64", 3)
    assert rt.full(3, v, dtype="int64").owner.inputs[0] is rt.cast(v, "int64")
    shape = rt.vector("s", dtype="int64", shape=(2,))
    assert rt.ones(shape).type == T("float64", None, None)


def test_full_with_an_array_fill_value_broadcasts():
    f = rt.full((2, 3), [1, 2, 3])
    assert f.type == T("int64", 2, 3) and type(f.owner.op) is BroadcastTo
    assert rt.full((2, 3), rt.vector("v", dtype="float32"), dtype="float64").type == T(
        "float64", 2, 3
    )


def test_like_functions_take_the_shape_and_dtype_of_x():
    x = rt.tensor("x", shape=(None, 3), dtype="int32")
    assert rt.zeros_like(x).type == T("int32", None, 3)
    assert rt.ones_like(x, dtype="float32").type == T("float32", None, 3)
    assert rt.full_like(x, 2.5).type == T("int32", None, 3)  # NumPy casts the fill value
    assert rt.full_like(x, 2.5).owner.inputs[0] is rt.constant(2, dtype="int32")
    assert rt.zeros_like(x).owner.inputs[1] is rt.shape(x)
    assert type(rt.zeros_like(x).owner.inputs[1].owner.op) is Shape
    assert rt.zeros_like(x) is rt.full_like(x, 0)
    s = rt.tensor("s", shape=(2, 2))
    assert rt.zeros_like(s) is rt.zeros((2, 2))


def test_alloc_errors():
    with pytest.raises(
        ShapeError, match=r"zeros: negative dimensions are not allowed, got \(2, -1\)"
    ):
        rt.zeros((2, -1))
    with pytest.raises(ShapeError, match=r"full: negative dimensions are not allowed"):
        rt.full(-3, 1.0)
    with pytest.raises(GraphTypeError, match=r"zeros: a shape must be an int, a tuple .* float 2."):
        rt.zeros(2.5)
    with pytest.raises(GraphTypeError, match=r"full: fill_value: cannot use str 'a' as a tensor"):
        rt.full(2, "a")
    with pytest.raises(GraphTypeError, match=r"full_like: fill_value: cannot use str"):
        rt.full_like(rt.vector("x"), "a")
    with pytest.raises(DTypeError, match=r"ones: unsupported dtype 'str'"):
        rt.ones(2, dtype="str")
    with pytest.raises(ShapeError, match=r"alloc: the fill value must be a scalar, got float64\["):
        Alloc((2,))(rt.vector("v"), rt.constant([2]))
    with pytest.raises(
        DTypeError, match=r"alloc: the shape must be an integer vector, got dtype f"
    ):
        Alloc((2,))(rt.scalar("v"), rt.constant([2.0]))
    with pytest.raises(ShapeError, match=r"alloc: the shape must be a vector of length 2, got int"):
        Alloc((2, 3))(rt.scalar("v"), rt.constant([2]))
    with pytest.raises(GraphTypeError, match=r"alloc: static shape entries must be ints >= 0"):
        Alloc((-1,))


# --- arange -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [(5,), (1, 7, 2), (0.5, 3), (5, 0, -1), (0, 1, 0.25), (np.int32(4),), (np.float32(2),)],
)
def test_arange_of_numbers_is_a_constant(args):
    got = rt.arange(*args)
    assert isinstance(got, Constant)
    np.testing.assert_array_equal(got.data, np.arange(*args))
    assert got.dtype == np.arange(*args).dtype.name
    assert rt.arange(*args, dtype="float32").dtype == "float32"


def test_arange_of_vars():
    n32 = rt.scalar("n", dtype="int32")
    f32 = rt.scalar("f", dtype="float32")
    # NumPy's rule: the promotion of int64 with the arguments' dtypes
    probe_int = np.arange(np.int32(3)).dtype.name
    probe_float = np.arange(np.float32(0), np.float32(3)).dtype.name
    assert rt.arange(n32).type == T(probe_int, None)
    assert rt.arange(f32, 3).type == T(probe_float, None)
    assert rt.arange(1, n32, 0.5).type == T("float64", None)
    assert rt.arange(n32, dtype="float32").type == T("float32", None)
    assert rt.arange(n32).owner.op == Arange("int64")
    assert rt.arange(n32) is rt.arange(0, n32, 1)
    assert rt.arange(rt.constant(4)) is rt.arange(4)  # constants fold


def test_arange_errors():
    with pytest.raises(ShapeError, match=r"arange: cannot make arange\(0, 5, 0\): division by z"):
        rt.arange(0, 5, 0)
    with pytest.raises(DTypeError, match=r"arange: stop must be a real scalar, got complex128"):
        rt.arange(rt.scalar("a"), 1j)
    with pytest.raises(DTypeError, match=r"arange: stop must be a real scalar, got float64\[\?\]"):
        rt.arange(rt.vector("a"))
    with pytest.raises(GraphTypeError, match=r"arange: expected 3 inputs \('start', 'stop', 'st"):
        Arange("float64")(rt.scalar("a"), rt.scalar("b"))
    with pytest.raises(ShapeError, match=r"arange: step must be a scalar, got float64\[\?\]"):
        Arange("float64")(rt.scalar("a"), rt.scalar("b"), rt.vector("c"))
    with pytest.raises(DTypeError, match=r"arange: step must be a real number, got dtype complex"):
        Arange("float64")(rt.scalar("a"), rt.scalar("b"), rt.scalar("c", dtype="complex128"))


# --- eye --------------------------------------------------------------------------------


def test_eye_types():
    assert rt.eye(3).type == T("float64", 3, 3)
    assert rt.eye(3, 4, k=1, dtype="int32").type == T("int32", 3, 4)
    assert rt.eye(3, dtype=None).dtype == np.eye(3, dtype=None).dtype.name
    n = rt.scalar("n", dtype="int64")
    assert rt.eye(n).type == T("float64", None, None)
    assert rt.eye(n, 2).type == T("float64", None, 2)
    assert rt.eye(3).owner.op == Eye("float64", (3, 3))
    assert rt.eye(3) is rt.eye(3, 3, 0) is rt.eye(np.int64(3))


def test_eye_errors():
    with pytest.raises(GraphTypeError, match=r"eye: n must be an int or an integer scalar Var, go"):
        rt.eye(2.5)
    with pytest.raises(GraphTypeError, match=r"eye: n must be an int .* got bool True"):
        rt.eye(True)
    with pytest.raises(ShapeError, match=r"eye: negative dimensions are not allowed, got \(-1, -1"):
        rt.eye(-1)
    with pytest.raises(DTypeError, match=r"eye: n must be an integer scalar, got float64\[\]"):
        rt.eye(rt.scalar("n"))
    with pytest.raises(DTypeError, match=r"eye: m must be an integer scalar, got int64\[\?\]"):
        rt.eye(2, rt.vector("m", dtype="int64"))
    with pytest.raises(GraphTypeError, match=r"eye: shape must have two entries \(n, m\), got"):
        Eye("float64", (2,))
    with pytest.raises(DTypeError, match=r"eye: k must be an integer, got dtype float64"):
        Eye("float64", (2, 2))(1, 2, 0.5)
    with pytest.raises(ShapeError, match=r"eye: m must be a scalar, got int64\[\?\]"):
        Eye("float64", (2, 2))(1, rt.vector("m", dtype="int64"), 0)


# --- end to end -------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_end_to_end(backend):
    x = rt.tensor("x", shape=(None, 3), dtype="float32")
    v = rt.scalar("v", dtype="float32")
    k = rt.scalar("k", dtype="int64")
    outputs = [
        rt.zeros_like(x),
        rt.full_like(x, v, dtype="int32"),
        rt.full((2, shape_i(x, 0)), v),
        rt.ones((2, 3)),
        rt.arange(x.size),
        rt.arange(0.5, x.size, 2.5),
        rt.eye(shape_i(x, 0), 3, k),
        rt.eye(3, dtype="bool"),
    ]
    f = rk.function([x, v, k], outputs, backend=backend)
    a = np.arange(12.0, dtype="float32").reshape(4, 3)
    expected = [
        np.zeros_like(a),
        np.full_like(a, np.float32(2.5), dtype="int32"),
        np.full((2, 4), np.float32(2.5)),
        np.ones((2, 3)),
        np.arange(12),
        np.arange(0.5, 12, 2.5),
        np.eye(4, 3, -1),
        np.eye(3, dtype=bool),
    ]
    for got, want in zip(f(a, np.float32(2.5), -1), expected, strict=True):
        got = np.asarray(got)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)


def test_jax_needs_static_lengths():
    n = rt.scalar("n", dtype="int64")
    for graph, name in [
        (rt.zeros((n, 2)), "alloc"),
        (rt.arange(n), "arange"),
        (rt.eye(n), "eye"),
    ]:
        g = rk.function([n], graph, backend="jax")
        with pytest.raises(ShapeError, match=rf"{name}: the .* must be known when the graph is"):
            g(3)
        np.testing.assert_array_equal(rk.function([n], graph, backend="numpy")(3), graph_ref(name))


def graph_ref(name):
    return {"alloc": np.zeros((3, 2)), "arange": np.arange(3), "eye": np.eye(3)}[name]
