"""JAX implementations of the elementwise Ops (``rewritekit.tensor.elemwise``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp

from rewritekit.backends.jax import jax_funcify
from rewritekit.ir import Apply
from rewritekit.tensor import elemwise as ew

TABLE: dict[type[ew.Elemwise], Callable[..., Any]] = {
    ew.Cast: lambda x: x,  # the result is cast to the Op's dtype below
    ew.Add: jnp.add,
    ew.Subtract: jnp.subtract,
    ew.Multiply: jnp.multiply,
    ew.TrueDivide: jnp.true_divide,
    ew.FloorDivide: jnp.floor_divide,
    ew.Mod: jnp.mod,
    ew.Power: jnp.power,
    ew.Negative: jnp.negative,
    ew.Abs: jnp.abs,
    ew.Sign: jnp.sign,
    ew.Square: jnp.square,
    ew.Reciprocal: jnp.reciprocal,
    ew.Maximum: jnp.maximum,
    ew.Minimum: jnp.minimum,
    ew.Clip: lambda x, lo, hi: jnp.minimum(jnp.maximum(x, lo), hi),
    ew.Where: jnp.where,
    ew.Floor: jnp.floor,
    ew.Ceil: jnp.ceil,
    ew.Exp: jnp.exp,
    ew.Exp2: jnp.exp2,
    ew.Expm1: jnp.expm1,
    ew.Log: jnp.log,
    ew.Log2: jnp.log2,
    ew.Log10: jnp.log10,
    ew.Log1p: jnp.log1p,
    ew.Sqrt: jnp.sqrt,
    ew.Sin: jnp.sin,
    ew.Cos: jnp.cos,
    ew.Tan: jnp.tan,
    ew.Arcsin: jnp.arcsin,
    ew.Arccos: jnp.arccos,
    ew.Arctan: jnp.arctan,
    ew.Arctan2: jnp.arctan2,
    ew.Sinh: jnp.sinh,
    ew.Cosh: jnp.cosh,
    ew.Tanh: jnp.tanh,
    ew.Arcsinh: jnp.arcsinh,
    ew.Arccosh: jnp.arccosh,
    ew.Arctanh: jnp.arctanh,
    ew.Logaddexp: jnp.logaddexp,
    ew.Equal: jnp.equal,
    ew.NotEqual: jnp.not_equal,
    ew.Less: jnp.less,
    ew.LessEqual: jnp.less_equal,
    ew.Greater: jnp.greater,
    ew.GreaterEqual: jnp.greater_equal,
    ew.Isnan: jnp.isnan,
    ew.Isinf: jnp.isinf,
    ew.Isfinite: jnp.isfinite,
    ew.LogicalAnd: jnp.logical_and,
    ew.LogicalOr: jnp.logical_or,
    ew.LogicalNot: jnp.logical_not,
}


def elemwise_impl(fn: Callable[..., Any], node: Apply) -> Callable[..., Any]:
    """``fn`` with the inputs cast to the Op's computation dtypes and the result to its type.

    The dtypes are static, so the casts cost nothing at run time where they are no-ops.
    """
    op = node.op
    casts = op.cast_dtypes(*[i.dtype for i in node.inputs])  # type: ignore[attr-defined]
    out = node.outputs[0].dtype

    def run(*args: Any) -> Any:
        args = tuple(
            a if a.dtype == c else a.astype(c)
            for a, c in zip(map(jnp.asarray, args), casts, strict=True)
        )
        value = fn(*args)
        return value if value.dtype == out else value.astype(out)

    return run


@jax_funcify.register(ew.Elemwise)
def _elemwise(op: ew.Elemwise, node: Apply) -> Callable[..., Any]:
    fn = TABLE.get(type(op))
    if fn is None:
        raise NotImplementedError(f"the jax backend has no implementation for {op}")
    return elemwise_impl(fn, node)


@jax_funcify.register(ew.Round)
def _round(op: ew.Round, node: Apply) -> Callable[..., Any]:
    return elemwise_impl(lambda x: jnp.round(x, op.decimals), node)
