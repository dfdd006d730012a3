"""Standard library rules: the cancelling sum and product canonicaliser (phase
``canonicalize``).

A sum is flattened into signed terms and a product into factors with exponent +1 or -1,
through the whole tree of nodes of the same family and dtype under the matched node:
``(x + y) - x + 2 + 3`` holds ``+x, +y, -x, +2, +3`` and ``2 * x * y / x`` holds ``2, x,
y, 1/x``. Equal terms of opposite sign cancel (nodes are hash-consed, so equal
subexpressions are the same Var), the constants fold into one (computed with NumPy in the
node's dtype) and an identity constant (0 in a sum, 1 in a product; -1 becomes a
negation) is dropped: ``y + 5`` and ``2 * y``. The survivors keep their order; a sum is
rebuilt as ``t1 + t2 - t3 + c`` and a product as ``c * t1 * t2 / t3``.

A rule fires only when that makes progress: a term cancelled, two constants (or, in a
product, negations) folded into one, or an identity constant dropped. Anything else stays
as written, so other rules' patterns (``1 - sigmoid(x)``, ``log(1 + x)``,
``1 / (1 + exp(-x))``) keep matching, and the rewrite of a rewrite never fires again.

Semantics: cancelling is exact where the cancelled terms are finite, and for a product
nonzero. Where ``x`` is inf or nan, ``x - x`` is nan but its rewrite is 0; where ``x`` is
0, inf or nan, ``x * y / x`` is nan (or inf) but its rewrite is ``y``, as in every
compiler that cancels. Folding constants reassociates float arithmetic (a rounding error
of a few ulps). Integer sums and products wrap around as NumPy's do, so reassociating them
is exact. Bool sums (logical or) and products are left alone.

Shapes: the result keeps the node's dtype and static shape. Where a cancelled term
widened the node's shape, the result is broadcast to the node's runtime shape, built from
the shapes of the survivors and the cancelled terms (never from the node itself, which the
engine would have to normalise again). A cancelled term may still have broadcast a
surviving length-1 axis that is not static, and a cancelled pair no longer checks that it
broadcasts against the rest, so every rule here is tagged ``shape_unsafe``.

Example:
    >>> x, y = rt.vector("x"), rt.vector("y")
    >>> rk.rewrite(x * y / x, rules) is y
    True
    >>> rk.rewrite(2 * x * 3, rules) is rt.constant(6.0) * x
    True
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

import rewritekit.tensor as rt
from rewritekit.ir import SUPPORTED_DTYPES, Constant, Var, broadcast_shapes, constant
from rewritekit.rules.library._support import broadcast_lengths, x, y
from rewritekit.rules.matcher import CONSTANT
from rewritekit.rules.patterns import lvar
from rewritekit.rules.rule import Bindings, Rule, order_free, rule
from rewritekit.rules.ruleset import RuleSet
from rewritekit.tensor.elemwise import Add, Multiply, Negative, Reciprocal, Subtract, TrueDivide

__all__ = ["rules"]

SHAPE_UNSAFE = frozenset({"shape_unsafe"})

#: The most family nodes one flattening walks through; deeper nodes are opaque terms, so a
#: declined node costs little even in long chains.
MAX_NODES = 32

# Each Op of a family: the sign (or exponent) each input's terms take.
_SUM_SIGNS: Mapping[type, tuple[int, ...]] = {Add: (1, 1), Subtract: (1, -1), Negative: (-1,)}
_PRODUCT_SIGNS: Mapping[type, tuple[int, ...]] = {
    Multiply: (1, 1),
    TrueDivide: (1, -1),
    Reciprocal: (-1,),
}

Term = tuple[Var, int]

_KINDS = {dtype: np.dtype(dtype).kind for dtype in SUPPORTED_DTYPES}


def _kind(var: Var) -> str:
    return _KINDS[var.dtype]


def _negated(value: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):  # -INT_MIN wraps to INT_MIN, as the graph's would
        return np.negative(value)


# --- flattening ---------------------------------------------------------------------------


def _flatten(
    root: Var, signs: Mapping[type, tuple[int, ...]], through_negative: bool
) -> tuple[list[Term], list[Term], int]:
    """The terms and constants of ``root``'s family tree, in order, with their signs.

    The walk goes through nodes of ``signs``' Ops that have ``root``'s dtype (at most
    ``MAX_NODES`` of them); with ``through_negative`` also through negations, which a
    product counts (the third result) and flattens as if they were not there.
    """
    dtype = root.dtype
    terms: list[Term] = []
    constants: list[Term] = []
    negations = expanded = 0
    stack: list[Term] = [(root, 1)]
    push, pop = stack.append, stack.pop
    while stack:
        var, sign = pop()
        node = var.owner
        if node is not None and expanded < MAX_NODES and var.type.dtype == dtype:
            op_type = type(node.op)
            input_signs = signs.get(op_type)
            if input_signs is not None:
                expanded += 1
                inputs = node.inputs
                if len(inputs) == 2:
                    push((inputs[1], sign * input_signs[1]))
                push((inputs[0], sign * input_signs[0]))
                continue
            if through_negative and op_type is Negative:
                expanded += 1
                negations += 1
                push((node.inputs[0], sign))
                continue
        (constants if isinstance(var, Constant) else terms).append((var, sign))
    return terms, constants, negations


def _cancel(terms: list[Term]) -> tuple[list[Term], list[Var]]:
    """The terms left after equal terms of opposite sign cancel (the first ones of the
    surviving sign are kept, in order), and the cancelled terms."""
    positive = {var for var, sign in terms if sign > 0}
    if positive.isdisjoint([var for var, sign in terms if sign < 0]):
        return terms, []
    net: dict[Var, int] = {}
    for var, sign in terms:
        net[var] = net.get(var, 0) + sign
    survivors: list[Term] = []
    cancelled: list[Var] = []
    for var, sign in terms:
        left = net[var]
        if left * sign > 0:
            survivors.append((var, sign))
            net[var] = left - sign
        else:
            cancelled.append(var)
    return survivors, cancelled


def _fold(constants: list[Term], dtype: str, additive: bool) -> np.ndarray | None:
    """The constants combined into one array of ``dtype`` (None when there are none)."""
    if not constants:
        return None
    value = np.zeros((), dtype) if additive else np.ones((), dtype)
    with np.errstate(all="ignore"):
        for var, sign in constants:
            data = np.asarray(var.data).astype(dtype, copy=False)  # type: ignore[attr-defined]
            if additive:
                value = np.add(value, data) if sign > 0 else np.subtract(value, data)
            else:
                value = np.multiply(value, data) if sign > 0 else np.true_divide(value, data)
    return np.asarray(value).astype(dtype, copy=False)


def _maybe_identity(constants: list[Term], additive: bool, kind: str) -> bool:
    """The only constant may be an identity (0; 1 or -1), judged on its data before
    anything is folded: the quick answer for the common node that stays as it is."""
    if len(constants) != 1:
        return False
    data = constants[0][0].data  # type: ignore[attr-defined]
    if data.size == 1:  # the common constant: its element, without NumPy's reductions
        value = data.flat[0]
        return not value if additive else bool(value == 1 or (kind != "u" and value == -1))
    if additive:
        return not data.any()
    return bool(np.all(data == 1)) or (kind != "u" and bool(np.all(data == -1)))


def _droppable(value: np.ndarray, survivors: list[Term]) -> bool:
    """Dropping the constant ``value`` cannot narrow the survivors' static shape."""
    if not survivors:
        return False
    joined = broadcast_shapes(*(var.type.shape for var, _ in survivors))
    return broadcast_shapes(joined, value.shape) == joined


# --- rebuilding ---------------------------------------------------------------------------


def _typed(var: Var, dtype: str) -> Var:
    """A term in the node's dtype: a term of another dtype was promoted by the node."""
    return var if var.dtype == dtype else rt.cast(var, dtype)


def _chain(first: Var, rest: list[Term], dtype: str, additive: bool) -> Var:
    """``first`` combined with each of ``rest`` in order (``+``/``-`` or ``*``/``/``)."""
    result = first
    for var, sign in rest:
        term = _typed(var, dtype)
        if additive:
            result = result + term if sign > 0 else result - term
        else:
            result = result * term if sign > 0 else result / term
    return result


def _split_first_positive(survivors: list[Term]) -> tuple[Var | None, list[Term]]:
    for index, (var, sign) in enumerate(survivors):
        if sign > 0:
            return var, survivors[:index] + survivors[index + 1 :]
    return None, survivors


def _build_sum(survivors: list[Term], value: np.ndarray | None, dtype: str) -> Var:
    """``t1 + t2 - t3 + c`` (``... - |c|`` for a negative c, ``c - t1 - t2`` or
    ``-t1 - t2`` when every term is subtracted)."""
    negated = None if value is None or _KINDS[dtype] not in "if" else _negated(value)
    flip = negated is not None and bool(np.all(negated > 0))  # not for -2**63: it wraps
    first, rest = _split_first_positive(survivors)
    if first is not None:
        result = _chain(_typed(first, dtype), rest, dtype, additive=True)
    elif value is not None and not flip:
        return _chain(constant(value), rest, dtype, additive=True)
    elif rest:
        result = _chain(-_typed(rest[0][0], dtype), rest[1:], dtype, additive=True)
    else:
        return constant(np.zeros((), dtype) if value is None else value)
    if value is None:
        return result
    return result - constant(negated) if flip else result + constant(value)


def _build_product(
    survivors: list[Term], value: np.ndarray | None, negate: bool, dtype: str
) -> Var:
    """``c * t1 * t2 / t3`` (``c / t1 / t2`` when every factor divides, with c = 1 when
    there is no constant), negated when ``negate``."""
    first, rest = _split_first_positive(survivors)
    if first is None:
        numerator = np.ones((), dtype) if value is None else value
        result = _chain(constant(numerator), rest, dtype, additive=False)
    else:
        result = _typed(first, dtype)
        if value is not None:
            result = constant(value) * result
        result = _chain(result, rest, dtype, additive=False)
    return -result if negate else result


def _like_root(result: Var, root: Var, cancelled: list[Var]) -> Var:
    """``result`` with ``root``'s static type: broadcast to ``root``'s runtime shape where
    the cancelled terms took part in it.

    The shape has ``root``'s static lengths; an unknown length is that of the first of
    ``result`` and the cancelled terms with an unknown length on that axis, or of the next
    one where it is 1 (broadcasting). ``root`` itself is never used: the engine would
    normalise it again, as part of its own replacement.
    """
    result = _typed(result, root.dtype)
    if result.type is root.type:
        return result
    sources = list(dict.fromkeys([result, *cancelled]))
    parts = broadcast_lengths(root.type.shape, sources)
    return rt.broadcast_to(result, parts)


# --- the rules ----------------------------------------------------------------------------


@order_free
def canonical_sum(b: Bindings) -> Var | None:
    """A sum with equal terms of opposite sign cancelled and its constants folded, or None
    when nothing cancels, at most one constant is there, and it is not a droppable 0."""
    root = b.term
    if _kind(root) not in "iufc":
        return None
    terms, constants, _ = _flatten(root, _SUM_SIGNS, through_negative=False)
    survivors, cancelled = _cancel(terms)
    if not cancelled and len(constants) < 2 and not _maybe_identity(constants, True, ""):
        return None
    value = _fold(constants, root.dtype, additive=True)
    drop = value is not None and not value.any() and _droppable(value, survivors)
    if not cancelled and len(constants) < 2 and not drop:
        return None
    result = _build_sum(survivors, None if drop else value, root.dtype)
    return _like_root(result, root, cancelled)


@order_free
def canonical_product(b: Bindings) -> Var | None:
    """A product with equal factors of opposite exponent cancelled and its constants and
    negations folded, or None when nothing cancels, at most one constant or negation is
    there, and it is not a droppable 1 or -1."""
    root = b.term
    kind = _kind(root)
    if kind not in "iufc":
        return None
    terms, constants, negations = _flatten(root, _PRODUCT_SIGNS, through_negative=kind != "u")
    survivors, cancelled = _cancel(terms)
    few = len(constants) + negations < 2
    if not cancelled and few and not _maybe_identity(constants, False, kind):
        return None
    value = _fold(constants, root.dtype, additive=False)
    negate = negations % 2 == 1
    has_positive = any(sign > 0 for _, sign in survivors)
    if negate and (value is not None or not has_positive):
        value = _negated(np.ones((), root.dtype) if value is None else value)
        negate = False
    identity = value is not None and has_positive and _droppable(value, survivors)
    if identity and bool(np.all(value == 1)):
        value = None
    elif identity and kind != "u" and bool(np.all(value == -1)):
        value, negate = None, True
    elif not cancelled and few:
        return None
    result = _build_product(survivors, value, negate, root.dtype)
    return _like_root(result, root, cancelled)


def _vectors(names: str) -> list[Var]:
    return [rt.vector(name) for name in names]


def _sum_example() -> Var:
    a, b = _vectors("xy")
    return (a - b) + 2.0 + b


def _difference_example() -> Var:
    a, b = _vectors("xy")
    return (a + b) - a


def _product_example() -> Var:
    a, b = _vectors("xy")
    return (a / b) * 2.0 * b


def _quotient_example() -> Var:
    a, b = _vectors("xy")
    return (a * b) / a


_NONZERO = {"x": "nonzero", "y": "nonzero"}


def _family_child(signs: Mapping[type, tuple[int, ...]]) -> Callable[[tuple[Any, ...]], bool]:
    """The index's test for a canonicaliser: it can only act where an input is a leaf (a
    constant to fold or drop, a variable that may cancel) or of the family (terms to
    flatten). ``x - x`` and ``x / x`` of other nodes are ``sub_self`` and ``div_self``."""
    family = (*signs, Negative)
    return lambda ops: any(op is None or op is CONSTANT or type(op) in family for op in ops)


_SUM_CHILD = _family_child(_SUM_SIGNS)
_PRODUCT_CHILD = _family_child(_PRODUCT_SIGNS)

# Cancelling differs where a cancelled term is inf or nan (x - x is nan there, 0 after)
# and, in products, 0 (x * y / x is nan there, y after): see the module docstring.
_rules: list[Rule] = [
    rule(x + y, canonical_sum, name="cancel_in_add", tags=SHAPE_UNSAFE, example=_sum_example),
    rule(
        x - y,
        canonical_sum,
        name="cancel_in_subtract",
        tags=SHAPE_UNSAFE,
        example=_difference_example,
    ),
    rule(
        x * y,
        canonical_product,
        name="cancel_in_multiply",
        tags=SHAPE_UNSAFE,
        domain=_NONZERO,
        example=_product_example,
    ),
    rule(
        x / y,
        canonical_product,
        name="cancel_in_true_divide",
        tags=SHAPE_UNSAFE,
        domain=_NONZERO,
        example=_quotient_example,
    ),
]
for _rule, _child in zip(
    _rules, [_SUM_CHILD, _SUM_CHILD, _PRODUCT_CHILD, _PRODUCT_CHILD], strict=True
):
    _rule.child_test = _child

# --- collecting like terms -----------------------------------------------------------------

k, j = lvar("k"), lvar("j")


def _arithmetic(b: Bindings) -> bool:
    return _kind(b.term) in "iufc" and b.x.dtype == b.term.dtype


def _coefficients(*names: str) -> Callable[[Bindings], bool]:
    """The named bindings are constants that broadcast nothing (every length 1) and have
    the sum's dtype, so a coefficient of x."""

    def guard(b: Bindings) -> bool:
        return _arithmetic(b) and all(
            isinstance(b[n], Constant)
            and b[n].dtype == b.term.dtype
            and all(length == 1 for length in b[n].type.shape)
            for n in names
        )

    guard.__name__ = f"coefficients({', '.join(names)})"
    return guard


def _twice(build: Callable[[Var], Var]) -> Var:
    return build(rt.vector("x"))


def _scaled(b: Bindings, value: np.ndarray) -> Var:
    return constant(np.asarray(value, dtype=b.term.dtype)) * b.x


def _plus_one(b: Bindings) -> Var:
    """(k + 1) * x"""
    return _scaled(b, np.asarray(b.k.data) + 1)


def _sum_of_coefficients(b: Bindings) -> Var:
    """(k + j) * x"""
    return _scaled(b, np.asarray(b.k.data) + np.asarray(b.j.data))


def _minus_one(b: Bindings) -> Var:
    """(k - 1) * x"""
    return _scaled(b, np.asarray(b.k.data) - 1)


def _one_minus(b: Bindings) -> Var:
    """(1 - k) * x"""
    return _scaled(b, 1 - np.asarray(b.k.data))


def _difference_of_coefficients(b: Bindings) -> Var:
    """(k - j) * x"""
    return _scaled(b, np.asarray(b.k.data) - np.asarray(b.j.data))


# A sum of copies of one term (the benchmarks' W4 adds exp(x)*sin(x) 200 times: the
# hash-consed graph has one product and 199 additions of it) becomes one product, built
# up bottom-up: t + t -> 2*t, 2*t + t -> 3*t, ... Exact for integers (modular arithmetic
# agrees) and for x + x in floats; k*x + x rounds once instead of twice.
_like_terms: list[Rule] = [
    rule(x + x, 2 * x, name="collect_twice", when=_arithmetic),
    rule(
        k * x + x,
        _plus_one,
        name="collect_coefficient_plus_one",
        when=_coefficients("k"),
        example=lambda: _twice(lambda v: 3.0 * v + v),
    ),
    rule(
        k * x + j * x,
        _sum_of_coefficients,
        name="collect_coefficients",
        when=_coefficients("k", "j"),
        example=lambda: _twice(lambda v: v * 2.5 + 1.5 * v),
    ),
    rule(
        k * x - x,
        _minus_one,
        name="collect_coefficient_minus_one",
        when=_coefficients("k"),
        example=lambda: _twice(lambda v: 3.0 * v - v),
    ),
    rule(
        x - k * x,
        _one_minus,
        name="collect_one_minus_coefficient",
        when=_coefficients("k"),
        example=lambda: _twice(lambda v: v - 3.0 * v),
    ),
    rule(
        k * x - j * x,
        _difference_of_coefficients,
        name="collect_coefficient_difference",
        when=_coefficients("k", "j"),
        example=lambda: _twice(lambda v: v * 2.5 - 1.5 * v),
    ),
]

rules = RuleSet([*_rules, *_like_terms], name="canonicalize", tags={"canonicalize"})
