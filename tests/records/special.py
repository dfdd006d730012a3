"""Op records for the special functions (``rewritekit.tensor.special``)."""

from __future__ import annotations

import numpy as np
import scipy.special as sp
from hypothesis import strategies as st

import rewritekit.tensor as rt
from rewritekit.tensor import special as sf
from tests.records import OpRecord, broadcastable_shapes, draw_in, values
from tests.records.bessel import two_shapes, vectors
from tests.records.elemwise import _unary


def _log1mexp(x):
    return np.where(x > -np.log(2.0), np.log(-np.expm1(x)), np.log1p(-np.exp(x)))


def _away_from_poles(data, dtype):
    """Draws in [-4.5, 10] at least 0.15 from the poles of gamma (0, -1, -2, ...), where
    its values and their differences are too large to compare."""
    (x,) = two_shapes((-4.5, 10.0))(data, dtype)
    fraction = np.clip(x - np.floor(x), 0.15, 0.85)
    return [np.where(x < 0.15, np.floor(x) + fraction, x).astype(dtype)]


def _inverse_draw(*shape_ranges):
    """Shape parameters in their ranges and a probability y in [0.001, 0.999], as vectors
    (one compile per dtype: see ``tests.records.bessel.vectors``)."""
    return vectors(*shape_ranges, (0.001, 0.999))


def gammainc_grad_a_by_differences(a, x):
    """d/da gammainc by Richardson-extrapolated central differences of the log of gammainc
    (of gammaincc where gammainc > 1/2, whose derivative is the negated one) in float64:
    about 1e-11 relative to mpmath over the records' domain, 1.2e-11 over 0.05 <= a <= 50,
    1e-3 <= x <= 100."""
    a64, x64 = a.astype("float64"), x.astype("float64")
    lower = sp.gammainc(a64, x64) < 0.5

    def log_p(s):
        return np.where(lower, np.log(sp.gammainc(s, x64)), np.log(sp.gammaincc(s, x64)))

    def slope(h):
        return (log_p(a64 + h) - log_p(a64 - h)) / (2 * h)

    h = 3e-3 * a64
    d_log = (4 * slope(h / 2) - slope(h)) / 3
    return (np.where(lower, 1.0, -1.0) * np.exp(log_p(a64)) * d_log).astype(a.dtype)


def _expi_draw(data, dtype):
    """Draws with 0.05 <= |x| <= 20, away from Ei's logarithmic pole at 0."""
    (x,) = vectors((0.05, 20.0))(data, dtype)
    sign = data.draw(st.sampled_from([-1, 1]), label="sign")
    return [(sign * x).astype(dtype)]


def _polygamma(n):
    """``rt.polygamma`` of order ``n`` and its reference (SciPy's gives float64 always)."""

    def build(x):
        return rt.polygamma(n, x)

    def reference(x):
        return sp.polygamma(n, x).astype(x.dtype)

    # x > 0: the poles sit at the non-positive integers, and for negative x the zeros
    # between them (for even n) make relative comparisons meaningless
    return _unary(
        f"polygamma_{n}",
        sf.Polygamma,
        build,
        reference,
        lo=0.1,
        hi=20.0,
        rtol=1e-8,
        atol=1e-9,
        grad_draw=draw_in((1.0, 6.0)) if n >= 1 else None,
        notes="grad_draw for n >= 1: near x = 0.1 the values (up to n! / x**(n + 1)) "
        "swamp the finite differences of the small derivatives at large x",
    )


RECORDS = [
    _unary("sigmoid", sf.Sigmoid, rt.sigmoid, sp.expit, lo=-30, hi=30),
    _unary(
        "softplus",
        sf.Softplus,
        rt.softplus,
        lambda x: np.logaddexp(0, x).astype(x.dtype),
        lo=-30,
        hi=30,
    ),
    _unary("log_sigmoid", sf.LogSigmoid, rt.log_sigmoid, sp.log_expit, lo=-30, hi=30),
    _unary("logit", sf.Logit, rt.logit, sp.logit, lo=0.01, hi=0.99),
    _unary("erf", sf.Erf, rt.erf, sp.erf, lo=-3, hi=3),
    _unary("erfc", sf.Erfc, rt.erfc, sp.erfc, lo=-3, hi=3),
    _unary(
        "erfcx",
        sf.Erfcx,
        rt.erfcx,
        sp.erfcx,
        lo=-3,
        hi=30,
        notes="up to 30: past the JAX backend's switch to the asymptotic series (5 in float32, "
        "10 in float64) and erfc's underflow in float32 (9.2)",
    ),
    _unary("erfinv", sf.Erfinv, rt.erfinv, sp.erfinv, lo=-0.99, hi=0.99, rtol=1e-7),
    OpRecord("erfcinv", (sf.Erfcinv,), rt.erfcinv, sp.erfcinv, two_shapes((0.001, 1.999))),
    OpRecord("gamma", (sf.Gamma,), rt.gamma, sp.gamma, _away_from_poles, rtol=1e-8),
    OpRecord(
        "gammaincinv",
        (sf.Gammaincinv,),
        rt.gammaincinv,
        sp.gammaincinv,
        _inverse_draw((0.2, 20.0)),
        fd=False,
        notes="the derivatives (in a through gammainc_grad_a) against finite differences "
        "are in tests/tensor/test_special_functions.py",
    ),
    OpRecord(
        "betaincinv",
        (sf.Betaincinv,),
        rt.betaincinv,
        sp.betaincinv,
        _inverse_draw((0.2, 20.0), (0.2, 20.0)),
        fd=False,
        notes="no derivative in a and b (NaN on both backends, compared with jax.grad's)",
    ),
    _unary("gammaln", sf.Gammaln, rt.gammaln, sp.gammaln, lo=0.1, hi=20.0, rtol=1e-8),
    _unary("digamma", sf.Digamma, rt.digamma, sp.psi, lo=0.1, hi=20.0, rtol=1e-8, atol=1e-9),
    OpRecord(
        "xlogy",
        (sf.Xlogy,),
        rt.xlogy,
        sp.xlogy,
        lambda data, dtype: [
            values(data, dtype, s, lo, hi).round(1)
            for s, (lo, hi) in zip(
                data.draw(broadcastable_shapes(2)), [(-1, 1), (0.1, 5)], strict=True
            )
        ],
    ),
    _unary("log1mexp", sf.Log1mexp, rt.log1mexp, _log1mexp, lo=-20.0, hi=-0.01),
    OpRecord(
        "xlog1py",
        (sf.Xlog1py,),
        rt.xlog1py,
        sp.xlog1py,
        lambda data, dtype: [x.round(1) for x in vectors((-1, 1), (-0.9, 5))(data, dtype)],
        notes="x rounded to tenths: zeros are drawn",
    ),
    OpRecord(
        "ndtr_log_ndtr",
        (sf.Ndtr, sf.LogNdtr),
        lambda x: (rt.ndtr(x), rt.log_ndtr(x)),
        lambda x: (sp.ndtr(x), sp.log_ndtr(x)),
        vectors((-30.0, 10.0)),
        notes="one record for the two (one compile per test); log_ndtr in both tails, past "
        "the JAX form's branches at 0 and 1",
    ),
    OpRecord("ndtri", (sf.Ndtri,), rt.ndtri, sp.ndtri, vectors((0.001, 0.999))),
    OpRecord("expi", (sf.Expi,), rt.expi, sp.expi, _expi_draw),
    OpRecord(
        "incomplete_gamma",
        (sf.Gammainc, sf.Gammaincc, sf.GammaincGradA),
        lambda a, x: (rt.gammainc(a, x), rt.gammaincc(a, x), sf.gammainc_grad_a(a, x)),
        lambda a, x: (sp.gammainc(a, x), sp.gammaincc(a, x), gammainc_grad_a_by_differences(a, x)),
        vectors((0.2, 20.0), (0.01, 30.0)),
        fd=False,
        notes="one record for the three (one compile per test); gammainc_grad_a has no "
        "derivative in a (NaN on both backends, compared with jax.grad's), so the finite "
        "differences are in tests/tensor/test_special_functions.py, and so is gammaincc for "
        "a < 1e-3 (the JAX form's series)",
    ),
    OpRecord(
        "betainc_betaln",
        (sf.Betainc, sf.Betaln),
        lambda a, b, x: (rt.betainc(a, b, x), rt.betaln(a, b)),
        lambda a, b, x: (sp.betainc(a, b, x), sp.betaln(a, b)),
        vectors((0.2, 30.0), (0.2, 30.0), (0.0, 1.0)),
        fd=False,
        notes="betainc has no derivative in a and b (as betaincinv); betaln's finite "
        "differences are in tests/tensor/test_special_functions.py. Up to 30: the JAX "
        "betaln's Stirling branches from 10",
    ),
    *(_polygamma(n) for n in range(4)),
]
