"""The products: dtypes against NumPy, static shapes, hash-consing, errors, both backends."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.errors import BroadcastError, GraphTypeError, ShapeError
from rewritekit.ir import SUPPORTED_DTYPES, TensorType
from rewritekit.tensor import products as pr

DTYPES = sorted(SUPPORTED_DTYPES)
F64 = "float64"


def T(*shape, dtype=F64):
    return TensorType(dtype, shape)


# --- dtypes ------------------------------------------------------------------------------

BINARY = {
    rt.dot: (np.dot, (2, 3), (3, 2)),
    rt.matmul: (np.matmul, (2, 3), (3, 2)),
    rt.outer: (np.outer, (2,), (3,)),
    rt.tensordot: (np.tensordot, (2, 3), (2, 3)),
}


@given(st.sampled_from(list(BINARY)), st.sampled_from(DTYPES), st.sampled_from(DTYPES))
def test_dtypes_match_numpy(fn, dtype_a, dtype_b):
    reference, shape_a, shape_b = BINARY[fn]
    expected = reference(np.ones(shape_a, dtype_a), np.ones(shape_b, dtype_b)).dtype.name
    a, b = rt.tensor("a", shape_a, dtype_a), rt.tensor("b", shape_b, dtype_b)
    assert fn(a, b).dtype == expected


@given(st.sampled_from(DTYPES), st.sampled_from(DTYPES))
def test_einsum_dtype_matches_numpy(dtype_a, dtype_b):
    expected = np.einsum("ij,j", np.ones((2, 3), dtype_a), np.ones(3, dtype_b)).dtype.name
    assert rt.einsum("ij,j", rt.matrix("a", dtype_a), rt.vector("b", dtype_b)).dtype == expected


def test_integer_and_bool_products_stay_integer_and_bool():
    # np.dot keeps bool (logical or of ands) and integer dtypes; nothing goes to float.
    assert rt.dot(rt.vector("b", "bool"), rt.vector("c", "bool")).dtype == "bool"
    assert (rt.matrix("i", "int32") @ rt.matrix("j", "int8")).dtype == "int32"


def test_python_scalars_are_converted_like_np_asarray():
    # np.dot(float32_array, 2.0) is float64: np.dot converts 2.0 to a float64 array.
    x = rt.vector("x", "float32")
    assert rt.dot(x, 2.0).dtype == np.dot(np.ones(3, np.float32), 2.0).dtype.name == "float64"


# --- static shapes -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("shape_a", "shape_b", "expected"),
    [
        ((), (2, None), (2, None)),
        ((2, 3), (), (2, 3)),
        ((3,), (3,), ()),
        ((2, None), (3,), (2,)),
        ((None,), (3, 4), (4,)),
        ((2, 3), (None, 4), (2, 4)),
        ((5, 2, 3), (6, 3, 4), (5, 2, 6, 4)),
    ],
)
def test_dot_shapes(shape_a, shape_b, expected):
    assert rt.dot(rt.tensor("a", shape_a), rt.tensor("b", shape_b)).type is T(*expected)


@pytest.mark.parametrize(
    ("shape_a", "shape_b", "expected"),
    [
        ((3,), (3,), ()),
        ((2, 3), (3,), (2,)),
        ((3,), (3, 4), (4,)),
        ((5, 2, 3), (3, 4), (5, 2, 4)),
        ((5, 1, 2, 3), (7, 3, 4), (5, 7, 2, 4)),
        ((None, 2, 3), (6, 3, None), (6, 2, None)),
        ((3,), (5, 3, 4), (5, 4)),
    ],
)
def test_matmul_shapes(shape_a, shape_b, expected):
    a, b = rt.tensor("a", shape_a), rt.tensor("b", shape_b)
    assert rt.matmul(a, b).type is T(*expected)
    assert (a @ b) is rt.matmul(a, b)


def test_outer_shapes():
    assert rt.outer(rt.matrix("a", shape=(2, 3)), rt.vector("b", shape=(4,))).type is T(6, 4)
    assert rt.outer(rt.matrix("a", shape=(2, None)), rt.tensor("b")).type is T(None, 1)
    # A static 0 makes the size 0 whatever the unknown lengths.
    assert rt.outer(rt.matrix("a", shape=(0, None)), rt.vector("b")).type is T(0, None)


def test_tensordot_shapes():
    a, b = rt.tensor("a", (2, 3, 4)), rt.tensor("b", (3, 4, 5))
    assert rt.tensordot(a, b).type is T(2, 5)
    assert rt.tensordot(a, b, axes=0).type is T(2, 3, 4, 3, 4, 5)
    assert rt.tensordot(a, rt.tensor("c", (4, 6)), axes=1).type is T(2, 3, 6)
    assert rt.tensordot(a, b, axes=([1], [0])).type is T(2, 4, 4, 5)
    assert rt.tensordot(a, b, axes=(-1, 1)).type is T(2, 3, 3, 5)


def test_einsum_shapes():
    a, b = rt.matrix("a", shape=(2, 3)), rt.matrix("b", shape=(None, 4))
    assert rt.einsum("ij,jk->ik", a, b).type is T(2, 4)
    assert rt.einsum("ij,jk", a, b).type is T(2, 4)
    # Implicit output: the letters in ASCII order, so "ji" is a transpose (as in NumPy).
    assert rt.einsum("ji", a).type is T(3, 2)
    assert rt.einsum("ij->", a).type is T()
    assert rt.einsum("ii->i", rt.matrix("s", shape=(None, 3))).type is T(3)
    assert rt.einsum("ii", rt.matrix("s")).type is T()
    assert rt.einsum("i,i->i", rt.vector("o", shape=(1,)), rt.vector("v")).type is T(None)
    assert rt.einsum("i,i->i", rt.vector("o", shape=(1,)), rt.vector("w", shape=(3,))).type is T(3)
    c, d = rt.tensor("c", (5, 1, 2, 3)), rt.tensor("d", (7, 3, 4))
    assert rt.einsum("...ij,...jk->...ik", c, d).type is T(5, 7, 2, 4)
    assert rt.einsum("i...,i", rt.tensor("e", (2, 3, 4)), rt.vector("f")).type is T(3, 4)
    assert rt.einsum(",ij->ji", 2.0, a).type is T(3, 2)


# --- hash-consing --------------------------------------------------------------------------


def test_einsum_is_normalized():
    a, b = rt.matrix("a"), rt.matrix("b")
    y = rt.einsum("ij,jk", a, b)
    assert y.owner.op == pr.Einsum("ab,bc->ac")
    assert y is rt.einsum("xy,yz->xz", a, b)
    assert y is rt.einsum(" ij , jk -> ik ", a, b)
    assert rt.einsum("ji", a) is rt.einsum("ij->ji", a)
    assert rt.einsum("ij", a) is rt.einsum("ab->ab", a)
    assert rt.einsum("ij->ji", a) is not rt.einsum("ij->ij", a)


def test_tensordot_axes_are_normalized():
    a, b = rt.tensor("a", (2, 3, 4)), rt.tensor("b", (4, 3, 5))
    y = rt.tensordot(a, b, axes=([1, 2], [1, 0]))
    assert y.owner.op == pr.Tensordot(((1, 2), (1, 0)))
    assert y is rt.tensordot(a, b, axes=([2, 1], [0, 1]))  # the pairs' order does not matter
    assert y is rt.tensordot(a, b, axes=([-1, -2], [0, -2]))
    c = rt.tensor("c", (3, 4, 5))
    assert rt.tensordot(a, c) is rt.tensordot(a, c, axes=([1, 2], [0, 1]))


def test_products_are_hash_consed():
    a, b = rt.matrix("a"), rt.matrix("b")
    assert rt.dot(a, b) is a.dot(b)
    assert rt.matmul(a, b) is a @ b
    assert rt.outer(a, b) is rt.outer(a, b)


# --- errors ----------------------------------------------------------------------------


def test_dot_errors():
    a, b = rt.matrix("a", shape=(2, 3)), rt.matrix("b", shape=(4, 5))
    with pytest.raises(
        ShapeError,
        match=r"dot: shapes \(2, 3\) and \(4, 5\) are not aligned: axis 1 of input 0 has "
        r"length 3 but axis 0 of input 1 has length 4 \(inputs 'a', 'b'\)",
    ):
        rt.dot(a, b)
    with pytest.raises(GraphTypeError, match="dot: input 1: cannot use str 'x' as a tensor"):
        rt.dot(a, "x")


def test_matmul_errors():
    a = rt.matrix("a", shape=(2, 3))
    with pytest.raises(ShapeError, match=r"matmul: input 1 is 0-d; .* \(use multiply"):
        rt.matmul(a, 2.0)
    with pytest.raises(ShapeError, match=r"matmul: input 0 is 0-d"):
        rt.scalar("s") @ a
    with pytest.raises(
        ShapeError,
        match=r"matmul: shapes \(2, 3\) and \(2,\) are not aligned: the last axis of input 0 "
        r"has length 3 but the only axis of input 1 has length 2",
    ):
        a @ rt.vector("v", shape=(2,))
    with pytest.raises(ShapeError, match="the second-to-last axis of input 1 has length 4"):
        a @ rt.matrix("m", shape=(4, 3))
    with pytest.raises(BroadcastError, match=r"matmul: cannot broadcast shapes \(2,\) and \(3,\)"):
        rt.tensor("c", (2, 2, 3)) @ rt.tensor("d", (3, 3, 4))


def test_tensordot_errors():
    a, b = rt.matrix("a", shape=(2, 3)), rt.matrix("b", shape=(3, 4))
    with pytest.raises(ShapeError, match=r"tensordot: axes=3 must be between 0 and the smaller"):
        rt.tensordot(a, b, axes=3)
    with pytest.raises(ShapeError, match=r"tensordot: axes=-1 must be between 0"):
        rt.tensordot(a, b, axes=-1)
    with pytest.raises(GraphTypeError, match=r"tensordot: axes must be an int or a pair"):
        rt.tensordot(a, b, axes="ij")
    with pytest.raises(GraphTypeError, match=r"tensordot: axes for input 1 must be an int or a"):
        rt.tensordot(a, b, axes=([0], [1.0]))
    with pytest.raises(ShapeError, match=r"tensordot: axis 2 is out of range for the 2-d input 0"):
        rt.tensordot(a, b, axes=([2], [0]))
    with pytest.raises(ShapeError, match=r"tensordot: axes \(1, -1\) of input 1 .* repeat"):
        rt.tensordot(a, b, axes=([0, 1], [1, -1]))
    with pytest.raises(ShapeError, match=r"pair 2 axes of input 0 with 1 of input 1"):
        rt.tensordot(a, b, axes=([0, 1], [0]))
    with pytest.raises(
        ShapeError, match=r"tensordot: shapes \(2, 3\) and \(3, 4\) are not aligned: axis 0"
    ):
        rt.tensordot(a, b, axes=([0], [0]))


def test_tensordot_op_errors():
    a, b = rt.matrix("a"), rt.matrix("b")
    with pytest.raises(GraphTypeError, match=r"tensordot: axes must be a pair of sequences"):
        pr.Tensordot(5)
    with pytest.raises(GraphTypeError, match=r"equally long tuples of distinct non-negative"):
        pr.Tensordot(((0,), (0, 1)))
    with pytest.raises(GraphTypeError, match=r"equally long tuples of distinct non-negative"):
        pr.Tensordot(((-1,), (0,)))
    with pytest.raises(ShapeError, match=r"tensordot: axis 3 is out of range for the 2-d input 1"):
        pr.Tensordot(((0,), (3,)))(a, b)
    with pytest.raises(ShapeError, match=r"tensordot: axes \(0, 0\) of input 1 repeat an axis"):
        pr.Tensordot(((0, 1), (0, 0)))(a, b)


def test_einsum_subscript_errors():
    a = rt.matrix("a", shape=(2, 3))
    with pytest.raises(GraphTypeError, match=r"einsum: subscripts must be a str, got 3"):
        rt.einsum(3, a)
    with pytest.raises(ShapeError, match=r"einsum: subscripts 'i->j->k' have more than one"):
        rt.einsum("i->j->k", a)
    with pytest.raises(ShapeError, match=r"einsum: term '\.\.\.i\.\.\.' of .* two ellipses"):
        rt.einsum("...i...", a)
    with pytest.raises(ShapeError, match=r"einsum: invalid character '1' in subscripts 'i1'"):
        rt.einsum("i1", a)
    with pytest.raises(ShapeError, match=r"einsum: invalid character '\.' in subscripts 'i\.j'"):
        rt.einsum("i.j", a)
    with pytest.raises(ShapeError, match=r"einsum: subscripts 'ij,jk' name 2 operand\(s\), got 1"):
        rt.einsum("ij,jk", a)
    with pytest.raises(
        ShapeError, match=r"einsum: term 'ijk' of 'ijk' names 3 axes but operand 0 is 2-d"
    ):
        rt.einsum("ijk", a)
    with pytest.raises(ShapeError, match=r"term 'i' of 'i' names 1 axes but operand 0 is 2-d"):
        rt.einsum("i", a)
    with pytest.raises(ShapeError, match=r"einsum: output letter 'k' of 'ij->k' is in no input"):
        rt.einsum("ij->k", a)
    with pytest.raises(ShapeError, match=r"einsum: output letter 'i' repeats in 'ij->ii'"):
        rt.einsum("ij->ii", a)
    with pytest.raises(ShapeError, match=r"the '\.\.\.' of '\.\.\.j->j' covers 1 axes but the"):
        rt.einsum("...j->j", a)


def test_einsum_length_errors():
    a, b = rt.matrix("a", shape=(2, 3)), rt.matrix("b", shape=(2, 4))
    with pytest.raises(
        ShapeError,
        match=r"einsum: letter 'j' has length 3 in operand 0 but 2 in operand 1 "
        r"\(subscripts 'ij,jk', operands 'a', 'b'\)",
    ):
        rt.einsum("ij,jk", a, b)
    with pytest.raises(
        ShapeError, match=r"einsum: letter 'i' repeats in operand 0 with lengths 2 and 3"
    ):
        rt.einsum("ii", a)
    with pytest.raises(ShapeError, match=r"einsum: the '\.\.\.' axes \(2,\) and \(3,\) cannot"):
        rt.einsum("...i,...i", rt.matrix("c", shape=(2, 5)), rt.matrix("d", shape=(3, 5)))
    # Through the Op (as a rewrite would build it): the canonical letters, and the inputs.
    with pytest.raises(ShapeError, match=r"letter 'b' has length 3 .*\(inputs 'a', 'b'\)"):
        pr.Einsum("ab,bc->ac")(a, b)


def test_einsum_op_needs_explicit_subscripts():
    with pytest.raises(GraphTypeError, match=r"einsum: the Op needs explicit subscripts"):
        pr.Einsum("ij,jk")


# --- both backends -----------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_products_run(backend):
    rng = np.random.default_rng(0)
    a, b, c = rt.tensor("a", (None, 2, 3)), rt.matrix("b"), rt.vector("c")
    outputs = [
        a @ b,
        rt.dot(a, b),
        rt.outer(b, c),
        rt.tensordot(a, b, axes=([2], [0])),
        rt.einsum("bij,jk,k->bi", a, b, c),
        b.dot(c),
    ]
    f = rk.function([a, b, c], outputs, backend=backend)
    av, bv, cv = rng.normal(size=(4, 2, 3)), rng.normal(size=(3, 5)), rng.normal(size=5)
    expected = [
        av @ bv,
        np.dot(av, bv),
        np.outer(bv, cv),
        np.tensordot(av, bv, axes=([2], [0])),
        np.einsum("bij,jk,k->bi", av, bv, cv),
        bv.dot(cv),
    ]
    for got, want in zip(f(av, bv, cv), expected, strict=True):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_integer_products_run_exactly(backend):
    a, b = rt.matrix("a", "int32"), rt.matrix("b", "bool")
    f = rk.function([a, b], [a @ b, rt.einsum("ij,jk", b, b)], backend=backend)
    av = np.arange(6, dtype=np.int32).reshape(2, 3)
    bv = np.array([[True, False, True], [False, False, True], [True, True, False]])
    got_ab, got_bb = f(av, bv)
    assert np.asarray(got_ab).dtype == np.int32
    np.testing.assert_array_equal(got_ab, av @ bv)
    assert np.asarray(got_bb).dtype == np.bool_
    np.testing.assert_array_equal(got_bb, np.einsum("ij,jk", bv, bv))


def test_jax_product_with_a_constant_operand():
    # The constant arrives as a NumPy array beside a tracer.
    x = rt.vector("x", "float32")
    weights = np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32)
    f = rk.function([x], rt.dot(weights, x), backend="jax")
    out = np.asarray(f(np.array([1.0, 1.0], np.float32)))
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, weights @ np.ones(2, np.float32))
