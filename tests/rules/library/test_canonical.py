"""The canonical rules (phase ``canonicalize``): each fires on its example and is sound on
its domain, keeps the dtype and the runtime shape (broadcasting where an operand it keeps
is smaller), declines where a rewrite would change a value, keeps NumPy's NaN and inf
values, and rewritten random graphs compute what the originals compute."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.rules.library.canonical import rules
from rewritekit.tensor.elemwise import Cast
from rewritekit.tensor.logic import LogicalAnd, LogicalOr
from rewritekit.testing import check_rule

x = rt.vector("x")
y = rt.vector("y")
m = rt.matrix("m")
xf = rt.vector("xf", dtype="float32")
xi = rt.vector("xi", dtype="int64")
xb = rt.vector("xb", dtype="bool")
xc = rt.vector("xc", dtype="complex128")
xu8 = rt.vector("xu8", dtype="uint8")
xi8 = rt.vector("xi8", dtype="int8")
xi32 = rt.vector("xi32", dtype="int32")

SPECIAL = np.array([0.0, -0.0, -1.0, 1.0, -2.0, 2.0, 0.5, np.nan, np.inf, -np.inf])


def _rewrite(graph: rk.Var) -> rk.Var:
    return rk.rewrite(graph, rules)


def _fired(graph: rk.Var) -> dict[str, int]:
    return rk.rewrite(graph, rules, trace=True)[1].fired()


def _values(inputs: list[rk.Var], graph: rk.Var, *values: object) -> tuple[np.ndarray, ...]:
    """``graph`` and its rewrite evaluated on the NumPy backend at ``values``."""
    f = rk.function(inputs, [graph, _rewrite(graph)], backend="numpy", rules=None)
    with np.errstate(all="ignore"):
        return tuple(np.asarray(v) for v in f(*values))


def _same(inputs: list[rk.Var], graph: rk.Var, *values: object) -> np.ndarray:
    """Assert the rewrite keeps ``graph``'s type, shape and values (up to rounding, NaN
    equal to NaN); return them."""
    assert _rewrite(graph).type == graph.type
    before, after = _values(inputs, graph, *values)
    assert before.dtype == after.dtype and before.shape == after.shape
    if before.dtype.kind in "fc":
        np.testing.assert_allclose(after, before, rtol=1e-12, atol=0, equal_nan=True)
    else:
        np.testing.assert_array_equal(after, before)
    return after


# --- the set as a whole ---------------------------------------------------------------------


def test_the_set_is_named_tagged_and_its_names_are_unique():
    names = [r.name for r in rules]
    assert len(names) == len(set(names))
    assert all(re.fullmatch(r"[a-z][a-z0-9_]*", n) for n in names)
    assert all(r.qualname == f"canonicalize.{r.name}" for r in rules)
    assert all("canonicalize" in r.tags for r in rules)
    unsafe = {r.name for r in rules.including("shape_unsafe")}
    assert unsafe == {
        "where_true_condition",
        "where_false_condition",
        "where_same_branches",
        "logical_and_true",
        "logical_or_false",
        "logical_and_false",
        "logical_or_true",
    }


@pytest.mark.parametrize("rule", list(rules), ids=lambda r: r.name)
def test_every_rule_fires_on_its_example_and_is_sound(rule):
    for seed in range(3):
        check_rule(rule, seed=seed)


@pytest.mark.parametrize("rule", list(rules), ids=lambda r: r.name)
def test_kanren_matching_agrees(rule):
    graph = rk.testing.example_graph(rule)
    assert rk.rewrite(graph, rules, kanren=True) is _rewrite(graph)


# --- arithmetic identities ----------------------------------------------------------------


def test_identities_give_the_operand_itself():
    for graph in (x + 0, 0 + x, x - 0, x * 1, 1.0 * x, x / 1, x**1, x + np.zeros(1)):
        assert _rewrite(graph) is x, graph
    assert _rewrite(rt.negative(rt.negative(x))) is x
    assert _rewrite(0 - x) is -x
    assert _rewrite(xi * 1) is xi


def test_identities_cast_where_the_operation_promotes():
    assert _rewrite(xi + 0.0) is rt.cast(xi, "float64")
    assert _rewrite(xi / 1) is rt.cast(xi, "float64")
    assert _rewrite(xb * 1) is rt.cast(xb, "int64")
    assert _rewrite(xf * np.float64(1)) is rt.cast(xf, "float64")
    _same([xi], xi + 0.0, np.array([1, -2, 3]))
    _same([xu8], 0 - xu8, np.array([0, 1, 255], dtype=np.uint8))  # wraps both ways


def test_identities_broadcast_where_the_constant_is_larger():
    graph = x + np.zeros((4, 1))
    assert _rewrite(graph).type == graph.type
    assert _same([x], graph, np.arange(5.0)).shape == (4, 5)
    assert _same([x], x * np.ones((2, 3)), np.arange(3.0)).shape == (2, 3)
    assert _same([x], x**1, np.arange(3.0)).shape == (3,)
    # the kept operand still has to broadcast: a wrong length fails after the rewrite too
    f = rk.function([x], _rewrite(x + np.zeros(3)), backend="numpy", rules=None)
    with pytest.raises(ValueError):
        f(np.arange(4.0))


def test_pow_zero_is_one_everywhere():
    assert _same([x], x**0, SPECIAL).tolist() == [1.0] * len(SPECIAL)
    assert _same([xi], xi**0, np.array([0, -3, 5])).tolist() == [1, 1, 1]
    assert _same([x], x ** np.zeros((2, 1)), SPECIAL).shape == (2, len(SPECIAL))


def test_mul_zero_is_for_integers_only():
    # inf * 0 and nan * 0 are nan: floats keep the product
    assert _rewrite(x * 0) is x * 0
    assert _rewrite(xc * 0) is xc * 0
    assert _fired(xi * 0) == {"canonicalize.mul_zero": 1}
    assert _same([xi], xi * 0, np.array([1, -2, 3])).tolist() == [0, 0, 0]
    assert _same([xi], xi * 0.0, np.array([1, -2])).dtype == np.float64
    assert _same([xi], xi * np.zeros((2, 1), dtype=np.int64), np.arange(3)).shape == (2, 3)
    assert _same([xb], xb * False, np.array([True, False])).dtype == bool


def test_self_cancellation_documented_outside_the_finite_numbers():
    assert _same([xi], xi - xi, np.array([1, 2])).tolist() == [0, 0]
    _, after = _values([x], x - x, np.array([np.inf, np.nan, 1.0]))
    assert after.tolist() == [0.0, 0.0, 0.0]  # documented: x - x is nan there
    assert _same([xi], xi / xi, np.array([1, 3])).dtype == np.float64


# --- negations ----------------------------------------------------------------------------


def test_negations_move_and_cancel():
    assert _rewrite(x - (-y)) is x + y
    assert _rewrite(x + (-y)) is x - y
    assert _rewrite((-y) + x) is x - y
    assert _rewrite((-x) * (-y)) is x * y
    assert _rewrite(-(x - y)) is -(x - y)  # kept: see canonical.py (XLA fusion across steps)
    assert _rewrite(rt.abs(-x)) is rt.abs(x)
    assert _rewrite(rt.abs(-xc)) is rt.abs(xc)


def test_negations_decline_where_the_promotion_would_change_an_overflow():
    # -(-128) is -128 in int8, but 128 once promoted to int16 with the uint8 operand
    graph = xu8 + (-xi8)
    assert _rewrite(graph) is graph
    yi8 = rt.vector("yi8", dtype="int8")
    assert _rewrite(xi8 + (-yi8)) is xi8 - yi8
    assert _rewrite(xf + (-x)) is xf - x  # negating a float is exact in any width
    # abs of a wrapped unsigned negation is not abs(x)
    assert _rewrite(rt.abs(-xu8)) is rt.abs(-xu8)
    _same([xu8, xi8], graph, np.array([1, 2], np.uint8), np.array([-128, 5], np.int8))


# --- where --------------------------------------------------------------------------------


def test_where_with_a_constant_condition_picks_a_branch():
    assert _rewrite(rt.where(True, x, 2.0)) is x
    assert _rewrite(rt.where(np.array([2, 3]), x, 1.0)) is rt.broadcast_to(x, (2,))  # truthy
    assert _rewrite(rt.where(np.array([np.nan]), x, 1.0)) is x  # nan is truthy
    assert _rewrite(rt.where(np.zeros(3), 1.0, x)) is rt.broadcast_to(x, (3,))
    mixed = rt.where(np.array([True, False]), x, y)
    assert _rewrite(mixed) is mixed


def test_where_keeps_the_dtype_and_the_broadcast_shape_of_a_smaller_branch():
    assert _same([x, m], rt.where(False, m, x), np.ones(3), np.ones((2, 1))).shape == (2, 3)
    assert _same([xi, x], rt.where(True, xi, x), np.array([1, 2]), np.ones(2)).dtype == float
    assert _same([x, m], rt.where(m > 0, x, x), np.arange(3.0), np.ones((2, 3))).shape == (2, 3)
    assert _same([x], rt.where(np.ones((2, 1)), x, 0.0), np.arange(3.0)).shape == (2, 3)


def test_where_rules_are_shape_unsafe_and_trust_static_types():
    # a branch of the node's static type is kept as is: an unknown length 1 that the
    # dropped operands would broadcast at run time is not (documented, tag shape_unsafe)
    assert _rewrite(rt.where(x > 0, y, y)) is y
    assert _rewrite(rt.where(True, x, y)) is x
    _, after = _values([x, y], rt.where(True, x, y), np.ones(1), np.ones(5))
    assert after.shape == (1,)


def test_where_of_a_negated_condition_swaps_the_branches():
    assert _rewrite(rt.where(rt.logical_not(m > 0), x, y)) is rt.where(m > 0, y, x)
    cond = np.array([0.0, np.nan, 2.0])
    _same([m, x, y], rt.where(rt.logical_not(m), x, y), cond[None], np.zeros(3), np.ones(3))


# --- self-comparisons -----------------------------------------------------------------------


def test_self_comparisons_keep_nan_semantics():
    assert _rewrite(rt.equal(x, x)) is rt.logical_not(rt.isnan(x))
    assert _rewrite(rt.not_equal(x, x)) is rt.isnan(x)
    for op in (rt.equal, rt.not_equal, rt.less, rt.less_equal, rt.greater, rt.greater_equal):
        _same([x], op(x, x), SPECIAL)
        _same([xi], op(xi, xi), np.array([1, -1]))
    assert _rewrite(rt.equal(xi, xi)).owner.op != rt.equal
    assert _same([xc], rt.equal(xc, xc), np.array([1 + 1j, complex(np.nan, 0)])).tolist() == [
        True,
        False,
    ]


def test_idempotent_binary_ops():
    assert _rewrite(rt.maximum(x, x)) is x
    assert _rewrite(rt.minimum(xi, xi)) is xi
    assert _rewrite(rt.logical_and(xb, xb)) is xb
    assert _rewrite(rt.logical_not(rt.logical_not(xb))) is xb
    for graph in (rt.logical_or(x, x), rt.logical_not(rt.logical_not(x))):
        assert _same([x], graph, SPECIAL).dtype == bool  # nan is truthy


# --- casts --------------------------------------------------------------------------------


def test_lossless_inner_casts_are_dropped():
    assert _rewrite(rt.cast(rt.cast(xi32, "float64"), "int32")) is xi32
    assert _rewrite(rt.cast(rt.cast(xi32, "int64"), "int8")) is rt.cast(xi32, "int8")
    assert _rewrite(rt.cast(rt.cast(xf, "float64"), "float32")) is xf
    assert _rewrite(rt.cast(rt.cast(xf, "float64"), "float16")) is rt.cast(xf, "float16")
    assert _rewrite(Cast("float64")(x)) is x
    big = np.array([2**31 - 1, -(2**31), 300, -129], dtype=np.int32)
    _same([xi32], rt.cast(rt.cast(xi32, "int64"), "int8"), big)


@pytest.mark.parametrize(
    ("source", "inner", "outer"),
    [
        ("int64", "float64", "int64"),  # 2**53 + 1 does not survive float64
        ("int32", "float32", "int32"),
        ("int32", "float64", "int8"),  # float -> int8 of 300 is undefined; int32 -> int8 wraps
        ("float64", "float32", "float64"),  # narrowing rounds
        ("float64", "int64", "float64"),  # truncates
    ],
)
def test_lossy_inner_casts_are_kept(source, inner, outer):
    v = rt.vector("v", dtype=source)
    graph = rt.cast(rt.cast(v, inner), outer)
    assert _rewrite(graph) is graph


# --- inverse pairs ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "build",
    [
        lambda v: rt.exp(rt.log(v)),
        lambda v: rt.expm1(rt.log1p(v)),
        lambda v: rt.tanh(rt.arctanh(v)),
        lambda v: rt.sin(rt.arcsin(v)),
        lambda v: rt.cos(rt.arccos(v)),
        lambda v: rt.cosh(rt.arccosh(v)),
        lambda v: rt.sigmoid(rt.logit(v)),
        lambda v: rt.reciprocal(rt.reciprocal(v)),
    ],
)
def test_inverse_pairs_keep_nan_and_inf_out_of_the_domain(build):
    graph = build(x)
    assert len(_fired(graph)) == 1
    before, after = _values([x], graph, SPECIAL)
    np.testing.assert_allclose(after, before, rtol=1e-12, atol=1e-15, equal_nan=True)
    np.testing.assert_array_equal(np.isnan(after), np.isnan(before))


def test_inverse_pairs_give_the_argument():
    assert _rewrite(rt.exp(rt.log(x))) is rt.where(x < 0, np.nan, x)
    assert _rewrite(rt.log(rt.exp(x))) is x
    assert _rewrite(rt.log1p(rt.expm1(x))) is x
    assert _rewrite(rt.sinh(rt.arcsinh(x))) is x
    assert _rewrite(rt.tan(rt.arctan(x))) is x
    assert _rewrite(rt.reciprocal(rt.reciprocal(xf))) is xf
    # integer arguments compute in float64: the rewrite casts
    assert _rewrite(rt.log(rt.exp(xi))) is rt.cast(xi, "float64")
    assert _same([xi], rt.exp(rt.log(xi)), np.array([0, -1, 3])).dtype == np.float64


def test_log_of_exp_declines_complex_and_is_exact_where_exp_overflows():
    assert _rewrite(rt.log(rt.exp(xc))) is rt.log(rt.exp(xc))  # the imaginary part wraps
    assert _rewrite(rt.exp(rt.log(xc))) is rt.exp(rt.log(xc))
    before, after = _values([x], rt.log(rt.exp(x)), np.array([1000.0, -1000.0]))
    assert after.tolist() == [1000.0, -1000.0] and before.tolist() == [np.inf, -np.inf]


def test_arcsinh_of_sinh_is_left_alone():
    graph = rt.arcsinh(rt.sinh(x))
    assert _rewrite(graph) is graph


# --- idempotent functions -----------------------------------------------------------------


def test_idempotent_functions():
    assert _rewrite(rt.abs(rt.abs(x))) is rt.abs(x)
    assert _rewrite(rt.abs(rt.abs(xc))) is rt.abs(xc)
    assert _rewrite(rt.sign(rt.sign(x))) is rt.sign(x)
    assert _rewrite(rt.floor(rt.ceil(x))) is rt.ceil(x)
    assert _rewrite(rt.ceil(rt.floor(x))) is rt.floor(x)
    assert _rewrite(rt.floor(rt.sign(x))) is rt.sign(x)
    assert _rewrite(rt.ceil(rt.round(x, -1))) is rt.round(x, -1)
    assert _rewrite(rt.round(rt.floor(x), 3)) is rt.floor(x)
    assert _rewrite(rt.floor(xi)) is xi
    assert _rewrite(rt.round(xi, 2)) is xi
    _same([x], rt.ceil(rt.floor(x)) + rt.abs(rt.abs(x)) + rt.sign(rt.sign(x)), SPECIAL)


def test_rounding_is_kept_where_it_changes_values():
    for graph in (rt.floor(x), rt.round(rt.round(x, 2)), rt.round(xi, -1), rt.floor(xf * 0.5)):
        assert _rewrite(graph) is graph, graph
    assert _rewrite(rt.round(rt.floor(x), -1)) is rt.round(rt.floor(x), -1)


# --- property: rewritten random graphs compute the same values ----------------------------

# Wrappers that the rules remove; arguments of the inverse pairs are kept in their domains,
# and nothing produces nan or inf (x - x -> 0 differs there, as documented).
_UNARY = [
    lambda e: e + 0,
    lambda e: e * 1,
    lambda e: e - 0,
    lambda e: e / 1,
    lambda e: e**1,
    lambda e: e**0,
    lambda e: 0 - e,
    lambda e: rt.negative(rt.negative(e)),
    lambda e: rt.abs(-e),
    lambda e: rt.abs(rt.abs(e)),
    lambda e: rt.sign(rt.sign(e)),
    lambda e: rt.floor(rt.ceil(e)),
    lambda e: rt.round(rt.floor(e), 1),
    lambda e: rt.exp(rt.log(rt.abs(e))),
    lambda e: rt.log(rt.exp(rt.tanh(e))),
    lambda e: rt.log1p(rt.expm1(rt.tanh(e))),
    lambda e: rt.expm1(rt.log1p(rt.abs(e))),
    lambda e: rt.reciprocal(rt.reciprocal(e)),
    lambda e: rt.tanh(rt.arctanh(rt.tanh(e))),
    lambda e: rt.sinh(rt.arcsinh(e)),
    lambda e: rt.cos(rt.arccos(rt.tanh(e))),
    lambda e: rt.cosh(rt.arccosh(1 + rt.abs(rt.tanh(e)))),
    lambda e: rt.sigmoid(rt.logit(rt.sigmoid(e))),
    lambda e: rt.where(True, e, 0.5),
    lambda e: rt.where(np.zeros((2, 1)), 0.5, e),
    lambda e: rt.where(rt.logical_not(e > 0), e, -e),
    lambda e: rt.where(rt.equal(e, e), e, 1.0) + (e - e),
    lambda e: rt.cast(rt.cast(e, "float32"), "float64"),
]
_BINARY = [
    lambda e, f: e + f,
    lambda e, f: e * f,
    lambda e, f: e - (-f),
    lambda e, f: e + (-f),
    lambda e, f: (-e) * (-f),
    lambda e, f: -(e - f),
    lambda e, f: rt.maximum(e, e) - rt.minimum(f, f),
    lambda e, f: rt.where(e > f, e, e) + rt.where(False, e, f),
]
_LEAVES = [x, y, rt.cast(xi * 0 + xi * 1, "float64")]


def _graphs() -> st.SearchStrategy[rk.Var]:
    def extend(children: st.SearchStrategy[rk.Var]) -> st.SearchStrategy[rk.Var]:
        unary = st.tuples(st.sampled_from(_UNARY), children).map(lambda t: t[0](t[1]))
        binary = st.tuples(st.sampled_from(_BINARY), children, children).map(
            lambda t: t[0](t[1], t[2])
        )
        return unary | binary

    return st.recursive(st.sampled_from(_LEAVES), extend, max_leaves=6)


@settings(max_examples=25, deadline=None)
@given(graph=_graphs(), seed=st.integers(0, 2**16))
def test_rewritten_random_graphs_compute_the_same_values(graph, seed):
    rng = np.random.default_rng(seed)
    values = [rng.uniform(-3, 3, 4), rng.uniform(-3, 3, 4), rng.integers(-5, 6, 4)]
    rewritten = _rewrite(graph)
    assert rewritten.type == graph.type
    f = rk.function([x, y, xi], [graph, rewritten], backend="numpy", rules=None)
    with np.errstate(all="ignore"):
        before, after = (np.asarray(v) for v in f(*values))
    assert before.shape == after.shape
    np.testing.assert_allclose(after, before, rtol=1e-9, atol=1e-12, equal_nan=True)


def test_a_true_operand_of_logical_and_is_dropped_unless_it_broadcasts():
    x, flag = rt.vector("x"), rt.vector("flag", dtype="bool")
    assert rk.rewrite(rt.logical_and(x > 0, True), rules) is (x > 0)
    assert rk.rewrite(rt.logical_or(False, flag), rules) is flag
    widened = rt.logical_and(rt.scalar("s") > 0, np.ones(3, dtype=bool))
    assert rk.rewrite(widened, rules) is widened


def test_a_false_operand_of_logical_and_makes_it_false():
    x, flag = rt.vector("x"), rt.vector("flag", dtype="bool")
    cases = (
        (rt.logical_and(x > 0, False), x, np.ones(4)),
        (rt.logical_or(True, flag), flag, [0] * 4),
    )
    for graph, source, value in cases:
        rewritten = rk.rewrite(graph, rules)
        assert not any(isinstance(n.op, (LogicalAnd, LogicalOr)) for n in rk.toposort(rewritten))
        expected = rk.function([source], graph, backend="numpy")(np.asarray(value, source.dtype))
        got = rk.function([source], rewritten, backend="numpy")(np.asarray(value, source.dtype))
        np.testing.assert_array_equal(got, expected)
    s = rt.scalar("s")  # the guard of d/dx x ** 2 at a constant exponent
    assert rk.rewrite(rt.where((s == 0) & False, 1.0, s), rules) is s
    widened = rt.logical_and(rt.scalar("s") > 0, np.zeros(3, dtype=bool))
    assert rk.rewrite(widened, rules) is widened
