"""The special-function stabilizations: exact where the naive forms underflow or overflow,
on both backends, with their gradients."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from scipy import special

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.rules import as_ruleset
from rewritekit.rules.library import stable_special

X = rt.vector("x")
A = rt.vector("a")

# name -> (naive graph, reference on the points below)
CASES = {
    "log_ndtr": (rt.log(rt.ndtr(X)), lambda a, x: special.log_ndtr(x)),
    "log_one_minus_ndtr": (rt.log(1 - rt.ndtr(X)), lambda a, x: special.log_ndtr(-x)),
    "erfcx": (rt.exp(rt.square(X)) * rt.erfc(X), lambda a, x: special.erfcx(x)),
    "log_i0": (rt.log(rt.i0(X)), lambda a, x: np.log(special.i0e(x)) + np.abs(x)),
    "log_i1": (
        rt.log(rt.i1(rt.abs(X) + 0.5)),
        lambda a, x: np.log(special.i1e(np.abs(x) + 0.5)) + np.abs(x) + 0.5,
    ),
}
POINTS = np.array([-40.0, -8.0, -1.0, 0.0, 0.5, 3.0, 26.0, 27.0, 40.0, 800.0])

# log(gammaincc(a, x)): reference values from mpmath (50 digits), for (a, x) pairs on both
# sides of the switch and past gammaincc's underflow (x = 800, 1000, 5000).
GAMMAINCC = [
    (0.5, 0.1, -0.4235463234759657),
    (2.0, 3.0, -1.6137056388801094),
    (10.0, 50.0, -27.4002201899505),
    (30.0, 3.0, -4.277047721426897e-20),
    (100.0, 150.0, -12.036407454461646),
    (0.5, 1000.0, -1004.0267419589519),
    (2.0, 800.0, -793.3141390529316),
    (3.5, 5000.0, -4979.907490598825),
]


@functools.cache
def compiled(backend: str):
    outs = [graph for graph, _ in CASES.values()]
    return rk.function([X], outs, backend=backend)


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_values_are_exact_where_the_naive_forms_fail(backend):
    got = compiled(backend)(POINTS)
    for (name, (_, ref)), value in zip(CASES.items(), got, strict=True):
        expected = ref(None, POINTS)
        finite = np.isfinite(expected)
        np.testing.assert_allclose(
            np.asarray(value)[finite], expected[finite], rtol=1e-13, err_msg=name
        )
        assert np.array_equal(np.isinf(np.asarray(value)), np.isinf(expected)), name


def test_each_rule_fires_on_its_naive_form():
    assert rk.rewrite(rt.log(rt.ndtr(X)), "default") is rt.log_ndtr(X)
    assert rk.rewrite(rt.log(1 - rt.ndtr(X)), "default") is rt.log_ndtr(-X)
    assert rk.rewrite(rt.exp(X**2) * rt.erfc(X), "default") is rt.erfcx(X)
    c = rt.vector("c")  # other factors are kept
    assert rk.rewrite(c * rt.exp(rt.square(X)) * rt.erfc(X), "default") is c * rt.erfcx(X)
    _, trace = rk.rewrite(rt.log(rt.gammaincc(A, X)), "default", trace=True)
    # once, and not again on its own output
    assert trace.fired()["stabilize.log_gammaincc_continued_fraction"] == 1


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_log_gammaincc_in_the_upper_tail(backend):
    a, x, expected = (np.array(c) for c in zip(*GAMMAINCC, strict=True))
    f = rk.function([A, X], rt.log(rt.gammaincc(A, X)), backend=backend)
    np.testing.assert_allclose(f(a, x), expected, rtol=1e-13)


def test_log_gammaincc_gradient_matches_finite_differences_on_both_sides():
    a, x = np.array([0.5, 2.0, 10.0, 3.0]), np.array([0.3, 800.0, 50.0, 35.0])
    cost = rt.sum(rt.log(rt.gammaincc(A, X)))
    grads = rk.function([A, X], rk.grad(cost, [A, X]), backend="numpy")(a, x)
    f = rk.function([A, X], rt.log(rt.gammaincc(A, X)), backend="numpy")
    h = 1e-6
    for i, value in enumerate((a, x)):
        up, down = [a, x], [a, x]
        up[i], down[i] = value * (1 + h), value * (1 - h)
        numeric = (f(*up) - f(*down)) / (2 * h * value)
        np.testing.assert_allclose(grads[i], numeric, rtol=1e-6)


def test_gradients_of_the_stable_forms_are_finite_where_the_naive_ones_are_not():
    x = np.array([-40.0, 40.0])
    for graph in (rt.log(rt.ndtr(X)), rt.log(1 - rt.ndtr(X))):
        (g,) = rk.function([X], [rk.grad(rt.sum(graph), X)], backend="jax")(x)
        assert np.all(np.isfinite(g))
    # d/dx log_ndtr(x) -> -x as x -> -inf
    (g,) = rk.function([X], [rk.grad(rt.sum(rt.log(rt.ndtr(X))), X)], backend="numpy")(x[:1])
    np.testing.assert_allclose(g, [40.02496884720726], rtol=1e-12)  # mpmath


def test_the_rules_are_in_the_default_pipeline_stabilize_phase():
    names = {r.qualname for r in as_ruleset("default").rules}
    assert {f"stabilize.{r.name}" for r in stable_special.rules} <= names
