"""xlogy, log-determinants and the log of a product."""

from __future__ import annotations

import numpy as np

import rewritekit.tensor as rt
from rewritekit.ir import Var
from rewritekit.rules.library._stable import REAL, as_float, ax, computed, kd, m, matrix_x, real
from rewritekit.rules.library._support import constant_value, x, y
from rewritekit.rules.rule import Bindings, rule
from rewritekit.tensor.linalg import Cholesky, ExtractDiag

__all__ = ["rules"]


def _xlogy(b: Bindings) -> Var | None:
    """xlogy(x, y) (declines where it would change the dtype)"""
    new = rt.xlogy(b.x, b.y)
    return new if new.type == b.term.type else None


def _xlogy_applies(b: Bindings) -> bool:
    """x and y are real, and x may be 0 (xlogy's gain): a constant x without zeros is left
    as x * log(y)."""
    value = constant_value(b.x)
    may_be_zero = value is None or not np.all(value != 0)
    return may_be_zero and real("x", "y")(b)


def _log_det(b: Bindings) -> Var:
    """where(sign < 0, nan, logabsdet) with (sign, logabsdet) = slogdet(m)

    log of a negative determinant is NaN; a singular matrix gives sign 0 and -inf.
    """
    sign, logabsdet = rt.linalg.slogdet(b.m)
    return rt.where(sign < 0, np.nan, logabsdet)


_logabsdet = computed("slogdet(m)[1]", lambda b: rt.linalg.slogdet(b.m)[1])

#: Ops whose results are never negative (NaN aside): log(prod(x)) = sum(log(x)) for them.
_NONNEGATIVE = (
    rt.exp,
    rt.exp2,
    rt.abs,
    rt.square,
    rt.sqrt,
    rt.sigmoid,
    rt.softplus,
    rt.erfc,
    rt.erfcx,
)


def _nonnegative(v: Var) -> bool:
    """``v`` is known to be >= 0 (NaN aside): a constant, or a result of ``_NONNEGATIVE``
    or of a Cholesky factor's diagonal."""
    value = constant_value(v)
    if value is not None:
        return bool(np.all(value >= 0))
    node = v.owner
    if node is None:
        return False
    if isinstance(node.op, ExtractDiag) and node.op.k == 0:  # a Cholesky factor's diagonal
        source = node.inputs[0].owner  # is positive: specialize's det(cholesky(a)) form
        return source is not None and isinstance(source.op, Cholesky)
    return any(node.op == op for op in _NONNEGATIVE)


def _sum_log(b: Bindings) -> Var:
    """where(prod(sign(x)) < 0, nan, sum(log(abs(x)))), or sum(log(x)) for x >= 0

    The product of the signs keeps log's NaN for a negative product, and the value of a
    positive one with negative elements (where sum(log(x)) alone would be NaN); a zero
    element gives -inf, NaN stays NaN. Integers and bools are taken as float64 first.
    """
    v = as_float(b.x)
    if _nonnegative(v):
        return rt.sum(rt.log(v), axis=b.ax, keepdims=b.kd)
    logs = rt.sum(rt.log(rt.abs(v)), axis=b.ax, keepdims=b.kd)
    return rt.where(rt.prod(rt.sign(v), axis=b.ax, keepdims=b.kd) < 0, np.nan, logs)


# xlogy(0, y) is 0 for every y but NaN, where 0 * log(y) is NaN at y = 0 and y = inf: a
# deliberate change (the limit, as SciPy's xlogy). Elsewhere the values are equal.
xlogy_of_x_log_y = rule(
    x * rt.log(y),
    _xlogy,
    name="xlogy_of_x_log_y",
    when=_xlogy_applies,
    domain={"x": "real", "y": "positive"},
)
slogdet_of_log_det = rule(
    rt.log(rt.linalg.det(m)),
    _log_det,
    name="slogdet_of_log_det",
    when=real("m"),
    domain={"m": "real"},
    example=lambda: rt.log(rt.linalg.det(rt.tensor("m", shape=(2, 3, 3)))),
)
slogdet_of_log_abs_det = rule(
    rt.log(rt.abs(rt.linalg.det(m))),
    _logabsdet,
    name="slogdet_of_log_abs_det",
    when=real("m"),
    domain={"m": "real"},
    example=lambda: rt.log(rt.abs(rt.linalg.det(rt.matrix("m", shape=(3, 3))))),
)
sum_log_of_log_prod = rule(
    rt.log(rt.prod(x, axis=ax, keepdims=kd)),
    _sum_log,
    name="sum_log_of_log_prod",
    when=real("x"),
    domain=REAL,
    example=lambda: rt.log(rt.prod(matrix_x(), axis=1, keepdims=True)),
)

# sqrt(x) ** 2 is x (rounded twice) for x >= 0 and nan for x < 0; the rewrite keeps the nan.
_square_root_squared = computed(
    "where(x < 0, nan, x)", lambda b: rt.where(as_float(b.x) < 0, np.nan, as_float(b.x))
)
identity_of_square_sqrt = rule(
    rt.square(rt.sqrt(x)),
    _square_root_squared,
    name="identity_of_square_sqrt",
    when=real("x"),
    domain=REAL,
)
identity_of_sqrt_times_sqrt = rule(
    rt.sqrt(x) * rt.sqrt(x),
    _square_root_squared,
    name="identity_of_sqrt_times_sqrt",
    when=real("x"),
    domain=REAL,
)


#: Order is priority at a node (specific forms first).
rules = [
    xlogy_of_x_log_y,
    slogdet_of_log_det,
    slogdet_of_log_abs_det,
    sum_log_of_log_prod,
    identity_of_square_sqrt,
    identity_of_sqrt_times_sqrt,
]
