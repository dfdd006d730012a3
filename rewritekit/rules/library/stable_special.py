"""The special functions of the PPL in log space: log(ndtr(x)) as log_ndtr(x), log(1 -
ndtr(x)) as log_ndtr(-x), exp(x**2) * erfc(x) as erfcx(x), log(i0(x)) through i0e, and
log(gammaincc(a, x)) by its continued fraction where gammaincc underflows."""

from __future__ import annotations

import numpy as np

import rewritekit.tensor as rt
from rewritekit.ir import Var
from rewritekit.rules.library._stable import (
    REAL,
    as_float,
    computed,
    negate,
    real,
    squared,
    unary_of,
)
from rewritekit.rules.library._support import (
    constant_value,
    factors_may_hold,
    product_factors,
    x,
    y,
    z,
)
from rewritekit.rules.patterns import lvar
from rewritekit.rules.rule import Bindings, order_free, rule

__all__ = ["rules"]

a = lvar("a")

# --- the normal CDF --------------------------------------------------------------------

_log_ndtr_of_negated = computed("log_ndtr(-x)", lambda b: rt.log_ndtr(negate(as_float(b.x))))

# log(ndtr(x)) at x = -40: -inf in the naive form (ndtr underflows), -804.6 as log_ndtr(x).
log_ndtr_of_log_ndtr = rule(
    rt.log(rt.ndtr(x)), rt.log_ndtr(x), name="log_ndtr_of_log_ndtr", when=unary_of("x"), domain=REAL
)
# log(1 - ndtr(x)) at x = 40: -inf in the naive form (1 - ndtr rounds to 0), -804.6 as
# log_ndtr(-x).
log_ndtr_of_log_one_minus_ndtr = rule(
    rt.log(1 - rt.ndtr(x)),
    _log_ndtr_of_negated,
    name="log_ndtr_of_log_one_minus_ndtr",
    when=unary_of("x"),
    domain=REAL,
)
log_ndtr_of_log1p_neg_ndtr = rule(
    rt.log1p(-rt.ndtr(x)),
    _log_ndtr_of_negated,
    name="log_ndtr_of_log1p_neg_ndtr",
    when=unary_of("x"),
    domain=REAL,
)

# --- exp(x**2) * erfc(x) as erfcx(x) ---------------------------------------------------


def _square_argument(v: Var) -> Var | None:
    """``u`` where ``v`` is exp(u**2) (``exp(square(u))``, ``exp(u * u)``, ``exp(u ** 2)``)
    for a float ``u`` (``squared``)."""
    node = v.owner
    return squared(node.inputs[0]) if node is not None and node.op == rt.exp else None


@order_free
def _erfcx_of_product(b: Bindings) -> Var | None:
    """the product with factors exp(u**2) and erfc(u) as erfcx(u) (the other factors kept
    in order)

    At u = 27, exp(u**2) overflows to inf and erfc(u) underflows to 0: their product is
    NaN, erfcx(27) is 0.0209.
    """
    factors = product_factors(b.term)
    for i, f in enumerate(factors):
        u = _square_argument(f)
        if u is None:
            continue
        for j, h in enumerate(factors):
            if j != i and h.owner is not None and h.owner.op == rt.erfc and h.owner.inputs[0] is u:
                kept = [rt.erfcx(u) if k == i else q for k, q in enumerate(factors) if k != j]
                new = kept[0]
                for q in kept[1:]:
                    new = new * q
                return new if new.type == b.term.type else None
    return None


def _erfcx_example() -> Var:
    u = rt.vector("u")
    return rt.exp(rt.square(u)) * rt.erfc(u)


def _erfc_range(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    """Where both factors are finite in float64 (exp(u**2) overflows past 26.6)."""
    return rng.uniform(-4.0, 26.0, size=shape)


erfcx_of_exp_square_times_erfc = rule(
    y * z,
    _erfcx_of_product,
    name="erfcx_of_exp_square_times_erfc",
    when=order_free(real("y", "z")),
    domain={"u": _erfc_range},
    example=_erfcx_example,
)
erfcx_of_exp_square_times_erfc.child_test = factors_may_hold((rt.exp,), (rt.erfc,))

# --- modified Bessel functions ---------------------------------------------------------


def _log_bessel(scaled: object, text: str) -> object:
    return computed(text, lambda b: rt.log(scaled(as_float(b.x))) + rt.abs(as_float(b.x)))  # type: ignore[operator]


# log(i0(x)) at x = 800: inf in the naive form (i0 overflows past 713), 796.3 through i0e.
log_i0_through_i0e = rule(
    rt.log(rt.i0(x)),
    _log_bessel(rt.i0e, "log(i0e(x)) + |x|"),
    name="log_i0_through_i0e",
    when=unary_of("x"),
    domain=REAL,
)
log_i1_through_i1e = rule(
    rt.log(rt.i1(x)),
    _log_bessel(rt.i1e, "log(i1e(x)) + |x|"),
    name="log_i1_through_i1e",
    when=unary_of("x"),
    domain={"x": "positive"},
)

# --- log(gammaincc(a, x)) in the upper tail --------------------------------------------

#: Where the continued fraction takes over (x > max(2a, switch)) and its depth, by dtype:
#: from there on, twelve levels (float64) give log Q(a, x) within 2.2e-15 relative of
#: mpmath for a from 0.01 to 1000 (x up to 50 times the switch); eight give 6.3e-13, far
#: below float32's rounding. gammaincc itself underflows near x = 745 (float64), 104
#: (float32) and 17 (float16), and loses relative precision in the tail before that.
_GAMMAINCC_SWITCH = {"float16": 4.0, "float32": 10.0, "float64": 30.0}
_GAMMAINCC_DEPTH = {"float16": 6, "float32": 8, "float64": 12}


def _log_gammaincc_tail(av: Var, xv: Var, depth: int) -> Var:
    """log Q(a, x) = a log(x) - x - gammaln(a) - log(t), with t Legendre's continued
    fraction of x^a e^-x / Gamma(a, x) = x + 1 - a - 1 (1 - a) / (x + 3 - a - 2 (2 - a) /
    (x + 5 - a - ...)), evaluated from ``depth`` levels down."""
    t = xv + (2 * depth + 1) - av
    for n in range(depth, 0, -1):
        t = xv + (2 * n - 1) - av - n * (n - av) / t
    return av * rt.log(xv) - xv - rt.gammaln(av) - rt.log(t)


def _log_gammaincc(b: Bindings) -> Var | None:
    """log(gammaincc(a, x)) by Legendre's continued fraction where x > max(2a, s), as
    log1p(-gammainc(a, x)) where x < a, else as it is

    Each branch sees only the inputs it is valid for (the double-where trick), so the
    body's x is ``where(far, 1, x)``: the rule declines on that input, its own output.
    """
    if _is_body_input(b.x):
        return None  # the rule's own output: its x is already kept below the switch
    av, xv = as_float(b.a), as_float(b.x)
    dtype = b.term.dtype if b.term.dtype in _GAMMAINCC_SWITCH else "float64"
    far = rt.logical_and(xv > 2 * av, xv > _GAMMAINCC_SWITCH[dtype])
    x_tail = rt.where(far, xv, 2 * rt.abs(av) + (_GAMMAINCC_SWITCH[dtype] + 1))
    x_body = rt.where(far, 1.0, xv)
    tail = _log_gammaincc_tail(av, x_tail, _GAMMAINCC_DEPTH[dtype])
    # below the mean, Q is near 1: log1p(-P) keeps its tiny distance from 1
    body = rt.where(
        x_body < av, rt.log1p(-rt.gammainc(av, x_body)), rt.log(rt.gammaincc(av, x_body))
    )
    new = rt.where(far, tail, body)
    return new if new.type == b.term.type else None


def _is_body_input(v: Var) -> bool:
    """``v`` is ``where(far, 1, x)``, the input this rule gives gammaincc in its body."""
    node = v.owner
    return (
        node is not None
        and node.op == rt.where
        and _is_one(node.inputs[1])
        and node.inputs[0].owner is not None
        and node.inputs[0].owner.op == rt.logical_and
    )


def _is_one(v: Var) -> bool:
    value = constant_value(v)
    return value is not None and value.ndim == 0 and bool(value == 1)


def _gammaincc_tail_example() -> Var:
    return rt.log(rt.gammaincc(rt.vector("a"), rt.vector("x")))


def _shape_range(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    return rng.uniform(0.1, 40.0, size=shape)


def _tail_range(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    """Both sides of the switch, below gammaincc's underflow (float64)."""
    return rng.uniform(0.1, 700.0, size=shape)


log_gammaincc_continued_fraction = rule(
    rt.log(rt.gammaincc(a, x)),
    _log_gammaincc,
    name="log_gammaincc_continued_fraction",
    when=real("a", "x"),
    domain={"a": _shape_range, "x": _tail_range},
    example=_gammaincc_tail_example,
)

#: Order is priority at a node.
rules = [
    log_ndtr_of_log_ndtr,
    log_ndtr_of_log_one_minus_ndtr,
    log_ndtr_of_log1p_neg_ndtr,
    erfcx_of_exp_square_times_erfc,
    log_i0_through_i0e,
    log_i1_through_i1e,
    log_gammaincc_continued_fraction,
]
