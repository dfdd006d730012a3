"""Op records for the parts of complex numbers (``rewritekit.tensor.complex_parts``).

The gradient tests differentiate float inputs of float outputs, so ``complex_parts`` builds
its complex values from float pairs (``complex``) and returns real and imaginary parts:
its gradient goes through all four Ops, checked against ``jax.grad`` (JAX's conventions
for complex cotangents). ``parts_of_complex`` draws complex inputs (no gradient check:
those are in ``tests/tensor/test_fft.py``). One shape per record, so each compiles once
per dtype.
"""

from __future__ import annotations

import numpy as np

import rewritekit.tensor as rt
from rewritekit.tensor import complex_parts as cp
from tests.records import OpRecord, values


def complex_values(data, dtype, shape, lo=-5.0, hi=5.0):
    """A complex array of ``dtype`` whose real and imaginary parts lie in [lo, hi]."""
    part = {"complex64": "float32", "complex128": "float64"}[dtype]
    re, im = values(data, part, shape, lo, hi), values(data, part, shape, lo, hi)
    out = np.empty(shape, dtype=dtype)
    out.real, out.imag = re, im
    return out


def _pair(data, dtype):
    # broadcast: the real parts of a (2, 3) array, the imaginary parts of a (3,) one
    return [values(data, dtype, (2, 3), -2.0, 2.0), values(data, dtype, (3,), -2.0, 2.0)]


def _parts(a, b):
    z = rt.complex(a, b)
    w = z * rt.conj(z + 1j)
    return rt.real(w), rt.imag(w * b), rt.conj(z)


def _parts_reference(a, b):
    z = a + 1j * b
    w = z * np.conj(z + 1j)
    return w.real, (w * b).imag, np.conj(z)


RECORDS = [
    OpRecord(
        "complex_parts",
        (cp.Complex, cp.Real, cp.Imag, cp.Conj),
        _parts,
        _parts_reference,
        _pair,
        atol=1e-5,  # float32: products of parts up to ~20 lose ~3e-6 absolute
    ),
    OpRecord(
        "parts_of_complex",
        (cp.Real, cp.Imag, cp.Conj),
        lambda z: (rt.real(z), rt.imag(z), rt.conj(z), rt.angle(z, deg=True)),
        lambda z: (np.real(z), np.imag(z), np.conj(z), np.angle(z, deg=True)),
        lambda data, dtype: [complex_values(data, dtype, (4,))],
        dtypes=("complex128", "complex64"),
        atol=1e-5,  # float32 degrees
    ),
]
