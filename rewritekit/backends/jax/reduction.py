"""JAX implementations of the reductions (``rewritekit.tensor.reduction``).

Axes are Op parameters, so every implementation is static under ``jax.jit``. ``logsumexp``
is written so that ``jax.grad`` gives no NaN where a slice is all -inf (its gradient there
is 0): the log reads a safe value where the sum is 0, and the shift is a constant.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from rewritekit.backends.jax import jax_funcify
from rewritekit.ir import Apply
from rewritekit.tensor import reduction as rd

# The jax.numpy function of each reduction with NumPy's (axis, keepdims) signature.
TABLE: dict[type[rd.Reduce], Callable[..., Any]] = {
    rd.Sum: jnp.sum,
    rd.Prod: jnp.prod,
    rd.Max: jnp.max,
    rd.Min: jnp.min,
    rd.All: jnp.all,
    rd.Any: jnp.any,
    rd.Mean: jnp.mean,
}


def _typed(fn: Callable[..., Any], node: Apply) -> Callable[..., Any]:
    """``fn`` on the input in the computation dtype, its result cast to the node's dtype."""
    out = node.outputs[0].dtype
    source = node.inputs[0].dtype
    compute = source if jnp.dtype(source).kind in "fc" else "float64"
    floating = isinstance(node.op, (rd.Mean, rd.Variance, rd.Logsumexp, rd.SoftmaxBase))

    def run(x: Any) -> jax.Array:
        x = jnp.asarray(x)
        if floating and x.dtype != compute:
            x = x.astype(compute)
        value = fn(x)
        return value if value.dtype == out else value.astype(out)

    return run


@jax_funcify.register(rd.Reduce)
def _reduce(op: rd.Reduce, node: Apply) -> Callable[..., Any]:
    fn = TABLE.get(type(op))
    if fn is None:
        raise NotImplementedError(f"the jax backend has no implementation for {op}")
    if isinstance(op, (rd.Sum, rd.Prod)):
        dtype = node.outputs[0].dtype
        return _typed(lambda x: fn(x, axis=op.axis, keepdims=op.keepdims, dtype=dtype), node)
    return _typed(lambda x: fn(x, axis=op.axis, keepdims=op.keepdims), node)


@jax_funcify.register(rd.Variance)
def _variance(op: rd.Variance, node: Apply) -> Callable[..., Any]:
    fn = jnp.std if isinstance(op, rd.Std) else jnp.var
    return _typed(lambda x: fn(x, axis=op.axis, ddof=op.ddof, keepdims=op.keepdims), node)


def logsumexp(x: jax.Array, axis: tuple[int, ...], keepdims: bool) -> jax.Array:
    """log(sum(exp(x))) over ``axis``, shifted by the finite maximum (0 where there is none).

    Where the sum is 0 (all -inf) the result is -inf and the gradient 0, not NaN.
    """
    m = jnp.max(x, axis=axis, keepdims=True, initial=-jnp.inf)
    m = jax.lax.stop_gradient(jnp.where(jnp.isfinite(m), m, jnp.zeros_like(m)))
    total = jnp.sum(jnp.exp(x - m), axis=axis, keepdims=True)
    empty = total == 0
    safe = jnp.where(empty, jnp.ones_like(total), total)
    out = jnp.where(empty, -jnp.inf, jnp.log(safe)) + m
    return out if keepdims else jnp.squeeze(out, axis=axis)


@jax_funcify.register(rd.Logsumexp)
def _logsumexp(op: rd.Logsumexp, node: Apply) -> Callable[..., Any]:
    return _typed(lambda x: logsumexp(x, op.axis, op.keepdims), node)


@jax_funcify.register(rd.ArgReduce)
def _arg(op: rd.ArgReduce, node: Apply) -> Callable[..., Any]:
    fn = jnp.argmax if isinstance(op, rd.Argmax) else jnp.argmin
    return _typed(lambda x: fn(x, axis=op.axis, keepdims=op.keepdims), node)


@jax_funcify.register(rd.Cumulative)
def _cumulative(op: rd.Cumulative, node: Apply) -> Callable[..., Any]:
    fn = jnp.cumsum if isinstance(op, rd.Cumsum) else jnp.cumprod
    dtype = node.outputs[0].dtype

    def run(x: jax.Array) -> jax.Array:
        if op.axis is None:
            return fn(jnp.ravel(x), axis=0, dtype=dtype)
        return fn(x, axis=op.axis, dtype=dtype)

    return _typed(run, node)


@jax_funcify.register(rd.Softmax)
def _softmax(op: rd.Softmax, node: Apply) -> Callable[..., Any]:
    return _typed(lambda x: jax.nn.softmax(x, axis=op.axis), node)


@jax_funcify.register(rd.LogSoftmax)
def _log_softmax(op: rd.LogSoftmax, node: Apply) -> Callable[..., Any]:
    return _typed(lambda x: jax.nn.log_softmax(x, axis=op.axis), node)
