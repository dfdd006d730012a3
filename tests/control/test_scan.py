"""``rk.scan``, ``rk.fori_loop`` and ``rk.map``: values on both backends against plain
NumPy loops, pytrees, closures, zero-length loops, the build-time and run-time errors, the
loop as one node of the IR (hash-consing, printing, pickling, traversal, ``replace``), the
compiled function under ``jax.jit`` and ``jax.vmap``, and random draws inside a body."""

import pickle
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rewritekit as rk
import rewritekit.random as rr
import rewritekit.tensor as rt
from rewritekit.errors import GraphTypeError, ShapeError
from rewritekit.ir.inner import InnerGraph, Placeholder
from rewritekit.tensor.control import Scan, While

BACKENDS = ["numpy", "jax"]
RTOL, ATOL = 1e-12, 1e-14
XS = np.array([0.5, -1.25, 2.0, 0.75])


def run(inputs, outputs, *args, backend="numpy", rules=None):
    """The compiled outputs as NumPy arrays (by default no rewriting: the loops are run as
    built)."""
    values = rk.function(inputs, outputs, backend=backend, rules=rules)(*args)
    if isinstance(values, list):
        return [np.asarray(v) for v in values]
    return np.asarray(values)


def both(inputs, outputs, *args):
    """The values on both backends, checked equal in dtype, shape and value; NumPy's back."""
    ref = run(inputs, outputs, *args)
    got = run(inputs, outputs, *args, backend="jax")
    pairs = zip(ref, got, strict=True) if isinstance(ref, list) else [(ref, got)]
    for a, b in pairs:
        assert a.dtype == b.dtype and a.shape == b.shape, (a, b)
        np.testing.assert_allclose(b, a, rtol=RTOL, atol=ATOL)
    return ref


def close(got, expected):
    for a, b in zip(got, expected, strict=True):
        np.testing.assert_allclose(a, b, rtol=RTOL, atol=ATOL)


# --- scan -------------------------------------------------------------------------------


@pytest.mark.parametrize("reverse", [False, True])
def test_a_recurrence_forward_and_reversed(reverse):
    x, w = rt.vector("x"), rt.scalar("w")
    final, ys = rk.scan(lambda c, xi: (c * w + xi, rt.sin(c)), 1.0, x, reverse=reverse)
    c, expected = 1.0, [0.0] * len(XS)
    for t in reversed(range(len(XS))) if reverse else range(len(XS)):
        c, expected[t] = c * 0.7 + XS[t], np.sin(c)  # ys keep the order of xs
    close(both([x, w], [final, ys], XS, 0.7), [c, expected])


def test_pytrees_of_tuples_lists_dicts_and_none():
    x, m = rt.vector("x"), rt.matrix("m")

    def body(carry, seq):
        s, (p, q) = carry["s"], carry["pq"]
        xi, row = seq["x"], seq["rows"][0]
        new = {"s": s + xi, "pq": [p * 2.0, q + rt.sum(row)]}
        return new, (None, {"row": row * s, "both": [xi, None]})

    init = {"s": 0.0, "pq": [1.0, rt.zeros(2)]}
    final, ys = rk.scan(body, init, {"x": x, "rows": (m,)})
    assert set(final) == {"s", "pq"} and isinstance(final["pq"], list)
    assert ys[0] is None and ys[1]["both"][1] is None and isinstance(ys[1]["both"], list)
    rows = np.arange(8.0).reshape(4, 2)
    got = both([x, m], [final["s"], *final["pq"], ys[1]["row"], ys[1]["both"][0]], XS, rows)
    s, p, q, stacked = 0.0, 1.0, np.zeros(2), []
    for xi, row in zip(XS, rows, strict=True):
        stacked.append(row * s)
        s, p, q = s + xi, p * 2.0, q + row.sum()
    close(got, [s, p, q, np.stack(stacked), XS])


def test_a_y_of_none_gives_none_and_no_stacked_output():
    x = rt.vector("x")
    final, ys = rk.scan(lambda c, xi: (c + xi, None), 0.0, x)
    assert ys is None and len(final.owner.outputs) == 1
    close([both([x], final, XS)], [XS.sum()])


def test_length_without_xs_passes_none_as_x():
    seen = []

    def body(c, x):
        seen.append(x)
        return c * 2.0, c

    final, ys = rk.scan(body, 1.0, length=4)
    assert seen == [None] and final.owner.op.length == 4 and ys.type.shape == (4,)
    close(both([], [final, ys]), [16.0, [1.0, 2.0, 4.0, 8.0]])


def test_closed_over_vars_become_the_loops_inputs():
    x, w, v = rt.vector("x"), rt.scalar("w"), rt.vector("v", shape=(2,))
    final, ys = rk.scan(lambda c, xi: (c * w + xi, rt.sum(v) * c + 3.0), 0.0, x)
    node = final.owner
    assert node is ys.owner and isinstance(node.op, Scan)
    assert list(node.inputs[1:]) == [x, w, v]  # init, the sequence, then first use
    assert [p.type for p in node.op.body.inputs] == [w.type, w.type, w.type, v.type]
    assert all(isinstance(p, Placeholder) for p in node.op.body.inputs)
    assert rk.graph_inputs([final, ys]) == [x, w, v]
    c, expected = 0.0, []
    for xi in XS:
        c, y = c * 0.5 + xi, 3.0 * c + 3.0
        expected.append(y)
    close(both([x, w, v], [final, ys], XS, 0.5, np.array([1.0, 2.0])), [c, expected])


def test_several_xs_of_several_dtypes_and_int_carries():
    x, k = rt.vector("x", dtype="float32"), rt.vector("k", dtype="int32")

    def body(carry, seq):
        count, total = carry
        xi, ki = seq
        return (count + ki, total + xi * 2.0), count * 3

    (count, total), ys = rk.scan(body, (np.int32(1), np.float32(0.0)), (x, k))
    assert (count.dtype, total.dtype, ys.dtype) == ("int32", "float32", "int32")
    ks = np.array([3, -1, 4, 1], dtype=np.int32)
    got = both([x, k], [count, total, ys], XS.astype(np.float32), ks)
    assert got[0] == 1 + ks.sum() and got[2].tolist() == (3 * (1 + np.cumsum(ks) - ks)).tolist()
    np.testing.assert_allclose(got[1], 2 * XS.sum(), rtol=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
def test_zero_length_scans_static_and_dynamic(backend):
    x, v = rt.vector("x"), rt.vector("v")
    # static: length=0, and a sequence of static length 0
    final, ys = rk.scan(lambda c, _: (c * 2.0, rt.stack([c, c])), 3.0, length=0)
    assert ys.type.shape == (0, 2)
    out = run([], [final, ys], backend=backend)
    assert out[0] == 3.0 and out[1].shape == (0, 2) and out[1].dtype == np.float64
    empty = rt.vector("e", shape=(0,))
    final, ys = rk.scan(lambda c, xi: (c + xi, rt.cast(c, "int32")), 3.0, empty)
    out = run([empty], [final, ys], np.zeros(0), backend=backend)
    assert out[0] == 3.0 and out[1].shape == (0,) and out[1].dtype == np.int32
    # dynamic: a sequence whose length is 0 at run time; the ys take the carry's shape
    final, ys = rk.scan(lambda c, xi: (c + xi, c * xi), v, x)
    assert ys.type.shape == (None, None)
    out = run([x, v], [final, ys], np.zeros(0), np.arange(3.0), backend=backend)
    np.testing.assert_array_equal(out[0], np.arange(3.0))
    assert out[1].shape == (0, 3) and out[1].dtype == np.float64
    # no step runs the body: here it would never end at a zero slice
    forever = lambda c, xi: (c, rk.while_loop(lambda s: s < 10.0, lambda s: s * 2.0, xi))  # noqa: E731
    _, ys = rk.scan(forever, 0.0, x)
    out = run([x], ys, np.zeros(0), backend=backend)
    assert out.shape == (0,) and out.dtype == np.float64


# --- fori_loop and map ------------------------------------------------------------------


def test_fori_loop_with_int_bounds_is_a_scan():
    w = rt.scalar("w")
    val = rk.fori_loop(2, 6, lambda i, s: (s[0] * w + rt.cast(i, "float64"), s[1] + i), (1.0, 0))
    node = val[0].owner
    assert isinstance(node.op, Scan) and node.inputs[2].type.shape == (4,)  # over 2, 3, 4, 5
    assert val[1].dtype == "int64"
    expected = 1.0
    for i in range(2, 6):
        expected = expected * 0.5 + i
    close(both([w], list(val), 0.5), [expected, 2 + 3 + 4 + 5])
    same = rk.fori_loop(np.int64(2), np.int32(6), lambda i, s: s * 2.0, w)
    assert isinstance(same.owner.op, Scan) and same.owner.inputs[1].type.shape == (4,)
    assert rk.fori_loop(5, 2, lambda i, s: s * 2.0, w) is w  # no step: the initial value


def test_fori_loop_with_symbolic_bounds_is_a_while_loop():
    lo, hi, w = rt.scalar("lo", dtype="int64"), rt.scalar("hi", dtype="int32"), rt.scalar("w")
    val = rk.fori_loop(lo, hi, lambda i, v: v * w + rt.cast(i, "float64"), 1.0)
    assert isinstance(val.owner.op, While)
    for lower, upper in [(2, 6), (3, 3), (5, 1)]:
        expected = 1.0
        for i in range(lower, upper):
            expected = expected * 0.5 + i
        close([both([lo, hi, w], val, lower, upper, 0.5)], [expected])
    n = rk.fori_loop(0, hi, lambda i, v: v + 1, np.int32(0))
    assert isinstance(n.owner.op, While) and n.dtype == "int32"
    assert both([hi], n, 7) == 7


class Moments(NamedTuple):
    mean: Any
    total: Any


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_named_tuples_are_pytree_nodes(backend):
    x = rt.vector("x")

    def step(m, xi):
        return Moments(m.mean + xi / 4.0, m.total + xi), m.total

    final, totals = rk.scan(step, Moments(0.0, 0.0), x)
    assert isinstance(final, Moments)
    f = rk.function([x], [final.mean, final.total, totals], backend=backend)
    mean, total, running = f(np.array([1.0, 2.0, 3.0, 2.0]))
    assert float(mean) == 2.0 and float(total) == 8.0
    np.testing.assert_array_equal(np.asarray(running), [0.0, 1.0, 3.0, 6.0])
    with pytest.raises(GraphTypeError, match=r"carry\.total changes type from float64\[\]"):
        rk.scan(lambda m, xi: (Moments(m.mean, rt.stack([xi, xi])), None), Moments(0.0, 0.0), x)


def test_map_over_rows_with_pytrees():
    m, w = rt.matrix("m"), rt.scalar("w")
    out = rk.map(lambda r: {"sum": rt.sum(r[0]) * w, "max": (rt.max(r[1]), None)}, (m, m * 2.0))
    assert out["max"][1] is None
    rows = np.arange(6.0).reshape(3, 2)
    got = both([m, w], [out["sum"], out["max"][0]], rows, 3.0)
    close(got, [rows.sum(1) * 3.0, rows.max(1) * 2.0])


# --- errors -----------------------------------------------------------------------------


def test_a_carry_that_changes_dtype_names_its_path_and_both_types():
    x = rt.vector("x")
    with pytest.raises(
        GraphTypeError, match=r"scan: carry changes type from float32\[\] .* to float64\[\]"
    ):
        rk.scan(lambda c, xi: (c + xi, None), np.float32(0.0), x)
    init = {"s": (np.float32(0.0), np.float32(1.0)), "n": 0}
    with pytest.raises(
        GraphTypeError, match=r"carry\['s'\]\[1\] changes type from float32\[\] .* to float64\[\]"
    ):
        rk.scan(lambda c, xi: ({"s": (c["s"][0], c["s"][1] + xi), "n": c["n"]}, None), init, x)
    with pytest.raises(GraphTypeError, match=r"carry\['n'\] .* from int64\[\] .* to float64\[\]"):
        rk.scan(lambda c, xi: ({"s": c["s"], "n": c["n"] * 0.5}, None), init, x)


def test_errors_of_fori_loop_and_map_name_them():
    with pytest.raises(GraphTypeError, match=r"^fori_loop: carry changes type from float32"):
        rk.fori_loop(0, 3, lambda i, v: rt.cast(v, "float64"), np.float32(1.0))
    with pytest.raises(ShapeError, match=r"^map: xs is a scalar"):
        rk.map(lambda v: v, rt.scalar("s"))


def test_a_carry_that_changes_static_shape_names_its_path_and_both_types():
    x, w = rt.vector("x"), rt.scalar("w")
    with pytest.raises(GraphTypeError, match=r"carry\[1\] .* from float64\[\] .* to float64\[2\]"):
        rk.scan(lambda c, xi: ((c[0], rt.stack([c[1], xi])), None), (w, w), x)
    v, u = rt.vector("v", shape=(3,)), rt.vector("u")
    with pytest.raises(GraphTypeError, match=r"carry\[0\] .* from float64\[3\] .* float64\[2\]"):
        rk.scan(lambda c, xi: ([c[0][1:] * xi], None), [v], x)
    with pytest.raises(GraphTypeError, match=r"carry\['v'\] .* from float64\[3\] .* float64\[\?\]"):
        rk.scan(lambda c, xi: ({"v": u * xi}, None), {"v": v}, x)  # static to unknown


def test_a_carry_of_another_structure_is_an_error():
    x, w = rt.vector("x"), rt.scalar("w")
    with pytest.raises(
        GraphTypeError, match=r"structure \(\*,\), but the initial carry has \(\*, \*\)"
    ):
        rk.scan(lambda c, xi: ((c[0],), None), (w, w), x)
    with pytest.raises(GraphTypeError, match=r"structure \[\*, \*\], but .* \(\*, \*\)"):
        rk.scan(lambda c, xi: ([c[0], c[1]], None), (w, w), x)


@pytest.mark.parametrize(
    ("body", "shown"),
    [
        (lambda c, xi: c + xi, r"got \*$"),
        (lambda c, xi: (c, xi, xi), r"got \(\*, \*, \*\)$"),
        (lambda c, xi: {"carry": c, "y": xi}, r"got \{'carry': \*, 'y': \*\}$"),
        (lambda c, xi: None, r"got None$"),
    ],
)
def test_f_must_return_a_pair(body, shown):
    with pytest.raises(GraphTypeError, match=r"scan: f must return a pair \(carry, y\), " + shown):
        rk.scan(body, 0.0, rt.vector("x"))


def test_xs_of_different_static_leading_lengths_are_named():
    a, b = rt.vector("a", shape=(3,)), rt.matrix("b", shape=(4, 2))
    with pytest.raises(ShapeError, match=r"lengths differ: xs\['a'\] = 3, xs\['b'\]\[0\] = 4"):
        rk.scan(lambda c, s: (c, None), 0.0, {"a": a, "b": [b]})
    with pytest.raises(ShapeError, match=r"lengths differ: xs = 3, length = 4"):
        rk.scan(lambda c, s: (c, None), 0.0, a, length=4)
    rk.scan(lambda c, s: (c, None), 0.0, (a, rt.vector("u")), length=3)  # agreeing: fine


@pytest.mark.parametrize("backend", BACKENDS)
def test_xs_of_different_run_time_lengths_are_named_at_run_time(backend):
    x, y = rt.vector("x"), rt.vector("y")
    final, ys = rk.scan(lambda c, s: (c + s["a"] * s["b"], s["a"]), 0.0, {"a": x, "b": y})
    f = rk.function([x, y], [final, ys], backend=backend, rules=None)
    with pytest.raises(ShapeError, match=r"sequence 0 \('x'\): 3, sequence 1 \('y'\): 4"):
        f(np.ones(3), np.ones(4))
    close(f(np.ones(3), np.ones(3)), [3.0, np.ones(3)])


@pytest.mark.parametrize(
    ("length", "error", "message"),
    [
        (-1, ShapeError, "scan: length must be non-negative, got -1"),
        (2.5, GraphTypeError, "scan: length must be a non-negative Python int, got 2.5"),
        (True, GraphTypeError, "got True"),
        (np.float64(3.0), GraphTypeError, "got np.float64"),
    ],
)
def test_negative_or_non_integer_length(length, error, message):
    with pytest.raises(error, match=message.replace("(", r"\(")):
        rk.scan(lambda c, _: (c, None), 0.0, length=length)


def test_a_symbolic_length_is_refused():
    with pytest.raises(
        GraphTypeError, match="length must be a non-negative Python int, got <Var 'n'"
    ):
        rk.scan(lambda c, _: (c, None), 0.0, length=rt.scalar("n", dtype="int64"))


def test_missing_xs_and_length_scalar_xs_and_a_non_function():
    w = rt.scalar("w")
    with pytest.raises(GraphTypeError, match=r"scan: give xs or length"):
        rk.scan(lambda c, _: (c, None), w)
    with pytest.raises(
        ShapeError, match=r"scan: xs\[1\] is a scalar; sequences need a leading axis"
    ):
        rk.scan(lambda c, _: (c, None), w, (rt.vector("x"), w))
    with pytest.raises(GraphTypeError, match="scan: f must be a function"):
        rk.scan(None, w, length=2)


# --- the loop in the IR -----------------------------------------------------------------


def test_the_same_body_traced_twice_is_the_same_node():
    x, w = rt.vector("x"), rt.scalar("w")
    first = rk.scan(lambda c, xi: (c * w + xi, rt.sin(c)), 0.0, x)
    again = rk.scan(lambda c, xi: (c * w + xi, rt.sin(c)), 0.0, x)  # another lambda
    assert again[0] is first[0] and again[1] is first[1] and again[0].owner is first[0].owner
    assert rk.scan(lambda c, xi: (c * w + xi, rt.sin(c)), 0.0, x, reverse=True)[0] is not first[0]


def test_different_closures_give_different_nodes():
    x, w, w2 = rt.vector("x"), rt.scalar("w"), rt.scalar("w2")
    (a, _), (b, _) = (rk.scan(lambda c, xi, k=k: (c * k + xi, None), 0.0, x) for k in (w, w2))
    assert a is not b and a.owner.inputs[2] is w and b.owner.inputs[2] is w2
    assert a.owner.op is b.owner.op  # the bodies are the same graph over placeholders
    (c, _), (d, _) = (rk.scan(lambda c, xi, k=k: (c * k + xi, None), 0.0, x) for k in (2.0, 3.0))
    assert c is not d and c.owner.op != d.owner.op  # constants are part of the body
    assert list(c.owner.inputs) == [c.owner.inputs[0], x]  # a constant is not an input


def test_dprint_shows_the_body_indented_under_the_node():
    m, w = rt.matrix("m"), rt.scalar("w")
    inner = lambda c, row: (c + rk.scan(lambda d, e: (d + e * c, None), w, row)[0], None)  # noqa: E731
    final, _ = rk.scan(inner, 1.0, m)
    text = rk.dprint(final)
    assert text == "\n".join(
        [
            "Scan{n_carry=1, n_seq=1, length=None, reverse=False} float64[]",
            "┆ body(%0: float64[], %1: float64[?], %2: float64[]) ->",
            "┆   Add float64[]",
            "┆   ├─ %0 float64[]",
            "┆   └─ Scan{n_carry=1, n_seq=1, length=None, reverse=False} float64[]",
            "┆      ┆ body(%0: float64[], %1: float64[], %2: float64[]) ->",
            "┆      ┆   Add float64[]",
            "┆      ┆   ├─ %0 float64[]",
            "┆      ┆   └─ Multiply float64[]",
            "┆      ┆      ├─ %1 float64[]",
            "┆      ┆      └─ %2 float64[]",
            "┆      ├─ %2 float64[]",
            "┆      ├─ %1 float64[?]",
            "┆      └─ %0 float64[]",
            "├─ 1.0 float64[]",
            "├─ m float64[?,?]",
            "└─ w float64[]",
        ]
    )


def test_pickling_round_trips_and_computes_the_same():
    x, w = rt.vector("x"), rt.scalar("w")
    final, ys = rk.scan(lambda c, xi: (rt.tanh(c * w + xi), {"y": c * xi}), w, x, reverse=True)
    outs = [final, ys["y"]]
    inputs2, outs2 = pickle.loads(pickle.dumps([[x, w], outs]))
    assert [v.name for v in inputs2] == ["x", "w"] and inputs2[0] is not x
    node, node2 = final.owner, outs2[0].owner
    assert node2 is outs2[1].owner and node2.op == node.op and node2.op is not None
    assert node2.op.body == node.op.body  # the same hash-consed nodes: re-interned
    assert node2.op.body.outputs[0] is node.op.body.outputs[0]
    assert list(node2.inputs[1:]) == inputs2  # the closed-over w is the unpickled w
    assert rk.dprint(outs2) == rk.dprint(outs)
    assert rk.replace(outs, dict(zip([x, w], inputs2, strict=True)))[0] is outs2[0]
    close(run(inputs2, outs2, XS, 0.3), run([x, w], outs, XS, 0.3))


def test_traversal_sees_the_loop_as_one_apply():
    x, w = rt.vector("x"), rt.scalar("w")
    final, ys = rk.scan(lambda c, xi: (rt.exp(c * w) + xi, rt.log(c + 1.0)), 0.0, rt.sin(x))
    nodes = rk.toposort([final, ys])
    assert [type(n.op).__name__ for n in nodes] == ["Sin", "Scan"]  # no body node leaks out
    assert rk.graph_inputs([final, ys]) == [x, w]
    body = final.owner.op.body
    assert set(rk.graph_inputs(list(body.outputs))) == set(body.inputs)


def test_replace_a_closed_over_input_rebuilds_the_loop_around_it():
    x, w, u = rt.vector("x"), rt.scalar("w"), rt.scalar("u")
    body = lambda c, xi, k: (c * k + xi, c)  # noqa: E731
    final, ys = rk.scan(lambda c, xi: body(c, xi, w), 0.0, x)
    new_final, new_ys = rk.replace([final, ys], {w: u * 2.0})
    expected = rk.scan(lambda c, xi: body(c, xi, u * 2.0), 0.0, x)
    assert new_final is not final and new_final.owner.inputs[2] is u * 2.0
    assert new_final.owner.op is final.owner.op  # only the outer inputs changed
    # the body reads the closed-over value through a placeholder, so this is not the node
    # that tracing over u * 2.0 gives (that one closes over u), but it computes the same
    assert expected[0].owner.inputs[2] is u
    got = both([x, u], [new_final, new_ys], XS, 0.25)
    close(got, both([x, u], list(expected), XS, 0.25))
    y = rt.vector("y")
    assert rk.replace(final, {x: y}) is rk.scan(lambda c, xi: body(c, xi, w), 0.0, y)[0]


def test_an_inner_graph_is_equal_only_to_the_same_nodes():
    t = rt.scalar("t").type
    p0, p1 = Placeholder(0, t), Placeholder(1, t)
    assert InnerGraph([p0, p1], [p0 + p1]) == InnerGraph([p0, p1], [p0 + p1])
    assert hash(InnerGraph([p0, p1], [p0 + p1])) == hash(InnerGraph([p0, p1], [p0 + p1]))
    assert InnerGraph([p0, p1], [p0 + p1]) != InnerGraph([p0, p1], [p1 + p0])
    assert InnerGraph([p0, p1], [p0]) != InnerGraph([p0], [p0])
    assert Placeholder(0, t) is p0 and Placeholder(0, rt.vector("v").type) is not p0
    assert pickle.loads(pickle.dumps(p1)) is p1


def test_jax_fn_is_pure_jax_under_jit_and_vmap():
    x, w = rt.vector("x"), rt.scalar("w")
    final, ys = rk.scan(lambda c, xi: (rt.tanh(c * w + xi), c * xi), w, x)
    f = rk.function([x, w], [final, rt.sum(ys)], rules=None)
    batch = np.stack([XS, XS[::-1], XS * 2.0])
    with jax.enable_x64(True):
        jitted = jax.jit(f.jax_fn)(jnp.asarray(XS), 0.3)
        mapped = jax.vmap(f.jax_fn, in_axes=(0, None))(jnp.asarray(batch), 0.3)
        over_w = jax.vmap(f.jax_fn, in_axes=(None, 0))(jnp.asarray(XS), jnp.array([0.1, 0.3]))
    close([np.asarray(v) for v in jitted], f(XS, 0.3))
    for i, row in enumerate(batch):
        close([np.asarray(v)[i] for v in mapped], run([x, w], [final, rt.sum(ys)], row, 0.3))
    close([np.asarray(v)[1] for v in over_w], f(XS, 0.3))


# --- random draws in a body -------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_random_draws_with_the_key_in_the_carry(backend):
    key, mu = rr.key("key"), rt.scalar("mu")

    def body(carry, _):
        k, s = carry
        k, z = rr.normal(k, mu, 1.0)
        k, u = rr.uniform(k, size=(2,))
        return (k, s + z), (z, u)

    (k_end, total), (zs, us) = rk.scan(body, (key, 0.0), length=6)
    f = rk.function([key, mu], [k_end, total, zs, us], backend=backend, rules=None)
    first, again, other = f(rr.seed(0), 0.0), f(rr.seed(0), 0.0), f(rr.seed(1), 0.0)
    for a, b in zip(first, again, strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))  # same key: same draws
    zs0, us0 = np.asarray(first[2]), np.asarray(first[3])
    assert len(set(zs0.tolist())) == 6 and us0.shape == (6, 2) and np.all((us0 >= 0) & (us0 < 1))
    assert not np.array_equal(zs0, np.asarray(other[2]))  # another key: other draws
    np.testing.assert_allclose(np.asarray(first[1]), zs0.sum(), rtol=1e-12)
    # the loop draws what the unrolled graph draws from the same keys, with or without rules
    k, s, unrolled = key, 0.0, []
    for _ in range(6):
        (k, s), y = body((k, s), None)
        unrolled.append(y)
    g = rk.function(
        [key, mu],
        [k, s, rt.stack([z for z, _ in unrolled]), rt.stack([u for _, u in unrolled])],
        backend=backend,
        rules=None,
    )
    rewritten = rk.function([key, mu], [k_end, total, zs, us], backend=backend)
    for got in (g(rr.seed(0), 0.0), rewritten(rr.seed(0), 0.0)):
        for a, b in zip(got, first, strict=True):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12)
