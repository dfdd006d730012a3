"""NumPy implementations of the differentiation Ops (``rewritekit.tensor.gradient``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from rewritekit.backends.lowering import lower
from rewritekit.backends.numpy import numpy_funcify
from rewritekit.ir import Apply
from rewritekit.tensor import gradient as gr


def sum_to_shape(g: Any, target: tuple[int, ...]) -> Any:
    """``g`` summed to ``target``: over leading axes, and where ``target`` has 1 and ``g``
    does not (shared by the NumPy and JAX backends; ``g`` may be a JAX array)."""
    lead = g.ndim - len(target)
    if lead:
        g = g.sum(axis=tuple(range(lead)))
    pairs = enumerate(zip(target, g.shape, strict=True))
    axes = tuple(a for a, (want, have) in pairs if want == 1 != have)
    if axes:
        g = g.sum(axis=axes, keepdims=True)
    return g


@numpy_funcify.register(gr.StopGradient)
def _stop_gradient(op: gr.StopGradient, node: Apply) -> Callable[..., Any]:
    return lambda x: x


@numpy_funcify.register(gr.SumTo)
def _sum_to(op: gr.SumTo, node: Apply) -> Callable[..., Any]:
    def run(g: np.ndarray, shape: np.ndarray) -> np.ndarray:
        return np.asarray(sum_to_shape(np.asarray(g), tuple(int(n) for n in shape)))

    return run


@numpy_funcify.register(gr.Jacobian)
def _jacobian(op: gr.Jacobian, node: Apply) -> Callable[..., Any]:
    from rewritekit.backends.numpy import _implement

    inner = lower([op.cotangent, *op.inner_inputs], [op.vjp_graph], _implement)
    u_dtype = np.dtype(op.cotangent.dtype)

    def run(*args: Any) -> np.ndarray:
        *values, shape = args
        out_shape = tuple(int(n) for n in shape)
        size = int(np.prod(out_shape, dtype=np.int64))
        rows = []
        for i in range(size):
            u = np.zeros(size, dtype=u_dtype)
            u[i] = 1
            rows.append(np.asarray(inner(u.reshape(out_shape), *values)[0]))
        wrt_shape = rows[0].shape if rows else _empty_wrt_shape(op, values)
        result = np.stack(rows) if rows else np.zeros((0, *wrt_shape), op.vjp_graph.dtype)
        return result.reshape(*out_shape, *wrt_shape)

    return run


def _empty_wrt_shape(op: gr.Jacobian, values: list[Any]) -> tuple[int, ...]:
    # an output with no elements: evaluate the vjp once on an empty cotangent for its shape
    from rewritekit.backends.numpy import _implement

    zero = np.zeros([0 if n is None else n for n in op.cotangent.type.shape], op.cotangent.dtype)
    inner = lower([op.cotangent, *op.inner_inputs], [op.vjp_graph], _implement)
    return np.asarray(inner(zero, *values)[0]).shape
