"""The special functions: polygamma's order parameter, and gradients at the edges of the
domains that the op records do not draw (values and the other gradients are checked for
every record in ``tests/properties``)."""

import re

import jax
import numpy as np
import pytest
import scipy.special as sp

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.errors import GraphTypeError
from rewritekit.tensor.special import Polygamma


@pytest.mark.parametrize("n", [-1, 1.5, 1.0, True, "1", None])
def test_polygamma_order_must_be_a_non_negative_int(n):
    message = f"polygamma: the order n must be an int >= 0, got {n!r}"
    with pytest.raises(GraphTypeError, match=re.escape(message)):
        rt.polygamma(n, rt.vector("x"))


def test_polygamma_order_is_a_parameter():
    x = rt.vector("x")
    assert rt.polygamma(np.int64(2), x) is rt.polygamma(2, x)
    assert rt.polygamma(2, x).owner.op == Polygamma(n=2)
    assert rt.polygamma(1, x) is not rt.polygamma(2, x)
    assert str(Polygamma(3)) == "Polygamma{n=3}"


@pytest.mark.parametrize(("dtype", "expected"), [("float32", "float32"), ("int32", "float64")])
def test_polygamma_is_a_float_function(dtype, expected):
    assert rt.polygamma(1, rt.vector("x", dtype=dtype)).dtype == expected


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_polygamma_of_order_zero_is_digamma(backend):
    x = rt.vector("x")
    f = rk.function([x], [rt.polygamma(0, x), rt.polygamma(3, x)], backend=backend)
    a = np.array([0.3, 1.5, -2.5, 7.0])
    zero, three = (np.asarray(v) for v in f(a))
    np.testing.assert_allclose(zero, sp.psi(a), rtol=1e-12)
    np.testing.assert_allclose(three, sp.polygamma(3, a), rtol=1e-12)


def test_gammaln_differentiates_into_the_polygamma_chain():
    x = rt.vector("x")
    first = rk.grad(rt.sum(rt.gammaln(x)), x)
    second = rk.grad(rt.sum(first), x)
    third = rk.grad(rt.sum(rt.polygamma(1, x)), x)
    a = np.array([0.5, 2.0, -1.5])
    got = rk.function([x], [first, second, third], backend="numpy")(a)
    for value, n in zip(got, [0, 1, 2], strict=True):
        np.testing.assert_allclose(value, sp.polygamma(n, a), rtol=1e-12)


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_xlogy_gradient_at_x_zero(backend):
    # d/dx = log(y), -inf at y = 0; d/dy = x / y, exactly 0 where x == 0 (xlogy(0, y) is 0
    # for every y), including x == y == 0, where jax.scipy.special.xlogy's gives NaN
    x, y = rt.vector("x"), rt.vector("y")
    cost = rt.sum(rt.xlogy(x, y))
    f = rk.function([x, y], rk.grad(cost, [x, y]), backend=backend)
    a, b = np.array([0.0, 0.0, 2.0]), np.array([3.0, 0.0, 0.5])
    gx, gy = (np.asarray(v) for v in f(a, b))
    np.testing.assert_allclose(gx, [np.log(3.0), -np.inf, np.log(0.5)], rtol=1e-15)
    np.testing.assert_array_equal(gy, [0.0, 0.0, 4.0])
    with jax.enable_x64(True):
        expected = jax.grad(
            lambda u, v: jax.numpy.sum(jax.scipy.special.xlogy(u, v)), argnums=(0, 1)
        )(a, b)
    np.testing.assert_array_equal(gx, expected[0])
    np.testing.assert_array_equal(gy[[0, 2]], np.asarray(expected[1])[[0, 2]])


def test_logistic_gradients_keep_their_precision_in_the_tails():
    # 1 - sigmoid(x) would round to 0 for x = 40; sigmoid(-x) does not
    x = rt.vector("x")
    grads = [rk.grad(rt.sum(fn(x)), x) for fn in (rt.sigmoid, rt.log_sigmoid, rt.softplus)]
    a = np.array([-40.0, 40.0])
    sigmoid, log_sigmoid, softplus = rk.function([x], grads, backend="numpy")(a)
    np.testing.assert_allclose(sigmoid, sp.expit(a) * sp.expit(-a), rtol=1e-15)
    np.testing.assert_allclose(log_sigmoid, sp.expit(-a), rtol=1e-15)
    np.testing.assert_allclose(softplus, sp.expit(a), rtol=1e-15)
