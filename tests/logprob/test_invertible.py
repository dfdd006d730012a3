"""Densities of invertible elementwise transforms of draws (``rewritekit.logprob.invertible``)
against closed forms and scipy.stats, on both backends, with gradients."""

from __future__ import annotations

import functools

import numpy as np
import pytest
import scipy.special as sc
import scipy.stats as st

import rewritekit as rk
import rewritekit.logprob as rl
import rewritekit.random as rr
import rewritekit.tensor as rt
from rewritekit.errors import GraphTypeError

K = rr.key()
S = (7,)
_, Z = rr.normal(K, 0.5, 1.3, size=S)
_, LN = rr.lognormal(K, 0.2, 0.7, size=S)
_, G = rr.gamma(K, 2.5, 1.5, size=S)
_, B = rr.beta(K, 2.0, 3.0, size=S)
_, U = rr.uniform(K, -1.0, 1.0, size=S)
NORM, GAMMA = st.norm(0.5, 1.3), st.gamma(2.5, scale=1.5)


def _square_ref(x):
    return np.logaddexp(NORM.logpdf(np.sqrt(x)), NORM.logpdf(-np.sqrt(x))) - np.log(2 * np.sqrt(x))


# name -> (transformed draw, reference log-density, points: tails, edges and outside)
CASES = {
    "log of lognormal": (rt.log(LN), st.norm(0.2, 0.7).logpdf, [-30.0, -3, 0, 0.5, 3, 30, 1e3]),
    "logit-normal": (
        rt.sigmoid(Z),
        lambda x: NORM.logpdf(sc.logit(x)) - np.log(x) - np.log1p(-x),
        [1e-300, 0.1, 0.5, 0.99, 1 - 1e-12, -0.5, 1.5],
    ),
    "folded normal": (
        rt.abs(Z),
        lambda x: st.foldnorm(0.5 / 1.3, scale=1.3).logpdf(x),
        [0.0, 0.3, 2.0, 10.0, 40.0, -1.0, 1.0],
    ),
    "square of normal": (rt.square(Z), _square_ref, [0.01, 1.0, 5.0, 400.0, -1.0, 2.0, 3.0]),
    "even power": (
        Z**2,
        lambda x: st.ncx2(1, (0.5 / 1.3) ** 2, scale=1.3**2).logpdf(x),
        [0.01, 1.0, 5.0, 100.0, -1.0, 3.0, 4.0],
    ),
    "odd power": (
        Z**3,
        lambda x: NORM.logpdf(np.cbrt(x)) - np.log(3) - 2 / 3 * np.log(np.abs(x)),
        [-8.0, -0.1, 0.2, 27.0, 1e6, 2.0, 3.0],
    ),
    "reciprocal of gamma": (
        rt.reciprocal(G),
        st.invgamma(2.5, scale=1 / 1.5).logpdf,
        [0.01, 0.5, 3.0, 1e3, -1.0, 2.0, 4.0],
    ),
    "sqrt of gamma": (
        rt.sqrt(G),
        lambda x: GAMMA.logpdf(x**2) + np.log(2 * x),
        [0.1, 1.0, 4.0, 20.0, -1.0, 2.0, 3.0],
    ),
    "tanh of normal": (
        rt.tanh(Z),
        lambda x: NORM.logpdf(np.arctanh(x)) - np.log1p(-(x**2)),
        [-0.99, 0.0, 0.5, 1 - 1e-9, 1.0, 1.5, -2.0],
    ),
    "softplus of normal": (
        rt.softplus(Z),
        lambda x: NORM.logpdf(np.log(np.expm1(x))) - np.log(-np.expm1(-x)),
        [1e-8, 1.0, 30.0, 2.0, 0.0, -1.0, 5.0],
    ),
    "log1p of gamma": (
        rt.log1p(G),
        lambda x: GAMMA.logpdf(np.expm1(x)) + x,
        [0.1, 1.0, 3.0, 5.0, -1.0, 2.0, 4.0],
    ),
    "expm1 of normal": (
        rt.expm1(Z),
        lambda x: NORM.logpdf(np.log1p(x)) - np.log1p(x),
        [-0.5, 0.0, 3.0, 1e3, -1.0, -2.0, 5.0],
    ),
    "logit of beta": (
        rt.logit(B),
        # sigmoid(v)**2 sigmoid(-v)**3 / B(2, 3), B(2, 3) = 1/12: exact where expit rounds
        lambda x: np.log(12.0) + 2 * sc.log_expit(x) + 3 * sc.log_expit(-x),
        [-30.0, -5.0, 0.0, 5.0, 30.0, 1.0, 2.0],
    ),
    "arctanh of uniform": (
        rt.arctanh(U),
        lambda x: st.uniform(-1, 2).logpdf(np.tanh(x)) + np.log1p(-(np.tanh(x) ** 2)),
        [-3.0, 0.0, 3.0, 0.5, -0.5, 1.0, 2.0],
    ),
}


@functools.cache
def compiled(backend: str):
    values = [rt.vector(f"v{i}", shape=S) for i in range(len(CASES))]
    logps = [rl.logprob(y, v) for (y, _, _), v in zip(CASES.values(), values, strict=True)]
    return rk.function(values, logps, backend=backend)


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_every_transform_matches_its_closed_form(backend):
    points = [np.asarray(p, dtype=float) for _, _, p in CASES.values()]
    for (name, (_, ref, _)), x, got in zip(
        CASES.items(), points, compiled(backend)(*points), strict=True
    ):
        with np.errstate(all="ignore"):
            expected = ref(x)
        # the closed forms are NaN outside the image, where the density is -inf, never NaN
        assert not np.any(np.isnan(np.asarray(got))), name
        expected = np.where(np.isnan(expected), -np.inf, expected)
        np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-12, atol=1e-300, err_msg=name)


def test_gradients_in_the_value_match_finite_differences():
    v = rt.vector("v", shape=(3,))
    x = np.array([0.2, 0.5, 0.9])
    _, z = rr.normal(K, 0.5, 1.3, size=(3,))
    _, g = rr.gamma(K, 2.5, 1.5, size=(3,))
    for y in (rt.sigmoid(z), rt.abs(z), rt.reciprocal(g), rt.softplus(z)):
        logp = rl.logprob(y, v)
        f = rk.function([v], [logp, rk.grad(rt.sum(logp), v)], backend="numpy")
        _, grad = f(x)
        h = 1e-6
        numeric = [
            (f(x + h * e)[0] - f(x - h * e)[0])[i] / (2 * h) for i, e in enumerate(np.eye(3))
        ]
        np.testing.assert_allclose(grad, numeric, rtol=1e-6)


def test_transforms_compose_and_reach_the_affine_rules():
    v = rt.scalar("v")
    _, z = rr.normal(K, 0.0, 1.0)
    f = rk.function([v], rl.logprob(rt.log(2.0 * rt.exp(z) + 1.0), v), backend="numpy")
    # v = log(2 e^z + 1): z = log((e^v - 1) / 2), dz/dv = e^v / (e^v - 1)
    x = 1.3
    expected = st.norm.logpdf(np.log(np.expm1(x) / 2)) + x - np.log(np.expm1(x))
    assert np.isclose(f(x), expected, rtol=1e-12)


def test_a_discrete_draw_is_not_transformed_and_the_error_says_so():
    _, n = rr.poisson(K, 3.0)
    with pytest.raises(GraphTypeError, match="found no log-density for the log output"):
        rl.logprob(rt.log(n), rt.scalar("v"))
    _, z = rr.normal(K, 0.0, 1.0)
    with pytest.raises(GraphTypeError, match="found no log-density for the sin output"):
        rl.logprob(rt.sin(z), rt.scalar("v"))  # not invertible: no entry
