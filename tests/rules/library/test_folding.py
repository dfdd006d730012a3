"""The fold phase: constant folding, static shapes and shape inference."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.ir import Constant, ancestors, graph_inputs, replace
from rewritekit.rules.library import folding
from rewritekit.rules.library.folding import FOLD_LIMIT, infer_shape
from rewritekit.tensor.creation import Arange
from rewritekit.tensor.elemwise import FloatElemwise, Round
from rewritekit.tensor.shapes import MakeVector, Shape, ShapeI
from rewritekit.testing import check_rule

RULES = folding.rules
x, y = rt.matrix("x"), rt.vector("y")
n = rt.scalar("n", dtype="int64")


def fold(graph):
    return rk.rewrite(graph, RULES)


def const(value, dtype=None):
    return rt.constant(np.asarray(value, dtype=dtype))


def run(inputs, outputs, *values):
    return rk.function(inputs, outputs, backend="numpy", rules=None)(*values)


@pytest.mark.parametrize("rule", list(RULES), ids=lambda r: r.name)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_rule_fires_on_its_example_and_is_sound(rule, seed):
    check_rule(rule, seed=seed)


def test_the_rules_have_their_phase_and_unsafe_tags():
    assert all("fold" in r.tags for r in RULES)
    unsafe = {r.name for r in RULES if "shape_unsafe" in r.tags}
    assert unsafe == {"shape_from_inputs", "shape_i_from_inputs", "drop_sum_to_own_shape"}


def test_a_sum_to_of_a_value_of_the_target_shape_is_dropped():
    v, m, b = rt.vector("v"), rt.matrix("m"), rt.vector("b")
    grad = rk.grad(rt.sum(v * v), v)
    rewritten = rk.rewrite(grad, "default")
    assert not any(type(n.op).__name__ == "SumTo" for n in rk.toposort(rewritten))
    assert rewritten is rk.rewrite(2.0 * v, "default")
    np.testing.assert_allclose(run([v], rewritten, np.array([1.0, -2.0])), [2.0, -4.0])
    kept = rk.rewrite(rk.grad(rt.sum(m * b), b), "default")  # b may be broadcast: a sum
    assert any(type(n.op).__name__ == "SumTo" for n in rk.toposort(kept))
    np.testing.assert_allclose(run([m, b], kept, np.ones((3, 1)), np.ones(1)), [3.0])


# --- constant folding -------------------------------------------------------------------


def test_a_node_of_constants_becomes_the_constant_of_its_value():
    assert fold(rt.exp(const([0.0, 1.0]))) is const(np.exp([0.0, 1.0]))
    assert fold(rt.sum(const([[1, 2], [3, 4]]), axis=0)) is const([4, 6], "int64")
    nested = rt.log1p(rt.exp(const(2.0)) * 3.0)
    assert fold(nested) is const(np.log1p(np.exp(2.0) * 3.0))


def test_folding_keeps_the_dtype_and_the_static_shape():
    small = fold(const([1, 2], "int8") + const([3, 4], "int8"))
    assert small.type == rt.vector(dtype="int8", shape=(2,)).type and small.data.tolist() == [4, 6]
    half = fold(rt.cast(const([1.5]), "float32"))
    assert half.dtype == "float32" and half.data.tolist() == [1.5]


def test_folding_leaves_a_node_with_a_variable_input():
    graph = rt.exp(y) + rt.exp(const(1.0))
    assert fold(graph) is rt.exp(y) + const(np.e)


def test_folding_silences_floating_point_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = fold(const([1.0, 0.0, -1.0]) / 0.0)
        ints = fold(rt.floor_divide(const([1, 2]), const([0, 0])))
        logs = fold(rt.log(const(-1.0)))
    np.testing.assert_array_equal(result.data, [np.inf, np.nan, -np.inf])
    assert ints.data.tolist() == [0, 0] and np.isnan(logs.data)


def test_huge_results_are_not_materialised():
    big = rt.zeros((10000, 10000))
    assert fold(big) is big
    square = rt.zeros((n, n))  # its static shape is unknown once n is known
    assert fold(replace(square, {n: const(10000, "int64")})).owner.op.shape == (None, None)
    assert fold(replace(square, {n: const(3, "int64")})) is const(np.zeros((3, 3)))
    steps = rt.arange(n)
    assert isinstance(fold(replace(steps, {n: const(10**9, "int64")})).owner.op, Arange)
    assert fold(replace(steps, {n: const(4, "int64")})) is const(np.arange(4))
    limit = rt.zeros(FOLD_LIMIT + 1)
    assert fold(limit) is limit
    assert isinstance(fold(rt.zeros(FOLD_LIMIT)), Constant)


def test_an_evaluation_that_raises_is_left_to_run_time():
    singular = rt.linalg.inv(const(np.zeros((2, 2))))
    assert fold(singular) is singular


def test_multi_output_nodes_fold_the_output_asked_for():
    sign, logdet = rt.linalg.slogdet(const(2.0 * np.eye(2)))
    assert fold(logdet) is const(np.log(4.0)) and fold(sign) is const(1.0)


class _Noise(Round):
    """A Round that must not fold (stands for a random Op); NumPy runs it as Round."""

    foldable = False


class _Rounded(Round):
    """A Round that may fold."""


class _Cube(FloatElemwise):
    """x ** 3, without a NumPy implementation."""


def test_ops_can_opt_out_of_folding_and_unimplemented_ops_stay():
    noisy = _Noise()(const([1.4]))
    assert fold(noisy) is noisy
    assert fold(_Rounded()(const([1.4]))) is const([1.0])
    cube = _Cube()(const([2.0]))
    assert fold(cube) is cube


# --- static shapes ------------------------------------------------------------------------


def test_static_shapes_become_constants():
    fixed = rt.tensor("fixed", shape=(2, 3))
    assert fold(Shape()(fixed)) is const([2, 3], "int64")
    assert fold(ShapeI(1)(fixed)) is const(3, "int64")
    partly = rt.tensor("partly", shape=(None, 3))
    assert fold(rt.shape(partly)) is MakeVector()(rt.shape_i(partly, 0), const(3, "int64"))
    assert fold(rt.shape(x)) is rt.shape(x)  # nothing static: Shape is the short form
    assert fold(rt.shape(partly)[1]) is const(3, "int64")
    assert fold(rt.shape(partly)[0]) is rt.shape_i(partly, 0)


def test_size_folds_once_the_lengths_are_static():
    partly = rt.tensor("partly", shape=(None, 3))
    size = rt.size(partly)  # shape_i(partly, 0) * 3
    assert fold(replace(size, {partly: rt.tensor("fixed", shape=(2, 3))})) is const(6, "int64")


def test_indexing_a_shape_vector_reads_the_entry():
    assert fold(rt.shape(x)[-1]) is rt.shape_i(x, 1)
    assert fold(rt.shape(x)[1:]) is MakeVector()(rt.shape_i(x, 1))
    assert fold(rt.shape(x)[2:]) is const(np.zeros(0, dtype="int64"))
    vector = MakeVector()(n, const(4, "int32"))
    assert fold(vector[0]) is n
    assert fold(vector[1]) is const(4, "int64")  # entries are int64, as the vector
    assert fold(vector[::-1]) is MakeVector()(const(4, "int64"), n)
    i = rt.scalar("i", dtype="int64")
    assert fold(vector[i]) is vector[i]  # a run-time index: kept


# --- shape inference --------------------------------------------------------------------


def _computes_nothing_of(shape, graph):
    """``shape`` uses no computed value of ``graph``: only its inputs and index arithmetic."""
    values = {v for v in ancestors(graph) if v.owner is not None and v.type.kind in "fc"}
    return values.isdisjoint(ancestors(shape))


def test_shape_of_elementwise_is_read_from_the_inputs():
    assert fold(rt.shape(rt.exp(x))) is rt.shape(x)
    assert fold(rt.shape_i(rt.exp(x) * 2.0, 1)) is rt.shape_i(x, 1)
    v = rt.vector("v", shape=(3,))
    assert fold(rt.shape(x + v)) is MakeVector()(rt.shape_i(x, 0), const(3, "int64"))


@pytest.mark.parametrize(
    ("xs", "ys"), [((1,), (3,)), ((3,), (1,)), ((0,), (1,)), ((1,), (0,)), ((2, 1), (2,))]
)
def test_runtime_broadcasting_gives_the_broadcast_length(xs, ys):
    a, b = rt.tensor("a", shape=(None,) * len(xs)), rt.tensor("b", shape=(None,) * len(ys))
    total = a + b
    shape = fold(rt.shape(total))
    assert total.owner not in {v.owner for v in ancestors(shape)}
    got = run([a, b], shape, np.ones(xs), np.ones(ys))
    assert tuple(got) == np.broadcast_shapes(xs, ys)


def test_shape_inference_per_family():
    cases = {
        "sum": rt.sum(x, axis=0, keepdims=True),
        "argmax": rt.argmax(x, axis=1),
        "cumsum": rt.cumsum(x),
        "sort": rt.sort(x, axis=0),
        "softmax": rt.softmax(x, axis=1),
        "transpose": x.T,
        "expand": rt.expand_dims(x, 1),
        "squeeze": rt.squeeze(rt.expand_dims(x, 0), 0),
        "reshape": rt.reshape(x, (-1,)),
        "reshape_n": rt.reshape(x, (n, -1)),
        "reshape_runtime": rt.reshape(x, (rt.shape_i(x, 1), n)),
        "broadcast": rt.broadcast_to(y, (n, rt.shape_i(y, 0))),
        "alloc": rt.zeros((n, 2)),
        "dot": rt.dot(x, x),
        "matvec": rt.dot(x, y),
        "matmul": rt.matmul(rt.tensor("s", shape=(None, None, None)), x),
        "concat": rt.concatenate([x, x], axis=1),
        "slice": x[1:, ::-2],
        "slice_neg": x[-2:, :n],
        "index": x[n - 1],
        "eye": rt.eye(n),
        "arange": rt.arange(n),
        "arange_step": rt.arange(1, n, 3),
        "inv": rt.linalg.inv(x),
        "det": rt.linalg.det(x),
        "stop": rt.stop_gradient(x),
        "outer": rt.outer(x, y),
        "set": rt.set_subtensor(x[n - 1], y),
    }
    values = {
        "x": np.arange(9.0).reshape(3, 3) + 4 * np.eye(3),
        "y": np.ones(3),
        "n": np.int64(3),
        "s": np.ones((2, 3, 3)),
    }
    for name, graph in cases.items():
        shape = fold(rt.shape(graph))
        assert _computes_nothing_of(shape, graph), name
        inputs = [v for v in graph_inputs(graph) if not isinstance(v, Constant)]
        got, want = run(inputs, [shape, graph], *[values[v.name] for v in inputs])
        assert tuple(got) == np.shape(want), name


def test_shapes_of_deep_graphs_need_no_nested_rewrites():
    deep = y
    for _ in range(1500):  # three nodes a level: deeper than the engine's max_steps (1000)
        deep = rt.exp(deep) * 2.0 + rt.sin(deep)
    assert fold(rt.shape_i(deep, 0)) is rt.shape_i(y, 0)
    assert fold(rt.shape(deep)) is rt.shape(y)


def test_an_op_without_a_shape_rule_keeps_its_shape_node():
    outer = rt.einsum("i,j->ij", y, y)
    assert fold(rt.shape(outer)) is rt.shape(outer)
    assert fold(rt.shape_i(outer, 0)) is rt.shape_i(outer, 0)
    advanced = x[const([0, 0], "int64")]  # advanced indexing: not inferred
    assert fold(rt.shape_i(advanced, 1)) is rt.shape_i(advanced, 1)
    partly = rt.einsum("i,j->ij", rt.vector("v", shape=(2,)), y)
    assert fold(rt.shape(partly)) is MakeVector()(const(2, "int64"), rt.shape_i(partly, 1))


class _Swap(FloatElemwise):
    """A user Op for the registration test (elementwise: it has a rule until it registers
    its own; the registration stays, as the class is this test's)."""


def test_users_register_the_shape_of_their_op():
    graph = _Swap()(x)
    assert fold(rt.shape(graph)) is rt.shape(x)  # inherited from Elemwise

    @infer_shape.register(_Swap)
    def _(op, node, index, shapes):
        (lengths,) = shapes
        return [lengths[1], None]

    assert fold(rt.shape(graph)) is MakeVector()(rt.shape_i(x, 1), rt.shape_i(graph, 1))


def test_a_shape_rule_with_the_wrong_rank_is_named():
    class _Bad(FloatElemwise):
        """A user Op whose shape rule is wrong."""

    infer_shape.register(_Bad, lambda op, node, index, shapes: [1])
    with pytest.raises(rk.RuleError, match=r"shape rule of _Bad gave 1 lengths.*2-d"):
        fold(rt.shape(_Bad()(x)))


# --- properties: random graphs ------------------------------------------------------------


@st.composite
def graphs(draw, constants=False):
    """A random graph over a matrix input with lengths 0 to 3 (static or not), with its
    inputs and their values. ``constants`` makes some operands constants."""
    shape = tuple(draw(st.integers(0, 3)) for _ in range(2))
    static = tuple(d if draw(st.booleans()) else None for d in shape)
    root = rt.tensor("root", shape=static)
    inputs, values = [root], [draw(_values(shape))]
    graph, now = root, shape
    for step in draw(st.lists(st.sampled_from(_STEPS), min_size=1, max_size=5)):
        made = step(draw, graph, now)
        if made is None:
            continue
        graph, now, extra = made
        for var, value in extra:
            if constants and draw(st.booleans()):
                graph = replace(graph, {var: rt.constant(value)})
            else:
                inputs.append(var)
                values.append(value)
    return graph, inputs, values


def _values(shape):
    return st.integers(0, 2**16).map(lambda s: np.random.default_rng(s).normal(size=shape))


def _operand(draw, now):
    """A new input that broadcasts against ``now`` (length 1 or the same on each axis)."""
    shape = tuple(draw(st.sampled_from([1, d])) for d in now)[draw(st.integers(0, len(now))) :]
    static = tuple(d if draw(st.booleans()) else None for d in shape)
    var = rt.tensor(f"in{draw(st.integers(0, 10**6))}", shape=static)
    return var, shape, draw(_values(shape))


def _add(draw, g, now):
    var, shape, value = _operand(draw, now)
    out = var + g if draw(st.booleans()) else g * var
    return (
        rt.exp(out) if draw(st.booleans()) else out,
        np.broadcast_shapes(shape, now),
        [(var, value)],
    )


def _reduce(draw, g, now):
    if not now:
        return None
    axis, keep = draw(st.integers(0, len(now) - 1)), draw(st.booleans())
    shape = tuple(1 if i == axis else d for i, d in enumerate(now) if keep or i != axis)
    return rt.sum(g, axis=axis, keepdims=keep), shape, []


def _axes(draw, g, now):
    if draw(st.booleans()):
        return rt.transpose(g), now[::-1], []
    return rt.expand_dims(g, 0), (1, *now), []


def _reshape(draw, g, now):
    if not now or 0 in now:
        return None  # -1 beside a zero length is ambiguous (NumPy raises)
    if len(now) >= 2 and draw(st.booleans()):
        return rt.reshape(g, (rt.shape_i(g, 0), -1)), (now[0], int(np.prod(now[1:]))), []
    return rt.reshape(g, (-1,)), (int(np.prod(now)),), []


def _index(draw, g, now):
    if not now:
        return None
    index = draw(st.sampled_from([slice(1, None), slice(None, None, -2), slice(-2, None)]))
    return g[index], (len(range(now[0])[index]), *now[1:]), []


def _join(draw, g, now):
    if not now:
        return None
    return rt.concatenate([g, g], axis=0), (2 * now[0], *now[1:]), []


def _matmul(draw, g, now):
    if len(now) < 1:
        return None
    k = draw(st.integers(0, 2))
    var = rt.tensor(f"w{draw(st.integers(0, 10**6))}", shape=(None, k))
    value = draw(_values((now[-1], k)))
    return g @ var, (*now[:-1], k), [(var, value)]


_STEPS = [_add, _reduce, _axes, _reshape, _index, _join, _matmul]


@settings(max_examples=25, deadline=None)
@given(graphs())
def test_inferred_shapes_equal_the_true_shapes(case):
    graph, inputs, values = case
    shape = fold(rt.shape(graph))
    assert _computes_nothing_of(shape, graph)
    got, value = run(inputs, [shape, graph], *values)
    assert tuple(got) == np.shape(value)


@settings(max_examples=25, deadline=None)
@given(graphs(constants=True))
def test_folding_keeps_the_value_of_random_graphs(case):
    graph, inputs, values = case
    rewritten = fold(graph)
    assert rewritten.type.dtype == graph.type.dtype
    before, after = run(inputs, [graph, rewritten], *values)
    np.testing.assert_allclose(after, before, rtol=1e-12, atol=1e-12)


BOUNDS = [None, -4, -1, 0, 2, 5]
SLICES = [(b, e, s) for b in BOUNDS for e in BOUNDS for s in [None, 1, 2, -1, -3]]


def test_slice_lengths_match_python_for_static_bounds():
    v = rt.vector("v")
    f = rk.function(
        [v], [fold(rt.shape_i(v[b:e:s], 0)) for b, e, s in SLICES], backend="numpy", rules=None
    )
    for size in range(5):
        got = f(np.zeros(size))
        assert got == [len(range(size)[b:e:s]) for b, e, s in SLICES], size


def test_slice_lengths_match_python_for_runtime_bounds():
    v = rt.vector("v")
    start, stop = rt.scalar("start", dtype="int32"), rt.scalar("stop", dtype="int64")
    runtime = [(b if b is None else start, e if e is None else stop, s) for b, e, s in SLICES]
    lengths = [fold(rt.shape_i(v[b:e:s], 0)) for b, e, s in runtime]
    f = rk.function([v, start, stop], lengths, backend="numpy", rules=None)
    for size, b, e in itertools.product(range(5), BOUNDS[1:], BOUNDS[1:]):
        want = [
            len(range(size)[(b0 if b0 is None else b) : (e0 if e0 is None else e) : s])
            for b0, e0, s in SLICES
        ]
        assert f(np.zeros(size), b, e) == want, (size, b, e)
