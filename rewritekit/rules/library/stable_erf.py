"""The error function: erfc for 1 - erf, and log(erfc(x)) past erfc's underflow."""

from __future__ import annotations

import math

import numpy as np

import rewritekit.tensor as rt
from rewritekit.ir import Var
from rewritekit.rules.library._stable import REAL, as_float, computed, negate, real, unary_of
from rewritekit.rules.library._support import constant_value, x
from rewritekit.rules.rule import Bindings, rule

__all__ = ["rules"]


_erfc_of_negated = computed("erfc(-x)", lambda b: rt.erfc(negate(as_float(b.x))))

#: Where log(erfc(x)) switches to its asymptotic series, by dtype: erfc is accurate below
#: (it underflows near 26.5 in float64, 9.2 in float32, 3.9 in float16), and the series'
#: ten terms are exact to rounding above (relative error 2e-16 in float64 at 10, against
#: log(scipy.special.erfcx(x)) - x**2).
_LOG_ERFC_SWITCH = {"float16": 3.0, "float32": 5.0, "float64": 10.0}
_LOG_SQRT_PI = 0.5 * math.log(math.pi)
_SERIES_TERMS = 10


def _at_most(v: Var, bound: float) -> bool:
    """``v`` is known to be at most ``bound`` (NaN aside): a constant, a ``minimum`` or
    ``clip`` bounded so, or a clamp such as ``where(u < c, u, c)`` (what ``_log_erfc``
    builds; ``u > c``, ``<=`` and ``>=`` are recognised too)."""
    value = constant_value(v)
    if value is not None:
        return bool(np.all(value <= bound))
    node = v.owner
    if node is None:
        return False
    if node.op == rt.minimum:
        return any(_at_most(i, bound) for i in node.inputs)
    if node.op == rt.clip:
        return _at_most(node.inputs[2], bound)
    if node.op == rt.where:
        cond, then, other = node.inputs
        if _picks_smaller(cond, then, other):
            return _at_most(then, bound) or _at_most(other, bound)
        return _at_most(then, bound) and _at_most(other, bound)
    return False


def _picks_smaller(cond: Var, then: Var, other: Var) -> bool:
    """``where(cond, then, other)`` is ``minimum(then, other)``: cond is ``then < other``
    (or ``other > then``, or the same with ``<=``, ``>=``)."""
    node = cond.owner
    if node is None:
        return False
    if node.op == rt.less or node.op == rt.less_equal:
        return node.inputs[0] is then and node.inputs[1] is other
    if node.op == rt.greater or node.op == rt.greater_equal:
        return node.inputs[0] is other and node.inputs[1] is then
    return False


def _log_erfc_tail(v: Var) -> Var:
    """log(erfc(v)) for large v: -v**2 - log(v) - log(pi)/2 + log1p(s), with s the
    asymptotic series sum_n (-1)**n (2n-1)!! / (2 v**2)**n, nested so that every
    coefficient is small (float16 holds them): s = -(1 - 3u (1 - 5u (1 - ...))) u with
    u = 1 / (2 v**2), written as canonicalize leaves it ((2n-1) u as (n - 1/2) / v**2)."""
    v2 = rt.square(v)
    nested = 1 - (_SERIES_TERMS - 0.5) / v2
    for n in range(_SERIES_TERMS - 1, 1, -1):
        nested = 1 - (n - 0.5) / v2 * nested
    return -v2 - rt.log(v) - _LOG_SQRT_PI + rt.log1p((-0.5 * nested) / v2)


def _log_erfc(b: Bindings) -> Var | None:
    """where(x < t, log(erfc(x)), asymptotic series of log(erfc(x)))

    Each branch is fed only the inputs it is valid for (x clamped to t: the double-where
    trick), so neither warns nor gives NaN gradients where unused. Declines when erfc
    cannot underflow (x is known to be at most t), which also stops the rule on its own
    output.
    """
    v = as_float(b.x)
    switch = _LOG_ERFC_SWITCH.get(v.dtype, _LOG_ERFC_SWITCH["float64"])
    if _at_most(v, switch):
        return None
    below = v < switch
    small = rt.where(below, v, switch)
    large = rt.where(below, switch, v)
    return rt.where(below, rt.log(rt.erfc(small)), _log_erfc_tail(large))


def _erfc_range(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    """Inputs where erfc does not underflow in float64, on both sides of the switch."""
    return rng.uniform(-4.0, 25.0, size=shape)


erfc_of_one_minus_erf = rule(
    1 - rt.erf(x), rt.erfc(x), name="erfc_of_one_minus_erf", when=unary_of("x"), domain=REAL
)
erfc_of_one_plus_erf = rule(
    1 + rt.erf(x),
    _erfc_of_negated,
    name="erfc_of_one_plus_erf",
    when=unary_of("x"),
    domain=REAL,
)
log_erfc_asymptotic = rule(
    rt.log(rt.erfc(x)),
    _log_erfc,
    name="log_erfc_asymptotic",
    when=real("x"),
    domain={"x": _erfc_range},
)


#: Order is priority at a node (specific forms first).
rules = [
    erfc_of_one_minus_erf,
    erfc_of_one_plus_erf,
    log_erfc_asymptotic,
]
