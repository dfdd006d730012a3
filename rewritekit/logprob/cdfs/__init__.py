"""Log-CDFs, log-survival functions and quantiles of the standard distributions.

``logcdf(x, value)`` is log P(X <= value), ``logccdf(x, value)`` log P(X > value) and
``icdf(x, q)`` the quantile (SciPy's ``ppf``: the smallest value whose CDF is >= q), for
``x`` a random variable's draw. Each looks up the distribution's function in ``LOGCDF``,
``LOGCCDF`` or ``ICDF`` (keyed by the random variable's ``name``); those take the value
(or q) first, then the parameters in SciPy's conventions as in ``densities``, and are
elementwise.

Conventions:

- Both tails are exact: each function computes the side whose probability is small
  directly (``log_ndtr(-z)`` for a normal's upper tail, ``-x / scale`` for an
  exponential's) and the side near 1 as ``log1p(-other)`` or ``log1mexp(log other)``,
  chosen by a ``where`` whose branches only see inputs they are finite for. So a
  normal's log-CDF at z = -40 and its log-survival function at z = +40 are both
  ``log_ndtr(-40)``, and a probability of 1 - 1e-300 has the log -1e-300, not 0.
- Outside the support the log-CDF is ``-inf`` below and 0 above (the log-survival
  function 0 and ``-inf``), never NaN. Invalid parameters (a scale <= 0, a probability
  outside [0, 1], ...) give NaN, as SciPy does; the densities give ``-inf`` there.
- Discrete distributions are defined at every real value as P(X <= floor(value)).
- ``icdf`` takes 0 <= q <= 1 (NaN outside) and gives the ends of the support at 0 and 1
  (SciPy's ``a - 1`` at q = 0 for discrete ones). Only distributions with a closed form
  or an inverse special function have one. Near q = 1 it is as precise as ``1 - q``
  where the form needs that (gamma, inverse_gamma, chisquare, beta, truncated_normal).
- Dtype: as ``densities`` (the float dtypes among the value and the parameters).
- Gradients in the value are finite wherever the result is (in both tails, at the
  support's edges and outside it: discarded branches see safe inputs), unless the slope
  itself overflows (a Wald's log-CDF at x = 1e-300). Gradients in the parameters are
  those of the special functions: NaN in the shape parameters of ``betainc`` and
  ``betaincinv`` (beta, student_t, half_student_t, binomial, negative_binomial), whose
  derivatives are not implemented, and unspecified at parameters on the edge of their
  range (p or psi at 0 or 1, an infinite truncation bound).

No closed form, so no entry: ``von_mises``, ``skew_normal`` and ``beta_binomial``; nor
``categorical``, ``ordered_logistic`` (whose CDFs index the probability vectors) or the
multivariate distributions. ``ICDF`` has no ``poisson``,
``binomial``, ``negative_binomial``, zero-inflated or ``wald`` entry (no inverse special
function for them).

Example:
    >>> k, x = rr.normal(rr.key(), 0.0, 2.0)
    >>> logcdf(x, rt.scalar("v")).dtype
    'float64'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import rewritekit.tensor as rt
from rewritekit.errors import GraphTypeError
from rewritekit.ir import Var, as_var
from rewritekit.logprob.cdfs import continuous, discrete
from rewritekit.logprob.cdfs._common import Pair
from rewritekit.random import is_draw
from rewritekit.tensor.custom_random import CustomRV
from rewritekit.tensor.special import Sigmoid

__all__ = ["ICDF", "LOGCCDF", "LOGCDF", "icdf", "logccdf", "logcdf"]

# --- the tables and dispatch -------------------------------------------------------------

_PAIRS: dict[str, Callable[..., Pair]] = {**continuous.PAIRS, **discrete.PAIRS}


def _side(name: str, pair: Callable[..., Pair], index: int) -> Callable[..., Var]:
    def side(value: Any, *params: Any) -> Var:
        return pair(value, *params)[index]

    side.__name__ = side.__qualname__ = f"{name}_{('logcdf', 'logccdf')[index]}"
    side.__doc__ = f"{('log P(X <= x)', 'log P(X > x)')[index]} of {name}: {pair.__doc__}"
    return side


LOGCDF: dict[str, Callable[..., Var]] = {n: _side(n, f, 0) for n, f in _PAIRS.items()}
LOGCCDF: dict[str, Callable[..., Var]] = {n: _side(n, f, 1) for n, f in _PAIRS.items()}
ICDF: dict[str, Callable[..., Var]] = {**continuous.QUANTILES, **discrete.QUANTILES}


def _dispatch(caller: str, table: dict[str, Callable[..., Var]], what: str, x: Any, v: Any) -> Var:
    if not is_draw(x):
        raise GraphTypeError(
            f"rl.{caller}: x must be a random variable's draw (such as rr.normal(key)[1]), "
            f"got {x!r}"
        )
    node = x.owner
    name, params = node.op.name, list(node.inputs[2:])
    p = params[0] if params else None
    if name == "bernoulli" and p.owner is not None and isinstance(p.owner.op, Sigmoid):
        name, params = "bernoulli_logit", list(p.owner.inputs)  # exact where sigmoid rounds
    spec = node.op.spec if isinstance(node.op, CustomRV) else None
    if spec is not None and spec.logcdf is not None and table is not ICDF:
        out = as_var(spec.logcdf(v, *params), context=f"{name}: logcdf")  # the author's
        out = out if table is LOGCDF else rt.log1mexp(out)
    elif name not in table:
        raise GraphTypeError(f"rl.{caller}: the {name} draw has no closed-form {what}")
    else:
        out = table[name](v, *params)
    if node.op.size is not None:  # size= may make the draw larger than its parameters
        out = out + rt.zeros(node.inputs[1], dtype=out.dtype)
    return out


def logcdf(x: Var, value: Any) -> Var:
    """log P(X <= value) for the random variable ``x`` (a draw), elementwise.

    The result has the broadcast shape of ``x`` and ``value``; the module docstring gives
    the tails, the support and invalid parameters.

    Raises:
        GraphTypeError: ``x`` is not a draw, or its distribution is not in ``LOGCDF``.

    Example:
        >>> k, x = rr.exponential(rr.key(), 2.0)
        >>> logcdf(x, rt.vector("v")).type.shape
        (None,)
    """
    return _dispatch("logcdf", LOGCDF, "CDF", x, value)


def logccdf(x: Var, value: Any) -> Var:
    """log P(X > value), the log-survival function, for the random variable ``x``.

    Raises:
        GraphTypeError: ``x`` is not a draw, or its distribution is not in ``LOGCCDF``.

    Example:
        >>> k, x = rr.normal(rr.key(), 0.0, 1.0, size=(3,))
        >>> logccdf(x, 40.0).type.shape
        (3,)
    """
    return _dispatch("logccdf", LOGCCDF, "CDF", x, value)


def icdf(x: Var, q: Any) -> Var:
    """The quantile of the random variable ``x`` at probability ``q`` (SciPy's ``ppf``).

    Raises:
        GraphTypeError: ``x`` is not a draw, or its distribution is not in ``ICDF``.

    Example:
        >>> k, x = rr.uniform(rr.key(), 0.0, 4.0)
        >>> icdf(x, 0.25).dtype
        'float64'
    """
    return _dispatch("icdf", ICDF, "quantile function", x, q)
