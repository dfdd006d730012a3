"""JAX forms of the special functions that are integrals (``rewritekit.tensor.special``):
the incomplete gamma function's upper part and its derivative in ``a``, the incomplete beta
function, ``betaln`` and the exponential integral, with their derivatives (the Ops' rules,
``jax.custom_jvp``). ``backends/jax/special.py`` puts them in the family's table.

Each is JAX's own function where that is accurate, written here where it is not (the
docstrings give the measurements, against SciPy and mpmath; jax 0.10), and ends on
``expensive_identity`` (docs/backends.md, "What XLA punishes").
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import jax.scipy.special as jsp
from jax import lax
from jax.custom_derivatives import SymbolicZero

from rewritekit.backends.jax.elemwise import expensive_identity


def tangent_of(out: jax.Array, slopes: Any, tangents: Any) -> jax.Array:
    """The tangent of ``out``: each input's tangent times its slope, skipping the inputs
    JAX knows to have none (``SymbolicZero``: the rule is registered with
    ``symbolic_zeros=True``, else an input held fixed would bring 0 * NaN); a slope of
    None is a derivative that is not implemented, NaN as in the Op's rule
    (``rewritekit.tensor.special.no_derivative``)."""
    total = jnp.zeros_like(out)
    for slope, tangent in zip(slopes, tangents, strict=True):
        if not isinstance(tangent, SymbolicZero):
            total = total + tangent * (jnp.nan if slope is None else slope())
    return total


_EULER_GAMMA = 0.5772156649015329
_E1_FRACTION_TERMS = 80  # the continued fraction's error at z = 1 is 1e-16 after 80
_EI_SERIES_TERMS = 120  # Ei's series to x = 40: the terms are below 1e-17 of the sum after
_EI_ASYMPTOTIC_FROM = 40.0
_EI_ASYMPTOTIC_TERMS = 40  # the smallest term, at k = x, is below 1e-16 from x = 40


def _power_series(x: jax.Array, terms: int) -> jax.Array:
    """sum over 1 <= k <= terms of x**k / (k k!)."""

    def add(k: Any, carry: tuple[jax.Array, jax.Array]) -> tuple[jax.Array, jax.Array]:
        term, total = carry
        term = term * x / k
        return term, total + term / k

    return lax.fori_loop(1, terms + 1, add, (jnp.ones_like(x), jnp.zeros_like(x)))[1]


def _exp1(z: jax.Array) -> jax.Array:
    """E_1(z) for z > 0: the series -euler_gamma - log z - sum_k (-z)**k / (k k!) up to 1
    (DLMF 6.6.2), the continued fraction e**-z / (z + 1 - 1 / (z + 3 - 4 / (z + 5 - ...)))
    above (DLMF 6.9.1, even part), evaluated from its tail with a fixed number of terms."""
    small = z <= 1
    s, f = jnp.where(small, z, 1.0), jnp.where(small, 2.0, z)
    series = -_EULER_GAMMA - jnp.log(s) - _power_series(-s, 20)

    def step(i: Any, tail: jax.Array) -> jax.Array:
        n = _E1_FRACTION_TERMS - i
        return n * n / (f + (2 * n + 1) - tail)

    tail = lax.fori_loop(0, _E1_FRACTION_TERMS, step, jnp.zeros_like(f))
    return jnp.where(small, series, jnp.exp(-f) / (f + 1 - tail))


def _ei_positive(x: jax.Array) -> jax.Array:
    """Ei(x) for x > 0: euler_gamma + log x + sum_k x**k / (k k!) (DLMF 6.6.1, positive
    terms) up to 40, the asymptotic series e**x / x sum_k k! / x**k (DLMF 6.12.2) above."""
    small = x <= _EI_ASYMPTOTIC_FROM
    s = jnp.where(small, x, 1.0)
    large = jnp.where(small, 2 * _EI_ASYMPTOTIC_FROM, x)

    def add(k: Any, carry: tuple[jax.Array, jax.Array]) -> tuple[jax.Array, jax.Array]:
        term, total = carry
        term = term * k / large
        return term, total + term

    ones = jnp.ones_like(large)
    _, total = lax.fori_loop(1, _EI_ASYMPTOTIC_TERMS + 1, add, (ones, ones))
    series = _EULER_GAMMA + jnp.log(s) + _power_series(s, _EI_SERIES_TERMS)
    return jnp.where(small, series, jnp.exp(large) / large * total)


@jax.custom_jvp
def expi(x: jax.Array) -> jax.Array:
    """Ei(x), computed here: 1.3e-15 relative to mpmath where SciPy's is off by 2.6e-14
    (near 40), and JAX's takes seconds for x < 0 (a while loop: 2.9 s for one x = -1e-5,
    jax 0.10) and gives NaN at 0 and +-inf. SciPy's values there: -inf at 0, inf at inf,
    -0.0 at -inf; the derivative e**x / x."""
    negative, positive = x < 0, x > 0
    value = jnp.where(
        negative,
        -_exp1(jnp.where(negative, -x, 1.0)),
        _ei_positive(jnp.where(positive & (x < jnp.inf), x, 1.0)),
    )
    edge = jnp.where(x == 0, -jnp.inf, jnp.where(positive, jnp.inf, -0.0))
    edge = jnp.where(jnp.isnan(x), x, edge.astype(x.dtype))
    return expensive_identity(jnp.where((x == 0) | jnp.isinf(x) | jnp.isnan(x), edge, value))


@expi.defjvp
def _expi_jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    return expi(x), t * jnp.exp(x) / x


def _gamma_density(a: jax.Array, x: jax.Array) -> jax.Array:
    """x**(a - 1) e**-x / Gamma(a), as the Op's rule (``rewritekit.tensor.special``)."""
    return jnp.exp(jsp.xlogy(a - 1, x) - x - jsp.gammaln(a))


#: From this a on, the incomplete gamma function and its derivative in a use Temme's uniform
#: asymptotic expansion (``_temme``): XLA's series lose accuracy as a grows (relative error
#: 2e-10 at a = 1e5, 1e-8 at 1e6, 5e-3 at 1e7 against SciPy) and run for a time growing as
#: sqrt(a): 3 s at a = x = 1e15, and a call that does not return in minutes past 1e16
#: (found by tools/fuzz.py; jax 0.10). The expansion's first left-out term is below 1e-12
#: of the result from here on.
TEMME_A = 1e5


def _eta(s: jax.Array) -> jax.Array:
    """Temme's eta of lambda = 1 + s: eta**2 / 2 = s - log(1 + s), eta of the sign of s,
    as s sqrt(g(s)) with g(s) = -2 (log(1 + s) - s) / s**2, by its series where |s| < 1e-3
    (the difference cancels there, and the square root of eta**2 has no derivative at 0)."""
    near = jnp.abs(s) < 1e-3
    t = jnp.where(near, s, 0.0)
    series = 1 + t * (-2 / 3 + t * (1 / 2 + t * (-2 / 5 + t * (1 / 3 - t * 2 / 7))))
    u = jnp.where(near, 1.0, s)
    return s * jnp.sqrt(jnp.where(near, series, -2 * (jnp.log1p(u) - u) / (u * u)))


def _temme(a: jax.Array, x: jax.Array) -> tuple[jax.Array, jax.Array]:
    """gammainc and gammaincc for large a (DLMF 8.12.8-10, as SciPy's igam for large a):
    Q = erfc(eta sqrt(a / 2)) / 2 + R, P = erfc(-eta sqrt(a / 2)) / 2 - R, with
    eta**2 / 2 = lambda - 1 - log(lambda), lambda = x / a, eta of the sign of lambda - 1,
    and R = exp(-a eta**2 / 2) / sqrt(2 pi a) (c0(eta) + c1(eta) / a), where
    c0 = 1 / (lambda - 1) - 1 / eta and
    c1 = 1 / eta**3 - 1 / (lambda - 1)**3 - 1 / (lambda - 1)**2 - 1 / (12 (lambda - 1)),
    by their Taylor series near eta = 0 (the terms cancel there)."""
    s = x / a - 1
    eta = _eta(s)
    near = jnp.abs(eta) < 1e-3
    e = jnp.where(near, eta, 0.0)
    c0_near = -1 / 3 + e * (1 / 12 + e * (-2 / 135 + e / 864))
    c1_near = -1 / 540 + e * (-1 / 288 + e / 378)
    u, v = jnp.where(near, 1.0, s), jnp.where(near, 1.0, eta)
    c0 = jnp.where(near, c0_near, 1 / u - 1 / v)
    c1 = jnp.where(near, c1_near, 1 / v**3 - 1 / u**3 - 1 / u**2 - 1 / (12 * u))
    r = jnp.exp(-0.5 * a * eta * eta) / jnp.sqrt(2 * math.pi * a) * (c0 + c1 / a)
    root = eta * jnp.sqrt(a / 2)
    top = x == jnp.inf  # lambda - 1 - log(lambda) is inf - inf there
    p = jnp.where(top, 1.0, 0.5 * jsp.erfc(-root) - r)
    q = jnp.where(top, 0.0, 0.5 * jsp.erfc(root) + r)
    return p, q


def _at_infinite_a(a: jax.Array, x: jax.Array, value: jax.Array, finite: float) -> jax.Array:
    """``value``, but SciPy's at a = inf: ``finite`` (0 for gammainc, 1 for gammaincc)
    for 0 <= x < inf, NaN at x = inf (XLA gives 1 or 0 there, and NaN at finite x)."""
    edge = jnp.where((x >= 0) & (x < jnp.inf), finite, jnp.nan)
    return jnp.where(a == jnp.inf, edge, value)


def large_a(a: jax.Array, x: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
    """Where a >= ``TEMME_A`` (finite), and (a, x) there with 1e5 elsewhere: the inputs
    of ``_temme``; XLA's loops get (1, 1) at those elements instead (the double-``where``
    trick, which keeps XLA's loops short)."""
    large = (a >= TEMME_A) & (a < jnp.inf)
    return large, jnp.where(large, a, TEMME_A), jnp.where(large, x, TEMME_A)


@jax.custom_jvp
def gammainc(a: jax.Array, x: jax.Array) -> jax.Array:
    """``jax.scipy.special.gammainc``, and ``_temme`` where a >= ``TEMME_A``; the
    derivatives of the Op's rules (d/da gammainc, the density)."""
    large, big_a, big_x = large_a(a, x)
    small = jsp.gammainc(jnp.where(large, 1.0, a), jnp.where(large, 1.0, x))
    value = jnp.where(large, _temme(big_a, big_x)[0], small)
    return expensive_identity(_at_infinite_a(a, x, value, 0.0))


def _gammainc_jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[Any, Any]:
    a, x = primals
    out = gammainc(a, x)
    slopes = (lambda: gammainc_grad_a(a, x), lambda: _gamma_density(a, x))
    return out, tangent_of(out, slopes, tangents)


@jax.custom_jvp
def gammainc_grad_a(a: jax.Array, x: jax.Array) -> jax.Array:
    """``jax.lax.igamma_grad_a`` (6e-13 relative to mpmath over 0.01 <= a <= 1000,
    1e-4 <= x <= 1e4), 0 at x = inf where it gives NaN, and the derivative of ``_temme``
    where a >= ``TEMME_A`` (``lax``'s loop does not end there either); derivative in x by
    the Op's rule (``lax`` has none), in a NaN."""
    large, big_a, big_x = large_a(a, x)
    inside = (a > 0) & (a < jnp.inf) & (x < jnp.inf) & ~large
    value = lax.igamma_grad_a(jnp.where(large, 1.0, a), jnp.where(inside, x, 1.0))
    temme = jax.jvp(lambda b: _temme(b, big_x)[0], (big_a,), (jnp.ones_like(big_a),))[1]
    edge = jnp.where((x == jnp.inf) & (a > 0) & (a < x), 0.0, jnp.nan)
    return expensive_identity(jnp.where(large, temme, jnp.where(inside, value, edge)))


def _gammainc_grad_a_jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[Any, Any]:
    a, x = primals
    out = gammainc_grad_a(a, x)
    slopes = (None, lambda: _gamma_density(a, x) * (jnp.log(x) - jsp.digamma(a)))
    return out, tangent_of(out, slopes, tangents)


gammainc_grad_a.defjvp(_gammainc_grad_a_jvp, symbolic_zeros=True)
gammainc.defjvp(_gammainc_jvp, symbolic_zeros=True)

#: zeta(2), ..., zeta(8): log Gamma(1 + a) = -euler_gamma a + sum_k (-a)**k zeta(k) / k
_ZETA = (1.6449340668482264, 1.2020569031595942, 1.0823232337111381, 1.03692775514337,
         1.0173430619844492, 1.008349277381923, 1.0040773561979444)  # fmt: skip
_SMALL_A = 1e-3  # gammaincc: the series below for a < 1e-3 and x <= 1.5
_SMALL_A_TERMS = 24  # 1.5**n / (n! n) < 1e-18 for n >= 24


def _gammaincc_small_a(a: jax.Array, x: jax.Array) -> jax.Array:
    """gammaincc(a, x) for a < 1e-3, x <= 1.5 (DiDonato & Morris, ACM TOMS 12, 1986):
    from gammainc = x**a / Gamma(1 + a) (1 + a S), S = sum_n>=1 (-x)**n / (n! (a + n)),
    gammaincc = -expm1(a log x - log Gamma(1 + a)) - x**a / Gamma(1 + a) a S: both terms
    keep their relative accuracy as a -> 0, where 1 - gammainc would lose it (JAX's
    gammaincc is off by 4e-9 at a = 1e-6, 2e-5 at a = 1e-10; jax 0.10)."""
    powers = a
    lgamma1p = -_EULER_GAMMA * a
    for k, zeta in enumerate(_ZETA, start=2):
        powers = -powers * a
        lgamma1p = lgamma1p - powers * zeta / k  # + (-a)**k zeta(k) / k
    log_factor = a * jnp.log(x) - lgamma1p
    term, total = jnp.ones_like(x), jnp.zeros_like(x)
    for n in range(1, _SMALL_A_TERMS + 1):
        term = term * (-x) / n
        total = total + term / (a + n)
    return -jnp.expm1(log_factor) - jnp.exp(log_factor) * a * total


@jax.custom_jvp
def gammaincc(a: jax.Array, x: jax.Array) -> jax.Array:
    """``jax.scipy.special.gammaincc``, ``_gammaincc_small_a`` where a < 1e-3 and
    0 < x <= 1.5, and ``_temme`` where a >= ``TEMME_A``; the derivatives of the Op's rules
    (-d/da gammainc, -density)."""
    small = (a > 0) & (a < _SMALL_A) & (x > 0) & (x <= 1.5)
    series = _gammaincc_small_a(jnp.where(small, a, _SMALL_A / 2), jnp.where(small, x, 1.0))
    large, big_a, big_x = large_a(a, x)
    xla = jsp.gammaincc(jnp.where(large, 1.0, a), jnp.where(large, 1.0, x))
    value = jnp.where(large, _temme(big_a, big_x)[1], xla)
    return expensive_identity(_at_infinite_a(a, x, jnp.where(small, series, value), 1.0))


def _gammaincc_jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[Any, Any]:
    a, x = primals
    out = gammaincc(a, x)
    slopes = (lambda: -gammainc_grad_a(a, x), lambda: -_gamma_density(a, x))
    return out, tangent_of(out, slopes, tangents)


gammaincc.defjvp(_gammaincc_jvp, symbolic_zeros=True)


@jax.custom_jvp
def betainc(a: jax.Array, b: jax.Array, x: jax.Array) -> jax.Array:
    """``jax.scipy.special.betainc``, whose derivatives in a and b ``jax.grad`` refuses:
    NaN here, as the Op's rule (not implemented)."""
    return expensive_identity(jsp.betainc(a, b, x))


def _betainc_jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[Any, Any]:
    a, b, x = primals
    out = betainc(a, b, x)

    def density() -> jax.Array:  # the Beta(a, b) density, as the Op's rule
        return jnp.exp(jsp.xlogy(a - 1, x) + jsp.xlog1py(b - 1, -x) - betaln(a, b))

    return out, tangent_of(out, (None, None, density), tangents)


betainc.defjvp(_betainc_jvp, symbolic_zeros=True)

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)
#: B_2k / (2k (2k - 1)), k = 1..8: the Stirling series of log Gamma (DLMF 5.11.1)
_STIRLING = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156,
             -3617 / 122400)  # fmt: skip
_STIRLING_FROM = 10.0  # the 9th term is below 2e-18 there


def _stirling_remainder(x: jax.Array) -> jax.Array:
    """log Gamma(x) - ((x - 1/2) log x - x + log(2 pi) / 2), for x >= 10."""
    u = 1 / (x * x)
    total = jnp.full_like(x, _STIRLING[-1])
    for c in reversed(_STIRLING[:-1]):
        total = total * u + c
    return total / x


@jax.custom_jvp
def betaln(a: jax.Array, b: jax.Array) -> jax.Array:
    """log|B(a, b)| split as TOMS 708 does (SciPy's betaln), with s = min(a, b) and
    l = max(a, b): gammaln(s) + gammaln(l) - gammaln(s + l) where l < 10 (or s <= 0);
    gammaln(s) + log(Gamma(l) / Gamma(s + l)) where 0 < s < 10 <= l, the ratio from
    Stirling's series, -(l + s - 1/2) log1p(s / l) - s (log l - 1) + remainders; and both
    by Stirling's series where s >= 10, so that no two large terms cancel.
    ``jax.scipy.special.betaln`` is off by 1.5e-6 at (8.4, 0.35): its ``algdiv`` takes
    h / (1 + h) for TOMS 708's 1 / (1 + h) (jax 0.10)."""
    small, big = jnp.minimum(a, b), jnp.maximum(a, b)
    ratio = (small > 0) & (big >= _STIRLING_FROM) & (big < jnp.inf)
    both = ratio & (small >= _STIRLING_FROM)
    s, l = jnp.where(ratio, small, 1.0), jnp.where(ratio, big, _STIRLING_FROM)  # noqa: E741
    log1p_h = jnp.log1p(s / l)
    remainders = _stirling_remainder(l) - _stirling_remainder(s + l)
    log_ratio = remainders - (l + s - 0.5) * log1p_h - s * (jnp.log(l) - 1)
    # as TOMS 708: with c = s / (s + l), -(s - 1/2) log c and l log1p(s / l) are positive
    stirling = (
        _HALF_LOG_2PI
        - 0.5 * jnp.log(l)
        + (_stirling_remainder(s) + remainders)
        - (s - 0.5) * (log1p_h - jnp.log(s / l))
        - l * log1p_h
    )
    plain = jsp.gammaln(small) + jsp.gammaln(big) - jsp.gammaln(small + big)
    value = jnp.where(both, stirling, jnp.where(ratio, jsp.gammaln(s) + log_ratio, plain))
    infinite = (big == jnp.inf) & (small > 0) & (small < jnp.inf)
    return expensive_identity(jnp.where(infinite, -jnp.inf, value))


def _betaln_jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[Any, Any]:
    a, b = primals
    out = betaln(a, b)
    both = jsp.digamma(a + b)
    slopes = (lambda: jsp.digamma(a) - both, lambda: jsp.digamma(b) - both)
    return out, tangent_of(out, slopes, tangents)


betaln.defjvp(_betaln_jvp, symbolic_zeros=True)
