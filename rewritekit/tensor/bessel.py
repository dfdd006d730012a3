"""Modified Bessel functions: ``i0 i1 i0e i1e`` of order 0 and 1, and ``ive kv`` of real
order ``v``, with SciPy's names and values.

They are elementwise float functions (``FloatElemwise``), like the special functions. The
``e`` forms are scaled to stay finite where the plain ones overflow:
``ive(v, x) = I_v(x) * exp(-|x|)`` (``iv(v, x)`` is ``ive(v, x) * exp(abs(x))`` where that
does not overflow).

Derivatives in ``x`` come from the recurrences (DLMF 10.29.1):
``I_v' = (I_{v-1} + I_{v+1}) / 2`` and ``K_v' = -(K_{v-1} + K_{v+1}) / 2``. The order ``v``
is not differentiable: its derivative is not implemented and is NaN (``no_derivative``),
so a gradient that needs it shows as NaN rather than as a wrong zero.
"""

from __future__ import annotations

from rewritekit.ir import Var
from rewritekit.tensor.elemwise import equal, sign, where
from rewritekit.tensor.special import no_derivative
from rewritekit.tensor.ufunc import FloatElemwise, defvjp

__all__ = ["i0", "i0e", "i1", "i1e", "ive", "kv"]


class I0(FloatElemwise):
    """The modified Bessel function of the first kind of order 0, I_0(x)."""


class I1(FloatElemwise):
    """The modified Bessel function of the first kind of order 1, I_1(x)."""


class I0e(FloatElemwise):
    """I_0(x) * exp(-|x|), finite where I_0 overflows (|x| > 713 in float64)."""


class I1e(FloatElemwise):
    """I_1(x) * exp(-|x|), finite where I_1 overflows."""


class Ive(FloatElemwise):
    """ive(v, x) = I_v(x) * exp(-|x|), the exponentially scaled modified Bessel function of
    the first kind of real order v (SciPy's ive).

    Domain: x >= 0, or x < 0 for integer v (I_n(-x) = (-1)**n I_n(x); NaN for other v, as
    SciPy). Not differentiable in v (NaN).
    """

    nin = 2


class Kv(FloatElemwise):
    """kv(v, x), the modified Bessel function of the second kind of real order v.

    Domain: x > 0 (inf at x = 0, NaN for x < 0); kv(-v, x) = kv(v, x). Not differentiable
    in v (NaN).
    """

    nin = 2


i0 = I0()
i1 = I1()
i0e = I0e()
i1e = I1e()
ive = Ive()
kv = Kv()


def _i1_over_x(x: Var, i1x: Var) -> Var:
    # I_1(x) / x -> 1/2 at x = 0 (the same for the scaled form); the where masks the 0 / 0
    return where(equal(x, 0), 0.5, i1x / x)


defvjp(
    {
        I0: lambda x, out, g: g * i1(x),
        # I_1' = I_0 - I_1 / x (DLMF 10.29.2), 1/2 at 0
        I1: lambda x, out, g: g * (i0(x) - _i1_over_x(x, out)),
        # d/dx [I(x) e^{-|x|}] = (I'(x) - sign(x) I(x)) e^{-|x|}
        I0e: lambda x, out, g: g * (i1e(x) - sign(x) * out),
        I1e: lambda x, out, g: g * (i0e(x) - _i1_over_x(x, out) - sign(x) * out),
        Ive: lambda v, x, out, g: (
            no_derivative(g),
            g * ((ive(v - 1, x) + ive(v + 1, x)) / 2 - sign(x) * out),
        ),
        Kv: lambda v, x, out, g: (no_derivative(g), g * -(kv(v - 1, x) + kv(v + 1, x)) / 2),
    }
)
