"""Dynamic windows: ``x[i:i + k]`` with a traced start, ``rt.dynamic_slice`` and
``rt.dynamic_update_slice``, with JAX's semantics on both backends (negative starts from
the end, then clamped so the window fits), their gradients and their errors."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from jax import lax

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.errors import DTypeError, GraphTypeError, ShapeError
from rewritekit.tensor.dynamic import DynamicSlice

BACKENDS = ["numpy", "jax"]
STARTS = [0, 2, 4, 9, -1, -2, -9]
x = rt.vector("x", shape=(5,))
i = rt.scalar("i", dtype="int64")
M = rt.matrix("M", shape=(4, None))


def test_a_traced_start_and_a_static_length_make_a_window_of_static_size():
    window = x[i : i + 2]
    assert isinstance(window.owner.op, DynamicSlice) and window.type.shape == (2,)
    assert (2 + i).owner is not None and x[i : 2 + i] is window
    assert M[1, i : i + 3].type.shape == (3,)
    assert not isinstance(x[i : i * 2].owner.op, DynamicSlice)  # not a static length


@pytest.mark.parametrize("backend", BACKENDS)
def test_windows_and_updates_match_lax_on_both_backends(backend):
    f = rk.function(
        [x, i, M],
        [x[i : i + 2], x.at[i : i + 2].add(10.0), M[1, i : i + 2], M.at[i : i + 2, 0].set(-1.0)],
        backend=backend,
    )
    xv, mv = np.arange(5.0), np.arange(12.0).reshape(4, 3)
    for start in STARTS:
        window, added, row, written = f(xv, start, mv)
        with jax.enable_x64(True):
            expected = lax.dynamic_slice(xv, [start], [2])
            expected_add = lax.dynamic_update_slice(xv, expected + 10.0, [start])
            expected_row = lax.dynamic_slice(mv[1], [start], [2])
            column = lax.dynamic_update_slice(mv[:, 0], np.full(2, -1.0), [start])
        np.testing.assert_array_equal(window, expected, err_msg=f"start {start}")
        np.testing.assert_array_equal(added, expected_add, err_msg=f"start {start}")
        np.testing.assert_array_equal(row, expected_row, err_msg=f"start {start}")
        np.testing.assert_array_equal(written, np.column_stack([column, mv[:, 1:]]))


@pytest.mark.parametrize("backend", BACKENDS)
def test_dynamic_slice_and_update_of_every_axis_and_their_gradients(backend):
    j = rt.scalar("j", dtype="int32")
    u = rt.matrix("u", shape=(2, 2))
    A = rt.matrix("A", shape=(4, 3))
    window = rt.dynamic_slice(A, [i, j], [2, 2])
    updated = rt.dynamic_update_slice(A, u * 3.0, [j, i])
    cost = rt.sum(rt.sin(window) * updated[1:3, :2]) + rt.sum(updated * updated)
    f = rk.function([A, u, i, j], [window, updated, *rk.grad(cost, [A, u])], backend=backend)
    av, uv = np.random.default_rng(0).normal(size=(4, 3)), np.array([[1.0, 2.0], [3.0, 4.0]])

    def jcost(a, b, si, sj):
        w = lax.dynamic_slice(a, [si, sj], [2, 2])
        new = lax.dynamic_update_slice(a, b * 3.0, [sj, si])
        return (jax.numpy.sum(jax.numpy.sin(w) * new[1:3, :2]) + jax.numpy.sum(new * new), w, new)

    for si, sj in [(0, 0), (3, 1), (-1, 5), (1, -3)]:
        got = f(av, uv, si, np.int32(sj))
        with jax.enable_x64(True):
            _, w, new = jcost(av, uv, si, sj)
            grads = jax.grad(lambda a, b, p=si, q=sj: jcost(a, b, p, q)[0], argnums=(0, 1))(av, uv)
        np.testing.assert_array_equal(got[0], w)
        np.testing.assert_array_equal(got[1], new)
        np.testing.assert_allclose(got[2], grads[0], rtol=1e-12)
        np.testing.assert_allclose(got[3], grads[1], rtol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_windows_at_per_example_starts_vectorize(backend):
    starts = rt.vector("starts", dtype="int64", shape=(None,))
    batched = rk.vectorize(x[i : i + 3] * 2.0, {i: starts})
    f = rk.function([x, starts], batched, backend=backend)
    xv = np.arange(5.0)
    with jax.enable_x64(True):
        expected = np.stack([lax.dynamic_slice(xv, [s], [3]) * 2.0 for s in STARTS])
    np.testing.assert_array_equal(f(xv, np.array(STARTS)), expected)


def test_errors_name_the_fault():
    with pytest.raises(ShapeError, match="size 6 is larger than axis 0 of length 5"):
        rt.dynamic_slice(x, [i], [6])
    with pytest.raises(ShapeError, match="needs 1 starts and sizes, got 2 and 2"):
        rt.dynamic_slice(x, [i, i], [1, 1])
    with pytest.raises(ShapeError, match="sizes must be Python ints"):
        rt.dynamic_slice(x, [i], [i])
    with pytest.raises(DTypeError, match="start 0 must be an integer scalar"):
        rt.dynamic_slice(x, [rt.scalar("f")], [2])
    with pytest.raises(ShapeError, match="length along axis 0 must be static"):
        rt.dynamic_update_slice(x, rt.vector("v"), [i])
    with pytest.raises(GraphTypeError, match=r"indexes a dynamic window .* x\.at\[\.\.\.\]\.set"):
        rt.set_subtensor(M[i : i + 2, 0], 1.0)
