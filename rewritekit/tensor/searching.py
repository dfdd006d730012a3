"""Where the nonzero elements are, with the static ``size=`` JAX asks for: ``nonzero``,
``argwhere`` and ``where(condition, size=...)``; and where values would go into a sorted
vector (``Searchsorted``, the Op of ``rt.searchsorted``).

A result's shape may not depend on the data, so a traced array gives the positions of
its first ``size`` nonzero elements (in C order), padded with ``fill_value`` (default 0)
where there are fewer, as ``jnp.nonzero(x, size=..., fill_value=...)``. A constant needs
no ``size``: its positions are known when the graph is built (they are constants too).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rewritekit.errors import DTypeError, GraphTypeError, ShapeError
from rewritekit.ir import Constant, Grads, Op, TensorType, Var, Vars, as_var, constant
from rewritekit.tensor.axes import is_int
from rewritekit.tensor.joining import stack

__all__ = ["argwhere", "nonzero"]


class Nonzero(Op):
    """The positions of the first ``size`` nonzero elements of ``x``, one int64 vector of
    length ``size`` per axis, padded with ``fill_value``."""

    __props__ = ("size", "fill_value")
    differentiable = False

    size: int
    fill_value: int

    def __init__(self, size: int, fill_value: int = 0) -> None:
        if not is_int(size) or int(size) < 0:
            raise ShapeError(f"nonzero: size must be an int >= 0, got {size!r}")
        if not is_int(fill_value):
            raise GraphTypeError(f"nonzero: fill_value must be an int, got {fill_value!r}")
        super().__init__(int(size), int(fill_value))

    def infer_types(self, x: TensorType) -> tuple[TensorType, ...]:
        if x.ndim == 0:
            raise ShapeError("nonzero: the input must have at least one axis, got a scalar")
        return tuple(TensorType("int64", (self.size,)) for _ in range(x.ndim))

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        return [None]


class Searchsorted(Op):
    """The int64 positions where the elements of ``v`` would go into the sorted 1-d ``a``
    to keep it sorted: the first such position (``side="left"``, ``a[i-1] < v <= a[i]``) or
    the last (``"right"``, ``a[i-1] <= v < a[i]``). NaN sorts last, as in ``sort``; both
    inputs compare in their promoted dtype.

    Domain: ``a`` sorted ascending (not checked: the result is unspecified otherwise).
    """

    __props__ = ("side",)
    differentiable = False

    side: str

    def __init__(self, side: str = "left") -> None:
        if side not in ("left", "right"):
            raise GraphTypeError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
        super().__init__(side)

    def infer_types(self, a: TensorType, v: TensorType) -> tuple[TensorType, ...]:
        if a.ndim != 1:
            raise ShapeError(f"searchsorted: a must be 1-d (a sorted vector), got {a}")
        for label, t in (("a", a), ("v", v)):
            if t.kind not in "biuf":
                raise DTypeError(
                    f"searchsorted: input {label!r} has dtype {t.dtype}, which searchsorted "
                    "does not support (expected bool, int, uint or float)"
                )
        return (TensorType("int64", v.shape),)


def nonzero(x: Any, *, size: int | None = None, fill_value: int | None = None) -> tuple[Var, ...]:
    """The positions of the nonzero elements of ``x``, one int64 vector per axis (NumPy's
    and JAX's ``nonzero``).

    Args:
        x: an array of at least one axis (any dtype: its truth value counts).
        size: how many positions (static): the first ``size`` in C order, padded with
            ``fill_value`` where there are fewer. Needed unless ``x`` is a constant.
        fill_value: the padding (an int, default 0).

    Raises:
        GraphTypeError: ``x`` is not a constant and ``size`` is missing (the result's shape
            would depend on the data).

    Example:
        >>> mask = rt.vector("mask", dtype="bool")
        >>> [v.type.shape for v in nonzero(mask, size=3)]
        [(3,)]
    """
    x = as_var(x, context="nonzero: input 'x'")
    if size is None:
        if not isinstance(x, Constant):
            raise GraphTypeError(
                f"nonzero: {x!r} is not a constant, so the number of its nonzero elements is "
                "known only at run time; give a static size, as JAX does: "
                "rt.nonzero(x, size=n, fill_value=0)"
            )
        if x.ndim == 0:
            raise ShapeError("nonzero: the input must have at least one axis, got a scalar")
        return tuple(constant(p.astype(np.int64)) for p in np.nonzero(x.data))
    out = Nonzero(size, 0 if fill_value is None else fill_value)(x)
    return out if isinstance(out, tuple) else (out,)


def argwhere(x: Any, *, size: int | None = None, fill_value: int | None = None) -> Var:
    """The positions of the nonzero elements as rows, ``(count, x.ndim)`` (NumPy's and
    JAX's ``argwhere``; ``size`` as in ``nonzero``).

    Example:
        >>> argwhere(rt.matrix("m"), size=4).type.shape
        (4, 2)
    """
    return stack(list(nonzero(x, size=size, fill_value=fill_value)), axis=-1)
