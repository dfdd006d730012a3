"""Log-densities of the multivariate distributions: summed over their event axes (see
``rewritekit.logprob.densities``)."""

from __future__ import annotations

from typing import Any

import rewritekit.tensor as rt
from rewritekit.errors import ShapeError
from rewritekit.ir import Var
from rewritekit.logprob.densities._common import (
    _HALF_LOG_2PI,
    _LOG_PI,
    _SIMPLEX_TOLERANCE,
    _check,
    _floats,
    _is_integer,
    _need_axes,
)

__all__ = [
    "dirichlet",
    "lkj_cholesky",
    "multinomial",
    "multivariate_normal",
]


# How far a row of an LKJ Cholesky factor may be from unit length (as _SIMPLEX_TOLERANCE)
_UNIT_ROW_TOLERANCE = {"float16": 1e-2, "float32": 1e-4, "float64": 1e-6}


# --- multivariate ------------------------------------------------------------------------


def multivariate_normal(value: Any, mean: Any, cov: Any) -> Var:
    """Multivariate normal over the last axis (K): with cov = L L^T (Cholesky),
    ``-|L^-1 (x - mean)|**2 / 2 - sum(log(diag(L))) - K log(2 pi) / 2``.

    Batched over the leading axes: value and mean ``(..., K)``, cov ``(..., K, K)``; the
    result has their broadcast batch shape.

    Support: real x; cov symmetric positive definite (only its lower triangle is read).
    A cov that is not positive definite is not caught: the NumPy backend raises
    ``numpy.linalg.LinAlgError`` from the Cholesky factorization, the JAX backend returns
    NaN.

    Raises:
        ShapeError: ``value`` is 0-d or ``cov`` has fewer than 2 axes.

    Example:
        >>> mvn = multivariate_normal(rt.matrix("x"), np.zeros(2), np.eye(2))
        >>> mvn.type.shape
        (None,)
    """
    value, mean, cov = _floats("multivariate_normal", value=value, mean=mean, cov=cov)
    _need_axes("multivariate_normal", value=(value, 1), cov=(cov, 2))
    factor = rt.linalg.cholesky(cov)
    eye = rt.eye(rt.shape_i(cov, cov.ndim - 1), dtype=cov.dtype)
    if factor.ndim == 2:
        factor_inv = rt.linalg.solve_triangular(factor, eye, lower=True)
    else:  # solve_triangular takes one matrix; a stack goes through the general solve
        factor_inv = rt.linalg.solve(factor, eye)
    # rows (..., 1, K): (L^-1 d)^T = d^T L^-T, broadcast against a stack of L^-1 too
    z = rt.expand_dims(value - mean, -2) @ rt.swapaxes(factor_inv, -1, -2)
    half_log_det = rt.sum(rt.log(rt.sum(factor * eye, axis=-1)), axis=-1)
    k = rt.cast(rt.shape_i(value, value.ndim - 1), value.dtype)
    return -0.5 * rt.sum(rt.square(z), axis=(-2, -1)) - half_log_det - k * _HALF_LOG_2PI


def dirichlet(value: Any, alpha: Any) -> Var:
    """Dirichlet over the last axis: ``gammaln(sum(alpha)) - sum(gammaln(alpha))
    + sum((alpha - 1) log(x))``.

    Support: x on the closed simplex: every x >= 0 and |sum(x) - 1| <= 1e-6 (1e-4 in
    float32); alpha > 0.

    Raises:
        ShapeError: ``value`` or ``alpha`` is 0-d.

    Example:
        >>> dirichlet(rt.matrix("x"), np.ones(3)).type.shape
        (None,)
    """
    value, alpha = _floats("dirichlet", value=value, alpha=alpha)
    _need_axes("dirichlet", value=(value, 1), alpha=(alpha, 1))
    log_norm = rt.gammaln(rt.sum(alpha, axis=-1)) - rt.sum(rt.gammaln(alpha), axis=-1)
    logp = log_norm + rt.sum(rt.xlogy(alpha - 1, value), axis=-1)
    tolerance = _SIMPLEX_TOLERANCE.get(value.dtype, 1e-6)
    on_simplex = rt.logical_and(
        rt.all(value >= 0, axis=-1), rt.abs(rt.sum(value, axis=-1) - 1) <= tolerance
    )
    return _check(logp, on_simplex, rt.all(alpha > 0, axis=-1))


def multinomial(value: Any, n: Any, p: Any) -> Var:
    """Multinomial over the last axis (K categories), p normalised by its sum as in
    ``categorical``: ``gammaln(n + 1) - sum(gammaln(x + 1)) + sum(x log(p / sum(p)))``.
    The result's shape is the broadcast of the batch shapes ``x.shape[:-1]``, ``n.shape``
    and ``p.shape[:-1]``.

    Support: x integers >= 0 with sum(x) = n; p >= 0 with a positive sum.

    Raises:
        ShapeError: ``value`` or ``p`` is 0-d.

    Example:
        >>> multinomial(rt.matrix("x"), 10, np.array([0.2, 0.3, 0.5])).type.shape
        (None,)
    """
    value, n, p = _floats("multinomial", value=value, n=n, p=p)
    _need_axes("multinomial", value=(value, 1), p=(p, 1))
    total = rt.sum(p, axis=-1, keepdims=True)
    log_coeff = rt.gammaln(n + 1) - rt.sum(rt.gammaln(value + 1), axis=-1)
    logp = log_coeff + rt.sum(rt.xlogy(value, p / total), axis=-1)
    counts = rt.all(rt.logical_and(_is_integer(value), value >= 0), axis=-1)
    valid_p = rt.logical_and(rt.all(p >= 0, axis=-1), rt.any(p > 0, axis=-1))
    return _check(logp, counts, rt.equal(rt.sum(value, axis=-1), n), valid_p)


def lkj_cholesky(value: Any, eta: Any) -> Var:
    """LKJ(eta) on the lower Cholesky factor L (n x n, the last two axes) of a correlation
    matrix, as Stan's ``lkj_corr_cholesky_lpdf`` and NumPyro's ``LKJCholesky``:
    ``sum_{i=2..n} (n - i + 2 eta - 2) log(L_ii) - log c(n, eta)``, with the normalising
    constant ``log c = (n - 1) log(pi) / 2 + (n - 1)(n - 2) log(pi) / 4 + sum_{m=0..n-2}
    gammaln(eta + m / 2) - (n - 1) gammaln(eta + (n - 1) / 2)``.

    Support: L lower triangular, diagonal > 0, rows of unit length (within 1e-6; 1e-4 in
    float32); eta > 0.

    Raises:
        ShapeError: ``value`` has fewer than 2 axes or is not square.

    Example:
        >>> lkj_cholesky(rt.tensor("L", shape=(None, 3, 3)), 2.0).type.shape
        (None,)
    """
    value, eta = _floats("lkj_cholesky", value=value, eta=eta)
    _need_axes("lkj_cholesky", value=(value, 2))
    rows, cols = value.type.shape[-2:]
    if rows is not None and cols is not None and rows != cols:
        raise ShapeError(f"lkj_cholesky: value must be square matrices, got {value.type}")
    n = rt.shape_i(value, value.ndim - 1)
    dim = rt.cast(n, value.dtype)
    i = rt.arange(n, dtype=value.dtype)  # 0-based: Stan's i - 1
    eye = rt.eye(n, dtype=value.dtype)
    diag = rt.sum(value * eye, axis=-1)
    eta_ = rt.expand_dims(eta, -1)
    order = rt.where(i >= 1, dim - i - 3 + 2 * eta_, 0)
    unnormalised = rt.sum(order * rt.log(diag), axis=-1)
    half = rt.arange(n - 1, dtype=value.dtype) / 2
    log_norm = (
        (dim - 1) * (dim / 4) * _LOG_PI
        + rt.sum(rt.gammaln(eta_ + half), axis=-1)
        - (dim - 1) * rt.gammaln(eta + (dim - 1) / 2)
    )
    tolerance = _UNIT_ROW_TOLERANCE.get(value.dtype, 1e-6)
    unit_rows = rt.abs(rt.sum(rt.square(value), axis=-1) - 1) <= tolerance
    factor = rt.logical_and(
        rt.all(rt.equal(rt.triu(value, 1), 0), axis=(-2, -1)),
        rt.all(rt.logical_and(diag > 0, unit_rows), axis=-1),
    )
    return _check(unnormalised - log_norm, factor, eta > 0)
