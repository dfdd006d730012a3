"""The special and Bessel functions added for PyMC and NumPyro (``gamma erfcinv gammaincinv
betaincinv i0 i1 i0e i1e ive kv``): the JAX backend's own forms against SciPy over wide
grids and at the edges of the domains (the op records draw from small domains, and the
NumPy backend is SciPy), and the derivatives that the op records leave to this file (in x,
against finite differences; in the orders and shape parameters, NaN)."""

import numpy as np
import pytest
import scipy.special as sp

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.testing import verify_grad


def jax_values(fn, *arrays):
    inputs = [rt.tensor(f"x{i}", shape=(None,) * a.ndim) for i, a in enumerate(arrays)]
    return np.asarray(rk.function(inputs, fn(*inputs), backend="jax")(*arrays))


def assert_matches(got, expected, rtol):
    """The same NaNs and infinities as SciPy, and the finite values to ``rtol``."""
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
    np.testing.assert_array_equal(got[np.isinf(expected)], expected[np.isinf(expected)])
    ok = np.isfinite(expected) & (np.abs(expected) > 1e-300)
    assert np.max(np.abs(got[ok] / expected[ok] - 1)) < rtol


def with_edges(arrays, edges):
    return [
        np.concatenate([a, np.asarray(e, dtype=float)]) for a, e in zip(arrays, edges, strict=True)
    ]


ORDERS = np.concatenate([np.linspace(0, 3, 25), [4.5, 8.4999, 8.5, 12.3, 30, 75.5, 150]])
POINTS = np.concatenate([[1e-300, 1e-100, 1e-12], np.logspace(-8, 4, 60), [19.99, 20.01]])


def test_ive_matches_scipy():
    v, x = (a.ravel() for a in np.meshgrid(ORDERS, POINTS))
    fractional = v != np.round(v)
    # negative orders; negative x (integer orders only, I_n(-x) = (-1)**n I_n(x))
    v = np.concatenate([v, -v[fractional], np.round(v)])
    x = np.concatenate([x, x[fractional], -x])
    edges = [
        [0, 1, -1, -0.5, 2, 0.5, 0.5, np.inf, 3, np.nan],
        [0, 0, 0, 0, -1, -1, np.inf, 1, -np.inf, 1],
    ]
    v, x = with_edges([v, x], edges)
    with np.errstate(all="ignore"):
        expected = sp.ive(v, x)
        largest = np.maximum(np.abs(expected), sp.ive(np.abs(v), np.abs(x)))
    got = jax_values(rt.ive, v, x)
    # where I_{-v} overflows SciPy gives NaN, the JAX form +-inf (or a huge finite value)
    overflow = np.isnan(expected) & ~np.isnan(got)
    assert np.all((np.abs(got[overflow]) > 1e300) & (v[overflow] < 0))
    assert not (np.isnan(got) & ~np.isnan(expected)).any()
    # relative to I_|v|: I_{-v} has zeros, where no method keeps a relative accuracy
    ok = np.isfinite(expected) & (largest > 1e-300)
    assert np.max(np.abs(got - expected)[ok] / largest[ok]) < 1e-12


def test_kv_matches_scipy():
    v, x = (a.ravel() for a in np.meshgrid(np.concatenate([-ORDERS, ORDERS]), POINTS))
    v, x = with_edges([v, x], [[0, 2.5, 0.5, 0.5, np.inf, np.nan], [0, -0.0, -1, np.inf, 1, 1]])
    with np.errstate(all="ignore"):
        expected = sp.kv(v, x)
    got = jax_values(rt.kv, v, x)
    # SciPy overflows to inf a little early (e.g. kv(2, 1.3e-154) = 1.19e308)
    expected = np.where(np.isinf(expected) & (got > 1e300) & (x > 0), got, expected)
    assert_matches(got, expected, 1e-12)


def test_gammaincinv_matches_scipy_in_both_tails():
    tails = [
        np.logspace(-250, -1, 40),
        np.linspace(0.05, 0.95, 19),
        -np.expm1(-np.logspace(-1, 1.4, 12)),
    ]
    a, y = (g.ravel() for g in np.meshgrid(np.logspace(-2, 3, 24), np.concatenate(tails)))
    a, y = with_edges([a, y], [[1, 1, 1, 0, -1, np.inf, 2], [0, 1, 1.5, 0.5, 0.5, 0.5, np.nan]])
    assert_matches(jax_values(rt.gammaincinv, a, y), sp.gammaincinv(a, y), 1e-11)


def test_betaincinv_matches_scipy_in_both_tails():
    """To 1e-10 for a, b >= 0.1 (JAX's betainc is good to about 1e-12, which the inverse
    amplifies by up to 1 / min(a, b)); the smaller of x and 1 - x keeps its accuracy."""
    shapes = np.logspace(-1, 2.5, 12)
    lower = np.concatenate([np.logspace(-12, -1, 12), np.linspace(0.1, 0.5, 5)])
    probabilities = np.concatenate([lower, 1 - lower])
    a, b, y = (g.ravel() for g in np.meshgrid(shapes, shapes, probabilities))
    edges = [[1, 1, 0, 2, 2], [2, 2, 1, np.inf, 3], [0, 1, 0.5, 0.5, np.nan]]
    a, b, y = with_edges([a, b, y], edges)
    expected = sp.betaincinv(a, b, y)
    got = jax_values(rt.betaincinv, a, b, y)
    assert_matches(got, expected, 1e-10)
    upper = expected > 0.5
    assert_matches(1 - got[upper], 1 - expected[upper], 1e-10)


def test_gamma_and_erfcinv_match_scipy():
    x = np.concatenate(
        [np.linspace(-30.5, 171.5, 500), -np.arange(5.0), [0.0, -0.0, np.inf, -np.inf, np.nan]]
    )
    y = np.concatenate([np.logspace(-300, 0, 100), np.linspace(0, 2, 101), [-1.0, 3.0, np.nan]])
    inputs = rt.vector("x"), rt.vector("y")
    f = rk.function(inputs, [rt.gamma(inputs[0]), rt.erfcinv(inputs[1])], backend="jax")
    gamma, erfcinv = (np.asarray(v) for v in f(x, y))
    with np.errstate(all="ignore"):
        assert_matches(gamma, sp.gamma(x), 1e-12)
    assert_matches(erfcinv, sp.erfcinv(y), 1e-14)
    assert np.signbit(gamma[x == -0.0][-1])  # gamma(-0.0) = -inf


# --- derivatives ---------------------------------------------------------------------------

ORDER = np.array([0.0, 0.3, -1.7, 2.0, 5.5])


@pytest.mark.parametrize(
    ("fn", "point"),
    [
        (rt.gamma, [-2.5, -0.3, 0.7, 4.2]),
        (rt.erfcinv, [0.01, 0.7, 1.3, 1.99]),
        (lambda y: rt.gammaincinv(np.array([0.3, 1.0, 2.5, 40.0]), y), [0.1, 0.5, 0.9, 0.3]),
        (
            lambda y: rt.betaincinv(np.array([0.5, 2.0, 8.0]), np.array([3.0, 0.7, 8.0]), y),
            [0.2, 0.6, 0.95],
        ),
        (lambda x: rt.ive(ORDER, x), [0.5, 0.2, 3.0, -1.5, 30.0]),
        (lambda x: rt.kv(ORDER, x), [0.5, 0.05, 3.0, 1.5, 30.0]),
        (lambda x: rt.i1(x) + rt.i1e(x) + rt.i0e(x), [-2.5, -0.4, 0.3, 4.0]),
    ],
)
def test_derivatives_in_x_match_finite_differences(fn, point):
    verify_grad(fn, [np.array(point)], rtol=1e-6)


def test_derivatives_of_i1_at_zero_are_one_half():
    x = rt.vector("x")
    grads = [rk.grad(rt.sum(f(x)), x) for f in (rt.i1, rt.i1e)]
    for g in rk.function([x], grads, backend="numpy")(np.zeros(2)):
        np.testing.assert_array_equal(g, [0.5, 0.5])


def test_derivatives_in_orders_and_shape_parameters_are_nan():
    """Not implemented: NaN, never a zero that could pass for a derivative; the derivative
    in the other input is unaffected (the op records compare both with jax.grad's)."""
    a, b, y = rt.vector("a"), rt.vector("b"), rt.vector("y")
    outs = [rt.gammaincinv(a, y), rt.betaincinv(a, b, y), rt.ive(a, y), rt.kv(a, y)]
    cost = rt.sum(rt.stack([rt.sum(o) for o in outs]))
    values = [np.array([1.5, 2.0]), np.array([2.0, 3.0]), np.array([0.3, 0.6])]
    ga, gb, gy = rk.function([a, b, y], rk.grad(cost, [a, b, y]), backend="numpy")(*values)
    assert np.isnan(ga).all() and np.isnan(gb).all() and np.isfinite(gy).all()
