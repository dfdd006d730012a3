"""NumPy implementations of the products (``rewritekit.tensor.products``).

Each is NumPy's own function; its result is cast to the node's declared dtype (a no-op for
NumPy's promotion, which the Ops follow) and returned as an array, so 0-d results are
arrays rather than NumPy scalars.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from rewritekit.backends.numpy import numpy_funcify
from rewritekit.ir import Apply
from rewritekit.tensor import products as pr


def _typed(fn: Callable[..., Any], node: Apply) -> Callable[..., Any]:
    out = np.dtype(node.outputs[0].dtype)

    def run(*args: Any) -> np.ndarray:
        value = np.asarray(fn(*(np.asarray(a) for a in args)))
        return value if value.dtype == out else value.astype(out)

    return run


@numpy_funcify.register(pr.Dot)
def _dot(op: pr.Dot, node: Apply) -> Callable[..., Any]:
    return _typed(np.dot, node)


@numpy_funcify.register(pr.MatMul)
def _matmul(op: pr.MatMul, node: Apply) -> Callable[..., Any]:
    return _typed(np.matmul, node)


@numpy_funcify.register(pr.Outer)
def _outer(op: pr.Outer, node: Apply) -> Callable[..., Any]:
    return _typed(np.outer, node)


@numpy_funcify.register(pr.Tensordot)
def _tensordot(op: pr.Tensordot, node: Apply) -> Callable[..., Any]:
    axes = (list(op.axes[0]), list(op.axes[1]))
    return _typed(lambda a, b: np.tensordot(a, b, axes=axes), node)


@numpy_funcify.register(pr.Einsum)
def _einsum(op: pr.Einsum, node: Apply) -> Callable[..., Any]:
    return _typed(lambda *xs: np.einsum(op.subscripts, *xs), node)
