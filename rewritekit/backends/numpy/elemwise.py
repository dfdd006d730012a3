"""NumPy implementations of the elementwise Ops (``rewritekit.tensor.elemwise``)."""

from collections.abc import Callable
from typing import Any

import numpy as np

from rewritekit.backends.common import elementwise, register
from rewritekit.backends.numpy import numpy_funcify
from rewritekit.ir import Apply
from rewritekit.tensor import elemwise as ew

TABLE = elementwise.elemwise_functions(np) | {ew.Clip: np.clip}  # JAX spells clip out


def elemwise_impl(fn: Callable[..., Any], node: Apply) -> Callable[..., Any]:
    """``fn`` with the inputs cast to the Op's computation dtypes and the result to its type
    (NumPy's floating-point warnings off: NaN and inf follow IEEE, as in JAX)."""
    return elementwise.elemwise_impl(np, fn, node)


register(numpy_funcify, elementwise.elemwise(np, TABLE))
