"""Log-densities of the standard distributions, written with the tensor API.

Each function takes the value first, then the parameters (NumPy's and SciPy's names and
order), and returns the log-density (log-pmf for the discrete ones) as a Var: elementwise
over the broadcast of the value and the parameters, and for the multivariate ones summed
over the event axis, so the result has the batch shape. Arguments may be Vars, NumPy
arrays or Python numbers.

Conventions:

- Normalising constants are exact: the float64 results match ``scipy.stats`` (``logpdf``,
  ``logpmf``) to rounding.
- ``-inf`` outside the support and for invalid parameters (a scale <= 0, a probability
  outside [0, 1], a count that is negative or not an integer, ``low >= high``, ...). The
  support is closed where SciPy's is: ``gamma`` at 0 is ``+inf``, ``-log(scale)`` or
  ``-inf`` as ``alpha`` is below, at or above 1; ``beta`` at 0 and 1 likewise.
- Discrete distributions take integer or float values; a non-integer value gives ``-inf``.
- Dtype: the promotion of the float dtypes among the value and the parameters. Integer
  and bool arguments do not count (an int64 count with float32 parameters gives float32)
  and Python numbers are weak; with no float argument the result is float64.
- Gradients are finite wherever the density is finite and positive, at the edges of the
  support too (``bernoulli`` at p = 1, ``poisson`` at lam = 0): branches a ``where``
  discards only see inputs they are finite for. Where the log-density is ``-inf`` the
  gradient is unspecified (it may be NaN).

Example:
    >>> x = rt.vector("x", dtype="float32")
    >>> logp = normal(x, 0.0, 2.0)
    >>> logp.dtype
    'float32'
"""

from rewritekit.logprob.densities.continuous import *  # noqa: F403
from rewritekit.logprob.densities.continuous import __all__ as _continuous
from rewritekit.logprob.densities.discrete import *  # noqa: F403
from rewritekit.logprob.densities.discrete import __all__ as _discrete
from rewritekit.logprob.densities.multivariate import *  # noqa: F403
from rewritekit.logprob.densities.multivariate import __all__ as _multivariate

__all__ = sorted([*_continuous, *_discrete, *_multivariate])
