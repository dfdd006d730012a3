"""Standard library rules: numerically stable forms (phase ``stabilize``).

Each rule replaces a naive formula by a special function that keeps its precision where
the formula overflows, underflows or cancels: ``log(1 + x)`` at ``x = 1e-20`` is 0.0 but
``log1p(x)`` is 1e-20; ``log(sum(exp(x)))`` at ``[1000, 1000]`` is inf but ``logsumexp`` is
1000.69. Plain JAX/XLA does none of this, so these rules are what make a rewritten JAX
callable more accurate than the hand-written one.

Conventions of this module:

- The stable functions are real (``log1p``, ``softplus``, ... reject complex inputs), so
  every rule is guarded to real inputs; a rule whose left side does arithmetic on an input
  itself (``1 + x``, ``-x``) is guarded to float inputs, where that arithmetic cannot wrap
  (elsewhere an integer input is cast to float64 before a negation).
- A number in a pattern matches a constant of any shape and dtype, so rules whose constant
  could widen the result's dtype or static shape are guarded to keep the matched type.
- A negation on the right side is built by ``_negate``, which strips a negation instead
  of stacking one: ``log(sigmoid(-x))`` becomes ``-softplus(x)``, not ``-softplus(--x)``,
  without waiting for the ``canonicalize`` phase.
- Values match NumPy's on the rule's domain, NaN and inf included; the one deliberate
  change is ``xlogy`` (0 where ``x == 0``). No rule needs the ``shape_unsafe`` tag: every
  replacement broadcasts its inputs as the matched node did.

Example:
    >>> from rewritekit.rules.library.stabilizing import rules
    >>> x = rt.vector("x")
    >>> rk.rewrite(rt.log(1 - rt.sigmoid(x)), rules) is -rt.softplus(x)
    True
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

import rewritekit.tensor as rt
from rewritekit.ir import TensorType, Var
from rewritekit.rules.library._support import constant_value, same_type, x, y
from rewritekit.rules.patterns import lvar
from rewritekit.rules.rule import Bindings, rule
from rewritekit.rules.ruleset import RuleSet
from rewritekit.tensor.elemwise import float_dtype
from rewritekit.tensor.linalg import Cholesky, ExtractDiag

__all__ = ["rules"]

Guard = Callable[[Bindings], bool]

ax, kd = lvar("ax"), lvar("kd")  # a reduction's axis and keepdims parameters
m = lvar("m")  # a matrix (or a stack of them)

_REAL = {"x": "real"}


# --- guards and helpers -------------------------------------------------------------------


def _guard(name: str, test: Callable[[Bindings], Any]) -> Guard:
    def guard(bindings: Bindings) -> bool:
        return bool(test(bindings))

    guard.__name__ = name
    return guard


def _real(*names: str) -> Guard:
    """The named inputs are bool, integer or float (not complex)."""
    return _guard(
        f"real({', '.join(names)})", lambda b: all(b[n].type.kind in "biuf" for n in names)
    )


def _same_float(name: str) -> Guard:
    """The named input is a real float of exactly the matched node's type: a constant in
    the pattern neither widened its dtype nor broadcast its shape."""
    return _guard(f"same_float({name})", lambda b: b[name].type.kind == "f" and same_type(name)(b))


def _unary_of(name: str) -> Guard:
    """The named input is real and a float function of it has the matched node's type: a
    constant in the pattern neither widened the dtype nor broadcast the shape."""

    def keeps(b: Bindings) -> bool:
        t = b[name].type
        return t.kind in "biuf" and TensorType(float_dtype(t.dtype), t.shape) == b.term.type

    return _guard(f"unary_of({name})", keeps)


def _computed(text: str, build: Callable[[Bindings], Var]) -> Callable[[Bindings], Var]:
    """A computed right side, described by ``text`` (its docstring, as a relation's)."""
    build.__doc__ = text
    return build


def _negate(v: Var) -> Var:
    """``-v``, or ``u`` when ``v`` is ``-u`` (negation is an involution, also for ints)."""
    if v.owner is not None and v.owner.op == rt.negative:
        return v.owner.inputs[0]
    return -v


def _as_float(v: Var) -> Var:
    """``v``, cast to float64 unless it is a float (what float functions compute in)."""
    return v if v.type.kind == "f" else rt.cast(v, "float64")


# --- log1p, expm1, log1mexp ---------------------------------------------------------------


_log1p_of_negated = _computed("log1p(-x)", lambda b: rt.log1p(_negate(b.x)))
_neg_expm1 = _computed("-expm1(x)", lambda b: -rt.expm1(b.x))

# log1mexp(x) = log(1 - exp(x)): NaN for x > 0 on both sides, -inf at 0.
log1mexp_of_log_one_minus_exp = rule(
    rt.log(1 - rt.exp(x)),
    rt.log1mexp(x),
    name="log1mexp_of_log_one_minus_exp",
    when=_unary_of("x"),
    domain=_REAL,
)
log1mexp_of_log1p_neg_exp = rule(
    rt.log1p(-rt.exp(x)),
    rt.log1mexp(x),
    name="log1mexp_of_log1p_neg_exp",
    when=_real("x"),
    domain=_REAL,
)
log1mexp_of_log_neg_expm1 = rule(
    rt.log(-rt.expm1(x)),
    rt.log1mexp(x),
    name="log1mexp_of_log_neg_expm1",
    when=_real("x"),
    domain=_REAL,
)
neg_expm1_of_one_minus_exp = rule(
    1 - rt.exp(x),
    _neg_expm1,
    name="neg_expm1_of_one_minus_exp",
    when=_unary_of("x"),
    domain=_REAL,
)
expm1_of_exp_minus_one = rule(
    rt.exp(x) - 1, rt.expm1(x), name="expm1_of_exp_minus_one", when=_unary_of("x"), domain=_REAL
)
# x < -1: NaN on both sides.
log1p_of_one_plus = rule(
    rt.log(1 + x), rt.log1p(x), name="log1p_of_one_plus", when=_same_float("x"), domain=_REAL
)
log1p_of_one_minus = rule(
    rt.log(1 - x),
    _log1p_of_negated,
    name="log1p_of_one_minus",
    when=_same_float("x"),
    domain=_REAL,
)


# --- the logistic family ------------------------------------------------------------------


_neg_softplus_of_negated = _computed(
    "-softplus(-x)", lambda b: -rt.softplus(_negate(_as_float(b.x)))
)
_neg_softplus = _computed("-softplus(x)", lambda b: -rt.softplus(b.x))
_sigmoid_of_negated = _computed("sigmoid(-x)", lambda b: rt.sigmoid(_negate(_as_float(b.x))))

softplus_of_log_one_plus_exp = rule(
    rt.log(1 + rt.exp(x)),
    rt.softplus(x),
    name="softplus_of_log_one_plus_exp",
    when=_unary_of("x"),
    domain=_REAL,
)
softplus_of_log1p_exp = rule(
    rt.log1p(rt.exp(x)), rt.softplus(x), name="softplus_of_log1p_exp", when=_real("x"), domain=_REAL
)
softplus_of_log_sigmoid = rule(
    rt.log(rt.sigmoid(x)),
    _neg_softplus_of_negated,
    name="softplus_of_log_sigmoid",
    when=_real("x"),
    domain=_REAL,
)
softplus_of_log_one_minus_sigmoid = rule(
    rt.log(1 - rt.sigmoid(x)),
    _neg_softplus,
    name="softplus_of_log_one_minus_sigmoid",
    when=_unary_of("x"),
    domain=_REAL,
)
softplus_of_log1p_neg_sigmoid = rule(
    rt.log1p(-rt.sigmoid(x)),
    _neg_softplus,
    name="softplus_of_log1p_neg_sigmoid",
    when=_real("x"),
    domain=_REAL,
)
sigmoid_of_one_minus_sigmoid = rule(
    1 - rt.sigmoid(x),
    _sigmoid_of_negated,
    name="sigmoid_of_one_minus_sigmoid",
    when=_unary_of("x"),
    domain=_REAL,
)
sigmoid_of_logistic_form = rule(
    1 / (1 + rt.exp(-x)),
    rt.sigmoid(x),
    name="sigmoid_of_logistic_form",
    when=_same_float("x"),
    domain=_REAL,
)
sigmoid_of_reciprocal_logistic_form = rule(
    rt.reciprocal(1 + rt.exp(-x)),
    rt.sigmoid(x),
    name="sigmoid_of_reciprocal_logistic_form",
    when=_same_float("x"),
    domain=_REAL,
)
sigmoid_of_negated_logistic_form = rule(
    1 / (1 + rt.exp(x)),
    _sigmoid_of_negated,
    name="sigmoid_of_negated_logistic_form",
    when=_unary_of("x"),
    domain=_REAL,
)


# --- log-sum-exp and softmax --------------------------------------------------------------


_logsumexp = _computed(
    "logsumexp(x, axis=ax, keepdims=kd)", lambda b: rt.logsumexp(b.x, axis=b.ax, keepdims=b.kd)
)
_log_softmax = _computed("log_softmax(x, axis=ax)", lambda b: rt.log_softmax(b.x, axis=b.ax))
_softmax = _computed("softmax(x, axis=ax)", lambda b: rt.softmax(b.x, axis=b.ax))


def _matrix_x() -> Var:
    return rt.matrix("x", shape=(2, 3))


# An empty or all -inf slice gives -inf on both sides; +inf gives +inf.
logsumexp_of_log_sum_exp = rule(
    rt.log(rt.sum(rt.exp(x), axis=ax, keepdims=kd)),
    _logsumexp,
    name="logsumexp_of_log_sum_exp",
    when=_real("x"),
    domain=_REAL,
    example=lambda: rt.log(rt.sum(rt.exp(_matrix_x()), axis=1, keepdims=True)),
)
logaddexp_of_log_exp_plus_exp = rule(
    rt.log(rt.exp(x) + rt.exp(y)),
    rt.logaddexp(x, y),
    name="logaddexp_of_log_exp_plus_exp",
    when=_real("x", "y"),
    domain={"x": "real", "y": "real"},
)
# An all -inf slice: softmax is NaN there, and so is log_softmax (-inf - -inf).
log_softmax_of_log_of_softmax = rule(
    rt.log(rt.softmax(x, axis=ax)),
    _log_softmax,
    name="log_softmax_of_log_of_softmax",
    when=_real("x"),
    domain=_REAL,
    example=lambda: rt.log(rt.softmax(_matrix_x(), axis=0)),
)
softmax_of_exp_log_softmax = rule(
    rt.exp(rt.log_softmax(x, axis=ax)),
    _softmax,
    name="softmax_of_exp_log_softmax",
    when=_real("x"),
    domain=_REAL,
    example=lambda: rt.exp(rt.log_softmax(_matrix_x(), axis=1)),
)


# --- error function -----------------------------------------------------------------------


_erfc_of_negated = _computed("erfc(-x)", lambda b: rt.erfc(_negate(_as_float(b.x))))

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
    v = _as_float(b.x)
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
    1 - rt.erf(x), rt.erfc(x), name="erfc_of_one_minus_erf", when=_unary_of("x"), domain=_REAL
)
erfc_of_one_plus_erf = rule(
    1 + rt.erf(x),
    _erfc_of_negated,
    name="erfc_of_one_plus_erf",
    when=_unary_of("x"),
    domain=_REAL,
)
log_erfc_asymptotic = rule(
    rt.log(rt.erfc(x)),
    _log_erfc,
    name="log_erfc_asymptotic",
    when=_real("x"),
    domain={"x": _erfc_range},
)


# --- xlogy, determinants, products ----------------------------------------------------------


def _xlogy(b: Bindings) -> Var | None:
    """xlogy(x, y) (declines where it would change the dtype)"""
    new = rt.xlogy(b.x, b.y)
    return new if new.type == b.term.type else None


def _xlogy_applies(b: Bindings) -> bool:
    """x and y are real, and x may be 0 (xlogy's gain): a constant x without zeros is left
    as x * log(y)."""
    value = constant_value(b.x)
    may_be_zero = value is None or not np.all(value != 0)
    return may_be_zero and _real("x", "y")(b)


def _log_det(b: Bindings) -> Var:
    """where(sign < 0, nan, logabsdet) with (sign, logabsdet) = slogdet(m)

    log of a negative determinant is NaN; a singular matrix gives sign 0 and -inf.
    """
    sign, logabsdet = rt.linalg.slogdet(b.m)
    return rt.where(sign < 0, np.nan, logabsdet)


_logabsdet = _computed("slogdet(m)[1]", lambda b: rt.linalg.slogdet(b.m)[1])

#: Ops whose results are never negative (NaN aside): log(prod(x)) = sum(log(x)) for them.
_NONNEGATIVE = (rt.exp, rt.exp2, rt.abs, rt.square, rt.sqrt, rt.sigmoid, rt.softplus, rt.erfc)


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
    v = _as_float(b.x)
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
    when=_real("m"),
    domain={"m": "real"},
    example=lambda: rt.log(rt.linalg.det(rt.tensor("m", shape=(2, 3, 3)))),
)
slogdet_of_log_abs_det = rule(
    rt.log(rt.abs(rt.linalg.det(m))),
    _logabsdet,
    name="slogdet_of_log_abs_det",
    when=_real("m"),
    domain={"m": "real"},
    example=lambda: rt.log(rt.abs(rt.linalg.det(rt.matrix("m", shape=(3, 3))))),
)
sum_log_of_log_prod = rule(
    rt.log(rt.prod(x, axis=ax, keepdims=kd)),
    _sum_log,
    name="sum_log_of_log_prod",
    when=_real("x"),
    domain=_REAL,
    example=lambda: rt.log(rt.prod(_matrix_x(), axis=1, keepdims=True)),
)


#: Order is priority at a node: the specific forms (log(1 + exp(x))) before the general
#: ones (log(1 + x)).
rules = RuleSet(
    [
        softplus_of_log_one_plus_exp,
        softplus_of_log_one_minus_sigmoid,
        log1mexp_of_log_one_minus_exp,
        log1mexp_of_log_neg_expm1,
        log1p_of_one_plus,
        log1p_of_one_minus,
        softplus_of_log1p_exp,
        softplus_of_log1p_neg_sigmoid,
        log1mexp_of_log1p_neg_exp,
        expm1_of_exp_minus_one,
        neg_expm1_of_one_minus_exp,
        softplus_of_log_sigmoid,
        sigmoid_of_one_minus_sigmoid,
        sigmoid_of_logistic_form,
        sigmoid_of_reciprocal_logistic_form,
        sigmoid_of_negated_logistic_form,
        logsumexp_of_log_sum_exp,
        logaddexp_of_log_exp_plus_exp,
        log_softmax_of_log_of_softmax,
        softmax_of_exp_log_softmax,
        erfc_of_one_minus_erf,
        erfc_of_one_plus_erf,
        log_erfc_asymptotic,
        xlogy_of_x_log_y,
        slogdet_of_log_det,
        slogdet_of_log_abs_det,
        sum_log_of_log_prod,
    ],
    name="stabilize",
    tags={"stabilize"},
)
