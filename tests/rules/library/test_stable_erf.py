"""The error-function forms PyTensor stabilizes: erf(x) - 1, 1 - erfc(x), erfc(-x) - 1 and
exp(-x**2) / erfc(x) (the derivative of log(erfc(x))). Each reaches its stable form under
the default pipeline, is exact at the point where the naive form breaks on both backends,
and keeps the values of the naive form where that one is accurate."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.special as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.ir import toposort

x, y = rt.vector("x"), rt.vector("y")
xf = rt.vector("xf", dtype="float32")
n = rt.vector("n", dtype="int64")
BACKENDS = ["numpy", "jax"]
C = -2 / math.sqrt(math.pi)  # the factor in d/dx log(erfc(x)) = C exp(-x**2) / erfc(x)

STRUCTURE = [
    ("erf_minus_one", rt.erf(x) - 1, -rt.erfc(x)),
    ("minus_one_plus_erf", -1 + rt.erf(x), -rt.erfc(x)),
    ("one_minus_erfc", 1 - rt.erfc(x), rt.erf(x)),
    ("one_plus_neg_erfc", 1 + -rt.erfc(x), rt.erf(x)),
    ("erfc_neg_minus_one", rt.erfc(-x) - 1, rt.erf(x)),
    ("minus_one_plus_erfc_neg", -1 + rt.erfc(-x), rt.erf(x)),
    ("integer_erf_minus_one", rt.erf(n) - 1, -rt.erfc(n)),
    ("scaled_exp_over_erfc", C * rt.exp(-(x**2)) / rt.erfc(x), C / rt.erfcx(x)),
    ("exp_scaled_over_erfc", rt.exp(-(x**2)) * C / rt.erfc(x), C / rt.erfcx(x)),
    ("scale_times_quotient", C * (rt.exp(-(x**2)) / rt.erfc(x)), C / rt.erfcx(x)),
    ("quotient_times_scale", rt.exp(-(x**2)) / rt.erfc(x) * C, C / rt.erfcx(x)),
    ("exp_over_erfc", rt.exp(-(x**2)) / rt.erfc(x), 1 / rt.erfcx(x)),
    ("exp_of_neg_x_times_x", rt.exp(-(x * x)) / rt.erfc(x), 1 / rt.erfcx(x)),
    ("exp_of_neg_square", rt.exp(-rt.square(x)) / rt.erfc(x), 1 / rt.erfcx(x)),
    (
        "exp_times_reciprocal",
        rt.exp(-(x**2)) * rt.reciprocal(rt.erfc(x)),
        rt.reciprocal(rt.erfcx(x)),
    ),
    ("in_a_product", (y / rt.erfc(x)) * C * rt.exp(-(x**2)), (y / rt.erfcx(x)) * C),
    ("in_the_denominator", y * rt.exp(-(x**2)) / (2.0 * rt.erfc(x)), y / (2.0 * rt.erfcx(x))),
    ("float32", C * rt.exp(-(xf**2)) / rt.erfc(xf), C / rt.erfcx(xf)),
]


@pytest.mark.parametrize(("name", "graph", "expected"), STRUCTURE, ids=[c[0] for c in STRUCTURE])
def test_reaches_the_stable_form(name, graph, expected):
    assert rk.rewrite(graph) is expected
    assert rk.rewrite(graph, "stabilize") is expected  # what rk.grad runs on a cost


def _error_functions(graph):
    return sorted(
        type(node.op).__name__
        for node in toposort(graph)
        if type(node.op).__name__ in ("Erf", "Erfc", "Erfcx")
    )


DECLINED = [
    ("other_argument", rt.exp(-(x**2)) / rt.erfc(y)),
    ("not_a_gaussian", rt.exp(-x) / rt.erfc(x)),
    ("cube", rt.exp(-(x**3)) / rt.erfc(x)),
    ("integer_square", rt.exp(-(n**2)) / rt.erfc(n)),  # integer arithmetic can wrap
    ("integer_negation", rt.erfc(-n) - 1),
    ("widening_one_minus", np.ones(3) - rt.erfc(xf)),  # float32[?] to float64[3]
    ("widening_minus_one", rt.erf(xf) - np.ones(3)),
]


@pytest.mark.parametrize(("name", "graph"), DECLINED, ids=[c[0] for c in DECLINED])
def test_declines_where_the_form_or_the_type_does_not_fit(name, graph):
    rewritten = rk.rewrite(graph)
    assert rewritten.type == graph.type
    assert _error_functions(rewritten) == _error_functions(graph)


# (name, graph of v, points where the naive form breaks, the exact values there)
EXACT = [
    ("erf_minus_one", lambda v: rt.erf(v) - 1, [10.0, 6.0], -sp.erfc([10.0, 6.0])),
    ("one_minus_erfc", lambda v: 1 - rt.erfc(v), [1e-20, 1e-17], sp.erf([1e-20, 1e-17])),
    ("erfc_neg_minus_one", lambda v: rt.erfc(-v) - 1, [1e-20, 1e-17], sp.erf([1e-20, 1e-17])),
    (
        "scaled_exp_over_erfc",
        lambda v: C * rt.exp(-(v**2)) / rt.erfc(v),
        [27.0, 30.0, 50.0, 100.0],
        C / sp.erfcx([27.0, 30.0, 50.0, 100.0]),
    ),
    (
        "exp_over_erfc",
        lambda v: rt.exp(-(v * v)) / rt.erfc(v),
        [27.0, 100.0, 1e4],
        1 / sp.erfcx([27.0, 100.0, 1e4]),
    ),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("name", "build", "at", "exact"), EXACT, ids=[c[0] for c in EXACT])
def test_exact_where_the_naive_form_breaks(name, build, at, exact, backend):
    graph, point = build(x), np.array(at)
    naive = rk.function([x], graph, backend="numpy", rules="fast_compile")(point)
    # 0 where the exact value is tiny, or nan (0 / 0): wrong at every point
    assert not np.isclose(naive, exact, rtol=1e-6, atol=0).any()
    out = rk.function([x], graph, backend=backend)(point)
    np.testing.assert_allclose(out, exact, rtol=1e-12, atol=0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_exp_over_erfc_in_float32_past_its_underflow(backend):
    graph = C * rt.exp(-(xf**2)) / rt.erfc(xf)
    point = np.array([12.0, 20.0, 100.0], dtype=np.float32)
    naive = rk.function([xf], graph, backend="numpy", rules="fast_compile")(point)
    assert np.isnan(naive).all()  # exp(-144) and erfc(12) are 0 in float32
    out = rk.function([xf], graph, backend=backend)(point)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, C / sp.erfcx(point.astype(np.float64)), rtol=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradient_of_exp_over_erfc_is_finite_past_erfc_underflow(backend):
    # rk.grad stabilizes the cost first: the derivative of 1 / erfcx(x), -erfcx'(x) / erfcx(x)**2
    point = np.array([1.0, 27.0, 30.0, 100.0])
    grad = rk.grad(rt.sum(rt.exp(-(x**2)) / rt.erfc(x)), x)
    out = rk.function([x], grad, backend=backend)(point)
    value = sp.erfcx(point)
    exact = -(2 * point * value - 2 / math.sqrt(math.pi)) / value**2
    np.testing.assert_allclose(out, exact, rtol=1e-9)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(-4.0, 25.0, allow_subnormal=False), min_size=1, max_size=4))
def test_rewritten_and_unrewritten_agree_where_erfc_does_not_underflow(values):
    xv = np.asarray(values)
    yv = np.linspace(-1.0, 1.0, len(xv))
    graphs = [
        rt.erf(x) - 1,
        -1 + rt.erf(x),
        1 - rt.erfc(x),
        rt.erfc(-x) - 1,
        -1 + rt.erfc(-x),
        C * rt.exp(-(x**2)) / rt.erfc(x),
        rt.exp(-(x * x)) / rt.erfc(x),
        (y / rt.erfc(x)) * C * rt.exp(-rt.square(x)),
    ]
    plain = rk.function([x, y], graphs, backend="numpy", rules="fast_compile")(xv, yv)
    for backend in BACKENDS:
        out = rk.function([x, y], graphs, backend=backend)(xv, yv)
        for graph, got, want in zip(graphs, out, plain, strict=True):
            # atol: the naive differences of erf and erfc are exact only to rounding of 1
            np.testing.assert_allclose(
                got, want, rtol=1e-9, atol=2e-16, err_msg=f"{graph} on {backend}"
            )
