"""Stable logarithms and exponentials near 0: log1p, expm1, log1mexp."""

from __future__ import annotations

import rewritekit.tensor as rt
from rewritekit.rules.library._stable import REAL, computed, negate, real, same_float, unary_of
from rewritekit.rules.library._support import x
from rewritekit.rules.rule import rule

__all__ = ["rules"]


_log1p_of_negated = computed("log1p(-x)", lambda b: rt.log1p(negate(b.x)))
_neg_expm1 = computed("-expm1(x)", lambda b: -rt.expm1(b.x))

# log1mexp(x) = log(1 - exp(x)): NaN for x > 0 on both sides, -inf at 0.
log1mexp_of_log_one_minus_exp = rule(
    rt.log(1 - rt.exp(x)),
    rt.log1mexp(x),
    name="log1mexp_of_log_one_minus_exp",
    when=unary_of("x"),
    domain=REAL,
)
log1mexp_of_log1p_neg_exp = rule(
    rt.log1p(-rt.exp(x)),
    rt.log1mexp(x),
    name="log1mexp_of_log1p_neg_exp",
    when=real("x"),
    domain=REAL,
)
log1mexp_of_log_neg_expm1 = rule(
    rt.log(-rt.expm1(x)),
    rt.log1mexp(x),
    name="log1mexp_of_log_neg_expm1",
    when=real("x"),
    domain=REAL,
)
neg_expm1_of_one_minus_exp = rule(
    1 - rt.exp(x),
    _neg_expm1,
    name="neg_expm1_of_one_minus_exp",
    when=unary_of("x"),
    domain=REAL,
)
expm1_of_exp_minus_one = rule(
    rt.exp(x) - 1, rt.expm1(x), name="expm1_of_exp_minus_one", when=unary_of("x"), domain=REAL
)
# x < -1: NaN on both sides.
log1p_of_one_plus = rule(
    rt.log(1 + x), rt.log1p(x), name="log1p_of_one_plus", when=same_float("x"), domain=REAL
)
log1p_of_one_minus = rule(
    rt.log(1 - x),
    _log1p_of_negated,
    name="log1p_of_one_minus",
    when=same_float("x"),
    domain=REAL,
)


#: Order is priority at a node (specific forms first).
rules = [
    log1mexp_of_log_one_minus_exp,
    log1mexp_of_log_neg_expm1,
    log1mexp_of_log1p_neg_exp,
    log1p_of_one_plus,
    log1p_of_one_minus,
    expm1_of_exp_minus_one,
    neg_expm1_of_one_minus_exp,
]
