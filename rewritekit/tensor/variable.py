"""NumPy-style operators on ``Var``, installed here so that ``ir`` knows no tensor math."""

from __future__ import annotations

from typing import Any

from rewritekit.ir import Var
from rewritekit.tensor import elemwise as ew


def _binary(op: ew.Elemwise) -> tuple[Any, Any]:
    def forward(self: Var, other: Any) -> Var:
        return op(self, other)

    def reflected(self: Var, other: Any) -> Var:
        return op(other, self)

    return forward, reflected


def install_operators() -> None:
    """Give ``Var`` its arithmetic operators (idempotent)."""
    Var.__add__, Var.__radd__ = _binary(ew.add)  # type: ignore[method-assign]
    Var.__sub__, Var.__rsub__ = _binary(ew.subtract)  # type: ignore[method-assign]
    Var.__mul__, Var.__rmul__ = _binary(ew.multiply)  # type: ignore[method-assign]
    Var.__truediv__, Var.__rtruediv__ = _binary(ew.true_divide)  # type: ignore[method-assign]
    Var.__neg__ = lambda self: ew.negative(self)  # type: ignore[method-assign]
    # NumPy must not treat a Var as an array: `np.float64(2) * x` defers to Var.__rmul__.
    Var.__array_ufunc__ = None  # type: ignore[attr-defined]
