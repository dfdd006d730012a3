"""JAX implementations of the special functions (``rewritekit.tensor.special``).

Piecewise functions are written so that ``jax.grad`` never meets a
NaN from the branch a ``where`` does not take: ``softplus``, ``xlogy``, ``xlog1py`` and
``log_ndtr`` have their own derivatives (below), and ``log1mexp`` and ``erfcx`` feed each
branch only the inputs that branch is valid for (the double-``where`` trick). The forward
forms are chosen for XLA's compile time on deep chains as well (``bench/xla_depth.py``;
docs/backends.md).

JAX has no ``erfcinv``, ``gammaincinv`` or ``betaincinv``: ``erfcinv`` is SciPy's formula
over ``ndtri``; the two inverses are a fixed number of Newton steps on ``gammainc`` and
``betainc`` (below), with the derivatives of the Ops' rules (``jax.custom_jvp``).
``log_ndtr`` is written here (JAX's loses its relative accuracy in the upper tail: 7% at
x = 8); the incomplete gamma and beta functions, ``betaln`` and ``expi`` are in
``integrals``.
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import jax.scipy.special as jsp
from jax import lax

from rewritekit.backends.common import elementwise, register
from rewritekit.backends.jax import jax_funcify
from rewritekit.backends.jax.elemwise import expensive_identity
from rewritekit.backends.jax.integrals import (
    betainc,
    betaln,
    expi,
    gammainc,
    gammainc_grad_a,
    gammaincc,
    tangent_of,
)
from rewritekit.tensor import special as sf


@jax.custom_jvp
def _softplus(x: jax.Array) -> jax.Array:
    """``log(1 + exp(x))`` as ``max(x, 0) + log1p(exp(-|x|))``, ended on
    ``expensive_identity``; derivative ``sigmoid(x)``.

    The ``max`` is a path of cheap operations from ``x`` to the result, which XLA's fusion
    copies into every use: a deep chain with its gradient compiled 10.8 s at K = 100
    (``bench/xla_depth.py``, case ``softplus``); ending on a divide cuts the copies (see
    docs/backends.md, "What XLA punishes"). The custom derivative keeps
    ``softplus'(0) = 0.5``, which the formula's ``max`` and ``abs`` would not give under
    ``jax.grad``.
    """
    return expensive_identity(jnp.maximum(x, 0) + jnp.log1p(jnp.exp(-jnp.abs(x))))


@_softplus.defjvp
def _softplus_jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    return _softplus(x), jax.nn.sigmoid(x) * t


def _x_times_log(log: Any, pole: float) -> Any:
    """``x * log(y)`` with SciPy's values, 0 where ``x == 0`` and ``y`` is not NaN, for
    ``log`` = ``jnp.log`` (``xlogy``, ``pole`` 0) or ``_log1p`` (``xlog1py``, ``pole`` -1).

    The ``where`` is applied last, to the product: with a safe ``y`` feeding ``log`` (a path
    of cheap operations into the result), a deep ``xlogy`` chain with its gradient compiled
    16.2 s at K = 100, this form 2.6 s (``bench/xla_depth.py``, case ``xlogy``).
    ``jax.grad`` differentiates ``guarded`` instead, whose unselected branch stays finite.
    """

    def guarded(x: jax.Array, y: jax.Array) -> jax.Array:
        # x == 0 gives 0 for every y but NaN (as SciPy: 0 * log(0), 0 * log(inf) and
        # 0 * log(-1) would be NaN); elsewhere x * log(y) is right, including its derivative
        # log(y) at x == 0
        zero = (x == 0) & ((y <= pole) | jnp.isinf(y))
        safe_y = jnp.where(zero, pole + 1, y)
        return jnp.where(zero, jnp.zeros_like(x), x * log(safe_y))

    @jax.custom_jvp
    def x_times_log(x: jax.Array, y: jax.Array) -> jax.Array:
        return jnp.where((x == 0) & ~jnp.isnan(y), jnp.zeros_like(x), x * log(y))

    @x_times_log.defjvp
    def jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[Any, Any]:
        return x_times_log(*primals), jax.jvp(guarded, primals, tangents)[1]

    return x_times_log


def _log1p(y: jax.Array) -> jax.Array:
    """log(1 + y): XLA's log1p is off by 2.7e-14 for 0.3 < |y| < 0.6 (float64 on CPU, jax
    0.10), where log(1 + y) is accurate (1 + y rounds by half an ulp at most, and log is
    well-conditioned away from 1)."""
    return jnp.where(jnp.abs(y) < 0.25, jnp.log1p(y), jnp.log(1 + y))


_xlogy = _x_times_log(jnp.log, 0.0)
_xlog1py = _x_times_log(_log1p, -1.0)


#: Where erfcx switches from exp(x**2) * erfc(x) to its asymptotic series, by dtype: erfc
#: underflows near 26.5 in float64 and 9.2 in float32, and the series' terms are exact to
#: rounding above the switch (the first term left out is 2e-19 of the sum at 10, 2e-10 at 5).
_ERFCX_SWITCH = {"float32": 5.0, "float64": 10.0}
_ERFCX_TERMS = 14
_INV_SQRT_PI = 1 / math.sqrt(math.pi)  # a Python float: weak, keeps float32 float32


def _erfcx_tail(x: jax.Array) -> jax.Array:
    """erfcx(x) for large x: 1 / (x sqrt(pi)) * sum_n (-1)**n (2n-1)!! / (2 x**2)**n,
    nested as 1 - u (1 - 3u (1 - 5u (1 - ...))) with u = 1 / (2 x**2)."""
    u = 0.5 / x / x  # not 0.5 / (x * x): x * x overflows, and its derivative with it
    nested = 1 - (2 * _ERFCX_TERMS - 1) * u
    for n in range(_ERFCX_TERMS - 1, 0, -1):
        nested = 1 - (2 * n - 1) * u * nested
    return _INV_SQRT_PI / x * nested


def _erfcx(x: jax.Array) -> jax.Array:
    """exp(x**2) * erfc(x) below the switch (XLA's erfc computes exp(-x*x) from the same
    rounded square, so the product keeps full precision), the asymptotic series above;
    float16 and bfloat16 compute in float32, where exp(x**2) does not overflow early.
    The result goes through ``expensive_identity`` (see docs/backends.md, "What XLA
    punishes")."""
    if x.dtype not in (jnp.float32, jnp.float64):
        return _erfcx(x.astype(jnp.float32)).astype(x.dtype)
    switch = _ERFCX_SWITCH[x.dtype.name]
    below = x < switch
    small = jnp.where(below, x, switch)
    large = jnp.where(below, switch, x)
    value = jnp.where(below, jnp.exp(small * small) * jsp.erfc(small), _erfcx_tail(large))
    # XLA expands erfc into polynomials of cheap ops; ending on a divide keeps its fusion
    # from copying them into every use (a deep chain compiled 35 s at K = 25 without)
    return expensive_identity(value)


_SQRT_HALF = math.sqrt(0.5)


def _erfcinv(y: jax.Array) -> jax.Array:
    """erfcinv(y) = -ndtri(y / 2) / sqrt(2), SciPy's formula (the halving is exact)."""
    return -jsp.ndtri(0.5 * y) * _SQRT_HALF


def in_float64(fn: Any) -> Any:
    """``fn`` computed in float64, its result in the inputs' dtype: the Newton steps and
    series below are sized for float64, and cost no more in float32 than they would."""

    def run(*args: jax.Array) -> jax.Array:
        dtype = args[0].dtype
        return fn(*(arg.astype(jnp.float64) for arg in args)).astype(dtype)

    return run


#: Newton steps of the inverses below: from their starting points every one of 10**5
#: random draws over 0.01 <= a, b <= 1000 and 1e-250 <= y <= 1 - 1e-13 had converged after 6
#: (against SciPy; tests/tensor/test_special_functions.py keeps a grid of them)
_NEWTON_STEPS = 8


def _normal_quantile_guess(p: jax.Array, upper: jax.Array) -> jax.Array:
    """A rough standard normal quantile of p (of 1 - p where ``upper``), Numerical Recipes'
    rational approximation (absolute error < 4.5e-4): a starting point only."""
    t = jnp.sqrt(-2 * jnp.log(p))
    z = (2.30753 + t * 0.27061) / (1 + t * (0.99229 + t * 0.04481)) - t
    return jnp.where(upper, -z, z)


def _gammaincinv_start(a: jax.Array, y: jax.Array, q: jax.Array, upper: jax.Array) -> Any:
    """Numerical Recipes' first x (invgammp: Wilson-Hilferty for a > 1, a power law or an
    exponential tail for a <= 1), and in the lower tail at least the lower bound
    (y Gamma(a + 1))**(1 / a), from gammainc(a, x) <= x**a / Gamma(a + 1)."""
    z = _normal_quantile_guess(jnp.where(upper, q, y), upper)
    wilson = a * (1 - 1 / (9 * a) + z / (3 * jnp.sqrt(a))) ** 3
    bound = jnp.exp((jnp.log(y) + jsp.gammaln(a + 1)) / a)
    large_a = jnp.where(upper, jnp.maximum(wilson, 1e-3), jnp.maximum(wilson, bound))
    t = 1 - a * (0.253 + a * 0.12)
    small_a = jnp.where(y < t, (y / t) ** (1 / a), 1 - jnp.log(q / (1 - t)))
    return jnp.where(a > 1, large_a, small_a)


@jax.custom_jvp
def _gammaincinv(a: jax.Array, y: jax.Array) -> jax.Array:
    """The x with gammainc(a, x) = y by Newton's method, where the equation is nearly
    linear: log gammainc(a, x) against log x in the lower tail (y <= 1/2), and
    log gammaincc(a, x) = log(1 - y) against x in the upper one (1 - y is exact there, so
    the upper tail keeps its relative accuracy)."""
    shape_ok = (a > 0) & (a < jnp.inf)
    valid = shape_ok & (y > 0) & (y < 1)
    edge = jnp.where(y == 0, 0.0, jnp.where(y == 1, jnp.inf, jnp.nan))
    a, y = jnp.where(valid, a, 1.0), jnp.where(valid, y, 0.5)
    upper = y > 0.5
    q = 1 - y
    log_y, log_q, log_gamma_a = jnp.log(y), jnp.log(q), jsp.gammaln(a)

    def newton(_: Any, x: jax.Array) -> jax.Array:
        log_x = jnp.log(x)
        log_density = (a - 1) * log_x - x - log_gamma_a
        log_p, log_c = jnp.log(gammainc(a, x)), jnp.log(gammaincc(a, x))
        lower_step = jnp.exp(log_x - (log_p - log_y) * jnp.exp(log_p - log_x - log_density))
        upper_step = x + (log_c - log_q) * jnp.exp(log_c - log_density)
        new = jnp.where(upper, jnp.where(upper_step > 0, upper_step, 0.5 * x), lower_step)
        return jnp.where(jnp.isfinite(new) & (new > 0), new, x)

    x = lax.fori_loop(0, _NEWTON_STEPS, newton, _gammaincinv_start(a, y, q, upper))
    return jnp.where(valid, x, jnp.where(shape_ok, edge, jnp.nan))


def _gammaincinv_jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[Any, Any]:
    a, y = primals
    x = _gammaincinv(a, y)
    # dx/dy = Gamma(a) x**(1 - a) e**x, as the Op's rule; dx/da = -(d gammainc / da) dx/dy
    dx_dy = jnp.exp(x + jsp.gammaln(a) - jsp.xlogy(a - 1, x))
    slopes = (lambda: -gammainc_grad_a(a, x) * dx_dy, lambda: dx_dy)
    return x, tangent_of(x, slopes, tangents)


_gammaincinv.defjvp(_gammaincinv_jvp, symbolic_zeros=True)


def _log_beta(a: jax.Array, b: jax.Array) -> jax.Array:
    """log B(a, b) from gammaln, as the Op's rule: jax.scipy.special.betaln is off by 1e-6
    at (1, 8) (jax 0.10)."""
    return jsp.gammaln(a) + jsp.gammaln(b) - jsp.gammaln(a + b)


def _betaincinv_start(a: jax.Array, b: jax.Array, y: jax.Array, q: jax.Array) -> Any:
    """Numerical Recipes' first x (invbetai: a normal approximation for a, b >= 1, the
    power laws of the two tails otherwise)."""
    upper = y > 0.5
    z = -_normal_quantile_guess(jnp.where(upper, q, y), upper)  # the sign of the recipe
    shape = (z * z - 3) / 6
    h = 2 / (1 / (2 * a - 1) + 1 / (2 * b - 1))
    w = z * jnp.sqrt(shape + h) / h - (1 / (2 * b - 1) - 1 / (2 * a - 1)) * (
        shape + 5 / 6 - 2 / (3 * h)
    )
    normal = a / (a + b * jnp.exp(2 * w))
    t = jnp.exp(a * jnp.log(a / (a + b))) / a
    u = jnp.exp(b * jnp.log(b / (a + b))) / b
    tails = jnp.where(
        y < t / (t + u), (a * (t + u) * y) ** (1 / a), 1 - (b * (t + u) * q) ** (1 / b)
    )
    return jnp.where((a >= 1) & (b >= 1), normal, tails)


def _betainc_newton(a: Any, b: Any, y: Any, q: Any, x: jax.Array) -> jax.Array:
    """The x <= 1/2 (about) with betainc(a, b, x) = y, from ``x``: Newton's method on
    log betainc against log x for y <= 1/2, on log(1 - betainc) = log q against x above.
    1 - betainc(a, b, x) is betainc(b, a, 1 - x) where the density is below 1 (there the
    rounding of 1 - x costs little), and 1 - betainc(a, b, x) where it is above (x is near
    0, where 1 - x would round x away)."""
    upper = y > 0.5
    log_y, log_q, log_beta = jnp.log(y), jnp.log(q), _log_beta(a, b)
    bound = jnp.exp((log_y + jnp.log(a) + log_beta) / a)  # betainc <= x**a / (a B(a, b))
    start = jnp.clip(jnp.where(upper, x, jnp.maximum(x, bound)), 1e-300, 0.75)

    def newton(_: Any, x: jax.Array) -> jax.Array:
        log_x = jnp.log(x)
        log_density = (a - 1) * log_x + (b - 1) * jnp.log1p(-x) - log_beta
        p = jsp.betainc(a, b, x)
        c = jnp.where(log_density < 0, jsp.betainc(b, a, 1 - x), 1 - p)
        log_p, log_c = jnp.log(p), jnp.log(c)
        lower_step = jnp.exp(log_x - (log_p - log_y) * jnp.exp(log_p - log_x - log_density))
        upper_step = x + (log_c - log_q) * jnp.exp(log_c - log_density)
        new = jnp.where(upper, upper_step, lower_step)
        new = jnp.where(new <= 0, 0.5 * x, jnp.where(new >= 1, 0.5 * (1 + x), new))
        return jnp.where(jnp.isfinite(new), new, x)

    return lax.fori_loop(0, _NEWTON_STEPS, newton, start)


@jax.custom_jvp
def _betaincinv(a: jax.Array, b: jax.Array, y: jax.Array) -> jax.Array:
    """The x with betainc(a, b, x) = y. Newton's method runs on the smaller of x and 1 - x
    (the start says which): 1 - x solves betainc(b, a, 1 - x) = 1 - y, so an x near 1 keeps
    the relative accuracy of 1 - x, and one near 0 that of x."""
    shape_ok = (a > 0) & (b > 0) & (a < jnp.inf) & (b < jnp.inf)
    valid = shape_ok & (y > 0) & (y < 1)
    edge = jnp.where(y == 0, 0.0, jnp.where(y == 1, 1.0, jnp.nan))
    a, b, y = jnp.where(valid, a, 1.0), jnp.where(valid, b, 1.0), jnp.where(valid, y, 0.5)
    q = 1 - y
    start = _betaincinv_start(a, b, y, q)
    swap = start > 0.5
    x = _betainc_newton(
        jnp.where(swap, b, a),
        jnp.where(swap, a, b),
        jnp.where(swap, q, y),
        jnp.where(swap, y, q),
        jnp.where(swap, 1 - start, start),
    )
    return jnp.where(valid, jnp.where(swap, 1 - x, x), jnp.where(shape_ok, edge, jnp.nan))


def _betaincinv_jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[Any, Any]:
    a, b, y = primals
    x = _betaincinv(a, b, y)
    # dx/dy = B(a, b) x**(1 - a) (1 - x)**(1 - b), as the Op's rule; not implemented in a, b
    slopes = (
        None,
        None,
        lambda: jnp.exp(_log_beta(a, b) - jsp.xlogy(a - 1, x) - jsp.xlog1py(b - 1, -x)),
    )
    return x, tangent_of(x, slopes, tangents)


_betaincinv.defjvp(_betaincinv_jvp, symbolic_zeros=True)


# --- log_ndtr -----------------------------------------------------------------------------


def _log_ndtr_parts(x: jax.Array) -> tuple[jax.Array, jax.Array]:
    """log(ndtr(x)) and its derivative ndtr'(x) / ndtr(x), from one ``_erfcx(s)``, with
    s = -x / sqrt(2) below 1 and x / sqrt(2) above (s >= -0.71): log(erfcx(s) / 2) - s**2
    below (two terms of one sign far in the lower tail), log1p(-erfc(s) / 2) above (where
    erfc(s) / 2 <= 0.16, in the range of XLA's accurate log1p; see ``_log1p``); the
    derivative sqrt(2 / pi) / erfcx(-x / sqrt(2)), with erfcx(-s) = 2 exp(s**2) - erfcx(s)
    above."""
    upper = x >= 1
    s = jnp.where(upper, x, -x) * _SQRT_HALF
    scaled = _erfcx(s)
    value = jnp.where(
        upper, jnp.log1p(-0.5 * scaled * jnp.exp(-s * s)), jnp.log(0.5 * scaled) - s * s
    )
    slope = (2 * _INV_SQRT_PI * _SQRT_HALF) / jnp.where(upper, 2 * jnp.exp(s * s) - scaled, scaled)
    return expensive_identity(value), slope


@jax.custom_jvp
def _log_ndtr(x: jax.Array) -> jax.Array:
    """log(ndtr(x)) (``_log_ndtr_parts``): ``jax.scipy.special.log_ndtr`` is off by 7% at
    x = 8 (the log of an ndtr rounded to 1 - 6.7e-16) and by 2e-14 at x = -40 (jax 0.10),
    and its deep chains compile slowly (13.7 s at K = 25, ``bench/xla_depth.py``'s
    measure; 1.6 s here, one ``erfcx`` per step for the value and the derivative)."""
    return _log_ndtr_parts(x)[0]


@_log_ndtr.defjvp
def _log_ndtr_jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[Any, Any]:
    value, slope = _log_ndtr_parts(primals[0])
    return value, tangents[0] * slope


def _digamma(x: jax.Array) -> jax.Array:
    """``jax.scipy``'s digamma with SciPy's values at the pole 0: -inf at +0, +inf at -0
    (JAX gives NaN there; both give NaN at the negative integers)."""
    zero = x == 0
    return jnp.where(zero, jnp.copysign(jnp.inf, -x), jsp.digamma(jnp.where(zero, 1, x)))


def _gammaln(x: jax.Array) -> jax.Array:
    """``jax.scipy``'s gammaln with SciPy's -inf at -inf (JAX gives +inf)."""
    return jnp.where(x == -jnp.inf, -jnp.inf, jsp.gammaln(x))


def _cot_derivative(n: int, x: jax.Array) -> jax.Array:
    """The n-th derivative of cot(pi x), by n nested ``jax.jvp``s of cot(pi r) with
    r = x - round(x) (cot has period 1; the reduced argument keeps sin accurate)."""

    def cot(v: jax.Array) -> jax.Array:
        r = v - jnp.round(v)
        return jnp.cos(jnp.pi * r) / jnp.sin(jnp.pi * r)

    def derivative(f: Any) -> Any:
        return lambda v: jax.jvp(f, (v,), (jnp.ones_like(v),))[1]

    fn = cot
    for _ in range(n):
        fn = derivative(fn)
    return fn(x)


def _polygamma(n: int, x: jax.Array) -> jax.Array:
    """``jax.scipy``'s polygamma, with SciPy's values where JAX's differ, for n >= 1:
    (-1)**(n+1) inf at the poles (0, the negative integers, -inf), 0 at +inf (JAX gives
    NaN at both), and at negative x the reflection formula
    psi_n(x) = (-1)**n psi_n(1 - x) - pi d**n/dx**n cot(pi x): JAX's Hurwitz-zeta form
    holds for x > 0 only (trigamma(-20.2) gave -0.048 for 28.5)."""
    if n == 0:
        return _digamma(x)
    pole = (x <= 0) & (x == jnp.floor(x))
    top = x == jnp.inf
    negative = (x < 0) & ~pole
    safe = jnp.where(pole | top, 1, x)
    value = jsp.polygamma(n, jnp.where(negative, 1 - safe, safe))
    cot = _cot_derivative(n, jnp.where(negative, safe, 0.5))
    value = jnp.where(negative, (-1) ** n * value - jnp.pi * cot, value)
    return jnp.where(pole, (-1) ** (n + 1) * jnp.inf, jnp.where(top, 0, value))


# JAX's own forms of the functions the NumPy backend takes from SciPy (see above)
TABLE = elementwise.special_functions(jnp, jsp) | {
    sf.Digamma: _digamma,
    sf.Gammaln: _gammaln,
    sf.Erfcx: _erfcx,
    sf.Erfcinv: _erfcinv,
    sf.Gammaincinv: in_float64(_gammaincinv),
    sf.Betaincinv: in_float64(_betaincinv),
    sf.Sigmoid: jax.nn.sigmoid,
    sf.Softplus: _softplus,
    sf.LogSigmoid: lambda x: -_softplus(-x),
    sf.Logit: lambda p: jnp.log(p) - jnp.log1p(-p),
    sf.Xlogy: _xlogy,
    sf.Xlog1py: _xlog1py,
    sf.LogNdtr: _log_ndtr,
    # JAX's own, ended on expensive_identity: jax.scipy's ndtr (a select over erf and erfc,
    # which XLA expands into polynomials of cheap operations) and ndtri (rational
    # approximations under selects) are cheap paths from input to output (a deep ndtr chain
    # with its gradient compiled 103 s at K = 100 without the cut; bench/xla_depth.py's
    # measure, docs/backends.md "What XLA punishes")
    sf.Ndtr: lambda x: expensive_identity(jsp.ndtr(x)),
    sf.Ndtri: lambda p: expensive_identity(jsp.ndtri(p)),
    sf.Expi: in_float64(expi),
    sf.Gammaincc: in_float64(gammaincc),
    sf.Gammainc: gammainc,
    sf.GammaincGradA: gammainc_grad_a,
    sf.Betainc: betainc,
    sf.Betaln: in_float64(betaln),
}
register(jax_funcify, elementwise.special(jnp, jsp, TABLE))
jax_funcify.register(
    sf.Polygamma,
    lambda op, node: elementwise.elemwise_impl(jnp, lambda x: _polygamma(op.n, x), node),
)
