"""Rewriting loops: the loop rules of the standard library (hoisting, tidy inputs,
vectorized scans, folded branches and while loops), the loop pass (twin scans merged,
unused outputs and carries dropped), and the rules run inside loop bodies. Every rewrite
is checked for its structure and for its values on the NumPy and JAX backends."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rewritekit as rk
import rewritekit.random as rr
import rewritekit.tensor as rt
from rewritekit.rules import RuleSet
from rewritekit.rules.library import loops
from rewritekit.rules.library.loop_pass import simplify_loops
from rewritekit.tensor.control import Cond, Scan, While
from rewritekit.tensor.transcendental import Tanh
from rewritekit.testing import check_rule

RTOL, ATOL = 1e-9, 1e-12
XS = np.array([0.3, -1.2, 2.5, 0.7])
LOOP_RULES = list(loops.rules)
HOIST, TIDY, VECTORIZE, FOLD_COND, FOLD_WHILE = (
    loops.rules[name]
    for name in (
        "hoist_loop_invariants",
        "tidy_loop_inputs",
        "vectorize_scan",
        "fold_constant_cond",
        "fold_false_while",
    )
)


def loop_nodes(graph, kind=(Scan, While, Cond)):
    outs = graph if isinstance(graph, list) else [graph]
    return [n for n in rk.toposort(outs) if isinstance(n.op, kind)]


def agree(inputs, original, rewritten, *args, rtol=RTOL, atol=ATOL):
    """``rewritten`` equals ``original`` (run unrewritten on NumPy), on both backends."""
    single = not isinstance(original, list)
    want = rk.function(inputs, original, backend="numpy", rules=None)(*args)
    for backend in ("numpy", "jax"):
        got = rk.function(inputs, rewritten, backend=backend, rules=None)(*args)
        for g, w in zip([got] if single else got, [want] if single else want, strict=True):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=atol)


def alone(rule, graph):
    return rk.rewrite(graph, RuleSet([rule]))


# --- the rules, one by one ---------------------------------------------------------------


@pytest.mark.parametrize("rule", LOOP_RULES, ids=lambda r: r.name)
def test_each_rule_fires_on_its_example_and_keeps_its_value(rule):
    assert {"loops", "canonicalize"} <= rule.tags
    assert rule.qualname in {r.qualname for r in rk.rules.default}
    for seed in range(3):
        check_rule(rule, seed=seed)


def test_hoisting_moves_invariant_nodes_out_of_a_scan():
    x, k = rt.vector("x"), rt.scalar("k")
    final, ys = rk.scan(lambda c, xi: (c + xi * rt.exp(k), rt.sin(c) * rt.cos(k)), 1.0, x)
    new_final, new_ys = alone(HOIST, [final, ys])
    (node,) = loop_nodes(new_ys)
    assert new_final.owner is node
    assert rt.exp(k) in node.inputs and rt.cos(k) in node.inputs
    body_ops = {type(n.op).__name__ for n in rk.toposort(list(node.op.body.outputs))}
    assert body_ops == {"Add", "Multiply", "Sin"}  # no Exp, no Cos: they run once
    agree([x, k], [final, ys], [new_final, new_ys], XS, 0.4)


def test_hoisting_from_a_while_loop_body_and_condition():
    v, k = rt.scalar("v"), rt.scalar("k")
    out = rk.while_loop(lambda s: s < rt.exp(k) * 10.0, lambda s: s * 2.0 + rt.sqrt(k), v)
    new = alone(HOIST, out)
    (node,) = loop_nodes(new)
    graphs = node.op.inner_graphs
    ops = {type(n.op).__name__ for g in graphs for n in rk.toposort(list(g.outputs))}
    assert "Exp" not in ops and "Sqrt" not in ops
    assert rt.exp(k) * 10.0 in node.inputs and rt.sqrt(k) in node.inputs
    agree([v, k], out, new, 0.5, 1.5)


def test_random_draws_are_never_hoisted():
    x, key = rt.vector("x"), rr.key("key")

    def body(c, xi):
        _, z = rr.normal(key, 0.0, 1.0)  # reads only the closed-over key
        return c + xi * z, c

    final, _ = rk.scan(body, 0.0, x)
    assert alone(HOIST, final) is final
    rewritten = rk.rewrite(final, "default")
    (node,) = loop_nodes(rewritten)
    assert any(rr.is_draw(o) for n in rk.toposort(list(node.op.body.outputs)) for o in n.outputs)


def test_a_carry_passed_through_is_loop_invariant():
    x = rt.vector("x")
    (final_w, final_s), ys = rk.scan(
        lambda c, xi: ((c[0], c[1] + xi * rt.exp(c[0])), c[1]), (rt.scalar("w"), 0.0), x
    )
    w = rk.graph_inputs(final_w)[0]
    new = alone(HOIST, final_s)
    (node,) = loop_nodes(new)
    assert rt.exp(w) in node.inputs
    agree([x, w], final_s, new, XS, 0.3)
    tidied = alone(TIDY, [final_w, final_s, ys])
    assert tidied[0] is w  # its final value is its initial one
    (node,) = loop_nodes(tidied[1])
    assert node.op.n_carry == 1
    agree([x, w], [final_w, final_s, ys], tidied, XS, 0.3)


def test_tidy_drops_merges_and_inlines_closed_over_inputs():
    x, k, j = rt.vector("x"), rt.scalar("k"), rt.scalar("j")
    final, ys = rk.scan(lambda c, xi: (c * k + xi * j, c - j), 0.5, x)
    doubled = rk.replace([final, ys], {j: k})  # the same value closed over twice
    new = alone(TIDY, doubled)
    (node,) = loop_nodes(new)
    assert node.inputs.count(k) == 1 and len(node.inputs) == 3
    agree([x, k], doubled, new, XS, 0.9)
    constant = rk.replace(ys, {k: rt.constant(2.0)})
    inlined = alone(TIDY, constant)
    (node,) = loop_nodes(inlined)
    assert len(node.inputs) == 3 and rt.constant(2.0) not in node.inputs
    agree([x, j], constant, inlined, XS, 0.9)


def test_tidy_turns_a_repeated_sequence_into_a_closed_over_value():
    x, k = rt.vector("x"), rt.scalar("k")
    ones = rt.broadcast_to(k, rt.shape(x))
    final, ys = rk.scan(lambda c, pair: (c * pair[1] + pair[0], c), 0.0, (x, ones))
    new = alone(TIDY, [final, ys])
    (node,) = loop_nodes(new)
    assert node.op.n_seq == 1 and k in node.inputs
    agree([x, k], [final, ys], new, XS, 0.8)
    v = rt.vector("v", shape=(4,))  # a constant of equal slices, as folding leaves ones_like
    folded = rk.scan(lambda c, pair: (c * pair[1] + pair[0], c), 0.0, (v, np.full(4, 3.0)))
    (node,) = loop_nodes(alone(TIDY, list(folded)))
    assert node.op.n_seq == 1
    agree([v], list(folded), alone(TIDY, list(folded)), XS[:4])


def test_tidy_drops_the_unread_operands_of_a_cond():
    x, k, p = rt.vector("x"), rt.scalar("k"), rt.scalar("p")
    out = rk.cond(p > 0.0, lambda a, b: a * 2.0, lambda a, b: a + 1.0, x, k)
    new = alone(TIDY, out)
    (node,) = loop_nodes(new)
    assert k not in node.inputs and len(node.inputs) == 2
    for pv in (1.0, -1.0):
        agree([x, k, p], out, new, XS, 3.0, pv)


def test_vectorize_a_map_of_elementwise_steps():
    x, k = rt.vector("x"), rt.scalar("k")
    ys = rk.map(lambda xi: rt.exp(-rt.abs(xi)) * k - xi, x)
    new = alone(VECTORIZE, ys)
    assert not loop_nodes(new)
    assert new is rt.exp(-rt.abs(x)) * k - x
    agree([x, k], ys, new, XS, 1.5)
    agree([x, k], ys, new, np.zeros(0), 1.5)  # no step at all


def test_vectorize_broadcasts_closed_over_values_against_the_steps():
    m, k = rt.matrix("m"), rt.matrix("k")  # steps of shape (3,) against k of shape (2, 3)
    ys = rk.map(lambda row: rt.tanh(row) * k + 1.0, m)
    new = alone(VECTORIZE, ys)
    assert not loop_nodes(new)
    rng = np.random.default_rng(0)
    agree([m, k], ys, new, rng.normal(size=(4, 3)), rng.normal(size=(2, 3)))


def test_vectorize_a_reverse_scan_with_passed_carry_accumulator_and_last_value():
    x = rt.vector("x", shape=(4,))
    y, w = rt.vector("y", shape=(4,)), rt.scalar("w")

    def body(c, pair):
        keep, total, _ = c
        xi, yi = pair
        return (keep, total + xi * w, xi - yi), (xi * keep, yi)

    carries, ys = rk.scan(body, (w, 0.0, 0.0), (x, y), reverse=True)
    outs = [*carries, *ys]
    new = alone(VECTORIZE, outs)
    assert not loop_nodes(new)
    assert new[0] is w and new[4] is y
    agree([x, y, w], outs, new, XS, XS[::-1] * 2.0, 0.6)


def test_vectorize_an_accumulated_closed_over_value_and_a_sequence_given_twice():
    x, k = rt.vector("x"), rt.scalar("k")
    total, ys = rk.scan(lambda c, pair: (c + k, pair[0] * pair[1]), 1.0, (x, x))
    (node,) = loop_nodes(alone(TIDY, ys))
    assert node.op.n_seq == 1 and node.inputs.count(x) == 1
    new = alone(VECTORIZE, [total, ys])
    assert not loop_nodes(new)
    agree([x, k], [total, ys], new, XS, 0.25)  # 1 + 4 k
    agree([x, k], [total, ys], new, np.zeros(0), 0.25)


def test_vectorize_declines_loops_with_real_recurrences_or_other_ops():
    x = rt.vector("x")
    recurrent = rk.scan(lambda c, xi: (c * xi, c), 1.0, x)[1]
    assert alone(VECTORIZE, recurrent) is recurrent
    rows = rk.map(lambda r: rt.sum(r * r), rt.matrix("m"))  # a reduction: left as a loop
    assert alone(VECTORIZE, rows) is rows
    last = rk.scan(lambda c, xi: (xi * 2.0, c), 0.0, x)[0]  # unknown length: maybe no step
    assert alone(VECTORIZE, last) is last
    big = rk.scan(lambda c, xi: (c + xi * rt.matrix("k"), c), rt.zeros((2, 2)), x)[0]
    assert alone(VECTORIZE, big) is big  # the stacked steps would outgrow x


def test_fold_a_cond_with_a_constant_predicate_or_equal_branches():
    x = rt.vector("x")
    yes = rk.cond(rt.constant(True), lambda v: rt.exp(v), lambda v: v * 2.0, x)
    no = rk.cond(rt.constant(False), lambda v: rt.exp(v), lambda v: v * 2.0, x)
    same = rk.cond(rt.scalar("p") > 0.0, lambda v: v + 1.0, lambda v: v + 1.0, x)
    assert alone(FOLD_COND, yes) is rt.exp(x)
    assert alone(FOLD_COND, no) is x * 2.0
    assert alone(FOLD_COND, same) is x + 1.0
    agree([x], [yes, no], [rt.exp(x), x * 2.0], XS)


def test_fold_a_while_loop_whose_condition_is_constantly_false():
    v = rt.vector("v")
    never = rk.while_loop(lambda s: rt.constant(False), lambda s: s * 2.0, v)
    assert alone(FOLD_WHILE, never) is v
    maybe = rk.while_loop(lambda s: rt.sum(s) < 10.0, lambda s: s * 2.0, v)
    assert alone(FOLD_WHILE, maybe) is maybe
    # the default rules fold a condition that becomes constant once the body is rewritten
    odd = rk.while_loop(lambda s: rt.exp(rt.constant(0.0)) > 2.0, lambda s: s * 2.0, v)
    assert rk.rewrite(odd, "default") is v


def test_check_rewrites_runs_with_the_loop_rules():
    x, k = rt.vector("x"), rt.scalar("k")
    final, ys = rk.scan(lambda c, xi: (c + rt.log(1 + rt.exp(xi * k)), rt.exp(k) * xi), 0.0, x)
    f = rk.function([x, k], [final, ys], backend="numpy", check_rewrites=True)
    fired = f.trace.fired()
    assert fired["canonicalize.vectorize_scan"] == 2 and not loop_nodes(f.graph)
    f(XS * 100.0, 2.0)  # raises RewriteMismatch if a rewrite changed a value


# --- rules inside loop bodies ------------------------------------------------------------


def test_default_rules_stabilize_a_loop_body_as_they_would_outside():
    x = rt.vector("x")
    final, ys = rk.scan(lambda c, xi: (rt.log(1 + rt.exp(c)) + xi, rt.log(1 + rt.exp(c))), 0.0, x)
    body = final.owner.op.body
    f = rk.function([x], [final, ys], backend="numpy")
    (node,) = loop_nodes(f.graph)
    assert list(node.op.body.outputs) == rk.rewrite(list(body.outputs), "default")
    assert rt.softplus(body.inputs[0]) in node.op.body.outputs
    assert "(in scan body)" in rk.explain(f)
    entry = next(e for e in f.trace if e.where == "scan body")
    assert entry.rule == "stabilize.softplus_of_log_one_plus_exp"
    data = np.array([1000.0, -3.0, 2.0])
    for backend in ("numpy", "jax"):
        got = rk.function([x], [final, ys], backend=backend)(data)
        assert np.all(np.isfinite(np.asarray(got[1])))
    raw = rk.function([x], ys, backend="numpy", rules=None)(data)
    assert np.isinf(raw[2])  # log(1 + exp(1000)) as written overflows


# --- the loop pass -----------------------------------------------------------------------


def test_the_gradient_runs_one_forward_scan():
    x, a = rt.vector("x"), rt.scalar("a")
    final, ys = rk.scan(lambda c, xi: (rt.tanh(c * a + xi), c * xi), 0.5, x)
    cost = final + rt.sum(ys)
    grad = rk.grad(cost, a)
    plain = rk.function([x, a], [cost, grad], backend="numpy", rules=None)
    forward = [n for n in loop_nodes(plain.graph) if not n.op.reverse]
    assert len(forward) == 2  # the scan and its twin that stores the carries
    for backend in ("numpy", "jax"):
        f = rk.function([x, a], [cost, grad], backend=backend)
        forward = [n for n in loop_nodes(f.graph) if not n.op.reverse]
        assert len(forward) == 1 and len(loop_nodes(f.graph)) == 2
        np.testing.assert_allclose(f(XS, 0.7), plain(XS, 0.7), rtol=RTOL, atol=ATOL)
    assert "loops.merge_scans" in rk.function([x, a], [cost, grad], backend="numpy").trace.fired()


def test_the_reverse_step_reads_stored_forward_values():
    """The forward loop stacks what the reverse step reads (tanh's output, the derivative
    factors of it), as JAX's linearization stores residuals: no tanh runs backwards."""
    x, a = rt.vector("x"), rt.scalar("a")
    final, ys = rk.scan(lambda c, xi: (rt.tanh(c * a + xi), c * xi), 0.5, x)
    grad = rk.grad(final + rt.sum(ys), a)
    f = rk.function([x, a], grad, backend="numpy")
    (back,) = [n for n in loop_nodes(f.graph) if n.op.reverse]
    (forward,) = [n for n in loop_nodes(f.graph) if not n.op.reverse]
    assert any(isinstance(n.op, Tanh) for n in rk.toposort(list(forward.op.body.outputs)))
    assert not any(isinstance(n.op, Tanh) for n in rk.toposort(list(back.op.body.outputs)))
    plain = rk.function([x, a], grad, backend="numpy", rules=None)
    np.testing.assert_allclose(f(XS, 0.7), plain(XS, 0.7), rtol=RTOL, atol=ATOL)


def test_the_pass_drops_unused_outputs_and_carries_to_a_fixpoint():
    x, k = rt.vector("x"), rt.scalar("k")

    def body(c, xi):
        a, b, d = c
        return (a * 0.5 + xi, b + a * k, d * xi), (a * b, xi - k)

    (a, b, d), (ab, diff) = rk.scan(body, (1.0, 0.0, 2.0), x)
    lean = simplify_loops(rt.sum(diff) + a)  # b and d: nothing reads them
    (node,) = loop_nodes(lean)
    assert node.op.n_carry == 1 and len(node.outputs) == 2 and k in node.inputs
    agree([x, k], rt.sum(diff) + a, lean, XS, 0.3)
    only_b = simplify_loops(b)  # b reads a: a stays; d goes
    (node,) = loop_nodes(only_b)
    assert node.op.n_carry == 2 and len(node.outputs) == 2
    agree([x, k], b, only_b, XS, 0.3)
    assert k in loop_nodes(simplify_loops(ab))[0].inputs  # b, which ab reads, reads k
    no_k = simplify_loops(d)
    (node,) = loop_nodes(no_k)
    assert node.op.n_carry == 1 and k not in node.inputs  # the closed-over k is not read
    agree([x, k], d, no_k, XS, 0.3)


def test_the_pass_works_inside_bodies_and_on_while_loops_and_conds():
    m = rt.matrix("m")

    def outer_body(c, row):
        (inner_c, _), inner_ys = rk.scan(
            lambda s, v: ((s[0] + v, s[1] * v), s[0] * v), (c, 1.0), row
        )
        return inner_c, rt.sum(inner_ys)

    final, _ = rk.scan(outer_body, 0.0, m)
    lean, trace = simplify_loops(final, trace=True)
    (outer,) = loop_nodes(lean, Scan)[-1:]
    (inner,) = loop_nodes(list(outer.op.body.outputs), Scan)
    assert inner.op.n_carry == 1 and len(inner.outputs) == 1
    assert any(e.where == "scan body" for e in trace)
    rng = np.random.default_rng(1)
    agree([m], final, lean, rng.normal(size=(3, 4)))

    v, n = rt.scalar("v"), rt.scalar("n")
    s, _ = rk.while_loop(lambda st: st[0] < n, lambda st: (st[0] + 1.0, st[1] * 2.0), (v, v))
    only_s = simplify_loops(s)
    (node,) = loop_nodes(only_s)
    assert node.op.n_state == 1
    agree([v, n], s, only_s, 0.0, 5.0)

    p = rt.scalar("p")
    first, _ = rk.cond(p > 0.0, lambda a: (a * 2.0, rt.exp(a)), lambda a: (a, a), v)
    kept = simplify_loops(first)
    (node,) = loop_nodes(kept)
    assert len(node.outputs) == 1
    for pv in (1.0, -1.0):
        agree([v, p], first, kept, 0.5, pv)


def test_simplify_loops_with_rules_and_a_trace():
    x = rt.vector("x")
    _, ys = rk.scan(lambda c, xi: (c * xi, rt.log(1 + rt.exp(c)) * 2.0), 1.0, x)
    (new,), trace = simplify_loops((rt.sum(ys),), "default", trace=True)
    (node,) = loop_nodes(new)
    assert "stabilize.softplus_of_log_one_plus_exp" in trace.fired()
    assert len(node.outputs) == 2  # the carry stays: the ys read it
    agree([x], rt.sum(ys), new, XS)


def test_simplify_loops_checks_its_outputs():
    with pytest.raises(rk.GraphTypeError, match="simplify_loops: output 1 must be a Var"):
        simplify_loops([rt.scalar("s"), 3.0])


# --- property: rewriting inside random scan bodies keeps values --------------------------

UNARY = [rt.tanh, rt.sin, lambda a: rt.log(1 + rt.exp(a)), lambda a: rt.exp(-rt.abs(a))]
BINARY = [lambda a, b: a + b, lambda a, b: a - b, lambda a, b: a * b, lambda a, b: a * 0.5 + b]


@st.composite
def expressions(draw, depth=3):
    """A function of (carry, slice, closed-over) leaves built from elementwise Ops."""
    if depth == 0 or draw(st.booleans()):
        leaf = draw(st.sampled_from(["c", "x", "k", "const"]))
        value = draw(st.floats(-2.0, 2.0, allow_subnormal=False))
        return lambda env: rt.constant(value) if leaf == "const" else env[leaf]
    if draw(st.booleans()):
        op, arg = draw(st.sampled_from(UNARY)), draw(expressions(depth - 1))
        return lambda env: op(arg(env))
    op = draw(st.sampled_from(BINARY))
    left, right = draw(expressions(depth - 1)), draw(expressions(depth - 1))
    return lambda env: op(left(env), right(env))


@settings(max_examples=20, deadline=None)
@given(
    new_carry=expressions(),
    y=expressions(),
    form=st.sampled_from(["tanh", "sum", "through"]),
    reverse=st.booleans(),
    xs=st.lists(st.floats(-3.0, 3.0, allow_subnormal=False), min_size=0, max_size=5),
)
def test_rewriting_random_scan_bodies_keeps_values(new_carry, y, form, reverse, xs):
    x, k, c0 = rt.vector("x"), rt.scalar("k"), rt.scalar("c0")

    def body(c, xi):
        env = {"c": c, "x": xi, "k": k}
        step = rt.tanh(new_carry(env))
        new = {"tanh": step, "sum": c + step, "through": c}[form]
        return new, y(env)

    final, ys = rk.scan(body, c0, x, reverse=reverse)
    args = (np.array(xs), 0.7, 0.2)
    want = rk.function([x, k, c0], [final, ys], backend="numpy", rules=None)(*args)
    for backend in ("numpy", "jax"):
        got = rk.function([x, k, c0], [final, ys], backend=backend)(*args)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(np.asarray(g), w, rtol=1e-8, atol=1e-10)
