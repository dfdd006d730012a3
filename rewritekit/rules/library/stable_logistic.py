"""The logistic family: sigmoid and softplus recognised in their spelled-out forms."""

from __future__ import annotations

import rewritekit.tensor as rt
from rewritekit.rules.library._stable import (
    REAL,
    as_float,
    computed,
    negate,
    real,
    same_float,
    unary_of,
)
from rewritekit.rules.library._support import x
from rewritekit.rules.rule import rule

__all__ = ["rules"]


_neg_softplus_of_negated = computed("-softplus(-x)", lambda b: -rt.softplus(negate(as_float(b.x))))
_neg_softplus = computed("-softplus(x)", lambda b: -rt.softplus(b.x))
_sigmoid_of_negated = computed("sigmoid(-x)", lambda b: rt.sigmoid(negate(as_float(b.x))))

softplus_of_log_one_plus_exp = rule(
    rt.log(1 + rt.exp(x)),
    rt.softplus(x),
    name="softplus_of_log_one_plus_exp",
    when=unary_of("x"),
    domain=REAL,
)
softplus_of_log1p_exp = rule(
    rt.log1p(rt.exp(x)), rt.softplus(x), name="softplus_of_log1p_exp", when=real("x"), domain=REAL
)
softplus_of_log_sigmoid = rule(
    rt.log(rt.sigmoid(x)),
    _neg_softplus_of_negated,
    name="softplus_of_log_sigmoid",
    when=real("x"),
    domain=REAL,
)
softplus_of_log_one_minus_sigmoid = rule(
    rt.log(1 - rt.sigmoid(x)),
    _neg_softplus,
    name="softplus_of_log_one_minus_sigmoid",
    when=unary_of("x"),
    domain=REAL,
)
softplus_of_log1p_neg_sigmoid = rule(
    rt.log1p(-rt.sigmoid(x)),
    _neg_softplus,
    name="softplus_of_log1p_neg_sigmoid",
    when=real("x"),
    domain=REAL,
)
sigmoid_of_one_minus_sigmoid = rule(
    1 - rt.sigmoid(x),
    _sigmoid_of_negated,
    name="sigmoid_of_one_minus_sigmoid",
    when=unary_of("x"),
    domain=REAL,
)
sigmoid_of_logistic_form = rule(
    1 / (1 + rt.exp(-x)),
    rt.sigmoid(x),
    name="sigmoid_of_logistic_form",
    when=same_float("x"),
    domain=REAL,
)
sigmoid_of_reciprocal_logistic_form = rule(
    rt.reciprocal(1 + rt.exp(-x)),
    rt.sigmoid(x),
    name="sigmoid_of_reciprocal_logistic_form",
    when=same_float("x"),
    domain=REAL,
)
sigmoid_of_negated_logistic_form = rule(
    1 / (1 + rt.exp(x)),
    _sigmoid_of_negated,
    name="sigmoid_of_negated_logistic_form",
    when=unary_of("x"),
    domain=REAL,
)


#: Order is priority at a node (specific forms first).
rules = [
    softplus_of_log_one_plus_exp,
    softplus_of_log_one_minus_sigmoid,
    softplus_of_log1p_exp,
    softplus_of_log1p_neg_sigmoid,
    softplus_of_log_sigmoid,
    sigmoid_of_one_minus_sigmoid,
    sigmoid_of_logistic_form,
    sigmoid_of_reciprocal_logistic_form,
    sigmoid_of_negated_logistic_form,
]
