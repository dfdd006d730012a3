"""The shape Ops: static shapes and dtypes, hash-consing, errors, Var methods, end to end."""

import numpy as np
import pytest

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.errors import BroadcastError, DTypeError, GraphTypeError, ShapeError
from rewritekit.ir import Constant, TensorType
from rewritekit.tensor.shapes import (
    BroadcastTo,
    Concatenate,
    ExpandDims,
    MakeVector,
    Reshape,
    Shape,
    ShapeI,
    Squeeze,
    Transpose,
    as_shape_vector,
    shape_i,
    static_shape_of,
)


def T(dtype, *shape):
    return TensorType(dtype, shape)


def op_of(var):
    return type(var.owner.op)


# --- shape, size, shape vectors ---------------------------------------------------------


def test_shape_is_a_constant_when_static_else_a_shape_node():
    x = rt.tensor("x", shape=(2, 3))
    assert isinstance(x.shape, Constant) and x.shape.data.tolist() == [2, 3]
    assert x.shape is rt.constant(np.array([2, 3], dtype=np.int64))
    y = rt.tensor("y", shape=(None, 3))
    assert y.shape.type == T("int64", 2) and op_of(y.shape) is Shape
    assert rt.shape(y) is y.shape
    assert rt.shape(rt.scalar("s")).type == T("int64", 0)


def test_size_is_a_constant_or_the_product_of_the_unknown_lengths():
    assert rt.tensor("x", shape=(2, 3)).size is rt.constant(np.int64(6))
    assert rt.tensor("x", shape=(0, None)).size is rt.constant(np.int64(0))
    x = rt.tensor("x", shape=(None, 3, None))
    # the known lengths multiply into one constant: (shape[0] * shape[2]) * 3
    assert x.size is (ShapeI(0)(x) * ShapeI(2)(x)) * 3
    assert x.size.type == T("int64")
    v = rt.vector("v")
    assert v.size is ShapeI(0)(v)


def test_shape_i():
    x = rt.tensor("x", shape=(2, None))
    assert shape_i(x, 0) is rt.constant(np.int64(2))
    assert shape_i(x, -1) is ShapeI(1)(x)
    with pytest.raises(ShapeError, match=r"shape_i: axis 2 is out of range for a 2-d input"):
        shape_i(x, 2)
    with pytest.raises(GraphTypeError, match=r"shape_i: axis must be a non-negative int, got -1"):
        ShapeI(-1)
    with pytest.raises(ShapeError, match=r"shape_i: axis 3 is out of range for a 2-d input"):
        ShapeI(3)(x)


def test_as_shape_vector_and_its_static_shape():
    n = rt.scalar("n", dtype="int32")
    assert as_shape_vector(3, "f") is rt.constant(np.array([3], dtype=np.int64))
    assert as_shape_vector((2, np.int8(3)), "f") is rt.constant(np.array([2, 3], dtype=np.int64))
    assert as_shape_vector((), "f").type == T("int64", 0)
    mixed = as_shape_vector((n, 3), "f")
    assert mixed is MakeVector()(n, rt.constant(np.int64(3)))
    assert mixed.type == T("int64", 2) and static_shape_of(mixed) == (None, 3)
    assert static_shape_of(as_shape_vector(n, "f")) == (None,)
    assert as_shape_vector((rt.constant(np.int64(4)), 1), "f") is as_shape_vector((4, 1), "f")
    y = rt.tensor("y", shape=(None, 5))
    assert as_shape_vector(y.shape, "f") is y.shape and static_shape_of(y.shape) == (None, 5)
    v = rt.vector("v", dtype="int32", shape=(2,))
    assert as_shape_vector(v, "f") is rt.cast(v, "int64")
    assert static_shape_of(as_shape_vector(v, "f")) == (None, None)


@pytest.mark.parametrize(
    ("parts", "error", "message"),
    [
        (2.5, GraphTypeError, r"f: a shape must be an int, a tuple of ints .* got float 2.5"),
        ((2, 2.0), GraphTypeError, r"f: shape entry 1 must be an int or an integer scalar Var"),
        ((rt.scalar("s"),), DTypeError, r"f: shape entry 0 must be an integer scalar, got float"),
        (rt.vector("v"), DTypeError, r"f: a shape must have an integer dtype, got float64\[\?\]"),
        (rt.vector("v", dtype="int64"), ShapeError, r"f: a shape vector must be 1-d with a static"),
        (rt.matrix("m", dtype="int64"), ShapeError, r"static length .* got int64\[\?,\?\]"),
    ],
)
def test_as_shape_vector_errors(parts, error, message):
    with pytest.raises(error, match=message):
        as_shape_vector(parts, "f")


def test_make_vector_types_and_errors():
    i, u = rt.scalar("i", dtype="int32"), rt.scalar("u", dtype="uint8")
    assert MakeVector()(i, u).type == T("int64", 2)
    assert MakeVector()().type == T("int64", 0)
    with pytest.raises(ShapeError, match=r"make_vector: input 0 must be a scalar, got int64\[\?\]"):
        MakeVector()(rt.vector("a", dtype="int64"))
    with pytest.raises(DTypeError, match=r"make_vector: input 1 must be an integer, got dtype f"):
        MakeVector()(i, rt.scalar("a"))


# --- reshape ----------------------------------------------------------------------------


def test_reshape_static_shapes():
    x = rt.tensor("x", shape=(2, 3), dtype="int32")
    assert rt.reshape(x, (3, 2)).type == T("int32", 3, 2)
    assert rt.reshape(x, (-1,)).type == T("int32", 6)
    assert rt.reshape(x, (3, -1, 1)).type == T("int32", 3, 2, 1)
    assert rt.reshape(x, 6).type == T("int32", 6)
    n = rt.scalar("n", dtype="int64")
    # one unknown entry and a static size: the entry is resolved (it must be 3 at run time)
    assert rt.reshape(x, (2, n)).type == T("int32", 2, 3)
    assert rt.reshape(x, (n, -1)).type == T("int32", None, None)
    y = rt.tensor("y", shape=(None, 4))
    assert rt.reshape(y, (-1, 2)).type == T("float64", None, 2)
    assert rt.reshape(y, y.shape).type == T("float64", None, 4)
    assert rt.reshape(rt.tensor("e", shape=(0, 3)), (n, 0)).type == T("float64", None, 0)


def test_reshape_hash_consing_and_shortcuts():
    x = rt.tensor("x", shape=(2, 3))
    assert rt.reshape(x, (-1,)) is rt.reshape(x, (6,)) is rt.reshape(x, [6]) is x.reshape(6)
    assert rt.reshape(x, (-1,)).owner.op == Reshape((6,))
    assert rt.reshape(x, (2, 3)) is x  # same static shape: nothing to do
    assert x.reshape(3, 2) is x.reshape((3, 2))
    n = rt.scalar("n", dtype="int64")
    y = rt.vector("y")
    assert rt.reshape(y, (n, -1)).owner.op == Reshape((None, -1))
    assert y.reshape(n) is rt.reshape(y, (n,))


def test_reshape_with_symbolic_entries_builds():
    y = rt.matrix("y")
    z = rt.reshape(y, (shape_i(y, 0) // 2, 2, -1))
    assert z.type == T("float64", None, 2, None)
    assert op_of(z) is Reshape and op_of(z.owner.inputs[1]) is MakeVector


@pytest.mark.parametrize(
    ("shape", "message"),
    [
        (
            (4, 2),
            r"reshape: cannot reshape an input of shape \(2, 3\) \(6 elements\) into shape "
            r"\(4, 2\) \(input 'x'\)",
        ),
        ((4, -1), r"cannot reshape an input of shape \(2, 3\) .* into shape \(4, -1\)"),
        ((0, -1), r"cannot reshape an input of shape \(2, 3\) .* into shape \(0, -1\)"),
        ((-1, -1), r"reshape: the shape \(-1, -1\) must have lengths >= 0 and at most one -1"),
        ((-2, 3), r"reshape: the shape \(-2, 3\) must have lengths >= 0"),
    ],
)
def test_reshape_errors(shape, message):
    with pytest.raises(ShapeError, match=message):
        rt.reshape(rt.tensor("x", shape=(2, 3)), shape)


def test_reshape_op_errors():
    x = rt.tensor("x", shape=(2, 3))
    with pytest.raises(ShapeError, match=r"reshape: at most one -1 is allowed, got \(2, -1, -1\)"):
        Reshape((2, -1, -1))
    with pytest.raises(GraphTypeError, match=r"reshape: static shape entries must be ints >= -1"):
        Reshape(("a",))
    with pytest.raises(DTypeError, match=r"reshape: the shape must be an integer vector, got dt"):
        Reshape((2, 3))(x, rt.vector("v", shape=(2,)))
    with pytest.raises(ShapeError, match=r"reshape: the shape must be a vector of length 2, got"):
        Reshape((2, 3))(x, rt.constant([2, 3, 1]))
    with pytest.raises(ShapeError, match=r"cannot reshape an input of shape \(2, 3\) \(6 elem"):
        Reshape((5,))(x, rt.constant([5]))
    with pytest.raises(ShapeError, match=r"cannot reshape .* into shape \(\?, 4\)"):
        Reshape((None, 4))(x, rt.vector("v", dtype="int64", shape=(2,)))


def test_flatten():
    assert rt.flatten(rt.tensor("x", shape=(2, 3))).type == T("float64", 6)
    assert rt.flatten(rt.scalar("s")).type == T("float64", 1)
    v = rt.vector("v")
    assert rt.flatten(v) is v and v.flatten() is v
    m = rt.matrix("m")
    assert m.flatten() is rt.reshape(m, (-1,)) and m.flatten().type == T("float64", None)


# --- broadcast_to -----------------------------------------------------------------------


def test_broadcast_to_static_shapes():
    x = rt.tensor("x", shape=(1, 3), dtype="int8")
    assert rt.broadcast_to(x, (4, 2, 3)).type == T("int8", 4, 2, 3)
    n = rt.scalar("n", dtype="int64")
    assert rt.broadcast_to(x, (n, 3)).type == T("int8", None, 3)
    # an unknown target length takes the input's length when that is not 1
    assert rt.broadcast_to(x, (2, n)).type == T("int8", 2, 3)
    y = rt.tensor("y", shape=(None, 3))
    assert rt.broadcast_to(y, (5, 3)).type == T("float64", 5, 3)
    assert rt.broadcast_to(x, (1, 3)) is x
    assert rt.broadcast_to(x, (4, 3)) is rt.broadcast_to(x, [4, 3])
    assert rt.broadcast_to(x, (4, 3)).owner.op == BroadcastTo((4, 3))
    z = rt.tensor("z", shape=(None, 3))
    assert rt.broadcast_to(x, z.shape).type == T("int8", None, 3)


def test_broadcast_to_errors():
    x = rt.tensor("x", shape=(2, 3))
    with pytest.raises(
        BroadcastError, match=r"broadcast_to: cannot broadcast shape \(2, 3\) to \(3, 3\) \(axis 0"
    ):
        rt.broadcast_to(x, (3, 3))
    with pytest.raises(BroadcastError, match=r"cannot broadcast a 2-d input of shape \(2, 3\) to"):
        rt.broadcast_to(x, (3,))
    with pytest.raises(ShapeError, match=r"broadcast_to: negative dimensions are not allowed"):
        rt.broadcast_to(x, (-1, 3))
    with pytest.raises(GraphTypeError, match=r"broadcast_to: static shape entries must be ints"):
        BroadcastTo((-1,))


# --- transpose, swapaxes, moveaxis ------------------------------------------------------


def test_transpose_types_and_hash_consing():
    x = rt.tensor("x", shape=(2, 3, 4), dtype="bool")
    assert rt.transpose(x).type == T("bool", 4, 3, 2)
    assert rt.transpose(x, (1, 0, 2)).type == T("bool", 3, 2, 4)
    assert rt.transpose(x, (1, 0, -1)) is rt.transpose(x, [1, 0, 2]) is x.transpose(1, 0, 2)
    assert x.transpose((1, 0, 2)) is x.transpose(1, 0, 2)
    assert x.T is rt.transpose(x, (2, 1, 0)) is x.transpose()
    assert x.T.owner.op == Transpose((2, 1, 0))
    assert rt.transpose(x, (0, 1, 2)) is x
    v = rt.vector("v")
    assert v.T is v and rt.scalar("s").T.type == T("float64")


def test_swapaxes_and_moveaxis_are_transposes():
    x = rt.tensor("x", shape=(2, 3, 4))
    assert rt.swapaxes(x, 0, -1) is rt.transpose(x, (2, 1, 0)) is x.swapaxes(2, 0)
    assert rt.swapaxes(x, 1, 1) is x
    assert rt.moveaxis(x, 0, -1) is rt.transpose(x, (1, 2, 0))
    assert rt.moveaxis(x, (0, 1), (-1, 0)).type == T("float64", 3, 4, 2)
    expected = np.moveaxis(np.zeros((2, 3, 4)), (0, 1), (-1, 0)).shape
    assert rt.moveaxis(x, (0, 1), (-1, 0)).type.shape == expected


def test_transpose_errors():
    x = rt.tensor("x", shape=(2, 3))
    with pytest.raises(ShapeError, match=r"transpose: repeated axis in \(0, 0\) \(input 'x'\)"):
        rt.transpose(x, (0, 0))
    with pytest.raises(ShapeError, match=r"transpose: axes \(0,\) are not a permutation of the 2"):
        rt.transpose(x, (0,))
    with pytest.raises(ShapeError, match=r"transpose: axis 2 is out of range for a 2-d input"):
        rt.transpose(x, (0, 2))
    with pytest.raises(GraphTypeError, match=r"transpose: axis must be an int or a tuple of"):
        rt.transpose(x, "ab")
    with pytest.raises(ShapeError, match=r"transpose: axes \(0,\) are not a permutation of the 2"):
        Transpose((0,))(x)
    with pytest.raises(GraphTypeError, match=r"swapaxes: axis must be an int, got 1.5"):
        rt.swapaxes(x, 0, 1.5)
    with pytest.raises(ShapeError, match=r"swapaxes: axis -3 is out of range for a 2-d input"):
        rt.swapaxes(x, 0, -3)
    with pytest.raises(ShapeError, match=r"moveaxis: source \(0, 1\) and destination 0 must hav"):
        rt.moveaxis(x, (0, 1), 0)
    with pytest.raises(ShapeError, match=r"moveaxis: repeated axis in \(0, 0\)"):
        rt.moveaxis(x, (0, 0), (0, 1))


# --- expand_dims, squeeze ---------------------------------------------------------------


def test_expand_dims():
    x = rt.tensor("x", shape=(2, None))
    assert rt.expand_dims(x, 0).type == T("float64", 1, 2, None)
    assert rt.expand_dims(x, -1).type == T("float64", 2, None, 1)
    assert rt.expand_dims(x, (0, 3)).type == T("float64", 1, 2, None, 1)
    assert rt.expand_dims(x, (3, 0)) is rt.expand_dims(x, (0, -1))
    assert rt.expand_dims(x, -1).owner.op == ExpandDims((2,))
    assert rt.expand_dims(x, ()) is x
    assert rt.expand_dims(rt.scalar("s"), 0).type == T("float64", 1)
    with pytest.raises(ShapeError, match=r"expand_dims: axis 3 is out of range for a 3-d result"):
        rt.expand_dims(x, 3)
    with pytest.raises(ShapeError, match=r"expand_dims: repeated axis in \(0, -4\)"):
        rt.expand_dims(x, (0, -4))
    with pytest.raises(ShapeError, match=r"expand_dims: axes \(5,\) out of range for a 3-d res"):
        ExpandDims((5,))(x)


def test_squeeze():
    x = rt.tensor("x", shape=(1, None, 1, 3))
    # axis=None drops only the lengths statically known to be 1
    assert rt.squeeze(x).type == T("float64", None, 3)
    assert x.squeeze() is rt.squeeze(x, (0, 2)) is rt.squeeze(x, (-2, 0))
    assert rt.squeeze(x, 1).type == T("float64", 1, 1, 3)  # checked at run time
    assert x.squeeze(axis=0).owner.op == Squeeze((0,))
    v = rt.vector("v")
    assert rt.squeeze(v) is v


def test_squeeze_errors():
    x = rt.tensor("x", shape=(1, 3))
    with pytest.raises(ShapeError, match=r"squeeze: cannot remove axis 1 of length 3 \(input 'x"):
        rt.squeeze(x, 1)
    with pytest.raises(ShapeError, match=r"squeeze: axis 2 is out of range for a 2-d input"):
        rt.squeeze(x, 2)
    with pytest.raises(ShapeError, match=r"squeeze: cannot remove axis 1 of length 3 from an in"):
        Squeeze((1,))(x)
    with pytest.raises(ShapeError, match=r"squeeze: axis 3 is out of range for a 2-d input"):
        Squeeze((3,))(x)


# --- concatenate, stack -----------------------------------------------------------------


def test_concatenate_types():
    x = rt.tensor("x", shape=(2, 3), dtype="float32")
    y = rt.tensor("y", shape=(None, 3), dtype="int32")
    z = rt.tensor("z", shape=(4, None), dtype="float32")
    expected = np.concatenate([np.zeros(1, "float32"), np.zeros(1, "int32")]).dtype.name
    assert rt.concatenate([x, y]).type == T(expected, None, 3)
    assert rt.concatenate([x, z]).type == T("float32", 6, 3)
    w = rt.tensor("w", shape=(None, None), dtype="float32")
    assert rt.concatenate([x, w], axis=1).type == T("float32", 2, None)
    assert rt.concatenate([x, x], axis=-1).type == T("float32", 2, 6)
    assert rt.concatenate([x, x], axis=None).type == T("float32", 12)
    assert rt.concatenate([x, np.zeros((1, 3), "float32")]).type == T("float32", 3, 3)
    assert rt.concatenate([x]) is x


def test_concatenate_hash_consing():
    x, y = rt.matrix("x"), rt.matrix("y")
    assert rt.concatenate([x, y], -1) is rt.concatenate((x, y), axis=1)
    assert rt.concatenate([x, y], 1).owner.op == Concatenate(1)


def test_concatenate_errors():
    x = rt.tensor("x", shape=(2, 3))
    with pytest.raises(ShapeError, match=r"concatenate: input 1 is 1-d but input 0 is 2-d \(inpu"):
        rt.concatenate([x, rt.vector("y")])
    with pytest.raises(
        ShapeError,
        match=r"concatenate: input 1 has shape \(2, 4\), which does not match \(2, 3\) of input 0 "
        r"on axis 1 \(only axis 0 may differ\) \(inputs 'x', 'y'\)",
    ):
        rt.concatenate([x, rt.matrix("y", shape=(2, 4))])
    with pytest.raises(GraphTypeError, match=r"concatenate: expected a list or tuple of tensors"):
        rt.concatenate(x)
    with pytest.raises(ShapeError, match=r"concatenate: need at least one input"):
        rt.concatenate([])
    with pytest.raises(ShapeError, match=r"concatenate: 0-d inputs cannot be concatenated"):
        rt.concatenate([rt.scalar("s"), rt.scalar("t")])
    with pytest.raises(ShapeError, match=r"concatenate: axis 2 is out of range for a 2-d input"):
        rt.concatenate([x, x], axis=2)
    with pytest.raises(GraphTypeError, match=r"concatenate: axis must be a non-negative int"):
        Concatenate(-1)
    with pytest.raises(ShapeError, match=r"concatenate: need at least one input"):
        Concatenate(0)()
    with pytest.raises(ShapeError, match=r"concatenate: 0-d inputs cannot be concatenated"):
        Concatenate(0)(rt.scalar("s"))
    with pytest.raises(ShapeError, match=r"concatenate: axis 2 is out of range for 2-d inputs"):
        Concatenate(2)(x, x)


def test_stack():
    x = rt.tensor("x", shape=(2, None))
    y = rt.tensor("y", shape=(None, 3), dtype="int64")
    assert rt.stack([x, y]).type == T("float64", 2, 2, 3)
    assert rt.stack([x, y], axis=-1).type == T("float64", 2, 3, 2)
    assert rt.stack([x]) is rt.expand_dims(x, 0)
    assert rt.stack([x, x], 1) is rt.concatenate([rt.expand_dims(x, 1)] * 2, axis=1)
    with pytest.raises(ShapeError, match=r"stack: all inputs must have one shape, but input 1"):
        rt.stack([x, rt.tensor("z", shape=(3, 3))])
    with pytest.raises(ShapeError, match=r"stack: all inputs must have one shape"):
        rt.stack([x, rt.vector("v")])
    with pytest.raises(ShapeError, match=r"stack: axis 3 is out of range for a 3-d result"):
        rt.stack([x, x], 3)
    with pytest.raises(GraphTypeError, match=r"stack: expected a list or tuple of tensors"):
        rt.stack(np.zeros((2, 2)))


# --- end to end -------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_end_to_end(backend):
    x = rt.tensor("x", shape=(None, 3))
    outputs = [
        x.shape,
        x.size,
        rt.reshape(x, (shape_i(x, 0) * 3 // 2, 2)),
        x.T,
        rt.stack([x, x], axis=-1),
        rt.concatenate([x, rt.cast(x, "int32")], axis=1),
        rt.broadcast_to(rt.expand_dims(x, 0), (2, shape_i(x, 0), 3)),
        rt.squeeze(rt.expand_dims(x, 1), 1),
        x.flatten(),
    ]
    f = rk.function([x], outputs, backend=backend)
    a = np.arange(12.0).reshape(4, 3)
    expected = [
        np.array([4, 3]),
        np.int64(12),
        a.reshape(6, 2),
        a.T,
        np.stack([a, a], axis=-1),
        np.concatenate([a, a.astype("int32")], axis=1),
        np.broadcast_to(a, (2, 4, 3)),
        a,
        a.ravel(),
    ]
    for got, want in zip(f(a), expected, strict=True):
        got = np.asarray(got)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)


def test_jax_needs_static_shapes():
    x, n = rt.vector("x"), rt.scalar("n", dtype="int64")
    graph = rt.reshape(x, (n, -1))
    f = rk.function([x, n], graph, backend="numpy")
    assert f(np.arange(6.0), 2).shape == (2, 3)
    g = rk.function([x, n], graph, backend="jax")
    with pytest.raises(ShapeError, match=r"reshape: the shape must be known when the graph is c"):
        g(np.arange(6.0), 2)
    h = rk.function([x, n], rt.broadcast_to(x, (n, 6)), backend="jax")
    with pytest.raises(ShapeError, match=r"broadcast_to: the shape must be known when the graph"):
        h(np.arange(6.0), 2)


def test_make_vector_under_jax_is_traced():
    i, j = rt.scalar("i", dtype="int32"), rt.scalar("j", dtype="int64")
    f = rk.function([i, j], MakeVector()(i, j), backend="jax")
    out = np.asarray(f(3, 4))
    assert out.dtype == np.int64 and out.tolist() == [3, 4]
