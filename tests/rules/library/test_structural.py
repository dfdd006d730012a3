"""The structural rules (phase ``canonicalize``): transposes, reshapes, broadcasts,
expand_dims/squeeze, slices and reductions simplify, keep the type, and keep NumPy's values
(and its IndexErrors) on every input."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.ir import toposort
from rewritekit.rules.library.structural import (
    _compose,
    broadcast_to_node,
    expand_dims_node,
    rules,
    squeeze_node,
    transpose_node,
)
from rewritekit.tensor.subtensor import Subtensor, make_index
from rewritekit.testing import check_rule


def rewrite(graph):
    return rk.rewrite(graph, rules)


def fired(graph):
    return rk.rewrite(graph, rules, trace=True)[1].fired()


def values(inputs, graphs, arrays):
    f = rk.function(inputs, list(graphs), backend="numpy", rules=None)
    with np.errstate(all="ignore"):
        return [np.asarray(v) for v in f(*arrays)]


def assert_same_value(inputs, graph, arrays):
    rewritten = rewrite(graph)
    assert rewritten.type == graph.type or rewritten.type.is_compatible(graph.type)
    before, after = values(inputs, [graph, rewritten], arrays)
    assert before.shape == after.shape
    np.testing.assert_allclose(after, before, rtol=1e-12, atol=1e-12, equal_nan=True)
    return rewritten


# --- the library contract ---------------------------------------------------------------


def test_names_are_unique_and_tagged():
    names = [r.name for r in rules]
    assert len(names) == len(set(names))
    assert all("canonicalize" in r.tags for r in rules)
    unsafe = {r.name for r in rules.including("shape_unsafe")}
    assert unsafe == {"merge_nested_reshape", "merge_nested_broadcast_to"}


@pytest.mark.parametrize("rule", list(rules), ids=lambda r: r.name)
def test_every_rule_fires_on_its_example_and_keeps_the_value(rule):
    for seed in range(4):
        check_rule(rule, seed=seed)


# --- transposes ---------------------------------------------------------------------------

x3 = rt.tensor("x", shape=(2, 3, 4))


def test_nested_transposes_compose():
    assert rewrite(rt.transpose(rt.transpose(x3, (1, 2, 0)), (2, 0, 1))) is x3
    got = rewrite(rt.transpose(rt.transpose(x3, (1, 2, 0)), (0, 2, 1)))
    assert got is rt.transpose(x3, (1, 0, 2))
    three = rt.transpose(rt.transpose(rt.transpose(x3, (1, 2, 0)), (1, 2, 0)), (1, 2, 0))
    assert rewrite(three) is x3


def test_an_identity_transpose_node_goes():
    assert rewrite(transpose_node(x3, (0, 1, 2)) + 1.0) is x3 + 1.0


# --- reshape and broadcast_to ---------------------------------------------------------------


def test_nested_reshapes_merge():
    x = rt.tensor("x", shape=(2, 6))
    assert rewrite(rt.reshape(rt.reshape(x, (3, 4)), (4, 3))) is rt.reshape(x, (4, 3))
    assert rewrite(rt.reshape(rt.reshape(x, (3, 4)), (2, 6))) is x
    assert "shape_unsafe" in rules["merge_nested_reshape"].tags


def test_merged_reshape_keeps_what_the_inner_one_knew():
    x = rt.tensor("x", shape=(None, 3))
    graph = rt.reshape(rt.reshape(x, (6,)), (-1, 2))
    assert graph.type.shape == (3, 2)
    got = assert_same_value([x], graph, [np.arange(6.0).reshape(2, 3)])
    assert got is rt.reshape(x, (3, 2))


def test_merged_reshape_with_run_time_lengths():
    x = rt.matrix("x")
    n = rt.scalar("n", dtype="int64")
    graph = rt.reshape(rt.reshape(x, (-1,)), (n, -1))
    got = assert_same_value([x, n], graph, [np.arange(12.0).reshape(3, 4), np.int64(2)])
    assert got is rt.reshape(x, (n, -1))


def test_reshape_to_own_shape_goes():
    x = rt.tensor("x", shape=(None, 3))
    assert rewrite(rt.reshape(x, rt.shape(x))) is x
    assert rewrite(rt.reshape(x, (rt.shape_i(x, 0), 3))) is x
    assert rewrite(rt.reshape(x, (-1, 3))) is x  # the -1 can only be x's own length


@pytest.mark.parametrize(
    "build",
    [
        lambda x, n: rt.reshape(x, (n, 3)),  # n is not known to be x's length
        lambda x, n: rt.reshape(x, (rt.shape_i(x, 0), -1)),  # NumPy raises when x is empty
        lambda x, n: rt.reshape(x, (3, rt.shape_i(x, 0))),
    ],
)
def test_reshape_that_may_change_something_stays(build):
    x = rt.tensor("x", shape=(None, 3))
    graph = build(x, rt.scalar("n", dtype="int64"))
    assert rewrite(graph) is graph


def test_reshape_of_an_empty_axis_with_minus_one_stays():
    x = rt.tensor("x", shape=(None, 0))
    graph = rt.reshape(x, (-1, 0))  # NumPy: cannot reshape array of size 0 into (-1, 0)
    assert rewrite(graph) is graph


def test_broadcast_to_own_shape_goes():
    x = rt.tensor("x", shape=(None, 3))
    assert rewrite(rt.broadcast_to(x, rt.shape(x))) is x
    assert rewrite(rt.broadcast_to(x, (rt.shape_i(x, 0), 3))) is x
    n = rt.scalar("n", dtype="int64")
    graph = rt.broadcast_to(x, (n, 3))
    assert rewrite(graph) is graph
    node = broadcast_to_node(x, rt.shape(x), (None, 3))  # as rebuilt by a rewrite
    assert rewrite(node) is x


def test_nested_broadcasts_merge():
    v = rt.vector("v")
    graph = rt.broadcast_to(rt.broadcast_to(v, (2, 3)), (4, 2, 3))
    assert rewrite(graph) is rt.broadcast_to(v, (4, 2, 3))
    assert_same_value([v], graph, [np.arange(3.0)])


def test_nested_broadcasts_stay_when_the_inner_shape_knew_more():
    v = rt.vector("v")
    n = rt.scalar("n", dtype="int64")
    graph = rt.broadcast_to(rt.broadcast_to(v, (3,)), (n, 3))
    outer = rt.broadcast_to(rt.broadcast_to(v, (3,)), rt.stack([n]))
    assert outer.type.shape == (3,)  # known from the inner broadcast only
    assert rewrite(outer) is outer
    assert rewrite(graph) is rt.broadcast_to(v, (n, 3))


# --- expand_dims and squeeze -------------------------------------------------------------


def test_squeeze_and_expand_dims_of_no_axes_go():
    v = rt.vector("v")
    assert rewrite(squeeze_node(v, ())) is v
    assert rewrite(expand_dims_node(v, ())) is v


@pytest.mark.parametrize(
    ("shape", "new", "gone", "expected"),
    [
        ((None,), 0, 0, lambda x: x),
        ((None,), (0, 2), 0, lambda x: rt.expand_dims(x, 1)),
        ((None,), (0, 2), (0, 2), lambda x: x),
        ((1, None), 0, (0, 1), lambda x: rt.squeeze(x, 0)),  # x's own axis stays squeezed
        ((None, 1), (1, 3), (1, 2, 3), lambda x: rt.squeeze(x, 1)),
    ],
)
def test_squeeze_of_expand_dims_cancels(shape, new, gone, expected):
    x = rt.tensor("x", shape=shape)
    graph = rt.squeeze(rt.expand_dims(x, new), gone)
    assert rewrite(graph) is expected(x)
    array = np.arange(float(np.prod([d or 1 for d in shape]))).reshape([d or 1 for d in shape])
    assert_same_value([x], graph, [array])


def test_squeeze_of_expand_dims_without_common_axes_stays():
    x = rt.tensor("x", shape=(1, None))
    graph = rt.squeeze(rt.expand_dims(x, 0), 1)  # squeezes x's axis 0 only
    assert rewrite(graph) is graph


def test_squeezed_length_one_axes_put_back_cancel():
    x = rt.tensor("x", shape=(2, 1, None))
    assert rewrite(rt.expand_dims(rt.squeeze(x, 1), 1)) is x
    y = rt.tensor("y", shape=(2, None))  # squeeze checks the length at run time: keep it
    graph = rt.expand_dims(rt.squeeze(y, 1), 1)
    assert rewrite(graph) is graph


def test_nested_expand_dims_and_squeezes_merge():
    v = rt.vector("v")
    assert rewrite(rt.expand_dims(rt.expand_dims(v, 0), (0, -1))) is rt.expand_dims(v, (0, 1, 3))
    x = rt.tensor("x", shape=(1, 3, 1, 1))
    assert rewrite(rt.squeeze(rt.squeeze(x, 0), 2)) is rt.squeeze(x, (0, 3))
    assert rewrite(rt.squeeze(rt.squeeze(x, 3), 0)) is rt.squeeze(x, (0, 3))


# --- slices -------------------------------------------------------------------------------


def test_full_slices_go():
    v = rt.vector("v")
    assert rewrite(v[:]) is v
    assert rewrite(v[0:]) is v
    assert rewrite(v[::-1][::-1]) is v
    w = rt.vector("w", shape=(5,))
    assert rewrite(w[0:5]) is w
    assert rewrite(w[-9:100]) is w
    assert rewrite(w[0:4]) is w[0:4]


@pytest.mark.parametrize(
    "build", [lambda v: v[None], lambda v: v[:, None], lambda v: rt.sum(v)[None]]
)
def test_new_axes_are_not_full_slices(build):
    graph = build(rt.vector("v"))
    assert rewrite(graph) is graph


@pytest.mark.parametrize(
    ("build", "expected"),
    [
        (lambda v: v[2:][1:], lambda v: v[3:]),
        (lambda v: v[1:][::2], lambda v: v[1::2]),
        (lambda v: v[1:7:2][1:2], lambda v: v[3:5:2]),
        (lambda v: v[2:][:3], lambda v: v[2:5]),
        (lambda v: v[1::3][2], lambda v: v[7]),
        (lambda v: v[::-1][2], lambda v: v[-3]),
        (lambda v: v[::-1][::-2], lambda v: v[::2]),
    ],
)
def test_nested_slices_merge(build, expected):
    v = rt.vector("v")
    assert rewrite(build(v)) is expected(v)


def test_slices_merge_axis_by_axis():
    m = rt.matrix("m")
    assert rewrite(m[1:][:, 0]) is m[1:, 0]
    assert rewrite(m[0][1:]) is m[0, 1:]
    assert rewrite(m[:, 1:][2:, ::2]) is m[2:, 1::2]


@pytest.mark.parametrize(
    "build",
    [
        lambda v: v[-3:][1:],  # depends on the unknown length
        lambda v: v[::-1][1:],
        lambda v: v[:-1][1:],
        lambda v: v[::2][::-1],
        lambda v: v[2:5][4],  # always an IndexError: kept
        lambda v: v[None][0],
        lambda v: v[rt.scalar("n", dtype="int64") :][1:],
        lambda v: v[[0, 1]][1:],
    ],
)
def test_slices_that_depend_on_the_length_stay(build):
    graph = build(rt.vector("v"))
    assert "canonicalize.merge_nested_subtensor" not in fired(graph)


def evaluate(var, array):
    """The value of a chain of static Subtensor nodes over one input, in NumPy."""
    node = var.owner
    if node is None:
        return array
    assert isinstance(node.op, Subtensor)
    return evaluate(node.inputs[0], array)[make_index(node.op.index, [])]


def outcome(index, array):
    try:
        return array[index]
    except IndexError:
        return IndexError


BOUNDS = [None, 0, 1, 2, 5, -1, -3]
SLICE_STEPS = [None, 3, -1, -2]
SLICES = [slice(*b) for b in itertools.product(BOUNDS, BOUNDS, SLICE_STEPS)]
SECONDS = [*SLICES, 0, 1, 3, -1, -2]


def as_entry(item):
    """An int or slice as an index parameter entry holds it."""
    if isinstance(item, int):
        return item
    index = Subtensor(((item.start, item.stop, item.step),)).index
    return index[0] if index else (None, None, None)


def test_composed_entries_agree_with_numpy_for_every_length():
    """Where the merge gives one entry, it selects what the two did, for every length (or
    the length it was given), IndexError included (Python lists index like NumPy axes)."""
    merged = 0
    for first, second in itertools.product(SLICES, SECONDS):
        for static in (None, *range(6)):
            entry = _compose(as_entry(first), as_entry(second), static)
            if entry is None:
                continue
            merged += 1
            index = slice(*entry) if isinstance(entry, tuple) else entry
            for n in range(6) if static is None else (static,):
                items = list(range(n))
                want = outcome(first, items)
                want = IndexError if want is IndexError else outcome(second, want)
                assert outcome(index, items) == want, (n, first, second, entry)
    assert merged > 10000


def test_merged_slices_agree_with_numpy():
    v = rt.vector("v")
    pairs = list(itertools.product(SLICES[::7], SECONDS[::5]))
    for first, second in pairs:
        graph = v[first][second]
        rewritten = rewrite(graph)
        assert rewritten.type.is_compatible(graph.type)
        for n in range(5):
            array = np.arange(float(n))
            want = outcome(first, array)
            want = IndexError if want is IndexError else outcome(second, want)
            if want is IndexError:
                with pytest.raises(IndexError):
                    evaluate(rewritten, array)
            else:
                got = evaluate(rewritten, array)
                np.testing.assert_array_equal(got, want, err_msg=f"{n} {first} {second}")


# --- reductions -------------------------------------------------------------------------------

REDUCTIONS = ["sum", "prod", "max", "min", "all", "any", "mean", "logsumexp"]


@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize(("k1", "k2"), list(itertools.product([False, True], repeat=2)))
def test_nested_reductions_merge(name, k1, k2):
    fn = getattr(rt, name)
    x = rt.tensor("x", shape=(2, None, 4))
    outer_axes = (0, 2) if k1 else (0, 1)  # x's axes 0 and 2 either way
    graph = fn(fn(x, axis=1, keepdims=k1), axis=outer_axes, keepdims=k2)
    array = np.random.default_rng(0).normal(size=(2, 3, 4))
    got = assert_same_value([x], graph, [array])
    kind = type(graph.owner.op)
    assert sum(isinstance(node.op, kind) for node in toposort([got])) == 1


def test_nested_reductions_of_small_ints_keep_int64():
    x = rt.tensor("x", shape=(2, 3), dtype="int8")
    graph = rt.sum(rt.sum(x, axis=0), axis=0)
    got = rewrite(graph)
    assert got is rt.sum(x, axis=(0, 1))
    assert got.dtype == graph.dtype == "int64"


def test_nested_max_keeps_nan():
    x = rt.matrix("x")
    graph = rt.max(rt.max(x, axis=1), axis=0)
    assert rewrite(graph) is rt.max(x, axis=(0, 1))
    array = np.array([[1.0, np.nan], [3.0, 2.0]])
    assert np.isnan(values([x], [rewrite(graph)], [array])[0])


def test_reduction_over_no_axes_is_the_input_when_the_dtype_is_kept():
    v = rt.vector("v")
    assert rewrite(rt.sum(v, axis=())) is v
    assert rewrite(rt.max(v, axis=())) is v
    s = rt.scalar("s", dtype="int64")
    assert rewrite(rt.sum(s)) is s
    small = rt.scalar("i", dtype="int32")
    assert rewrite(rt.sum(small)) is rt.sum(small)  # int64 result
    assert rewrite(rt.all(v, axis=())) is rt.all(v, axis=())  # bool result
    b = rt.vector("b", dtype="bool")
    assert rewrite(rt.any(b, axis=())) is b


def test_reduction_over_length_one_axes_squeezes():
    x = rt.tensor("x", shape=(2, 1, 3))
    assert rewrite(rt.sum(x, axis=1)) is rt.squeeze(x, 1)
    assert rewrite(rt.mean(x, axis=1, keepdims=True)) is x
    assert rewrite(rt.max(x, axis=(1, 2), keepdims=True)) is rt.max(x, axis=2, keepdims=True)
    graph = rt.max(x, axis=(1, 2))  # a squeeze more would not be simpler
    assert rewrite(graph) is graph


@pytest.mark.parametrize(
    "build",
    [
        lambda x: rt.prod(rt.cast(x, "int32"), axis=1),  # int64 result
        lambda x: rt.all(x, axis=1),  # bool result
        lambda x: rt.var(x, axis=1),  # 0, not x
        lambda x: rt.std(x, axis=1, keepdims=True),
    ],
)
def test_reduction_over_length_one_axes_that_changes_the_value_stays(build):
    graph = build(rt.tensor("x", shape=(2, 1, 3)))
    assert rewrite(graph) is graph


def test_var_over_a_length_one_axis_and_others_drops_it():
    x = rt.tensor("x", shape=(2, 1, 3))
    graph = rt.var(x, axis=(1, 2), ddof=1, keepdims=True)
    got = assert_same_value([x], graph, [np.random.default_rng(1).normal(size=(2, 1, 3))])
    assert got is rt.var(x, axis=2, ddof=1, keepdims=True)


def test_squeeze_of_a_keepdims_reduction_drops_the_keepdims():
    x = rt.tensor("x", shape=(2, None, 4))
    graph = rt.squeeze(rt.var(x, axis=(0, 2), ddof=1, keepdims=True), (0, 2))
    assert rewrite(graph) is rt.var(x, axis=(0, 2), ddof=1)
    partial = rt.squeeze(rt.sum(x, axis=(0, 2), keepdims=True), 0)
    assert rewrite(partial) is partial


# --- random graphs --------------------------------------------------------------------------


@st.composite
def structural_graphs(draw):
    """A random chain of structural ops on a 3-d input, built alongside its NumPy value."""
    static = draw(st.booleans())
    shape = tuple(draw(st.lists(st.integers(1, 3), min_size=3, max_size=3)))
    array = np.random.default_rng(draw(st.integers(0, 99))).normal(size=shape)
    x = rt.tensor("x", shape=shape if static else (None,) * 3)
    g, a = x, array
    for _ in range(draw(st.integers(1, 6))):
        g, a = draw(st.sampled_from(STEPS))(draw, g, a)
    return x, array, g


def _transpose(draw, g, a):
    perm = draw(st.permutations(range(g.ndim)))
    return rt.transpose(g, perm), np.transpose(a, perm)


def _expand(draw, g, a):
    axis = draw(st.integers(0, g.ndim))
    return rt.expand_dims(g, axis), np.expand_dims(a, axis)


def _squeeze(draw, g, a):
    ones = [axis for axis, n in enumerate(a.shape) if n == 1]
    if not ones:
        return g, a
    axes = tuple(draw(st.lists(st.sampled_from(ones), min_size=1, unique=True)))
    return rt.squeeze(g, axes), np.squeeze(a, axes)


def _slice(draw, g, a):
    if g.ndim == 0:
        return g, a
    axis = draw(st.integers(0, g.ndim - 1))
    entry = draw(st.sampled_from(SLICES))
    if a.shape[axis] and draw(st.booleans()):
        entry = draw(st.integers(-a.shape[axis], a.shape[axis] - 1))
    index = (slice(None),) * axis + (entry,)
    return g[index], a[index]


def _reduce(draw, g, a):
    name = draw(st.sampled_from(["sum", "prod", "max", "any", "mean"]))
    axes = tuple(draw(st.lists(st.integers(0, max(g.ndim - 1, 0)), unique=True, max_size=g.ndim)))
    if name == "max" and 0 in [a.shape[axis] for axis in axes]:
        name = "sum"  # max of nothing raises
    keepdims = draw(st.booleans())
    with np.errstate(all="ignore"):
        value = getattr(np, name)(a, axis=axes, keepdims=keepdims)
    return getattr(rt, name)(g, axis=axes, keepdims=keepdims), np.asarray(value, dtype=float)


def _reshape(draw, g, a):
    return rt.reshape(g, (-1,)), a.reshape(-1)


STEPS = [_transpose, _expand, _squeeze, _slice, _reduce, _reduce, _reshape]


@settings(max_examples=25, deadline=None)
@given(structural_graphs())
def test_rewritten_random_graphs_keep_their_value(case):
    x, array, graph = case
    rewritten = rewrite(graph)
    assert rewritten.type.is_compatible(graph.type)
    before, after = values([x], [graph, rewritten], [array])
    np.testing.assert_allclose(after, before, rtol=1e-9, atol=1e-12, equal_nan=True)
