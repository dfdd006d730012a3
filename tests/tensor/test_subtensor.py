"""Indexing: static shapes and dtypes, hash-consing, errors, Var methods, end to end.

Expected static shapes come from NumPy: ``np.empty(shape)[index].shape``.
"""

import pickle

import jax
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.errors import BroadcastError, DTypeError, GraphTypeError, ShapeError
from rewritekit.ir import TensorType
from rewritekit.tensor.elemwise import Cast
from rewritekit.tensor.subtensor import (
    ARRAY,
    SCALAR,
    IncSubtensor,
    SetSubtensor,
    Subtensor,
    entry_axes,
    index_str,
    make_index,
    selected_shape,
)
from tests.records.subtensor import _random_index


def T(dtype, *shape):
    return TensorType(dtype, shape)


def numpy_shape(shape, index):
    return np.empty(shape)[index].shape


# --- static shapes ----------------------------------------------------------------------

BASIC = [
    0,
    -1,
    (1, 2),
    slice(1, 3),
    slice(None, None, -1),
    slice(-10, 10, 3),
    slice(3, 0, -2),
    (slice(None), 1),
    (None, 0, None),
    (Ellipsis, 1),
    (1, Ellipsis),
    (None, Ellipsis, None),
    (),
    Ellipsis,
    (slice(1, 4), None, slice(None, None, 2), 0),
]

ADVANCED = [
    [0, 2],
    ([0, 1], [1, 2]),
    (slice(None), [[0], [1]]),
    ([[0], [1]], slice(1, 3), [2, 0]),  # apart: the broadcast axes come first
    (slice(None), [0], [[1, 2]]),  # adjacent: in place
    (1, slice(None), [0, 1]),  # an int counts as advanced: apart
    (slice(None), 1, [0, 1]),  # adjacent
    ([0], None, [0]),  # a new axis separates
    (slice(None), [0], Ellipsis, [0]),  # so does an Ellipsis that stands for no axes
    (Ellipsis, [0, 1], None),
    ([],),
]


@pytest.mark.parametrize("index", BASIC + ADVANCED, ids=repr)
def test_static_shapes_follow_numpy(index):
    x = rt.tensor("x", shape=(3, 4, 5))
    assert x[index].type == T("float64", *numpy_shape((3, 4, 5), index))


@pytest.mark.parametrize("index", BASIC + ADVANCED, ids=repr)
def test_unknown_lengths_stay_unknown(index):
    # An axis of unknown length keeps it through a full slice, is unknown after any other
    # slice, and index arrays give their own static shapes.
    x = rt.tensor("x", shape=(None, 4, None))
    known = numpy_shape((3, 4, 5), index)
    got = x[index].type.shape
    assert len(got) == len(known)
    assert all(g is None or g == k for g, k in zip(got, known, strict=True))
    y = rt.tensor("y", shape=(None, None, None))
    assert y[slice(1, 3)].type == T("float64", None, None, None)
    assert y[0, :, [0, 1]].type == T("float64", 2, None)


def test_slice_lengths():
    x = rt.tensor("x", shape=(10,))
    for s in [slice(2, 8, 3), slice(None, None, -3), slice(-3, None), slice(20, None), slice(5, 2)]:
        assert x[s].type.shape == (len(range(*s.indices(10))),)
    n = rt.scalar("n", dtype="int64")
    assert x[n:].type == T("float64", None)  # run-time bounds: run-time length
    assert x[n].type == T("float64")
    assert x[:, None][n].type == T("float64", 1)


def test_dtype_is_kept_and_index_arrays_shape_the_result():
    x = rt.tensor("x", shape=(3, 4), dtype="int32")
    i = rt.tensor("i", shape=(2, None), dtype="uint8")
    assert x[i].type == T("int32", 2, None, 4)
    assert x[:, i].type == T("int32", 3, 2, None)
    assert rt.tensor("b", shape=(3,), dtype="bool")[1:].type == T("bool", 2)


@settings(max_examples=200)
@given(
    shape=st.lists(st.integers(1, 4), max_size=4),
    seed=st.integers(0, 2**16),
    advanced=st.booleans(),
)
def test_random_indices_infer_numpys_shape(shape, seed, advanced):
    index = _random_index(seed, shape, advanced)
    x = rt.tensor("x", shape=shape)
    assert x[index].type.shape == numpy_shape(shape, index)


def test_selected_shape_and_helpers():
    assert selected_shape("getitem", (0, (1, None, None)), T("float64", 3, 4), []) == (3,)
    assert entry_axes((0, Ellipsis, None, 1), 4) == [0, None, None, 3]
    assert (
        index_str((1, (None, SCALAR, 2), None, ARRAY, Ellipsis)) == "[1, :?:2, None, <array>, ...]"
    )
    n, i = np.int64(2), np.array([1])
    assert make_index((0, (SCALAR, None, None), None, ARRAY), [n, i])[:3] == (
        0,
        slice(2, None),
        None,
    )


# --- the index parameter and hash-consing -----------------------------------------------


def test_static_index_is_a_parameter_and_nodes_are_shared():
    x = rt.matrix("x")
    assert x[1:3] is x[1:3]
    assert x[1:3].owner.op == Subtensor(((1, 3, None),))
    assert x[1:3].owner.inputs == (x,)
    # equal indices spelled differently build the same node
    assert x[0] is x[0, :] is x[(0,)] is x[np.int64(0)] is x[rt.constant(0)] is x[np.array(0)]
    assert x[0:3:1] is x[:3]
    assert x[::1] is x[:] is x[...] is x[()] is x[:, :]
    assert x[..., 0] is x[:, 0]
    assert x[1:3].owner.op is not x[1:4].owner.op


def test_run_time_parts_are_inputs():
    x = rt.matrix("x")
    n = rt.scalar("n", dtype="int64")
    assert x[n] is x[n]
    assert x[n].owner.op == Subtensor((SCALAR,)) and x[n].owner.inputs == (x, n)
    assert x[1:n:2].owner.op == Subtensor(((1, SCALAR, 2),))
    i = rt.vector("i", dtype="int64")
    y = x[n, i]
    assert y.owner.op.index == (SCALAR, ARRAY) and y.owner.inputs == (x, n, i)
    assert y.owner.op.is_advanced and not x[n].owner.op.is_advanced
    assert x[[0, 1]].owner.inputs[1] is rt.constant(np.array([0, 1]))


def test_op_str_and_pickle():
    x = rt.matrix("x")
    n = rt.scalar("n", dtype="int64")
    assert str(x[1:n:-1, None].owner.op) == "Subtensor[1:?:-1, None]"
    op = Subtensor((0, (None, 3, None), None, Ellipsis, ARRAY))
    assert pickle.loads(pickle.dumps(op)) == op
    assert str(SetSubtensor((1,))) == "SetSubtensor[1]"


# --- updates -----------------------------------------------------------------------------


def test_set_and_inc_build_update_nodes_of_xs_type():
    x = rt.tensor("x", shape=(5, 3), dtype="float32")
    n = rt.scalar("n", dtype="int64")
    v = rt.tensor("v", shape=(3,), dtype="float32")
    y = rt.set_subtensor(x[n], v)
    assert y.type == x.type
    assert y.owner.op == SetSubtensor((SCALAR,)) and y.owner.inputs == (x, v, n)
    z = rt.inc_subtensor(x[[0, 0]], v)
    assert z.owner.op == IncSubtensor((ARRAY,)) and z.type == x.type


def test_at_methods_are_set_and_inc_subtensor():
    x = rt.vector("x", shape=(5,))
    assert x.at[1:3].set(0.0) is rt.set_subtensor(x[1:3], 0.0)
    assert x.at[[0, 0]].add(1.0) is rt.inc_subtensor(x[[0, 0]], 1.0)
    assert x[1:3] is x[1:3]  # x.at does not change x or its nodes


def test_values_are_cast_to_xs_dtype():
    x = rt.vector("x", dtype="float32")
    y = rt.set_subtensor(x[0], 2.5)  # a Python float is weak: a float32 constant
    assert y.owner.inputs[1] is rt.constant(np.float32(2.5))
    v = rt.scalar("v", dtype="float64")
    cast = rt.set_subtensor(x[0], v).owner.inputs[1]
    assert isinstance(cast.owner.op, Cast) and cast.dtype == "float32"
    k = rt.vector("k", dtype="int8")
    assert rt.inc_subtensor(k[0], 3).owner.inputs[1] is rt.constant(np.int8(3))
    assert rt.set_subtensor(k[0], 2.7).owner.inputs[1] is rt.constant(np.int8(2))  # as NumPy


# --- errors ------------------------------------------------------------------------------


def test_index_errors():
    x = rt.tensor("x", shape=(3, 4))
    with pytest.raises(ShapeError, match=r"getitem: too many indices for a 2-d input: 3 were"):
        x[0, 0, 0]
    with pytest.raises(ShapeError, match=r"getitem: index 5 is out of range for axis 1 with len"):
        x[:, 5]
    with pytest.raises(ShapeError, match=r"getitem: index -4 is out of range for axis 0 with"):
        x[-4]
    with pytest.raises(ShapeError, match=r"getitem: slice step cannot be zero"):
        x[::0]
    with pytest.raises(ShapeError, match=r"getitem: an index can have only one Ellipsis"):
        x[..., ...]
    with pytest.raises(ShapeError, match=r"getitem: index 3 in the index array for axis 0 is"):
        x[[0, 3]]
    with pytest.raises(BroadcastError, match=r"shapes \(2,\) and \(3,\) \(the index arrays\)"):
        x[[0, 1], [0, 1, 2]]


@pytest.mark.parametrize("mask", [True, rt.vector("m", dtype="bool")], ids=["python", "var"])
def test_masks_known_only_at_run_time_are_refused(mask):
    """(Constant masks index: tests/tensor/test_masks.py.)"""
    x = rt.vector("x")
    with pytest.raises(GraphTypeError, match=r"getitem: index 0 is a boolean mask.*rt\.nonzero"):
        x[mask]


def test_entries_of_other_kinds():
    x = rt.matrix("x")
    with pytest.raises(GraphTypeError, match=r"getitem: index 1 must be an int, a slice.*1\.5"):
        x[0, 1.5]
    with pytest.raises(GraphTypeError, match=r"getitem: index 0 must be .* str 'a'"):
        x["a"]
    with pytest.raises(GraphTypeError, match=r"getitem: index 0 must be .*\[0\.5\]"):
        x[[0.5]]
    with pytest.raises(DTypeError, match=r"getitem: index 0 must have an integer dtype"):
        x[rt.scalar("f")]
    with pytest.raises(GraphTypeError, match=r"getitem: slice bounds must be ints, None or .*1\.0"):
        x[1.0:]
    with pytest.raises(DTypeError, match=r"getitem: slice bounds must have an integer dtype"):
        x[: rt.scalar("f")]
    with pytest.raises(ShapeError, match=r"getitem: slice bounds must be scalars"):
        x[: rt.vector("i", dtype="int64")]


def test_op_checks_its_parameter_and_inputs():
    x = rt.matrix("x")
    with pytest.raises(GraphTypeError, match=r"getitem: index entries must be ints, .* got 1\.5"):
        Subtensor((1.5,))
    with pytest.raises(GraphTypeError, match=r"getitem: index must be a tuple"):
        Subtensor([0])
    with pytest.raises(GraphTypeError, match=r"getitem: a slice bound must be an int"):
        Subtensor(((0.5, None, None),))
    with pytest.raises(ShapeError, match=r"getitem: slice step cannot be zero"):
        Subtensor(((None, None, 0),))
    with pytest.raises(ShapeError, match=r"getitem: an index can have only one Ellipsis"):
        Subtensor((Ellipsis, Ellipsis))
    with pytest.raises(ShapeError, match=r"getitem: too many indices for a 2-d input: 3"):
        Subtensor((0, 0, 0))(x)
    with pytest.raises(GraphTypeError, match=r"getitem: the index \[\?\] reads 1 run-time parts"):
        Subtensor((SCALAR,))(x)
    with pytest.raises(DTypeError, match=r"getitem: the index for axis 0 must have an integer"):
        Subtensor((SCALAR,))(x, rt.scalar("f"))
    with pytest.raises(ShapeError, match=r"getitem: the slice stop of axis 1 must be a scalar"):
        Subtensor((0, (None, SCALAR, None)))(x, rt.vector("i", dtype="int64"))
    with pytest.raises(DTypeError, match=r"getitem: the index array for axis 0 must be integers"):
        Subtensor((ARRAY,))(x, rt.vector("f"))
    with pytest.raises(GraphTypeError, match=r"the index array for axis 1 is a boolean mask"):
        Subtensor((0, ARRAY))(x, rt.vector("m", dtype="bool"))


def test_update_errors():
    x = rt.tensor("x", shape=(3, 4))
    with pytest.raises(GraphTypeError, match=r"set_subtensor: <Var 'x' .* is not the result of"):
        rt.set_subtensor(x, 1.0)
    with pytest.raises(GraphTypeError, match=r"inc_subtensor: ndarray is not the result of index"):
        rt.inc_subtensor(np.zeros(3), 1.0)
    with pytest.raises(GraphTypeError, match=r"set_subtensor: .*x\.at\[idx\]\.set"):
        rt.set_subtensor(rt.exp(x), 1.0)
    with pytest.raises(
        BroadcastError,
        match=r"set_subtensor: cannot broadcast a value of shape \(3,\) to the selected shape "
        r"\(4,\)",
    ):
        x.at[0].set(rt.vector("v", shape=(3,)))
    with pytest.raises(BroadcastError, match=r"inc_subtensor: cannot broadcast a value of shape"):
        x.at[0].add(np.ones((1, 4)))  # NumPy's extra leading 1s are not accepted
    with pytest.raises(GraphTypeError, match=r"set_subtensor: Python int 300 is out of bounds"):
        rt.tensor("k", shape=(3,), dtype="int8").at[0].set(300)
    with pytest.raises(DTypeError, match=r"inc_subtensor: the value has dtype float32 but x has"):
        IncSubtensor((0,))(x, rt.vector("v", dtype="float32"))


# --- end to end ----------------------------------------------------------------------------

BACKENDS = ["numpy", "jax"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_dynamic_integer_indices(backend):
    x = rt.matrix("x")
    n = rt.scalar("n", dtype="int64")
    f = rk.function([x, n], [x[n], x[:, n], x[n, [0, -1]]], backend=backend)
    a = np.arange(12.0).reshape(3, 4)
    for k in (0, 2, -1, -3):
        for got, want in zip(f(a, k), [a[k], a[:, k], a[k, [0, -1]]], strict=True):
            np.testing.assert_array_equal(np.asarray(got), want)


@pytest.mark.parametrize("backend", BACKENDS)
def test_slices_from_static_shapes(backend):
    x = rt.matrix("x")
    f = rk.function([x], [x[: x.shape[0] // 2, ::-1]], backend=backend)
    a = np.arange(20.0).reshape(5, 4)
    np.testing.assert_array_equal(np.asarray(f(a)[0]), a[:2, ::-1])


@pytest.mark.parametrize("backend", BACKENDS)
def test_updates(backend):
    x = rt.vector("x")
    i = rt.vector("i", dtype="int64")
    v = rt.vector("v")
    f = rk.function(
        [x, i, v], [x.at[i].add(v), x.at[1:3].set(-1.0), x.at[::2].add(10)], backend=backend
    )
    a = np.arange(5.0)
    idx = np.array([0, 0, 4, -1])
    added = a.copy()
    np.add.at(added, idx, np.array([1.0, 2.0, 3.0, 4.0]))
    got = [np.asarray(r) for r in f(a, idx, np.array([1.0, 2.0, 3.0, 4.0]))]
    np.testing.assert_array_equal(got[0], added)
    np.testing.assert_array_equal(got[1], [0.0, -1.0, -1.0, 3.0, 4.0])
    np.testing.assert_array_equal(got[2], [10.0, 1.0, 12.0, 3.0, 14.0])
    np.testing.assert_array_equal(a, np.arange(5.0))  # the argument is untouched


def test_set_with_a_repeated_index_keeps_the_last_write_in_numpy():
    x = rt.vector("x")
    f = rk.function([x], [x.at[[1, 1]].set(np.array([5.0, 7.0]))], backend="numpy")
    expected = np.zeros(3)
    expected[[1, 1]] = [5.0, 7.0]  # NumPy's own rule: the last write wins
    np.testing.assert_array_equal(f(np.zeros(3))[0], expected)


def test_out_of_range_run_time_indices_raise_on_both_backends():
    x = rt.vector("x")
    n = rt.scalar("n", dtype="int64")
    a = np.arange(4.0)
    for backend in ("numpy", "jax"):  # tests/test_index_semantics.py has the rest
        with pytest.raises(rk.GraphIndexError, match="index 7 is out of bounds for axis 0"):
            rk.function([x, n], [x[n]], backend=backend)(a, 7)


def test_jax_refuses_traced_slice_bounds():
    x = rt.vector("x")
    n = rt.scalar("n", dtype="int64")
    f = rk.function([x, n], [x[n:]], backend="jax")
    with pytest.raises(ShapeError, match=r"getitem: the slice bounds must be known when the graph"):
        f(np.arange(4.0), 1)
    with pytest.raises(ShapeError, match=r"a window of static length k .* is x\[i:i \+ k\]"):
        f(np.arange(4.0), 1)
    # the numpy backend takes them
    np.testing.assert_array_equal(
        rk.function([x, n], [x[n:]], backend="numpy")(np.arange(4.0), 1)[0], [1.0, 2.0, 3.0]
    )


def test_jax_function_is_differentiable_through_dynamic_indices():
    x = rt.vector("x")
    n = rt.scalar("n", dtype="int64")
    f = rk.function([x, n], [(x.at[n].set(0.0) * x)[1:].sum()], backend="jax")
    with jax.enable_x64(True):
        grad = jax.grad(lambda a: f.jax_fn(a, 2)[0])(np.arange(4.0))
    # d/da sum(a[1:] with a[2] zeroed * a[1:]) = 2 a[1], 0 at 2, a[3] ... as computed by hand:
    # the summand at 2 is 0 * a[2] (no dependence), others a_k * a_k -> 2 a_k; a[0] unused
    np.testing.assert_allclose(np.asarray(grad), [0.0, 2.0, 0.0, 6.0])


def test_indexing_constants_runs_at_trace_time_in_jax():
    c = rt.constant(np.arange(6.0).reshape(2, 3))
    x = rt.vector("x", shape=(3,))
    f = rk.function([x], [x + c[1, ::-1]], backend="jax")
    np.testing.assert_array_equal(np.asarray(f(np.ones(3))[0]), [6.0, 5.0, 4.0])
