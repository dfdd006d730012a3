"""Log-sum-exp and softmax: logsumexp, logaddexp, log_softmax."""

from __future__ import annotations

import rewritekit.tensor as rt
from rewritekit.rules.library._stable import REAL, ax, computed, kd, matrix_x, real
from rewritekit.rules.library._support import x, y
from rewritekit.rules.rule import rule

__all__ = ["rules"]


_logsumexp = computed(
    "logsumexp(x, axis=ax, keepdims=kd)", lambda b: rt.logsumexp(b.x, axis=b.ax, keepdims=b.kd)
)
_log_softmax = computed("log_softmax(x, axis=ax)", lambda b: rt.log_softmax(b.x, axis=b.ax))
_softmax = computed("softmax(x, axis=ax)", lambda b: rt.softmax(b.x, axis=b.ax))


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


#: Order is priority at a node (specific forms first).
rules = [
    logsumexp_of_log_sum_exp,
    logaddexp_of_log_exp_plus_exp,
    log_softmax_of_log_of_softmax,
    softmax_of_exp_log_softmax,
]
