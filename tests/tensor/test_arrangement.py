"""NumPy's everyday array functions built from the Ops (``rewritekit.tensor.arrangement``),
against NumPy on both backends, with gradients against ``jax.grad`` and their errors."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.errors import GraphTypeError, ShapeError

BACKENDS = ["numpy", "jax"]
A = np.arange(12.0).reshape(3, 4) - 5.5
V = np.array([1.5, -2.0, np.nan, 4.0])
W = np.array([np.nan, 3.0, np.nan, -1.0])

# name: (rewritekit on (a, v, w) Vars, NumPy on arrays)
CASES = {
    "tril": (lambda a, v, w: rt.tril(a, -1), lambda a, v, w: np.tril(a, -1)),
    "triu": (lambda a, v, w: rt.triu(a, 1), lambda a, v, w: np.triu(a, 1)),
    "flip": (lambda a, v, w: rt.flip(a), lambda a, v, w: np.flip(a)),
    "flip_axis": (lambda a, v, w: rt.flip(a, (0, -1)), lambda a, v, w: np.flip(a, (0, -1))),
    "fliplr": (lambda a, v, w: rt.fliplr(a), lambda a, v, w: np.fliplr(a)),
    "flipud": (lambda a, v, w: rt.flipud(a), lambda a, v, w: np.flipud(a)),
    "roll": (lambda a, v, w: rt.roll(a, 5, 1), lambda a, v, w: np.roll(a, 5, 1)),
    "roll_flat": (lambda a, v, w: rt.roll(a, -2), lambda a, v, w: np.roll(a, -2)),
    "repeat": (lambda a, v, w: rt.repeat(a, 2, 0), lambda a, v, w: np.repeat(a, 2, 0)),
    "repeat_flat": (lambda a, v, w: rt.repeat(a, 3), lambda a, v, w: np.repeat(a, 3)),
    "tile": (lambda a, v, w: rt.tile(a, (2, 1, 3)), lambda a, v, w: np.tile(a, (2, 1, 3))),
    "diff": (lambda a, v, w: rt.diff(a, 2), lambda a, v, w: np.diff(a, 2)),
    "diff_axis0": (lambda a, v, w: rt.diff(a, axis=0), lambda a, v, w: np.diff(a, axis=0)),
    "vstack": (lambda a, v, w: rt.vstack([a, v]), lambda a, v, w: np.vstack([a, v])),
    "hstack": (lambda a, v, w: rt.hstack([v, w]), lambda a, v, w: np.hstack([v, w])),
    "column_stack": (
        lambda a, v, w: rt.column_stack([v, w]),
        lambda a, v, w: np.column_stack([v, w]),
    ),
    "dstack": (lambda a, v, w: rt.dstack([a, a]), lambda a, v, w: np.dstack([a, a])),
    "nansum": (lambda a, v, w: rt.nansum(v), lambda a, v, w: np.nansum(v)),
    "nanmean": (lambda a, v, w: rt.nanmean(v), lambda a, v, w: np.nanmean(v)),
    "nanmax": (lambda a, v, w: rt.nanmax(v), lambda a, v, w: np.nanmax(v)),
    "nanmin": (lambda a, v, w: rt.nanmin(v), lambda a, v, w: np.nanmin(v)),
    "fmax": (lambda a, v, w: rt.fmax(v, w), lambda a, v, w: np.fmax(v, w)),
    "fmin": (lambda a, v, w: rt.fmin(v, w), lambda a, v, w: np.fmin(v, w)),
    "logical_xor": (
        lambda a, v, w: rt.logical_xor(v > 0, w),
        lambda a, v, w: np.logical_xor(v > 0, w),
    ),
    "trunc": (lambda a, v, w: rt.trunc(a / 3), lambda a, v, w: np.trunc(a / 3)),
    "deg2rad": (lambda a, v, w: rt.deg2rad(a), lambda a, v, w: np.deg2rad(a)),
    "degrees": (lambda a, v, w: rt.degrees(a), lambda a, v, w: np.degrees(a)),
    "linspace": (
        lambda a, v, w: rt.linspace(-1.5, 2.0, 7),
        lambda a, v, w: np.linspace(-1.5, 2.0, 7),
    ),
    "linspace_open": (
        lambda a, v, w: rt.linspace(0.0, 1.0, 4, endpoint=False),
        lambda a, v, w: np.linspace(0.0, 1.0, 4, endpoint=False),
    ),
    "meshgrid_xy": (
        lambda a, v, w: rt.meshgrid(v, a[0, :3])[0],
        lambda a, v, w: np.meshgrid(v, a[0, :3])[0],
    ),
    "meshgrid_ij": (
        lambda a, v, w: rt.meshgrid(v, a[0, :3], indexing="ij")[1],
        lambda a, v, w: np.meshgrid(v, a[0, :3], indexing="ij")[1],
    ),
    "split": (lambda a, v, w: rt.split(a, 2, axis=1)[1], lambda a, v, w: np.split(a, 2, axis=1)[1]),
    "split_at": (
        lambda a, v, w: rt.split(a, [1, 3], 1)[2],
        lambda a, v, w: np.split(a, [1, 3], 1)[2],
    ),
    "take_along_axis": (
        lambda a, v, w: rt.take_along_axis(a, rt.argsort(a, axis=1), 1),
        lambda a, v, w: np.take_along_axis(a, np.argsort(a, axis=1), 1),
    ),
    "logaddexp2": (
        lambda a, v, w: rt.logaddexp2(a, a[::-1]),
        lambda a, v, w: np.logaddexp2(a, a[::-1]),
    ),
    "cumulative_sum": (
        lambda a, v, w: rt.cumulative_sum(a, axis=1, include_initial=True),
        lambda a, v, w: np.concatenate([np.zeros((3, 1)), np.cumsum(a, axis=1)], 1),
    ),
}


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_function_matches_numpy(backend):
    a, v, w = rt.matrix("a", shape=(3, 4)), rt.vector("v", shape=(4,)), rt.vector("w", shape=(4,))
    names = sorted(CASES)
    f = rk.function([a, v, w], [CASES[n][0](a, v, w) for n in names], backend=backend)
    with np.errstate(all="ignore"):
        for name, got in zip(names, f(A, V, W), strict=True):
            expected = CASES[name][1](A, V, W)
            np.testing.assert_allclose(
                got, expected, rtol=1e-15 if name != "logaddexp2" else 1e-14, err_msg=name
            )
            assert np.shape(got) == np.shape(expected), name


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradients_match_jax(backend):
    a = rt.matrix("a", shape=(3, 4))
    cost = rt.sum(rt.tril(a) * rt.roll(a, 1, 0)) + rt.sum(rt.diff(rt.repeat(a, 2, 1)) ** 2)
    cost = cost + rt.sum(rt.tile(a, 2) * rt.flip(rt.tile(a, 2), 1)) + rt.nanmean(a * a)
    got = rk.function([a], rk.grad(cost, a), backend=backend)(A)

    def jcost(x):
        c = jnp.sum(jnp.tril(x) * jnp.roll(x, 1, 0)) + jnp.sum(jnp.diff(jnp.repeat(x, 2, 1)) ** 2)
        return c + jnp.sum(jnp.tile(x, 2) * jnp.flip(jnp.tile(x, 2), 1)) + jnp.nanmean(x * x)

    with jax.enable_x64(True):
        np.testing.assert_allclose(got, jax.grad(jcost)(A), rtol=1e-12)


def test_errors_name_the_function():
    with pytest.raises(ShapeError, match="tril: the input must be at least 2-d"):
        rt.tril(rt.vector("v"))
    with pytest.raises(ShapeError, match="roll: axis 0 of float64\\[\\?\\] needs a static length"):
        rt.roll(rt.vector("v"), 1, 0)
    with pytest.raises(GraphTypeError, match="repeat: repeats must be a static int"):
        rt.repeat(rt.vector("v"), rt.scalar("n", dtype="int64"))
    with pytest.raises(GraphTypeError, match="vstack: expected a non-empty list"):
        rt.vstack(rt.vector("v"))
