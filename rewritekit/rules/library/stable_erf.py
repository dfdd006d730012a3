"""The error function: erfc for 1 - erf and erf for 1 - erfc (where one of them is tiny),
erfcx for exp(-x**2) / erfc(x), and log(erfc(x)) past erfc's underflow."""

from __future__ import annotations

import functools
import math
import operator

import numpy as np

import rewritekit.tensor as rt
from rewritekit.ir import Var
from rewritekit.rules.library._stable import (
    REAL,
    as_float,
    computed,
    negate,
    real,
    same_float,
    squared,
    unary_of,
)
from rewritekit.rules.library._support import (
    constant_value,
    factors_may_hold,
    product_factors,
    x,
    y,
    z,
)
from rewritekit.rules.rule import Bindings, order_free, rule

__all__ = ["rules"]


_erfc_of_negated = computed("erfc(-x)", lambda b: rt.erfc(negate(as_float(b.x))))
_neg_erfc = computed("-erfc(x)", lambda b: -rt.erfc(b.x))

#: Where log(erfc(x)) switches to its asymptotic series, by dtype, and how many terms the
#: series takes there. erfc is accurate below the switch (log(erfc(x)) within 2.1e-16 of
#: log(erfcx(x)) - x**2 up to 26.4 in float64 under JAX and SciPy, 1.1e-7 up to 9.1 in
#: float32; erfc underflows near 26.5, 9.2 and 3.9 in float16). Above it the series is
#: exact to rounding with these few terms (float64: 1.8e-16 from 25 up, the rounding
#: error of ten terms too; the error of n terms is about (2n+1)!! / (2 x**2)**(n+1) / x**2).
#: Fewer terms are fewer operations in every step of a chain and of its gradient.
_LOG_ERFC_SWITCH = {"float16": 3.0, "float32": 9.0, "float64": 25.0}
_SERIES_TERMS = {"float16": 4, "float32": 3, "float64": 5}
_LOG_SQRT_PI = 0.5 * math.log(math.pi)


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


def _log_erfc_tail(v: Var, terms: int) -> Var:
    """log(erfc(v)) for large v: -v**2 - log(v) - log(pi)/2 + log1p(s), with s the
    asymptotic series sum_n (-1)**n (2n-1)!! / (2 v**2)**n, nested so that every
    coefficient is small (float16 holds them): s = -(1 - 3u (1 - 5u (1 - ...))) u with
    u = 1 / (2 v**2), written as canonicalize leaves it ((2n-1) u as (n - 1/2) / v**2);
    ``terms`` of them."""
    v2 = rt.square(v)
    nested = 1 - (terms - 0.5) / v2
    for n in range(terms - 1, 1, -1):
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
    dtype = v.dtype if v.dtype in _LOG_ERFC_SWITCH else "float64"
    switch = _LOG_ERFC_SWITCH[dtype]
    if _at_most(v, switch):
        return None
    below = v < switch
    small = rt.where(below, v, switch)
    large = rt.where(below, switch, v)
    return rt.where(below, rt.log(rt.erfc(small)), _log_erfc_tail(large, _SERIES_TERMS[dtype]))


# --- exp(-x**2) / erfc(x) as 1 / erfcx(x) ------------------------------------------------


def _argument(v: Var, op: object) -> Var | None:
    return v.owner.inputs[0] if v.owner is not None and v.owner.op == op else None


def _product(factors: list[Var]) -> Var:
    return functools.reduce(operator.mul, factors)


def _gaussian_argument(v: Var) -> Var | None:
    """``u`` where ``v`` is exp(-u**2), written ``exp(-square(u))`` (what canonicalize and
    specialize leave of ``exp(-u**2)``), ``exp(-(u * u))`` or ``exp(-(u ** 2))``, for a
    float ``u`` (``squared``)."""
    power = _argument(v, rt.exp)
    power = None if power is None else _argument(power, rt.negative)
    return None if power is None else squared(power)


def _scaled(denominator: Var, u: Var) -> Var | None:
    """``denominator`` with its factor ``erfc(u)`` as ``erfcx(u)``; None without one."""
    factors = product_factors(denominator)
    for i, f in enumerate(factors):
        if _argument(f, rt.erfc) is u:
            return _product([rt.erfcx(u) if k == i else h for k, h in enumerate(factors)])
    return None


def _erfcx_quotient(b: Bindings) -> Var | None:
    """c / (d * erfcx(u)) for y = c * exp(-u**2) and z = d * erfc(u)

    c and d are the other factors (none: 1 / erfcx(u)), in their order. exp(-u**2) and
    erfc(u) both underflow past u = 26.5 (float64), where the quotient is 0 / 0.
    """
    numerator = product_factors(b.y)
    for i, f in enumerate(numerator):
        u = _gaussian_argument(f)
        denominator = None if u is None else _scaled(b.z, u)
        if denominator is not None:
            rest = numerator[:i] + numerator[i + 1 :]
            new = (_product(rest) if rest else 1) / denominator
            return new if new.type == b.term.type else None
    return None


def _over_erfcx(v: Var, u: Var) -> Var | None:
    """``v`` = ``n / (d * erfc(u))`` or ``reciprocal(d * erfc(u))`` with erfcx(u) for
    erfc(u); None for anything else."""
    node = v.owner
    if node is not None and node.op == rt.true_divide:
        denominator = _scaled(node.inputs[1], u)
        return None if denominator is None else node.inputs[0] / denominator
    if node is not None and node.op == rt.reciprocal:
        denominator = _scaled(node.inputs[0], u)
        return None if denominator is None else rt.reciprocal(denominator)
    return None


@order_free
def _erfcx_product(b: Bindings) -> Var | None:
    """the product with factors exp(-u**2) and n / (d * erfc(u)) as n / (d * erfcx(u))

    The other factors keep their order; ``reciprocal(d * erfc(u))`` is taken too. This is
    the form of the derivative of log(erfc(u)): g / erfc(u) * (-2/sqrt(pi)) * exp(-u**2).
    """
    factors = product_factors(b.term)
    for i, f in enumerate(factors):
        u = _gaussian_argument(f)
        if u is None:
            continue
        for j, h in enumerate(factors):
            scaled = None if j == i else _over_erfcx(h, u)
            if scaled is not None:
                kept = [scaled if k == j else q for k, q in enumerate(factors) if k != i]
                new = _product(kept)
                return new if new.type == b.term.type else None
    return None


def _erfc_range(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    """Inputs where erfc does not underflow in float64, on both sides of the switch."""
    return rng.uniform(-4.0, 25.0, size=shape)


def _quotient_example() -> Var:
    u = rt.vector("u")
    return (rt.vector("c") * rt.exp(-rt.square(u))) / rt.erfc(u)


def _product_example() -> Var:
    u = rt.vector("u")
    return (rt.vector("c") / rt.erfc(u)) * rt.exp(-(u * u))


_ERFCX_DOMAIN = {"u": _erfc_range, "c": "real"}


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
# erf(x) - 1 at x = 10: 0.0 in the naive form, -2.09e-45 as -erfc(x).
neg_erfc_of_erf_minus_one = rule(
    rt.erf(x) - 1, _neg_erfc, name="neg_erfc_of_erf_minus_one", when=unary_of("x"), domain=REAL
)
neg_erfc_of_erf_plus_minus_one = rule(
    rt.erf(x) + -1,
    _neg_erfc,
    name="neg_erfc_of_erf_plus_minus_one",
    when=unary_of("x"),
    domain=REAL,
)
# 1 - erfc(x) at x = 1e-20: 0.0 in the naive form, 1.128e-20 as erf(x).
erf_of_one_minus_erfc = rule(
    1 - rt.erfc(x), rt.erf(x), name="erf_of_one_minus_erfc", when=unary_of("x"), domain=REAL
)
erf_of_erfc_neg_minus_one = rule(
    rt.erfc(-x) - 1,
    rt.erf(x),
    name="erf_of_erfc_neg_minus_one",
    when=same_float("x"),
    domain=REAL,
)
erf_of_erfc_neg_plus_minus_one = rule(
    rt.erfc(-x) + -1,
    rt.erf(x),
    name="erf_of_erfc_neg_plus_minus_one",
    when=same_float("x"),
    domain=REAL,
)
# c * exp(-x**2) / erfc(x) at x = 30: nan (0 / 0) in the naive form, c / erfcx(x) finite.
erfcx_of_exp_over_erfc = rule(
    y / z,
    _erfcx_quotient,
    name="erfcx_of_exp_over_erfc",
    when=real("y", "z"),
    domain=_ERFCX_DOMAIN,
    example=_quotient_example,
)
erfcx_of_exp_times_over_erfc = rule(
    y * z,
    _erfcx_product,
    name="erfcx_of_exp_times_over_erfc",
    when=order_free(real("y", "z")),
    domain=_ERFCX_DOMAIN,
    example=_product_example,
)
erfcx_of_exp_times_over_erfc.child_test = factors_may_hold(
    (rt.exp,), (rt.true_divide, rt.reciprocal)
)
erfcx_of_exp_over_erfc.child_test = lambda ops: (  # c * exp(-u**2) over d * erfc(u)
    ops[0] in (rt.multiply, rt.exp) and ops[1] in (rt.multiply, rt.erfc)
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
    neg_erfc_of_erf_minus_one,
    neg_erfc_of_erf_plus_minus_one,
    erf_of_one_minus_erfc,
    erf_of_erfc_neg_minus_one,
    erf_of_erfc_neg_plus_minus_one,
    erfcx_of_exp_over_erfc,
    erfcx_of_exp_times_over_erfc,
    log_erfc_asymptotic,
]
