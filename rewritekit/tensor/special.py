"""Special functions: logistic, error and gamma functions, and stable log-forms.

They are elementwise float functions (``FloatElemwise``): float inputs keep their dtype,
integer and bool inputs compute in float64.

Derivatives are written with the functions of this family where they are accurate where
the naive form is not: ``sigmoid(-x)`` rather than ``1 - sigmoid(x)``, ``expm1`` rather
than ``exp(x) - 1``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from rewritekit.errors import GraphTypeError
from rewritekit.ir import Var
from rewritekit.ir.patterns import pattern_function
from rewritekit.tensor.elemwise import FloatElemwise


class Sigmoid(FloatElemwise):
    """1 / (1 + exp(-x)), the logistic function (SciPy's expit)."""

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        from rewritekit.tensor.gradient import input_grad

        # d/dx sigmoid(x) = sigmoid(x) * (1 - sigmoid(x)); 1 - sigmoid(x) = sigmoid(-x)
        # keeps its precision for large x
        (x,), (y,), (g,) = inputs, outputs, cotangents
        return [input_grad(g * y * sigmoid(-x), x)]


class Softplus(FloatElemwise):
    """log(1 + exp(x)) = logaddexp(0, x), without overflow."""

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        from rewritekit.tensor.gradient import input_grad

        # d/dx log(1 + e^x) = e^x / (1 + e^x) = sigmoid(x)
        (x,), (g,) = inputs, cotangents
        return [input_grad(g * sigmoid(x), x)]


class LogSigmoid(FloatElemwise):
    """log(sigmoid(x)) = -softplus(-x), accurate for large |x|."""

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        from rewritekit.tensor.gradient import input_grad

        # d/dx -softplus(-x) = sigmoid(-x)
        (x,), (g,) = inputs, cotangents
        return [input_grad(g * sigmoid(-x), x)]


class Logit(FloatElemwise):
    """log(p / (1 - p)), the inverse of sigmoid. Domain: 0 <= p <= 1."""

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        from rewritekit.tensor.gradient import input_grad

        # d/dp [log(p) - log(1 - p)] = 1 / p + 1 / (1 - p) = 1 / (p (1 - p))
        (p,), (g,) = inputs, cotangents
        return [input_grad(g / (p * (1 - p)), p)]


class Erf(FloatElemwise):
    """The error function, 2/sqrt(pi) * integral of exp(-t**2) from 0 to x."""

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        import rewritekit.tensor as rt
        from rewritekit.tensor.gradient import input_grad

        # d/dx erf(x) = 2 / sqrt(pi) * exp(-x^2)
        (x,), (g,) = inputs, cotangents
        return [input_grad(g * _TWO_OVER_SQRT_PI * rt.exp(-rt.square(x)), x)]


class Erfc(FloatElemwise):
    """1 - erf(x), accurate for large x."""

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        import rewritekit.tensor as rt
        from rewritekit.tensor.gradient import input_grad

        # d/dx erfc(x) = -2 / sqrt(pi) * exp(-x^2)
        (x,), (g,) = inputs, cotangents
        return [input_grad(g * -_TWO_OVER_SQRT_PI * rt.exp(-rt.square(x)), x)]


class Erfinv(FloatElemwise):
    """The inverse of erf. Domain: -1 <= x <= 1."""

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        import rewritekit.tensor as rt
        from rewritekit.tensor.gradient import input_grad

        # the inverse function's derivative: 1 / erf'(y) = sqrt(pi) / 2 * exp(y^2), y = erfinv(x)
        (x,), (y,), (g,) = inputs, outputs, cotangents
        return [input_grad(g * (1 / _TWO_OVER_SQRT_PI) * rt.exp(rt.square(y)), x)]


class Gammaln(FloatElemwise):
    """log|Gamma(x)|. Domain: x not a non-positive integer."""

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        from rewritekit.tensor.gradient import input_grad

        # d/dx log|Gamma(x)| = digamma(x) (for negative Gamma(x) too)
        (x,), (g,) = inputs, cotangents
        return [input_grad(g * digamma(x), x)]


class Digamma(FloatElemwise):
    """d/dx log Gamma(x) (SciPy's psi). Domain: x not a non-positive integer."""

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        from rewritekit.tensor.gradient import input_grad

        # d/dx digamma(x) = polygamma(1, x), the trigamma function
        (x,), (g,) = inputs, cotangents
        return [input_grad(g * polygamma(1, x), x)]


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

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        from rewritekit.tensor.gradient import input_grad

        # d/dx polygamma(n, x) = polygamma(n + 1, x)
        (x,), (g,) = inputs, cotangents
        return [input_grad(g * polygamma(self.n + 1, x), x)]


class Xlogy(FloatElemwise):
    """x * log(y), and 0 where x == 0 (even for y == 0)."""

    nin = 2

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        import rewritekit.tensor as rt
        from rewritekit.tensor.gradient import input_grad

        # d/dx = log(y), d/dy = x / y; where x == y == 0 the value is the constant 0, so
        # both are 0 there (as JAX's lowering gives): y = 1 makes log(y) and x / y vanish
        (x, y), (g,) = inputs, cotangents
        safe_y = rt.where(rt.logical_and(rt.equal(x, 0), rt.equal(y, 0)), 1, y)
        return [input_grad(g * rt.log(safe_y), x), input_grad(g * (x / safe_y), y)]


class Log1mexp(FloatElemwise):
    """log(1 - exp(x)), accurate across the domain x <= 0 (NaN for x > 0).

    Uses log(-expm1(x)) for x > -log(2) and log1p(-exp(x)) below (Maechler, 2012).
    """

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        import rewritekit.tensor as rt
        from rewritekit.tensor.gradient import input_grad

        # d/dx log(1 - e^x) = -e^x / (1 - e^x) = -1 / expm1(-x), accurate on both branches
        (x,), (g,) = inputs, cotangents
        return [input_grad(g * (-1 / rt.expm1(-x)), x)]


_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)  # a Python float: weak, keeps float32 float32

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


@pattern_function(Polygamma)
def polygamma(n: int, x: Any) -> Var:
    """polygamma(n, x), the n-th derivative of digamma (SciPy's ``polygamma``); ``n`` is
    a non-negative Python int, fixed when the graph is built.

    Example:
        >>> rt.polygamma(1, rt.vector("x")).dtype  # trigamma
        'float64'
    """
    return Polygamma(n)(x)


__all__ = [
    "digamma",
    "erf",
    "erfc",
    "erfinv",
    "gammaln",
    "log1mexp",
    "log_sigmoid",
    "logit",
    "polygamma",
    "sigmoid",
    "softplus",
    "xlogy",
]
