"""The parts of complex numbers: ``real imag conj (conjugate) angle complex``, and the static
dtype queries ``iscomplexobj isrealobj``, with NumPy's and ``jax.numpy``'s results.

``real``, ``imag`` and ``conj`` are Ops on complex inputs only: on a real input ``real`` and
``conj`` give the input itself and ``imag`` zeros of its dtype, as ``jax.numpy`` does, with
no node. ``angle`` is ``arctan2(imag(z), real(z))`` (``arctan2(0, x)`` for a real ``x``:
0 or pi). ``complex(re, im)`` is ``lax.complex``: a float32 pair gives complex64, a float64
pair complex128; the two parts must have one precision (Python numbers take the other's).

Derivatives follow JAX's convention for complex cotangents (the transpose of the linear
map, without conjugation; ``rk.grad`` of a real cost with respect to a complex ``z`` is the
conjugate of 2 d cost / d z-bar, as ``jax.grad``): ``real``'s cotangent goes back as
``complex(g, 0)``, ``imag``'s as ``complex(0, -g)``, ``conj``'s as ``conj(g)`` and
``complex``'s as ``(real(g), -imag(g))``.

Example:
    >>> z = rt.complex(rt.vector("re"), rt.vector("im"))
    >>> z.dtype, rt.real(z).dtype, rt.angle(z).dtype
    ('complex128', 'float64', 'float64')
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from rewritekit.errors import DTypeError
from rewritekit.ir import TensorType, Var, as_var
from rewritekit.ir.patterns import pattern_function
from rewritekit.tensor.creation import zeros_like
from rewritekit.tensor.transcendental import arctan2
from rewritekit.tensor.ufunc import Elemwise, defvjp

__all__ = [
    "angle",
    "complex",
    "conj",
    "conjugate",
    "imag",
    "iscomplexobj",
    "isrealobj",
    "real",
]

#: The float dtype of each complex dtype's parts, and the complex dtype of each float pair.
PART_DTYPE = {"complex64": "float32", "complex128": "float64"}
COMPLEX_DTYPE = {part: whole for whole, part in PART_DTYPE.items()}


class Real(Elemwise):
    """The real part of a complex x, in the matching float dtype."""

    kinds = "c"

    def output_dtype(self, *dtypes: str) -> str:
        return PART_DTYPE[dtypes[0]]


class Imag(Elemwise):
    """The imaginary part of a complex x, in the matching float dtype."""

    kinds = "c"

    def output_dtype(self, *dtypes: str) -> str:
        return PART_DTYPE[dtypes[0]]


class Conj(Elemwise):
    """The complex conjugate of a complex x: real(x) - i imag(x)."""

    kinds = "c"


class Complex(Elemwise):
    """re + i im from two floats of one precision (``lax.complex``): float32 -> complex64,
    float64 -> complex128. Exact: no product with i, so inf and NaN parts stay where they
    are."""

    nin = 2
    kinds = "f"

    def infer_types(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        re, im = (t.dtype for t in input_types)
        for position, (part, dtype) in enumerate([("real", re), ("imaginary", im)]):
            if dtype not in COMPLEX_DTYPE:
                raise DTypeError(
                    f"complex: the {part} part (input {position}) has dtype {dtype}; complex "
                    "takes float32 or float64 parts (cast it with rt.cast)"
                )
        if re != im:
            raise DTypeError(
                f"complex: the real part (input 0) is {re} and the imaginary part (input 1) "
                f"is {im}; both parts must have one precision (cast one with rt.cast)"
            )
        return super().infer_types(*input_types)

    def cast_dtypes(self, *dtypes: str) -> tuple[str, ...]:
        return dtypes

    def output_dtype(self, *dtypes: str) -> str:
        return COMPLEX_DTYPE[dtypes[0]]


_real = Real()
_imag = Imag()
_conj = Conj()
_complex = Complex()


def _input(name: str, value: Any) -> Var:
    return as_var(value, context=f"{name}: input 0")


@pattern_function(Real, inputs=("val",))
def real(val: Any) -> Var:
    """The real part; a real input is returned as it is (no node).

    Example:
        >>> rt.real(rt.tensor("z", shape=(3,), dtype="complex64")).type
        TensorType(dtype='float32', shape=(3,))
    """
    x = _input("real", val)
    return _real(x) if x.type.kind == "c" else x


@pattern_function(Imag, inputs=("val",))
def imag(val: Any) -> Var:
    """The imaginary part; zeros of the input's dtype for a real input.

    Example:
        >>> rt.imag(rt.vector("x")).dtype
        'float64'
    """
    x = _input("imag", val)
    return _imag(x) if x.type.kind == "c" else zeros_like(x)


@pattern_function(Conj)
def conj(x: Any) -> Var:
    """The complex conjugate; a real input is returned as it is (no node).

    Example:
        >>> z = rt.tensor("z", shape=(None,), dtype="complex128")
        >>> rt.conj(z).dtype
        'complex128'
    """
    x = _input("conj", x)
    return _conj(x) if x.type.kind == "c" else x


conjugate = conj


@pattern_function(Complex, inputs=("re", "im"))
def complex(re: Any, im: Any) -> Var:
    """``re + i * im`` from two float arrays of one precision, broadcast together (Python
    numbers take the other part's dtype): float32 -> complex64, float64 -> complex128.

    Raises:
        DTypeError: a part is not float32/float64, or the two differ in precision.

    Example:
        >>> rt.complex(rt.vector("re", dtype="float32"), 0.0).dtype
        'complex64'
    """
    return _complex(re, im)


def angle(z: Any, deg: bool = False) -> Var:
    """The argument of ``z`` in (-pi, pi], ``arctan2(imag(z), real(z))``; 0 or pi for a real
    ``z`` (float dtype: integers give float64). In degrees with ``deg=True``.

    Example:
        >>> rt.angle(rt.tensor("z", shape=(2,), dtype="complex128")).type
        TensorType(dtype='float64', shape=(2,))
    """
    x = _input("angle", z)
    result = arctan2(_imag(x), _real(x)) if x.type.kind == "c" else arctan2(0, x)
    return result * (180 / math.pi) if deg else result


def iscomplexobj(x: Any) -> bool:
    """Whether ``x`` has a complex dtype: a static query, a Python bool.

    Example:
        >>> rt.iscomplexobj(rt.vector("x")), rt.iscomplexobj(1j)
        (False, True)
    """
    if isinstance(x, Var):
        return x.type.kind == "c"
    return bool(np.iscomplexobj(x))


def isrealobj(x: Any) -> bool:
    """Whether ``x`` has a real (not complex) dtype: a static query, a Python bool.

    Example:
        >>> rt.isrealobj(rt.vector("x"))
        True
    """
    return not iscomplexobj(x)


defvjp(
    {
        # JAX's transposes (lax.real_p, imag_p, conj_p, complex_p): no conjugation
        Real: lambda x, out, g: complex(g, 0),
        Imag: lambda x, out, g: complex(0, -g),
        Conj: lambda x, out, g: conj(g),
        Complex: lambda re, im, out, g: (real(g), -imag(g)),
    }
)
