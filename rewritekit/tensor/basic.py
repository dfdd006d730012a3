"""Graph inputs and constants: ``scalar``, ``vector``, ``matrix``, ``tensor``, ``constant``."""

from __future__ import annotations

from typing import Any

from rewritekit.errors import DTypeError
from rewritekit.ir import Constant, TensorType, Var, as_var
from rewritekit.ir import constant as _ir_constant

__all__ = ["as_tensor", "constant", "matrix", "scalar", "tensor", "vector"]


def tensor(name: str | None = None, shape: Any = (), dtype: Any = "float64") -> Var:
    """A new graph input of the given static ``shape`` and ``dtype``.

    Each call makes a distinct variable, even with a name used before.

    Example:
        >>> t = tensor("t", shape=(None, 3), dtype="int64")
        >>> str(t.type)
        'int64[?,3]'
    """
    return Var(TensorType(dtype, shape), name)


def scalar(name: str | None = None, dtype: Any = "float64") -> Var:
    """A new 0-d graph input (default float64)."""
    return tensor(name, (), dtype)


def vector(name: str | None = None, dtype: Any = "float64", shape: Any = (None,)) -> Var:
    """A new 1-d graph input of unknown length (default float64)."""
    return tensor(name, shape, dtype)


def matrix(name: str | None = None, dtype: Any = "float64", shape: Any = (None, None)) -> Var:
    """A new 2-d graph input of unknown shape (default float64)."""
    return tensor(name, shape, dtype)


def constant(value: Any, dtype: Any = None, name: str | None = None) -> Constant:
    """A constant tensor (copied, read-only, interned by contents).

    Example:
        >>> constant([1.0, 2.0]) is constant([1.0, 2.0])
        True
    """
    return _ir_constant(value, dtype, name)


def as_tensor(value: Any, dtype: Any = None) -> Var:
    """``value`` if it is a Var, otherwise a constant of it.

    Raises:
        DTypeError: ``value`` is a Var of another dtype than the ``dtype`` asked for.
    """
    var = as_var(value, dtype=dtype, context="as_tensor")
    if dtype is not None and var.type.dtype != TensorType(dtype).dtype:
        raise DTypeError(
            f"as_tensor: {var!r} has dtype {var.dtype}, not {TensorType(dtype).dtype}; "
            "cast it explicitly"
        )
    return var
