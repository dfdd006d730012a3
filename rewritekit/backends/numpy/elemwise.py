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


def saturating_cast(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Floats converted to the integer ``dtype`` as XLA converts them: truncated toward
    zero, NaN to 0, and values past the dtype's range (infinities too) to its min or max.
    NumPy leaves those undefined (INT_MIN or wrapped bits, by platform and dtype)."""
    info = np.iinfo(dtype)
    past = 2.0 ** (info.bits - (info.min < 0))  # the first float above info.max
    with np.errstate(invalid="ignore"):
        out = x.astype(dtype)  # a new array: fixed in place below
        low, high, nan = x <= info.min, x >= past, np.isnan(x)
    if low.any() or high.any() or nan.any():
        out[low] = info.min
        out[high] = info.max
        out[nan] = 0
    return out


@numpy_funcify.register(ew.Cast)
def _cast(op: ew.Cast, node: Apply) -> Callable[..., Any]:
    target = np.dtype(op.dtype)
    if node.inputs[0].type.kind != "f" or target.kind not in "iu":
        return elemwise_impl(TABLE[ew.Cast], node)
    return lambda x: saturating_cast(np.asarray(x), target)
