"""The Fourier transforms (``rewritekit.tensor.fft``) over an array module ``xp``:
``numpy.fft`` and ``jax.numpy.fft`` take the same arguments (``s``, ``axes``, ``norm``), so
one implementation serves both backends."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from rewritekit.backends.common import Table
from rewritekit.ir import Apply
from rewritekit.tensor import fft as ft

#: The ``xp.fft`` function of each transform: the n-dimensional one, over the Op's axes.
FUNCTIONS = {ft.Fft: "fftn", ft.Ifft: "ifftn", ft.Rfft: "rfftn", ft.Irfft: "irfftn"}


def _transform(xp: Any, name: str, op: ft.FourierTransform, node: Apply) -> Callable[..., Any]:
    fn = getattr(xp.fft, name)
    compute = np.dtype(op.compute_dtype(node.inputs[0].dtype))
    out = np.dtype(node.outputs[0].dtype)
    irfft = isinstance(op, ft.Irfft)

    def run(x: Any) -> Any:
        x = xp.asarray(x)
        x = x if x.dtype == compute else x.astype(compute)
        s = list(op.transform_lengths(x.shape))
        if irfft and op.lengths[-1] is None:  # NumPy's default n: 2 (m - 1)
            s[-1] = 2 * (s[-1] - 1)
        y = fn(x, s=s, axes=op.axes, norm=op.norm)
        return y if y.dtype == out else y.astype(out)

    return run


def fft(xp: Any) -> Table:
    """The transforms of ``rewritekit.tensor.fft`` through ``xp.fft``'s n-dimensional ones."""
    return {
        cls: (lambda op, node, name=name: _transform(xp, name, op, node))
        for cls, name in FUNCTIONS.items()
    }
