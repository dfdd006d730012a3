import pickle

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from rewritekit.errors import BroadcastError, DTypeError
from rewritekit.ir import SUPPORTED_DTYPES, TensorType, broadcast_shapes, result_dtype

DTYPES = sorted(SUPPORTED_DTYPES)


def test_tensor_types_are_interned_and_normalized():
    assert TensorType("float64", (None,)) is TensorType(np.float64, [None])
    assert TensorType(float, ()) is TensorType("f8", ())
    assert TensorType("float32", (3,)) is not TensorType("float32", (4,))
    assert TensorType("int64", (np.int64(2), None)).shape == (2, None)


def test_tensor_type_text_and_attributes():
    t = TensorType("float32", (None, 3))
    assert str(t) == "float32[?,3]"
    assert repr(t) == "TensorType(dtype='float32', shape=(None, 3))"
    assert str(TensorType("bool", ())) == "bool[]"
    assert t.ndim == 2
    assert t.kind == "f"
    assert t.with_shape((2, 3)) is TensorType("float32", (2, 3))


def test_tensor_type_is_immutable_and_pickles_to_the_same_object():
    t = TensorType("int32", (2,))
    with pytest.raises(AttributeError, match="immutable"):
        t.dtype = "int64"
    assert pickle.loads(pickle.dumps(t)) is t


@pytest.mark.parametrize(
    ("dtype", "shape", "error", "match"),
    [
        ("object", (), DTypeError, "unsupported dtype 'object'"),
        ("not-a-dtype", (), DTypeError, "unknown dtype 'not-a-dtype'"),
        ("float64", (-1,), TypeError, "non-negative int or None, got -1"),
        ("float64", (1.5,), TypeError, "non-negative int or None, got 1.5"),
        ("float64", (True,), TypeError, "non-negative int or None, got True"),
        ("float64", object(), TypeError, "shape must be a sequence"),
    ],
)
def test_bad_tensor_types_are_rejected(dtype, shape, error, match):
    with pytest.raises(error, match=match):
        TensorType(dtype, shape)


def test_refinement_and_compatibility():
    unknown = TensorType("float64", (None, 3))
    known = TensorType("float64", (2, 3))
    assert unknown.is_refined_by(known)
    assert not known.is_refined_by(unknown)
    assert unknown.is_compatible(known) and known.is_compatible(unknown)
    assert not known.is_compatible(TensorType("float64", (2, 4)))
    assert not known.is_compatible(TensorType("float32", (2, 3)))
    assert not known.is_compatible(TensorType("float64", (2,)))


@given(st.sampled_from(DTYPES), st.sampled_from(DTYPES))
def test_result_dtype_matches_numpy_arrays(a, b):
    expected = (np.zeros(2, dtype=a) + np.zeros(2, dtype=b)).dtype.name
    assert result_dtype(a, b) == expected


@given(st.sampled_from(DTYPES), st.sampled_from([True, 3, 2.5, 1j]))
def test_python_scalars_are_weak_as_in_numpy_2(dtype, scalar):
    expected = np.result_type(np.zeros(2, dtype=dtype), scalar).name
    assert result_dtype(dtype, scalar) == expected


def test_weak_scalar_examples():
    assert result_dtype("float32", 5.0) == "float32"
    assert result_dtype("int64", 0.5) == "float64"
    assert result_dtype("int8", 3) == "int8"
    assert result_dtype(5.0) == "float64"
    assert result_dtype(TensorType("float16", ()), 2) == "float16"
    with pytest.raises(DTypeError, match="at least one"):
        result_dtype()


shape_entry = st.integers(min_value=1, max_value=4)


@given(st.lists(st.lists(shape_entry, max_size=4), min_size=1, max_size=4))
def test_broadcast_of_static_shapes_matches_numpy(shapes):
    try:
        expected = np.broadcast_shapes(*map(tuple, shapes))
    except ValueError:
        with pytest.raises(BroadcastError):
            broadcast_shapes(*shapes)
    else:
        assert broadcast_shapes(*shapes) == expected


@given(st.lists(st.lists(shape_entry, max_size=4), min_size=1, max_size=4), st.data())
def test_unknown_lengths_agree_with_the_concrete_result(shapes, data):
    """Hiding lengths behind None never contradicts what NumPy gives once they are known."""
    try:
        concrete = np.broadcast_shapes(*map(tuple, shapes))
    except ValueError:
        concrete = None
    assume(concrete is not None)
    hidden = [[None if data.draw(st.booleans()) else n for n in shape] for shape in shapes]
    static = broadcast_shapes(*hidden)
    assert len(static) == len(concrete)
    assert all(s is None or s == c for s, c in zip(static, concrete, strict=True))


def test_broadcast_with_unknown_lengths():
    assert broadcast_shapes((None,), (3,)) == (3,)
    assert broadcast_shapes((None,), (1,)) == (None,)
    assert broadcast_shapes((None, 1), (3,)) == (None, 3)
    assert broadcast_shapes((None,), (None,)) == (None,)
    assert broadcast_shapes((2, 1), (1, 5)) == (2, 5)
    assert broadcast_shapes() == ()


def test_broadcast_error_names_op_shapes_and_inputs():
    with pytest.raises(
        BroadcastError, match=r"add: cannot broadcast shapes \(3,\) and \(4,\) \(inputs 'x', 'y'\)"
    ):
        broadcast_shapes((3,), (4,), op="add", names=["x", "y"])
    with pytest.raises(BroadcastError, match=r"\(\?, 3\) and \(2, 4\)"):
        broadcast_shapes((None, 3), (2, 4))
