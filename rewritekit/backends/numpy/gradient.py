"""NumPy implementations of the differentiation Ops (``rewritekit.tensor.gradient``).

``Jacobian`` runs its vjp graph once per one-hot cotangent.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from rewritekit.backends.common import reductions, register
from rewritekit.backends.lowering import lower
from rewritekit.backends.numpy import _implement, numpy_funcify
from rewritekit.ir import Apply
from rewritekit.tensor import gradient as gr

register(numpy_funcify, reductions.gradient(np))


@numpy_funcify.register(gr.Jacobian)
def _jacobian(op: gr.Jacobian, node: Apply) -> Callable[..., Any]:
    inner = lower([op.cotangent, *op.inner_inputs], [op.vjp_graph], _implement)
    u_dtype = np.dtype(op.cotangent.dtype)

    def run(*args: Any) -> np.ndarray:
        *values, shape = args
        out_shape = tuple(int(n) for n in shape)
        size = int(np.prod(out_shape, dtype=np.int64))
        if size == 0:  # no rows: evaluate the vjp once on an empty cotangent for its shape
            zero = np.zeros([0 if n is None else n for n in op.cotangent.type.shape], u_dtype)
            wrt_shape = np.shape(inner(zero, *values)[0])
            return np.zeros((*out_shape, *wrt_shape), op.vjp_graph.dtype)
        rows = []
        for i in range(size):
            u = np.zeros(size, dtype=u_dtype)
            u[i] = 1
            rows.append(np.asarray(inner(u.reshape(out_shape), *values)[0]))
        return np.stack(rows).reshape((*out_shape, *rows[0].shape))

    return run
