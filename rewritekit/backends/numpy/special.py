"""NumPy implementations of the special functions (``rewritekit.tensor.special``): SciPy's."""

import numpy as np
import scipy.special as sp

from rewritekit.backends.common import elementwise, register
from rewritekit.backends.numpy import numpy_funcify
from rewritekit.tensor import special as sf

TABLE = elementwise.special_functions(np, sp) | {
    sf.Erfcx: sp.erfcx,
    sf.Erfcinv: sp.erfcinv,
    sf.Gammaincinv: sp.gammaincinv,
    sf.Betaincinv: sp.betaincinv,
    sf.Sigmoid: sp.expit,
    sf.Softplus: lambda x: np.logaddexp(np.zeros((), x.dtype), x),
    sf.LogSigmoid: sp.log_expit,
    sf.Logit: sp.logit,
    sf.Xlogy: sp.xlogy,
}
register(numpy_funcify, elementwise.special(np, sp, TABLE))
