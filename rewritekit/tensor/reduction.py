"""Reductions, cumulative sums and products, and softmax, in one namespace: the reductions
proper and the shared base classes (``aggregates``), statistics and normalizers
(``statistics``), and running reductions (``cumulative``). The backends implement the
family in one module each (``rewritekit/backends/<backend>/reduction.py``).

Every Op here reduces (or scans) over axes given as parameters. The user functions take
NumPy's ``axis`` argument (an int, a tuple of ints with negatives allowed, or ``None`` for
all axes) and normalize it against the input's rank (``axes.normalize_axes``), so the Ops
hold only sorted tuples of non-negative ints and ``rt.sum(x, axis=-1) is rt.sum(x,
axis=(1,))`` for a matrix ``x``.

Dtypes follow NumPy:

- *accumulating* (``sum``, ``prod``, ``cumsum``, ``cumprod``): bool and integers narrower
  than 64 bits accumulate in int64 (unsigned ones in uint64); other dtypes keep theirs.
- *ordering* (``max``, ``min``): the input's dtype. ``argmax``/``argmin``: int64.
- *logical* (``all``, ``any``): bool.
- *float* (``mean``, ``var``, ``std``, ``logsumexp``, ``softmax``, ``log_softmax``): floats
  keep their dtype, integers and bool compute in float64; ``var``/``std`` of complex give
  the matching real dtype.
"""

# ruff: noqa: F401 (the Op classes are this namespace's too: rd.Sum, rd.Softmax)
from rewritekit.tensor.aggregates import *  # noqa: F403
from rewritekit.tensor.aggregates import (
    All,
    Any,
    Argmax,
    Argmin,
    ArgReduce,
    Extreme,
    Max,
    Mean,
    Min,
    Prod,
    Reduce,
    ReductionBase,
    Sum,
)
from rewritekit.tensor.aggregates import __all__ as _aggregates
from rewritekit.tensor.axes import normalize_axes
from rewritekit.tensor.cumulative import *  # noqa: F403
from rewritekit.tensor.cumulative import Cumlogsumexp, Cumprod, Cumsum, Cumulative
from rewritekit.tensor.cumulative import __all__ as _cumulative
from rewritekit.tensor.statistics import *  # noqa: F403
from rewritekit.tensor.statistics import (
    LogSoftmax,
    Logsumexp,
    Softmax,
    SoftmaxBase,
    Std,
    Variance,
)
from rewritekit.tensor.statistics import __all__ as _statistics

__all__ = sorted([*_aggregates, *_cumulative, *_statistics])
