"""The logistic forms PyTensor stabilizes, the where-sink and sqrt(x)**2: each reaches its
stable form under the default pipeline and is exact at the point where the naive form
breaks, on both backends."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import rewritekit as rk
import rewritekit.tensor as rt

x, y = rt.vector("x"), rt.vector("y")
m = rt.matrix("m")
xf = rt.vector("xf", dtype="float32")
BACKENDS = ["numpy", "jax"]
s = rt.sigmoid(x)

STRUCTURE = [
    ("exp_over_one_plus_exp", rt.exp(x) / (1 + rt.exp(x)), rt.sigmoid(x)),
    ("exp_over_exp_plus_one", rt.exp(x) / (rt.exp(x) + 1), rt.sigmoid(x)),
    ("ones_like_logistic", rt.ones_like(x) / (1 + rt.exp(-x)), rt.sigmoid(x)),
    ("sigmoid_neg_times_exp", rt.sigmoid(-x) * rt.exp(x), rt.sigmoid(x)),
    ("exp_neg_times_sigmoid", rt.exp(-x) * rt.sigmoid(x), rt.sigmoid(-x)),
    ("in_a_product", (y * rt.sigmoid(x)) * rt.exp(-x), y * rt.sigmoid(-x)),
    ("logit_of_sigmoid", rt.log(s / (1 - s)), x),
    ("logit_of_sigmoid_negated", rt.log((1 - s) / s), -x),
    ("mixed_precision", rt.constant(np.float64(1.0)) - rt.sigmoid(xf), None),
    ("log_one_minus_reshaped", rt.log(1 - rt.reshape(rt.sigmoid(m), (-1,))), None),
    ("log_one_minus_flattened", rt.log(1 - rt.flatten(rt.sigmoid(m))), None),
    ("log_sigmoid_transposed", rt.log(rt.transpose(rt.sigmoid(m))), None),
    ("square_sqrt", rt.square(rt.sqrt(x)), rt.where(x < 0, np.nan, x)),
    ("sqrt_times_sqrt", rt.sqrt(x) * rt.sqrt(x), rt.where(x < 0, np.nan, x)),
]
EXPECTED_UNDER_LAYOUT = {
    "mixed_precision": rt.cast(rt.sigmoid(-xf), "float64"),
    "log_one_minus_reshaped": rt.reshape(-rt.softplus(m), (-1,)),
    "log_one_minus_flattened": rt.flatten(-rt.softplus(m)),
    "log_sigmoid_transposed": rt.transpose(-rt.softplus(-m)),
}


@pytest.mark.parametrize(("name", "graph", "expected"), STRUCTURE, ids=[c[0] for c in STRUCTURE])
def test_reaches_the_stable_form(name, graph, expected):
    expected = EXPECTED_UNDER_LAYOUT[name] if expected is None else expected
    assert rk.rewrite(graph) is rk.rewrite(expected)


def _exact(name):
    return {
        "exp_over_one_plus_exp": (rt.exp(x) / (1 + rt.exp(x)), [800.0], [1.0]),
        "sigmoid_neg_times_exp": (rt.sigmoid(-x) * rt.exp(x), [800.0], [1.0]),
        "exp_neg_times_sigmoid": (rt.exp(-x) * rt.sigmoid(x), [-800.0], [1.0]),
        "logit_of_sigmoid": (rt.log(s / (1 - s)), [40.0], [40.0]),
        "square_sqrt": (rt.square(rt.sqrt(x)), [3.0, -1.0], [3.0, np.nan]),
    }[name]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "name",
    [
        "exp_over_one_plus_exp",
        "sigmoid_neg_times_exp",
        "exp_neg_times_sigmoid",
        "logit_of_sigmoid",
        "square_sqrt",
    ],
)
def test_exact_where_the_naive_form_breaks(name, backend):
    graph, at, exact = _exact(name)
    naive = rk.function([x], graph, backend="numpy", rules="fast_compile")(np.array(at))
    assert not np.array_equal(naive, exact, equal_nan=True)  # the naive form breaks there
    out = rk.function([x], graph, backend=backend)(np.array(at))
    np.testing.assert_array_equal(out, exact)


@pytest.mark.parametrize("backend", BACKENDS)
def test_one_minus_a_float32_sigmoid_in_float64(backend):
    f = rk.function([xf], rt.constant(np.float64(1.0)) - rt.sigmoid(xf), backend=backend)
    out = f(np.array([20.0], dtype=np.float32))
    assert out.dtype == np.float64
    np.testing.assert_allclose(out, sp.expit(-20.0), rtol=1e-6)  # naive: exactly 0


@pytest.mark.parametrize("backend", BACKENDS)
def test_log_one_minus_sigmoid_through_a_reshape(backend):
    f = rk.function([m], rt.log(1 - rt.reshape(rt.sigmoid(m), (-1,))), backend=backend)
    out = f(np.array([[40.0, 800.0], [0.0, -3.0]]))
    np.testing.assert_allclose(out, -np.logaddexp(0, [40.0, 800.0, 0.0, -3.0]), rtol=1e-14)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_zero_branch_of_a_where_stays_zero_in_a_product(backend):
    graph = rt.where(x < 0, 0.0, 1.0) * rt.log(x)  # 0 * nan at x = -1 in the naive form
    out = rk.function([x], graph, backend=backend)(np.array([-1.0, 2.0]))
    np.testing.assert_array_equal(out, [0.0, np.log(2.0)])
    quotient = rt.where(x > 1, x, 0.0) / (x - 1)  # 0 / 0 at x = 1
    out = rk.function([x], quotient, backend=backend)(np.array([1.0, 3.0]))
    np.testing.assert_array_equal(out, [0.0, 1.5])


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(-10.0, 10.0, allow_subnormal=False), min_size=1, max_size=4))
def test_rewritten_and_unrewritten_agree_on_moderate_inputs(values):
    xv = np.asarray(values)
    yv = np.linspace(-1.0, 1.0, len(xv))
    graph = (
        rt.exp(x) / (1 + rt.exp(x))
        + (y * rt.sigmoid(x)) * rt.exp(-x)
        + rt.log(1 - rt.reshape(rt.sigmoid(rt.stack([x, y])), (-1,)))[: x.shape[0]]
        + rt.square(rt.sqrt(rt.abs(x)))
        + rt.where(x < 0, 0.0, y) * rt.exp(x)
    )
    plain = rk.function([x, y], graph, backend="numpy", rules="fast_compile")(xv, yv)
    for backend in BACKENDS:
        out = rk.function([x, y], graph, backend=backend)(xv, yv)
        np.testing.assert_allclose(out, plain, rtol=1e-9, atol=1e-12)


def test_a_deep_chain_of_products_rewrites_without_recursion():
    """The products of a 600-step chain are walked iteratively (RecursionError before)."""
    x = rt.vector("x")
    y = x
    for k in range(600):
        y = rt.sigmoid(y * 0.5 + (k % 3)) * y
    rewritten = rk.rewrite(rk.grad(rt.sum(y), x), "default")
    point = np.array([0.3, -0.2])
    plain = rk.function([x], rk.grad(rt.sum(y), x), backend="numpy", rules=None)(point)
    ours = rk.function([x], rewritten, backend="numpy", rules=None)(point)
    np.testing.assert_allclose(ours, plain, rtol=1e-9, atol=1e-300)
