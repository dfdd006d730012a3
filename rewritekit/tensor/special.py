"""Special functions: logistic, error and gamma functions, the normal distribution's
``ndtr log_ndtr ndtri``, the incomplete gamma and beta functions and their inverses, the
exponential integral, and stable log-forms (the Bessel functions are in ``bessel``).

They are elementwise float functions (``FloatElemwise``): float inputs keep their dtype,
integer and bool inputs compute in float64.

Derivatives are written with the functions of this family where they are accurate where
the naive form is not: ``sigmoid(-x)`` rather than ``1 - sigmoid(x)``, ``expm1`` rather
than ``exp(x) - 1``. Where a derivative is not implemented (``betaincinv``
and ``betainc`` in their shape parameters), the rule gives NaN, so that a gradient through
it cannot pass for a number (see ``no_derivative``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from rewritekit.errors import GraphTypeError
from rewritekit.ir import Grads, Var, Vars
from rewritekit.ir.nodes import short_name
from rewritekit.ir.patterns import pattern_function
from rewritekit.tensor.elemwise import abs as absolute
from rewritekit.tensor.elemwise import equal, exp, expm1, log, log1p, square, where
from rewritekit.tensor.ufunc import FloatElemwise, defvjp


class Sigmoid(FloatElemwise):
    """1 / (1 + exp(-x)), the logistic function (SciPy's expit)."""


class Softplus(FloatElemwise):
    """log(1 + exp(x)) = logaddexp(0, x), without overflow."""


class LogSigmoid(FloatElemwise):
    """log(sigmoid(x)) = -softplus(-x), accurate for large |x|."""


class Logit(FloatElemwise):
    """log(p / (1 - p)), the inverse of sigmoid. Domain: 0 <= p <= 1."""


class Erf(FloatElemwise):
    """The error function, 2/sqrt(pi) * integral of exp(-t**2) from 0 to x."""


class Erfc(FloatElemwise):
    """1 - erf(x), accurate for large x."""


class Erfcx(FloatElemwise):
    """exp(x**2) * erfc(x), the scaled complementary error function (SciPy's erfcx).

    Finite where erfc underflows (about 1 / (x sqrt(pi)) for large x); overflows to inf
    below about x = -26.6 in float64 (-9.4 in float32), as exp(x**2) does.
    """


class Erfinv(FloatElemwise):
    """The inverse of erf. Domain: -1 <= x <= 1."""


class Erfcinv(FloatElemwise):
    """The inverse of erfc: erfcinv(erfc(x)) = x. Domain: 0 <= y <= 2 (inf at 0, -inf at 2)."""


class Gamma(FloatElemwise):
    """The gamma function, with its sign: Gamma(x) < 0 for x in (-1, 0), (-3, -2), ...

    At its poles, as SciPy: +inf at +0.0, -inf at -0.0, NaN at the negative integers;
    inf above x = 171.62 in float64 (35.04 in float32).
    """


class Gammaln(FloatElemwise):
    """log|Gamma(x)|. Domain: x not a non-positive integer."""


class Digamma(FloatElemwise):
    """d/dx log Gamma(x) (SciPy's psi). Domain: x not a non-positive integer."""


class Polygamma(FloatElemwise):
    """polygamma(n, x), the n-th derivative of digamma: d^(n+1)/dx^(n+1) log Gamma(x).

    ``n`` (an int >= 0, the Op's parameter) is the order: n = 0 is digamma, n = 1 trigamma.
    Domain: x not a non-positive integer.
    """

    __props__ = ("n",)

    def __init__(self, n: int) -> None:
        if not isinstance(n, (int, np.integer)) or isinstance(n, (bool, np.bool_)) or n < 0:
            raise GraphTypeError(f"polygamma: the order n must be an int >= 0, got {n!r}")
        super().__init__(int(n))

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        # d/dx polygamma(n, x) = polygamma(n + 1, x); the rule needs the order n
        return [cotangents[0] * polygamma(self.n + 1, inputs[0])]


class Gammaincinv(FloatElemwise):
    """gammaincinv(a, y): the x >= 0 with gammainc(a, x) = y, the inverse of the regularized
    lower incomplete gamma function (SciPy's gammaincinv; the quantile function of the
    Gamma(a, 1) distribution). Domain: a > 0, 0 <= y <= 1 (0 at y = 0, inf at y = 1).

    Differentiable in y (by the inverse function rule: dx/dy = Gamma(a) x**(1 - a) e**x)
    and in a (holding gammainc(a, x) = y: dx/da = -gammainc_grad_a(a, x) dx/dy).
    """

    nin = 2


class Betaincinv(FloatElemwise):
    """betaincinv(a, b, y): the x in [0, 1] with betainc(a, b, x) = y, the inverse of the
    regularized incomplete beta function (SciPy's betaincinv; the quantile function of the
    Beta(a, b) distribution). Domain: a > 0, b > 0, 0 <= y <= 1.

    Differentiable in y (dx/dy = B(a, b) x**(1 - a) (1 - x)**(1 - b)); the derivatives in
    a and b are not implemented and are NaN.
    """

    nin = 3


class Xlogy(FloatElemwise):
    """x * log(y), and 0 where x == 0 (even for y == 0).

    Its partial derivatives are the mathematical ones, not a safe-looking 0:
    d/dx = log(y), so -inf at y = 0 (as PyTensor and JAX); d/dy = x / y, and exactly 0
    where x == 0, since xlogy(0, y) is 0 for every y (``jax.grad`` of
    ``jax.scipy.special.xlogy`` gives NaN at x = y = 0).
    """

    nin = 2


class Xlog1py(FloatElemwise):
    """x * log1p(y), and 0 where x == 0 (even for y == -1): ``xlogy(x, 1 + y)`` without the
    rounding of 1 + y. Its derivatives are ``xlogy``'s: d/dx = log1p(y); d/dy = x / (1 + y),
    exactly 0 where x == 0."""

    nin = 2


class Ndtr(FloatElemwise):
    """The standard normal CDF, (1 + erf(x / sqrt(2))) / 2, accurate in the lower tail (it
    is erfc(-x / sqrt(2)) / 2 there, down to 1e-308 near x = -37.5)."""


class LogNdtr(FloatElemwise):
    """log(ndtr(x)), accurate in both tails: about -x**2 / 2 far below 0
    (log_ndtr(-40) = -804.608), and -ndtr(-x) far above (log_ndtr(10) = -7.62e-24)."""


class Ndtri(FloatElemwise):
    """The inverse of ``ndtr``, the standard normal quantile. Domain: 0 <= p <= 1 (-inf at
    0, inf at 1)."""


class Expi(FloatElemwise):
    """The exponential integral Ei(x) = PV integral of e**t / t over t < x (SciPy's expi;
    -E_1(-x) for x < 0). Domain: every real x; -inf at 0, 0 at -inf, inf at inf."""


class Gammainc(FloatElemwise):
    """gammainc(a, x) = 1/Gamma(a) * integral of t**(a-1) e**-t over 0 <= t <= x, the
    regularized lower incomplete gamma function (SciPy's gammainc; the CDF of the Gamma(a, 1)
    distribution). Domain: a >= 0, x >= 0 (1 at a = 0 < x, as SciPy; NaN at a = x = 0).

    Differentiable in both: d/dx is the Gamma(a, 1) density, d/da is ``GammaincGradA``.
    """

    nin = 2


class Gammaincc(FloatElemwise):
    """gammaincc(a, x) = 1 - gammainc(a, x), the regularized upper incomplete gamma function
    (SciPy's gammaincc; the survival function of Gamma(a, 1)), accurate where gammainc is
    near 1. Domain: as gammainc. Differentiable in both (the negated derivatives of
    gammainc)."""

    nin = 2


class GammaincGradA(FloatElemwise):
    """d/da gammainc(a, x) (``jax.lax.igamma_grad_a``; -d/da gammaincc), the derivative
    rule of the incomplete gamma functions in their shape a. Domain: a > 0, x >= 0 (0 at
    x = 0 and x = inf).

    Its derivative in x is closed-form, the Gamma(a, 1) density times log(x) - digamma(a);
    in a (the second derivative of gammainc) it is not implemented and is NaN.
    """

    nin = 2


class Betainc(FloatElemwise):
    """betainc(a, b, x) = B(x; a, b) / B(a, b), the regularized incomplete beta function
    (SciPy's betainc; the CDF of the Beta(a, b) distribution). Domain: a >= 0, b >= 0,
    0 <= x <= 1, with SciPy's values where a or b is 0.

    Differentiable in x (the Beta(a, b) density); the derivatives in a and b are not
    implemented and are NaN (``jax.grad`` of ``jax.scipy.special.betainc`` refuses them).
    """

    nin = 3


class Betaln(FloatElemwise):
    """log|B(a, b)| = log|Gamma(a) Gamma(b) / Gamma(a + b)| (SciPy's betaln), accurate where
    a or b is large and the sum of gammaln would cancel. Domain: a, b not 0 or a negative
    integer (inf there)."""

    nin = 2


class Log1mexp(FloatElemwise):
    """log(1 - exp(x)), accurate across the domain x <= 0 (NaN for x > 0).

    Uses log(-expm1(x)) for x > -log(2) and log1p(-exp(x)) below (Maechler, 2012). The
    derivative -exp(x) / (1 - exp(x)) = -1 / expm1(-x) is -inf at x = 0 and at -0.0 (the
    limit from the left, as PyTensor gives).
    """


_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)  # a Python float: weak, keeps float32 float32
_SQRT_HALF = math.sqrt(0.5)
_SQRT_TWO_PI = math.sqrt(2 * math.pi)

sigmoid = Sigmoid()
softplus = Softplus()
log_sigmoid = LogSigmoid()
logit = Logit()
erf = Erf()
erfc = Erfc()
erfcx = Erfcx()
erfinv = Erfinv()
erfcinv = Erfcinv()
gamma = Gamma()
gammaln = Gammaln()
digamma = Digamma()
gammaincinv = Gammaincinv()
betaincinv = Betaincinv()
xlogy = Xlogy()
log1mexp = Log1mexp()
xlog1py = Xlog1py()
ndtr = Ndtr()
log_ndtr = LogNdtr()
ndtri = Ndtri()
expi = Expi()
gammainc = Gammainc()
gammaincc = Gammaincc()
gammainc_grad_a = GammaincGradA()
betainc = Betainc()
betaln = Betaln()
expit = sigmoid  # SciPy's name
log1pexp = softplus  # PyTensor's name


@pattern_function(Polygamma)
def polygamma(n: int, x: Any) -> Var:
    """polygamma(n, x), the n-th derivative of digamma (SciPy's ``polygamma``); ``n`` is
    a non-negative Python int, fixed when the graph is built.

    Example:
        >>> rt.polygamma(1, rt.vector("x")).dtype  # trigamma
        'float64'
    """
    return Polygamma(n)(x)


def multigammaln(a: Any, d: int) -> Var:
    """log Gamma_d(a), the log of the multivariate gamma function (SciPy's ``multigammaln``):
    d (d - 1) / 4 log(pi) + sum over j < d of gammaln(a - j / 2). ``d`` is a Python int
    >= 1, fixed when the graph is built. Domain: a > (d - 1) / 2 (SciPy raises otherwise;
    here gammaln's values come through).

    Example:
        >>> rt.multigammaln(rt.scalar("a"), 3).dtype  # the Wishart(3) normalizer's
        'float64'
    """
    if not isinstance(d, (int, np.integer)) or isinstance(d, (bool, np.bool_)) or d < 1:
        got = short_name(d) if isinstance(d, Var) else repr(d)
        raise GraphTypeError(
            f"multigammaln: the dimension d must be a Python int >= 1, fixed when the graph "
            f"is built; got {got}"
        )
    total = gammaln(a)
    for j in range(1, int(d)):
        total = total + gammaln(a - j / 2)
    return total + int(d) * (int(d) - 1) / 4 * math.log(math.pi)


__all__ = [
    "betainc",
    "betaincinv",
    "betaln",
    "digamma",
    "erf",
    "erfc",
    "erfcinv",
    "erfcx",
    "erfinv",
    "expi",
    "expit",
    "gamma",
    "gammainc",
    "gammaincc",
    "gammaincinv",
    "gammaln",
    "log1mexp",
    "log1pexp",
    "log_ndtr",
    "log_sigmoid",
    "logit",
    "multigammaln",
    "ndtr",
    "ndtri",
    "polygamma",
    "sigmoid",
    "softplus",
    "xlog1py",
    "xlogy",
]


def no_derivative(g: Var) -> Var:
    """The derivative of a rule that is not implemented: NaN (of ``g``'s dtype and shape).

    A zero would pass silently for a derivative; NaN makes a gradient through it visibly
    undefined. JAX raises instead, when it traces such a derivative; here the rule cannot
    tell whether the gradient is wanted (the other inputs' gradients come from the same
    call), so it gives NaN and the input's gradient is NaN only where it is used.
    """
    return g * math.nan


def _gammaincinv_grads(a: Var, y: Var, out: Var, g: Var) -> tuple[Var, Var]:
    # dx/dy = 1 / gammainc'(a, x) = Gamma(a) x**(1 - a) e**x; xlogy keeps x = 0, a = 1 finite;
    # gammainc(a, x(a)) = y fixed gives dx/da = -(d gammainc / da) * dx/dy
    dy = g * exp(out - xlogy(a - 1, out) + gammaln(a))
    return -(dy * gammainc_grad_a(a, out)), dy


def _betaincinv_grads(a: Var, b: Var, y: Var, out: Var, g: Var) -> tuple[Var, Var, Var]:
    # dx/dy = 1 / betainc'(a, b, x) = B(a, b) x**(1 - a) (1 - x)**(1 - b)
    log_beta = gammaln(a) + gammaln(b) - gammaln(a + b)
    dy = exp(log_beta - xlogy(a - 1, out) - xlogy(b - 1, 1 - out))
    return no_derivative(g), no_derivative(g), g * dy


def _xlogy_grads(x: Var, y: Var, out: Var, g: Var) -> tuple[Var, Var]:
    # d/dx = log(y), -inf at y = 0 (as PyTensor and JAX). d/dy = x / y, but exactly 0
    # where x == 0, where xlogy is 0 for every y (JAX gives 0 / 0 = NaN at x = y = 0). The
    # where is a masked cotangent: what y is computed from gets exact zeros there too.
    return g * log(y), where(equal(x, 0), 0, g * (x / y))


def _xlog1py_grads(x: Var, y: Var, out: Var, g: Var) -> tuple[Var, Var]:
    # as xlogy's, at 1 + y
    return g * log1p(y), where(equal(x, 0), 0, g * (x / (1 + y)))


def _gamma_density(a: Var, x: Var) -> Var:
    # x**(a - 1) e**-x / Gamma(a), the derivative of gammainc in x; xlogy keeps a = 1 at
    # x = 0 finite
    return exp(xlogy(a - 1, x) - x - gammaln(a))


def _gammainc_grads(a: Var, x: Var, out: Var, g: Var) -> tuple[Var, Var]:
    return g * gammainc_grad_a(a, x), g * _gamma_density(a, x)


def _gammaincc_grads(a: Var, x: Var, out: Var, g: Var) -> tuple[Var, Var]:
    return -(g * gammainc_grad_a(a, x)), -(g * _gamma_density(a, x))


def _gammainc_grad_a_grads(a: Var, x: Var, out: Var, g: Var) -> tuple[Var, Var]:
    # d/dx d/da gammainc = d/da density = density (log x - digamma(a))
    return no_derivative(g), g * _gamma_density(a, x) * (log(x) - digamma(a))


def _betainc_grads(a: Var, b: Var, x: Var, out: Var, g: Var) -> tuple[Var, Var, Var]:
    # d/dx = x**(a - 1) (1 - x)**(b - 1) / B(a, b), the Beta(a, b) density
    density = exp(xlogy(a - 1, x) + xlog1py(b - 1, -x) - betaln(a, b))
    return no_derivative(g), no_derivative(g), g * density


def _betaln_grads(a: Var, b: Var, out: Var, g: Var) -> tuple[Var, Var]:
    both = digamma(a + b)
    return g * (digamma(a) - both), g * (digamma(b) - both)


defvjp(
    {
        # sigmoid' = sigmoid(x) (1 - sigmoid(x)); 1 - sigmoid(x) = sigmoid(-x) keeps its
        # precision for large x
        Sigmoid: lambda x, out, g: g * out * sigmoid(-x),
        Softplus: lambda x, out, g: g * sigmoid(x),  # e^x / (1 + e^x)
        LogSigmoid: lambda x, out, g: g * sigmoid(-x),  # d/dx -softplus(-x)
        Logit: lambda p, out, g: g / (p * (1 - p)),  # 1 / p + 1 / (1 - p)
        Erf: lambda x, out, g: g * _TWO_OVER_SQRT_PI * exp(-square(x)),
        Erfc: lambda x, out, g: g * -_TWO_OVER_SQRT_PI * exp(-square(x)),
        Erfcx: lambda x, out, g: g * (2 * x * out - _TWO_OVER_SQRT_PI),
        # the inverse function's derivative: 1 / erf'(y) = sqrt(pi) / 2 * exp(y^2)
        Erfinv: lambda x, out, g: g * (1 / _TWO_OVER_SQRT_PI) * exp(square(out)),
        Erfcinv: lambda y, out, g: g * (-1 / _TWO_OVER_SQRT_PI) * exp(square(out)),
        Gamma: lambda x, out, g: g * out * digamma(x),
        Gammaln: lambda x, out, g: g * digamma(x),  # for negative Gamma(x) too
        Digamma: lambda x, out, g: g * polygamma(1, x),  # trigamma
        Gammaincinv: _gammaincinv_grads,
        Betaincinv: _betaincinv_grads,
        Xlogy: _xlogy_grads,
        Xlog1py: _xlog1py_grads,
        Ndtr: lambda x, out, g: g * exp(-0.5 * square(x)) / _SQRT_TWO_PI,
        # ndtr'(x) / ndtr(x) = sqrt(2 / pi) / erfcx(-x / sqrt(2)): ndtr(x) is
        # exp(-x**2 / 2) erfcx(-x / sqrt(2)) / 2, so no exp(-x**2 / 2) over an underflow
        LogNdtr: lambda x, out, g: g * (_TWO_OVER_SQRT_PI * _SQRT_HALF) / erfcx(-_SQRT_HALF * x),
        Ndtri: lambda p, out, g: g * _SQRT_TWO_PI * exp(0.5 * square(out)),
        Expi: lambda x, out, g: g * exp(x) / x,
        Gammainc: _gammainc_grads,
        Gammaincc: _gammaincc_grads,
        GammaincGradA: _gammainc_grad_a_grads,
        Betainc: _betainc_grads,
        Betaln: _betaln_grads,
        # -e^x / (1 - e^x) = -1 / expm1(-x), accurate on both branches; the absolute value
        # turns expm1(-0.0) = -0.0 into +0, so 0 and -0.0 both give -inf (exact for x <= 0)
        Log1mexp: lambda x, out, g: g * (-1 / absolute(expm1(-x))),
    }
)
