"""Densities of joins of draws (concatenate, stack) and of affine maps of multivariate
normal draws (``rewritekit.logprob.joins``), and the core-axis Jacobian of scalings and
invertible maps of multivariate draws (``measurable``), against scipy.stats on both
backends, with gradients and the refusals."""

from __future__ import annotations

import functools

import numpy as np
import pytest
import scipy.special as sc
import scipy.stats as st
from hypothesis import assume, given, settings
from hypothesis import strategies as hs

import rewritekit as rk
import rewritekit.logprob as rl
import rewritekit.random as rr
import rewritekit.tensor as rt
from rewritekit.errors import GraphTypeError

K = rr.key()
MEAN = np.array([1.0, -1.0, 0.5])
COV = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, 0.2], [0.1, 0.2, 0.5]])
A = np.array([[1.0, 2.0, 0.0], [0.5, -1.0, 3.0]])  # (2, 3), full row rank
B = A.T  # (3, 2)
SHIFT = np.array([0.5, -2.0, 3.0])
SCALE = np.array([1.0, -2.0, 0.5])
ALPHA = np.array([2.0, 3.0, 4.0])

_, X = rr.normal(K, 0.5, 1.3, size=(2,))
_, Z = rr.normal(K, -0.3, 0.8, size=(3,))
_, X2 = rr.normal(K, 0.0, 1.0, size=(2, 2))
_, W2 = rr.normal(K, np.array([1.0, 2.0, 3.0]), 2.0, size=(2, 3))
_, N0 = rr.normal(K, 0.0, 1.0, size=(3,))
_, N1 = rr.normal(K, 1.0, 2.0, size=(3,))
_, M = rr.multivariate_normal(K, MEAN, COV)
_, M2 = rr.multivariate_normal(K, -MEAN, 2.0 * COV)
_, MB = rr.multivariate_normal(K, MEAN, COV, size=(2,))
_, D = rr.dirichlet(K, ALPHA)


def _mvn(mean, cov):
    return st.multivariate_normal(mean, cov).logpdf


def _rows(*refs):
    return lambda v: np.stack([ref(row) for ref, row in zip(refs, v, strict=True)])


def _columns(*refs):
    return lambda v: np.stack([ref(col) for ref, col in zip(refs, v.T, strict=True)], axis=1)


_LOGNORM = st.lognorm(0.8, scale=np.exp(-0.3)).logpdf
_NORM = st.norm(0.5, 1.3).logpdf
_SCALED = np.diag(SCALE)

# name -> (random quantity, reference log-density, [central points, points in the tails])
CASES = {
    "concatenate a normal and a log-normal": (
        rt.concatenate([X, rt.exp(Z)]),
        lambda v: np.concatenate([_NORM(v[:2]), _LOGNORM(v[2:])]),
        [[0.1, -3.0, 0.5, -1.0, 2.0], [-40.0, 35.0, 1e-8, 1.0, 300.0]],
    ),
    "concatenate along axis 1": (
        rt.concatenate([X2, W2], axis=1),
        lambda v: np.concatenate(
            [st.norm.logpdf(v[:, :2]), st.norm([1.0, 2.0, 3.0], 2.0).logpdf(v[:, 2:])], axis=1
        ),
        [np.linspace(-2, 3, 10).reshape(2, 5), np.linspace(-60, 90, 10).reshape(2, 5)],
    ),
    "stack on axis 0": (
        rt.stack([N0, N1]),
        _rows(st.norm.logpdf, st.norm(1.0, 2.0).logpdf),
        [np.linspace(-2, 3, 6).reshape(2, 3), np.linspace(-60, 90, 6).reshape(2, 3)],
    ),
    "stack on axis 1": (
        rt.stack([N0, N1], axis=1),
        _columns(st.norm.logpdf, st.norm(1.0, 2.0).logpdf),
        [np.linspace(-2, 3, 6).reshape(3, 2), np.linspace(-60, 90, 6).reshape(3, 2)],
    ),
    "stack of multivariate normals": (
        rt.stack([M, M2]),
        _rows(_mvn(MEAN, COV), _mvn(-MEAN, 2.0 * COV)),
        [[[1.0, 0.0, 0.3], [-1.0, 1.0, 0.0]], [[30.0, -25.0, 40.0], [-50.0, 0.0, 20.0]]],
    ),
    "A @ x": (A @ M, _mvn(A @ MEAN, A @ COV @ A.T), [[0.3, 0.7], [60.0, -80.0]]),
    "dot(A, x)": (rt.dot(A, M), _mvn(A @ MEAN, A @ COV @ A.T), [[0.3, 0.7], [60.0, -80.0]]),
    "x @ B, batched x": (
        MB @ B,
        _mvn(MEAN @ B, B.T @ COV @ B),
        [[[0.3, 0.7], [-1.0, 2.0]], [[60.0, -80.0], [1e3, 0.0]]],
    ),
    "dot(x, B)": (rt.dot(M, B), _mvn(MEAN @ B, B.T @ COV @ B), [[0.3, 0.7], [60.0, -80.0]]),
    "x + b": (M + SHIFT, _mvn(MEAN + SHIFT, COV), [[1.0, 0.0, 3.0], [40.0, -30.0, 50.0]]),
    "b + x": (SHIFT + M, _mvn(MEAN + SHIFT, COV), [[1.0, 0.0, 3.0], [40.0, -30.0, 50.0]]),
    "x - b": (M - SHIFT, _mvn(MEAN - SHIFT, COV), [[1.0, 0.0, 3.0], [40.0, -30.0, 50.0]]),
    # the scalings' log-Jacobians are summed over the core axis: K log|c| for a scalar c
    "2 x": (2.0 * M, _mvn(2.0 * MEAN, 4.0 * COV), [[2.0, -2.0, 1.0], [80.0, -60.0, 30.0]]),
    "c x": (
        SCALE * M,
        _mvn(SCALE * MEAN, _SCALED @ COV @ _SCALED),
        [[2.0, -2.0, 1.0], [80.0, -60.0, 30.0]],
    ),
    "x / 2": (M / 2.0, _mvn(MEAN / 2.0, COV / 4.0), [[0.5, -0.5, 0.2], [20.0, -15.0, 8.0]]),
    "sigmoid(x)": (
        rt.sigmoid(M),
        lambda v: _mvn(MEAN, COV)(sc.logit(v)) - np.sum(np.log(v) + np.log1p(-v)),
        [[0.7, 0.2, 0.6], [1e-10, 0.5, 1.5]],  # 1.5: outside the image
    ),
    "exp(dirichlet)": (
        rt.exp(D),
        lambda v: st.dirichlet(ALPHA).logpdf(np.log(v)) - np.sum(np.log(v)),
        [np.exp([0.2, 0.3, 0.5]), np.exp([1e-8, 0.4, 0.6 - 1e-8])],
    ),
}


@functools.cache
def compiled(backend: str):
    values = [
        rt.tensor(f"v{i}", shape=np.shape(points[0]))
        for i, (_, _, points) in enumerate(CASES.values())
    ]
    logps = [rl.logprob(y, v) for (y, _, _), v in zip(CASES.values(), values, strict=True)]
    return rk.function(values, logps, backend=backend)


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_every_join_and_affine_map_matches_scipy(backend):
    for which in (0, 1):
        points = [np.asarray(p[which], dtype=float) for _, _, p in CASES.values()]
        for (name, (_, ref, _)), x, got in zip(
            CASES.items(), points, compiled(backend)(*points), strict=True
        ):
            with np.errstate(all="ignore"):
                expected = np.asarray(ref(x), dtype=float)
            expected = np.where(np.isnan(expected), -np.inf, expected)
            got = np.asarray(got)
            assert got.shape == expected.shape, name
            np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-300, err_msg=name)


def test_a_draw_of_unknown_length_takes_what_the_others_leave():
    n = rt.scalar("n", dtype="int64")
    _, d1 = rr.normal(K, 0.0, 1.0, size=(n,))
    _, d2 = rr.normal(K, 1.0, 2.0, size=(n + 1,))
    _, d3 = rr.normal(K, 2.0, 1.0, size=(2,))
    _, d4 = rr.normal(K, 1.0, 0.5, size=(2,))
    v = rt.vector("v")
    joins = [[d3, d1, rt.exp(d4 + 5.0)], [d1, d2]]  # one unknown length; two, from the sizes
    f = rk.function([v, n], [rl.logprob(rt.concatenate(p), v) for p in joins], backend="numpy")
    x = np.linspace(-3.0, 4.0, 7)
    one, two = f(x, 3)
    expected = [
        st.norm(2, 1).logpdf(x[:2]),
        st.norm.logpdf(x[2:5]),
        st.lognorm(0.5, scale=np.exp(6.0)).logpdf(x[5:]),
    ]
    np.testing.assert_allclose(one, np.concatenate(expected), rtol=1e-12)
    expected = [st.norm.logpdf(x[:3]), st.norm(1, 2).logpdf(x[3:])]
    np.testing.assert_allclose(two, np.concatenate(expected), rtol=1e-12)


def test_gradients_of_a_concatenation_match_finite_differences():
    v = rt.vector("v", shape=(5,))
    logp = rl.logprob(rt.concatenate([X, rt.exp(Z)]), v)
    f = rk.function([v], [logp, rk.grad(rt.sum(logp), v)], backend="numpy")
    x = np.array([0.1, -3.0, 0.5, 1.2, 2.0])
    _, grad = f(x)
    h = 1e-6
    numeric = [(f(x + h * e)[0] - f(x - h * e)[0])[i] / (2 * h) for i, e in enumerate(np.eye(5))]
    np.testing.assert_allclose(grad, numeric, rtol=1e-6)


@functools.cache
def affine():
    """logprob(A @ x, v) with A and v inputs, and its gradients in both."""
    a, v = rt.matrix("A", shape=(2, 3)), rt.vector("v", shape=(2,))
    logp = rl.logprob(a @ M, v)
    return rk.function([a, v], [logp, *rk.grad(logp, [a, v])], backend="numpy")


def test_gradients_of_a_times_x_match_finite_differences():
    f, x, h = affine(), np.array([0.3, 0.7]), 1e-6
    _, grad_a, grad_v = f(A, x)
    numeric_v = [(f(A, x + h * e)[0] - f(A, x - h * e)[0]) / (2 * h) for e in np.eye(2)]
    np.testing.assert_allclose(grad_v, numeric_v, rtol=1e-6)
    steps = np.eye(6).reshape(6, 2, 3)
    numeric_a = [(f(A + h * e, x)[0] - f(A - h * e, x)[0]) / (2 * h) for e in steps]
    np.testing.assert_allclose(grad_a, np.reshape(numeric_a, (2, 3)), rtol=1e-5)


@settings(max_examples=15, deadline=None)
@given(
    hs.lists(hs.floats(-3, 3), min_size=6, max_size=6),
    hs.lists(hs.floats(-50, 50), min_size=2, max_size=2),
)
def test_a_times_x_is_the_mapped_normal_for_any_full_rank_a(entries, point):
    a = np.reshape(entries, (2, 3))
    cov = a @ COV @ a.T
    assume(np.linalg.cond(cov) < 1e6 and np.linalg.det(cov) > 1e-3)
    got = affine()(a, np.asarray(point))[0]
    np.testing.assert_allclose(got, _mvn(a @ MEAN, cov)(point), rtol=1e-8)


def test_a_concatenation_valued_in_a_joint_density():
    k, mu = rr.normal(K, 0.0, 1.0)
    k, x = rr.normal(k, mu, 1.0, size=(2,))
    k, y = rr.normal(k, mu, 2.0, size=(3,))
    m, v = rt.scalar("m"), rt.vector("v", shape=(5,))
    f = rk.function([m, v], rl.joint_logprob({mu: m, rt.concatenate([x, y]): v}), backend="numpy")
    point = np.array([0.3, -1.0, 2.0, 5.0, -7.0])
    expected = (
        st.norm.logpdf(0.4)
        + st.norm(0.4, 1.0).logpdf(point[:2]).sum()
        + st.norm(0.4, 2.0).logpdf(point[2:]).sum()
    )
    assert np.isclose(f(0.4, point), expected, rtol=1e-12)


_, _Y = rr.normal(K, 0.0, 1.0, size=(2,))
_, _CHILD = rr.normal(K, X, 1.0)  # reads X through its mean
_, _RANDOM_A = rr.normal(K, 0.0, 1.0, size=(2, 3))
REFUSED = {
    "one draw twice": rt.concatenate([X, X + _Y]),
    "a part reads another": rt.concatenate([X, _CHILD]),
    "along a core axis": rt.concatenate([M, M2]),
    "stack along a core axis": rt.stack([M, M2], axis=1),
    "a random matrix": _RANDOM_A @ M,
    "a singular covariance": np.ones((4, 3)) @ M,
    "a batched x on the left": np.ones((1, 2)) @ MB,
    "a value of another static length": rt.concatenate([X, Z]),
}


@pytest.mark.parametrize("name", list(REFUSED))
def test_dependent_parts_core_axes_and_random_matrices_are_refused(name):
    quantity = REFUSED[name]
    shape = (6,) if name == "a value of another static length" else quantity.type.shape
    with pytest.raises(GraphTypeError, match="found no log-density"):
        rl.logprob(quantity, rt.tensor("v", shape=shape))


def test_scaling_a_multivariate_draw_counts_the_jacobian_on_every_coordinate():
    # the log-Jacobian of 2 x is 3 log 2 for a 3-vector x, not the elementwise log 2
    v = rt.vector("v", shape=(3,))
    f = rk.function([v], rl.logprob(2.0 * M, v), backend="numpy")
    for point in ([2.0, -2.0, 1.0], [0.0, 0.0, 0.0], [80.0, -60.0, 30.0]):
        expected = st.multivariate_normal(2.0 * MEAN, 4.0 * COV).logpdf(point)
        assert np.isclose(f(np.array(point)), expected, rtol=1e-12)


def test_two_independent_draws_of_one_distribution_stack_as_two():
    """Each draw ``logprob`` sees gets its own stand-in key: ``stack([a, b])`` of two
    standard normals drawn from different keys is their product density, while the same
    draw twice stays refused."""
    k, a = rr.normal(K, 0.0, 1.0)
    _, b = rr.normal(k, 0.0, 1.0)
    v = rt.vector("v", shape=(2,))
    f = rk.function([v], rl.logprob(rt.stack([a, b]), v), backend="numpy")
    np.testing.assert_allclose(f(np.array([0.5, -30.0])), st.norm.logpdf([0.5, -30.0]))
    with pytest.raises(GraphTypeError, match="no log-density"):
        rl.logprob(rt.stack([a, a]), v)
