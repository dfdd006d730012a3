"""Rules on hypothesis-drawn graphs: the compiled matchers agree with kanren unification,
rewritten graphs compute what the originals compute, and both backends agree on them."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.rules import RuleSet, lvar, rewrite, rule

a, b, c, ax = lvar("a"), lvar("b"), lvar("c"), lvar("ax")
x, y = rt.vector("x", shape=(4,)), rt.vector("y", shape=(4,))
m = rt.matrix("m", shape=(4, 4))


def _same_type(match):
    return match.a.type == match.term.type


#: Rules whose rewrite is exact for finite inputs (up to rounding).
SOUND = RuleSet(
    [
        rule(a * 1, a, name="mul_one", when=_same_type),
        rule(a + 0, a, name="add_zero", when=_same_type),
        rule(rt.negative(-a), a, name="neg_neg"),
        rule(a - (-b), a + b, name="sub_neg"),
        rule(a + (-b), a - b, name="add_neg"),
        rule(rt.log(1 + a), rt.log1p(a), name="log1p"),
        rule(rt.exp(a) - 1, rt.expm1(a), name="expm1"),
        rule(a * b + a * c, a * (b + c), name="factor"),
        rule(rt.sum(a * 2, axis=ax), 2 * rt.sum(a, axis=ax), name="sum_scale"),
        rule(rt.sin(a) * rt.sin(a), rt.square(rt.sin(a)), name="square_sin"),
        rule(rt.tanh(a) * b, b * rt.tanh(a), name="canon_order", when=lambda m: False),
    ],
    name="sound",
)

# Ops, and motifs that the rules above rewrite, so that every rule fires on some graphs
UNARY = [
    rt.exp,
    rt.sin,
    rt.tanh,
    rt.negative,
    lambda v: rt.log(1 + rt.abs(v)),
    lambda v: rt.exp(rt.sin(v)) - 1,
    lambda v: rt.sin(v) * rt.sin(v),
]
BINARY = [
    rt.add,
    rt.subtract,
    rt.multiply,
    lambda u, v: u - (-v),
    lambda u, v: u * v + u * rt.tanh(v),
]
LEAVES = st.sampled_from([x, y, rt.constant(1.0), rt.constant(0.0), rt.constant(2.0)])


def _graphs() -> st.SearchStrategy[rk.Var]:
    def extend(children: st.SearchStrategy[rk.Var]) -> st.SearchStrategy[rk.Var]:
        unary = st.tuples(st.sampled_from(UNARY), children).map(lambda t: t[0](t[1]))
        binary = st.tuples(st.sampled_from(BINARY), children, children).map(
            lambda t: t[0](t[1], t[2])
        )
        reduced = children.map(lambda v: rt.sum(rt.outer(v, v) * 2, axis=0) if v.ndim else v)
        return st.one_of(unary, binary, reduced)

    return st.recursive(LEAVES, extend, max_leaves=12).map(
        lambda v: v + rt.zeros(4) if v.ndim == 0 else v
    )


@given(_graphs())
def test_compiled_matchers_agree_with_kanren(graph):
    for node in rk.toposort(graph):
        for out in node.outputs:
            for r in SOUND:
                assert r.apply(out) is r.apply(out, kanren=True), (r.qualname, rk.dprint(out))
    assert rewrite(graph, SOUND) is rewrite(graph, SOUND, kanren=True)


@settings(max_examples=40)
@given(_graphs(), st.integers(0, 2**32 - 1))
def test_rewritten_graphs_compute_the_same_values(graph, seed):
    rewritten = rewrite(graph, SOUND)
    values = np.random.default_rng(seed).uniform(-2, 2, size=(2, 4))
    before = rk.function([x, y], graph, backend="numpy", rules=None)(*values)
    after = rk.function([x, y], rewritten, backend="numpy", rules=None)(*values)
    assert after.dtype == before.dtype and after.shape == before.shape
    np.testing.assert_allclose(after, before, rtol=1e-9, atol=1e-9, equal_nan=True)


@settings(max_examples=15)
@given(_graphs(), st.integers(0, 2**32 - 1))
def test_backends_agree_on_rewritten_graphs(graph, seed):
    values = np.random.default_rng(seed).uniform(-2, 2, size=(2, 4))
    numpy_fn = rk.function([x, y], graph, backend="numpy", rules=SOUND)
    jax_fn = rk.function([x, y], graph, backend="jax", rules=SOUND)
    assert numpy_fn.graph is jax_fn.graph
    np.testing.assert_allclose(
        np.asarray(jax_fn(*values)), numpy_fn(*values), rtol=1e-12, atol=1e-12, equal_nan=True
    )
