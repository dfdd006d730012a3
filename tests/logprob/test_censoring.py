"""Censored draws (``clip``, ``maximum``, ``minimum`` of a draw) against likelihoods written
by hand with scipy.stats (``logcdf`` at the lower bound, ``logsf`` at the upper one, the
density between), on both backends, with gradients against finite differences.

One graph holds every case; it is compiled once per backend and called on a batch of
points (each point its own parameters, bounds and value).
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
from rewritekit.errors import GraphTypeError, RuleError

TOL = {"rtol": 1e-10, "atol": 1e-300}
KEY = rr.key("key")


NAMES = ("loc", "scale", "lo", "hi", "v", "elo", "ehi", "ev", "lam", "k", "klo", "khi")


@functools.cache
def _graph():
    ints = {"k", "klo", "khi"}
    ins = {n: rt.vector(n, dtype="int64" if n in ints else "float64") for n in NAMES}
    key, x = rr.normal(KEY, ins["loc"], ins["scale"])
    key, e = rr.exponential(key, ins["scale"])
    _, n = rr.poisson(key, ins["lam"])
    clipped = rl.logprob(rt.clip(x, ins["lo"], ins["hi"]), ins["v"])
    outputs = [
        clipped,
        rl.logprob(rt.maximum(x, ins["lo"]), ins["v"]),
        rl.logprob(rt.minimum(ins["hi"], x), ins["v"]),  # either order
        rl.logprob(rt.clip(e, ins["elo"], ins["ehi"]), ins["ev"]),
        rl.logprob(rt.clip(n, ins["klo"], ins["khi"]), ins["k"]),
        *rk.grad(rt.sum(clipped), [ins["loc"], ins["scale"]]),
    ]
    return list(ins.values()), outputs


@functools.cache
def _fn(backend):
    inputs, outputs = _graph()
    # JAX: the continuous cases only (XLA takes seconds over the poisson's gammainc)
    return rk.function(inputs, outputs if backend == "numpy" else outputs[:4], backend=backend)


def _at(rng, lo, hi):
    """Values at each bound, between and beyond, at random."""
    n = len(lo)
    inside = lo + rng.uniform(0.01, 0.99, n) * (hi - lo)
    chosen = np.choose(rng.integers(0, 5, n), [lo, hi, inside, lo - 1, hi + 1])
    return chosen.astype(lo.dtype)  # integer values for integer bounds


@functools.cache
def _points():
    """A batch of points, and far in both tails of the normal at the end."""
    rng = np.random.default_rng(0)
    n = 40
    loc, scale = rng.uniform(-3, 3, n), rng.uniform(0.5, 3, n)
    lo = loc + rng.uniform(-3, 0.5, n) * scale
    hi = lo + rng.uniform(0.5, 4, n) * scale
    v = _at(rng, lo, hi)
    # a lower bound 40 sd below the mean, an upper one 40 above, a lower one 30 above
    tails = np.array([[0, 1, -40, 40, -40], [0, 1, -40, 40, 40], [0, 1, 30, 35, 30]])
    loc, scale, lo, hi, v = (
        np.concatenate([a, t]) for a, t in zip([loc, scale, lo, hi, v], tails.T, strict=True)
    )
    m = len(v)
    elo = rng.uniform(0, 2, m)
    ehi = elo + rng.uniform(0.5, 3, m)
    klo = rng.integers(0, 4, m)
    khi = klo + rng.integers(1, 6, m)
    values = [loc, scale, lo, hi, v, elo, ehi, _at(rng, elo, ehi), rng.uniform(0.5, 8, m)]
    return dict(zip(NAMES, [*values, _at(rng, klo, khi), klo, khi], strict=True))


def _censored(logcdf, logsf, logpdf, v, lo, hi):
    inside = np.where((v > lo) & (v < hi), logpdf(np.clip(v, lo, hi)), -np.inf)
    return np.where(v == lo, logcdf(lo), np.where(v == hi, logsf(hi), inside))


def _expected():
    p = _points()
    norm, expo, pois = (
        st.norm(p["loc"], p["scale"]),
        st.expon(scale=p["scale"]),
        st.poisson(p["lam"]),
    )
    inf = np.full(len(p["lo"]), np.inf)
    return [
        _censored(norm.logcdf, norm.logsf, norm.logpdf, p["v"], p["lo"], p["hi"]),
        _censored(norm.logcdf, norm.logsf, norm.logpdf, p["v"], p["lo"], inf),
        _censored(norm.logcdf, norm.logsf, norm.logpdf, p["v"], -inf, p["hi"]),
        _censored(expo.logcdf, expo.logsf, expo.logpdf, p["ev"], p["elo"], p["ehi"]),
        # a discrete draw's mass at the upper bound: P(X >= hi) = P(X > hi - 1)
        _censored(
            pois.logcdf, lambda c: pois.logsf(c - 1), pois.logpmf, p["k"], p["klo"], p["khi"]
        ),
    ]


def _call(backend, points=None):
    args = list((points or _points()).values())
    if backend == "jax":
        with jax.enable_x64(True):
            return [np.asarray(r) for r in _fn("jax")(*args)]
    return _fn("numpy")(*args)


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_censored_densities_match_scipy(backend):
    for i, (got, expected) in enumerate(zip(_call(backend)[:5], _expected(), strict=False)):
        np.testing.assert_allclose(got, expected, **TOL, err_msg=f"{backend} case {i}")
        assert np.array_equal(np.isneginf(got), np.isneginf(expected))


def test_far_tails_are_exact():
    got = _call("numpy")[0][-3:]
    # log Phi(-40) at the lower bound, log Phi(-40) at the upper, log Phi(30) = -Q(30)
    expected = [st.norm.logcdf(-40), st.norm.logsf(40), st.norm.logcdf(30)]
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    assert -5e-198 < got[-1] < -4.8e-198


def test_gradients_match_finite_differences():
    results = _call("numpy")
    keep = np.isfinite(results[0])
    h = 1e-6
    for name, grad in zip(("loc", "scale"), results[5:7], strict=True):
        up, down = dict(_points()), dict(_points())
        up[name], down[name] = _points()[name] + h, _points()[name] - h
        with np.errstate(invalid="ignore"):  # -inf - -inf outside the support
            numeric = (_call("numpy", up)[0] - _call("numpy", down)[0]) / (2 * h)
        np.testing.assert_allclose(grad[keep], numeric[keep], rtol=1e-5, atol=1e-7)


def test_censored_regression_with_joint_logprob():
    k, beta = rr.normal(KEY, 0.0, 2.0)
    xs = np.array([-1.0, 0.0, 1.0, 2.0])
    k, y = rr.normal(k, beta * xs, 1.0)
    observed = np.array([-1.5, 0.2, 1.5, 1.5])  # censored to [-1.5, 1.5]
    beta_v = rt.scalar("beta")
    logp = rl.joint_logprob({beta: beta_v, rt.clip(y, -1.5, 1.5): observed})
    got = rk.function([beta_v], logp, backend="numpy")(0.8)
    norm = st.norm(0.8 * xs, 1.0)
    expected = st.norm(0, 2).logpdf(0.8) + norm.logcdf(-1.5)[0] + norm.logpdf(0.2)[1]
    expected += norm.logsf(1.5)[2:].sum()
    np.testing.assert_allclose(got, expected, **TOL)


def test_bounds_that_hold_a_draw_find_no_density():
    k, x = rr.normal(KEY, 0.0, 1.0)
    _, c = rr.normal(k, 0.0, 1.0)
    with pytest.raises(GraphTypeError, match="found no log-density for the clip output"):
        rl.logprob(rt.clip(x, c, 2.0), rt.scalar("v"))
    with pytest.raises(GraphTypeError, match="found no log-density for the maximum output"):
        rl.logprob(rt.maximum(x, c), rt.scalar("v"))


def test_clip_of_a_distribution_without_a_cdf_names_it():
    _, x = rr.categorical(KEY, np.array([0.2, 0.3, 0.5]))
    with pytest.raises(RuleError, match="the categorical draw has no closed-form CDF"):
        rl.logprob(rt.clip(x, 0, 1), rt.scalar("v", dtype="int64"))


def test_bounds_that_broadcast_the_draw_find_no_density():
    _, x = rr.normal(KEY, 0.0, 1.0)
    with pytest.raises(GraphTypeError, match="found no log-density for the clip output"):
        rl.logprob(rt.clip(x, np.zeros(3), 1.0), rt.vector("v"))
