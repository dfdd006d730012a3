"""Shape arithmetic is evaluated while JAX traces, so shape-dependent graphs compile."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.errors import ShapeError


def test_reshape_by_computed_shape_compiles_under_jit():
    x = rt.vector("x")
    y = rt.reshape(x, (x.shape[0] // 2, 2))
    assert y.type.shape == (None, 2)
    f = rk.function([x], y)
    np.testing.assert_array_equal(np.asarray(f(np.arange(6.0))), np.arange(6.0).reshape(3, 2))
    np.testing.assert_array_equal(np.asarray(f(np.arange(4.0))), np.arange(4.0).reshape(2, 2))
    with jax.enable_x64(True):
        out = jax.jit(f.jax_fn)(np.arange(8.0))
    assert out.shape == (4, 2)


def test_shape_driven_creation_and_slicing_compile():
    x = rt.matrix("x")
    n = x.shape[0]
    y = rt.zeros((n, 3)) + x[:, :1] + x[: n // 2 + 1].sum()
    f = rk.function([x], y)
    data = np.arange(12.0).reshape(4, 3)
    expected = np.zeros((4, 3)) + data[:, :1] + data[:3].sum()
    np.testing.assert_allclose(np.asarray(f(data)), expected)
    np.testing.assert_allclose(rk.function([x], y, backend="numpy")(data), expected)


def test_data_dependent_shapes_are_rejected_under_jit_naming_the_op():
    x = rt.vector("x")
    n = rt.scalar("n", dtype="int64")
    f = rk.function([x, n], rt.reshape(x, (n, -1)))
    np.testing.assert_array_equal(
        rk.function([x, n], rt.reshape(x, (n, -1)), backend="numpy")(np.arange(6.0), 2),
        np.arange(6.0).reshape(2, 3),
    )
    with pytest.raises(ShapeError, match="reshape: the shape must be known"):
        f(np.arange(6.0), 2)
