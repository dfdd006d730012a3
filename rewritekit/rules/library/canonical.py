"""Standard library rules: canonical forms (phase ``canonicalize``).

Identities (``x + 0 -> x``, ``x ** 0 -> 1``, ``--x -> x``), self-comparisons
(``x == x``), constant ``where`` conditions, redundant casts, inverse pairs (``exp(log(x))``)
and idempotent functions (``abs(abs(x))``, ``floor`` of an integral value).

Every replacement keeps the matched node's dtype and its runtime shape: a kept operand is
cast to the node's dtype and broadcast to the node's shape, which is built from the shapes
of the node's inputs (never ``shape(node)``: a replacement holding the node it replaces
is a rewrite cycle to the engine). Rules that drop an operand whose shape could disagree
at run time carry the tag ``shape_unsafe``: they can hide a broadcasting error, and they
take a kept operand of the node's static shape as is.

Example:
    >>> x = rt.vector("x")
    >>> rk.rewrite(rt.exp(rt.log(x)) * 1, rules) is rt.where(x < 0, np.nan, x)
    True
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import rewritekit.tensor as rt
from rewritekit.ir import Var
from rewritekit.ir.patterns import pattern_function
from rewritekit.rules.library._support import (
    c,
    fill_value,
    fitted,
    operands,
    x,
    y,
)
from rewritekit.rules.matcher import CONSTANT
from rewritekit.rules.patterns import lvar
from rewritekit.rules.rule import Bindings, Rule, rule
from rewritekit.rules.ruleset import RuleSet
from rewritekit.tensor.creation import Alloc
from rewritekit.tensor.elemwise import Cast, Ceil, Floor, Round, Sign

__all__ = ["rules"]

SHAPE_UNSAFE = {"shape_unsafe"}


# --- helpers ------------------------------------------------------------------------------


def _kind(var: Var) -> str:
    return np.dtype(var.dtype).kind


def _operands(b: Bindings) -> tuple[Var, ...]:
    return operands(b)


def _keep(name: str, trust_types: bool = False) -> Callable[[Bindings], Var]:
    """A right side: the operand bound to ``name``, with the matched node's type (see
    ``_fitted`` for ``trust_types``)."""

    def build(b: Bindings) -> Var:
        return fitted(b[name], b.term, _operands(b), b[name], trust_types)

    build.__name__ = f"keep({name})"
    return build


def _fill(value: Any) -> Callable[[Bindings], Var]:
    """A right side: ``value`` in ``x``'s shape, with the matched node's type."""

    def build(b: Bindings) -> Var:
        filled = rt.full_like(b.x, value, dtype=b.term.dtype)
        return fitted(filled, b.term, _operands(b), source=b.x)

    build.__name__ = f"fill({value})"
    return build


def _as_term_dtype(var: Var, b: Bindings) -> Var:
    return rt.cast(var, b.term.dtype)


def _real(name: str) -> Callable[[Bindings], bool]:
    """A guard: the operand bound to ``name`` is not complex."""

    def guard(b: Bindings) -> bool:
        return _kind(b[name]) in "biuf"

    guard.__name__ = f"real({name})"
    return guard


def _exact_negation(*names: str) -> Callable[[Bindings], bool]:
    """A guard: negating these operands before the node's promotion cannot overflow
    differently from negating after it (floats, or no promotion), so ``-`` can move."""

    def guard(b: Bindings) -> bool:
        return all(_kind(b[n]) in "fc" or b[n].dtype == b.term.dtype for n in names)

    guard.__name__ = f"exact_negation({', '.join(names)})"
    return guard


def _int_vector(name: str) -> Var:
    return rt.vector(name, dtype="int64")


# --- arithmetic identities ----------------------------------------------------------------

_identities: list[Rule] = [
    # -0.0 + 0.0 is 0.0: the sign of a zero may change, values do not.
    rule(x + 0, _keep("x"), name="add_zero"),
    rule(x - 0, _keep("x"), name="sub_zero"),
    rule(x * 1, _keep("x"), name="mul_one"),
    rule(x / 1, _keep("x"), name="div_one"),
    rule(x**1, _keep("x"), name="pow_one"),
    # 0 ** 0 and nan ** 0 are 1 in NumPy: exact for every x.
    rule(x**0, _fill(1), name="pow_zero"),
    # Integers and bools only: for floats, inf * 0 and nan * 0 are nan, not 0.
    rule(
        x * 0,
        _fill(0),
        name="mul_zero",
        when=lambda b: _kind(b.x) in "biu",
        example=lambda: _int_vector("x") * 0,
    ),
    rule(0 - x, lambda b: -fitted(b.x, b.term, _operands(b), source=b.x), name="zero_sub"),
    # Differs where x is inf or nan: x - x is nan there, 0 after the rewrite.
    rule(x - x, lambda b: rt.zeros_like(b.x, dtype=b.term.dtype), name="sub_self"),
    # Differs at x = 0 and x = +-inf (nan there).
    rule(
        x / x,
        lambda b: rt.ones_like(b.x, dtype=b.term.dtype),
        name="div_self",
        domain={"x": "nonzero"},
    ),
]

# --- negations ----------------------------------------------------------------------------

_negations: list[Rule] = [
    rule(rt.negative(rt.negative(x)), x, name="double_negation"),
    rule(x - (-y), x + y, name="sub_negative", when=_exact_negation("y")),
    rule(x + (-y), x - y, name="add_negative", when=_exact_negation("y")),
    rule((-x) * (-y), x * y, name="mul_negatives", when=_exact_negation("x", "y")),
    # No `-(x - y) -> y - x`: where `x - y` is used elsewhere (it is, in a chain such as the
    # benchmarks' W1, `y - exp(-y*y)`), it saves nothing and links `y - x` to the
    # operands of an earlier step; XLA's fusion then duplicates work across steps, and
    # compiling W1 at 300 steps went from 1.9 s to more than 10 minutes.
    rule(rt.abs(-x), rt.abs(x), name="abs_of_negative", when=lambda b: _kind(b.x) != "u"),
]

# --- where --------------------------------------------------------------------------------


def _condition(b: Bindings, test: Callable[[np.ndarray], bool]) -> bool:
    value = fill_value(b.c)  # a constant, or an array of one (a derivative's guard)
    return value is not None and bool(test(value.astype(bool)))


def _where_example(cond: Any) -> Callable[[], Var]:
    return lambda: rt.where(np.asarray(cond), rt.vector("x"), rt.matrix("y"))


_wheres: list[Rule] = [
    # shape_unsafe: the dropped operands' shapes are not checked, and a kept branch of the
    # node's static shape is taken as is (an operand of unknown length 1 that the dropped
    # ones broadcast at run time would change the result's shape).
    rule(
        rt.where(c, x, y),
        _keep("x", trust_types=True),
        name="where_true_condition",
        when=lambda b: _condition(b, np.all),
        tags=SHAPE_UNSAFE,
        example=_where_example([True, True, True]),
    ),
    rule(
        rt.where(c, x, y),
        _keep("y", trust_types=True),
        name="where_false_condition",
        when=lambda b: _condition(b, lambda v: not v.any()),
        tags=SHAPE_UNSAFE,
        example=_where_example(False),
    ),
    rule(
        rt.where(c, x, x),
        _keep("x", trust_types=True),
        name="where_same_branches",
        tags=SHAPE_UNSAFE,
    ),
    rule(rt.where(rt.logical_not(c), x, y), rt.where(c, y, x), name="where_negated_condition"),
]
for _known in _wheres:  # the index: a constant condition, or a constant's fill
    if _known.name in ("where_true_condition", "where_false_condition"):
        _known.child_test = lambda ops: ops[0] is CONSTANT or isinstance(ops[0], Alloc)

# --- self-comparisons and idempotent binary ops -------------------------------------------


def _unless_nan(truth: bool) -> Callable[[Bindings], Var]:
    """A right side for ``op(x, x)``: ``truth`` where x is not nan (floats), else ``not
    truth``; only ``truth`` for integers and bools."""

    def build(b: Bindings) -> Var:
        if _kind(b.x) not in "fc":
            return rt.full_like(b.x, truth, dtype="bool")
        nan = rt.isnan(b.x)
        return rt.logical_not(nan) if truth else nan

    build.__name__ = f"unless_nan({truth})"
    return build


def _self_comparison(op: Callable[[Any, Any], Any], truth: bool, name: str) -> Rule:
    return rule(op(x, x), _unless_nan(truth), name=name, domain={"x": _with_nan})


def _with_nan(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    values = rng.normal(0.0, 2.0, size=shape)
    return np.where(rng.random(size=shape) < 0.3, np.nan, values)


def _as_bool(b: Bindings) -> Var:
    return rt.cast(b.x, "bool")


def _all_false(b: Bindings) -> Var:
    return rt.zeros_like(b.x, dtype="bool")


def _all_true(b: Bindings) -> Var:
    return rt.ones_like(b.x, dtype="bool")


def _with_bool_constant(
    op: Callable[[Any, Any], Var], value: bool, result: Callable[[Bindings], Var], name: str
) -> Rule:
    """``op(x, value) -> result`` where the constant does not widen ``x``'s shape."""
    return rule(
        op(x, value),
        result,
        name=name,
        when=lambda b: b.x.type.shape == b.term.type.shape,
        tags=SHAPE_UNSAFE,
    )


_self_ops: list[Rule] = [
    _self_comparison(rt.equal, True, "equal_self"),
    _self_comparison(rt.less_equal, True, "less_equal_self"),
    _self_comparison(rt.greater_equal, True, "greater_equal_self"),
    _self_comparison(rt.not_equal, False, "not_equal_self"),
    rule(rt.less(x, x), lambda b: rt.zeros_like(b.x, dtype="bool"), name="less_self"),
    rule(rt.greater(x, x), lambda b: rt.zeros_like(b.x, dtype="bool"), name="greater_self"),
    rule(rt.maximum(x, x), x, name="maximum_self"),
    rule(rt.minimum(x, x), x, name="minimum_self"),
    rule(rt.logical_and(x, x), lambda b: rt.cast(b.x, "bool"), name="logical_and_self"),
    rule(rt.logical_or(x, x), lambda b: rt.cast(b.x, "bool"), name="logical_or_self"),
    rule(
        rt.logical_not(rt.logical_not(x)),
        lambda b: rt.cast(b.x, "bool"),
        name="logical_not_of_logical_not",
    ),
    # shape_unsafe: the dropped constant's broadcast is checked only where lengths are known
    # (support checks in log-densities: `in_support & (scale > 0)` with a constant scale)
    _with_bool_constant(rt.logical_and, True, _as_bool, "logical_and_true"),
    _with_bool_constant(rt.logical_or, False, _as_bool, "logical_or_false"),
    # the guards of derivatives at a constant: `(x == 0) & (2 == 0)` in d/dx x ** 2
    _with_bool_constant(rt.logical_and, False, _all_false, "logical_and_false"),
    _with_bool_constant(rt.logical_or, True, _all_true, "logical_or_true"),
]

# --- casts --------------------------------------------------------------------------------


def _lossless(source: str, target: str) -> bool:
    """Every value of dtype ``source`` converts to ``target`` exactly (stricter than
    ``np.can_cast(..., "safe")``, which allows int64 -> float64)."""
    src, dst = np.dtype(source), np.dtype(target)
    if not np.can_cast(src, dst, "safe"):
        return False
    if src.kind in "iu" and dst.kind in "fc":
        return src.itemsize * 8 <= np.finfo(dst).nmant + 1
    return True


def _redundant_inner_cast(b: Bindings) -> bool:
    """``cast(cast(x, t1), t2) == cast(x, t2)``: the inner cast keeps every value, and the
    outer one converts it as it would convert ``x`` (float -> int conversion of
    out-of-range values is undefined, so a float ``t1`` needs an exact ``x -> t2`` too)."""
    source = b.x.dtype
    if not _lossless(source, b.t1):
        return False
    inner, outer = np.dtype(b.t1).kind, np.dtype(b.t2).kind
    return inner in "biu" or outer in "fcb" or _lossless(source, b.t2)


@pattern_function(Cast)
def _cast_node(x: Any, dtype: str) -> Var:
    """Any Cast node, even one to its input's own dtype (for which ``rt.cast`` gives the
    input itself, so ``rt.cast(x, t)`` cannot match it)."""
    return Cast(dtype)(x)


_casts: list[Rule] = [
    rule(
        rt.cast(rt.cast(x, lvar("t1")), lvar("t2")),
        lambda b: rt.cast(b.x, b.t2),
        name="cast_of_lossless_cast",
        when=_redundant_inner_cast,
        example=lambda: rt.cast(rt.cast(rt.vector("x", dtype="int16"), "float32"), "int32"),
    ),
    rule(
        _cast_node(x, lvar("t")),
        x,
        name="cast_to_own_dtype",
        when=lambda b: b.t == b.x.dtype,
        example=lambda: Cast("float64")(rt.vector("x")),
    ),
]

# --- inverse pairs ------------------------------------------------------------------------


def _nan_where(outside: Callable[[Var], Var]) -> Callable[[Bindings], Var]:
    """A right side: x (in the node's dtype), nan where ``outside(x)`` holds."""

    def build(b: Bindings) -> Var:
        return rt.where(outside(b.x), np.nan, _as_term_dtype(b.x, b))

    build.__name__ = "nan_where"
    return build


def _identity(b: Bindings) -> Var:
    return _as_term_dtype(b.x, b)


_inverses: list[Rule] = [
    # exp(log(0)) = exp(-inf) = 0 and nan stays nan, as in the rewrite.
    rule(
        rt.exp(rt.log(x)),
        _nan_where(lambda v: v < 0),
        name="exp_of_log",
        when=_real("x"),
    ),
    # Exact (better) where exp(x) over- or underflows (|x| > ~709 in float64).
    rule(rt.log(rt.exp(x)), _identity, name="log_of_exp", when=_real("x")),
    # Exact (better) where expm1(x) rounds to -1 (x < ~-37) or overflows (x > ~709).
    rule(rt.log1p(rt.expm1(x)), _identity, name="log1p_of_expm1"),
    rule(rt.expm1(rt.log1p(x)), _nan_where(lambda v: v < -1), name="expm1_of_log1p"),
    # 1 / (1 / 0) = 0; differs for subnormal x, whose reciprocal overflows to inf.
    rule(rt.reciprocal(rt.reciprocal(x)), _identity, name="reciprocal_of_reciprocal"),
    rule(
        rt.tanh(rt.arctanh(x)),
        _nan_where(lambda v: rt.abs(v) > 1),
        name="tanh_of_arctanh",
        domain={"x": "symmetric_unit"},
    ),
    rule(
        rt.sin(rt.arcsin(x)),
        _nan_where(lambda v: rt.abs(v) > 1),
        name="sin_of_arcsin",
        domain={"x": "symmetric_unit"},
    ),
    rule(
        rt.cos(rt.arccos(x)),
        _nan_where(lambda v: rt.abs(v) > 1),
        name="cos_of_arccos",
        domain={"x": "symmetric_unit"},
    ),
    rule(
        rt.cosh(rt.arccosh(x)),
        _nan_where(lambda v: v < 1),
        name="cosh_of_arccosh",
        domain={"x": "greater_than_one"},
    ),
    # Not arcsinh(sinh(x)): sinh overflows for |x| > ~710, where the rewrite would not.
    rule(rt.sinh(rt.arcsinh(x)), _identity, name="sinh_of_arcsinh"),
    # tan(arctan(x)) stays near 1.6e16 for huge |x|; the rewrite gives x (better).
    rule(rt.tan(rt.arctan(x)), _identity, name="tan_of_arctan"),
    rule(
        rt.sigmoid(rt.logit(x)),
        _nan_where(lambda v: rt.logical_or(v < 0, v > 1)),
        name="sigmoid_of_logit",
        domain={"x": "unit"},
    ),
]

# --- idempotent functions -----------------------------------------------------------------


def _integral(var: Var) -> bool:
    """Every value of ``var`` is an integer (or nan/inf): an integer dtype, or the result of
    floor, ceil, sign or round to a non-positive number of decimals."""
    if _kind(var) in "biu":
        return True
    op = None if var.owner is None else var.owner.op
    return isinstance(op, Floor | Ceil | Sign) or (isinstance(op, Round) and op.decimals <= 0)


def _rounding_example(outer: Callable[[Var], Var]) -> Callable[[], Var]:
    return lambda: outer(rt.floor(rt.vector("x"))) + outer(_int_vector("y"))


_idempotents: list[Rule] = [
    rule(rt.abs(rt.abs(x)), rt.abs(x), name="abs_of_abs"),
    rule(rt.sign(rt.sign(x)), rt.sign(x), name="sign_of_sign"),
    rule(
        rt.floor(x),
        x,
        name="floor_of_integral",
        when=lambda b: _integral(b.x),
        example=_rounding_example(rt.floor),
    ),
    rule(
        rt.ceil(x),
        x,
        name="ceil_of_integral",
        when=lambda b: _integral(b.x),
        example=_rounding_example(rt.ceil),
    ),
    # NumPy rounds through x * 10**decimals, which overflows to inf for |x| near the float
    # maximum; the rewrite keeps x there.
    rule(
        rt.round(x, lvar("decimals")),
        x,
        name="round_of_integral",
        when=lambda b: b.decimals >= 0 and _integral(b.x),
        example=_rounding_example(lambda v: rt.round(v, 2)),
    ),
]

rules = RuleSet(
    [*_identities, *_negations, *_wheres, *_self_ops, *_casts, *_inverses, *_idempotents],
    name="canonicalize",
    tags={"canonicalize"},
)
