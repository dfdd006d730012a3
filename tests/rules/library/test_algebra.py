"""The cancelling sum/product canonicaliser (``algebra``, phase ``canonicalize``): each rule
fires on its example and is sound on its domain; terms cancel across nested sums and
products, constants fold, identities drop; the dtype and the runtime shape are kept;
anything that is not progress is left as written; and rewritten random trees compute what
the originals compute."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.rules.library import algebra
from rewritekit.rules.library.algebra import MAX_NODES, rules
from rewritekit.tensor.shapes import BroadcastTo
from rewritekit.testing import check_rule

x = rt.vector("x")
y = rt.vector("y")
z = rt.vector("z")
m = rt.matrix("m")
xf = rt.vector("xf", dtype="float32")
xi = rt.vector("xi", dtype="int64")
yi = rt.vector("yi", dtype="int64")
xi8 = rt.vector("xi8", dtype="int8")
xi16 = rt.vector("xi16", dtype="int16")
xu = rt.vector("xu", dtype="uint32")
xb = rt.vector("xb", dtype="bool")
xc = rt.vector("xc", dtype="complex128")
yc = rt.vector("yc", dtype="complex128")


def _rewrite(graph: rk.Var) -> rk.Var:
    return rk.rewrite(graph, rules)


def _values(inputs: list[rk.Var], graphs: list[rk.Var], *values: object) -> list[np.ndarray]:
    f = rk.function(inputs, graphs, backend="numpy", rules=None)
    with np.errstate(all="ignore"):
        return [np.asarray(v) for v in f(*values)]


def _same(inputs: list[rk.Var], graph: rk.Var, *values: object) -> rk.Var:
    """Assert the rewrite keeps ``graph``'s type, shape and values; return the rewrite."""
    rewritten = _rewrite(graph)
    assert rewritten.type == graph.type
    before, after = _values(inputs, [graph, rewritten], *values)
    assert before.dtype == after.dtype and before.shape == after.shape
    if before.dtype.kind in "fc":
        np.testing.assert_allclose(after, before, rtol=1e-12, atol=1e-300, equal_nan=True)
    else:
        np.testing.assert_array_equal(after, before)
    return rewritten


# --- every rule ---------------------------------------------------------------------------


def test_the_rules_are_named_tagged_and_shape_unsafe():
    cancelling = [r for r in rules if r.name.startswith("cancel_")]
    assert [r.name for r in cancelling] == [
        "cancel_in_add",
        "cancel_in_subtract",
        "cancel_in_multiply",
        "cancel_in_true_divide",
    ]
    assert all(r.tags == {"canonicalize", "shape_unsafe"} for r in cancelling)
    collecting = [r for r in rules if r not in cancelling]
    assert all(r.name.startswith("collect_") for r in collecting)
    assert all(r.tags == {"canonicalize"} for r in collecting)  # no operand disappears
    assert all(r.qualname.startswith("canonicalize.") for r in rules)


@pytest.mark.parametrize("rule", list(rules), ids=lambda r: r.name)
@pytest.mark.parametrize("seed", range(4))
def test_every_rule_fires_on_its_example_and_is_sound(rule, seed):
    check_rule(rule, seed=seed)


# --- cancellation, folding, identities ----------------------------------------------------


@pytest.mark.parametrize(
    ("graph", "expected"),
    [
        (x * y / x, y),
        ((2 * x) / 2, x),
        (2 * x * 3, rt.constant(6.0) * x),
        (x + 2 + 3, x + rt.constant(5.0)),
        ((x + y) - x, y),
        (x - (x - y), y),
        ((x * y) / (y * z), x / z),
        (xi * 2 * 3, rt.constant(np.int64(6)) * xi),
        (x + x - x, x),
        (x + 2 - y + 3, x - y + rt.constant(5.0)),
        (x - 2 - 3, x - rt.constant(5.0)),
        (2 - x - 3, -x - rt.constant(1.0)),
        (5 - x - y + 1, rt.constant(6.0) - x - y),
        (x + 1e20 - 1e20, x),
        (0 - x, -x),
        (x + 0, x),
        (x * 1, x),
        (x + -0.0, x),
        (x / (x * y), rt.constant(1.0) / y),
        (2 / (x * y) * x * 3, rt.constant(6.0) / y),
        (-x / (x * y), rt.constant(-1.0) / y),
        ((-x) * (-y), x * y),
        (-1 * x, -x),
        ((-x) * 2, rt.constant(-2.0) * x),
        (x * -2 / 2, -x),
        ((x - z) * y / (x - z), y),
    ],
    ids=rk.rules.term_str,
)
def test_terms_cancel_and_constants_fold(graph, expected):
    assert _rewrite(graph) is expected


def test_survivors_keep_their_order():
    w = rt.vector("w")
    assert _rewrite(x - y + w + z - w) is x - y + z
    assert _rewrite(x / y * w * z / w) is x / y * z


def test_everything_cancelled_gives_a_filled_node_of_the_type():
    for graph, fill in [(x * y / (y * x), 1.0), (x - x + y - y, 0.0), (x + 2.0 - x, 2.0)]:
        out = _same([x, y], graph, np.array([1.5, -2.0, 3.0]), np.array([0.5, 4.0, -1.0]))
        assert isinstance(out.owner.op, BroadcastTo)
        assert float(out.owner.inputs[0].data) == fill


def test_integer_sums_and_products_wrap_like_numpy():
    big = np.array([2**62, -(2**63), 7], dtype=np.int64)
    for graph in (
        xi * 4 * 4,
        (xi + yi) - yi + 2**62 + 2**62,  # the constants fold to 2**63: -2**63
        xi - 2**62 - 2**62,  # -2**63, whose negation wraps to itself
        xi - (xi - yi),
    ):
        _same([xi, yi], graph, big, big[::-1].copy())
    assert _rewrite((xi8 + xi16) - xi16) is rt.cast(xi8, "int16")
    _same(
        [xi8, xi16], (xi8 + xi16) - xi16, np.array([127, -128], np.int8), np.array([1, 1], np.int16)
    )


def test_dtypes_are_kept():
    assert _rewrite(xf * 2 * 3) is rt.constant(np.float32(6.0)) * xf
    assert _rewrite((xf + x) - x) is rt.cast(xf, "float64")  # xf was promoted by the sum
    assert _rewrite(xu * 2 * 3) is rt.constant(np.uint32(6)) * xu
    assert _rewrite(xc * yc / xc) is yc
    assert _rewrite(xi / xi).type == (xi / xi).type  # float64 ones
    # bools: + is or, * is and: nothing to cancel
    for graph in (rt.add(xb, xb) + rt.constant(True), rt.multiply(xb, True) * True):
        assert _rewrite(graph) is graph


def test_integer_division_is_a_boundary():
    graph = (xi * yi) / xi  # int64 product, then a float64 quotient: xi * yi is one term
    assert _rewrite(graph) is graph
    assert _rewrite(xi * yi * 2 / 2) is (xi * yi * 2) / 2  # the constants live in two dtypes


def test_unsigned_negations_are_terms():
    graph = rt.negative(xu) * rt.negative(xu)
    assert rules["cancel_in_multiply"].apply(graph) is None


# --- leaving expressions as written -------------------------------------------------------


@pytest.mark.parametrize(
    "graph",
    [
        1 - rt.sigmoid(x),
        1 + x,
        1 / (1 + rt.exp(-x)),
        x / (y / x),
        x * 2,
        -x * y,
        -x - y + 5,
        x + np.zeros((4, 3)),  # dropping the zeros would narrow the static shape
        x * np.ones((2, 3)),
        rt.reciprocal(x) * rt.reciprocal(y),
        x + np.nan,
        x * y - y * x,  # y * x is another node than x * y
    ],
    ids=rk.rules.term_str,
)
def test_no_progress_leaves_the_expression_as_written(graph):
    assert _rewrite(graph) is graph


def test_nan_constants_are_not_identities():
    out = _same([x], x + np.nan + 0.0, np.array([1.0, 2.0]))
    assert out is x + np.nan
    _same([x], x * np.nan / np.nan, np.array([1.0, 2.0]))
    _same([x], x / 0.0 / 2.0, np.array([1.0, 0.0, -3.0]))


def test_cancelling_is_documented_to_differ_at_inf_nan_and_zero():
    special = np.array([np.inf, np.nan, 0.0])
    before, after = _values([x, y], [x * y / x, _rewrite(x * y / x)], special, np.ones(3))
    assert np.isnan(before).all() and (after == 1).all()
    before, after = _values([x], [x - x, _rewrite(x - x)], special)
    assert np.isnan(before[:2]).all() and (after == 0).all()


def test_a_rewrite_is_a_normal_form():
    for graph in (x + 2 + 3 - y, 2 - x - 3, x * -2 / 2 * y, x / (x * y * 3) * 2, m * x / m):
        out = _rewrite(graph)
        assert _rewrite(out) is out


def test_the_walk_is_bounded():
    terms = [rt.exp(rt.vector(f"t{i}")) for i in range(MAX_NODES + 2)]
    near = x
    for t in terms[:8]:
        near = near + t
    assert _rewrite(near - x) is _rewrite(sum(terms[1:8], terms[0]))
    far = x
    for t in terms:
        far = far + t
    assert _rewrite(far - x) is far - x  # x lies deeper than MAX_NODES nodes


# --- shapes -------------------------------------------------------------------------------


def test_a_survivor_of_the_node_shape_is_kept():
    assert _rewrite(x * m / x) is m
    assert _rewrite(x + m - x) is m


@pytest.mark.parametrize(
    ("x_shape", "m_shape"),
    [((3,), (2, 3)), ((1,), (2, 3)), ((3,), (2, 1)), ((0,), (2, 1)), ((1,), (2, 0))],
)
def test_a_smaller_survivor_is_broadcast_to_the_runtime_shape(x_shape, m_shape):
    rng = np.random.default_rng(0)
    xs, ms = rng.uniform(1, 2, x_shape), rng.uniform(1, 2, m_shape)
    for graph in (m * x / m, (m + x) - m, m + (x - m), m / m, (m - x * 2 + 1) - m):
        out = _same([x, m], graph, xs, ms)
        assert isinstance(out.owner.op, BroadcastTo)


def test_static_lengths_need_no_shape_nodes():
    xs, ms = rt.vector("xs", shape=(3,)), rt.matrix("ms", shape=(2, 3))
    out = _rewrite(ms * xs / ms)
    assert out is rt.broadcast_to(xs, (2, 3))
    assert _rewrite(xs - xs).owner.inputs[1] is rt.constant(np.array([3]))


# --- together with the other canonical rules ----------------------------------------------


def test_no_cycles_with_the_canonicalize_phase():
    from rewritekit.rules.library import canonicalize

    point = np.array([0.5, -2.0, 3.0])
    for graph in (
        x + (-y) + y,
        -(x - y) + x,
        (-x) * (-y) / y,
        0 - x + x,
        x * 1 * y / y,
        x / x * 2 * 3,
        -(x * 2) * 3,
    ):
        out = rk.rewrite(graph, canonicalize)
        assert out.type == graph.type
        before, after = _values([x, y], [graph, out], point, point[::-1].copy())
        np.testing.assert_allclose(after, before, rtol=1e-12)


# --- rewritten random trees ---------------------------------------------------------------

LEAVES = {"x": x, "y": y, "m": m}
CONSTANTS = [0.0, 1.0, -1.0, 2.0, 0.5, 3.0]


def _trees(leaves: list[str], constants: list[float], ops: list[str]) -> st.SearchStrategy:
    leaf = st.sampled_from(leaves) | st.sampled_from(constants)
    return st.recursive(
        leaf,
        lambda sub: st.tuples(st.sampled_from(ops), sub, sub) | st.tuples(st.just("neg"), sub),
        max_leaves=12,
    )


def _build(tree, env, values):
    """The tree as a graph, its value, and a bound on its rounding error's scale (the
    first-order sum of every operand's magnitude through the tree). Constants take the
    dtype of the first leaf Var."""
    if isinstance(tree, str):
        return env[tree], values[tree], np.abs(values[tree])
    if not isinstance(tree, tuple):
        dtype = next(iter(env.values())).dtype
        return rt.constant(tree, dtype=dtype), np.float64(tree), np.float64(abs(tree))
    op, *args = tree
    parts = [_build(a, env, values) for a in args]
    if op == "neg":
        ((g, v, s),) = parts
        return -g, -v, s
    (ga, va, sa), (gb, vb, sb) = parts
    if op == "+":
        return ga + gb, va + vb, sa + sb
    if op == "-":
        return ga - gb, va - vb, sa + sb
    if op == "*":
        return ga * gb, va * vb, sa * np.abs(vb) + np.abs(va) * sb
    return ga / gb, va / vb, sa / np.abs(vb) + np.abs(va) * sb / vb**2


def _graph(tree, env):
    with np.errstate(all="ignore"):
        return _build(tree, env, dict.fromkeys(env, np.float64(1.0)))[0]


@settings(max_examples=25, deadline=None)
@given(tree=_trees(list(LEAVES), CONSTANTS, ["+", "-", "*", "/"]), seed=st.integers(0, 2**16))
def test_rewritten_random_float_trees_keep_their_values(tree, seed):
    rng = np.random.default_rng(seed)
    values = {
        "x": rng.choice([-1, 1], 3) * rng.uniform(0.5, 2, 3),
        "y": rng.choice([-1, 1], 3) * rng.uniform(0.5, 2, 3),
        "m": rng.choice([-1, 1], (2, 3)) * rng.uniform(0.5, 2, (2, 3)),
    }
    graph = _graph(tree, LEAVES)
    with np.errstate(all="ignore"):
        _, _, scale = _build(tree, LEAVES, values)
    rewritten = _rewrite(graph)
    assert rewritten.type == graph.type
    inputs = list(LEAVES.values())
    before, after = _values(inputs, [graph, rewritten], *(values[k] for k in LEAVES))
    assume(np.isfinite(before).all() and np.isfinite(scale).all())
    assert before.shape == after.shape
    assert np.all(np.abs(after - before) <= 1e-9 * np.broadcast_to(scale, before.shape))
    assert _rewrite(rewritten) is rewritten


INT_LEAVES = {"xi": xi, "yi": yi}


@settings(max_examples=20, deadline=None)
@given(tree=_trees(list(INT_LEAVES), [0, 1, -1, 2, 3], ["+", "-", "*"]), seed=st.integers(0, 99))
def test_rewritten_random_integer_trees_are_exact(tree, seed):
    rng = np.random.default_rng(seed)
    graph = _graph(tree, INT_LEAVES)
    rewritten = _rewrite(graph)
    assert rewritten.type == graph.type
    values = [rng.integers(-(2**40), 2**40, 4) for _ in INT_LEAVES]
    before, after = _values(list(INT_LEAVES.values()), [graph, rewritten], *values)
    np.testing.assert_array_equal(after, before)


def test_the_module_exports_one_rule_set():
    assert algebra.__all__ == ["rules"]
    assert rules.name == "canonicalize"


def test_like_terms_are_collected():
    t = rt.exp(x) * rt.sin(x)
    total = t
    for _ in range(199):  # the benchmarks' W4: one hash-consed product, 199 additions
        total = total + rt.exp(x) * rt.sin(x)
    assert _rewrite(total) is 200.0 * t
    assert _rewrite(x + x) is 2.0 * x
    assert _rewrite(3.0 * x - x) is 2.0 * x
    assert _rewrite(x - 3.0 * x) is -2.0 * x
    assert _rewrite(x * 2.5 - 1.5 * x) is x  # 1.0 * x, whose identity factor then goes
    assert rk.rewrite(x * 2.5 - 1.5 * x, "default") is x
    xi = rt.vector("xi", dtype="int8")
    assert _rewrite(xi + xi + xi) is 3 * xi  # modular arithmetic agrees
    wide = rt.constant(np.full((1, 1), 2.0)) * x + x  # a (1, 1) coefficient makes it 2-d
    assert _rewrite(wide) is rt.constant(np.full((1, 1), 3.0)) * x
    v = rt.vector("v")
    assert _rewrite(v * x + x) is v * x + x  # only constant coefficients are collected
