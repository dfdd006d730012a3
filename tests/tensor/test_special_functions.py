"""The special and Bessel functions added for PyMC and NumPyro (``gamma erfcinv gammaincinv
betaincinv i0 i1 i0e i1e ive kv``; ``gammainc gammaincc betainc betaln ndtr log_ndtr ndtri
expi xlog1py multigammaln``): the JAX backend's forms against SciPy (and against values
computed with mpmath at 50 digits, where SciPy has no function or is less accurate) over
wide grids and at the edges of the domains (the op records draw from small domains, and the
NumPy backend is SciPy), and the derivatives that the op records leave to this file (in x,
against finite differences; in the orders and shape parameters, NaN)."""

import numpy as np
import pytest
import scipy.special as sp

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.errors import DTypeError, GraphTypeError
from rewritekit.tensor.special import gammainc_grad_a
from rewritekit.testing import verify_grad
from tests.records.special import gammainc_grad_a_by_differences


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


# --- the normal distribution, expi, incomplete gamma and beta ------------------------------


def both_backends(inputs, outputs, *arrays):
    """The outputs on the NumPy and the JAX backend (one compile each)."""
    return [
        [np.asarray(v) for v in rk.function(inputs, outputs, backend=b)(*arrays)]
        for b in ("numpy", "jax")
    ]


def test_normal_functions_and_expi_match_scipy_in_the_tails():
    """The JAX backend's forms to 1e-14 of SciPy (expi to 1e-13, near its zero at 0.3725;
    it is 1.2e-15 from mpmath's values elsewhere, SciPy's 2.6e-14), and SciPy's edges."""
    x = np.concatenate([-np.logspace(-3, 3, 200), np.logspace(-3, 1.6, 100), [0, 38, np.inf]])
    x = np.concatenate([x, np.linspace(-40, 40, 161), [-np.inf, np.nan]])
    p = np.concatenate(
        [np.logspace(-300, -1, 60), np.linspace(0, 1, 51), 1 - np.logspace(-16, -1, 30)]
    )
    e = np.concatenate([-np.logspace(-5, 2.85, 100), np.logspace(-5, 2.85, 100)])
    e = np.concatenate([e, [0, np.inf, -np.inf, np.nan]])
    inputs = rt.vector("x"), rt.vector("p"), rt.vector("e")
    x_, p_, e_ = inputs
    outputs = [rt.ndtr(x_), rt.log_ndtr(x_), rt.ndtri(p_), rt.expi(e_)]
    ndtr, log_ndtr, ndtri, expi = both_backends(inputs, outputs, x, p, e)[1]
    assert_matches(ndtr, sp.ndtr(x), 1e-14)
    assert_matches(log_ndtr, sp.log_ndtr(x), 1e-14)
    assert_matches(ndtri, sp.ndtri(p), 1e-14)
    with np.errstate(all="ignore"):
        assert_matches(expi, sp.expi(e), 1e-13)
    assert np.signbit(expi[e == -np.inf]).all()  # expi(-inf) = -0.0, as SciPy


def test_log_ndtr_and_its_derivative_far_in_both_tails():
    x = rt.vector("x")
    point = np.array([-1e5, -40.0, 10.0])
    outputs = [rt.log_ndtr(x), rk.grad(rt.sum(rt.log_ndtr(x)), x)]
    for value, slope in both_backends([x], outputs, point):
        # mpmath: log ndtr(x) and ndtr'(x) / ndtr(x); at 10, SciPy's too is 7e-15 off (the
        # rounding of x / sqrt(2), amplified by erfc)
        np.testing.assert_allclose(
            value, [-5000000012.431864, -804.6084420137538, -7.619853024160525e-24], rtol=2e-14
        )
        np.testing.assert_allclose(slope[:2], [100000.00001, 40.02496884720726], rtol=1e-14)


def test_incomplete_gamma_matches_scipy():
    """JAX's gammainc and gammaincc to 1e-11 over 1e-10 <= a <= 3000 (a >= 1e-3: JAX's
    own), and the series of the JAX form for a < 1e-3, where JAX's gammaincc loses its
    relative accuracy (2e-5 at a = 1e-10), to 1e-13."""
    small = np.logspace(-12, -3.01, 12)
    shapes = np.concatenate([small, np.logspace(-3, 3.5, 30)])
    points = np.concatenate([np.logspace(-20, 4, 60), np.linspace(1, 3, 9)])
    a, x = (g.ravel() for g in np.meshgrid(shapes, points))
    a, x = with_edges(
        [a, x], [[0, 0, 0, 1, 1, 1, -1, 2, np.nan], [0, 1, np.inf, 0, np.inf, -1, 1, np.nan, 1]]
    )
    lower, upper = jax_values(lambda a, x: rt.stack([rt.gammainc(a, x), rt.gammaincc(a, x)]), a, x)
    assert_matches(lower, sp.gammainc(a, x), 1e-11)
    assert_matches(upper, sp.gammaincc(a, x), 1e-11)
    series = np.isin(a, small) & (x <= 1.5)
    assert_matches(upper[series], sp.gammaincc(a, x)[series], 1e-13)


#: (a, x, d/da gammainc(a, x)), by mpmath at 50 digits
GRAD_A = [
    (0.01, 0.0001, -7.933494053725892),
    (0.5, 2.0, -0.13561933520399724),
    (3.0, 0.1, -0.0005513415674074963),
    (10.0, 11.0, -0.11569395739153053),
    (49.5, 100.0, -5.996236781929982e-09),
    (50.0, 30.0, -0.0002830094447125904),
    (1.0, 60.0, -4.105015416396122e-26),
    (20.0, 5.0, -4.920268403228746e-07),
    (0.001, 0.5, -0.5603594001080031),
]


def test_derivative_of_gammainc_in_a_matches_mpmath_and_differences():
    """On both backends: to 1e-12 of mpmath's values, and to 1e-10 of SciPy's differences
    over 0.05 <= a <= 50, 1e-3 <= x <= 100 (7e-14 of mpmath's there); 0 at x = 0 and inf,
    NaN outside the domain."""
    a, x = (
        g.ravel() for g in np.meshgrid(np.logspace(-1.3, np.log10(50), 15), np.logspace(-3, 2, 25))
    )
    table = np.array(GRAD_A).T
    edges = [[1, 2, 2, -1, 0, np.inf, 1], [0, 0, np.inf, 1, 1, 1, -1]]
    a_all, x_all = with_edges(
        [a, x], [np.concatenate([table[0], edges[0]]), np.concatenate([table[1], edges[1]])]
    )
    inputs = rt.vector("a"), rt.vector("x")
    for (value,) in both_backends(inputs, [gammainc_grad_a(*inputs)], a_all, x_all):
        n = len(a)
        assert np.max(np.abs(value[:n] / gammainc_grad_a_by_differences(a, x) - 1)) < 1e-10
        np.testing.assert_allclose(value[n : n + len(GRAD_A)], table[2], rtol=1e-12)
        np.testing.assert_array_equal(
            value[n + len(GRAD_A) :], [0, 0, 0, np.nan, np.nan, np.nan, np.nan]
        )


#: (a, b, betaln(a, b)), by mpmath at 50 digits: SciPy's betaln is off by up to 1e-9 for
#: b >= 1e6 (cephes' lbeta), the JAX form's by 6e-15 of max(1, |betaln|) (over a, b in
#: [1e-3, 1e8])
BETALN = [
    (0.5, 1e6, -6.335390211057437),
    (3.0, 1e8, -54.56889508129715),
    (0.1366, 1e6, 0.03906289016757679),
    (15.0, 2e7, -226.97742654003403),
    (1e4, 1e4, -13866.28325676141),
    (8.4, 0.35, 0.20331496396004484),
    (12.5, 10.5, -15.796208620495015),
]


def test_betainc_and_betaln_match_scipy():
    """JAX's betainc to 5e-11 for a, b >= 0.1 (to 2e-10 below; SciPy's values at the edges);
    the JAX betaln (its own form: JAX's is off by 1.5e-6 at (8.4, 0.35)) to 5e-14 of SciPy
    relative to max(1, |betaln|) for a, b <= 100 (SciPy's own error grows beyond: 7e-13 at
    1e3, 1e-9 at 1e6), and to 1e-14 of mpmath's values beyond (of max(1, |betaln|): near
    its zeros no form keeps a relative accuracy)."""
    shapes = np.logspace(-1, 3, 12)
    probabilities = np.concatenate(
        [np.logspace(-12, -1, 6), [0.3, 0.5, 0.7], 1 - np.logspace(-12, -1, 6)]
    )
    a, b, x = (g.ravel() for g in np.meshgrid(shapes, shapes, probabilities))
    edges = [[1, 1, 0, 2, 2, 1, 2], [1, 1, 1, 0, 2, np.inf, 3], [0, 1, 0.5, 0.5, 1.5, 0.5, np.nan]]
    a, b, x = with_edges([a, b, x], edges)
    table = np.array(BETALN).T
    big = np.logspace(-3, 2, 25)
    la, lb = (g.ravel() for g in np.meshgrid(big, big))
    la, lb = with_edges(
        [la, lb],
        [
            np.concatenate([table[0], [0, 1, -0.5, np.inf]]),
            np.concatenate([table[1], [1, np.inf, 2, 1]]),
        ],
    )
    inputs = [rt.vector(n) for n in "abxcd"]
    outputs = [rt.betainc(*inputs[:3]), rt.betaln(inputs[3], inputs[4])]
    betainc, betaln = both_backends(inputs, outputs, a, b, x, la, lb)[1]
    assert_matches(betainc, sp.betainc(a, b, x), 5e-11)
    n = len(big) ** 2
    scale = np.maximum(1, np.abs(sp.betaln(la[:n], lb[:n])))
    assert np.max(np.abs(betaln[:n] - sp.betaln(la[:n], lb[:n])) / scale) < 5e-14
    tabled = betaln[n : n + len(BETALN)]
    assert np.all(np.abs(tabled - table[2]) <= 1e-14 * np.maximum(1, np.abs(table[2])))
    edges = betaln[n + len(BETALN) :]  # inf at 0, -inf at inf, log|B| for a negative a
    np.testing.assert_allclose(edges, sp.betaln([0, 1, -0.5, np.inf], [1, np.inf, 2, 1]), 1e-15)


def test_multigammaln_matches_scipy():
    a = rt.vector("a")
    point = np.array([2.1, 3.5, 40.0])  # SciPy's domain for d <= 5: a > 2
    outputs = [rt.multigammaln(a, d) for d in (1, 2, 3, 5)]
    for backend_values in both_backends([a], outputs, point):
        for d, value in zip((1, 2, 3, 5), backend_values, strict=True):
            # a sum of gammaln: 0.045 at (2.1, 5) from terms up to 1.2, as SciPy's
            np.testing.assert_allclose(value, sp.multigammaln(point, d), rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize("d", [rt.scalar("d", dtype="int64"), 0, 2.0, True])
def test_multigammaln_needs_a_static_positive_int_dimension(d):
    with pytest.raises(
        GraphTypeError, match=r"multigammaln: the dimension d must be a Python int >= 1.*got"
    ):
        rt.multigammaln(rt.vector("a"), d)


def test_incomplete_gamma_refuses_complex_inputs():
    match = r"gammainc: input 0 has dtype complex128, which gammainc does not support .*'a', 'x'"
    with pytest.raises(DTypeError, match=match):
        rt.gammainc(rt.vector("a", dtype="complex128"), rt.vector("x"))


def test_expit_and_log1pexp_are_sigmoid_and_softplus():
    x = rt.vector("x")
    assert rt.expit(x) is rt.sigmoid(x)
    assert rt.log1pexp(x) is rt.softplus(x)


@pytest.mark.parametrize(
    ("fn", "point"),
    [
        (rt.ndtr, [-6.0, -0.3, 0.0, 2.5]),
        (rt.log_ndtr, [-30.0, -2.0, 0.5, 1.5, 6.0]),
        (rt.ndtri, [0.01, 0.2, 0.5, 0.97]),
        (rt.expi, [-5.0, -0.4, 0.1, 0.372, 3.0, 8.0]),
        (lambda y: rt.xlog1py(np.array([0.0, 2.0, -1.5]), y), [-0.5, 0.2, 4.0]),
        (lambda x: rt.xlog1py(x, np.array([-0.5, 0.2, 4.0])), [0.0, 2.0, -1.5]),
        (lambda x: rt.gammainc(np.array([0.3, 1.0, 4.0, 40.0]), x), [0.2, 1.0, 6.0, 35.0]),
        (lambda x: rt.gammaincc(np.array([0.3, 1.0, 4.0, 40.0]), x), [0.2, 1.0, 6.0, 35.0]),
        (lambda a: rt.gammainc(a, np.array([0.2, 1.0, 6.0, 35.0])), [0.3, 1.0, 4.0, 40.0]),
        (lambda a: rt.gammaincc(a, np.array([0.2, 1.0, 6.0, 35.0])), [0.3, 1.0, 4.0, 40.0]),
        (lambda x: gammainc_grad_a(np.array([0.3, 2.0, 30.0]), x), [0.5, 2.5, 40.0]),
        (
            lambda x: rt.betainc(np.array([0.5, 2.0, 8.0]), np.array([3.0, 0.7, 8.0]), x),
            [0.2, 0.6, 0.95],
        ),
        (lambda a: rt.betaln(a, np.array([0.5, 3.0, 12.0, 40.0])), [0.7, 2.0, 15.0, 3.0]),
        (lambda b: rt.betaln(np.array([0.5, 3.0, 12.0, 40.0]), b), [0.7, 2.0, 15.0, 3.0]),
        (lambda a: rt.multigammaln(a, 4), [2.0, 7.5]),
    ],
)
def test_derivatives_of_the_new_functions_match_finite_differences(fn, point):
    verify_grad(fn, [np.array(point)], rtol=1e-6)


def test_derivatives_of_betainc_in_a_and_b_and_of_gammainc_grad_a_in_a_are_nan():
    a, b, x = rt.vector("a"), rt.vector("b"), rt.vector("x")
    cost = rt.sum(rt.betainc(a, b, x) + gammainc_grad_a(b, x))
    values = [np.array([1.5, 2.0]), np.array([2.0, 3.0]), np.array([0.3, 0.6])]
    ga, gb, gx = rk.function([a, b, x], rk.grad(cost, [a, b, x]), backend="numpy")(*values)
    assert np.isnan(ga).all() and np.isnan(gb).all() and np.isfinite(gx).all()


def test_gammaincinv_derivative_in_a_matches_finite_differences():
    """Holding gammainc(a, x) = y: dx/da = -gammainc_grad_a(a, x) dx/dy, on both backends."""
    a, y = rt.vector("a"), rt.vector("y")
    grads = rk.grad(rt.sum(rt.gammaincinv(a, y)), [a, y])
    av, yv = np.array([0.3, 1.5, 4.0, 30.0]), np.array([0.2, 0.5, 0.9, 0.4])
    h = 1e-6 * av
    fd = (sp.gammaincinv(av + h, yv) - sp.gammaincinv(av - h, yv)) / (2 * h)
    for backend in ("numpy", "jax"):
        ga, _ = rk.function([a, y], grads, backend=backend)(av, yv)
        np.testing.assert_allclose(ga, fd, rtol=1e-6)
