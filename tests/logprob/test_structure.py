"""Order statistics and structure of draws (``rewritekit.logprob.structure``): max and min of
i.i.d. draws, cumsum, reshape, transpose and static indexing, against scipy.stats and
closed forms on both backends, tails and support edges included, with gradients and the
refusals."""

from __future__ import annotations

import functools

import numpy as np
import pytest
import scipy.special as sc
import scipy.stats as st
from hypothesis import given, settings
from hypothesis import strategies as hs

import rewritekit as rk
import rewritekit.logprob as rl
import rewritekit.random as rr
import rewritekit.tensor as rt
from rewritekit.errors import GraphTypeError

K = rr.key()
NORM, POIS = st.norm(0.5, 1.3), st.poisson(3.0)
LOCS = np.linspace(-1.0, 1.0, 7)
REALS = np.array([-40.0, -3.0, 0.0, 0.5, 2.0, 8.0, 40.0])
COUNTS = np.array([-1, 0, 1, 3, 10, 40, 2])
MVN_COV = np.array([[1.0, 0.3], [0.3, 0.5]])
MVN = st.multivariate_normal([0.2, -0.1], MVN_COV)


def _max_ref(dist, n):
    return lambda x: np.log(n) + (n - 1) * dist.logcdf(x) + dist.logpdf(x)


def _discrete_max_ref(dist, n, smallest=False):
    """log P(max = k) as sum_j C(n, j) pmf(k)^j F(k - 1)^(n - j) (for the min: S(k) in place
    of F(k - 1)): F(k)^n - F(k - 1)^n without the cancellation."""

    def ref(k):
        other = dist.logsf(k) if smallest else dist.logcdf(k - 1)
        j = np.arange(1, n + 1)[:, None]
        rest = np.where(j == n, 0.0, (n - j) * other)  # F(k - 1)^0 = 1 where F(k - 1) = 0
        terms = np.log(sc.comb(n, j)) + j * dist.logpmf(k) + rest
        return sc.logsumexp(terms, axis=0)

    return ref


_, NORMALS = rr.normal(K, 0.5, 1.3, size=(5, 7))
_, BY_COLUMN = rr.normal(K, LOCS, 1.3, size=(4, 7))  # loc varies along the kept axis
_, CUBE = rr.normal(K, LOCS[:, None], 1.3, size=(2, 7, 3))  # loc (7, 1): constant on 0, 2
_, EXPS = rr.exponential(K, 2.0, size=(7, 3))
_, POISSONS = rr.poisson(K, 3.0, size=(6, 7))
_, GEOMS = rr.geometric(K, 0.3, size=(4, 7))
_, WALK = rr.normal(K, 0.3, 1.3, size=(7,))
_, WALKS = rr.multivariate_normal(K, [0.2, -0.1], MVN_COV, size=(3,))
_, GRID = rr.normal(K, np.arange(6.0).reshape(2, 3), 1.0)
_, MVN_GRID = rr.multivariate_normal(K, [0.2, -0.1], MVN_COV, size=(2, 3))
_, VEC = rr.normal(K, LOCS, 1.3)
_, SIZED = rr.normal(K, 0.5, 1.3, size=(7,))
_, MATRIX = rr.normal(K, LOCS, 1.3, size=(2, 7))
LOGITS = np.array([40.0, -40.0, 0.3, 2.0])
_, COINS = rr.bernoulli(K, rt.sigmoid(LOGITS))
_, MVNS = rr.multivariate_normal(K, [0.2, -0.1], MVN_COV, size=(3,))

MVN_POINTS = np.array([[0.1, 0.3], [1.2, -0.4], [0.0, 2.0]])
GRID_POINTS = np.linspace(-2.0, 7.0, 6).reshape(2, 3)
_GRID_REF = st.norm(np.arange(6.0).reshape(2, 3), 1.0)

# name -> (graph, value, reference of the value)
CASES = {
    "max of 5 normals": (rt.max(NORMALS, axis=0), REALS, _max_ref(NORM, 5)),
    "max along a kept varying loc": (
        rt.max(BY_COLUMN, axis=-2),
        REALS / 10,
        _max_ref(st.norm(LOCS, 1.3), 4),
    ),
    "max over two axes": (
        rt.max(CUBE, axis=(0, 2)),
        REALS / 10,
        _max_ref(st.norm(LOCS, 1.3), 6),
    ),
    "min of exponentials": (
        rt.min(EXPS, axis=1),
        np.array([-1.0, 0.0, 1e-300, 0.5, 3.0, 50.0, 700.0]),
        st.expon(scale=2.0 / 3).logpdf,
    ),
    "min keepdims": (
        rt.min(EXPS, axis=1, keepdims=True),
        np.array([[0.0], [0.5], [3.0], [-1.0], [1.0], [2.0], [9.0]]),
        st.expon(scale=2.0 / 3).logpdf,
    ),
    "max of all": (rt.max(NORMALS), np.array(1.5), _max_ref(NORM, 35)),
    "max of poissons": (rt.max(POISSONS, axis=0), COUNTS, _discrete_max_ref(POIS, 6)),
    "min of poissons": (rt.min(POISSONS, axis=0), COUNTS, _discrete_max_ref(POIS, 6, True)),
    "min of geometrics": (
        rt.min(GEOMS, axis=0),
        np.array([-1, 0, 1, 2, 5, 30, 200]),
        st.geom(1 - 0.7**4).logpmf,
    ),
    "random walk": (
        rt.cumsum(WALK),
        np.array([0.1, 0.5, -1.0, 2.0, 30.0, -5.0, -5.0]),
        lambda v: st.norm(0.3, 1.3).logpdf(np.diff(v, prepend=0.0)),
    ),
    "random walk of an image": (
        rt.cumsum(rt.exp(WALK)),
        np.array([0.1, 0.5, 0.4, 2.0, 30.0, 31.0, 40.0]),
        lambda v: st.lognorm(1.3, scale=np.exp(0.3)).logpdf(np.diff(v, prepend=0.0)),
    ),
    "multivariate walk": (
        rt.cumsum(WALKS, axis=0),
        MVN_POINTS,
        lambda v: MVN.logpdf(np.diff(v, axis=0, prepend=0.0)),
    ),
    "reshape": (
        rt.reshape(GRID, (3, 2)),
        GRID_POINTS.reshape(3, 2),
        lambda v: _GRID_REF.logpdf(v.reshape(2, 3)).reshape(3, 2),
    ),
    "flatten": (
        rt.reshape(GRID, (6,)),
        GRID_POINTS.ravel(),
        lambda v: _GRID_REF.logpdf(v.reshape(2, 3)).ravel(),
    ),
    "transpose": (GRID.T, GRID_POINTS.T, lambda v: _GRID_REF.logpdf(v.T).T),
    "swapaxes of a multivariate": (
        rt.swapaxes(MVN_GRID, 0, 1),
        np.linspace(-1, 1, 12).reshape(3, 2, 2),
        lambda v: MVN.logpdf(v),
    ),
    "x[2]": (VEC[2], np.array(0.3), st.norm(LOCS[2], 1.3).logpdf),
    "x[1:4] of a sized draw": (SIZED[1:4], REALS[1:4], NORM.logpdf),
    "x[::2]": (VEC[::2], REALS[::2] / 10, st.norm(LOCS[::2], 1.3).logpdf),
    "x[None]": (VEC[None], REALS[None] / 10, lambda v: st.norm(LOCS, 1.3).logpdf(v[0])[None]),
    "x[:, 0]": (MATRIX[:, 0], np.array([0.1, -0.2]), st.norm(LOCS[0], 1.3).logpdf),
    "x[[5, 0, 2]]": (VEC[[5, 0, 2]], REALS[:3] / 10, st.norm(LOCS[[5, 0, 2]], 1.3).logpdf),
    "bernoulli-logit indexed": (
        COINS[:3],
        np.array([0, 1, 1]),
        lambda k: sc.log_expit(np.where(k == 1, 1, -1) * LOGITS[:3]),  # exact at |z| = 40
    ),
    "multivariate indexed": (MVNS[1], MVN_POINTS[1], MVN.logpdf),
}


@functools.cache
def compiled(backend):
    values = [
        rt.tensor(f"v{i}", shape=np.shape(p), dtype=np.asarray(p).dtype.name)
        for i, (_, p, _) in enumerate(CASES.values())
    ]
    logps = [rl.logprob(y, v) for (y, _, _), v in zip(CASES.values(), values, strict=True)]
    return rk.function(values, logps, backend=backend)


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_every_structure_matches_its_reference(backend):
    got = compiled(backend)(*[p for _, p, _ in CASES.values()])
    for (name, (_, points, ref)), value in zip(CASES.items(), got, strict=True):
        with np.errstate(all="ignore"):
            expected = np.nan_to_num(ref(points), nan=-np.inf, posinf=np.inf, neginf=-np.inf)
        value = np.asarray(value)
        assert not np.any(np.isnan(value)), name
        assert value.shape == np.shape(expected), name
        np.testing.assert_allclose(value, expected, rtol=1e-10, atol=1e-300, err_msg=name)


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_gradients_match_finite_differences(backend):
    loc, v = rt.scalar("loc"), rt.vector("v", shape=(3,))
    _, x = rr.normal(K, loc, 1.3, size=(4, 3))
    _, e = rr.exponential(K, 2.0, size=(3, 5))
    _, w = rr.normal(K, loc, 1.3, size=(3,))
    logp = rt.sum(
        rl.logprob(rt.max(x, axis=0), v)
        + rl.logprob(rt.min(e, axis=1), v)
        + rl.logprob(rt.cumsum(w), v)
        + rl.logprob(x[1], v)
    )
    compiled = rk.function([loc, v], [logp, *rk.grad(logp, [loc, v])], backend=backend)

    def f(*args):
        return [np.asarray(out) for out in compiled(*args)]  # NumPy's float64 arithmetic

    at, points, h = 0.3, np.array([0.2, 0.9, 1.7]), 1e-6
    _, g_loc, g_v = f(at, points)
    numeric_loc = (f(at + h, points)[0] - f(at - h, points)[0]) / (2 * h)
    numeric_v = [(f(at, points + h * d)[0] - f(at, points - h * d)[0]) / (2 * h) for d in np.eye(3)]
    np.testing.assert_allclose(g_loc, numeric_loc, rtol=1e-6)
    np.testing.assert_allclose(g_v, numeric_v, rtol=1e-6)


def test_a_random_walk_with_a_drawn_drift_in_a_joint_density():
    k, drift = rr.normal(K, 0.0, 1.0)
    _, steps = rr.normal(k, drift, 0.5, size=(5,))
    drift_v, walk_v = rt.scalar("drift"), rt.vector("walk")
    logp = rl.joint_logprob({drift: drift_v, rt.cumsum(steps): walk_v})
    f = rk.function([drift_v, walk_v], logp, backend="numpy")
    walk = np.array([0.3, 0.1, 1.2, 1.0, 2.5])
    expected = st.norm.logpdf(0.4) + st.norm(0.4, 0.5).logpdf(np.diff(walk, prepend=0.0)).sum()
    np.testing.assert_allclose(f(0.4, walk), expected, rtol=1e-12)


def test_the_mixture_form_stays_a_mixture():
    _, z = rr.bernoulli(K, 0.3)
    _, a0 = rr.normal(K, 0.0, 1.0)
    _, a1 = rr.normal(K, 3.0, 0.5)
    v = rt.scalar("v")
    f = rk.function([v], rl.logprob(rt.stack([a0, a1])[z], v), backend="numpy")
    expected = np.log(0.7 * st.norm.pdf(1.0) + 0.3 * st.norm(3.0, 0.5).pdf(1.0))
    np.testing.assert_allclose(f(1.0), expected, rtol=1e-12)


@functools.cache
def _of_m_draws():
    m, v = rt.scalar("m", dtype="int64"), rt.vector("v")
    _, x = rr.normal(K, 0.5, 1.3, size=(m, 4))
    _, n = rr.poisson(K, 3.0, size=(4, m))
    k = rt.vector("k", dtype="int64")
    flat = rt.vector("flat")
    outputs = [
        rl.logprob(rt.max(x, axis=0), v),
        rl.logprob(rt.min(n, axis=1), k),
        rl.logprob(rt.reshape(x, (-1,)), flat),
        rl.logprob(x[-1], v),
    ]
    return rk.function([m, v, k, flat], outputs, backend="numpy")


@settings(max_examples=15, deadline=None)
@given(
    m=hs.integers(1, 8),
    points=hs.lists(hs.floats(-30.0, 30.0), min_size=4, max_size=4),
    counts=hs.lists(hs.integers(-2, 30), min_size=4, max_size=4),
)
def test_a_run_time_count_of_draws_matches_scipy(m, points, counts):
    points, counts = np.array(points), np.array(counts)
    got_max, got_min, got_flat, got_last = _of_m_draws()(m, points, counts, np.tile(points, m))
    with np.errstate(all="ignore"):
        expected_min = _discrete_max_ref(POIS, m, True)(counts)
    np.testing.assert_allclose(got_max, _max_ref(NORM, m)(points), rtol=1e-10)
    np.testing.assert_allclose(got_min, expected_min, rtol=1e-10)
    np.testing.assert_allclose(got_flat, NORM.logpdf(np.tile(points, m)), rtol=1e-12)
    np.testing.assert_allclose(got_last, NORM.logpdf(points), rtol=1e-12)


def test_the_standard_rule_set_lists_the_structure_rules():
    names = {r.name for r in rl.structure.rules}
    assert names == {"max", "min", "cumsum", "reshape", "transpose", "indexed_draw"}


@pytest.mark.parametrize(
    "graph",
    [
        pytest.param(lambda: rt.max(BY_COLUMN, axis=1), id="loc varies along the max"),
        pytest.param(lambda: rt.min(CUBE, axis=1), id="loc varies along the min"),
        pytest.param(lambda: rt.max(rt.exp(NORMALS), axis=0), id="max of an image"),
        pytest.param(lambda: rt.max(MVN_GRID, axis=0), id="max of a multivariate"),
        pytest.param(lambda: VEC[rr.categorical(K, np.ones(7) / 7)[1]], id="index holds a draw"),
        pytest.param(lambda: VEC[[1, 1]], id="a repeated index"),
        pytest.param(lambda: MVN_GRID[..., 0], id="index of a core axis"),
        pytest.param(lambda: rt.transpose(MVN_GRID, (2, 0, 1)), id="transpose moves a core axis"),
        pytest.param(lambda: rt.reshape(MVN_GRID, (6, 2)), id="reshape of a multivariate"),
    ],
)
def test_refusals_say_no_density_was_found(graph):
    y = graph()
    value = rt.tensor("v", shape=(None,) * y.ndim, dtype=y.dtype)
    with pytest.raises(GraphTypeError, match="found no log-density"):
        rl.logprob(y, value)
