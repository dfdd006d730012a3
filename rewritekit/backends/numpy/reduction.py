"""NumPy implementations of the reductions (``rewritekit.tensor.reduction``).

Each result is cast to the node's declared dtype (NumPy's own, by the Op's rules; the cast
is a no-op except where an input had to be computed in float64) and returned as an array.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from rewritekit.backends.numpy import numpy_funcify
from rewritekit.ir import Apply
from rewritekit.tensor import reduction as rd

# The NumPy function of each reduction with NumPy's (axis, keepdims) signature.
TABLE: dict[type[rd.Reduce], Callable[..., Any]] = {
    rd.Sum: np.sum,
    rd.Prod: np.prod,
    rd.Max: np.max,
    rd.Min: np.min,
    rd.All: np.all,
    rd.Any: np.any,
    rd.Mean: np.mean,
}


def _typed(fn: Callable[..., Any], node: Apply) -> Callable[..., Any]:
    """``fn`` on the input in the computation dtype, its result cast to the node's dtype."""
    out = np.dtype(node.outputs[0].dtype)
    source = node.inputs[0].dtype
    compute = np.dtype(source if np.dtype(source).kind in "fc" else "float64")
    floating = isinstance(node.op, (rd.Mean, rd.Variance, rd.Logsumexp, rd.SoftmaxBase))

    def run(x: Any) -> np.ndarray:
        x = np.asarray(x)
        if floating and x.dtype != compute:
            x = x.astype(compute)
        with np.errstate(all="ignore"):  # NaN and inf follow IEEE, as in JAX
            value = np.asarray(fn(x))
        return value if value.dtype == out else value.astype(out)

    return run


@numpy_funcify.register(rd.Reduce)
def _reduce(op: rd.Reduce, node: Apply) -> Callable[..., Any]:
    fn = TABLE.get(type(op))
    if fn is None:
        raise NotImplementedError(f"the numpy backend has no implementation for {op}")
    dtype = node.outputs[0].dtype if isinstance(op, (rd.Sum, rd.Prod)) else None
    if dtype is None:
        return _typed(lambda x: fn(x, axis=op.axis, keepdims=op.keepdims), node)
    return _typed(lambda x: fn(x, axis=op.axis, keepdims=op.keepdims, dtype=dtype), node)


@numpy_funcify.register(rd.Variance)
def _variance(op: rd.Variance, node: Apply) -> Callable[..., Any]:
    fn = np.std if isinstance(op, rd.Std) else np.var
    return _typed(lambda x: fn(x, axis=op.axis, ddof=op.ddof, keepdims=op.keepdims), node)


def logsumexp(x: np.ndarray, axis: tuple[int, ...], keepdims: bool) -> np.ndarray:
    """log(sum(exp(x))) over ``axis``, shifted by the finite maximum (0 where there is none).

    All -inf (or nothing) gives log(0) = -inf, +inf gives inf, NaN gives NaN.
    """
    m = np.max(x, axis=axis, keepdims=True, initial=-np.inf)
    m = np.where(np.isfinite(m), m, 0).astype(x.dtype)
    out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=axis)


@numpy_funcify.register(rd.Logsumexp)
def _logsumexp(op: rd.Logsumexp, node: Apply) -> Callable[..., Any]:
    return _typed(lambda x: logsumexp(x, op.axis, op.keepdims), node)


@numpy_funcify.register(rd.ArgReduce)
def _arg(op: rd.ArgReduce, node: Apply) -> Callable[..., Any]:
    fn = np.argmax if isinstance(op, rd.Argmax) else np.argmin
    return _typed(lambda x: fn(x, axis=op.axis, keepdims=op.keepdims), node)


@numpy_funcify.register(rd.Cumulative)
def _cumulative(op: rd.Cumulative, node: Apply) -> Callable[..., Any]:
    fn = np.cumsum if isinstance(op, rd.Cumsum) else np.cumprod
    dtype = node.outputs[0].dtype
    return _typed(lambda x: fn(x, axis=op.axis, dtype=dtype), node)


def softmax(x: np.ndarray, axis: tuple[int, ...]) -> np.ndarray:
    """exp(x - max) / sum(exp(x - max)) over ``axis`` (SciPy's formula)."""
    e = np.exp(x - np.max(x, axis=axis, keepdims=True, initial=-np.inf))
    return e / np.sum(e, axis=axis, keepdims=True)


def log_softmax(x: np.ndarray, axis: tuple[int, ...]) -> np.ndarray:
    """x - m - log(sum(exp(x - m))) over ``axis``, m the finite maximum (SciPy's formula)."""
    m = np.max(x, axis=axis, keepdims=True, initial=-np.inf)
    shifted = x - np.where(np.isfinite(m), m, 0).astype(x.dtype)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


@numpy_funcify.register(rd.Softmax)
def _softmax(op: rd.Softmax, node: Apply) -> Callable[..., Any]:
    return _typed(lambda x: softmax(x, op.axis), node)


@numpy_funcify.register(rd.LogSoftmax)
def _log_softmax(op: rd.LogSoftmax, node: Apply) -> Callable[..., Any]:
    return _typed(lambda x: log_softmax(x, op.axis), node)
