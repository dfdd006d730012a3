"""NumPy implementations of the creation Ops (``rewritekit.tensor.creation``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from rewritekit.backends.numpy import numpy_funcify
from rewritekit.ir import Apply
from rewritekit.tensor.creation import Alloc, Arange, Eye


@numpy_funcify.register(Alloc)
def _alloc(op: Alloc, node: Apply) -> Callable[..., Any]:
    out = np.dtype(node.outputs[0].dtype)
    return lambda value, shape: np.full(tuple(int(d) for d in shape), value, dtype=out)


@numpy_funcify.register(Arange)
def _arange(op: Arange, node: Apply) -> Callable[..., Any]:
    out = np.dtype(op.dtype)
    return lambda start, stop, step: np.arange(start, stop, step, dtype=out)


@numpy_funcify.register(Eye)
def _eye(op: Eye, node: Apply) -> Callable[..., Any]:
    out = np.dtype(op.dtype)
    return lambda n, m, k: np.eye(int(n), int(m), int(k), dtype=out)
