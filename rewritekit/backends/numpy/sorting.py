"""NumPy implementations of ``rewritekit.tensor.sorting`` (stable sorts)."""

import numpy as np

from rewritekit.backends.common import arrays, register
from rewritekit.backends.numpy import numpy_funcify

register(numpy_funcify, arrays.sorting(np))
