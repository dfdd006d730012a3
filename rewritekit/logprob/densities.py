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

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

import rewritekit.tensor as rt
from rewritekit.errors import DTypeError, ShapeError
from rewritekit.ir import Var

__all__ = [
    "bernoulli",
    "bernoulli_logit",
    "beta",
    "binomial",
    "categorical",
    "cauchy",
    "dirichlet",
    "exponential",
    "gamma",
    "halfcauchy",
    "halfnormal",
    "inverse_gamma",
    "lognormal",
    "multivariate_normal",
    "normal",
    "poisson",
    "student_t",
    "uniform",
]

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)
_LOG_PI = math.log(math.pi)
# How far a Dirichlet value's sum may be from 1: room for values normalised and rounded in
# their own dtype (float32 sums drift by ~1e-7 per element), still tight enough to catch an
# unnormalised value.
_SIMPLEX_TOLERANCE = {"float16": 1e-2, "float32": 1e-4, "float64": 1e-6}


# --- helpers -----------------------------------------------------------------------------


def _floats(dist: str, **args: Any) -> tuple[Var, ...]:
    """The arguments as Vars of one float dtype (the module's dtype rule), in order."""
    strong = {}
    for name, arg in args.items():
        if isinstance(arg, (bool, int, float)) and not isinstance(arg, np.generic):
            continue  # a weak Python number takes the others' dtype
        var = rt.as_tensor(arg)
        if var.type.kind not in "biuf":
            raise DTypeError(
                f"{dist}: {name} has dtype {var.dtype}; expected bool, int or float (a real number)"
            )
        strong[name] = var
    floats = [v.dtype for v in strong.values() if v.type.kind == "f"]
    dtype = np.result_type(*floats).name if floats else "float64"
    return tuple(
        rt.cast(strong[name], dtype) if name in strong else rt.constant(arg, dtype=dtype)
        for name, arg in args.items()
    )


def _need_axes(dist: str, **args: tuple[Var, int]) -> None:
    """Raise unless each named Var has at least the given number of (event) axes."""
    for name, (var, ndim) in args.items():
        if var.ndim < ndim:
            raise ShapeError(
                f"{dist}: {name} must have at least {ndim} ax{'i' if ndim == 1 else 'e'}s "
                f"(the event {'axis' if ndim == 1 else 'axes'} last), got a {var.ndim}-d input"
            )


def _check(logp: Var, *conditions: Var) -> Var:
    """``logp`` where every condition holds (support and parameters), else ``-inf``."""
    return rt.where(functools.reduce(rt.logical_and, conditions), logp, -math.inf)


def _is_integer(x: Var) -> Var:
    return rt.logical_and(rt.equal(rt.floor(x), x), rt.isfinite(x))


def _is_probability(p: Var) -> Var:
    return rt.logical_and(p >= 0, p <= 1)


def _xlog1py(x: Var, y: Var) -> Var:
    """``x * log1p(y)``, and 0 where x == 0 (even for y <= -1), as SciPy's ``xlog1py``.

    The safe input keeps ``log1p(-1) = -inf`` out of the value and the gradient there: its
    derivative would meet a zero cotangent as 0 * inf = NaN.
    """
    safe_y = rt.where(rt.logical_and(rt.equal(x, 0), y <= -1), 0, y)
    return x * rt.log1p(safe_y)


def _log1p_square(z: Var) -> Var:
    """``log(1 + z**2)``, as ``2 log|z| + log1p(z**-2)`` for |z| > 1 where z**2 could
    overflow; each branch sees only the inputs it is finite for (SciPy's ``cauchy``)."""
    big = rt.abs(z) > 1
    large = rt.where(big, rt.abs(z), 2)
    small = rt.where(big, 0, z)
    return rt.where(
        big, 2 * rt.log(large) + rt.log1p(1 / rt.square(large)), rt.log1p(rt.square(small))
    )


# --- continuous --------------------------------------------------------------------------


def normal(value: Any, loc: Any, scale: Any) -> Var:
    """Normal: ``-(x - loc)**2 / (2 scale**2) - log(scale) - log(2 pi) / 2``.

    Support: real x; scale > 0.

    Example:
        >>> normal(rt.vector("x"), 0.0, 1.0).type
        TensorType(dtype='float64', shape=(None,))
    """
    value, loc, scale = _floats("normal", value=value, loc=loc, scale=scale)
    z = (value - loc) / scale
    return _check(-0.5 * rt.square(z) - _HALF_LOG_2PI - rt.log(scale), scale > 0)


def halfnormal(value: Any, scale: Any) -> Var:
    """Half-normal: ``log(2 / pi) / 2 - x**2 / (2 scale**2) - log(scale)``.

    Support: x >= 0; scale > 0.

    Example:
        >>> halfnormal(rt.scalar("x"), 2.0).dtype
        'float64'
    """
    value, scale = _floats("halfnormal", value=value, scale=scale)
    z = value / scale
    logp = 0.5 * math.log(2 / math.pi) - 0.5 * rt.square(z) - rt.log(scale)
    return _check(logp, value >= 0, scale > 0)


def cauchy(value: Any, loc: Any, scale: Any) -> Var:
    """Cauchy: ``-log(pi) - log(scale) - log(1 + ((x - loc) / scale)**2)``.

    Support: real x; scale > 0.

    Example:
        >>> cauchy(rt.vector("x"), rt.scalar("loc"), 1.0).type.shape
        (None,)
    """
    value, loc, scale = _floats("cauchy", value=value, loc=loc, scale=scale)
    logp = -_LOG_PI - rt.log(scale) - _log1p_square((value - loc) / scale)
    return _check(logp, scale > 0)


def halfcauchy(value: Any, scale: Any) -> Var:
    """Half-Cauchy: ``log(2 / pi) - log(scale) - log(1 + (x / scale)**2)``.

    Support: x >= 0; scale > 0.

    Example:
        >>> halfcauchy(rt.vector("x", dtype="float32"), 1.0).dtype
        'float32'
    """
    value, scale = _floats("halfcauchy", value=value, scale=scale)
    logp = math.log(2 / math.pi) - rt.log(scale) - _log1p_square(value / scale)
    return _check(logp, value >= 0, scale > 0)


def exponential(value: Any, scale: Any) -> Var:
    """Exponential with NumPy's ``scale`` (1 / rate): ``-x / scale - log(scale)``.

    Support: x >= 0; scale > 0.

    Example:
        >>> exponential(rt.vector("x"), rt.vector("scale")).type.shape
        (None,)
    """
    value, scale = _floats("exponential", value=value, scale=scale)
    return _check(-value / scale - rt.log(scale), value >= 0, scale > 0)


def gamma(value: Any, alpha: Any, scale: Any) -> Var:
    """Gamma (``scipy.stats.gamma(alpha, scale=scale)``), with z = x / scale:
    ``(alpha - 1) log(z) - z - gammaln(alpha) - log(scale)``.

    Support: x >= 0 (at 0: +inf, -log(scale) or -inf for alpha <, = or > 1); alpha > 0,
    scale > 0.

    Example:
        >>> gamma(rt.vector("x"), 2.0, rt.scalar("scale")).type.shape
        (None,)
    """
    value, alpha, scale = _floats("gamma", value=value, alpha=alpha, scale=scale)
    z = value / scale
    logp = rt.xlogy(alpha - 1, z) - z - rt.gammaln(alpha) - rt.log(scale)
    return _check(logp, value >= 0, alpha > 0, scale > 0)


def inverse_gamma(value: Any, alpha: Any, scale: Any) -> Var:
    """Inverse gamma (``scipy.stats.invgamma(alpha, scale=scale)``), with z = x / scale:
    ``-(alpha + 1) log(z) - 1 / z - gammaln(alpha) - log(scale)``.

    Support: x > 0; alpha > 0, scale > 0.

    Example:
        >>> inverse_gamma(rt.vector("x"), 3.0, 1.0).dtype
        'float64'
    """
    value, alpha, scale = _floats("inverse_gamma", value=value, alpha=alpha, scale=scale)
    z = value / scale
    logp = -(alpha + 1) * rt.log(z) - 1 / z - rt.gammaln(alpha) - rt.log(scale)
    return _check(logp, value > 0, alpha > 0, scale > 0)


def beta(value: Any, alpha: Any, beta: Any) -> Var:
    """Beta: ``(alpha - 1) log(x) + (beta - 1) log(1 - x) - log B(alpha, beta)``, with
    ``log B(a, b) = gammaln(a) + gammaln(b) - gammaln(a + b)``.

    Support: 0 <= x <= 1 (at the ends: +inf, finite or -inf, as SciPy); alpha, beta > 0.

    Example:
        >>> beta(rt.vector("x"), 2.0, 5.0).type.shape
        (None,)
    """
    value, a, b = _floats("beta", value=value, alpha=alpha, beta=beta)
    log_beta_fn = rt.gammaln(a) + rt.gammaln(b) - rt.gammaln(a + b)
    logp = rt.xlogy(a - 1, value) + _xlog1py(b - 1, -value) - log_beta_fn
    return _check(logp, _is_probability(value), a > 0, b > 0)


def uniform(value: Any, low: Any, high: Any) -> Var:
    """Uniform: ``-log(high - low)``.

    Support: low <= x <= high; low < high.

    Example:
        >>> uniform(rt.vector("x"), 0.0, rt.scalar("high")).type.shape
        (None,)
    """
    value, low, high = _floats("uniform", value=value, low=low, high=high)
    # + 0 * value: the value's shape, and a zero gradient for it rather than a disconnected one
    logp = -rt.log(high - low) + 0 * value
    return _check(logp, value >= low, value <= high, low < high)


def student_t(value: Any, df: Any, loc: Any, scale: Any) -> Var:
    """Student's t (``scipy.stats.t(df, loc, scale)``), with z = (x - loc) / scale:
    ``gammaln((df + 1) / 2) - gammaln(df / 2) - log(df pi) / 2
    - (df + 1) / 2 log(1 + z**2 / df) - log(scale)``.

    Support: real x; df > 0 (finite), scale > 0.

    Example:
        >>> student_t(rt.vector("x"), 3.0, 0.0, 1.0).type.shape
        (None,)
    """
    value, df, loc, scale = _floats("student_t", value=value, df=df, loc=loc, scale=scale)
    z = (value - loc) / scale
    logp = (
        rt.gammaln(0.5 * (df + 1))
        - rt.gammaln(0.5 * df)
        - 0.5 * (rt.log(df) + _LOG_PI)
        - 0.5 * (df + 1) * _log1p_square(z / rt.sqrt(df))
        - rt.log(scale)
    )
    return _check(logp, df > 0, scale > 0)


def lognormal(value: Any, loc: Any, scale: Any) -> Var:
    """Log-normal, log(x) ~ Normal(loc, scale) (``scipy.stats.lognorm(scale,
    scale=exp(loc))``): ``normal(log(x), loc, scale) - log(x)``.

    Support: x > 0; scale > 0.

    Example:
        >>> lognormal(rt.vector("x"), 0.0, 1.0).dtype
        'float64'
    """
    value, loc, scale = _floats("lognormal", value=value, loc=loc, scale=scale)
    log_x = rt.log(value)
    z = (log_x - loc) / scale
    logp = -0.5 * rt.square(z) - _HALF_LOG_2PI - rt.log(scale) - log_x
    return _check(logp, value > 0, scale > 0)


# --- discrete ----------------------------------------------------------------------------


def bernoulli(value: Any, p: Any) -> Var:
    """Bernoulli: ``log(p)`` at 1, ``log(1 - p)`` at 0.

    Support: x in {0, 1}; 0 <= p <= 1 (p = 1 at x = 1 gives 0, with a finite gradient).

    Example:
        >>> bernoulli(rt.vector("x", dtype="int64"), rt.scalar("p", dtype="float32")).dtype
        'float32'
    """
    value, p = _floats("bernoulli", value=value, p=p)
    logp = rt.xlogy(value, p) + _xlog1py(1 - value, -p)
    is_binary = rt.logical_or(rt.equal(value, 0), rt.equal(value, 1))
    return _check(logp, is_binary, _is_probability(p))


def bernoulli_logit(value: Any, logit: Any) -> Var:
    """Bernoulli with p = sigmoid(logit): ``log_sigmoid(logit)`` at 1,
    ``log_sigmoid(-logit)`` at 0 (exact for large |logit|: -800 at logit = 800, x = 0).

    Support: x in {0, 1}; real logit.

    Example:
        >>> bernoulli_logit(rt.vector("x"), rt.vector("logit")).type.shape
        (None,)
    """
    value, logit = _floats("bernoulli_logit", value=value, logit=logit)
    is_one = rt.equal(value, 1)
    logp = rt.where(is_one, rt.log_sigmoid(logit), rt.log_sigmoid(-logit))
    return _check(logp, rt.logical_or(is_one, rt.equal(value, 0)))


def poisson(value: Any, lam: Any) -> Var:
    """Poisson: ``x log(lam) - lam - gammaln(x + 1)`` (0 log 0 = 0: lam = 0 gives 0 at x = 0).

    Support: x in {0, 1, 2, ...}; lam >= 0.

    Example:
        >>> poisson(rt.vector("x", dtype="int64"), 3).dtype
        'float64'
    """
    value, lam = _floats("poisson", value=value, lam=lam)
    logp = rt.xlogy(value, lam) - lam - rt.gammaln(value + 1)
    return _check(logp, _is_integer(value), value >= 0, lam >= 0)


def binomial(value: Any, n: Any, p: Any) -> Var:
    """Binomial: ``log C(n, x) + x log(p) + (n - x) log(1 - p)``, with ``log C(n, x) =
    gammaln(n + 1) - gammaln(x + 1) - gammaln(n - x + 1)``.

    Support: x in {0, ..., n}; n in {0, 1, 2, ...}, 0 <= p <= 1.

    Example:
        >>> binomial(rt.vector("x", dtype="int64"), 10, rt.scalar("p")).type.shape
        (None,)
    """
    value, n, p = _floats("binomial", value=value, n=n, p=p)
    log_choose = rt.gammaln(n + 1) - rt.gammaln(value + 1) - rt.gammaln(n - value + 1)
    logp = log_choose + rt.xlogy(value, p) + _xlog1py(n - value, -p)
    in_range = rt.logical_and(value >= 0, value <= n)
    return _check(logp, _is_integer(value), in_range, _is_integer(n), _is_probability(p))


def categorical(value: Any, p: Any) -> Var:
    """Categorical over the last axis of ``p`` (K categories), normalised by its sum as in
    PyMC: ``log(p[..., x]) - log(sum(p[..., :]))``. The result's shape is the broadcast of
    x's shape and p's batch shape ``p.shape[:-1]``.

    Support: x in {0, ..., K - 1}; p >= 0 with a positive sum.

    Raises:
        ShapeError: ``p`` is 0-d.

    Example:
        >>> categorical(rt.vector("x", dtype="int64"), np.array([0.2, 0.3, 0.5])).type.shape
        (None,)
    """
    value, p = _floats("categorical", value=value, p=p)
    _need_axes("categorical", p=(p, 1))
    k = rt.shape_i(p, p.ndim - 1)
    one_hot = rt.equal(rt.expand_dims(value, -1), rt.arange(k))
    # the sum of the one chosen entry: exact, and no log(0) of a discarded p in the gradient
    chosen = rt.sum(rt.where(one_hot, p, 0), axis=-1)
    logp = rt.log(chosen) - rt.log(rt.sum(p, axis=-1))
    valid_p = rt.logical_and(rt.all(p >= 0, axis=-1), rt.any(p > 0, axis=-1))
    in_range = rt.logical_and(value >= 0, value < k)
    return _check(logp, _is_integer(value), in_range, valid_p)


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
