"""erfcx, the scaled complementary error function: values against SciPy on both backends
from x = -5 to 1e4 (where erfc underflows and the JAX backend switches to its asymptotic
series), the overflow to inf, and the derivative (the op records check it at random points
in ``tests/properties``; here at the switch points and in the far tail)."""

import math

import jax
import numpy as np
import pytest
import scipy.special as sp

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.testing import verify_grad

BACKENDS = ["numpy", "jax"]
# The JAX backend computes exp(x**2) from a rounded x**2: relative error up to about
# x**2 * eps / 2 for negative x, 1e-6 at x = -5 in float32.
RTOL = {"float64": 4e-15, "float32": 2e-6}


def _points(dtype):
    switch = {"float32": 5.0, "float64": 10.0}[dtype]  # the JAX backend's switch
    dense = np.linspace(-5.0, 40.0, 2001)
    near = switch + np.array([-1e-3, 0.0, 1e-3])
    far = np.geomspace(40.0, 1e4, 200)
    return np.concatenate([dense, near, far]).astype(dtype)


def _derivative(x):
    """d/dx erfcx(x) in float64: 2x erfcx(x) - 2/sqrt(pi) below 20 (its cancellation costs
    2 x**2 eps), the derivative of the asymptotic series, -1/(sqrt(pi) x**2) *
    sum_n (-1)**n (2n+1)!! / (2 x**2)**n, above (20 terms: exact to rounding from 20)."""
    with np.errstate(over="ignore"):
        near = 2 * x * sp.erfcx(x) - 2 / math.sqrt(math.pi)
        u = 0.5 / np.maximum(x, 20.0) / np.maximum(x, 20.0)
    series, term = np.zeros_like(u), np.ones_like(u)
    for n in range(20):
        series += term
        term = term * -(2 * n + 3) * u
    tail = -2 * u * series / math.sqrt(math.pi)
    return np.where(x < 20.0, near, tail)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_erfcx_matches_scipy_from_minus_5_to_1e4(backend, dtype):
    x = rt.vector("x", dtype=dtype)
    f = rk.function([x], rt.erfcx(x), backend=backend)
    points = _points(dtype)
    got = np.asarray(f(points))
    assert got.dtype == dtype
    expected = sp.erfcx(points.astype("float64"))
    np.testing.assert_allclose(got, expected, rtol=RTOL[dtype], atol=0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_erfcx_is_finite_where_its_naive_form_is_nan(backend):
    x = rt.vector("x")
    points = np.array([27.0, 100.0, 1e4, 1e200])
    naive = rk.function([x], rt.exp(rt.square(x)) * rt.erfc(x), backend=backend, rules=None)
    assert np.all(np.isnan(np.asarray(naive(points))))  # inf * 0
    got = np.asarray(rk.function([x], rt.erfcx(x), backend=backend)(points))
    np.testing.assert_allclose(got, sp.erfcx(points), rtol=4e-15)


# 2 exp(x**2) passes the largest float below x = -26.63 (float64) and -9.382 (float32)
@pytest.mark.parametrize(
    ("dtype", "finite", "infinite"), [("float64", -26.6, -26.7), ("float32", -9.38, -9.39)]
)
@pytest.mark.parametrize("backend", BACKENDS)
def test_erfcx_overflows_to_inf_for_large_negative_x_as_scipy(backend, dtype, finite, infinite):
    x = rt.vector("x", dtype=dtype)
    f = rk.function([x], rt.erfcx(x), backend=backend)
    points = np.array([-np.inf, infinite, finite, np.inf, np.nan], dtype=dtype)
    got = np.asarray(f(points))
    with np.errstate(over="ignore"):  # float64 values past float32's largest
        expected = sp.erfcx(points.astype("float64")).astype(dtype)
    np.testing.assert_array_equal(np.isinf(expected), [True, True, False, False, False])
    # exp(x**2) from a rounded x**2 (JAX): relative error up to x**2 eps
    np.testing.assert_allclose(got, expected, rtol=finite**2 * np.finfo(dtype).eps)


def test_erfcx_keeps_float_dtypes_and_computes_integers_in_float64():
    assert rt.erfcx(rt.vector("x", dtype="float32")).dtype == "float32"
    assert rt.erfcx(rt.vector("n", dtype="int32")).dtype == "float64"
    assert str(rt.erfcx(rt.vector("x")).owner.op) == "Erfcx"


@pytest.mark.parametrize("backend", BACKENDS)
def test_rk_grad_of_erfcx(backend):
    x = rt.vector("x")
    f = rk.function([x], rk.grad(rt.sum(rt.erfcx(x)), x), backend=backend)
    # the rule 2x erfcx(x) - 2/sqrt(pi) cancels for large x: relative error about 2 x**2 eps
    points = np.array([-5.0, -1.0, 0.0, 0.5, 3.0, 9.9, 10.0, 10.1, 30.0])
    rtol = 4 * np.finfo("float64").eps * np.maximum(np.square(points), 1.0)
    got = np.asarray(f(points))
    assert np.all(np.abs(got - _derivative(points)) <= rtol * np.abs(_derivative(points)))
    verify_grad(rt.erfcx, [points[1:]])  # without -5: its value, 1.4e11, swamps the sum


def test_jax_grad_of_erfcx_is_finite_and_exact_on_both_branches():
    # the double where: neither branch sees an input that gives inf or NaN (exp(x**2) *
    # erfc(x) is inf * 0 past 26.6; the series divides by x**2, which overflows at 1e155)
    x = rt.vector("x")
    f = rk.function([x], rt.erfcx(x))
    points = np.array([-5.0, -1.0, 0.0, 3.0, 9.9, 10.0, 10.1, 30.0, 100.0, 1e4, 1e100, 1e200])
    with jax.enable_x64(True):
        grads = np.asarray(jax.vmap(jax.grad(lambda v: f.jax_fn(v[None])[0]))(points))
    assert np.isfinite(grads).all()
    np.testing.assert_allclose(grads, _derivative(points), rtol=2e-13, atol=0)
