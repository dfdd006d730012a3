"""NumPy implementations of the products (``rewritekit.tensor.products``)."""

import numpy as np

from rewritekit.backends.common import algebra, register
from rewritekit.backends.numpy import numpy_funcify

register(numpy_funcify, algebra.products(np))
