"""Densities of composite random variables (``rr.custom``): derived from the sampling
graph, or the author's ``logp``/``logcdf``; the built-in half-normal and log-normal, which
are composites, stay exact."""

from __future__ import annotations

import jax
import numpy as np
import pytest
import scipy.stats as st
from hypothesis import given, settings
from hypothesis import strategies as hst

import rewritekit as rk
import rewritekit.logprob as rl
import rewritekit.random as rr
import rewritekit.tensor as rt
from rewritekit.errors import GraphTypeError

KEY = rr.key()
BACKENDS = ["numpy", "jax"]


def _folded(key, loc, scale):
    key, z = rr.normal(key, loc, scale)
    return key, rt.abs(z)


def _walk(key, mu):
    key, steps = rr.normal(key, mu, 1.0, size=(5,))
    return key, rt.cumsum(steps)


folded_normal = rr.custom(_folded, name="folded_normal")
walk = rr.custom(_walk, name="walk")


def _fn(inputs, output, backend):
    return rk.function(inputs, output, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_builtin_composites_keep_exact_densities(backend):
    """halfnormal is abs of a normal and lognormal exp of one: the rules derive both, to
    rounding, through the far tails and at the support's edge."""
    v, w = rt.vector("v"), rt.vector("w")
    _, h = rr.halfnormal(KEY, 1.5, size=(8,))
    _, ln = rr.lognormal(KEY, 0.3, 0.5, size=(8,))
    hv = np.array([0.0, 1e-300, 0.5, 3.0, 40.0, 1e3, -1e-9, -2.0])
    lv = np.array([1e-300, 1e-5, 0.5, 1.0, 30.0, 1e10, 0.0, -1.0])
    got_h, got_l = _fn([v, w], [rl.logprob(h, v), rl.logprob(ln, w)], backend)(hv, lv)
    with np.errstate(divide="ignore"):
        want_h = st.halfnorm(scale=1.5).logpdf(hv)
        want_l = st.lognorm(0.5, scale=np.exp(0.3)).logpdf(lv)
    np.testing.assert_allclose(got_h, want_h, rtol=1e-14)
    np.testing.assert_allclose(got_l, want_l, rtol=1e-14)
    assert rl.default_transform(h) is rl.transforms.log is rl.default_transform(ln)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_derived_density_elementwise_and_per_element(backend):
    v, m, mu, V = rt.vector("v"), rt.scalar("m"), rt.vector("mu"), rt.matrix("V")
    _, x = folded_normal(KEY, m, 2.0, size=(6,))
    _, w = walk(KEY, mu)  # batch from mu's length: one Blockwise density per element
    f = _fn([v, m, V, mu], [rl.logprob(x, v), rl.logprob(w, V)], backend)
    xv = np.array([0.0, 0.3, 2.0, 9.0, 60.0, -1.0])
    Vv = np.cumsum(np.linspace(-2, 3, 15).reshape(3, 5), axis=1)
    muv = np.array([0.0, 1.0, -40.0])
    got_x, got_w = f(xv, 0.7, Vv, muv)
    with np.errstate(divide="ignore"):
        np.testing.assert_allclose(got_x, st.foldnorm(0.35, scale=2.0).logpdf(xv), rtol=1e-12)
    steps = np.diff(Vv, axis=1, prepend=0.0)
    np.testing.assert_allclose(got_w, st.norm(muv[:, None]).logpdf(steps).sum(1), rtol=1e-13)


def test_gradients_of_a_derived_density_match_jax_and_finite_differences():
    V, mu = rt.matrix("V"), rt.vector("mu")
    _, w = walk(KEY, mu)
    total = rt.sum(rl.logprob(w, V))
    g = _fn([V, mu], rk.grad(total, mu), "jax")
    Vv = np.cumsum(np.linspace(-2, 3, 10).reshape(2, 5), axis=1)
    muv = np.array([0.2, -0.4])
    got = g(Vv, muv)
    steps = np.diff(Vv, axis=1, prepend=0.0)
    np.testing.assert_allclose(got, (steps - muv[:, None]).sum(1), rtol=1e-12)
    plain = _fn([V, mu], total, "jax").jax_fn
    with jax.enable_x64(True):
        np.testing.assert_allclose(jax.grad(lambda m: plain(Vv, m))(muv), got, rtol=1e-12)
    f, eps = _fn([V, mu], total, "numpy"), 1e-6
    fd = [(f(Vv, muv + eps * e) - f(Vv, muv - eps * e)) / (2 * eps) for e in np.eye(2)]
    np.testing.assert_allclose(fd, got, rtol=1e-7)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_authors_logp_and_logcdf_take_precedence(backend):
    calls = []

    def logp(value, loc, scale):  # the folded normal's closed form
        calls.append(1)
        z1, z2 = (value - loc) / scale, (value + loc) / scale
        dens = rt.logaddexp(-0.5 * z1**2, -0.5 * z2**2) - rt.log(scale) - 0.5 * np.log(2 * np.pi)
        return rt.where(value >= 0, dens, -np.inf)

    def logcdf(value, loc, scale):
        c = rt.erf((value - loc) / (scale * np.sqrt(2))) + rt.erf(
            (value + loc) / (scale * np.sqrt(2))
        )
        return rt.where(value > 0, rt.log(c / 2), -np.inf)

    authored = rr.custom(_folded, name="folded_authored", logp=logp, logcdf=logcdf)
    v = rt.vector("v")
    _, x = authored(KEY, 0.5, 1.0, size=(4,))
    values = np.array([0.1, 1.0, 2.5, 4.0])
    ref = st.foldnorm(0.5, scale=1.0)
    censored = rt.clip(x, 0.5, 3.0)
    cv = np.array([0.5, 1.0, 3.0, 2.0])
    f = _fn([v], [rl.logprob(x, v), rl.logprob(censored, v), rl.logcdf(x, v)], backend)
    (got, _, got_cdf), got_c = f(values), f(cv)[1]
    assert calls  # used, not derived
    np.testing.assert_allclose(got, ref.logpdf(values), rtol=1e-12)
    np.testing.assert_allclose(got_cdf, ref.logcdf(values), rtol=1e-12)
    want_c = [ref.logcdf(0.5), ref.logpdf(1.0), ref.logsf(3.0), ref.logpdf(2.0)]
    np.testing.assert_allclose(got_c, want_c, rtol=1e-12)


def test_composites_in_a_joint_density_with_their_parameters_valued():
    k, mu = rr.normal(KEY, 0.0, 3.0)
    k, y = walk(k, mu, size=(2,))
    k, s = folded_normal(k, mu, 1.5)
    m = rt.scalar("mu")
    obs = np.cumsum(np.array([[0.5, 1.0, -0.3, 2.0, 0.1], [1.0, 0.0, 0.2, 0.4, 0.9]]), axis=1)
    lp = rl.joint_logprob({mu: m, y: obs, s: 2.0})
    f = _fn([m], lp, "numpy")
    steps = np.diff(obs, axis=1, prepend=0.0)
    for muv in (-1.0, 0.4):
        want = (
            st.norm(0, 3).logpdf(muv)
            + st.norm(muv).logpdf(steps).sum()
            + st.foldnorm(abs(muv) / 1.5, scale=1.5).logpdf(2.0)
        )
        np.testing.assert_allclose(f(muv), want, rtol=1e-12)


@settings(max_examples=15, deadline=None)
@given(
    loc=hst.floats(-5, 5),
    scale=hst.floats(0.1, 10),
    value=hst.floats(0, 1e3),
)
def test_property_folded_normal_matches_scipy(loc, scale, value):
    got = _FOLDED(np.float64(value), np.float64(loc), np.float64(scale))
    # the two branches' normal densities (SciPy's foldnorm.logpdf is log(pdf): -inf at 39)
    want = np.logaddexp(st.norm(loc, scale).logpdf(value), st.norm(loc, scale).logpdf(-value))
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-300)


_v, _l, _s = rt.scalar("v"), rt.scalar("l"), rt.scalar("s")
_FOLDED = rk.function([_v, _l, _s], rl.logprob(folded_normal(KEY, _l, _s)[1], _v), backend="numpy")


def test_no_derivable_density_names_the_node_inside_the_composite():
    def rounded_sum(key, s):
        key, z = rr.normal(key, 0.0, s, size=(3,))
        return key, rt.sum(z * z)  # a sum of squares: no rule inverts it

    _, x = rr.custom(rounded_sum, name="sumsq")(KEY, 1.0, size=(2,))
    with pytest.raises(GraphTypeError, match="no log-density for the sum output"):
        rl.logprob(x, rt.vector("v"))
