"""Exponentials, logarithms, powers of e and 2, trigonometric and hyperbolic functions:
elementwise Ops computed in floating point, each with its derivative in one line."""

from __future__ import annotations

import math
import sys

from rewritekit.ir import Var
from rewritekit.tensor.logic import equal
from rewritekit.tensor.ufunc import ComplexFloatElemwise, FloatElemwise, defvjp

__all__ = [
    "arccos",
    "arccosh",
    "arcsin",
    "arcsinh",
    "arctan",
    "arctan2",
    "arctanh",
    "cos",
    "cosh",
    "exp",
    "exp2",
    "expm1",
    "log",
    "log1p",
    "log2",
    "log10",
    "logaddexp",
    "sin",
    "sinh",
    "sqrt",
    "tan",
    "tanh",
]


class Exp(ComplexFloatElemwise):
    """e ** x. Domain: all x."""


class Exp2(FloatElemwise):
    """2 ** x. Domain: all x."""


class Expm1(FloatElemwise):
    """exp(x) - 1, accurate for |x| << 1. Domain: all x."""


class Log(ComplexFloatElemwise):
    """Natural logarithm. Domain: x > 0 (log(0) = -inf; x < 0 gives NaN)."""


class Log2(FloatElemwise):
    """Base-2 logarithm. Domain: x > 0."""


class Log10(FloatElemwise):
    """Base-10 logarithm. Domain: x > 0."""


class Log1p(FloatElemwise):
    """log(1 + x), accurate for |x| << 1. Domain: x > -1."""


class Sqrt(ComplexFloatElemwise):
    """Square root. Domain: x >= 0."""


class Sin(ComplexFloatElemwise):
    """Sine (radians)."""


class Cos(ComplexFloatElemwise):
    """Cosine (radians)."""


class Tan(FloatElemwise):
    """Tangent (radians)."""


class Arcsin(FloatElemwise):
    """Inverse sine. Domain: -1 <= x <= 1."""


class Arccos(FloatElemwise):
    """Inverse cosine. Domain: -1 <= x <= 1."""


class Arctan(FloatElemwise):
    """Inverse tangent."""


class Arctan2(FloatElemwise):
    """The angle of the point (x2, x1): arctan2(x1, x2) in (-pi, pi]."""

    nin = 2


class Sinh(FloatElemwise):
    """Hyperbolic sine."""


class Cosh(FloatElemwise):
    """Hyperbolic cosine."""


class Tanh(ComplexFloatElemwise):
    """Hyperbolic tangent."""


class Arcsinh(FloatElemwise):
    """Inverse hyperbolic sine."""


class Arccosh(FloatElemwise):
    """Inverse hyperbolic cosine. Domain: x >= 1."""


class Arctanh(FloatElemwise):
    """Inverse hyperbolic tangent. Domain: -1 < x < 1."""


class Logaddexp(FloatElemwise):
    """log(exp(x) + exp(y)), without overflow."""

    nin = 2
    commutative = True


exp = Exp()
exp2 = Exp2()
expm1 = Expm1()
log = Log()
log2 = Log2()
log10 = Log10()
log1p = Log1p()
sqrt = Sqrt()
sin = Sin()
cos = Cos()
tan = Tan()
arcsin = Arcsin()
arccos = Arccos()
arctan = Arctan()
arctan2 = Arctan2()
sinh = Sinh()
cosh = Cosh()
tanh = Tanh()
arcsinh = Arcsinh()
arccosh = Arccosh()
arctanh = Arctanh()
logaddexp = Logaddexp()


defvjp(
    {
        Exp: lambda x, out, g: g * out,
        Exp2: lambda x, out, g: g * out * math.log(2),
        Expm1: lambda x, out, g: g * (out + 1),
        Log: lambda x, out, g: g / x,
        Log2: lambda x, out, g: g / (x * math.log(2)),
        Log10: lambda x, out, g: g / (x * math.log(10)),
        Log1p: lambda x, out, g: g / (1 + x),
        Sqrt: lambda x, out, g: g / (2 * out),
        Sin: lambda x, out, g: g * cos(x),
        Cos: lambda x, out, g: -g * sin(x),
        Tan: lambda x, out, g: g * (1 + out * out),
        # (1 - x)(1 + x) is accurate near |x| = 1, where 1 - x^2 cancels
        Arcsin: lambda x, out, g: g / sqrt((1 - x) * (1 + x)),
        Arccos: lambda x, out, g: -g / sqrt((1 - x) * (1 + x)),
        Arctan: lambda x, out, g: g / (1 + x * x),
        Arctan2: lambda x1, x2, out, g: _arctan2_grads(x1, x2, g / (x1 * x1 + x2 * x2)),
        Sinh: lambda x, out, g: g * cosh(x),
        Cosh: lambda x, out, g: g * sinh(x),
        Tanh: lambda x, out, g: g * (1 - out * out),
        Arcsinh: lambda x, out, g: g / sqrt(x * x + 1),
        Arccosh: lambda x, out, g: g / sqrt((x - 1) * (x + 1)),
        Arctanh: lambda x, out, g: g / ((1 - x) * (1 + x)),
        # e^x / (e^x + e^y) = e^(x - out), which cannot overflow; 1/2 each where x == y
        # (the limit there, also at x = y = +-inf, where x - out is NaN)
        Logaddexp: lambda x, y, out, g: _logaddexp_grads(x, y, out, g),
    }
)


def _logaddexp_grads(x: Var, y: Var, out: Var, g: Var) -> tuple[Var, Var]:
    where = sys.modules["rewritekit.tensor.arithmetic"].where  # arithmetic imports this module
    tie = equal(x, y)
    return g * where(tie, 0.5, exp(x - out)), g * where(tie, 0.5, exp(y - out))


def _arctan2_grads(x1: Var, x2: Var, scale: Var) -> tuple[Var, Var]:
    # d arctan2(x1, x2) = (x2 dx1 - x1 dx2) / (x1^2 + x2^2)
    return scale * x2, -scale * x1
