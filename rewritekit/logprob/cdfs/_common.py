"""What the CDFs share: the dtype rule, the two sides of a probability in log space."""

from __future__ import annotations

import math
from typing import Any

import rewritekit.tensor as rt
from rewritekit.ir import Var
from rewritekit.logprob.densities._common import _is_probability

_LOG_HALF = math.log(0.5)
_LOG_2 = math.log(2.0)
_SQRT_HALF = math.sqrt(0.5)
_INF = math.inf
Pair = tuple[Var, Var]


# --- helpers -----------------------------------------------------------------------------


def _all(*conditions: Var) -> Var | bool:
    ok: Var | bool = True
    for condition in conditions:
        ok = condition if ok is True else rt.logical_and(ok, condition)
    return ok


def _finish(lc: Var, lu: Var, below: Var, above: Var, *valid: Var) -> Pair:
    """(logcdf, logccdf): the CDF 0 below the support and 1 above, NaN where a parameter
    is invalid (SciPy's value)."""
    lc = rt.where(below, -_INF, rt.where(above, 0.0, lc))
    lu = rt.where(below, 0.0, rt.where(above, -_INF, lu))
    return _on_the_line(lc, lu, *valid)


def _on_the_line(lc: Var, lu: Var, *valid: Var) -> Pair:
    """(logcdf, logccdf) of a distribution on the whole line: NaN where a parameter is
    invalid (SciPy's value)."""
    ok = _all(*valid)
    return rt.where(ok, lc, math.nan), rt.where(ok, lu, math.nan)


def _log_sides(cdf: Var, ccdf: Var) -> Pair:
    """(log cdf, log ccdf) from both probabilities: the log of the side below 1/2, the
    other as ``log1p(-side)``. The branch a ``where`` discards sees a safe 1/2, so no
    ``log(0)`` or ``log1p(-1)`` reaches a value or a gradient."""
    low = cdf < 0.5
    safe_cdf, safe_ccdf = rt.where(low, cdf, 0.5), rt.where(low, 0.5, ccdf)
    log_cdf = rt.where(low, rt.log(safe_cdf), rt.log1p(-safe_ccdf))
    log_ccdf = rt.where(low, rt.log1p(-safe_cdf), rt.log(safe_ccdf))
    return log_cdf, log_ccdf


def _from_logs(lc: Var, lu: Var) -> Pair:
    """(logcdf, logccdf) from two logs each exact where it is below log(1/2): the other
    side there is ``log1mexp`` of it (the discarded branch sees a safe -1)."""
    lc_small, lu_small = lc < _LOG_HALF, lu < _LOG_HALF
    return (
        rt.where(lc_small, lc, rt.log1mexp(rt.where(lc_small, -1.0, lu))),
        rt.where(lu_small, lu, rt.log1mexp(rt.where(lu_small, -1.0, lc))),
    )


def _log_diff_exp(x: Var, y: Var) -> Var:
    """log(exp(x) - exp(y)) for y <= x (-inf where they are equal)."""
    return x + rt.log1mexp(rt.minimum(y - x, 0.0))


def _inside(value: Var, safe: Any, *conditions: Var) -> Var:
    """``value`` where every condition holds, else ``safe``: the double-where's safe
    input, for a branch that a later ``where`` discards outside the support."""
    return rt.where(_all(*conditions), value, safe)


def _quantile(out: Var, q: Var, *valid: Var) -> Var:
    return rt.where(_all(_is_probability(q), *valid), out, math.nan)
