"""NumPy implementations of the Bessel functions (``rewritekit.tensor.bessel``): SciPy's."""

import numpy as np
import scipy.special as sp

from rewritekit.backends.common import elementwise, register
from rewritekit.backends.numpy import numpy_funcify
from rewritekit.tensor import bessel as bs

TABLE = elementwise.bessel_functions(sp) | {bs.Ive: sp.ive, bs.Kv: sp.kv}
register(numpy_funcify, elementwise.bessel(np, TABLE))
