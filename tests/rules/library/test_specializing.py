"""The specializing rules (phase ``specialize``): each fires on its example and is sound on
its domain, keeps the dtype and static shape (declining where it cannot), keeps NumPy's
NaN and inf values, and rewritten random graphs compute what the originals compute."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.rules.library.specializing import rules
from rewritekit.tensor.products import Dot
from rewritekit.testing import check_rule

x = rt.vector("x")
y = rt.vector("y")
xf = rt.vector("xf", dtype="float32")
xi = rt.vector("xi", dtype="int64")
xi8 = rt.vector("xi8", dtype="int8")
xc = rt.vector("xc", dtype="complex128")
n = rt.scalar("n", dtype="int64")
A = rt.matrix("A", shape=(3, 3))


def _rewrite(graph: rk.Var) -> rk.Var:
    return rk.rewrite(graph, rules)


def _values(inputs: list[rk.Var], graph: rk.Var, *values: object) -> tuple[np.ndarray, ...]:
    """``graph`` and its rewrite evaluated on the NumPy backend at ``values``."""
    f = rk.function(inputs, [graph, _rewrite(graph)], backend="numpy", rules=None)
    with np.errstate(all="ignore"):
        return tuple(np.asarray(v) for v in f(*values))


def _spd(size: int = 3, seed: int = 0) -> np.ndarray:
    m = np.random.default_rng(seed).normal(size=(size, size))
    return m @ m.T + size * np.eye(size)


# --- the set as a whole ---------------------------------------------------------------------


def test_the_set_is_named_tagged_and_its_names_are_unique():
    names = [r.name for r in rules]
    assert len(names) == len(set(names)) == 15
    assert all(r.qualname == f"specialize.{r.name}" for r in rules)
    assert all("specialize" in r.tags for r in rules)
    unsafe = {r.name for r in rules.including("shape_unsafe")}
    assert unsafe == {
        "sum_of_broadcast_scalar_to_product",
        "sum_of_full_to_product",
        "sum_of_vector_product_to_dot_unknown_length",
    }


@pytest.mark.parametrize("rule", list(rules), ids=lambda r: r.name)
def test_every_rule_fires_on_its_example_and_is_sound(rule):
    for seed in range(4):
        check_rule(rule, seed=seed)


# --- powers ---------------------------------------------------------------------------------


def test_powers_become_cheaper_ops():
    assert _rewrite(x**2) is rt.square(x)
    assert _rewrite(x**0.5) is rt.sqrt(x)
    assert _rewrite(x**-1) is rt.reciprocal(x)
    assert _rewrite(x**3) is x * rt.square(x)
    assert _rewrite(x**4) is rt.square(rt.square(x))
    assert _rewrite(x**-2) is rt.reciprocal(rt.square(x))
    sq = rt.square
    assert _rewrite(x**13) is (x * sq(sq(x))) * sq(sq(sq(x)))  # 13 = 1 + 4 + 8
    assert _rewrite(x**-16) is rt.reciprocal(sq(sq(sq(sq(x)))))


def test_powers_outside_the_range_or_not_integral_are_kept():
    for exponent in (17, -17, 2.5, 1.0000001, np.nan, np.inf):
        assert _rewrite(x**exponent) is x**exponent
    for exponent in (0, 1):  # canonicalize's identities, not ours
        assert _rewrite(x**exponent) is x**exponent


def test_powers_keep_the_dtype():
    assert _rewrite(xf**2) is rt.square(xf)  # float32 stays float32
    assert _rewrite(xi**3) is xi * rt.square(xi)  # int64 stays int64 (wraps as pow does)
    assert _rewrite(xi8**3).dtype == "int8"
    # an int base with a float exponent is float64: the base is cast first, as Power does
    assert _rewrite(xi**2.0) is rt.square(rt.cast(xi, "float64"))
    assert _rewrite(xi**-1.0) is rt.reciprocal(rt.cast(xi, "float64"))
    strong = xf ** rt.constant(np.float64(2.0))
    assert strong.dtype == "float64"
    assert _rewrite(strong) is rt.square(rt.cast(xf, "float64"))


def test_integer_bases_to_negative_integer_powers_are_kept():
    # NumPy raises for them; a reciprocal would also change the integer dtype
    for exponent in (-1, -2, -3):
        assert _rewrite(xi**exponent) is xi**exponent


def test_an_exponent_array_that_broadcasts_x_is_kept():
    wide = x ** np.full(3, 2.0)  # float64[3]: square(x) would be float64[?]
    assert _rewrite(wide) is wide
    assert _rewrite(x ** np.full(1, 2.0)) is rt.square(x)  # length 1 changes nothing
    scalar = rt.scalar("s") ** np.full((1,), 3.0)  # rank 1: x * square(x) is 0-d
    assert _rewrite(scalar) is scalar
    assert _rewrite(x ** np.array([2.0, 3.0, 2.0])) is x ** np.array([2.0, 3.0, 2.0])


def test_complex_powers():
    assert _rewrite(xc**3) is xc * rt.square(xc)
    assert _rewrite(xc**0.5) is rt.sqrt(xc)
    assert _rewrite(xc ** (2 + 1j)) is xc ** (2 + 1j)
    z = np.array([-4 + 0j, -4 - 0j, 1j, -1 - 2j, 0j])
    for graph in (xc**0.5, xc**3, xc**-2):
        before, after = _values([xc], graph, z)
        np.testing.assert_allclose(after, before, rtol=1e-12, equal_nan=True)


def test_powers_keep_inf_nan_and_signed_zeros():
    point = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-200, 1e200, -3.0])
    for exponent in (2, 3, 4, 5, -1, -2, -3, -16, 16):
        before, after = _values([x], x**exponent, point)
        np.testing.assert_allclose(after, before, rtol=1e-14, equal_nan=True)
        np.testing.assert_array_equal(np.signbit(after), np.signbit(before))
    # x ** 0.5: the same everywhere but at -inf, where pow gives inf and sqrt NaN
    before, after = _values([x], x**0.5, point)
    finite = point != -np.inf
    np.testing.assert_array_equal(after[finite], before[finite])


def test_float32_powers_are_within_a_few_ulps():
    point = np.random.default_rng(0).uniform(0.5, 2.0, size=200).astype(np.float32)
    for exponent in (3, 7, 16, -5, -16):
        before, after = _values([xf], xf**exponent, point)
        assert after.dtype == np.float32
        np.testing.assert_allclose(after, before, rtol=8 * np.finfo(np.float32).eps)


# --- elementwise ----------------------------------------------------------------------------


def test_sqrt_of_square_is_abs_for_floats_only():
    assert _rewrite(rt.sqrt(rt.square(x))) is rt.abs(x)
    assert _rewrite(rt.sqrt(rt.square(xf))) is rt.abs(xf)
    kept = rt.sqrt(rt.square(xi))  # float64 result, and an int square can wrap
    assert _rewrite(kept) is kept
    assert _rewrite(rt.sqrt(x**2)) is rt.abs(x)  # after x**2 -> square(x)
    before, after = _values([x], rt.sqrt(rt.square(x)), [np.nan, -np.inf, -0.0, -2.0])
    np.testing.assert_array_equal(after, before)


def test_exp_times_exp():
    assert _rewrite(rt.exp(x) * rt.exp(y)) is rt.exp(x + y)
    assert _rewrite(rt.exp(xf) * rt.exp(x)) is rt.exp(xf + x)  # float64 either way
    kept = rt.exp(xi) * rt.exp(x)  # xi + x could wrap for two int inputs: floats only
    assert _rewrite(kept) is kept
    before, after = _values([x, y], rt.exp(x) * rt.exp(y), [np.inf, np.nan, 1.0], [-np.inf, 0, 2])
    np.testing.assert_allclose(after, before, rtol=1e-14, equal_nan=True)


# --- reductions -----------------------------------------------------------------------------


def test_sum_of_a_scaled_tensor():
    m = rt.matrix("m")
    a = rt.scalar("a")
    assert _rewrite(rt.sum(a * m)) is a * rt.sum(m)
    assert _rewrite(rt.sum(m * 2.0, axis=0, keepdims=True)) is 2.0 * rt.sum(
        m, axis=0, keepdims=True
    )
    one = rt.vector("one", shape=(1,))
    assert _rewrite(rt.sum(one * m, axis=1)) is rt.squeeze(one) * rt.sum(m, axis=1)
    af = rt.scalar("af", dtype="float32")
    assert _rewrite(rt.sum(af * x)) is rt.cast(af, "float64") * rt.sum(x)


def test_sum_of_scaled_declines_where_it_would_change_the_type_or_value():
    wide = rt.sum(rt.tensor("a", shape=(1, 1)) * x)  # a broadcasts x to a matrix
    assert _rewrite(wide) is wide
    narrow = rt.sum(rt.scalar("a", dtype="int8") * xi8)  # int8 product wraps, sum is int64
    assert _rewrite(narrow) is narrow
    ai = rt.scalar("ai", dtype="int64")
    assert _rewrite(rt.sum(ai * xi)) is ai * rt.sum(xi)  # int64 wraps alike on both sides


def test_sum_of_a_broadcast_scalar():
    s = rt.scalar("s")
    for axis, keepdims in [(None, False), (None, True), (0, False), (1, True), ((0, 1), False)]:
        graph = rt.sum(rt.broadcast_to(s, (n, 3)), axis=axis, keepdims=keepdims)
        rewritten = _rewrite(graph)
        assert rewritten.type == graph.type
        assert not any(node.op == graph.owner.op for node in rk.toposort(rewritten))
        for length in (0, 1, 4):
            before, after = _values([s, n], graph, 1.5, length)
            np.testing.assert_allclose(after, before, rtol=1e-14)
            assert after.shape == before.shape


def test_sum_of_full_keeps_the_dtype():
    for dtype in ("int32", "int8", "bool", "uint8", "float32"):
        s = rt.scalar("s", dtype=dtype)
        graph = rt.sum(rt.full((n, 2), s), axis=0)
        rewritten = _rewrite(graph)
        assert rewritten.type == graph.type
        value = np.array(1 if dtype == "bool" else 3, dtype=dtype)
        before, after = _values([s, n], graph, value, 5)
        np.testing.assert_array_equal(after, before)


def test_an_empty_sum_of_a_static_fill_is_zero_even_of_inf():
    graph = rt.sum(rt.full((0, 3), np.inf), axis=0)
    check_rule(rules["sum_of_full_to_product"], example=lambda: graph)
    before, after = _values([], graph)
    np.testing.assert_array_equal(after, before)
    np.testing.assert_array_equal(after, np.zeros(3))


def test_sum_of_a_broadcast_vector_is_kept():
    kept = rt.sum(rt.broadcast_to(x, (2, 3)))  # not a scalar fill
    assert _rewrite(kept) is kept


def test_sum_of_vector_products_becomes_dot():
    x4, y4 = rt.vector("x4", shape=(4,)), rt.vector("y4", shape=(4,))
    safe = rules.excluding("shape_unsafe")
    assert rk.rewrite(rt.sum(x4 * y4), safe) is rt.dot(x4, y4)
    assert rk.rewrite(rt.sum(x * y), safe) is rt.sum(x * y)  # y could have length 1
    assert _rewrite(rt.sum(x * y)) is rt.dot(x, y)  # ... unless shape_unsafe is allowed
    assert rk.rewrite(rt.sum(x * x), safe) is rt.dot(x, x)  # the same length, surely
    yi = rt.vector("yi", dtype="int64")
    assert _rewrite(rt.sum(xi * yi)) is rt.dot(xi, yi)  # int64: wraps alike


@pytest.mark.parametrize(
    "graph",
    [
        rt.sum(rt.vector("one", shape=(1,)) * rt.vector("y4", shape=(4,))),  # broadcasts
        rt.sum(rt.vector("one", shape=(1,)) * rt.vector("y")),
        rt.sum(x * y, keepdims=True),  # shape (1,), not ()
        rt.sum(xi8 * rt.vector("yi8", dtype="int8")),  # int8 product, int64 sum
        rt.sum(rt.matrix("m") * rt.matrix("k")),  # not vectors
    ],
    ids=["length_one", "length_one_unknown", "keepdims", "narrow_int", "matrices"],
)
def test_sum_of_products_that_are_not_dots_are_kept(graph):
    assert not isinstance(_rewrite(graph).owner.op, Dot)


# --- linear algebra -------------------------------------------------------------------------


def test_inverse_times_b_becomes_solve():
    inv = rt.linalg.inv
    b, bm = rt.vector("b"), rt.matrix("bm")
    assert _rewrite(inv(A) @ b) is rt.linalg.solve(A, b)
    assert _rewrite(inv(A) @ bm) is rt.linalg.solve(A, bm)
    assert _rewrite(rt.dot(inv(A), b)) is rt.linalg.solve(A, b)
    assert _rewrite(rt.dot(inv(A), bm)) is rt.linalg.solve(A, bm)
    stack = rt.tensor("S", shape=(5, 3, 3))
    assert _rewrite(inv(stack) @ b) is rt.linalg.solve(stack, b)  # (5, 3) both ways
    point = np.stack([_spd(seed=i) for i in range(5)])
    before, after = _values([stack, b], inv(stack) @ b, point, np.array([1.0, -2.0, 0.5]))
    np.testing.assert_allclose(after, before, rtol=1e-10)


@pytest.mark.parametrize(
    "graph",
    [
        rt.dot(rt.linalg.inv(rt.tensor("S", shape=(5, 3, 3))), rt.vector("b")),  # dot of stack
        rt.dot(rt.linalg.inv(A), rt.tensor("b3", shape=(2, 3, 4))),  # dot does not broadcast
        rt.linalg.inv(A) @ rt.vector("b", dtype="float16"),  # solve rejects float16
        rt.linalg.inv(rt.matrix("A", dtype="float32")) @ rt.vector("b", dtype="int8"),  # f32
        rt.dot(rt.linalg.inv(A), rt.scalar("s")),  # a scaling, not a product
    ],
    ids=["dot_stack", "dot_3d", "float16", "dtype", "scalar"],
)
def test_inverse_products_that_solve_cannot_say_are_kept(graph):
    assert _rewrite(graph) is graph


def test_inverse_of_inverse():
    assert _rewrite(rt.linalg.inv(rt.linalg.inv(A))) is A
    ai = rt.matrix("Ai", dtype="int64")
    assert _rewrite(rt.linalg.inv(rt.linalg.inv(ai))) is rt.cast(ai, "float64")
    partial = rt.linalg.inv(rt.linalg.inv(rt.matrix("P", shape=(None, 3))))  # (3, 3) vs (?, 3)
    assert _rewrite(partial) is partial


def test_det_of_cholesky():
    factor = rt.linalg.cholesky(A)
    assert _rewrite(rt.linalg.det(factor)) is rt.prod(rt.linalg.diag(factor))
    before, after = _values([A], rt.linalg.det(factor), _spd())
    np.testing.assert_allclose(after, before, rtol=1e-12)
    stacked = rt.linalg.det(rt.linalg.cholesky(rt.tensor("S", shape=(2, 3, 3))))
    assert _rewrite(stacked) is stacked  # diag takes one matrix


# --- property: rewritten random graphs compute what the originals compute ------------------

xs, ys = rt.vector("xs", shape=(4,)), rt.vector("ys", shape=(4,))
MOTIFS = [
    lambda u, v: u**2,
    lambda u, v: u**3,
    lambda u, v: rt.abs(u) ** 0.5,
    lambda u, v: (u + 3.0) ** -1,
    lambda u, v: (rt.abs(u) + 0.5) ** -4,
    lambda u, v: u**5 * 0.01,
    lambda u, v: rt.sqrt(rt.square(u)),
    lambda u, v: rt.exp(rt.sin(u)) * rt.exp(rt.cos(v)),
    lambda u, v: rt.sum(1.5 * u) + v,
    lambda u, v: rt.sum(u * v) * v,
    lambda u, v: rt.sum(rt.broadcast_to(rt.sum(u), (3, 4)), axis=0) + v,
    lambda u, v: rt.tanh(u) - v,
]


@st.composite
def _graphs(draw: st.DrawFn) -> rk.Var:
    """A chain of 2 to 6 motifs, each applied to the graph so far and a leaf (or itself)."""
    graph = draw(st.sampled_from([xs, ys]))
    steps = st.tuples(st.sampled_from(MOTIFS), st.sampled_from([xs, ys, None]))
    for motif, other in draw(st.lists(steps, min_size=2, max_size=6)):
        graph = rt.tanh(motif(graph, graph if other is None else other))  # tanh: small values
    return graph


@settings(max_examples=25, deadline=None)
@given(graph=_graphs(), seed=st.integers(0, 2**16))
def test_rewritten_random_graphs_keep_their_values(graph, seed):
    rng = np.random.default_rng(seed)
    point = [rng.normal(0, 1.5, size=4) for _ in range(2)]
    before, after = _values([xs, ys], graph, *point)
    assert _rewrite(graph).type == graph.type
    np.testing.assert_allclose(after, before, rtol=1e-9, atol=1e-12, equal_nan=True)
