"""Mixtures: a draw chosen by an unvalued Bernoulli or categorical draw
(``rt.where(z, c1, c0)``, ``rt.stack(cs)[z]``, ``rt.stack(cs)[z, rt.arange(n)]``), against
mixture densities written by hand with scipy.stats, on both backends, with gradients
against finite differences; a valued index selects a component; and the forms that are not
mixtures of independent elements find no density.

The graph is compiled once per backend and called on a batch of points.
"""

from __future__ import annotations

import functools

import jax
import numpy as np
import pytest
import scipy.stats as st

import rewritekit as rk
import rewritekit.logprob as rl
import rewritekit.random as rr
import rewritekit.tensor as rt
from rewritekit.errors import GraphTypeError

TOL = {"rtol": 1e-10, "atol": 1e-300}
KEY = rr.key("key")
N = 12
NAMES = ("p", "loc0", "loc1", "scale1", "eta", "cat", "v")


@functools.cache
def _graph():
    ins = {n: rt.tensor(n, shape=(N, 3) if n == "cat" else (N,)) for n in NAMES}
    p, loc0, loc1, scale1, eta, cat, v = ins.values()
    k, z = rr.bernoulli(KEY, p)
    k, c0 = rr.normal(k, loc0, 1.0)
    k, c1 = rr.normal(k, loc1, scale1)
    k, by_logit = rr.bernoulli(k, logit=eta)
    k, by_sigmoid = rr.bernoulli(k, rt.sigmoid(eta))
    k, index = rr.categorical(k, cat)
    k, c2 = rr.exponential(k, scale1)
    mixture = rl.logprob(rt.where(z, c1, c0), v)
    outputs = [
        mixture,
        # components that are images of draws: a log-normal and a shifted normal
        rl.logprob(rt.where(by_logit, rt.exp(c1), c0 + 2.0), v),
        rl.logprob(rt.where(by_sigmoid, rt.exp(c1), c0 + 2.0), v),
        rl.logprob(rt.stack([c0, c1, c2])[index, rt.arange(N)], v),
        *rk.grad(rt.sum(mixture), [p, loc0, scale1]),
    ]
    return list(ins.values()), outputs


@functools.cache
def _fn(backend):
    inputs, outputs = _graph()
    return rk.function(inputs, outputs if backend == "numpy" else outputs[:4], backend=backend)


@functools.cache
def _points():
    rng = np.random.default_rng(0)
    values = [
        np.concatenate([[0.0, 1.0], rng.uniform(0.05, 0.95, N - 2)]),  # p at both ends too
        rng.uniform(-2, 2, N),
        rng.uniform(1, 4, N),
        rng.uniform(0.5, 2, N),
        np.concatenate([[800.0, -800.0], rng.uniform(-3, 3, N - 2)]),
        rng.uniform(0.1, 1, (N, 3)),
        np.concatenate([[-1.0, 0.0], rng.uniform(-3, 6, N - 2)]),
    ]
    return dict(zip(NAMES, values, strict=True))


def _call(backend, points=None):
    args = list((points or _points()).values())
    if backend == "jax":
        with jax.enable_x64(True):
            return [np.asarray(r) for r in _fn("jax")(*args)]
    return _fn("numpy")(*args)


def _expected():
    p, loc0, loc1, scale1, eta, cat, v = _points().values()
    c0, c1 = st.norm(loc0, 1.0), st.norm(loc1, scale1)
    with np.errstate(divide="ignore"):
        mixture = np.logaddexp(np.log1p(-p) + c0.logpdf(v), np.log(p) + c1.logpdf(v))
        lognormal = st.lognorm(s=scale1, scale=np.exp(loc1)).logpdf(v)
    images = np.logaddexp(
        -np.logaddexp(0, eta) + c0.logpdf(v - 2.0), -np.logaddexp(0, -eta) + lognormal
    )
    w = cat / cat.sum(axis=1, keepdims=True)
    three = np.log(
        w[:, 0] * c0.pdf(v) + w[:, 1] * c1.pdf(v) + w[:, 2] * st.expon(scale=scale1).pdf(v)
    )
    return [mixture, images, images, three]


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_mixture_densities_match_scipy(backend):
    names = ("bernoulli", "logit", "sigmoid", "categorical")
    for name, got, expected in zip(names, _call(backend)[:4], _expected(), strict=True):
        np.testing.assert_allclose(got, expected, **TOL, err_msg=f"{backend} {name}")
    assert np.isfinite(_call(backend)[1][:2]).all()  # at logit +-800: exact, not log(0)


def test_gradients_match_finite_differences():
    results = _call("numpy")
    h = 1e-6
    for name, grad in zip(("p", "loc0", "scale1"), results[4:7], strict=True):
        up, down = dict(_points()), dict(_points())
        up[name], down[name] = _points()[name] + h, _points()[name] - h
        numeric = (_call("numpy", up)[0] - _call("numpy", down)[0]) / (2 * h)
        inside = slice(2, None) if name == "p" else slice(None)  # p = 0 and 1: one-sided
        np.testing.assert_allclose(grad[inside], numeric[inside], rtol=1e-5, atol=1e-8)


def test_scalar_components_indexed_by_a_scalar_draw():
    k, index = rr.categorical(KEY, np.array([0.2, 0.5, 0.3]))
    k, a = rr.normal(k, 0.0, 1.0)
    k, b = rr.normal(k, 3.0, 0.5)
    k, c = rr.cauchy(k, -1.0, 2.0)
    value = rt.scalar("v")
    f = rk.function([value], rl.logprob(rt.stack([a, b, c])[index], value), backend="numpy")
    at = np.array([-2.0, 0.1, 3.2])
    got = [float(f(x)) for x in at]
    dens = 0.2 * st.norm.pdf(at) + 0.5 * st.norm(3, 0.5).pdf(at) + 0.3 * st.cauchy(-1, 2).pdf(at)
    np.testing.assert_allclose(got, np.log(dens), **TOL)


def test_a_valued_index_selects_a_component():
    k, z = rr.bernoulli(KEY, 0.3, size=(3,))
    k, c0 = rr.normal(k, 0.0, 1.0, size=(3,))
    k, c1 = rr.normal(k, 5.0, 2.0, size=(3,))
    mixture = rt.where(z, c1, c0)
    z_obs, m_obs = np.array([0, 1, 1]), np.array([0.5, 4.0, 6.0])
    f = rk.function([], rl.joint_logprob({z: z_obs, mixture: m_obs}), backend="numpy")
    chosen = np.where(z_obs == 1, st.norm(5, 2).logpdf(m_obs), st.norm.logpdf(m_obs))
    expected = st.bernoulli(0.3).logpmf(z_obs).sum() + chosen.sum()
    np.testing.assert_allclose(f(), expected, **TOL)


def test_mixture_weights_that_are_valued_draws():
    k, p = rr.beta(KEY, 2.0, 2.0)
    k, z = rr.bernoulli(k, p, size=(2,))
    k, c0 = rr.normal(k, 0.0, 1.0, size=(2,))
    k, c1 = rr.normal(k, 3.0, 1.0, size=(2,))
    mixture = rt.where(z, c1, c0)
    p_v, m_obs = rt.scalar("p"), np.array([0.2, 2.5])
    f = rk.function([p_v], rl.joint_logprob({p: p_v, mixture: m_obs}), backend="numpy")
    mixed = np.logaddexp(
        np.log(0.6) + st.norm.logpdf(m_obs), np.log(0.4) + st.norm(3).logpdf(m_obs)
    )
    np.testing.assert_allclose(f(0.4), st.beta(2, 2).logpdf(0.4) + mixed.sum(), **TOL)
    with pytest.raises(GraphTypeError, match="found no log-density for the where output"):
        rl.logprob(mixture, rt.vector("v"))  # p has no value: z's weights hold a draw


def _no_density(x, match="found no log-density"):
    with pytest.raises(GraphTypeError, match=match):
        rl.logprob(x, rt.tensor("v", shape=x.type.shape))


def test_an_unbounded_index_is_not_a_mixture():
    k, n = rr.poisson(KEY, 1.0, size=(3,))
    k, c0 = rr.normal(k, 0.0, 1.0, size=(3,))
    k, c1 = rr.normal(k, 3.0, 1.0, size=(3,))
    _no_density(rt.where(n, c1, c0), "found no log-density for the where output")
    _no_density(rt.stack([c0, c1])[n, rt.arange(3)], "found no log-density for the getitem output")


def test_a_categorical_over_other_than_the_components_is_not_a_mixture():
    k, index = rr.categorical(KEY, np.full(4, 0.25))
    k, a = rr.normal(k, 0.0, 1.0)
    k, b = rr.normal(k, 3.0, 1.0)
    _no_density(rt.stack([a, b])[index])


def test_shared_draws_are_not_an_elementwise_mixture():
    k, z = rr.bernoulli(KEY, 0.5, size=(3,))
    k, c0 = rr.normal(k, 0.0, 1.0)  # one draw for every element: they are dependent
    k, c1 = rr.normal(k, 3.0, 1.0)
    _no_density(rt.where(z, c1, c0))
    k, zs = rr.bernoulli(k, 0.5)
    k, v0 = rr.normal(k, 0.0, 1.0, size=(3,))
    k, v1 = rr.normal(k, 3.0, 1.0, size=(3,))
    _no_density(rt.where(zs, v1, v0))  # one index for the whole vector
    k, index = rr.categorical(k, np.full(2, 0.5), size=(3,))
    _no_density(rt.stack([c0, c1])[index])


def test_a_component_that_reads_the_index_is_not_a_mixture():
    k, z = rr.bernoulli(KEY, 0.5)
    k, c0 = rr.normal(k, 0.0, 1.0)
    k, c1 = rr.normal(k, rt.cast(z, "float64") * 2.0, 1.0)
    _no_density(rt.where(z, c1, c0))
