"""What the log-densities share: the dtype rule, the support checks, stable pieces."""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

import rewritekit.tensor as rt
from rewritekit.errors import DTypeError, ShapeError
from rewritekit.ir import Var

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)
_LOG_2 = math.log(2)
_LOG_2PI = math.log(2 * math.pi)
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
