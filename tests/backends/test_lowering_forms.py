"""The JAX lowering forms chosen for XLA's compile time (softplus, log_sigmoid, xlogy,
logaddexp; docs/backends.md, "What XLA punishes") keep the values and gradients of the
NumPy backend, the reference, at extreme inputs: through ``rk.grad`` and ``rk.function``
on each backend, float64 and float32."""

from __future__ import annotations

import numpy as np
import pytest

import rewritekit as rk
import rewritekit.tensor as rt

_MAGNITUDES = [1e-300, 1e-20, 0.5, 30.0, 700.0, 800.0, 1e308]
POINTS = np.array([0.0, *_MAGNITUDES, *(-m for m in _MAGNITUDES), np.inf, -np.inf, np.nan])
# xlogy's second argument: zero, tiny, moderate, huge, negative, inf and NaN
Y_POINTS = np.array([0.0, 1e-300, 1e-20, 0.5, 2.0, 800.0, 1e308, -1.0, np.inf, np.nan])

TOLERANCE = {"float64": 1e-12, "float32": 1e-5}


def _as(points, dtype):
    """``points`` in ``dtype``; 1e308 and 800 become inf in float32, as intended."""
    with np.errstate(over="ignore"):
        return points.astype(dtype)


def _grid(xs, ys, dtype):
    """Every pair of ``xs`` and ``ys``, as two flat arrays of ``dtype``."""
    gx, gy = np.meshgrid(_as(xs, dtype), _as(ys, dtype))
    return gx.ravel(), gy.ravel()


def _compile_both(inputs, output):
    """The value and the gradients of ``sum(output)``, compiled for NumPy and for JAX."""
    outputs = [output, *rk.grad(rt.sum(output), inputs)]
    return [rk.function(inputs, outputs, backend=b) for b in ("numpy", "jax")]


def _assert_same(reference, got, dtype, atol=None):
    for want, have in zip(reference, got, strict=True):
        want, have = np.asarray(want), np.asarray(have)
        assert have.dtype == want.dtype
        # the reference's NaN and inf are the answer, not noise: same place, same sign
        np.testing.assert_array_equal(np.isnan(have), np.isnan(want))
        np.testing.assert_array_equal(np.isposinf(have), np.isposinf(want))
        np.testing.assert_array_equal(np.isneginf(have), np.isneginf(want))
        atol = np.finfo(dtype).tiny if atol is None else atol
        np.testing.assert_allclose(have, want, rtol=TOLERANCE[dtype], atol=atol)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("build", [rt.softplus, rt.log_sigmoid], ids=["softplus", "log_sigmoid"])
def test_softplus_forms_match_numpy_at_extreme_inputs(build, dtype):
    x = rt.vector("x", dtype=dtype)
    reference, jax_fn = _compile_both([x], build(x))
    points = _as(POINTS, dtype)
    with np.errstate(over="ignore"):
        _assert_same(reference(points), jax_fn(points), dtype)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_xlogy_form_matches_numpy_at_extreme_inputs(dtype):
    x, y = rt.vector("x", dtype=dtype), rt.vector("y", dtype=dtype)
    reference, jax_fn = _compile_both([x, y], rt.xlogy(x, y))
    xs, ys = _grid(POINTS, Y_POINTS, dtype)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        _assert_same(reference(xs, ys), jax_fn(xs, ys), dtype)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_xlogy_is_zero_where_x_is_zero_and_y_is_not_nan(dtype):
    x, y = rt.vector("x", dtype=dtype), rt.vector("y", dtype=dtype)
    f = rk.function([x, y], rt.xlogy(x, y))
    ys = _as(Y_POINTS[~np.isnan(Y_POINTS)], dtype)
    out = np.asarray(f(np.zeros_like(ys), ys))
    assert np.all(out == 0) and not np.any(np.signbit(out))
    assert np.isnan(np.asarray(f(np.zeros(1, dtype), np.full(1, np.nan, dtype)))).all()


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_logaddexp_form_matches_numpy_at_extreme_inputs(dtype):
    x, y = rt.vector("x", dtype=dtype), rt.vector("y", dtype=dtype)
    reference, jax_fn = _compile_both([x, y], rt.logaddexp(x, y))
    xs, ys = _grid(POINTS, POINTS, dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        _assert_same(reference(xs, ys), jax_fn(xs, ys), dtype)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_erfcx_form_matches_numpy_at_extreme_inputs(dtype):
    # not 1e308: erfcx(1e308) = 5.6e-309 is subnormal, which XLA on CPU flushes to zero
    # (docs/backends.md, "Subnormals"). The derivative 2 x erfcx(x) - 2/sqrt(pi) cancels
    # for large x: its error is a few eps of the terms (about 1.1), not of the result
    x = rt.vector("x", dtype=dtype)
    reference, jax_fn = _compile_both([x], rt.erfcx(x))
    points = _as(POINTS[np.abs(POINTS) != 1e308], dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        _assert_same(reference(points), jax_fn(points), dtype, atol=8 * np.finfo(dtype).eps)
