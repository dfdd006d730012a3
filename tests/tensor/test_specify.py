"""``rt.specify_shape`` refines a static shape mid-graph and checks it at run time;
``rt.get_vector_length`` reads a vector's static length."""

from __future__ import annotations

import numpy as np
import pytest

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.errors import ShapeError

BACKENDS = ["numpy", "jax"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_specified_lengths_are_static_downstream_and_checked_at_run_time(backend):
    x = rt.matrix("x")
    y = rt.specify_shape(x, (None, 3))
    assert y.type.shape == (None, 3) and rt.reshape(y, (-1,)).type.shape == (None,)
    f = rk.function([x], [y * 2, rk.grad(rt.sum(y * y), x)], backend=backend)
    value, grad = f(np.ones((2, 3)))
    np.testing.assert_array_equal(value, 2 * np.ones((2, 3)))
    np.testing.assert_array_equal(grad, 2 * np.ones((2, 3)))
    with pytest.raises(
        ValueError, match=r"specify_shape: <Var 'x'.* has shape \(2, 4\) at run time, not \(\?, 3\)"
    ):
        f(np.ones((2, 4)))


def test_specify_shape_errors_name_the_axis():
    with pytest.raises(ShapeError, match="axis 0 of float64\\[3\\] has length 3, not 4"):
        rt.specify_shape(rt.vector("v", shape=(3,)), (4,))
    with pytest.raises(ShapeError, match="has 1 axes, the shape \\(2, 2\\) 2"):
        rt.specify_shape(rt.vector("v"), (2, 2))
    with pytest.raises(ShapeError, match="must hold ints and None"):
        rt.specify_shape(rt.vector("v"), (rt.scalar("n", dtype="int64"),))


def test_vectorized_specify_shape_leaves_the_batch_free():
    x = rt.vector("x")
    out = rk.vectorize(rt.specify_shape(x, (3,)), {x: rt.matrix("xs")})
    assert out.type.shape == (None, 3)


def test_get_vector_length():
    m = rt.matrix("m")
    n = rt.scalar("n", dtype="int64")
    assert rt.get_vector_length(rt.shape(m)) == 2
    assert rt.get_vector_length(rt.constant(np.arange(4))) == 4
    assert rt.get_vector_length(rt.vector("v", shape=(5,))) == 5
    with pytest.raises(ShapeError, match="known only at run time"):
        rt.get_vector_length(rt.vector("w"))
    with pytest.raises(ShapeError, match="is not a vector"):
        rt.get_vector_length(m)
    assert rt.get_vector_length(rt.stack([n, n, n])) in (3,)
