"""sort and argsort: dtypes, static shapes, hash-consing, errors, methods, both backends."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.errors import DTypeError, GraphTypeError, ShapeError
from rewritekit.ir import SUPPORTED_DTYPES, TensorType
from rewritekit.tensor.sorting import Argsort, Sort

REAL = sorted(d for d in SUPPORTED_DTYPES if np.dtype(d).kind != "c")


@given(st.sampled_from(REAL))
def test_dtypes_match_numpy(dtype):
    x = rt.matrix("x", dtype)
    assert rt.sort(x).dtype == np.sort(np.ones((2, 2), dtype)).dtype.name == dtype
    assert rt.argsort(x).dtype == np.argsort(np.ones((2, 2), dtype)).dtype.name == "int64"


def test_static_shapes():
    x = rt.tensor("x", (2, None, 4))
    assert rt.sort(x).type is TensorType("float64", (2, None, 4))
    assert rt.argsort(x, axis=0).type is TensorType("int64", (2, None, 4))
    assert rt.sort(x, axis=None).type is TensorType("float64", (None,))
    assert rt.sort(rt.tensor("y", (2, 3)), axis=None).type is TensorType("float64", (6,))
    assert rt.argsort(rt.tensor("z", (0, None)), axis=None).type is TensorType("int64", (0,))
    assert rt.sort(rt.scalar("s"), axis=None).type is TensorType("float64", (1,))


def test_axes_are_normalized():
    x, v = rt.tensor("x", (2, 3, 4)), rt.vector("v")
    assert rt.sort(x) is rt.sort(x, axis=2) is rt.sort(x, axis=np.int32(-1))
    assert rt.argsort(x, axis=-3) is rt.argsort(x, axis=0)
    assert rt.sort(x).owner.op == Sort(2)
    assert rt.sort(x, axis=None).owner.op == Sort(None)
    # Flattening a vector is sorting it along its only axis.
    assert rt.sort(v, axis=None) is rt.sort(v)
    assert rt.argsort(v, axis=None).owner.op == Argsort(0)


def test_methods_return_new_vars():
    # Unlike NumPy's in-place ndarray.sort, x.sort() returns the sorted Var; x is unchanged.
    x = rt.matrix("x")
    assert x.sort() is rt.sort(x)
    assert x.sort(axis=0) is rt.sort(x, axis=0)
    assert x.argsort(axis=None) is rt.argsort(x, axis=None)
    assert x.owner is None


def test_errors():
    x = rt.matrix("x")
    with pytest.raises(
        ShapeError, match=r"sort: axis 2 is out of range for a 2-d input \(input 'x'\)"
    ):
        rt.sort(x, axis=2)
    with pytest.raises(ShapeError, match=r"argsort: axis -1 is out of range for a 0-d input .*"):
        rt.argsort(rt.scalar("s"))
    with pytest.raises(GraphTypeError, match=r"sort: axis must be an int or None, got \(0,\)"):
        rt.sort(x, axis=(0,))
    with pytest.raises(DTypeError, match=r"sort: input has dtype complex128, which sort does not"):
        rt.sort(rt.vector("c", "complex128"))
    with pytest.raises(GraphTypeError, match=r"argsort: axis must be a non-negative int or None"):
        Argsort(-1)
    with pytest.raises(
        ShapeError, match=r"sort: axis 3 is out of range for a 2-d input \(inputs 'x'\)"
    ):
        Sort(3)(x)


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_stable_with_ties_nan_and_signed_zeros(backend):
    x = rt.matrix("x")
    outputs = [x.sort(), x.argsort(), rt.argsort(x, axis=0), rt.sort(x, axis=None)]
    f = rk.function([x], outputs, backend=backend)
    xv = np.array([[1.0, np.nan, 0.0, -0.0, 1.0], [-np.inf, 0.0, np.nan, 1.0, -0.0]])
    expected = [
        np.sort(xv, kind="stable"),
        np.argsort(xv, kind="stable"),
        np.argsort(xv, axis=0, kind="stable"),
        np.sort(xv, axis=None, kind="stable"),
    ]
    for got, want in zip(f(xv), expected, strict=True):
        np.testing.assert_array_equal(np.asarray(got), want)
    # Ties keep their order: 0.0 (index 2) before -0.0 (index 3); NaN last.
    np.testing.assert_array_equal(np.asarray(f(xv)[1])[0], [2, 3, 0, 4, 1])


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_integer_and_bool_sorts(backend):
    i, b = rt.vector("i", "int32"), rt.vector("b", "bool")
    f = rk.function([i, b], [rt.sort(i), rt.argsort(b)], backend=backend)
    iv = np.array([3, -1, 2, -1], dtype=np.int32)
    bv = np.array([True, False, True, False])
    sorted_i, order_b = f(iv, bv)
    assert np.asarray(sorted_i).dtype == np.int32
    np.testing.assert_array_equal(sorted_i, [-1, -1, 2, 3])
    np.testing.assert_array_equal(order_b, np.argsort(bv, kind="stable"))
