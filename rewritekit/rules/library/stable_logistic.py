"""The logistic family: sigmoid and softplus recognised in their spelled-out forms, in
products with exponentials, and through the layout Ops (reshape, transpose, indexing, ...)
that sit between a sigmoid and the function of it.

Example:
    >>> x = rt.vector("x")
    >>> rk.rewrite(rt.exp(x) / (1 + rt.exp(x))) is rt.sigmoid(x)
    True
"""

from __future__ import annotations

from collections.abc import Callable

import rewritekit.tensor as rt
from rewritekit.ir import Var
from rewritekit.rules.library._stable import (
    REAL,
    as_float,
    computed,
    guard,
    in_dtype,
    negate,
    real,
    same_float,
    through_layout,
    unary_of,
    widening_unary_of,
)
from rewritekit.rules.library._support import factors_may_hold, product_factors, x, y
from rewritekit.rules.rule import Bindings, order_free, rule

__all__ = ["rules"]


_neg_softplus_of_negated = computed("-softplus(-x)", lambda b: -rt.softplus(negate(as_float(b.x))))
_neg_softplus = computed("-softplus(x)", lambda b: -rt.softplus(b.x))
_sigmoid_of_negated = computed("sigmoid(-x)", lambda b: rt.sigmoid(negate(as_float(b.x))))
_sigmoid_of_negated_cast = computed(
    "sigmoid(-x) (in the node's dtype)", lambda b: in_dtype(rt.sigmoid(negate(as_float(b.x))), b)
)

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
# A float64 1.0 minus a float32 sigmoid: the float32 sigmoid(-x), cast up.
sigmoid_of_one_minus_sigmoid = rule(
    1 - rt.sigmoid(x),
    _sigmoid_of_negated_cast,
    name="sigmoid_of_one_minus_sigmoid",
    when=widening_unary_of("x"),
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

# exp(x) / (1 + exp(x)): nan at x = 800 (inf / inf), sigmoid(800) = 1.
sigmoid_of_exp_over_one_plus_exp = rule(
    rt.exp(x) / (1 + rt.exp(x)),
    rt.sigmoid(x),
    name="sigmoid_of_exp_over_one_plus_exp",
    when=unary_of("x"),
    domain=REAL,
)
# log(sigmoid(x) / (1 - sigmoid(x))) is the logit of the sigmoid: x (1 - sigmoid(x) is
# sigmoid(-x) by the time this node is seen). inf at x = 40 in the naive form.
logit_of_sigmoid = rule(
    rt.log(rt.sigmoid(x) / rt.sigmoid(-x)),
    computed("x", lambda b: as_float(b.x)),
    name="logit_of_sigmoid",
    when=unary_of("x"),
    domain=REAL,
)
logit_of_sigmoid_negated = rule(
    rt.log(rt.sigmoid(-x) / rt.sigmoid(x)),
    computed("-x", lambda b: negate(as_float(b.x))),
    name="logit_of_sigmoid_negated",
    when=unary_of("x"),
    domain=REAL,
)


# --- sigmoids in products with exponentials -----------------------------------------------


def _argument(v: Var, op: object) -> Var | None:
    return v.owner.inputs[0] if v.owner is not None and v.owner.op == op else None


@order_free
def _sigmoid_times_exp(b: Bindings) -> Var | None:
    """the product with one pair exp(u) * sigmoid(-u) as sigmoid(u)

    exp(u) * sigmoid(-u) = exp(u) / (1 + exp(u)) = sigmoid(u): inf * 0 (nan) at u = 800 in
    the naive form. The other factors keep their order; declines without such a pair.
    """
    factors = product_factors(b.term)
    for i, f in enumerate(factors):
        u = _argument(f, rt.exp)
        if u is None or u.type.kind != "f":
            continue
        minus_u = negate(u)
        for j, g in enumerate(factors):
            if j != i and _argument(g, rt.sigmoid) is minus_u:
                kept = [h for k, h in enumerate(factors) if k != j]
                kept[kept.index(f)] = rt.sigmoid(u)
                product = kept[0]
                for h in kept[1:]:
                    product = product * h
                return product if product.type == b.term.type else None
    return None


def _product_example(u: Var) -> Var:
    return (rt.vector("x") * rt.sigmoid(-u)) * rt.exp(u)


sigmoid_of_sigmoid_times_exp = rule(
    x * y,
    _sigmoid_times_exp,
    name="sigmoid_of_sigmoid_times_exp",
    when=order_free(real("x", "y")),
    domain={"x": "real", "u": "real"},
    example=lambda: _product_example(rt.vector("u")),
)
sigmoid_of_sigmoid_times_exp.child_test = factors_may_hold((rt.exp,), (rt.sigmoid,))


# --- through the layout Ops ---------------------------------------------------------------


def _through(build: Callable[[Var], Var], text: str) -> Callable[[Bindings], Var | None]:
    """A right side: ``build(u)`` under the layout chain, where the bound ``x`` is that
    chain (at least one Op) over ``sigmoid(u)``; declines otherwise."""

    def through(b: Bindings) -> Var | None:
        inner, rebuild = through_layout(b.x)
        u = _argument(inner, rt.sigmoid)
        if inner is b.x or u is None:
            return None
        new = rebuild(build(as_float(u)))
        return new if new.type == b.term.type else None

    through.__doc__ = text
    return through


def _layout_example(f: Callable[[Var], Var]) -> Callable[[], Var]:
    return lambda: f(rt.reshape(rt.sigmoid(rt.matrix("u", shape=(2, 3))), (6,)))


_sigmoid_under_layout = guard(
    "layout_over_sigmoid(x)",
    lambda b: b.x.owner is not None and _argument(through_layout(b.x)[0], rt.sigmoid) is not None,
)
sigmoid_of_one_minus_layout_sigmoid = rule(
    1 - x,
    _through(lambda u: rt.sigmoid(negate(u)), "S(sigmoid(-u)) for x = S(sigmoid(u))"),
    name="sigmoid_of_one_minus_layout_sigmoid",
    when=_sigmoid_under_layout,
    domain={"u": "real"},
    example=_layout_example(lambda v: 1 - v),
)
softplus_of_log_layout_sigmoid = rule(
    rt.log(x),
    _through(lambda u: -rt.softplus(negate(u)), "S(-softplus(-u)) for x = S(sigmoid(u))"),
    name="softplus_of_log_layout_sigmoid",
    when=_sigmoid_under_layout,
    domain={"u": "real"},
    example=_layout_example(rt.log),
)
softplus_of_log1p_neg_layout_sigmoid = rule(
    rt.log1p(-x),
    _through(lambda u: -rt.softplus(u), "S(-softplus(u)) for x = S(sigmoid(u))"),
    name="softplus_of_log1p_neg_layout_sigmoid",
    when=_sigmoid_under_layout,
    domain={"u": "real"},
    example=_layout_example(lambda v: rt.log1p(-v)),
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
    sigmoid_of_exp_over_one_plus_exp,
    logit_of_sigmoid,
    logit_of_sigmoid_negated,
    sigmoid_of_sigmoid_times_exp,
    sigmoid_of_one_minus_layout_sigmoid,
    softplus_of_log_layout_sigmoid,
    softplus_of_log1p_neg_layout_sigmoid,
]
