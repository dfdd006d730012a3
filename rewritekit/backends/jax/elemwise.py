"""JAX implementations of the elementwise Ops (``rewritekit.tensor.elemwise``).

Piecewise functions are written so that ``jax.grad`` never meets a NaN from the branch a
``where`` does not take: ``softplus`` is ``logaddexp(0, x)``, and ``log1mexp`` feeds each
branch only the inputs that branch is valid for (the double-``where`` trick).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import jax.scipy.special as jsp
import numpy as np

from rewritekit.backends.jax import jax_funcify
from rewritekit.ir import Apply
from rewritekit.tensor import elemwise as ew


def _log1mexp(x: jax.Array) -> jax.Array:
    near_zero = x > -np.log(2.0)
    safe_near = jnp.where(near_zero, x, -1.0)  # each branch sees only its own inputs
    safe_far = jnp.where(near_zero, -1.0, x)
    return jnp.where(near_zero, jnp.log(-jnp.expm1(safe_near)), jnp.log1p(-jnp.exp(safe_far)))


def _xlogy(x: jax.Array, y: jax.Array) -> jax.Array:
    # Only x == 0 with y == 0 needs care (0 * log 0 would be NaN); elsewhere x * log(y) is
    # right, including its derivative log(y) at x == 0.
    zero = (x == 0) & (y == 0)
    safe_y = jnp.where(zero, 1.0, y)
    return jnp.where(zero, jnp.zeros_like(x), x * jnp.log(safe_y))


def _logit(p: jax.Array) -> jax.Array:
    return jnp.log(p) - jnp.log1p(-p)


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
    ew.Sigmoid: jax.nn.sigmoid,
    ew.Softplus: lambda x: jnp.logaddexp(jnp.zeros((), x.dtype), x),
    ew.LogSigmoid: jax.nn.log_sigmoid,
    ew.Logit: _logit,
    ew.Erf: jsp.erf,
    ew.Erfc: jsp.erfc,
    ew.Erfinv: jsp.erfinv,
    ew.Gammaln: jsp.gammaln,
    ew.Digamma: jsp.digamma,
    ew.Xlogy: _xlogy,
    ew.Log1mexp: _log1mexp,
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
