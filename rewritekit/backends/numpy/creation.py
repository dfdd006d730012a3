"""NumPy implementations of the creation Ops (``rewritekit.tensor.creation``)."""

import numpy as np

from rewritekit.backends.common import arrays, register
from rewritekit.backends.numpy import numpy_funcify

register(numpy_funcify, arrays.creation(np))
