"""Special functions: logistic, error and gamma functions, and stable log-forms.

They are elementwise float functions (``FloatElemwise``): float inputs keep their dtype,
integer and bool inputs compute in float64.
"""

from __future__ import annotations

from rewritekit.tensor.elemwise import FloatElemwise


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


class Erfinv(FloatElemwise):
    """The inverse of erf. Domain: -1 <= x <= 1."""


class Gammaln(FloatElemwise):
    """log|Gamma(x)|. Domain: x not a non-positive integer."""


class Digamma(FloatElemwise):
    """d/dx log Gamma(x) (SciPy's psi). Domain: x not a non-positive integer."""


class Xlogy(FloatElemwise):
    """x * log(y), and 0 where x == 0 (even for y == 0)."""

    nin = 2


class Log1mexp(FloatElemwise):
    """log(1 - exp(x)), accurate across the domain x <= 0 (NaN for x > 0).

    Uses log(-expm1(x)) for x > -log(2) and log1p(-exp(x)) below (Maechler, 2012).
    """


sigmoid = Sigmoid()
softplus = Softplus()
log_sigmoid = LogSigmoid()
logit = Logit()
erf = Erf()
erfc = Erfc()
erfinv = Erfinv()
gammaln = Gammaln()
digamma = Digamma()
xlogy = Xlogy()
log1mexp = Log1mexp()

__all__ = [
    "digamma",
    "erf",
    "erfc",
    "erfinv",
    "gammaln",
    "log1mexp",
    "log_sigmoid",
    "logit",
    "sigmoid",
    "softplus",
    "xlogy",
]
