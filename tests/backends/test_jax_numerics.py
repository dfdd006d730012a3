"""Piecewise JAX implementations are finite and exact under jax.grad, at extreme inputs."""

from __future__ import annotations

import jax
import numpy as np
import pytest
import scipy.special as sp

import rewritekit as rk
import rewritekit.tensor as rt

EXTREMES = np.array([-800.0, -40.0, -1.0, -1e-3, 0.0, 1e-3, 1.0, 40.0, 800.0])
NEGATIVE = np.array([-800.0, -40.0, -1.0, -0.5, -1e-3, -1e-8])


def _log1mexp(x):
    with np.errstate(over="ignore"):
        return np.where(x > -np.log(2.0), np.log(-np.expm1(x)), np.log1p(-np.exp(x)))


# (op, inputs, derivative by hand, value by hand)
CASES = [
    (rt.softplus, EXTREMES, sp.expit, lambda x: np.logaddexp(0.0, x)),
    (rt.log_sigmoid, EXTREMES, lambda x: sp.expit(-x), sp.log_expit),
    (rt.sigmoid, EXTREMES, lambda x: sp.expit(x) * sp.expit(-x), sp.expit),
    (rt.log1mexp, NEGATIVE, lambda x: -1.0 / np.expm1(-x), _log1mexp),
    (lambda x: rt.logaddexp(x, 0.0), EXTREMES, sp.expit, lambda x: np.logaddexp(x, 0.0)),
    (
        lambda x: rt.xlogy(x, 2.0),
        EXTREMES,
        lambda x: np.full_like(x, np.log(2.0)),
        lambda x: x * np.log(2.0),
    ),
    (
        lambda x: rt.clip(x, -2.0, 2.0),
        EXTREMES,
        lambda x: (np.abs(x) < 2).astype(float),
        lambda x: np.clip(x, -2.0, 2.0),
    ),
]


@pytest.mark.parametrize(("build", "points", "derivative", "value"), CASES)
def test_gradients_are_finite_and_exact_at_extreme_inputs(build, points, derivative, value):
    x = rt.vector("x")
    f = rk.function([x], build(x))
    with jax.enable_x64(True):
        grads = jax.vmap(jax.grad(lambda v: f.jax_fn(v[None])[0]))(points)
        values = f.jax_fn(points)
    assert np.all(np.isfinite(np.asarray(grads)))
    # atol: jax.nn.sigmoid's derivative is s * (1 - s), which is 0 once s rounds to 1
    # (x >= 37) where the exact value is about 1e-16 or less.
    with np.errstate(over="ignore"):
        expected = derivative(points)
    np.testing.assert_allclose(np.asarray(grads), expected, rtol=1e-12, atol=1e-16)
    np.testing.assert_allclose(np.asarray(values), value(points), rtol=1e-12, atol=1e-300)


def test_xlogy_at_zero_has_zero_gradients():
    x, y = rt.scalar("x"), rt.scalar("y")
    f = rk.function([x, y], rt.xlogy(x, y))
    with jax.enable_x64(True):
        gx, gy = jax.grad(f.jax_fn, argnums=(0, 1))(0.0, 1.0)
    assert float(gx) == 0.0 and float(gy) == 0.0
    assert float(f(0.0, 0.0)) == 0.0
