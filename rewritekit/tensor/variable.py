"""NumPy-style operators and methods on ``Var``, installed here so ``ir`` knows no tensor math.

Methods look their function up in ``rewritekit.tensor`` when called, so each Op family
module only has to export the function (``rt.sum``, ``rt.reshape``, ...).

``& | ~`` on bools build the logical Ops (``logical_and``, ``logical_or``, ``logical_not``), on
integers the bitwise ones (``bitwise_and``, ...), as NumPy's operators; ``^`` is
``bitwise_xor`` (on bools: exclusive or), ``<<`` and ``>>`` the shifts. Float operands raise,
naming the operator.

``==`` and ``!=`` stay identity comparisons (as in PyTensor): Vars are dict keys, and
hash-consing makes identity the structural equality. Use ``rt.equal``/``rt.not_equal`` for
the elementwise comparison.
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import Any

import numpy as np

from rewritekit.errors import DTypeError
from rewritekit.ir import Var


def _rt() -> ModuleType:
    return sys.modules["rewritekit.tensor"]


def _binary(name: str) -> tuple[Any, Any]:
    def forward(self: Var, other: Any) -> Var:
        return getattr(_rt(), name)(self, other)

    def reflected(self: Var, other: Any) -> Var:
        return getattr(_rt(), name)(other, self)

    forward.__name__ = reflected.__name__ = name
    return forward, reflected


def _kind(value: Any) -> str | None:
    """The dtype kind of an operand, or None where it is unknown (a rule's pattern)."""
    if isinstance(value, Var):
        return value.type.kind
    if isinstance(value, (bool, int, float, complex, np.generic, np.ndarray)):
        return np.asarray(value).dtype.kind
    return None


#: operator -> (the function on bools, the function on integers, what to use on floats)
_BITWISE = {
    "&": ("logical_and", "bitwise_and", "rt.logical_and"),
    "|": ("logical_or", "bitwise_or", "rt.logical_or"),
    "^": ("bitwise_xor", "bitwise_xor", "rt.not_equal(x != 0, y != 0)"),
    "~": ("logical_not", "invert", "rt.logical_not"),
}


def _bits_or_truth(symbol: str, values: tuple[Any, ...]) -> Any:
    """The function an operator means: the logical Op when every operand is bool (or a
    pattern, whose dtype is unknown), the bitwise Op when one is an integer; a float
    operand is an error."""
    logical, bitwise, hint = _BITWISE[symbol]
    kinds = [_kind(v) for v in values]
    for value, kind in zip(values, kinds, strict=True):
        if isinstance(value, Var) and kind not in "biu":
            several = len(values) > 1
            raise DTypeError(
                f"{symbol}: expected {'bool operands' if several else 'a bool operand'}, got "
                f"{value.dtype} ({value!r}); {symbol} also takes integers (rt.{bitwise}); use "
                f"{hint} for truth values of other dtypes"
            )
    name = logical if all(kind in (None, "b") for kind in kinds) else bitwise
    return getattr(_rt(), name)


def _bitwise(symbol: str) -> tuple[Any, Any]:
    """``&``, ``|`` or ``^``, as NumPy's operators: on bools the logical Op (what ``&`` and
    ``|`` have always built), on integers the bitwise one."""

    def forward(self: Var, other: Any) -> Var:
        return _bits_or_truth(symbol, (self, other))(self, other)

    def reflected(self: Var, other: Any) -> Var:
        return _bits_or_truth(symbol, (other, self))(other, self)

    return forward, reflected


def _invert(self: Var) -> Var:
    return _bits_or_truth("~", (self,))(self)


class _At:
    """``x.at[idx].set(v)`` / ``.add(v)``, as in JAX."""

    __slots__ = ("var",)

    def __init__(self, var: Var) -> None:
        self.var = var

    def __getitem__(self, index: Any) -> _AtIndex:
        return _AtIndex(self.var, index)


class _AtIndex:
    __slots__ = ("index", "var")

    def __init__(self, var: Var, index: Any) -> None:
        self.var = var
        self.index = index

    def get(self, mode: str = "raise", fill_value: Any = None) -> Var:
        """x[idx]; ``mode`` "raise", "clip" or "fill" (with ``fill_value``) says what an
        index out of bounds does (``rt.getitem``)."""
        return _rt().subtensor.getitem(self.var, self.index, mode, fill_value)

    def set(self, value: Any, mode: str = "raise") -> Var:
        """x with x[idx] replaced by value (a new graph; x is unchanged); ``mode`` "clip"
        writes at the clamped index, "fill" (or "drop") drops a write out of bounds."""
        return _rt().subtensor.at_update(self.var, self.index, value, add=False, mode=mode)

    def add(self, value: Any, mode: str = "raise") -> Var:
        """x with value added at x[idx] (repeated indices accumulate); ``mode`` as ``set``."""
        return _rt().subtensor.at_update(self.var, self.index, value, add=True, mode=mode)


def _method(name: str, doc: str) -> Any:
    def method(self: Var, *args: Any, **kwargs: Any) -> Any:
        return getattr(_rt(), name)(self, *args, **kwargs)

    method.__name__ = name
    method.__doc__ = doc
    return method


def _reshape(self: Var, *shape: Any) -> Var:
    """x.reshape(2, 3) or x.reshape((2, 3)), as in NumPy."""
    if len(shape) == 1 and not isinstance(shape[0], int):
        shape = shape[0]
    return _rt().reshape(self, shape)


def _transpose(self: Var, *axes: Any) -> Var:
    """x.transpose(), x.transpose(1, 0) or x.transpose((1, 0)), as in NumPy."""
    if len(axes) == 1 and not isinstance(axes[0], int):
        axes = axes[0]
    return _rt().transpose(self, axes or None)


_METHODS = {
    "sum": "Sum over ``axis`` (see rt.sum).",
    "prod": "Product over ``axis`` (see rt.prod).",
    "mean": "Mean over ``axis`` (see rt.mean).",
    "var": "Variance over ``axis`` (see rt.var).",
    "std": "Standard deviation over ``axis`` (see rt.std).",
    "max": "Maximum over ``axis`` (see rt.max).",
    "min": "Minimum over ``axis`` (see rt.min).",
    "argmax": "Index of the maximum (see rt.argmax).",
    "argmin": "Index of the minimum (see rt.argmin).",
    "all": "True where all are true (see rt.all).",
    "any": "True where any is true (see rt.any).",
    "cumsum": "Cumulative sum (see rt.cumsum).",
    "cumprod": "Cumulative product (see rt.cumprod).",
    "astype": "A cast to ``dtype`` (see rt.astype).",
    "dot": "The dot product with another tensor (see rt.dot).",
    "flatten": "A 1-d copy (see rt.flatten).",
    "squeeze": "Drop length-1 axes (see rt.squeeze).",
    "swapaxes": "Swap two axes (see rt.swapaxes).",
    "sort": "Sorted along ``axis`` (see rt.sort).",
    "argsort": "Indices that sort along ``axis`` (see rt.argsort).",
    "clip": "Clip to [lo, hi] (see rt.clip).",
    "round": "Round to ``decimals`` (see rt.round).",
    "conj": "The complex conjugate (see rt.conj).",
    "conjugate": "The complex conjugate (see rt.conj).",
}


def install_operators(cls: type = Var, *, skip: frozenset[str] = frozenset()) -> None:
    """Give ``cls`` (``Var``, or a pattern class of ``rewritekit.rules``) NumPy-style
    operators and methods, except the attributes named in ``skip`` (idempotent)."""
    attributes: dict[str, Any] = {}
    for dunder, name in [
        ("add", "add"),
        ("sub", "subtract"),
        ("mul", "multiply"),
        ("truediv", "true_divide"),
        ("floordiv", "floor_divide"),
        ("mod", "mod"),
        ("pow", "power"),
        ("matmul", "matmul"),
        ("lshift", "left_shift"),
        ("rshift", "right_shift"),
    ]:
        forward, reflected = _binary(name)
        attributes[f"__{dunder}__"] = forward
        attributes[f"__r{dunder}__"] = reflected
    for dunder, name in [
        ("lt", "less"),
        ("le", "less_equal"),
        ("gt", "greater"),
        ("ge", "greater_equal"),
    ]:
        attributes[f"__{dunder}__"] = _binary(name)[0]
    for dunder, symbol in [("and", "&"), ("or", "|"), ("xor", "^")]:
        forward, reflected = _bitwise(symbol)
        attributes[f"__{dunder}__"] = forward
        attributes[f"__r{dunder}__"] = reflected
    attributes.update(
        __invert__=_invert,
        __neg__=lambda self: _rt().negative(self),
        __pos__=lambda self: self,
        __abs__=lambda self: _rt().abs(self),
        __getitem__=lambda self, index: _rt().getitem(self, index),
        __array_ufunc__=None,  # NumPy defers to our operators
        T=property(lambda self: _rt().transpose(self)),
        shape=property(lambda self: _rt().shape(self)),
        size=property(lambda self: _rt().size(self)),
        real=property(lambda self: _rt().real(self)),
        imag=property(lambda self: _rt().imag(self)),
        at=property(_At),
        reshape=_reshape,
        transpose=_transpose,
    )
    for name, doc in _METHODS.items():
        attributes[name] = _method(name, doc)
    for name, value in attributes.items():
        if name not in skip:
            setattr(cls, name, value)
