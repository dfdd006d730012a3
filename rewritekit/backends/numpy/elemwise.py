"""NumPy implementations of the elementwise Ops (``rewritekit.tensor.elemwise``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from rewritekit.backends.numpy import numpy_funcify
from rewritekit.ir import Apply
from rewritekit.tensor import elemwise as ew

TABLE: dict[type[ew.Elemwise], Callable[..., Any]] = {
    ew.Cast: lambda x: x,  # the result is cast to the Op's dtype below
    ew.Add: np.add,
    ew.Subtract: np.subtract,
    ew.Multiply: np.multiply,
    ew.TrueDivide: np.true_divide,
    ew.FloorDivide: np.floor_divide,
    ew.Mod: np.mod,
    ew.Power: np.power,
    ew.Negative: np.negative,
    ew.Abs: np.abs,
    ew.Sign: np.sign,
    ew.Square: np.square,
    ew.Reciprocal: np.reciprocal,
    ew.Maximum: np.maximum,
    ew.Minimum: np.minimum,
    ew.Clip: np.clip,
    ew.Where: np.where,
    ew.Floor: np.floor,
    ew.Ceil: np.ceil,
    ew.Exp: np.exp,
    ew.Exp2: np.exp2,
    ew.Expm1: np.expm1,
    ew.Log: np.log,
    ew.Log2: np.log2,
    ew.Log10: np.log10,
    ew.Log1p: np.log1p,
    ew.Sqrt: np.sqrt,
    ew.Sin: np.sin,
    ew.Cos: np.cos,
    ew.Tan: np.tan,
    ew.Arcsin: np.arcsin,
    ew.Arccos: np.arccos,
    ew.Arctan: np.arctan,
    ew.Arctan2: np.arctan2,
    ew.Sinh: np.sinh,
    ew.Cosh: np.cosh,
    ew.Tanh: np.tanh,
    ew.Arcsinh: np.arcsinh,
    ew.Arccosh: np.arccosh,
    ew.Arctanh: np.arctanh,
    ew.Logaddexp: np.logaddexp,
    ew.Equal: np.equal,
    ew.NotEqual: np.not_equal,
    ew.Less: np.less,
    ew.LessEqual: np.less_equal,
    ew.Greater: np.greater,
    ew.GreaterEqual: np.greater_equal,
    ew.Isnan: np.isnan,
    ew.Isinf: np.isinf,
    ew.Isfinite: np.isfinite,
    ew.LogicalAnd: np.logical_and,
    ew.LogicalOr: np.logical_or,
    ew.LogicalNot: np.logical_not,
}


def elemwise_impl(fn: Callable[..., Any], node: Apply) -> Callable[..., Any]:
    """``fn`` with the inputs cast to the Op's computation dtypes and the result to its type."""
    op = node.op
    in_dtypes = [i.dtype for i in node.inputs]
    casts = [np.dtype(d) for d in op.cast_dtypes(*in_dtypes)]  # type: ignore[attr-defined]
    out = np.dtype(node.outputs[0].dtype)

    def run(*args: Any) -> Any:
        args = tuple(
            a if a.dtype == c else a.astype(c)
            for a, c in zip(map(np.asarray, args), casts, strict=True)
        )
        with np.errstate(all="ignore"):  # NaN and inf follow IEEE, as in JAX
            value = np.asarray(fn(*args))
        return value if value.dtype == out else value.astype(out)

    return run


@numpy_funcify.register(ew.Elemwise)
def _elemwise(op: ew.Elemwise, node: Apply) -> Callable[..., Any]:
    fn = TABLE.get(type(op))
    if fn is None:
        raise NotImplementedError(f"the numpy backend has no implementation for {op}")
    return elemwise_impl(fn, node)


@numpy_funcify.register(ew.Round)
def _round(op: ew.Round, node: Apply) -> Callable[..., Any]:
    return elemwise_impl(lambda x: np.round(x, op.decimals), node)
