"""NumPy implementations of the Fourier transforms (``rewritekit.tensor.fft``): NumPy's
``numpy.fft`` (pocketfft; float32 stays complex64)."""

import numpy as np

from rewritekit.backends.common import fourier, register
from rewritekit.backends.numpy import numpy_funcify

register(numpy_funcify, fourier.fft(np))
