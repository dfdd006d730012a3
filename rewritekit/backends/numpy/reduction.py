"""NumPy implementations of the reductions (``rewritekit.tensor.reduction``); softmax and
log-softmax are SciPy's formulas."""

import numpy as np

from rewritekit.backends.common import reductions, register
from rewritekit.backends.numpy import numpy_funcify


def softmax(x: np.ndarray, axis: tuple[int, ...]) -> np.ndarray:
    """exp(x - max) / sum(exp(x - max)) over ``axis`` (SciPy's formula)."""
    e = np.exp(x - np.max(x, axis=axis, keepdims=True, initial=-np.inf))
    return e / np.sum(e, axis=axis, keepdims=True)


def log_softmax(x: np.ndarray, axis: tuple[int, ...]) -> np.ndarray:
    """x - m - log(sum(exp(x - m))) over ``axis``, m the finite maximum (SciPy's formula)."""
    m = np.max(x, axis=axis, keepdims=True, initial=-np.inf)
    shifted = x - np.where(np.isfinite(m), m, 0).astype(x.dtype)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


def cumlogsumexp(x: np.ndarray, axis: int) -> np.ndarray:
    """Running log-sum-exps: ``logaddexp`` accumulated along ``axis``."""
    return np.logaddexp.accumulate(x, axis=axis)


register(numpy_funcify, reductions.reduction(np, softmax, log_softmax, cumlogsumexp))
