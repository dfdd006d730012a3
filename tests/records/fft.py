"""Op records for the Fourier transforms (``rt.fft``, ``rewritekit.tensor.fft``).

Each record transforms over explicit axes with cropping or zero-padding and a norm, and
returns the real and imaginary parts of a complex result (the gradient tests take float
outputs): complex inputs are built from float pairs with ``rt.complex``. One shape per
record, so each compiles once per dtype. Inputs lie in [-1, 1]; float32 sums of a few
of them lose ~1e-6 absolute near zero: atol 1e-5.
"""

from __future__ import annotations

import numpy as np

import rewritekit.tensor as rt
from rewritekit.tensor import fft as ft
from tests.records import OpRecord, values


def _floats(*shapes):
    def draw(data, dtype):
        return [values(data, dtype, shape, -1.0, 1.0) for shape in shapes]

    return draw


def _parts(y):
    return (rt.real(y), rt.imag(y)) if rt.iscomplexobj(y) else y


def _reference_parts(y):
    return (y.real, y.imag) if np.iscomplexobj(y) else y


def _of_pair(name, op, build, reference, shape):
    """A record of ``build`` on ``complex(a, b)`` (``reference`` on ``a + 1j * b``), ``a``
    and ``b`` of ``shape``."""
    return OpRecord(
        name,
        (op,),
        lambda a, b: _parts(build(rt.complex(a, b))),
        lambda a, b: _reference_parts(reference(a + 1j * b)),
        _floats(shape, shape),
        atol=1e-5,
    )


RECORDS = [
    _of_pair(
        "fft",
        ft.Fft,
        lambda z: rt.fft.fft(z, n=5, axis=0, norm="ortho"),
        lambda z: np.fft.fft(z, n=5, axis=0, norm="ortho"),
        (4, 3),
    ),
    _of_pair(
        "ifftn",
        ft.Ifft,
        lambda z: rt.fft.ifftn(z, s=(3, 2), axes=(1, 0)),
        lambda z: np.fft.ifftn(z, s=(3, 2), axes=(1, 0)),
        (4, 3),
    ),
    _of_pair(
        "irfftn",
        ft.Irfft,
        lambda z: rt.fft.irfftn(z, s=(5, 4), axes=(1, 0), norm="ortho"),
        lambda z: np.fft.irfftn(z, s=(5, 4), axes=(1, 0), norm="ortho"),
        (4, 3),
    ),
    OpRecord(
        "rfft",
        (ft.Rfft,),
        lambda x: _parts(rt.fft.rfft(x, axis=0, norm="forward")),
        lambda x: _reference_parts(np.fft.rfft(x, axis=0, norm="forward")),
        _floats((5, 2)),
        atol=1e-5,
    ),
]
