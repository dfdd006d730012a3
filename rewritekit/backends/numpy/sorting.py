"""NumPy implementations of ``rewritekit.tensor.sorting`` (stable sorts)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from rewritekit.backends.numpy import numpy_funcify
from rewritekit.ir import Apply
from rewritekit.tensor.sorting import Argsort, Sort


@numpy_funcify.register(Sort)
def _sort(op: Sort, node: Apply) -> Callable[..., Any]:
    return lambda x: np.sort(x, axis=op.axis, kind="stable")


@numpy_funcify.register(Argsort)
def _argsort(op: Argsort, node: Apply) -> Callable[..., Any]:
    return lambda x: np.argsort(x, axis=op.axis, kind="stable").astype(np.int64, copy=False)
