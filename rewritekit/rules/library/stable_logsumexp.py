"""Log-sum-exp and softmax: logsumexp, logaddexp, log1mexp of a difference, log_softmax,
also recognised through the layout Ops (transpose, reshape, indexing, ...) around a sum or
a softmax.

Example:
    >>> x, y, z = rt.vector("x"), rt.vector("y"), rt.vector("z")
    >>> rk.rewrite(rt.log(rt.exp(x) - rt.exp(y))) is x + rt.log1mexp(y - x)
    True
    >>> rk.rewrite(rt.log(rt.exp(x) + rt.exp(y) + rt.exp(z))) is rt.logaddexp(
    ...     rt.logaddexp(x, y), z
    ... )
    True
"""

from __future__ import annotations

from collections.abc import Callable

import rewritekit.tensor as rt
from rewritekit.ir import Var
from rewritekit.rules.library._stable import (
    REAL,
    as_float,
    ax,
    computed,
    guard,
    kd,
    matrix_x,
    real,
    through_layout,
)
from rewritekit.rules.library._support import x, y
from rewritekit.rules.rule import Bindings, rule
from rewritekit.tensor.aggregates import Sum
from rewritekit.tensor.statistics import Softmax
from rewritekit.tensor.transcendental import Exp

__all__ = ["rules"]


_logsumexp = computed(
    "logsumexp(x, axis=ax, keepdims=kd)", lambda b: rt.logsumexp(b.x, axis=b.ax, keepdims=b.kd)
)
_log_softmax = computed("log_softmax(x, axis=ax)", lambda b: rt.log_softmax(b.x, axis=b.ax))
_softmax = computed("softmax(x, axis=ax)", lambda b: rt.softmax(b.x, axis=b.ax))


def _typed(new: Var, b: Bindings) -> Var | None:
    """``new`` where it has the matched node's type, else None (the rule declines)."""
    return new if new.type == b.term.type else None


# An empty or all -inf slice gives -inf on both sides; +inf gives +inf.
logsumexp_of_log_sum_exp = rule(
    rt.log(rt.sum(rt.exp(x), axis=ax, keepdims=kd)),
    _logsumexp,
    name="logsumexp_of_log_sum_exp",
    when=real("x"),
    domain=REAL,
    example=lambda: rt.log(rt.sum(rt.exp(matrix_x()), axis=1, keepdims=True)),
)
logaddexp_of_log_exp_plus_exp = rule(
    rt.log(rt.exp(x) + rt.exp(y)),
    rt.logaddexp(x, y),
    name="logaddexp_of_log_exp_plus_exp",
    when=real("x", "y"),
    domain={"x": "real", "y": "real"},
)


# --- three or more exps added: nested logaddexp -------------------------------------------


def _added_exps(v: Var) -> list[Var] | None:
    """The arguments of the exps that the tree of additions ``v`` adds, left to right; None
    where a leaf is not the exp of a real input."""
    found, stack = [], [v]
    while stack:
        node = stack.pop().owner
        if node is not None and node.op == rt.add:
            stack.extend(reversed(node.inputs))
        elif node is not None and node.op == rt.exp and node.inputs[0].type.kind in "biuf":
            found.append(node.inputs[0])
        else:
            return None
    return found


def _nested_logaddexp(b: Bindings) -> Var | None:
    """logaddexp(...logaddexp(logaddexp(a1, a2), a3)..., an) for log(exp(a1) + ... + exp(an))"""
    terms = [as_float(t) for t in _added_exps(b.term.owner.inputs[0]) or ()]
    if len(terms) < 3:
        return None
    total = terms[0]
    for t in terms[1:]:
        total = rt.logaddexp(total, t)
    return _typed(total, b)


# log(exp(a) + exp(b) + exp(c)): inf at a = b = c = 20000, exact 20000 + log(3). NaN,
# +-inf and all -inf (-inf) are as written: logaddexp is exact there.
logaddexp_of_log_added_exps = rule(
    rt.log(x + y),
    _nested_logaddexp,
    name="logaddexp_of_log_added_exps",
    when=guard(
        "adds_three_exps(x + y)", lambda b: len(_added_exps(b.term.owner.inputs[0]) or ()) >= 3
    ),
    domain={"x": "real", "y": "real", "z": "real"},
    example=lambda: rt.log(
        rt.exp(rt.vector("x")) + rt.exp(rt.vector("y")) + rt.exp(rt.vector("z"))
    ),
)


# --- log(exp(x) - exp(y)): log1mexp -------------------------------------------------------


def _log_diff_exp(b: Bindings) -> Var | None:
    """x + log1mexp(y - x)"""
    xf, yf = as_float(b.x), as_float(b.y)
    return _typed(xf + rt.log1mexp(yf - xf), b)


# log(exp(x) - exp(y)) = x + log(1 - exp(y - x)): nan at (100, 99) in float32 (inf - inf),
# exact 99.5413. As written for x < y (nan), x == y finite (-inf), y = -inf < x (x), x = +inf
# (inf; nan for y = +inf) and x = -inf < y (nan); the one change is x = y = -inf: -inf as
# written (log(0 - 0)), nan here (y - x is -inf + inf). The domain's draws are finite.
log1mexp_of_log_exp_minus_exp = rule(
    rt.log(rt.exp(x) - rt.exp(y)),
    _log_diff_exp,
    name="log1mexp_of_log_exp_minus_exp",
    when=real("x", "y"),
    domain={"x": "real", "y": "real"},
)
# The negated difference, which canonicalize leaves as it is; values as above.
log1mexp_of_log_neg_exp_minus_exp = rule(
    rt.log(-(rt.exp(y) - rt.exp(x))),
    _log_diff_exp,
    name="log1mexp_of_log_neg_exp_minus_exp",
    when=real("x", "y"),
    domain={"x": "real", "y": "real"},
)


# An all -inf slice: softmax is NaN there, and so is log_softmax (-inf - -inf).
log_softmax_of_log_of_softmax = rule(
    rt.log(rt.softmax(x, axis=ax)),
    _log_softmax,
    name="log_softmax_of_log_of_softmax",
    when=real("x"),
    domain=REAL,
    example=lambda: rt.log(rt.softmax(matrix_x(), axis=0)),
)
softmax_of_exp_log_softmax = rule(
    rt.exp(rt.log_softmax(x, axis=ax)),
    _softmax,
    name="softmax_of_exp_log_softmax",
    when=real("x"),
    domain=REAL,
    example=lambda: rt.exp(rt.log_softmax(matrix_x(), axis=1)),
)


# --- through the layout Ops ---------------------------------------------------------------
# An elementwise f commutes with a layout Op S: f(S(u)) = S(f(u)). So sum(S(exp(u))) is
# sum(exp(S(u))): the chain is rebuilt over u, inside the logsumexp, whose axes stay those
# of S(u) (no axis moves); and log(S(r)) is S(log(r)): the chain is rebuilt over the result.


def _peeled(v: Var, op: type) -> tuple[Var, Callable[[Var], Var]] | None:
    """``(w, rebuild)`` with ``v`` = ``rebuild(w)`` (a chain of layout Ops, possibly none)
    and ``w`` an ``op`` node over a real input; None otherwise."""
    w, rebuild = through_layout(v)
    node = w.owner
    if node is None or not isinstance(node.op, op) or node.inputs[0].type.kind not in "biuf":
        return None
    return w, rebuild


def _layout_over(v: Var, op: type) -> bool:
    """``v`` is a chain of at least one layout Op over an ``op`` node of a real input."""
    found = _peeled(v, op)
    return found is not None and found[0] is not v


def _sum_of_exp(s: Var) -> bool:
    """``s`` is sum(T(exp(u))), for a layout chain T (possibly none) and a real u."""
    return isinstance(s.owner.op, Sum) and _peeled(s.owner.inputs[0], Exp) is not None


def _logsumexp_of_sum(s: Var) -> Var:
    """logsumexp(T(u), axis, keepdims) for s = sum(T(exp(u)), axis, keepdims)"""
    e, rebuild = _peeled(s.owner.inputs[0], Exp)
    op = s.owner.op
    return rt.logsumexp(rebuild(e.owner.inputs[0]), axis=op.axis, keepdims=op.keepdims)


def _log_layout_sum_exp(b: Bindings) -> Var | None:
    """S(logsumexp(T(u), axis, keepdims)) for x = S(sum(T(exp(u)), axis, keepdims))"""
    s, rebuild = through_layout(b.x)
    return _typed(rebuild(_logsumexp_of_sum(s)), b)


def _log_layout_softmax(b: Bindings) -> Var | None:
    """S(log_softmax(u, axis)) for x = S(softmax(u, axis))"""
    w, rebuild = through_layout(b.x)
    return _typed(rebuild(rt.log_softmax(w.owner.inputs[0], axis=w.owner.op.axis)), b)


def _matrix_u() -> Var:
    return rt.matrix("u", shape=(2, 3))


# log(sum(transpose(exp(u)), axis=0)): inf at u = 1000 as written; values otherwise as
# logsumexp_of_log_sum_exp's.
logsumexp_of_log_sum_layout_exp = rule(
    rt.log(rt.sum(x, axis=ax, keepdims=kd)),
    computed(
        "logsumexp(T(u), axis=ax, keepdims=kd) for x = T(exp(u))",
        lambda b: _typed(_logsumexp_of_sum(b.term.owner.inputs[0]), b),
    ),
    name="logsumexp_of_log_sum_layout_exp",
    when=guard("layout_over_exp(x)", lambda b: _layout_over(b.x, Exp)),
    domain={"u": "real"},
    example=lambda: rt.log(rt.sum(rt.transpose(rt.exp(_matrix_u())), axis=0)),
)
logsumexp_of_log_layout_sum_exp = rule(
    rt.log(x),
    _log_layout_sum_exp,
    name="logsumexp_of_log_layout_sum_exp",
    when=guard(
        "layout_over_sum_exp(x)",
        lambda b: _layout_over(b.x, Sum) and _sum_of_exp(through_layout(b.x)[0]),
    ),
    domain={"u": "real"},
    example=lambda: rt.log(rt.expand_dims(rt.sum(rt.exp(_matrix_u()), axis=1), 0)),
)
# log(softmax(x)[0]): -inf at x = [0, 1010] as written (exp(-1010) underflows), exact
# -1010. An all -inf slice: nan on both sides.
log_softmax_of_log_layout_softmax = rule(
    rt.log(x),
    _log_layout_softmax,
    name="log_softmax_of_log_layout_softmax",
    when=guard("layout_over_softmax(x)", lambda b: _layout_over(b.x, Softmax)),
    domain={"u": "real"},
    example=lambda: rt.log(rt.softmax(_matrix_u(), axis=1)[0]),
)


#: Order is priority at a node (specific forms first).
rules = [
    logsumexp_of_log_sum_exp,
    logaddexp_of_log_exp_plus_exp,
    logaddexp_of_log_added_exps,
    log1mexp_of_log_exp_minus_exp,
    log1mexp_of_log_neg_exp_minus_exp,
    log_softmax_of_log_of_softmax,
    softmax_of_exp_log_softmax,
    logsumexp_of_log_sum_layout_exp,
    logsumexp_of_log_layout_sum_exp,
    log_softmax_of_log_layout_softmax,
]
