"""Discrete results of draws: comparisons with a parameter (Bernoulli by the CDF) and
floor/ceil/round of a continuous draw (differences of CDFs, in log space), against
scipy.stats on both backends, far tails included."""

from __future__ import annotations

import functools

import numpy as np
import pytest
import scipy.stats as st

import rewritekit as rk
import rewritekit.logprob as rl
import rewritekit.random as rr
import rewritekit.tensor as rt

K = rr.key()
_, Z = rr.normal(K, 0.5, 1.3, size=(4,))
_, N = rr.poisson(K, 3.0, size=(4,))
NORM, POIS = st.norm(0.5, 1.3), st.poisson(3.0)
FLAGS = np.array([1, 0, 1, 7])  # 7: not a Bernoulli value
POINTS = np.array([-40.0, 0.0, 1.5, 40.0])


def _mass(lo, hi):
    """log P(lo <= X <= hi) for the normal, from the side whose tail keeps the digits."""
    upper = lo > 0.5
    a = np.where(upper, NORM.logsf(lo), NORM.logcdf(hi))
    b = np.where(upper, NORM.logsf(hi), NORM.logcdf(lo))
    return a + np.log1p(-np.exp(b - a))


def _bernoulli(true):
    return np.where(FLAGS == 1, true, np.where(FLAGS == 0, np.log1p(-np.exp(true)), -np.inf))


def _integers(x):
    return np.where(x == np.floor(x), x, np.nan)


# name -> (graph of the draw, value kind, reference at FLAGS or POINTS)
CASES = {
    "z > 1": (Z > 1.0, "flags", lambda: _bernoulli(NORM.logsf(1.0))),
    "z <= 1": (Z <= 1.0, "flags", lambda: _bernoulli(NORM.logcdf(1.0))),
    "2 < z": (rt.less(2.0, Z), "flags", lambda: _bernoulli(NORM.logsf(2.0))),
    "z > 9 (far tail)": (Z > 9.0, "flags", lambda: _bernoulli(NORM.logsf(9.0))),
    "n >= 3": (N >= 3, "flags", lambda: _bernoulli(POIS.logsf(2))),
    "n < 3": (N < 3, "flags", lambda: _bernoulli(POIS.logcdf(2))),
    "n > 2.5": (N > 2.5, "flags", lambda: _bernoulli(POIS.logsf(2))),
    "floor(z)": (rt.floor(Z), "points", lambda: _mass(_integers(POINTS), POINTS + 1)),
    "ceil(z)": (rt.ceil(Z), "points", lambda: _mass(_integers(POINTS) - 1, POINTS)),
    "round(z)": (rt.round(Z), "points", lambda: _mass(_integers(POINTS) - 0.5, POINTS + 0.5)),
}


@functools.cache
def compiled(backend):
    flags, points = rt.vector("flags", dtype="int64"), rt.vector("points")
    value = {"flags": flags, "points": points}
    logps = [rl.logprob(y, value[kind]) for y, kind, _ in CASES.values()]
    return rk.function([flags, points], logps, backend=backend)


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_discrete_results_match_scipy(backend):
    got = compiled(backend)(FLAGS, POINTS)
    for (name, (_, _, ref)), value in zip(CASES.items(), got, strict=True):
        with np.errstate(all="ignore"):
            expected = np.nan_to_num(ref(), nan=-np.inf, posinf=np.inf, neginf=-np.inf)
        np.testing.assert_allclose(np.asarray(value), expected, rtol=1e-11, err_msg=name)


def test_the_gradient_of_a_discretized_density_matches_finite_differences():
    loc = rt.scalar("loc")
    _, x = rr.normal(K, loc, 1.3, size=(3,))
    ks = np.array([-2.0, 0.0, 3.0])
    logp = rt.sum(rl.logprob(rt.floor(x), ks) + rl.logprob(x > 1.0, np.array([1, 0, 1])))
    f = rk.function([loc], [logp, rk.grad(logp, loc)], backend="numpy")
    h = 1e-6
    numeric = (f(0.5 + h)[0] - f(0.5 - h)[0]) / (2 * h)
    np.testing.assert_allclose(f(0.5)[1], numeric, rtol=1e-6)


def test_a_comparison_with_a_random_bound_is_not_a_bernoulli():
    _, other = rr.normal(K, 0.0, 1.0, size=(4,))
    with pytest.raises(rk.GraphTypeError, match="found no log-density for the greater output"):
        rl.logprob(rt.greater(Z, other), rt.vector("v", dtype="int64"))
