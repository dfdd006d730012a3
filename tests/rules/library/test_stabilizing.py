"""The stabilize phase: every rule is sound and fires on its example, reaches the best form
under the engine's bottom-up order, keeps types and NaN semantics, declines where it must,
and makes the motivating extreme inputs exact on both backends."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.rules.library.stabilizing import rules
from rewritekit.testing import check_rule

x, y = rt.vector("x"), rt.vector("y")
m = rt.matrix("m")
A = rt.matrix("A", shape=(3, 3))


def rewrite(graph):
    return rk.rewrite(graph, rules)


# --- the rule set -------------------------------------------------------------------------


def test_rules_are_named_tagged_and_safe():
    names = [r.name for r in rules]
    assert len(names) == len(set(names))
    assert all(r.qualname == f"stabilize.{r.name}" for r in rules)
    assert all(r.tags == {"stabilize"} for r in rules)  # none is shape_unsafe
    assert all(r.domain for r in rules)


@pytest.mark.parametrize("rule", list(rules), ids=lambda r: r.name)
def test_every_rule_fires_on_its_example_and_is_sound(rule):
    for seed in range(4):
        check_rule(rule, seed=seed)


# --- structure: the best form under the bottom-up order -------------------------------------

STRUCTURE = [
    ("log1p", rt.log(1 + x), rt.log1p(x)),
    ("log1p_commuted", rt.log(x + 1), rt.log1p(x)),
    ("log1p_neg", rt.log(1 - x), rt.log1p(-x)),
    ("log1p_neg_neg", rt.log(1 - (-x)), rt.log1p(x)),
    ("expm1", rt.exp(x) - 1, rt.expm1(x)),
    ("neg_expm1", 1 - rt.exp(x), -rt.expm1(x)),
    ("softplus", rt.log(1 + rt.exp(x)), rt.softplus(x)),
    ("softplus_log1p", rt.log1p(rt.exp(x)), rt.softplus(x)),
    ("log_sigmoid", rt.log(rt.sigmoid(x)), -rt.softplus(-x)),
    ("log_sigmoid_neg", rt.log(rt.sigmoid(-x)), -rt.softplus(x)),
    # 1 - sigmoid(x) becomes sigmoid(-x) first, then log(sigmoid(-x)) -> -softplus(x)
    ("log_one_minus_sigmoid", rt.log(1 - rt.sigmoid(x)), -rt.softplus(x)),
    ("log1p_neg_sigmoid", rt.log1p(-rt.sigmoid(x)), -rt.softplus(x)),
    ("one_minus_sigmoid", 1 - rt.sigmoid(x), rt.sigmoid(-x)),
    ("one_minus_sigmoid_neg", 1 - rt.sigmoid(-x), rt.sigmoid(x)),
    ("logistic", 1 / (1 + rt.exp(-x)), rt.sigmoid(x)),
    ("logistic_reciprocal", rt.reciprocal(1 + rt.exp(-x)), rt.sigmoid(x)),
    ("logistic_negated", 1 / (rt.exp(x) + 1), rt.sigmoid(-x)),
    ("logsumexp", rt.log(rt.sum(rt.exp(x))), rt.logsumexp(x)),
    (
        "logsumexp_axis",
        rt.log(rt.sum(rt.exp(m), axis=-1, keepdims=True)),
        rt.logsumexp(m, axis=1, keepdims=True),
    ),
    ("logsumexp_all", rt.log(rt.sum(rt.exp(m))), rt.logsumexp(m, axis=(0, 1))),
    ("logaddexp", rt.log(rt.exp(x) + rt.exp(y)), rt.logaddexp(x, y)),
    ("log_softmax", rt.log(rt.softmax(m, axis=0)), rt.log_softmax(m, axis=0)),
    ("softmax", rt.exp(rt.log_softmax(m)), rt.softmax(m)),
    ("log1mexp", rt.log1p(-rt.exp(x)), rt.log1mexp(x)),
    # 1 - exp(x) becomes -expm1(x) first, then log(-expm1(x)) -> log1mexp(x)
    ("log_one_minus_exp", rt.log(1 - rt.exp(x)), rt.log1mexp(x)),
    ("log_neg_expm1", rt.log(-rt.expm1(x)), rt.log1mexp(x)),
    ("erfc", 1 - rt.erf(x), rt.erfc(x)),
    ("erfc_neg", rt.erf(x) + 1, rt.erfc(-x)),
    ("erfc_neg_neg", 1 + rt.erf(-x), rt.erfc(x)),
    ("xlogy", x * rt.log(y), rt.xlogy(x, y)),
    ("xlogy_commuted", rt.log(y) * x, rt.xlogy(x, y)),
    (
        "xlogy_zero_constant",
        np.array([0.0, 1.0, 2.0]) * rt.log(y),
        rt.xlogy(rt.constant([0.0, 1.0, 2.0]), y),
    ),
    ("logabsdet", rt.log(rt.abs(rt.linalg.det(A))), rt.linalg.slogdet(A)[1]),
    (
        "log_det",
        rt.log(rt.linalg.det(A)),
        rt.where(rt.linalg.slogdet(A)[0] < 0, np.nan, rt.linalg.slogdet(A)[1]),
    ),
]


@pytest.mark.parametrize(("name", "graph", "expected"), STRUCTURE, ids=[c[0] for c in STRUCTURE])
def test_rewrites_reach_the_best_form(name, graph, expected):
    assert rewrite(graph) is expected


def test_log_prod_keeps_axis_and_nan_semantics_in_its_form():
    got = rewrite(rt.log(rt.prod(m, axis=1, keepdims=True)))
    sign = rt.prod(rt.sign(m), axis=1, keepdims=True)
    assert got is rt.where(sign < 0, np.nan, rt.sum(rt.log(rt.abs(m)), axis=1, keepdims=True))
    assert rewrite(rt.log(rt.prod(rt.exp(m), axis=0))) is rt.sum(rt.log(rt.exp(m)), axis=0)


def test_log_erfc_is_idempotent_and_declines_where_erfc_cannot_underflow():
    once = rewrite(rt.log(rt.erfc(x)))
    assert once.owner.op == rt.where
    assert rewrite(once) is once
    for bounded in (rt.minimum(x, 3.0), rt.clip(x, -1.0, 2.0), rt.where(x > 25.0, 25.0, x)):
        graph = rt.log(rt.erfc(bounded))
        assert rewrite(graph) is graph
    graph = rt.log(rt.erfc(rt.minimum(x, 26.0)))  # 26 > 25: erfc may underflow
    assert rewrite(graph) is not graph


# --- guards: types are kept, complex and wrapping arithmetic are left alone ---------------


def test_constants_that_widen_the_type_stop_a_rule():
    xf = rt.vector("xf", dtype="float32")
    assert rewrite(rt.log(1 + xf)) is rt.log1p(xf)  # a weak 1 takes float32
    assert rewrite(1 - rt.sigmoid(xf)) is rt.sigmoid(-xf)
    for graph, matched in (
        (rt.log(rt.constant(1.0) + xf), xf),  # a float64 1: log1p(xf) would be float32
        (rt.log(np.ones((2, 3)) + x), x),  # the ones broadcast x to (2, 3)
        (np.ones((2, 3)) - rt.sigmoid(x), x),
        (np.ones(3) + rt.erf(xf), xf),  # float64 and length 3
    ):
        assert graph.type != matched.type
        assert rewrite(graph) is graph, graph
    assert rewrite(rt.exp(xf) - rt.constant(1.0)) is rt.exp(xf) - rt.constant(1.0)


def test_integer_and_complex_inputs():
    xi = rt.vector("xi", dtype="int64")
    assert rewrite(rt.log(1 + xi)) is rt.log(1 + xi)  # 1 + xi is integer arithmetic
    assert rewrite(rt.exp(xi) - 1) is rt.expm1(xi)  # exp(xi) is already float64
    assert rewrite(rt.log(rt.sum(rt.exp(xi)))) is rt.logsumexp(xi)
    assert rewrite(rt.log(rt.erfc(xi))).dtype == "float64"
    xf = rt.cast(xi, "float64")  # negations happen in float64: -xi could wrap
    assert rewrite(rt.log(rt.sigmoid(xi))) is -rt.softplus(-xf)
    assert rewrite(1 - rt.sigmoid(xi)) is rt.sigmoid(-xf)
    assert rewrite(1 + rt.erf(xi)) is rt.erfc(-xf)
    assert rewrite(rt.log(1 - rt.sigmoid(xi))) is -rt.softplus(xf)
    assert rewrite(rt.log(rt.prod(xi))).dtype == "float64"
    xc, yc = rt.vector("xc", dtype="complex128"), rt.vector("yc", dtype="complex128")
    for graph in (
        rt.exp(xc) - 1,
        rt.log(1 + xc),
        rt.log(1 + rt.exp(xc)),
        rt.log(rt.exp(xc) + rt.exp(yc)),
        rt.log(rt.sum(rt.exp(xc))),
        xc * rt.log(yc),
        rt.log(rt.prod(xc)),
    ):
        assert rewrite(graph) is graph


def test_xlogy_declines_for_nonzero_constants_and_dtype_changes():
    assert rewrite(2.0 * rt.log(y)) is 2.0 * rt.log(y)
    h, n = rt.vector("h", dtype="float16"), rt.vector("n", dtype="int8")
    graph = h * rt.log(n)  # float64, but xlogy(h, n) would be float16
    assert rewrite(graph) is graph


# --- values: NaN, inf and the edges of each domain ---------------------------------------


def _numpy(inputs, outputs, rule_set=rules):
    return rk.function(inputs, outputs, backend="numpy", rules=rule_set)


def test_nan_and_inf_semantics_are_numpys():
    point = np.array([-np.inf, -1.0, -1e-3, 0.0, 1e-3, 2.0, np.inf, np.nan])
    graphs = [
        rt.log(1 + x),
        rt.log(1 - x),
        rt.exp(x) - 1,
        rt.log1p(-rt.exp(x)),
        rt.log(1 - rt.exp(x)),
        rt.log(1 + rt.exp(x)),
        rt.log(rt.sigmoid(x)),
        1 - rt.sigmoid(x),
        1 / (1 + rt.exp(-x)),
        1 - rt.erf(x),
        1 + rt.erf(x),
        rt.log(rt.erfc(x)),
        rt.log(rt.exp(x) + rt.exp(-x)),
        rt.log(rt.sum(rt.exp(x), keepdims=True)),
    ]
    rewritten, written = _numpy([x], graphs)(point), _numpy([x], graphs, None)(point)
    for graph, got, want in zip(graphs, rewritten, written, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-9, equal_nan=True, err_msg=str(graph))


def test_log_det_keeps_nan_for_negative_and_minus_inf_for_singular_determinants():
    stack = rt.tensor("s", shape=(4, 2, 2))
    point = np.array(
        [[[2.0, 0], [0, 3]], [[0, 1], [1, 0]], [[1, 2], [2, 4]], [[np.nan, 0], [0, 1]]]
    )
    graphs = [rt.log(rt.linalg.det(stack)), rt.log(rt.abs(rt.linalg.det(stack)))]
    with np.errstate(all="ignore"):
        want = [np.log(np.linalg.det(point)), np.log(np.abs(np.linalg.det(point)))]
        rewritten = _numpy([stack], graphs)(point)  # the NumPy backend warns in slogdet
    for got, expected in zip(rewritten, want, strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-12, equal_nan=True)
    got = rewritten[0]
    assert np.isnan(got[1]) and got[2] == -np.inf


def test_log_prod_keeps_the_value_of_negative_elements():
    point = np.array([[-1.0, -2.0], [-1.0, 2.0], [0.0, 3.0], [np.nan, 1.0], [-np.inf, -1.0]])
    with np.errstate(all="ignore"):
        want = np.log(np.prod(point, axis=1))
    got = _numpy([m], rt.log(rt.prod(m, axis=1)))(point)
    np.testing.assert_allclose(got, want, rtol=1e-12, equal_nan=True)


def test_xlogy_is_zero_where_x_is_zero():
    got = _numpy([x, y], x * rt.log(y))(
        np.array([0.0, 0.0, 2.0, 0.0]), np.array([0.0, 3.0, 0.0, -1.0])
    )
    np.testing.assert_array_equal(got, [0.0, 0.0, -np.inf, 0.0])


def test_log_erfc_float32_and_float16_switch_early():
    reference = np.log(sp.erfcx(np.array([0.5, 2.9, 3.0, 4.9, 5.0, 8.0, 12.0, 300.0]))) - (
        np.array([0.5, 2.9, 3.0, 4.9, 5.0, 8.0, 12.0, 300.0]) ** 2
    )
    for dtype, rtol in (("float32", 2e-6), ("float16", 2e-3)):
        v = rt.vector("v", dtype=dtype)
        point = np.array([0.5, 2.9, 3.0, 4.9, 5.0, 8.0, 12.0, 300.0], dtype=dtype)
        got = _numpy([v], rt.log(rt.erfc(v)))(point)
        assert got.dtype == dtype
        finite = reference > np.finfo(dtype).min
        np.testing.assert_allclose(got[finite], reference[finite], rtol=rtol)


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_log_erfc_and_its_gradient_across_the_float64_switch(backend):
    """Below 25 log(erfc(x)) itself, above it five terms of the series: exact to rounding on
    both sides, and the gradient -2 / (sqrt(pi) erfcx(x)) too."""
    point = np.concatenate([np.linspace(-3.0, 30.0, 331), np.geomspace(30.0, 1e6, 60)])
    v = rt.vector("v")
    value = rt.log(rt.erfc(v))
    f = rk.function([v], [value, rk.grad(rt.sum(value), v)], backend=backend)
    got, slope = f(point)
    np.testing.assert_allclose(got, np.log(sp.erfcx(point)) - point**2, rtol=1e-15, atol=2e-15)
    np.testing.assert_allclose(slope, -2 / (np.sqrt(np.pi) * sp.erfcx(point)), rtol=1e-13)


# --- motivating inputs: exact after rewriting, on both backends -----------------------------

# (name, graph of v, point, exact value); the graph as written is wrong at the point
MOTIVATING = {
    "log_exp": [
        ("log_one_plus", lambda v: rt.log(1 + v), [1e-20], [1e-20]),
        ("log_one_minus", lambda v: rt.log(1 - v), [1e-20], [-1e-20]),
        ("exp_minus_one", lambda v: rt.exp(v) - 1, [1e-20, -1e-30], [1e-20, -1e-30]),
        ("one_minus_exp", lambda v: 1 - rt.exp(v), [1e-20], [-1e-20]),
        ("log_one_minus_exp", lambda v: rt.log(1 - rt.exp(v)), [-1e-20], [np.log(1e-20)]),
        ("log1p_neg_exp", lambda v: rt.log1p(-rt.exp(v)), [-1e-20], [np.log(1e-20)]),
        ("log_neg_expm1", lambda v: rt.log(-rt.expm1(v)), [-50.0], [-np.exp(-50.0)]),
    ],
    "logistic": [
        (
            "log_one_plus_exp",
            lambda v: rt.log(1 + rt.exp(v)),
            [1000.0, -40.0],
            [1000.0, np.exp(-40.0)],
        ),
        ("log1p_exp", lambda v: rt.log1p(rt.exp(v)), [1000.0], [1000.0]),
        ("log_sigmoid", lambda v: rt.log(rt.sigmoid(v)), [-800.0, 40.0], [-800.0, -np.exp(-40.0)]),
        (
            "log_one_minus_sigmoid",
            lambda v: rt.log(1 - rt.sigmoid(v)),
            [40.0, 800.0],
            [-40.0, -800.0],
        ),
        ("log1p_neg_sigmoid", lambda v: rt.log1p(-rt.sigmoid(v)), [800.0], [-800.0]),
        ("one_minus_sigmoid", lambda v: 1 - rt.sigmoid(v), [40.0], [sp.expit(-40.0)]),
    ],
    "reductions": [
        (
            "logsumexp",
            lambda v: rt.log(rt.sum(rt.exp(v), keepdims=True)),
            [1000.0, 1000.0],
            [1000.0 + np.log(2.0)],
        ),
        (
            "logaddexp",
            lambda v: rt.log(rt.exp(v) + rt.exp(v + 1)),
            [1000.0],
            [1001.0 + np.log1p(np.exp(-1.0))],
        ),
        ("log_softmax", lambda v: rt.log(rt.softmax(v)), [1000.0, 0.0], [0.0, -1000.0]),
        (
            "log_prod",
            lambda v: rt.log(rt.prod(v, keepdims=True)),
            [1e200, -1e200, -1e200],
            [3 * np.log(1e200)],
        ),
        ("xlogy", lambda v: v * rt.log(v), [0.0, 2.0], [0.0, 2.0 * np.log(2.0)]),
    ],
    "erf": [
        ("one_minus_erf", lambda v: 1 - rt.erf(v), [10.0], [sp.erfc(10.0)]),
        ("one_plus_erf", lambda v: 1 + rt.erf(v), [-10.0], [sp.erfc(10.0)]),
        (
            "log_erfc",
            lambda v: rt.log(rt.erfc(v)),
            [30.0, 1e5],
            np.log(sp.erfcx([30.0, 1e5])) - np.array([900.0, 1e10]),
        ),
        (
            "log_one_plus_erf",
            lambda v: rt.log(1 + rt.erf(v)),
            [-30.0],
            [np.log(sp.erfcx(30.0)) - 900.0],
        ),
    ],
}


def _family(cases):
    inputs = [rt.vector(name) for name, *_ in cases]
    outputs = [build(v) for v, (_, build, *_) in zip(inputs, cases, strict=True)]
    points = [np.asarray(point, dtype=np.float64) for _, _, point, _ in cases]
    return inputs, outputs, points


@pytest.mark.parametrize("family", list(MOTIVATING))
def test_motivating_inputs_are_exact_on_both_backends(family):
    cases = MOTIVATING[family]
    inputs, outputs, points = _family(cases)
    written = _numpy(inputs, outputs, None)(*points)
    for backend in ("numpy", "jax"):
        f = rk.function(inputs, outputs, backend=backend, rules=rules)
        for (name, _, _, exact), got, naive in zip(cases, f(*points), written, strict=True):
            np.testing.assert_allclose(
                np.asarray(got), exact, rtol=1e-12, atol=0, err_msg=f"{name} {backend}"
            )
            assert not np.allclose(naive, exact, rtol=1e-6, atol=0), f"{name}: already exact"


@pytest.mark.parametrize("family", list(MOTIVATING))
def test_the_default_pipeline_keeps_the_motivating_inputs_exact(family):
    """The other phases act on these graphs too (e.g. canonicalize's double negation): the
    joint fixpoint must still be the stable form."""
    cases = MOTIVATING[family]
    inputs, outputs, points = _family(cases)
    got = _numpy(inputs, outputs, "default")(*points)
    for (name, _, _, exact), value in zip(cases, got, strict=True):
        np.testing.assert_allclose(value, exact, rtol=1e-12, atol=0, err_msg=name)


def test_motivating_determinants_on_both_backends():
    point = 1e200 * np.eye(3)
    outputs = [rt.log(rt.linalg.det(A)), rt.log(rt.abs(rt.linalg.det(-A)))]
    with np.errstate(all="ignore"):
        assert np.isinf(_numpy([A], outputs, None)(point)).all()
    for backend in ("numpy", "jax"):
        got = rk.function([A], outputs, backend=backend, rules=rules)(point)
        np.testing.assert_allclose(np.asarray(got), 3 * np.log(1e200), rtol=1e-12)


def test_softmax_of_exp_log_softmax_matches_on_both_backends():
    point = np.array([[1000.0, 0.0, -700.0], [1.0, 2.0, 3.0]])
    graph = rt.exp(rt.log_softmax(m))
    for backend in ("numpy", "jax"):
        got = rk.function([m], graph, backend=backend, rules=rules)(point)
        np.testing.assert_allclose(np.asarray(got), sp.softmax(point, axis=1), rtol=1e-14)


def test_gradients_of_the_rewritten_forms_are_finite_on_both_backends():
    point = np.array([-800.0, -3.0, 0.5, 9.99, 10.0, 10.01, 30.0, 1e5])
    costs = [rt.sum(1 / (1 + rt.exp(-x))), rt.sum(rt.log(rt.erfc(x)))]
    grads = [rk.grad(rewrite(cost), x, stabilize=False) for cost in costs]
    exact = [sp.expit(point) * sp.expit(-point), -2 / (np.sqrt(np.pi) * sp.erfcx(point))]
    raw = [rk.grad(cost, x, stabilize=False) for cost in costs]
    with np.errstate(all="ignore"):
        for g in _numpy([x], raw, None)(point):  # the chain rule as written: inf / inf, 0 / 0
            assert not np.isfinite(g).all()
    for backend in ("numpy", "jax"):
        got = rk.function([x], grads, backend=backend, rules=None)(point)
        for g, e in zip(got, exact, strict=True):
            np.testing.assert_allclose(np.asarray(g), e, rtol=1e-12, atol=1e-300)


# --- property: rewriting never changes a value ---------------------------------------------

u, w = rt.vector("u", shape=(4,)), rt.vector("w", shape=(4,))

UNARY = [
    rt.tanh,
    lambda v: rt.log(1 + rt.sigmoid(v)),
    lambda v: rt.log(1 - rt.sigmoid(v)),
    lambda v: rt.exp(rt.tanh(v)) - 1,
    lambda v: 1 - rt.exp(rt.tanh(v)),
    lambda v: rt.log(rt.sigmoid(v)),
    lambda v: 1 - rt.sigmoid(v),
    lambda v: 1 / (1 + rt.exp(-rt.tanh(v))),
    lambda v: rt.log(1 + rt.exp(rt.tanh(v))),
    lambda v: rt.log(1 - rt.exp(-rt.exp(rt.tanh(v)))),
    lambda v: 1 - rt.erf(v),
    lambda v: 1 + rt.erf(v),
    lambda v: rt.log(rt.erfc(rt.tanh(v) * 4)),
    lambda v: rt.log(rt.softmax(v)),
    lambda v: rt.exp(rt.log_softmax(v)),
]
BINARY = [
    rt.add,
    rt.multiply,
    lambda p, q: rt.log(rt.exp(rt.tanh(p)) + rt.exp(q)),
    lambda p, q: p * rt.log(rt.abs(q) + 0.5),
    lambda p, q: rt.log(rt.sum(rt.exp(rt.outer(rt.tanh(p), rt.tanh(q))), axis=1)),
    lambda p, q: rt.log(rt.prod(rt.outer(rt.sigmoid(p), q), axis=0)),
]


def _graphs():
    def extend(children):
        unary = st.tuples(st.sampled_from(UNARY), children).map(lambda t: t[0](t[1]))
        binary = st.tuples(st.sampled_from(BINARY), children, children).map(
            lambda t: t[0](t[1], t[2])
        )
        return st.one_of(unary, binary)

    inner = st.recursive(st.sampled_from([u, w]), extend, max_leaves=6)
    return st.tuples(st.sampled_from(UNARY), inner).map(lambda t: t[0](t[1]))  # an op on top


VALUES = hnp.arrays(np.float64, (4,), elements=st.floats(-3, 3))


@settings(max_examples=25, deadline=None)
@given(_graphs(), VALUES, VALUES)
def test_rewriting_random_graphs_keeps_their_values(graph, a, b):
    rewritten = rewrite(graph)
    f = rk.function([u, w], [graph, rewritten], backend="numpy", rules=None)
    before, after = f(a, b)
    # Where the plain graph over- or underflows to an infinity, the rewritten one may be
    # finite: that is the stabilization (log(prod(x)) of tiny x is sum(log(x)), not -inf).
    # Everywhere else the two agree.
    stabilized = np.isinf(before) & np.isfinite(after)
    np.testing.assert_allclose(
        after[~stabilized], before[~stabilized], rtol=1e-7, atol=1e-9, equal_nan=True
    )


def test_the_log_of_an_underflowing_product_is_the_sum_of_logs():
    # found by the random-graph property: the plain product underflows to 0, its log to -inf
    v = rt.vector("v", shape=(4,))
    tiny = np.full(4, 2.2250738585072014e-308)
    graph = rt.log(rt.prod(rt.outer(rt.sigmoid(v), v), axis=0))
    f = rk.function([v], [graph, rewrite(graph)], backend="numpy", rules=None)
    before, after = f(tiny)
    assert np.all(before == -np.inf)
    np.testing.assert_allclose(after, 4 * np.log(0.5 * tiny), rtol=1e-14)
