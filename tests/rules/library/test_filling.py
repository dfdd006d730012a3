"""Arrays of one value (phase canonicalize): ``ones_like(x)``, ``zeros(shape)`` and
``full(shape, c)`` are matched as the number they hold, without losing the shape they give
the result, and elementwise functions move before a ``broadcast_to``."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.rules.library.filling import rules
from rewritekit.testing import check_rule

x, y = rt.vector("x"), rt.vector("y")
BACKENDS = ["numpy", "jax"]


@pytest.mark.parametrize("rule", list(rules), ids=lambda r: r.name)
def test_every_rule_fires_on_its_example_and_is_sound(rule):
    for seed in range(3):
        check_rule(rule, seed=seed)


u = rt.vector("u", shape=(3,))
i = rt.vector("i", dtype="int64")

STRUCTURE = [
    ("log1p", rt.log(rt.ones_like(x) + x), rt.log1p(x)),
    ("log1p_commuted", rt.log(x + rt.ones_like(x)), rt.log1p(x)),
    ("expm1", rt.exp(x) - rt.ones_like(x), rt.expm1(x)),
    ("expm1_static", rt.exp(u) - rt.ones(3), rt.expm1(u)),
    ("sigmoid", rt.ones_like(x) / (1 + rt.exp(-x)), rt.sigmoid(x)),
    ("full_like", rt.log(rt.full_like(x, 1.0) + x), rt.log1p(x)),
    ("times_zeros_int", i * rt.zeros_like(i), rt.zeros_like(i)),
    ("constant_array", rt.constant(np.full(3, 0.5)) * u, 0.5 * u),
    ("constant_array_second", u - rt.constant(np.full(3, 2.0)), u - 2.0),
    (
        "log_under_broadcast",
        rt.log(rt.broadcast_to(1 + u, (2, 3))),
        rt.broadcast_to(rt.log1p(u), (2, 3)),
    ),
]


@pytest.mark.parametrize(("name", "graph", "expected"), STRUCTURE, ids=[s[0] for s in STRUCTURE])
def test_fills_are_the_number_they_hold(name, graph, expected):
    assert rk.rewrite(graph) is rk.rewrite(expected)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_fill_that_broadcasts_the_other_operand_keeps_the_shape(backend):
    # ones_like(y) has y's run-time length, which broadcasts x of length 1
    graph = rt.log(rt.ones_like(y) + x)
    rewritten = rk.rewrite(graph)
    assert rt.log1p(x) in _nodes(rewritten)  # still stabilized, under a broadcast
    f = rk.function([x, y], graph, backend=backend)
    xv, yv = np.array([1e-20]), np.zeros(4)
    np.testing.assert_array_equal(f(xv, yv), np.full(4, 1e-20))


def test_a_folded_gradient_seed_is_a_number_again():
    """The gradient of a mean broadcasts its seed; folded, that is a constant array of one
    number, which the rules make a scalar again (no 2,560-element literal for XLA)."""
    m = rt.matrix("m", shape=(256, 10))
    f = rk.function([m], rk.grad(rt.mean(rt.sum(m * m, axis=1)), m), backend="numpy")
    constants = [v for n in rk.toposort(f.graph) for v in n.inputs if isinstance(v, rk.Constant)]
    assert constants and all(c.data.size == 1 for c in constants)
    value = np.arange(2560.0).reshape(256, 10)
    np.testing.assert_allclose(f(value), 2 * value / 256, rtol=1e-15)


def test_a_constant_array_that_broadcasts_keeps_the_shape():
    graph = rt.constant(np.full((2, 3), 2.0)) * u
    f = rk.function([u], graph, backend="numpy")
    np.testing.assert_array_equal(f(np.ones(3)), np.full((2, 3), 2.0))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_fill_that_does_not_broadcast_raises_as_before(backend):
    f = rk.function([x, y], rt.log(rt.ones_like(y) + x), backend=backend)
    with pytest.raises(Exception, match=r"(?i)broadcast|shape|incompatible"):
        f(np.ones(2), np.ones(3))


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_fill_dtype_decides_the_precision(backend):
    # float64 ones and a float32 x: the original computes in float64, so does the rewrite
    xf = rt.vector("xf", dtype="float32")
    graph = rt.log(rt.ones_like(xf, dtype="float64") + xf)
    assert rk.rewrite(graph).dtype == "float64"
    f = rk.function([xf], graph, backend=backend)
    out = f(np.array([1e-10], dtype=np.float32))
    assert out.dtype == np.float64
    np.testing.assert_allclose(out, np.log1p(np.float64(np.float32(1e-10))), rtol=1e-15)


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.floats(-0.9, 10.0), min_size=1, max_size=4),
    st.sampled_from(["ones_like", "full_like", "broadcast"]),
)
def test_rewritten_and_unrewritten_agree_and_the_rewrite_is_exact(values, form):
    xv = np.asarray(values)
    fill = {
        "ones_like": rt.ones_like(x),
        "full_like": rt.full_like(x, 1.0),
        "broadcast": rt.ones_like(y),
    }[form]
    graph = rt.log(fill + x) * (rt.exp(x) - fill)
    args = [xv, np.zeros(len(xv))]
    exact = np.log1p(xv) * np.expm1(xv)  # what the stabilized graph computes
    plain = rk.function([x, y], graph, backend="numpy", rules="fast_compile")(*args)
    np.testing.assert_allclose(plain, exact, rtol=1e-6, atol=1e-12)
    for backend in BACKENDS:
        out = rk.function([x, y], graph, backend=backend)(*args)
        np.testing.assert_allclose(out, exact, rtol=1e-13, atol=0)


def _nodes(var):
    seen, stack = set(), [var]
    while stack:
        v = stack.pop()
        if v in seen:
            continue
        seen.add(v)
        if v.owner is not None:
            stack.extend(v.owner.inputs)
    return seen
