"""Property tests of the constructs on random bodies drawn from elementwise Ops (``+``,
``-``, ``*``, ``sin``, ``tanh``, ``exp`` of a bounded value, ``where``): the NumPy and JAX
backends agree; ``rk.scan`` equals the body applied step by step in Python (the unrolled
graph) on both backends; a ``cond`` equals the ``where`` of both branches."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import rewritekit as rk
import rewritekit.tensor as rt

BACKENDS = ("numpy", "jax")
RTOL, ATOL = 1e-9, 1e-12

UNARY = {
    "sin": rt.sin,
    "tanh": rt.tanh,
    "exp_tanh": lambda a: rt.exp(rt.tanh(a)),  # exp of a bounded value
    "neg": lambda a: -a,
}
BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "where_greater": lambda a, b: rt.where(a > b, a, b),
    "where_positive": lambda a, b: rt.where(a > 0.0, b, a * 0.5),
}


def trees(leaves, depth):
    """Expression trees: a leaf name, (unary, tree) or (binary, tree, tree)."""
    leaf = st.sampled_from(leaves)
    if depth == 0:
        return leaf
    sub = trees(leaves, depth - 1)
    return st.one_of(
        leaf,
        st.tuples(st.sampled_from(sorted(UNARY)), sub),
        st.tuples(st.sampled_from(sorted(BINARY)), sub, sub),
    )


def build(tree, env):
    if isinstance(tree, str):
        return env[tree]
    if len(tree) == 2:
        return UNARY[tree[0]](build(tree[1], env))
    return BINARY[tree[0]](build(tree[1], env), build(tree[2], env))


FLOATS = st.floats(-1.0, 1.0, allow_nan=False, allow_infinity=False, allow_subnormal=False)


def arrays(shape):
    return hnp.arrays(np.float64, shape, elements=FLOATS)


def evaluate(inputs, outputs, args):
    """The outputs on each backend, without rewriting."""
    return {
        backend: [
            np.asarray(v) for v in rk.function(inputs, outputs, backend=backend, rules=None)(*args)
        ]
        for backend in BACKENDS
    }


def assert_all_close(results, reference):
    for what, values in results.items():
        for position, (got, want) in enumerate(zip(values, reference, strict=True)):
            assert got.shape == want.shape and got.dtype == want.dtype, (what, position)
            np.testing.assert_allclose(
                got, want, rtol=RTOL, atol=ATOL, err_msg=f"{what}, output {position}"
            )


@settings(max_examples=15, deadline=None)
@given(
    carry_tree=trees(("c", "x", "w"), 3),
    y_tree=trees(("c", "x", "w"), 2),
    steps=st.integers(1, 4),
    width=st.integers(1, 3),
    reverse=st.booleans(),
    data=st.data(),
)
def test_scan_equals_the_unrolled_body_on_both_backends(
    carry_tree, y_tree, steps, width, reverse, data
):
    xs, init, w = rt.matrix("xs"), rt.vector("init"), rt.scalar("w")

    def body(c, x):
        env = {"c": c, "x": x, "w": w}
        return 0.5 * c + rt.tanh(build(carry_tree, env)), build(y_tree, env)  # bounded carry

    final, ys = rk.scan(body, init, xs, reverse=reverse)
    c, stacked = init, [None] * steps
    for t in reversed(range(steps)) if reverse else range(steps):
        c, stacked[t] = body(c, xs[t])
    ys_unrolled = rt.stack([rt.broadcast_to(y, ys.shape[1:]) for y in stacked])
    args = [data.draw(arrays((steps, width))), data.draw(arrays(width)), data.draw(FLOATS)]
    looped = evaluate([xs, init, w], [final, ys], args)
    unrolled = evaluate([xs, init, w], [c, ys_unrolled], args)
    reference = looped["numpy"]
    assert_all_close(
        {"scan on jax": looped["jax"], **{f"unrolled on {b}": v for b, v in unrolled.items()}},
        reference,
    )


@settings(max_examples=15, deadline=None)
@given(
    pred_tree=trees(("s", "w"), 2),
    true_tree=trees(("s", "v", "w"), 2),
    false_tree=trees(("s", "v", "w"), 2),
    width=st.integers(1, 3),
    data=st.data(),
)
def test_cond_equals_where_of_both_branches(pred_tree, true_tree, false_tree, width, data):
    s, v, w = rt.scalar("s"), rt.vector("v"), rt.scalar("w")

    def branch(tree):
        # a vector whatever the tree reads; w is closed over
        return lambda s_, v_: build(tree, {"s": s_, "v": v_, "w": w}) + v_ * 0.0

    pred = build(pred_tree, {"s": s, "w": w}) > 0.0
    chosen = rk.cond(pred, branch(true_tree), branch(false_tree), s, v)
    eager = rt.where(pred, branch(true_tree)(s, v), branch(false_tree)(s, v))
    assert chosen.type == eager.type
    args = [data.draw(FLOATS), data.draw(arrays(width)), data.draw(FLOATS)]
    lazy = evaluate([s, v, w], [chosen, pred], args)
    both = evaluate([s, v, w], [eager, pred], args)
    assert_all_close(
        {"cond on jax": lazy["jax"], **{f"where on {b}": r for b, r in both.items()}},
        lazy["numpy"],
    )
