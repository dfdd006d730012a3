"""Gradients through control flow: reverse mode through ``scan`` and ``cond`` (and
``while_loop`` with ``max_steps``), checkpointed scans, forward mode through all three, and
second derivatives; checked against JAX's own ``lax`` derivatives, finite differences and
the compiled function's ``jax_fn`` under ``jax.grad``."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rewritekit as rk
import rewritekit.random as rr
import rewritekit.tensor as rt
from rewritekit.errors import GraphTypeError
from rewritekit.ir.inner import InnerGraph
from rewritekit.tensor.control import Scan
from tests.control.test_scan import run

BACKENDS = ["numpy", "jax"]
RTOL, ATOL = 1e-9, 1e-12
FD_RTOL, FD_ATOL = 1e-6, 1e-8


def both(inputs, outputs, *args):
    """The values on both backends, checked equal; the NumPy ones returned."""
    ref = run(inputs, outputs, *args)
    got = run(inputs, outputs, *args, backend="jax")
    for a, b in zip(
        ref if isinstance(ref, list) else [ref],
        got if isinstance(got, list) else [got],
        strict=True,
    ):
        np.testing.assert_allclose(b, a, rtol=RTOL, atol=ATOL)
    return ref


def close(got, expected, rtol=RTOL, atol=ATOL):
    for a, b in zip(got, expected, strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol)


def reference(fn, *args, argnums=0, how=jax.grad):
    with jax.enable_x64(True):
        out = how(fn, argnums=argnums)(*(jnp.asarray(a) for a in args))
    return jax.tree_util.tree_map(np.asarray, out)


def finite_differences(f, args, position, step=1e-6):
    """Central differences of the scalar ``f(*args)`` in ``args[position]``."""
    base = np.asarray(args[position], dtype=np.float64)
    out = np.empty(base.size)
    for i in range(base.size):
        shifted = []
        for sign in (1.0, -1.0):
            point = base.ravel().copy()
            point[i] += sign * step
            moved = list(args)
            moved[position] = point.reshape(base.shape)
            shifted.append(float(f(*moved)))
        out[i] = (shifted[0] - shifted[1]) / (2 * step)
    return out.reshape(base.shape)


def scans_in(outputs):
    """Every Scan node of the graphs, inner graphs included."""
    found, stack, seen = [], [rk.toposort(outputs)], set()
    while stack:
        for node in stack.pop():
            if node in seen:
                continue
            seen.add(node)
            if isinstance(node.op, Scan):
                found.append(node)
            for graph in getattr(node.op, "inner_graphs", ()):
                assert isinstance(graph, InnerGraph)
                stack.append(rk.toposort(list(graph.outputs)))
    return found


x, w = rt.vector("x"), rt.scalar("w")
XS = np.array([0.3, -0.4, 0.9, 0.2, -0.7])


# --- reverse mode through scan -----------------------------------------------------------


def test_carries_of_several_dtypes_pytrees_and_a_closed_over_value():
    """An int counter and a dict in the carry, a pair of sequences, a closed-over ``w``."""
    m = rt.matrix("m")

    def body(carry, xs):
        xi, row = xs
        s, n = carry["s"], carry["n"]
        s2 = rt.sin(s * w) + xi * rt.sum(row) + rt.cast(n, "float64") * 0.1
        return {"n": n + 1, "s": s2}, (rt.tanh(s2) * row, n)

    init = {"n": rt.constant(np.int64(0)), "s": w}
    final, (ys, counts) = rk.scan(body, init, (x, m))
    cost = rt.sum(ys) + final["s"] * rt.cast(final["n"], "float64")
    grads = rk.grad(cost, [x, m, w])
    rows = np.arange(10.0).reshape(5, 2) / 10

    def jax_cost(xv, mv, wv):
        def b(carry, xs):
            s, n = carry
            xi, row = xs
            s2 = jnp.sin(s * wv) + xi * jnp.sum(row) + n * 0.1
            return (s2, n + 1), jnp.tanh(s2) * row

        (s, n), ys = jax.lax.scan(b, (wv, 0), (xv, mv))
        return jnp.sum(ys) + s * n

    got = both([x, m, w], [*grads, counts], XS, rows, 0.7)
    close(got[:3], reference(jax_cost, XS, rows, 0.7, argnums=(0, 1, 2)))
    np.testing.assert_array_equal(got[3], np.arange(5))


def test_a_random_key_in_the_carry():
    """A uint32 key threaded through the carry with a draw per step: the gradient is that of
    the fixed draws (each backend against its own finite differences)."""
    key = rr.key("key")

    def body(carry, xi):
        k, s = carry
        k, z = rr.normal(k, 0.0, 1.0)
        s2 = rt.tanh(s * w + z * xi)
        return (k, s2), s2 * z

    (_, final), ys = rk.scan(body, (key, w), x)
    cost = rt.sum(ys) + final
    grads = rk.grad(cost, [x, w])
    for backend in BACKENDS:
        f_cost = rk.function([x, w, key], cost, backend=backend, rules=None)
        got = run([x, w, key], grads, XS, 0.7, rr.seed(3), backend=backend)
        for position in (0, 1):
            fd = finite_differences(lambda a, b, f=f_cost: f(a, b, rr.seed(3)), [XS, 0.7], position)
            np.testing.assert_allclose(got[position], fd, rtol=FD_RTOL, atol=FD_ATOL)


@pytest.mark.parametrize("reverse", [False, True])
def test_reverse_scan_closed_over_values_sum_over_steps(reverse):
    final, ys = rk.scan(lambda c, xi: (c * w + xi, c * xi * w), 1.0, x, reverse=reverse)
    cost = rt.sum(ys * rt.arange(5)) + final
    # w is read at every step: its gradient is summed over them
    got = both([x, w], rk.grad(cost, [x, w]), XS, 0.7)

    def jax_cost(xv, wv):
        c, ys = jax.lax.scan(lambda c, xi: (c * wv + xi, c * xi * wv), 1.0, xv, reverse=reverse)
        return jnp.sum(ys * jnp.arange(5)) + c

    close(got, reference(jax_cost, XS, 0.7, argnums=(0, 1)))


def test_length_zero_scans():
    final, ys = rk.scan(lambda c, xi: (c * w + xi, c * xi), w * 2.0, x)
    grads = rk.grad(rt.sum(ys) + final, [x, w])
    gx, gw = both([x, w], grads, np.zeros(0), 0.7)
    assert gx.shape == (0,) and float(gw) == 2.0  # only init = 2 w reaches the cost
    final, ys = rk.scan(lambda c, _: (c * w, c), w, length=0)
    assert float(both([w], rk.grad(rt.sum(ys) + final, w), 0.7)) == 1.0


def test_nested_scans():
    m = rt.matrix("m")

    def outer(c, row):
        inner_final, inner_ys = rk.scan(lambda d, e: (rt.sin(d * e + c), d * w), c, row)
        return inner_final + rt.sum(inner_ys), inner_final

    final, ys = rk.scan(outer, w, m)
    cost = rt.sum(ys) + final
    rows = np.arange(6.0).reshape(2, 3) / 5

    def jax_cost(mv, wv):
        def o(c, row):
            f, ys = jax.lax.scan(lambda d, e: (jnp.sin(d * e + c), d * wv), c, row)
            return f + jnp.sum(ys), f

        f, ys = jax.lax.scan(o, wv, mv)
        return jnp.sum(ys) + f

    got = both([m, w], rk.grad(cost, [m, w]), rows, 0.7)
    close(got, reference(jax_cost, rows, 0.7, argnums=(0, 1)))


def test_cond_inside_scan_and_scan_inside_cond():
    def body(c, xi):
        c2 = rk.cond(xi > 0.0, lambda u: rt.sin(u * w), lambda u: u * u - xi, c)
        return c2, c2 * xi

    final, ys = rk.scan(body, w, x)
    inside = rt.sum(ys) + final

    def branch(u):
        f, ys = rk.scan(lambda c, xi: (rt.tanh(c * u + xi), c), u, x)
        return f + rt.sum(ys)

    outside = rk.cond(w > 0.0, branch, lambda u: u * 3.0, w)

    def jax_inside(xv, wv):
        def b(c, xi):
            c2 = jax.lax.cond(xi > 0.0, lambda u: jnp.sin(u * wv), lambda u: u * u - xi, c)
            return c2, c2 * xi

        f, ys = jax.lax.scan(b, wv, xv)
        return jnp.sum(ys) + f

    def jax_outside(xv, wv):
        def br(u):
            f, ys = jax.lax.scan(lambda c, xi: (jnp.tanh(c * u + xi), c), u, xv)
            return f + jnp.sum(ys)

        return jax.lax.cond(wv > 0.0, br, lambda u: u * 3.0, wv)

    for point in (0.7, -0.6):
        got = both([x, w], [*rk.grad(inside, [x, w]), *rk.grad(outside, [x, w])], XS, point)
        close(got[:2], reference(jax_inside, XS, point, argnums=(0, 1)))
        close(got[2:], reference(jax_outside, XS, point, argnums=(0, 1)))


def test_second_derivatives_jacobian_and_hessian_through_scan():
    final, ys = rk.scan(lambda c, xi: (rt.sin(c * xi) + w, c * c * xi), w, x)
    cost = rt.sum(ys) + final

    def jax_parts(xv, wv):
        return jax.lax.scan(lambda c, xi: (jnp.sin(c * xi) + wv, c * c * xi), wv, xv)

    def jax_cost(xv, wv):
        f, ys = jax_parts(xv, wv)
        return jnp.sum(ys) + f

    hess = rk.hessian(cost, x)
    jac = rk.jacobian(ys, x)
    gw = rk.grad(cost, w)
    d2w = rk.grad(gw, w)  # a gradient of a gradient
    mixed = rk.grad(rt.sum(rk.grad(cost, x) * x), w)
    hvp = rk.jvp(rk.grad(cost, x), x, rt.cos(x))  # forward over reverse
    got = both([x, w], [hess, jac, d2w, mixed, hvp], XS, 0.7)
    np.testing.assert_allclose(got[4], got[0] @ np.cos(XS), rtol=1e-10)
    np.testing.assert_allclose(got[0], reference(jax_cost, XS, 0.7, how=jax.hessian), rtol=1e-8)
    expected_jac = reference(lambda a, b: jax_parts(a, b)[1], XS, 0.7, how=jax.jacrev)
    np.testing.assert_allclose(got[1], expected_jac, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(
        got[2], reference(lambda a, b: jax.grad(jax_cost, 1)(a, b), XS, 0.7, argnums=1), rtol=1e-8
    )
    np.testing.assert_allclose(
        got[3],
        reference(lambda a, b: jnp.sum(jax.grad(jax_cost)(a, b) * a), XS, 0.7, argnums=1),
        rtol=1e-8,
    )


def test_rewritten_gradient_keeps_its_values():
    """The default pipeline (which rewrites loop bodies) on a scan's gradient."""
    final, ys = rk.scan(lambda c, xi: (rt.log(1 + rt.exp(c * xi)), c * w), w, x)
    grads = rk.grad(rt.sum(ys) + final, [x, w])
    plain = run([x, w], grads, XS, 0.7)
    for backend in BACKENDS:
        close(run([x, w], grads, XS, 0.7, backend=backend, rules="default"), plain)


# --- checkpointed scans ------------------------------------------------------------------


def _body(c, xi):
    s, n = c
    s2 = rt.sin(s * xi) + w * rt.tanh(s)
    return (s2, n + 1), s2 * xi


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("steps", [0, 1, 2, 3, 10, 17])
def test_checkpointed_scan_gradient_equals_the_stored_one(steps, reverse):
    a = np.linspace(0.1, 1.0, steps)
    weights = rt.arange(steps) * 0.5
    static = rt.vector("xs", shape=(steps,))
    grads = []
    for seq, checkpoint in ((x, False), (x, True), (static, True)):
        (final, n), ys = rk.scan(
            _body, (w, rt.constant(np.int64(0))), seq, reverse=reverse, checkpoint=checkpoint
        )
        cost = rt.sum(ys * weights) + final * rt.cast(n, "float64")
        grads.extend(rk.grad(cost, [seq, w]))
    got = both([x, static, w], grads, a, a, 0.7)
    close(got[2:4], got[:2])  # length known at run time only
    close(got[4:], got[:2])  # length static


def test_checkpointed_scan_stores_a_carry_every_sqrt_steps():
    """T = 100: no scan of the gradient runs (and stores) 100 steps; its scans have 10."""
    final, _ = rk.scan(lambda c, _: (rt.sin(c * w) + 0.5 * c, None), w, length=100, checkpoint=True)
    grad = rk.grad(final, w)
    scans = scans_in([grad])
    assert scans and {node.op.length for node in scans} == {10}
    plain, _ = rk.scan(lambda c, _: (rt.sin(c * w) + 0.5 * c, None), w, length=100)
    close([both([w], grad, 0.7)], [both([w], rk.grad(plain, w), 0.7)])
    assert "checkpoint=True" in str(final.owner.op)
    assert "checkpoint" not in str(plain.owner.op)


def test_checkpointed_scan_second_derivatives_and_nesting():
    def body(c, xi):
        inner, _ = rk.scan(lambda d, e: (rt.tanh(d + e * c), None), c, x, checkpoint=True)
        return inner * w, inner

    m = rt.vector("m")
    grads = []
    for checkpoint in (False, True):
        final, ys = rk.scan(body, w, m, checkpoint=checkpoint)
        cost = rt.sum(ys) + final
        gw = rk.grad(cost, w)
        grads.extend([rk.grad(cost, m), gw, rk.grad(gw, w)])
    got = run([x, m, w], grads, XS, XS[:4], 0.7)  # JAX: the tests above and below
    close(got[3:], got[:3])


# --- forward mode ------------------------------------------------------------------------


def test_jvp_through_scan_matches_jax_and_the_vjp():
    final, ys = rk.scan(lambda c, xi: (rt.sin(c * xi) + w, rt.exp(rt.tanh(c)) * xi), w, x)
    tx = rt.vector("tx")
    tangents = rk.jvp([final, ys], [x, w], [tx, 0.5])
    assert not any(n.op.reverse for n in scans_in(tangents))  # a forward scan of tangents
    t = np.array([1.0, -2.0, 0.5, 0.0, 3.0])
    got = both([x, w, tx], tangents, XS, 0.7, t)

    def jax_fn(xv, wv):
        return jax.lax.scan(lambda c, xi: (jnp.sin(c * xi) + wv, jnp.exp(jnp.tanh(c)) * xi), wv, xv)

    with jax.enable_x64(True):
        _, expected = jax.jvp(jax_fn, (jnp.asarray(XS), 0.7), (jnp.asarray(t), 0.5))
    close(got, expected)
    # <u, J t> = <J^T u, t>
    u = rt.vector("u")
    gx, gw = rk.vjp([final, ys], [x, w], [1.5, u])
    dual = both([x, w, u], [gx, gw], XS, 0.7, np.arange(5.0))
    np.testing.assert_allclose(
        got[0] * 1.5 + got[1] @ np.arange(5.0), dual[0] @ t + dual[1] * 0.5, rtol=1e-10
    )


def test_jvp_through_cond():
    out = rk.cond(w > 0.5, lambda a: rt.sin(a * w), lambda a: a * a, x)
    tangent = rk.jvp(out, [x, w], [rt.ones_like(x), 1.0])

    def jax_fn(xv, wv):
        return jax.lax.cond(wv > 0.5, lambda a: jnp.sin(a * wv), lambda a: a * a, xv)

    for point in (0.7, 0.2):
        with jax.enable_x64(True):
            _, expected = jax.jvp(jax_fn, (jnp.asarray(XS), point), (jnp.ones(5), 1.0))
        np.testing.assert_allclose(both([x, w], tangent, XS, point), expected, rtol=RTOL)


def _jax_while(wv):
    return jax.lax.while_loop(lambda s: s[0] < 10.0, lambda s: (s[0] * wv, s[1] + 1), (wv, 0))[0]


def test_jvp_through_an_unbounded_while_loop():
    final, steps = rk.while_loop(
        lambda s: s[0] < 10.0, lambda s: (s[0] * w, s[1] + 1), (w, rt.constant(np.int64(0)))
    )
    tangent = rk.jvp(final, w, 1.0)
    got = both([w], [final, tangent, steps], 1.7)
    with jax.enable_x64(True):
        primal, expected = jax.jvp(_jax_while, (1.7,), (1.0,))
    close(got[:2], [primal, expected])
    assert int(got[2]) == 4  # 1.7 ** 5 >= 10
    # forward mode of the unbounded loop = reverse mode of the bounded one
    bounded, _ = rk.while_loop(
        lambda s: s[0] < 10.0,
        lambda s: (s[0] * w, s[1] + 1),
        (w, rt.constant(np.int64(0))),
        max_steps=12,
    )
    close(both([w], [bounded, rk.grad(bounded, w)], 1.7), got[:2])


def test_jvp_through_while_inside_scan_and_scan_inside_while():
    def body(c, xi):
        r = rk.while_loop(lambda s: s < 5.0, lambda s: s * 2.0 + xi, c)
        return r * 0.1, r

    final, ys = rk.scan(body, w, x)
    a = np.abs(XS)
    t = np.array([0.5, 1.0, -1.0, 2.0, 0.25])
    tangent = rk.jvp([final, ys], [w, x], [1.0, rt.constant(t)])
    got = both([w, x], tangent, 0.3, a)

    def jax_fn(wv, xv):
        def b(c, xi):
            r = jax.lax.while_loop(lambda s: s < 5.0, lambda s: s * 2.0 + xi, c)
            return r * 0.1, r

        return jax.lax.scan(b, wv, xv)

    with jax.enable_x64(True):
        _, expected = jax.jvp(jax_fn, (0.3, jnp.asarray(a)), (1.0, jnp.asarray(t)))
    close(got, expected)

    # a scan in the body of a while loop, over a closed-over sequence
    def grow(s):
        total, _ = rk.scan(lambda c, xi: (c + rt.sin(xi * s[0]), None), 0.0, x)
        return (s[0] * w + total, s[1] + 1.0)

    v, _ = rk.while_loop(lambda s: s[1] < 3.0, grow, (w, rt.constant(0.0)))
    dv = rk.jvp(v, [w, x], [1.0, rt.ones_like(x)])

    def jax_v(wv, xv):
        def g(s):
            total = jnp.sum(jnp.sin(xv * s[0]))
            return (s[0] * wv + total, s[1] + 1.0)

        return jax.lax.while_loop(lambda s: s[1] < 3.0, g, (wv, 0.0))[0]

    with jax.enable_x64(True):
        _, expected = jax.jvp(jax_v, (0.7, jnp.asarray(XS)), (1.0, jnp.ones(5)))
    np.testing.assert_allclose(both([w, x], dv, 0.7, XS), expected, rtol=RTOL)


def test_reverse_mode_through_an_unbounded_while_names_max_steps():
    v = rk.while_loop(lambda s: s < 10.0, lambda s: s * w, w)
    with pytest.raises(GraphTypeError, match=r"grad: while_loop has no reverse-mode .* max_steps"):
        rk.grad(v, w)
    final, _ = rk.scan(
        lambda c, xi: (rk.while_loop(lambda s: s < 3.0, lambda s: s + xi, c), None), w, x
    )
    with pytest.raises(GraphTypeError, match=r"pass max_steps=N to rk\.while_loop"):
        rk.grad(final, x)
    with pytest.raises(GraphTypeError, match="max_steps"):
        rk.jacobian(rt.stack([v, v]), w)


def test_bounded_while_loop_reverse_mode_against_finite_differences():
    def loop(steps):
        return rk.while_loop(
            lambda s: s[1] < 4.0,
            lambda s: (rt.sin(s[0] * w) + s[0], s[1] + s[0] * 0.0 + 1.0),
            (w, rt.constant(0.0)),
            max_steps=steps,
        )[0]

    bounded, unbounded = loop(6), loop(None)
    g = rk.grad(bounded, w)
    value, grad_value, free_value = both([w], [bounded, g, unbounded], 0.8)
    assert value == free_value
    f_cost = rk.function([w], bounded, backend="numpy", rules=None)
    np.testing.assert_allclose(grad_value, finite_differences(f_cost, [0.8], 0), rtol=FD_RTOL)
    np.testing.assert_allclose(grad_value, both([w], rk.jvp(unbounded, w, 1.0), 0.8), rtol=RTOL)


# --- the compiled function under JAX transformations --------------------------------------


def test_jax_fn_composes_with_jax_grad_and_vmap():
    final, ys = rk.scan(lambda c, xi: (rt.tanh(c * w + xi), c * xi), w, x)
    cost = rt.sum(ys) + final
    f = rk.function([x, w], cost)
    g = run([x, w], rk.grad(cost, [x, w]), XS, 0.7)
    with jax.enable_x64(True):
        via_jax = jax.grad(f.jax_fn, argnums=(0, 1))(jnp.asarray(XS), 0.7)
        batch = jnp.stack([jnp.asarray(XS), jnp.asarray(XS[::-1])])
        mapped = jax.vmap(f.jax_fn, in_axes=(0, None))(batch, 0.7)
    close(via_jax, g)
    np.testing.assert_allclose(np.asarray(mapped), [f(XS, 0.7), f(XS[::-1], 0.7)], rtol=RTOL)


# --- property: random scan bodies ---------------------------------------------------------

UNARY = {"sin": rt.sin, "tanh": rt.tanh, "exp_sin": lambda a: rt.exp(rt.sin(a))}  # bounded exp
BINARY = {"add": lambda a, b: a + b, "mul": lambda a, b: a * b}
LEAVES = ("c", "x", "w")


def _trees(depth):
    leaf = st.sampled_from(LEAVES)
    if depth == 0:
        return leaf
    sub = _trees(depth - 1)
    return st.one_of(
        leaf,
        st.tuples(st.sampled_from(sorted(UNARY)), sub),
        st.tuples(st.sampled_from(sorted(BINARY)), sub, sub),
    )


def _build(tree, env):
    if isinstance(tree, str):
        return env[tree]
    if len(tree) == 2:
        return UNARY[tree[0]](_build(tree[1], env))
    return BINARY[tree[0]](_build(tree[1], env), _build(tree[2], env))


FLOATS = st.floats(-1.0, 1.0, allow_nan=False, allow_subnormal=False)


@settings(max_examples=12, deadline=None)
@given(
    carry_tree=_trees(3),
    y_tree=_trees(2),
    xs=st.lists(FLOATS, min_size=1, max_size=4),
    point=FLOATS,
    reverse=st.booleans(),
    checkpoint=st.booleans(),
)
def test_random_scan_bodies(carry_tree, y_tree, xs, point, reverse, checkpoint):
    """Gradients of a random elementwise body: NumPy and JAX backends agree, and agree with
    finite differences, with jax.grad of the compiled forward's jax_fn and with forward
    mode."""

    def body(c, xi):
        env = {"c": c, "x": xi, "w": w}
        return rt.tanh(_build(carry_tree, env)), _build(y_tree, env)  # a bounded carry

    final, ys = rk.scan(body, w * 0.5, x, reverse=reverse, checkpoint=checkpoint)
    cost = rt.sum(ys * rt.cos(x)) + final
    grads = rk.grad(cost, [x, w], disconnected="zero")
    a = np.array(xs)
    got = both([x, w], grads, a, point)
    f = rk.function([x, w], cost, rules=None)
    with jax.enable_x64(True):
        via_jax = jax.grad(f.jax_fn, argnums=(0, 1))(jnp.asarray(a), point)
    close(via_jax, got, rtol=1e-9, atol=1e-10)
    f_np = rk.function([x, w], cost, backend="numpy", rules=None)
    for position in (0, 1):
        fd = finite_differences(f_np, [a, point], position)
        np.testing.assert_allclose(got[position], fd, rtol=1e-5, atol=1e-7)
    # forward mode along (cos(x), 0.5) is the gradient's dot product with it
    tangent = rk.jvp(cost, [x, w], [rt.cos(x), 0.5])
    np.testing.assert_allclose(
        run([x, w], tangent, a, point), got[0] @ np.cos(a) + 0.5 * got[1], rtol=1e-9, atol=1e-12
    )


class _BadTangent(rk.Op):
    """x, with a jvp rule that gives a float32 tangent to a float64 output."""

    def infer_types(self, t):
        return (t,)

    def jvp(self, inputs, outputs, tangents):
        return [rt.cast(tangents[0], "float32")]


def test_a_jvp_rule_of_the_wrong_type_is_named():
    with pytest.raises(
        GraphTypeError, match=r"_BadTangent: jvp gave output 0 a tangent of type float32"
    ):
        rk.jvp(_BadTangent()(x), x, rt.ones_like(x))


def test_an_elementwise_body_of_many_residuals_is_recomputed_in_reverse():
    # each step's derivative reads many of its values: stored, they would be 2 + per step
    xs, c0 = rt.vector("xs", shape=(12,)), rt.scalar("c0")

    def step(c, x):
        a = rt.sin(c * x)
        b = rt.exp(-a * a) / (1.0 + c * c)
        return rt.tanh(a + b) * rt.cos(b * x) + rt.log1p(a * a), None

    final, _ = rk.scan(step, c0, xs)
    g_c, g_x = rk.grad(final, [c0, xs], stabilize=False)
    reverse = [
        n for n in rk.toposort([g_c, g_x]) if isinstance(n.op, Scan) and n.op.reverse is True
    ]
    assert reverse and all(n.op.n_seq == 2 for n in reverse)  # the carries and xs only

    def reference(c, v):
        def body(c, x):
            a = jnp.sin(c * x)
            b = jnp.exp(-a * a) / (1.0 + c * c)
            return jnp.tanh(a + b) * jnp.cos(b * x) + jnp.log1p(a * a), None

        return jax.lax.scan(body, c, v)[0]

    data = [np.linspace(-1.0, 1.2, 12), np.float64(0.3)]
    got = both([xs, c0], [g_c, g_x], *data)
    with jax.enable_x64(True):
        want = jax.grad(reference, argnums=(0, 1))(data[1], data[0])
    close(got, want)
