"""NumPy implementations of the special functions (``rewritekit.tensor.special``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.special as sp

from rewritekit.backends.numpy import numpy_funcify
from rewritekit.backends.numpy.elemwise import elemwise_impl
from rewritekit.ir import Apply
from rewritekit.tensor import special as sf


def _log1mexp(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x)
    near_zero = x > -np.log(2.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(near_zero, np.log(-np.expm1(x)), np.log1p(-np.exp(x)))


TABLE: dict[type[sf.FloatElemwise], Callable[..., Any]] = {
    sf.Sigmoid: sp.expit,
    sf.Softplus: lambda x: np.logaddexp(np.zeros((), x.dtype), x),
    sf.LogSigmoid: sp.log_expit,
    sf.Logit: sp.logit,
    sf.Erf: sp.erf,
    sf.Erfc: sp.erfc,
    sf.Erfinv: sp.erfinv,
    sf.Gammaln: sp.gammaln,
    sf.Digamma: sp.psi,
    sf.Xlogy: sp.xlogy,
    sf.Log1mexp: _log1mexp,
}


def _register(op_class: type[sf.FloatElemwise], fn: Callable[..., Any]) -> None:
    @numpy_funcify.register(op_class)
    def _(op: sf.FloatElemwise, node: Apply) -> Callable[..., Any]:
        return elemwise_impl(fn, node)


for _op_class, _fn in TABLE.items():
    _register(_op_class, _fn)


@numpy_funcify.register(sf.Polygamma)
def _polygamma(op: sf.Polygamma, node: Apply) -> Callable[..., Any]:
    return elemwise_impl(lambda x: sp.polygamma(op.n, x), node)
