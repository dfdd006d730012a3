"""JAX implementations of the Bessel functions (``rewritekit.tensor.bessel``).

``i0 i1 i0e i1e`` are ``jax.scipy.special``'s. JAX has no Bessel functions of real order, so
``ive`` and ``kv`` are computed here, in float64, to about 2e-13 relative to SciPy over
|v| <= 300 and 1e-300 <= x <= 1e6 (``tests/tensor/test_special_functions.py``):

- ``K_v(x) = integral over t >= 0 of exp(-x cosh t) cosh(v t)`` (DLMF 10.32.9) by the
  trapezoidal rule, over the window where the integrand is within e**-40 of its peak (at
  sinh t = v / x). The integrand is even and analytic in a strip, so the rule converges
  geometrically (Trefethen & Weideman, SIAM Review 56, 2014): 64 nodes. For x < 0.1 and
  v < 8.5 the window grows like log(1 / x); there Temme's series gives K_mu and K_{mu+1}
  for |mu| <= 1/2 and the upward recurrence (stable for K) reaches v (Numerical Recipes
  6.7, ``bessik``).
- ``I_v(x)`` for v >= 0: the power series (DLMF 10.25.2) for x <= 20, 48 terms, all
  positive; above, the integral of ``exp(x cosh w - v w) / (2 pi i)`` (DLMF 10.9.19's
  contour) along its steepest-descent path, where the integrand is real, positive, even
  and analytic (Gil, Segura & Temme, Numerical Methods for Special Functions, 5.5):
  ``I_v(x) = 1/pi * integral over 0 <= theta < pi of exp(x cosh t cos theta - v t)`` with
  ``x sinh t sin theta = v theta``; 32 nodes.
- Negative orders: ``K_{-v} = K_v``, ``I_{-v} = I_v + 2/pi sin(v pi) K_v`` (DLMF 10.27.3),
  or for x < 0.1 and v < 8.5 the power series of I_{-v}, whose first term dominates there.

The derivatives in x are the Ops' rules (``jax.custom_jvp``); in v, NaN.
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import jax.scipy.special as jsp
import numpy as np
from jax import lax

from rewritekit.backends.common import elementwise, register
from rewritekit.backends.jax import jax_funcify
from rewritekit.backends.jax.special import in_float64, tangent_of
from rewritekit.tensor import bessel as bs

_CUT = 40.0  # the integrands are cut where they fall below e**-40 of their peak
_K_NODES = 64
_I_NODES = 32
_SERIES_BELOW = 20.0  # I: the power series up to x = 20, the integral above
_SERIES_TERMS = 48  # (x/2)**(2k) / (k! Gamma(v + k + 1)) < 1e-17 of the sum for k >= 48
_TEMME_BELOW = 0.1  # K: Temme's series for x < 0.1 and orders below 8.5
_TEMME_STEPS = 8
_TEMME_TERMS = 8  # (x/2)**(2k) / (k!)**2 < 1e-30 at x = 0.1, k = 8

#: Taylor coefficients of 1 / Gamma(1 + z) (DLMF 5.7.1; Abramowitz & Stegun 6.1.34), for
#: Temme's gam1, gam2 at |mu| <= 1/2, where the terms left out are below 1e-18
_RGAMMA = (
    1.0,
    0.5772156649015329,
    -0.6558780715202538,
    -0.04200263503409524,
    0.16653861138229148,
    -0.04219773455554434,
    -0.009621971527876973,
    0.0072189432466631,
    -0.0011651675918590652,
    -0.00021524167411495098,
    0.0001280502823881162,
    -2.0134854780788242e-05,
    -1.2504934821426706e-06,
    1.1330272319816958e-06,
    -2.0563384169776071e-07,
    6.116095104481416e-09,
    5.002007644469223e-09,
    -1.1812745704870201e-09,
    1.0434267116911006e-10,
    7.782263439905071e-12,
    -3.6968056186422055e-12,
)


def _sin_pi(v: jax.Array) -> jax.Array:
    """sin(pi v), exactly 0 at the integers (where 2/pi sin(v pi) K_v must vanish)."""
    n = jnp.round(v)
    return jnp.where(jnp.mod(n, 2) == 0, 1.0, -1.0) * jnp.sin(math.pi * (v - n))


def _k_trapezoid(v: jax.Array, x: jax.Array) -> tuple[jax.Array, jax.Array]:
    """K_v(x) = exp(log_peak) * integral, for v >= 0 and x > 0: ``(log_peak, integral)``.

    The exponent -x cosh t + v t is concave with its peak at sinh(peak) = v / x; with
    r = x cosh(peak) = hypot(x, v) it falls by r (cosh d - 1) + v (sinh d - d) at
    t = peak + d, which bounds the window: by at least r (cosh d - 1) to the right and
    r (e**-|d| - 1 + |d|) to the left.
    """
    r = jnp.hypot(x, v)
    peak = jnp.arcsinh(v / x)
    c = _CUT / r
    left = jnp.minimum(peak, c + jnp.sqrt(2 * c))
    right = jnp.arccosh(1 + c)
    h = (left + right) / _K_NODES
    t = (peak - left)[..., None] + h[..., None] * jnp.arange(_K_NODES + 1)
    d = t - peak[..., None]
    r_, v_ = r[..., None], v[..., None]
    # the fall from the peak: as r (cosh d - 1) + v (sinh d - d) near it, directly far to
    # the left (where the two terms of the first form would cancel)
    near = -r_ * 2 * jnp.sinh(d / 2) ** 2 - v_ * (jnp.sinh(d) - d)
    far = (r_ - x[..., None] * jnp.cosh(t)) + v_ * d
    values = 0.5 * jnp.exp(jnp.where(d < -1, far, near)) * (1 + jnp.exp(-2 * v_ * t))
    weights = np.ones(_K_NODES + 1)
    weights[[0, -1]] = 0.5
    return v * peak - r, h * (values @ weights)


def _temme(mu: jax.Array, x: jax.Array) -> tuple[jax.Array, jax.Array]:
    """K_mu(x) and K_{mu+1}(x) for |mu| <= 1/2 and small x, by Temme's series (Numerical
    Recipes 6.7): gam1 = (1/Gamma(1 - mu) - 1/Gamma(1 + mu)) / (2 mu) and
    gam2 = (1/Gamma(1 - mu) + 1/Gamma(1 + mu)) / 2 from the Taylor series of 1/Gamma."""
    mu2 = mu * mu
    gam1 = -jnp.polyval(jnp.array(_RGAMMA[1::2][::-1]), mu2)
    gam2 = jnp.polyval(jnp.array(_RGAMMA[0::2][::-1]), mu2)
    rgamma_plus, rgamma_minus = gam2 - mu * gam1, gam2 + mu * gam1
    pi_mu = math.pi * mu
    fact = jnp.where(mu == 0, 1.0, pi_mu / jnp.sin(jnp.where(mu == 0, 1.0, pi_mu)))
    d = -jnp.log(x / 2)
    e = mu * d
    sinhc = jnp.where(e == 0, 1.0, jnp.sinh(e) / jnp.where(e == 0, 1.0, e))
    f = fact * (gam1 * jnp.cosh(e) + gam2 * sinhc * d)
    p = 0.5 * jnp.exp(e) / rgamma_plus
    q = 0.5 * jnp.exp(-e) / rgamma_minus

    def add_term(i: Any, carry: tuple[jax.Array, ...]) -> tuple[jax.Array, ...]:
        f, p, q, term, k_mu, k_next = carry
        f = (i * f + p + q) / (i * i - mu2)
        term = term * (x * x / 4) / i
        p, q = p / (i - mu), q / (i + mu)
        return f, p, q, term, k_mu + term * f, k_next + term * (p - i * f)

    start = (f, p, q, jnp.ones_like(x), f, p)
    *_, k_mu, k_next = lax.fori_loop(1, _TEMME_TERMS + 1, add_term, start)
    return k_mu, k_next * 2 / x


def _k_small(v: jax.Array, x: jax.Array) -> jax.Array:
    """K_v(x) for 0 <= v < 8.5: Temme's K_mu, K_{mu+1} and the upward recurrence
    K_{w+1} = K_{w-1} + 2w/x K_w (DLMF 10.29.1)."""
    n = jnp.floor(v + 0.5)
    mu = v - n

    def step(i: Any, ks: tuple[jax.Array, jax.Array]) -> tuple[jax.Array, jax.Array]:
        k0, k1 = ks
        more = i <= n
        return jnp.where(more, k1, k0), jnp.where(more, (mu + i) * (2 / x) * k1 + k0, k1)

    return lax.fori_loop(1, _TEMME_STEPS + 1, step, _temme(mu, x))[0]


def _k(v: jax.Array, x: jax.Array) -> jax.Array:
    """K_v(x) for every real v and x, with SciPy's values at the edges: inf at x = 0 (for
    every order), 0 at x = inf, NaN for x < 0."""
    v = jnp.abs(v)
    ok = (x > 0) & (x < jnp.inf) & (v < jnp.inf)
    small = ok & (x < _TEMME_BELOW) & (v < _TEMME_STEPS + 0.5)
    log_peak, integral = _k_trapezoid(
        jnp.where(ok & ~small, v, 0.0), jnp.where(ok & ~small, x, 1.0)
    )
    near_zero = _k_small(jnp.where(small, v, 0.0), jnp.where(small, x, _TEMME_BELOW / 2))
    edge = jnp.where(x == 0, jnp.inf, jnp.where((x == jnp.inf) & (v < jnp.inf), 0.0, jnp.nan))
    edge = jnp.where(jnp.isnan(v), jnp.nan, edge)
    return jnp.where(small, near_zero, jnp.where(ok, jnp.exp(log_peak) * integral, edge))


def _gamma_sign(z: jax.Array) -> jax.Array:
    """The sign of Gamma(z) away from its poles: -1 on (-1, 0), (-3, -2), ..., else 1."""
    return jnp.where((z < 0) & (jnp.mod(jnp.floor(z), 2) == 1), -1.0, 1.0)


def _ive_series(v: jax.Array, x: jax.Array) -> tuple[jax.Array, jax.Array]:
    """I_v(x) e**-x = (x/2)**v e**-x / Gamma(v + 1) * sum_k (x**2/4)**k / (k! (v+1)_k), as
    ``(log of the factor, signed sum)``, for v >= 0, and for negative v that are not
    integers at small x (larger x would cancel the first terms, which alternate in sign)."""

    def add_term(k: Any, carry: tuple[jax.Array, jax.Array]) -> tuple[jax.Array, jax.Array]:
        term, total = carry
        term = term * (x * x / 4) / (k * (v + k))
        return term, total + term

    one = _gamma_sign(v + 1) * jnp.ones_like(x)
    _, total = lax.fori_loop(1, _SERIES_TERMS, add_term, (one, one))
    return v * jnp.log(x / 2) - jsp.gammaln(v + 1) - x, total


def _ive_integral(v: jax.Array, x: jax.Array) -> tuple[jax.Array, jax.Array]:
    """I_v(x) e**-x along the steepest-descent path (module docstring), for v >= 0, x > 20,
    as ``(log of the peak, integral relative to it)``.

    With s = theta / sin(theta) and r(theta) = hypot(x, v s) = x cosh t, the exponent falls
    from its peak (theta = 0, t = asinh(v / x)) by 2 r(theta) sin(theta/2)**2 - (r(theta)
    - r(0)) + v (t - t(0)), written so that nothing large cancels; it falls by more than 48
    at cos(theta) = 1 - 48 / r(0), where the nodes end (the dropped tail, near theta = pi,
    is below e**-2x <= e**-40 of the peak).
    """
    r = jnp.hypot(x, v)
    peak = jnp.arcsinh(v / x)
    end = jnp.arccos(jnp.maximum(-1.0, 1 - 48.0 / r))
    h = end / _I_NODES
    theta = h[..., None] * jnp.arange(_I_NODES)
    safe = jnp.where(theta == 0, 1.0, theta)
    s = jnp.where(theta == 0, 1.0, safe / jnp.sin(safe))
    x_, v_ = x[..., None], v[..., None]
    r_theta = jnp.hypot(x_, v_ * s)
    t = jnp.arcsinh(v_ * s / x_)
    fall = (
        -2 * r_theta * jnp.sin(theta / 2) ** 2
        + v_ * v_ * (s * s - 1) / (r_theta + r[..., None])
        - v_ * (t - peak[..., None])
    )
    weights = np.ones(_I_NODES)
    weights[0] = 0.5
    log_peak = v * v / (r + x) - v * peak  # x cosh(peak) - v peak - x
    return log_peak, h * (jnp.exp(fall) @ weights) / math.pi


def _i(v: jax.Array, x: jax.Array) -> jax.Array:
    """I_v(x) e**-|x| for every real v and x, with SciPy's values at the edges (x = 0,
    x = +-inf, v = +-inf)."""
    a, ax = jnp.abs(v), jnp.abs(x)
    integer = v == jnp.round(v)
    ok = (ax > 0) & (ax < jnp.inf) & (a < jnp.inf)
    xs, vs = jnp.where(ok, ax, 1.0), jnp.where(ok, a, 0.0)
    reflect = (v < 0) & ~integer  # I_{-n} = I_n for integers
    # negative orders: I_{-a} = I_a + 2/pi sin(a pi) K_a (K_a e**-x = kve(a, x) e**-2x),
    # K by the trapezoidal rule; where that needs Temme's series (x < 0.1, a < 8.5), the
    # power series of I_{-a} instead, whose first term dominates there
    by_k = reflect & ((xs >= _TEMME_BELOW) | (vs >= _TEMME_STEPS + 0.5))
    series = xs <= _SERIES_BELOW
    below = _ive_series(jnp.where(reflect & ~by_k, -vs, vs), jnp.where(series, xs, 1.0))
    above = _ive_integral(vs, jnp.where(series, 2 * _SERIES_BELOW, xs))
    log_factor = jnp.where(series, below[0], above[0])
    value = jnp.exp(log_factor) * jnp.where(series, below[1], above[1])
    log_peak, integral = _k_trapezoid(jnp.where(by_k, vs, 0.0), jnp.where(by_k, xs, 1.0))
    k = jnp.exp(log_peak - xs) * integral
    value = value + jnp.where(by_k, 2 / math.pi * _sin_pi(vs) * k, 0.0)
    # I_n(-x) = (-1)**n I_n(x); NaN for other orders, as SciPy
    odd = jnp.mod(jnp.round(a), 2) == 1
    value = jnp.where(x < 0, jnp.where(integer, jnp.where(odd, -value, value), jnp.nan), value)
    at_zero = jnp.where(v == 0, 1.0, jnp.where((v > 0) | integer, 0.0, jnp.nan))
    edge = jnp.where(x == 0, at_zero, jnp.nan)  # x = +-inf: NaN, as SciPy
    return jnp.where(ok, value, jnp.where(jnp.isnan(x) | jnp.isnan(v), jnp.nan, edge))


@jax.custom_jvp
def _ive(v: jax.Array, x: jax.Array) -> jax.Array:
    return _i(v, x)


@jax.custom_jvp
def _kv(v: jax.Array, x: jax.Array) -> jax.Array:
    return _k(v, x)


def _defjvp(fn: Any, slope: Any) -> None:
    """The derivative in x of ``fn(v, x)`` is ``slope(v, x, out)`` (the Op's rule); in v,
    NaN."""

    def jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[Any, Any]:
        v, x = primals
        out = fn(v, x)
        return out, tangent_of(out, (None, lambda: slope(v, x, out)), tangents)

    fn.defjvp(jvp, symbolic_zeros=True)


_defjvp(_ive, lambda v, x, out: (_ive(v - 1, x) + _ive(v + 1, x)) / 2 - jnp.sign(x) * out)
_defjvp(_kv, lambda v, x, out: -(_kv(v - 1, x) + _kv(v + 1, x)) / 2)

TABLE = elementwise.bessel_functions(jsp) | {bs.Ive: in_float64(_ive), bs.Kv: in_float64(_kv)}
register(jax_funcify, elementwise.bessel(jnp, TABLE))
