"""The reductions (``rewritekit.tensor.reduction``) and the differentiation Ops
(``rewritekit.tensor.gradient``) over an array module ``xp``.

Axes are Op parameters, so every implementation is static under ``jax.jit``. Each
reduction's result is cast to the node's declared dtype (the library's own, by the Op's
rules; the cast is a no-op except where an input had to be computed in float64) and
returned as an array. ``Jacobian`` is each backend's own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from rewritekit.backends.common import Table, quiet
from rewritekit.ir import Apply
from rewritekit.tensor import gradient as gr
from rewritekit.tensor import reduction as rd

# The function of each reduction with NumPy's (axis, keepdims) signature, in both libraries.
REDUCE: dict[type[rd.Reduce], str] = {
    rd.Sum: "sum",
    rd.Prod: "prod",
    rd.Max: "max",
    rd.Min: "min",
    rd.All: "all",
    rd.Any: "any",
    rd.Mean: "mean",
}


def _identity(x: Any) -> Any:
    return x


def typed(xp: Any, fn: Callable[..., Any], node: Apply) -> Callable[..., Any]:
    """``fn`` on the input in the computation dtype, its result cast to the node's dtype."""
    out = np.dtype(node.outputs[0].dtype)
    source = node.inputs[0].dtype
    compute = np.dtype(source if np.dtype(source).kind in "fc" else "float64")
    floating = isinstance(
        node.op, (rd.Mean, rd.Variance, rd.Logsumexp, rd.SoftmaxBase, rd.Cumlogsumexp)
    )

    def run(x: Any) -> Any:
        x = xp.asarray(x)
        if floating and x.dtype != compute:
            x = x.astype(compute)
        with quiet(xp):
            value = xp.asarray(fn(x))
        return value if value.dtype == out else value.astype(out)

    return run


def logsumexp(
    xp: Any, x: Any, axis: tuple[int, ...], keepdims: bool, stop_gradient: Callable = _identity
) -> Any:
    """log(sum(exp(x))) over ``axis``, shifted by the finite maximum (0 where there is none).

    All -inf (or nothing) gives log(0) = -inf, +inf gives inf, NaN gives NaN. Where the sum
    is 0 the log reads a safe value and the shift is a constant (``stop_gradient``), so
    ``jax.grad`` gives 0 there, not NaN.
    """
    m = xp.max(x, axis=axis, keepdims=True, initial=-np.inf)
    m = stop_gradient(xp.where(xp.isfinite(m), m, xp.zeros_like(m)))
    total = xp.sum(xp.exp(x - m), axis=axis, keepdims=True)
    empty = total == 0
    safe = xp.where(empty, xp.ones_like(total), total)
    out = xp.where(empty, -np.inf, xp.log(safe)) + m
    return out if keepdims else xp.squeeze(out, axis=axis)


def reduction(
    xp: Any,
    softmax: Callable,
    log_softmax: Callable,
    cumlogsumexp: Callable,
    stop_gradient: Callable = _identity,
) -> Table:
    """The reductions over ``xp``, with the library's ``softmax(x, axis)``,
    ``log_softmax(x, axis)`` and ``cumlogsumexp(x, axis)``, and ``logsumexp``'s
    ``stop_gradient``."""

    def reduce(op: rd.Reduce, node: Apply) -> Callable[..., Any]:
        fn = getattr(xp, REDUCE[type(op)])
        dtype = {"dtype": node.outputs[0].dtype} if isinstance(op, (rd.Sum, rd.Prod)) else {}
        return typed(xp, lambda x: fn(x, axis=op.axis, keepdims=op.keepdims, **dtype), node)

    def variance(op: rd.Variance, node: Apply) -> Callable[..., Any]:
        fn = xp.std if isinstance(op, rd.Std) else xp.var
        return typed(xp, lambda x: fn(x, axis=op.axis, ddof=op.ddof, keepdims=op.keepdims), node)

    def arg(op: rd.ArgReduce, node: Apply) -> Callable[..., Any]:
        fn = xp.argmax if isinstance(op, rd.Argmax) else xp.argmin
        return typed(xp, lambda x: fn(x, axis=op.axis, keepdims=op.keepdims), node)

    def cumulative(op: rd.Cumulative, node: Apply) -> Callable[..., Any]:
        if isinstance(op, rd.Cumlogsumexp):
            if op.axis is None:
                return typed(xp, lambda x: cumlogsumexp(xp.ravel(x), 0), node)
            return typed(xp, lambda x: cumlogsumexp(x, op.axis), node)
        fn = xp.cumsum if isinstance(op, rd.Cumsum) else xp.cumprod
        dtype, axis = node.outputs[0].dtype, op.axis
        if axis is None:  # over the flattened input
            return typed(xp, lambda x: fn(xp.ravel(x), axis=0, dtype=dtype), node)
        return typed(xp, lambda x: fn(x, axis=axis, dtype=dtype), node)

    return dict.fromkeys(REDUCE, reduce) | {
        rd.Variance: variance,
        rd.ArgReduce: arg,
        rd.Cumulative: cumulative,
        rd.Logsumexp: lambda op, node: typed(
            xp, lambda x: logsumexp(xp, x, op.axis, op.keepdims, stop_gradient), node
        ),
        rd.Softmax: lambda op, node: typed(xp, lambda x: softmax(x, op.axis), node),
        rd.LogSoftmax: lambda op, node: typed(xp, lambda x: log_softmax(x, op.axis), node),
    }


def sum_to_shape(g: Any, target: tuple[int, ...]) -> Any:
    """``g`` summed to ``target``: over leading axes, and where ``target`` has 1 and ``g``
    does not (``g`` a NumPy or JAX array)."""
    lead = g.ndim - len(target)
    if lead:
        g = g.sum(axis=tuple(range(lead)))
    pairs = enumerate(zip(target, g.shape, strict=True))
    axes = tuple(a for a, (want, have) in pairs if want == 1 != have)
    if axes:
        g = g.sum(axis=axes, keepdims=True)
    return g


def gradient(xp: Any, stop_gradient: Callable[[Any], Any] = _identity) -> Table:
    """``StopGradient`` (the library's ``stop_gradient``; NumPy has no gradients: the
    identity) and ``SumTo`` over ``xp``."""
    return {
        gr.StopGradient: lambda op, node: stop_gradient,
        # the shape vector is concrete, also while JAX traces (static shapes)
        gr.SumTo: lambda op, node: (
            lambda g, shape: xp.asarray(sum_to_shape(xp.asarray(g), tuple(int(n) for n in shape)))
        ),
    }
