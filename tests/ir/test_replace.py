import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import rewritekit.tensor as rt
from rewritekit.errors import GraphTypeError, ReplaceError
from rewritekit.ir import constant, dprint, intern_stats, replace, toposort
from tests.conftest import shallow_recursion
from tests.ir.helpers import MinMax


def _balanced_sum(terms):
    while len(terms) > 1:
        pairs = [terms[i] + terms[i + 1] for i in range(0, len(terms) - 1, 2)]
        terms = pairs + ([terms[-1]] if len(terms) % 2 else [])
    return terms[0]


def test_replacing_one_leaf_of_a_large_graph_rebuilds_only_its_paths():
    leaves = [rt.scalar(f"x{i}") for i in range(50_001)]
    y = _balanced_sum([rt.exp(leaf) for leaf in leaves])
    old_nodes = toposort(y)
    assert len(old_nodes) >= 100_000
    old_text = dprint(y, max_depth=4)
    # The nodes that depend on leaf 0: its exp and one add per level of the sum.
    depending = {leaves[0]}
    for node in old_nodes:
        if any(i in depending for i in node.inputs):
            depending.update(node.outputs)
    expected_new = len(depending) - 1
    assert expected_new == 1 + 16  # exp + ceil(log2(50_001)) adds
    z = rt.scalar("z")
    before = intern_stats().applies_created
    y2 = replace(y, {leaves[0]: z})
    assert intern_stats().applies_created - before == expected_new
    new_nodes = toposort(y2)
    shared = set(old_nodes) & set(new_nodes)
    assert len(shared) == len(old_nodes) - expected_new
    # the old graph is unchanged and still valid
    assert toposort(y) == old_nodes
    assert dprint(y, max_depth=4) == old_text
    assert replace(y2, {z: leaves[0]}) is y


def test_replace_returns_the_same_structure():
    x, z = rt.vector("x"), rt.vector("z")
    assert replace(rt.exp(x), {x: z}) is rt.exp(z)
    assert replace([rt.exp(x), x], {x: z}) == [rt.exp(z), z]
    assert replace((rt.exp(x),), {x: z}) == (rt.exp(z),)
    assert replace(rt.exp(x), {}) is rt.exp(x)


def test_replace_an_intermediate_node_and_with_a_graph_of_the_old_var():
    x = rt.vector("x")
    e = rt.exp(x)
    y = rt.log(e) + x
    assert replace(y, {e: x}) is rt.log(x) + x
    # Replacements are not applied inside replacement values.
    assert replace(y, {x: rt.exp(x)}) is rt.log(rt.exp(rt.exp(x))) + rt.exp(x)


def test_replace_with_a_value_makes_a_constant_of_the_old_dtype():
    x = rt.vector("x", dtype="float32")
    s = rt.scalar("s", dtype="float32")
    y = x * s
    assert replace(y, {s: 2}) is x * constant(2, dtype="float32")


def test_replace_may_refine_a_static_shape():
    x = rt.vector("x")
    known = rt.vector("k", shape=(3,))
    y = replace(rt.exp(x), {x: known})
    assert y.type.shape == (3,)


def test_replace_keeps_multi_output_nodes_together():
    x, z = rt.vector("x"), rt.vector("z")
    lo, hi = MinMax()(x)
    new_lo, new_hi = replace([lo, hi], {x: z})
    assert new_lo.owner is new_hi.owner
    assert (new_lo, new_hi) == MinMax()(z)


@pytest.mark.parametrize(
    ("new", "match"),
    [
        (rt.vector("f32", dtype="float32"), r"float64\[\?\] by .* float32\[\?\]"),
        (rt.matrix("m"), r"float64\[\?\] by .* float64\[\?,\?\]"),
    ],
)
def test_replace_rejects_type_changes(new, match):
    x = rt.vector("x")
    with pytest.raises(ReplaceError, match="replace: cannot replace <Var 'x' float64"):
        replace(rt.exp(x), {x: new})
    with pytest.raises(ReplaceError, match=match):
        replace(rt.exp(x), {x: new})


def test_replace_rejects_contradicting_static_lengths_and_bad_keys():
    x = rt.vector("x", shape=(3,))
    with pytest.raises(ReplaceError, match="static lengths must agree"):
        replace(rt.exp(x), {x: rt.vector("y", shape=(4,))})
    with pytest.raises(GraphTypeError, match="replace: keys must be Vars, got str"):
        replace(rt.exp(x), {"x": x})
    with pytest.raises(GraphTypeError, match="replace: value for"):
        replace(rt.exp(x), {x: "text"})


def test_deep_replace_needs_no_recursion():
    x = rt.vector("x")
    y = x
    for _ in range(100_000):
        y = rt.exp(y)
    with shallow_recursion():
        y2 = replace(y, {x: rt.vector("z")})
    assert len(toposort(y2)) == 100_000


# --- property: replace(build(x), {x: z}) is build(z) -----------------------------------

UNARY = [rt.exp, rt.log, rt.log1p, rt.negative]
BINARY = [rt.add, rt.subtract, rt.multiply, rt.true_divide]

programs = st.lists(
    st.tuples(
        st.sampled_from(range(len(UNARY) + len(BINARY))),
        st.integers(0, 1000),
        st.integers(0, 1000),
    ),
    min_size=1,
    max_size=25,
)


def _build(program, leaves):
    """An expression DAG: each step applies an Op to earlier values (shared freely)."""
    values = list(leaves)
    for op_index, a, b in program:
        left = values[a % len(values)]
        right = values[b % len(values)]
        if op_index < len(UNARY):
            values.append(UNARY[op_index](left))
        else:
            values.append(BINARY[op_index - len(UNARY)](left, right))
    return values[-1]


@given(programs, st.integers(0, 2))
def test_replace_equals_building_with_the_new_leaf(program, which):
    leaves = [rt.vector("a"), rt.vector("b"), rt.scalar("c")]
    new = rt.vector("n") if which < 2 else rt.scalar("n")
    y = _build(program, leaves)
    swapped = list(leaves)
    swapped[which] = new
    assert replace(y, {leaves[which]: new}) is _build(program, swapped)


@given(programs)
def test_replace_with_nothing_to_replace_creates_nothing(program):
    leaves = [rt.vector("a"), rt.vector("b"), rt.scalar("c")]
    y = _build(program, leaves)
    before = intern_stats().applies_created
    assert replace(y, {rt.vector("unused"): rt.vector("other")}) is y
    assert intern_stats().applies_created == before


def test_graph_values_are_not_mutated_by_replace():
    x = rt.vector("x")
    data = np.arange(3.0)
    y = rt.exp(x) * data
    before = [(n.op, n.inputs) for n in toposort(y)]
    replace(y, {x: rt.vector("z")})
    assert [(n.op, n.inputs) for n in toposort(y)] == before
