"""NumPy implementations of the parts of complex numbers
(``rewritekit.tensor.complex_parts``)."""

from collections.abc import Callable
from typing import Any

import numpy as np

from rewritekit.backends.common import elementwise, register
from rewritekit.backends.numpy import numpy_funcify
from rewritekit.tensor import complex_parts as cp


def _complex(re: np.ndarray, im: np.ndarray) -> np.ndarray:
    # the parts set one by one: re + 1j * im would turn an infinite im into a NaN real part
    out = np.empty(np.broadcast_shapes(re.shape, im.shape), dtype=cp.COMPLEX_DTYPE[re.dtype.name])
    out.real, out.imag = re, im
    return out


TABLE: dict[type, Callable[..., Any]] = {
    cp.Real: np.real,
    cp.Imag: np.imag,
    cp.Conj: np.conj,
    cp.Complex: _complex,
}

register(
    numpy_funcify,
    {
        cls: (lambda op, node, fn=fn: elementwise.elemwise_impl(np, fn, node))
        for cls, fn in TABLE.items()
    },
)
