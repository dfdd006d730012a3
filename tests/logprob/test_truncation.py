"""Truncated random variables (``rewritekit.logprob.truncation``): densities against
scipy.stats ``truncnorm`` and ``truncexpon`` (far tails too), gradients against finite
differences, draws against the same distributions by Kolmogorov-Smirnov tests on both
backends, ``joint_logprob`` with a truncated key, and the errors.

Each graph is compiled once per backend and called on a batch of points.
"""

from __future__ import annotations

import functools

import jax
import numpy as np
import pytest
import scipy.stats as st
from scipy.special import expit

import rewritekit as rk
import rewritekit.logprob as rl
import rewritekit.random as rr
import rewritekit.tensor as rt
from rewritekit.errors import GraphTypeError, ShapeError
from rewritekit.logprob.truncation import log_mass, parts, truncate

TOL = {"rtol": 1e-10, "atol": 1e-300}
KEY = rr.key("key")
NAMES = ("loc", "scale", "lo", "hi", "v", "elo", "ehi", "ev")


@functools.cache
def _graph():
    ins = {n: rt.vector(n) for n in NAMES}
    key, x = rr.normal(KEY, ins["loc"], ins["scale"])
    _, e = rr.exponential(key, ins["scale"])
    normal = rl.logprob(truncate(x, ins["lo"], ins["hi"]), ins["v"])
    outputs = [
        normal,
        rl.logprob(truncate(e, ins["elo"], ins["ehi"]), ins["ev"]),
        *rk.grad(rt.sum(normal), [ins["loc"], ins["scale"]]),
    ]
    return list(ins.values()), outputs


@functools.cache
def _fn(backend):
    inputs, outputs = _graph()
    return rk.function(inputs, outputs if backend == "numpy" else outputs[:2], backend=backend)


@functools.cache
def _points():
    """Bounds on both sides, one-sided, and far in the tails (the last rows)."""
    rng = np.random.default_rng(0)
    n = 30
    loc, scale = rng.uniform(-3, 3, n), rng.uniform(0.5, 3, n)
    lo = loc + rng.uniform(-3, 1, n) * scale
    hi = lo + rng.uniform(0.2, 4, n) * scale
    lo[:5], hi[5:10] = -np.inf, np.inf
    v = np.where(np.isfinite(lo), lo, hi - 3) + rng.uniform(-0.5, 1.2, n) * scale
    v[10:13] = lo[10:13]  # at the bounds, which belong to the support
    v[13:16] = hi[13:16]
    inf = np.inf
    tails = [
        [0, 1, 30, inf, 30.5],
        [0, 1, -inf, -30, -30.2],
        [0, 1, 8, 9, 8.1],  # F(lower) and F(upper) both round to 1
        [0, 1, -9, -8, -8.9],
        [2, 1, 42, 43, 42.0],
    ]
    loc, scale, lo, hi, v = (
        np.concatenate([a, t])
        for a, t in zip([loc, scale, lo, hi, v], np.transpose(tails), strict=True)
    )
    m = len(v)
    elo = rng.uniform(0, 3, m)
    ehi = elo + rng.uniform(0.1, 5, m)
    ehi[:3] = np.inf
    ev = elo + rng.uniform(-0.2, 1.1, m) * (np.where(np.isfinite(ehi), ehi, elo + 3) - elo)
    return dict(zip(NAMES, [loc, scale, lo, hi, v, elo, ehi, ev], strict=True))


def _call(backend, points=None):
    args = list((points or _points()).values())
    if backend == "jax":
        with jax.enable_x64(True):
            return [np.asarray(r) for r in _fn("jax")(*args)]
    return _fn("numpy")(*args)


def _expected():
    p = _points()
    a, b = (p["lo"] - p["loc"]) / p["scale"], (p["hi"] - p["loc"]) / p["scale"]
    normal = st.truncnorm(a, b, loc=p["loc"], scale=p["scale"]).logpdf(p["v"])
    width = (p["ehi"] - p["elo"]) / p["scale"]
    expon = st.truncexpon(width, loc=p["elo"], scale=p["scale"]).logpdf(p["ev"])
    return [normal, expon]


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_densities_match_scipy(backend):
    for name, got, expected in zip(
        ("normal", "exponential"), _call(backend)[:2], _expected(), strict=True
    ):
        np.testing.assert_allclose(got, expected, **TOL, err_msg=f"{backend} {name}")
        assert np.array_equal(np.isneginf(got), np.isneginf(expected)), name
        assert np.isfinite(expected).sum() > 20


def test_log_mass_is_exact_in_the_upper_tail():
    _, x = rr.normal(KEY, 0.0, 1.0, size=(3,))
    lo, hi = rt.vector("lo"), rt.vector("hi")
    f = rk.function([lo, hi], log_mass(x, lo, hi), backend="numpy")
    lower, upper = np.array([40.0, 8.0, -1.0]), np.array([np.inf, 9.0, 1.0])
    # sf(40) underflows: log sf(40) is SciPy's log_ndtr(-40); the others are exact here
    expected = [
        st.norm.logsf(40.0),
        np.log(st.norm.sf(8) - st.norm.sf(9)),
        np.log(0.6826894921370859),
    ]
    np.testing.assert_allclose(f(lower, upper), expected, rtol=1e-12)


def test_gradients_match_finite_differences():
    results = _call("numpy")
    keep = np.isfinite(results[0])
    h = 1e-6
    for name, grad in zip(("loc", "scale"), results[2:4], strict=True):
        up, down = dict(_points()), dict(_points())
        up[name], down[name] = _points()[name] + h, _points()[name] - h
        with np.errstate(invalid="ignore"):  # -inf - -inf outside the support
            numeric = (_call("numpy", up)[0] - _call("numpy", down)[0]) / (2 * h)
        scale = np.maximum(1.0, np.abs(numeric[keep]))
        np.testing.assert_allclose(grad[keep] / scale, numeric[keep] / scale, atol=2e-5)


# --- draws -----------------------------------------------------------------------------

N = 2000
DRAWN = {  # name: (sampler, params, lower, upper, scipy oracle)
    "normal_inside": (rr.normal, (0.5, 1.5), -1.0, 2.0, st.truncnorm(-1, 1, loc=0.5, scale=1.5)),
    "normal_above_5": (rr.normal, (0.0, 1.0), 5.0, None, st.truncnorm(5, np.inf)),
    "normal_below_6": (rr.normal, (0.0, 1.0), None, -6.0, st.truncnorm(-np.inf, -6)),
    "normal_above_40": (rr.normal, (0.0, 1.0), 40.0, None, st.truncnorm(40, np.inf)),
    "exponential": (rr.exponential, (2.0,), 1.0, 3.0, st.truncexpon(1.0, loc=1.0, scale=2.0)),
}


# XLA takes a second or more per truncated variable (the Newton steps): two for JAX, whose
# graph holds both ways of drawing (from below and, refined, from above) all the same
ON_JAX = ("normal_above_5", "exponential")


@functools.cache
def _sampler(backend):
    names = list(DRAWN) if backend == "numpy" else ON_JAX
    key, outputs = KEY, []
    for name in names:
        sampler, params, lower, upper, _ = DRAWN[name]
        key, x = sampler(key, *params, size=(N,))
        outputs.append(truncate(x, lower, upper))
    return names, rk.function([KEY], outputs, backend=backend)


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_draws_follow_the_truncated_distribution(backend):
    names, sample = _sampler(backend)
    with jax.enable_x64(True):
        drawn = [np.asarray(d) for d in sample(rr.seed(3))]
    for name, d in zip(names, drawn, strict=True):
        *_, lower, upper, oracle = DRAWN[name]
        assert d.shape == (N,) and d.dtype == np.float64
        assert np.all(d >= (lower if lower is not None else -np.inf)), name
        assert np.all(d <= (upper if upper is not None else np.inf)), name
        assert st.kstest(d, oracle.cdf).pvalue > 1e-3, (backend, name)


MORE = {  # NumPy only: name: (sampler, params, lower, upper, scipy distribution)
    "geometric": (rr.geometric, (0.3,), 2, 5, st.geom(0.3)),
    "discrete_uniform": (rr.discrete_uniform, (0, 10), 3, 6, st.randint(0, 11)),
    "student_t_tail": (rr.student_t, (3.0, 0.0, 1.0), 20.0, None, st.t(3.0)),
    "gamma_tail": (rr.gamma, (2.0, 1.5), 30.0, None, st.gamma(2.0, scale=1.5)),
}


@functools.cache
def _more():
    key, outputs, values = KEY, [], []
    for sampler, params, lower, upper, _ in MORE.values():
        key, x = sampler(key, *params, size=(N,))
        t = truncate(x, lower, upper)
        value = rt.tensor(f"value_{len(values)}", shape=(N,))
        outputs += [t, rl.logprob(t, value)]
        values.append(value)
    return rk.function([KEY, *values], outputs, backend="numpy")


def test_discrete_and_heavy_tailed_truncations():
    drawn = _more()(rr.seed(5), *[np.full(N, lower, float) for *_, lower, _, _ in MORE.values()])
    drawn = _more()(rr.seed(5), *drawn[::2])  # the densities at the draws themselves
    for i, (name, (*_, lower, upper, dist)) in enumerate(MORE.items()):
        d, logp = drawn[2 * i], drawn[2 * i + 1]
        top = np.inf if upper is None else upper
        if isinstance(dist.dist, st.rv_discrete):  # both bounds included
            mass = dist.cdf(top) - dist.cdf(lower - 1)
            np.testing.assert_allclose(logp, dist.logpmf(d) - np.log(mass), **TOL)
            support = np.arange(lower, top + 1)
            counts = [(d == k).sum() for k in support]
            assert sum(counts) == N, name
            assert st.chisquare(counts, N * dist.pmf(support) / mass).pvalue > 1e-3, name
        else:  # far in the upper tail: in terms of the survival function
            log_sf = dist.logsf(lower)
            np.testing.assert_allclose(logp, dist.logpdf(d) - log_sf, rtol=1e-12)
            cdf = lambda y, dist=dist, log_sf=log_sf: -np.expm1(dist.logsf(y) - log_sf)  # noqa: E731
            assert d.min() >= lower and st.kstest(d, cdf).pvalue > 1e-3, name


def test_draws_far_in_the_tail_keep_their_precision():
    # [40, inf): the excess over 40 is about Exponential(rate 40); ten times that scale
    # would be the sign of draws stuck at the bound or lost to rounding
    with jax.enable_x64(True):
        d = np.asarray(_sampler("numpy")[1](rr.seed(4))[3])
    assert 0.5 / 40 < np.mean(d - 40) < 2 / 40
    assert len(np.unique(d)) == N


def test_joint_logprob_with_a_truncated_key():
    k, mu = rr.normal(KEY, 0.0, 2.0)
    k, y = rr.normal(k, mu, 1.0, size=(3,))
    t = truncate(y, 0.0)
    mu_v = rt.scalar("mu")
    observed = np.array([0.1, 1.0, 2.5])
    logp = rl.joint_logprob({mu: mu_v, t: observed})
    got = rk.function([mu_v], logp, backend="numpy")(0.7)
    expected = (
        st.norm(0, 2).logpdf(0.7) + st.truncnorm(-0.7, np.inf, loc=0.7).logpdf(observed).sum()
    )
    np.testing.assert_allclose(got, expected, **TOL)
    assert parts(t) == (y, t.owner.inputs[1].owner.inputs[1], t.owner.inputs[1].owner.inputs[2])


def test_joint_logprob_with_an_interval_transform():
    _, y = rr.normal(KEY, 1.0, 2.0)
    t = truncate(y, 0.0, 3.0)
    u = rt.scalar("u")
    interval = rl.transforms.interval(0.0, 3.0)
    logp = rl.joint_logprob({t: u}, transforms={t: interval})
    got = rk.function([u], logp, backend="numpy")(0.4)
    x = 3.0 * expit(0.4)
    jacobian = np.log(3.0) + np.log(expit(0.4)) + np.log(expit(-0.4))
    expected = st.truncnorm(-0.5, 1.0, loc=1.0, scale=2.0).logpdf(x) + jacobian
    np.testing.assert_allclose(got, expected, **TOL)


def test_a_truncated_draw_keeps_its_dtype_and_shape():
    _, x = rr.normal(KEY, np.float32(0.0), np.float32(1.0), size=(4,))
    t = truncate(x, 0.0, 1.0)
    assert t.type == x.type
    assert parts(rt.where(True, rt.clip(x, 0.0, 1.0), x)) is None  # no uniform with x's key


def test_a_distribution_without_a_quantile_function_is_an_error():
    _, n = rr.poisson(KEY, 3.0)
    with pytest.raises(GraphTypeError, match="truncate: the poisson draw has no ICDF entry"):
        truncate(n, 1, 5)


def test_bounds_that_hold_a_draw_are_an_error():
    k, x = rr.normal(KEY, 0.0, 1.0)
    _, c = rr.halfnormal(k, 1.0)
    with pytest.raises(GraphTypeError, match="the upper bound holds the halfnormal draw"):
        truncate(x, 0.0, c + 1.0)


def test_bounds_that_broadcast_the_draw_are_an_error():
    _, x = rr.normal(KEY, 0.0, 1.0, size=(3,))
    with pytest.raises(ShapeError, match=r"the lower bound .* would broadcast the normal draw"):
        truncate(x, np.zeros((2, 3)))


def test_only_draws_can_be_truncated():
    _, x = rr.normal(KEY, 0.0, 1.0)
    with pytest.raises(GraphTypeError, match="truncate: x must be a random variable's draw"):
        truncate(rt.exp(x), 0.0, 1.0)
