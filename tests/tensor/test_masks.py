"""Boolean masks: constant masks index and update (the result's shape is known), and
``rt.nonzero`` / ``rt.argwhere`` / ``rt.where(mask, size=n)`` spell data-dependent
positions with JAX's static ``size=``; a traced mask without it is a clear error."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.errors import GraphTypeError, ShapeError
from rewritekit.vectorize import fallback_ops

BACKENDS = ["numpy", "jax"]
x = rt.vector("x", shape=(4,))
M = rt.matrix("M", shape=(2, 3))
MASK = np.array([True, False, True, True])
MASK2 = np.array([[True, False, True], [False, False, True]])


@pytest.mark.parametrize("backend", BACKENDS)
def test_constant_masks_index_and_update_as_numpy(backend):
    outs = [
        x[MASK],
        x[list(MASK)],
        x[rt.constant(MASK)],
        M[MASK2],
        M[:, MASK2[0]],
        x.at[MASK].set(0.0),
        x.at[MASK].add(rt.arange(3) * 1.0),
        rk.grad(rt.sum(x[MASK] ** 2), x),
    ]
    assert [o.type.shape for o in outs[:5]] == [(3,), (3,), (3,), (3,), (2, 2)]
    xv, mv = np.array([1.0, -2.0, 3.0, 4.0]), np.arange(6.0).reshape(2, 3)
    got = rk.function([x, M], outs, backend=backend)(xv, mv)
    added = xv.copy()
    added[MASK] += np.arange(3.0)
    expected = [
        xv[MASK],
        xv[MASK],
        xv[MASK],
        mv[MASK2],
        mv[:, MASK2[0]],
        np.where(MASK, 0.0, xv),
        added,
        np.where(MASK, 2 * xv, 0.0),
    ]
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_array_equal(g, e)


@pytest.mark.parametrize("backend", BACKENDS)
def test_nonzero_argwhere_and_where_with_a_static_size_match_jax(backend):
    m = rt.matrix("m")
    outs = [
        *rt.nonzero(m, size=4, fill_value=-1),
        rt.argwhere(m > 1, size=3),
        *rt.where(m < 2, size=2),
    ]
    f = rk.function([m], outs, backend=backend)
    for mv in [np.array([[0.0, 3.0, 1.0], [2.0, 0.0, 5.0]]), np.zeros((2, 3)), np.ones((1, 1))]:
        with jax.enable_x64(True):
            expected = [
                *jnp.nonzero(mv, size=4, fill_value=-1),
                jnp.argwhere(mv > 1, size=3),
                *jnp.where(mv < 2, size=2),
            ]
        for g, e in zip(f(mv), expected, strict=True):
            np.testing.assert_array_equal(g, e)


@pytest.mark.parametrize("backend", BACKENDS)
def test_per_example_nonzero_vectorizes(backend):
    rows = rt.matrix("rows")
    v = rt.vector("v")
    batched = rk.vectorize(list(rt.nonzero(v > 0, size=2, fill_value=9)), {v: rows})
    assert fallback_ops(batched) == []
    data = np.array([[1.0, -1.0, 2.0, 3.0], [-1.0, -1.0, -1.0, 4.0], [0.0, 0.0, 0.0, 0.0]])
    got = rk.function([rows], batched[0], backend=backend)(data)
    np.testing.assert_array_equal(got, [[0, 2], [3, 9], [9, 9]])


def test_the_positions_of_a_constant_are_constants():
    (positions,) = rt.nonzero(rt.constant(MASK))
    assert isinstance(positions, rk.Constant) and positions.data.tolist() == [0, 2, 3]


def test_traced_masks_and_missing_sizes_say_the_jax_spelling():
    with pytest.raises(GraphTypeError, match=r"x\[rt\.nonzero\(mask, size=n, fill_value=0\)\]"):
        x[x > 0]
    with pytest.raises(GraphTypeError, match=r"give a static size, as JAX does: rt\.nonzero"):
        rt.nonzero(x)
    with pytest.raises(GraphTypeError, match="size= and fill_value= belong to the one-argument"):
        rt.where(x > 0, x, 0.0, size=2)
    with pytest.raises(ShapeError, match=r"mask at index 0 has shape \(3,\), which does not match"):
        x[np.array([True, False, True])]
    with pytest.raises(ShapeError, match="size must be an int >= 0"):
        rt.nonzero(x, size=-1)
