"""Standard library rules: specializing (tag ``specialize``): cheaper forms of the same value.

Powers with small constant exponents become products (``x**3 -> x * square(x)``), sums of
scaled or constant tensors become one multiplication, and linear algebra avoids explicit
inverses and determinants of triangular factors:

    x ** 2                        -> square(x)
    x ** 0.5                      -> sqrt(x)
    x ** -1                       -> reciprocal(x)
    x ** n  (integral, |n| <= 16) -> repeated squaring (reciprocal of it for n < 0)
    sqrt(square(x))               -> abs(x)
    exp(x) * exp(y)               -> exp(x + y)
    sum(a * x)                    -> a * sum(x)              (a a scalar)
    sum(broadcast_to(s, shape))   -> s * count               (s a scalar)
    sum(full(shape, s))           -> s * count
    inv(A) @ b, dot(inv(A), b)    -> solve(A, b)
    inv(inv(A))                   -> A
    det(cholesky(A))              -> prod(diag(cholesky(A)))
    sum(x * y)                    -> dot(x, y)               (x, y vectors)

Every replacement keeps the matched node's dtype and static shape: the right sides are
computed, cast to the node's dtype where the Op computed in it, and a right side whose
type would not fit the node declines (returns None). Three rules carry ``shape_unsafe``:
the sums of a fill (a negative symbolic length is not caught) and ``sum(x * y) -> dot``
for vectors of unknown lengths (a length-1 vector no longer broadcasts); vectors of known
equal lengths have their own, safe, rule.

Example:
    >>> from rewritekit.rules.library.specializing import rules
    >>> x = rt.vector("x")
    >>> rk.rewrite(x**3, rules) is x * rt.square(x)
    True
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import rewritekit.tensor as rt
from rewritekit.ir import Var, as_var
from rewritekit.rules.library._support import a, b, constant_value, scalar_like, x, y
from rewritekit.rules.patterns import lvar
from rewritekit.rules.rule import Bindings, rule
from rewritekit.rules.ruleset import RuleSet

__all__ = ["rules"]

n, s, ax, kd = lvar("n"), lvar("s"), lvar("ax"), lvar("kd")
shape = lvar("shape")

#: The largest |n| for which x**n is rewritten into multiplications.
MAX_SQUARING_EXPONENT = 16


# --- helpers ------------------------------------------------------------------------------


def _fits(new: Var, term: Var) -> bool:
    """``new`` can replace ``term``: the same dtype and rank, and every length ``term``
    knows statically is ``new``'s too."""
    old_shape, new_shape = term.type.shape, new.type.shape
    return (
        new.dtype == term.dtype
        and len(new_shape) == len(old_shape)
        and all(o is None or o == m for o, m in zip(old_shape, new_shape, strict=True))
    )


def _fitted(new: Var | None, term: Var) -> Var | None:
    """``new`` if it can replace ``term`` (see ``_fits``), else None (the rule declines)."""
    return new if new is not None and _fits(new, term) else None


def _in(var: Var, dtype: str) -> Var:
    """``var`` computed in ``dtype`` (itself when it already has that dtype)."""
    return var if var.dtype == dtype else rt.cast(var, dtype)


def _exponent(var: Any) -> float | None:
    """The real exponent a constant holds in all its elements (a complex constant with no
    imaginary part counts), else None."""
    value = constant_value(var)
    if value is None or value.size == 0 or value.dtype.kind not in "iufc":
        return None
    if value.dtype.kind == "c":
        if value.imag.any():
            return None
        value = value.real
    first = value.flat[0].item()
    return float(first) if (value == first).all() and math.isfinite(first) else None


def _by_squaring(base: Var, power: int) -> Var:
    """``base ** power`` (power >= 1) by binary exponentiation: squares of ``base``
    multiplied together, e.g. x**5 = x * square(square(x))."""
    result, factor = None, base
    while True:
        if power & 1:
            result = factor if result is None else result * factor
        power >>= 1
        if not power:
            return result
        factor = rt.square(factor)


def _integer_power(base: Var, power: int) -> Var:
    """``base ** power`` for an integer power, |power| >= 1: the reciprocal of the positive
    power for a negative one (one rounding of the quotient, not |power| of them)."""
    positive = _by_squaring(base, abs(power))
    return positive if power > 0 else rt.reciprocal(positive)


def _power_rule(
    name: str,
    exponent: Any,
    build: Callable[[Var, float], Var | None],
    description: str,
    **info: Any,
) -> Any:
    """A rule ``x ** exponent -> build(x, value)``: ``x`` is cast first to the dtype the
    power is computed in (the result's: Power promotes both operands to it), ``value`` is
    the exponent's (a number matching constants all equal to it, or a pattern variable
    matching any constant), and ``build`` may decline with None. ``description`` (the
    right side in words) is the docstring of the computed right side."""

    def rhs(bindings: Bindings) -> Var | None:
        term = bindings.term
        value = _exponent(term.owner.inputs[1])
        if value is None or term.type.kind not in "iufc":
            return None
        return _fitted(build(_in(bindings.x, term.dtype), value), term)

    rhs.__doc__ = f"{description}, x cast to the power's dtype"
    return rule(x**exponent, rhs, name=name, **info)


def _scalar(var: Var) -> Var:
    """A Var whose static lengths are all 1 as a 0-d Var (broadcasting it is a no-op)."""
    return rt.squeeze(var) if var.ndim else var


# --- powers -------------------------------------------------------------------------------

# Integer x to a negative power is an error in NumPy; such a power keeps its integer dtype,
# so the float replacements below (reciprocal) never fit it and these rules decline.
# Integer bases with a float exponent (int64 ** 2.0 is float64) are cast to the result's
# dtype first, as Power itself does.

power_two_to_square = _power_rule(
    "power_two_to_square", 2, lambda base, _: rt.square(base), "square(x)"
)

# Differs from pow only at a real x = -inf: (-inf) ** 0.5 is inf, sqrt(-inf) is NaN;
# (-0.0) ** 0.5 is 0.0 where sqrt(-0.0) is -0.0 (equal as numbers). NumPy's complex power
# with exponent 0.5 is its complex sqrt.
power_half_to_sqrt = _power_rule(
    "power_half_to_sqrt", 0.5, lambda base, _: rt.sqrt(base), "sqrt(x)", domain={"x": "positive"}
)

power_minus_one_to_reciprocal = _power_rule(
    "power_minus_one_to_reciprocal",
    -1,
    lambda base, _: rt.reciprocal(base),
    "reciprocal(x)",
    domain={"x": "nonzero"},
)


def _small_integer_power(base: Var, value: float) -> Var | None:
    # 2 and -1 have rules of their own above; 0 and 1 (ones, x) are canonicalize's
    power = int(value) if value.is_integer() else None
    if power is None or power in (-1, 0, 1, 2) or abs(power) > MAX_SQUARING_EXPONENT:
        return None
    return _integer_power(base, power)


# Products of squares round |n| times where pow rounds once: a few ulps apart. Negative
# powers overflow or underflow where x ** |n| does (1 / x**16 is inf where x**16 is 0).
power_integer_by_squaring = _power_rule(
    "power_integer_by_squaring",
    n,
    _small_integer_power,
    "products of squares of x (their reciprocal for n < 0), for integral 3 <= |n| <= 16 and n = -2",
    domain={"x": "nonzero"},
    example=lambda: rt.vector("x") ** -5,
)


# --- elementwise --------------------------------------------------------------------------


def _sqrt_square(bindings: Bindings) -> Var | None:
    """abs(x), for float x (an integer square can wrap around: then sqrt(square(x)) is
    not |x|)."""
    if bindings.x.type.kind != "f":
        return None
    return _fitted(rt.abs(bindings.x), bindings.term)


# Also exact where square(x) overflows to inf or underflows to 0 (the original is not).
sqrt_of_square_to_abs = rule(rt.sqrt(rt.square(x)), _sqrt_square, name="sqrt_of_square_to_abs")


def _exp_product(bindings: Bindings) -> Var | None:
    """exp(x + y), for float or complex x and y (a sum of integers could wrap around)."""
    if bindings.x.type.kind not in "fc" or bindings.y.type.kind not in "fc":
        return None
    return _fitted(rt.exp(bindings.x + bindings.y), bindings.term)


# One exp instead of two. Finite where the product is inf * 0 = NaN or overflows (exp(800)
# * exp(-700) is inf; exp(100) is not).
exp_times_exp_to_exp_of_sum = rule(
    rt.exp(x) * rt.exp(y), _exp_product, name="exp_times_exp_to_exp_of_sum"
)


# --- reductions ---------------------------------------------------------------------------


def _scales(bindings: Bindings) -> bool:
    """``a`` is a scalar for ``x``: static lengths all 1 and a rank at most x's, so that
    broadcasting it changes nothing. A guard (not a declining right side), so that the
    engine tries the product's other order when it fails."""
    return scalar_like(bindings.a) and bindings.a.ndim <= bindings.x.ndim


def _sum_of_scaled(bindings: Bindings) -> Var | None:
    """a * sum(x), when the sum accumulates in the product's dtype (float, complex, 64-bit
    ints: a narrow integer product wraps around before the sum widens it)."""
    scale, term = bindings.a, bindings.term
    dtype = term.dtype
    if term.owner.inputs[0].dtype != dtype:
        return None
    total = rt.sum(_in(bindings.x, dtype), axis=bindings.ax, keepdims=bindings.kd)
    return _fitted(_in(_scalar(scale), dtype) * total, term)


# Up to rounding; differs where a is inf or NaN and the sum is over no elements (0 vs NaN).
sum_of_scaled_to_scaled_sum = rule(
    rt.sum(a * x, axis=ax, keepdims=kd),
    _sum_of_scaled,
    name="sum_of_scaled_to_scaled_sum",
    when=_scales,
    example=lambda: rt.sum(2.0 * rt.matrix("x"), axis=1, keepdims=True),
)


def _sum_of_filled(bindings: Bindings) -> Var | None:
    """s * (the product of the reduced lengths), broadcast to the sum's shape, for a
    scalar s (``filled`` below is the matched broadcast_to or Alloc node)."""
    fill, term = bindings.s, bindings.term
    if not scalar_like(fill):
        return None
    filled, dtype = term.owner.inputs[0], term.dtype
    lengths = [rt.shape_i(filled, i) for i in bindings.ax]
    static = [constant_value(length) for length in lengths]
    if all(v is not None for v in static):
        count = math.prod(int(v) for v in static)
        if count:
            value = _in(_scalar(fill), dtype) * as_var(count, dtype=dtype)
        else:  # an empty sum is 0, even of inf or NaN
            value = as_var(0, dtype=dtype)
    else:
        count_var = math.prod(lengths[1:], start=lengths[0])
        value = _in(_scalar(fill), dtype) * rt.cast(count_var, dtype)
    if term.ndim:
        kept = [
            1 if i in bindings.ax else rt.shape_i(filled, i)
            for i in range(filled.ndim)
            if i not in bindings.ax or bindings.kd
        ]
        value = rt.broadcast_to(value, tuple(kept))
    return _fitted(value, term)


# shape_unsafe: with a symbolic length the fill is never built, so a negative length gives
# a number where NumPy raises. A symbolic empty sum of inf or NaN gives NaN, not 0.
sum_of_broadcast_scalar_to_product = rule(
    rt.sum(rt.broadcast_to(s, shape), axis=ax, keepdims=kd),
    _sum_of_filled,
    name="sum_of_broadcast_scalar_to_product",
    tags={"shape_unsafe"},
    example=lambda: rt.sum(
        rt.broadcast_to(rt.scalar("s"), (rt.scalar("n", dtype="int64"), 3, 2)), axis=(0, 2)
    ),
    domain={"n": "natural"},
)

sum_of_full_to_product = rule(
    rt.sum(rt.full(shape, s), axis=ax, keepdims=kd),
    _sum_of_filled,
    name="sum_of_full_to_product",
    tags={"shape_unsafe"},
    example=lambda: rt.sum(
        rt.full((rt.scalar("n", dtype="int64"), 2), rt.scalar("s", dtype="int32")),
        axis=0,
        keepdims=True,
    ),
    domain={"n": "natural"},
)


def _vector_product_to_dot(safe: bool) -> Callable[[Bindings], Var | None]:
    """sum(x * y) over two vectors as dot(x, y). ``safe``: only where neither can broadcast
    at run time (the same vector twice, or static lengths known and equal); otherwise only
    where they may not (no static length 1)."""

    def rhs(bindings: Bindings) -> Var | None:
        """dot(x, y), for two vectors summed over their one axis."""
        left, right = bindings.x, bindings.y
        if left.ndim != 1 or right.ndim != 1 or bindings.kd or bindings.ax != (0,):
            return None
        known = (left.type.shape[0], right.type.shape[0])
        same = left is right or (None not in known and known[0] == known[1])
        if safe != same or (not same and 1 in known):
            return None  # the other rule's case, or a certain broadcast
        return _fitted(rt.dot(left, right), bindings.term)

    return rhs


sum_of_vector_product_to_dot = rule(
    rt.sum(x * y, axis=ax, keepdims=kd),
    _vector_product_to_dot(safe=True),
    name="sum_of_vector_product_to_dot",
    example=lambda: rt.sum(rt.vector("x", shape=(4,)) * rt.vector("y", shape=(4,))),
)

# shape_unsafe: where a vector of unknown length has length 1 at run time, x * y broadcasts
# it and dot raises instead.
sum_of_vector_product_to_dot_unknown_length = rule(
    rt.sum(x * y, axis=ax, keepdims=kd),
    _vector_product_to_dot(safe=False),
    name="sum_of_vector_product_to_dot_unknown_length",
    tags={"shape_unsafe"},
    example=lambda: rt.sum(rt.vector("x") * rt.vector("y")),
)


# --- linear algebra -----------------------------------------------------------------------

_LAPACK_KINDS = "biuf"  # solve rejects float16 and complex operands


def _inv_product_to_solve(matmul: bool) -> Callable[[Bindings], Var | None]:
    """inv(A) @ b as solve(A, b). ``dot`` only for a single matrix A and b a vector or a
    matrix (dot does not broadcast stacks as solve does); matmul for any stacks."""

    def rhs(bindings: Bindings) -> Var | None:
        """solve(a, b), for b of a dtype and rank that solve accepts."""
        matrix, right = bindings.a, bindings.b
        if right.ndim == 0 or right.dtype == "float16" or right.type.kind not in _LAPACK_KINDS:
            return None
        if not matmul and (matrix.ndim != 2 or right.ndim > 2):
            return None
        return _fitted(rt.linalg.solve(matrix, right), bindings.term)

    return rhs


# Out of the domain (singular A) NumPy raises LinAlgError on both sides.
matmul_inv_to_solve = rule(
    rt.linalg.inv(a) @ b,
    _inv_product_to_solve(matmul=True),
    name="matmul_inv_to_solve",
    domain={"a": "spd"},
    example=lambda: rt.linalg.inv(rt.matrix("a", shape=(3, 3))) @ rt.matrix("b", shape=(3, 2)),
)

dot_inv_to_solve = rule(
    rt.dot(rt.linalg.inv(a), b),
    _inv_product_to_solve(matmul=False),
    name="dot_inv_to_solve",
    domain={"a": "spd"},
    example=lambda: rt.dot(rt.linalg.inv(rt.matrix("a", shape=(3, 3))), rt.vector("b")),
)


def _inv_inv(bindings: Bindings) -> Var | None:
    """a, cast to the inverse's dtype (inv computes integer matrices in float64)."""
    return _fitted(_in(bindings.a, bindings.term.dtype), bindings.term)


# Changes behaviour out of the domain: for a singular A NumPy raises, the rewrite gives A.
inv_of_inv = rule(
    rt.linalg.inv(rt.linalg.inv(a)),
    _inv_inv,
    name="inv_of_inv",
    domain={"a": "spd"},
    example=lambda: rt.linalg.inv(rt.linalg.inv(rt.matrix("a", shape=(3, 3)))),
)


def _det_cholesky(bindings: Bindings) -> Var | None:
    """prod(diag(cholesky(a))), for one matrix a (the factor is triangular: its
    determinant is the product of its diagonal; diag takes one matrix)."""
    factor = bindings.term.owner.inputs[0]
    if factor.ndim != 2:
        return None
    return _fitted(rt.prod(rt.linalg.diag(factor)), bindings.term)


det_of_cholesky_to_diag_prod = rule(
    rt.linalg.det(rt.linalg.cholesky(a)),
    _det_cholesky,
    name="det_of_cholesky_to_diag_prod",
    domain={"a": "spd"},
    example=lambda: rt.linalg.det(rt.linalg.cholesky(rt.matrix("a", shape=(3, 3)))),
)


rules = RuleSet(
    [
        power_two_to_square,
        power_half_to_sqrt,
        power_minus_one_to_reciprocal,
        power_integer_by_squaring,
        sqrt_of_square_to_abs,
        exp_times_exp_to_exp_of_sum,
        sum_of_scaled_to_scaled_sum,
        sum_of_broadcast_scalar_to_product,
        sum_of_full_to_product,
        sum_of_vector_product_to_dot,
        sum_of_vector_product_to_dot_unknown_length,
        matmul_inv_to_solve,
        dot_inv_to_solve,
        inv_of_inv,
        det_of_cholesky_to_diag_prod,
    ],
    name="specialize",
    tags={"specialize"},
)
