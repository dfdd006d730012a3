"""The elementwise Ops (``rewritekit.tensor.elemwise``), special functions
(``rewritekit.tensor.special``) and Bessel functions (``rewritekit.tensor.bessel``) over an
array module ``xp`` and its ``xsp``.

``xsp`` is ``scipy.special`` or ``jax.scipy.special``. ``ELEMWISE``, ``SPECIAL`` and
``BESSEL`` give the functions that both libraries call by the same name; each backend's
``TABLE`` is ``elemwise_functions(xp)`` (or ``special_functions(xp, xsp)``,
``bessel_functions(xsp)``) plus its own entries where the libraries differ, and
``elemwise``/``special``/``bessel`` make the implementations of a table.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from rewritekit.backends.common import Table, quiet
from rewritekit.ir import Apply, Op
from rewritekit.tensor import bessel as bs
from rewritekit.tensor import elemwise as ew
from rewritekit.tensor import special as sf

Functions = dict[type[Op], Callable[..., Any]]  # Op class -> function of arrays

ELEMWISE: dict[type[Op], str] = {
    ew.Add: "add",
    ew.Subtract: "subtract",
    ew.Multiply: "multiply",
    ew.TrueDivide: "true_divide",
    ew.FloorDivide: "floor_divide",
    ew.Mod: "mod",
    ew.Power: "power",
    ew.Negative: "negative",
    ew.Abs: "abs",
    ew.Sign: "sign",
    ew.Square: "square",
    ew.Reciprocal: "reciprocal",
    ew.Maximum: "maximum",
    ew.Minimum: "minimum",
    ew.Where: "where",
    ew.Floor: "floor",
    ew.Ceil: "ceil",
    ew.Exp: "exp",
    ew.Exp2: "exp2",
    ew.Expm1: "expm1",
    ew.Log: "log",
    ew.Log2: "log2",
    ew.Log10: "log10",
    ew.Log1p: "log1p",
    ew.Sqrt: "sqrt",
    ew.Sin: "sin",
    ew.Cos: "cos",
    ew.Tan: "tan",
    ew.Arcsin: "arcsin",
    ew.Arccos: "arccos",
    ew.Arctan: "arctan",
    ew.Arctan2: "arctan2",
    ew.Sinh: "sinh",
    ew.Cosh: "cosh",
    ew.Tanh: "tanh",
    ew.Arcsinh: "arcsinh",
    ew.Arccosh: "arccosh",
    ew.Arctanh: "arctanh",
    ew.Logaddexp: "logaddexp",
    ew.Equal: "equal",
    ew.NotEqual: "not_equal",
    ew.Less: "less",
    ew.LessEqual: "less_equal",
    ew.Greater: "greater",
    ew.GreaterEqual: "greater_equal",
    ew.Isnan: "isnan",
    ew.Isinf: "isinf",
    ew.Isfinite: "isfinite",
    ew.LogicalAnd: "logical_and",
    ew.LogicalOr: "logical_or",
    ew.LogicalNot: "logical_not",
    ew.BitwiseAnd: "bitwise_and",
    ew.BitwiseOr: "bitwise_or",
    ew.BitwiseXor: "bitwise_xor",
    ew.BitwiseNot: "invert",
    ew.LeftShift: "left_shift",
    ew.RightShift: "right_shift",
}
SPECIAL: dict[type[Op], str] = {
    sf.Erf: "erf",
    sf.Erfc: "erfc",
    sf.Erfinv: "erfinv",
    sf.Gamma: "gamma",
    sf.Gammaln: "gammaln",
    sf.Digamma: "digamma",
    sf.Gammainc: "gammainc",
}
BESSEL: dict[type[Op], str] = {bs.I0: "i0", bs.I1: "i1", bs.I0e: "i0e", bs.I1e: "i1e"}


def elemwise_impl(xp: Any, fn: Callable[..., Any], node: Apply) -> Callable[..., Any]:
    """``fn`` with the inputs cast to the Op's computation dtypes and the result to its type.

    The dtypes are static, so under JAX the casts cost nothing at run time where they are
    no-ops; NumPy's floating-point warnings are off (NaN and inf follow IEEE, as in JAX).
    """
    casts = [np.dtype(d) for d in cast_dtypes(node)]
    out = np.dtype(node.outputs[0].dtype)

    def run(*args: Any) -> Any:
        args = tuple(
            a if a.dtype == c else a.astype(c)
            for a, c in zip(map(xp.asarray, args), casts, strict=True)
        )
        with quiet(xp):
            value = xp.asarray(fn(*args))
        return value if value.dtype == out else value.astype(out)

    return run


def cast_dtypes(node: Apply) -> tuple[str, ...]:
    """The dtype each input of the elementwise ``node`` is computed in (its Op's
    ``cast_dtypes``), remembered per Op and input dtypes: every elementwise node lowered
    asks, and the answer is NumPy's type promotion."""
    key = (node.op, *[i.dtype for i in node.inputs])
    found = _CASTS.get(key)
    if found is None:
        if len(_CASTS) >= _CASTS_LIMIT:
            _CASTS.clear()
        found = _CASTS[key] = tuple(node.op.cast_dtypes(*key[1:]))  # type: ignore[attr-defined]
    return found


_CASTS: dict[tuple[Any, ...], tuple[str, ...]] = {}
_CASTS_LIMIT = 1 << 12


def log1mexp(xp: Any, x: Any) -> Any:
    """``log(1 - exp(x))``: ``log(-expm1(x))`` near 0, ``log1p(-exp(x))`` below ``-log 2``.

    Each branch sees only the inputs it is valid for (the double-``where`` trick), so
    ``jax.grad`` never meets a NaN from the branch the ``where`` does not take.
    """
    near_zero = x > -np.log(2.0)
    safe_near = xp.where(near_zero, x, -1.0)
    safe_far = xp.where(near_zero, -1.0, x)
    return xp.where(near_zero, xp.log(-xp.expm1(safe_near)), xp.log1p(-xp.exp(safe_far)))


def elemwise_functions(xp: Any) -> Functions:
    """The functions of ``ELEMWISE`` in ``xp``, and ``Cast`` (its cast is ``elemwise_impl``'s)."""
    return {ew.Cast: lambda x: x} | {cls: getattr(xp, name) for cls, name in ELEMWISE.items()}


def special_functions(xp: Any, xsp: Any) -> Functions:
    """The functions of ``SPECIAL`` in ``xsp``, and ``log1mexp`` over ``xp``."""
    return {cls: getattr(xsp, name) for cls, name in SPECIAL.items()} | {
        sf.Log1mexp: functools.partial(log1mexp, xp)
    }


def bessel_functions(xsp: Any) -> Functions:
    """The functions of ``BESSEL`` in ``xsp``."""
    return {cls: getattr(xsp, name) for cls, name in BESSEL.items()}


def _apply(xp: Any, fn: Callable[..., Any], op: Op, node: Apply) -> Callable[..., Any]:
    return elemwise_impl(xp, fn, node)


def _each(xp: Any, functions: Functions) -> Table:
    return {op_class: functools.partial(_apply, xp, fn) for op_class, fn in functions.items()}


def elemwise(xp: Any, functions: Functions) -> Table:
    """The Ops of ``functions`` through ``elemwise_impl`` over ``xp``, and ``Round``."""
    return _each(xp, functions) | {
        ew.Round: lambda op, node: elemwise_impl(xp, lambda x: xp.round(x, op.decimals), node),
        ew.BitcastConvert: lambda op, node: lambda x: xp.asarray(x).view(op.dtype),
    }


def special(xp: Any, xsp: Any, functions: Functions) -> Table:
    """The Ops of ``functions`` through ``elemwise_impl`` over ``xp``, and ``Polygamma``."""
    return _each(xp, functions) | {
        sf.Polygamma: lambda op, node: elemwise_impl(xp, lambda x: xsp.polygamma(op.n, x), node)
    }


def bessel(xp: Any, functions: Functions) -> Table:
    """The Ops of ``functions`` through ``elemwise_impl`` over ``xp``."""
    return _each(xp, functions)
