"""rk.grad, rk.vjp, rk.jvp, rk.jacobian, rk.hessian and rt.stop_gradient."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.errors import GraphTypeError
from rewritekit.testing import GradientMismatch, verify_grad
from tests.conftest import shallow_recursion

x, y = rt.vector("x"), rt.vector("y")
s = rt.scalar("s")
RTOL = 1e-8


def run(inputs, outputs, *args, backend="numpy"):
    return rk.function(inputs, outputs, backend=backend, rules=None)(*args)


def jax64(fn, *args):
    with jax.enable_x64(True):
        return np.asarray(fn(*[jnp.asarray(a) for a in args]))


def test_grad_structure_follows_wrt():
    cost = rt.sum(x * y) + s
    gx = rk.grad(cost, x)
    assert isinstance(gx, rk.Var) and gx.type == x.type
    assert isinstance(rk.grad(cost, [x, s]), list)
    assert isinstance(rk.grad(cost, (x, s)), tuple)
    values = run([x, y, s], rk.grad(cost, [x, y, s]), np.arange(3.0), np.ones(3), 2.0)
    np.testing.assert_allclose(values[0], np.ones(3))
    np.testing.assert_allclose(values[1], np.arange(3.0))
    assert float(values[2]) == 1.0


def test_disconnected_variables():
    cost = rt.sum(rt.exp(x))
    with pytest.raises(GraphTypeError, match="grad: the output does not depend on 'y'"):
        rk.grad(cost, [x, y])
    _, gy = rk.grad(cost, [x, y], disconnected="zero")
    assert gy is rt.zeros_like(y)
    assert rk.grad(cost, [x, y], disconnected="none")[1] is None
    with pytest.raises(ValueError, match="disconnected must be one of 'raise', 'zero', 'none'"):
        rk.grad(cost, x, disconnected="ignore")


def test_integer_inputs_get_no_gradient_as_in_jax():
    n = rt.vector("n", dtype="int64")
    with pytest.raises(GraphTypeError, match="cannot differentiate with respect to 'n' of dtype"):
        rk.grad(rt.sum(x * n), n)
    # no gradient flows through an integer intermediate
    cost = rt.sum(rt.cast(rt.cast(x, "int64"), "float64") + x)
    np.testing.assert_allclose(run([x], rk.grad(cost, x), np.array([1.5, 2.5])), [1.0, 1.0])


def test_bad_costs():
    with pytest.raises(
        GraphTypeError, match=r"grad: the cost must be a float scalar, got float64\[\?\]"
    ):
        rk.grad(rt.exp(x), x)
    with pytest.raises(GraphTypeError, match="grad: the cost must be a Var, got float"):
        rk.grad(1.0, x)
    with pytest.raises(GraphTypeError, match=r"grad: wrt 0 is a constant \(<Constant"):
        rk.grad(rt.sum(x), rt.constant(1.0))


def test_stop_gradient():
    cost = rt.sum(x * rt.stop_gradient(x))
    np.testing.assert_allclose(run([x], rk.grad(cost, x), np.array([1.0, 3.0])), [1.0, 3.0])
    np.testing.assert_allclose(run([x], rt.stop_gradient(x) * 2, np.array([1.0])), [2.0])
    with pytest.raises(GraphTypeError, match="does not depend on 'x'"):
        rk.grad(rt.sum(rt.stop_gradient(x)), x)
    f = rk.function([x], rk.grad(cost, x), rules=None)  # the JAX backend
    np.testing.assert_allclose(np.asarray(f(np.array([1.0, 3.0]))), [1.0, 3.0])


def test_broadcasting_is_undone_also_for_unknown_lengths():
    row = rt.matrix("row")  # at run time (1, 3), broadcast against (4, 3)
    m = rt.matrix("m")
    g = rk.grad(rt.sum(row * m), [row, m])
    values = run([row, m], g, np.ones((1, 3)), np.arange(12.0).reshape(4, 3))
    np.testing.assert_allclose(values[0], np.arange(12.0).reshape(4, 3).sum(0, keepdims=True))
    jax_values = run([row, m], g, np.ones((1, 3)), np.arange(12.0).reshape(4, 3), backend="jax")
    np.testing.assert_allclose(np.asarray(jax_values[0]), values[0])


def test_vjp_and_jvp():
    out = rt.sin(x) * y
    ct = rt.vector("ct")
    gx, gy = rk.vjp(out, [x, y], ct)
    a, b, c = np.array([0.1, 0.7]), np.array([2.0, -1.0]), np.array([1.0, 3.0])
    values = run([x, y, ct], [gx, gy], a, b, c)
    np.testing.assert_allclose(values[0], c * np.cos(a) * b, rtol=RTOL)
    np.testing.assert_allclose(values[1], c * np.sin(a), rtol=RTOL)
    t = rt.vector("t")
    jx = rk.jvp(out, x, t)
    np.testing.assert_allclose(run([x, y, t], jx, a, b, c), np.cos(a) * b * c, rtol=RTOL)
    both = rk.jvp([out, rt.sum(x)], [x, y], [t, t])
    v = run([x, y, t], both, a, b, c)
    np.testing.assert_allclose(v[0], np.cos(a) * b * c + np.sin(a) * c, rtol=RTOL)
    np.testing.assert_allclose(v[1], c.sum(), rtol=RTOL)
    with pytest.raises(GraphTypeError, match=r"vjp: cotangent 0 has type float32\[\?\]"):
        rk.vjp(out, x, rt.vector("c32", dtype="float32"))


def _composites():
    def mine(v, lib):
        return lib.sum(lib.tanh(v) * lib.exp(-v * v)) + lib.log(1 + lib.sum(v * v)) ** 2

    def softplus_mix(v, lib):
        return lib.sum(lib.logaddexp(0.0, v) * v) / (1.0 + lib.sum(lib.sin(v) ** 2))

    return [mine, softplus_mix]


@pytest.mark.parametrize("fn", _composites(), ids=lambda f: f.__name__)
@pytest.mark.parametrize("static", [True, False], ids=["static", "unknown_size"])
def test_hessian_and_jacobian_against_jax(fn, static):
    v = rt.vector("v", shape=(4,) if static else (None,))
    point = np.array([0.3, -0.8, 1.1, 0.05])
    cost = fn(v, rt)
    hess = rk.hessian(cost, v)
    jac = rk.jacobian(rt.tanh(v) * rt.sum(v**2), v)
    assert hess.type.shape == ((4, 4) if static else (None, None))
    expected_h = jax64(jax.hessian(lambda a: fn(a, jnp)), point)
    expected_j = jax64(jax.jacrev(lambda a: jnp.tanh(a) * jnp.sum(a**2)), point)
    for backend in ["numpy", "jax"]:
        h, j = run([v], [hess, jac], point, backend=backend)
        np.testing.assert_allclose(np.asarray(h), expected_h, rtol=RTOL, atol=1e-12)
        np.testing.assert_allclose(np.asarray(j), expected_j, rtol=RTOL, atol=1e-12)
    # second derivatives through plain graphs too: Hessian-vector product
    t = rt.vector("t", shape=v.type.shape)
    hvp = rk.grad(rt.sum(rk.grad(cost, v) * t), v)
    direction = np.array([1.0, 0.5, -2.0, 0.25])
    np.testing.assert_allclose(
        run([v, t], hvp, point, direction), expected_h @ direction, rtol=RTOL, atol=1e-12
    )


def test_jacobian_of_a_matrix_output_and_under_jit():
    m = rt.matrix("m")
    out = rt.exp(m) @ m.T
    jac = rk.jacobian(out, m)
    point = np.arange(6.0).reshape(2, 3) / 7
    expected = jax64(jax.jacrev(lambda a: jnp.exp(a) @ a.T), point)
    f = rk.function([m], jac)
    np.testing.assert_allclose(np.asarray(f(point)), expected, rtol=RTOL, atol=1e-12)
    with jax.enable_x64(True):
        jitted = jax.jit(f.jax_fn)(jnp.asarray(point))
    np.testing.assert_allclose(np.asarray(jitted), expected, rtol=RTOL, atol=1e-12)
    np.testing.assert_allclose(run([m], jac, point), expected, rtol=RTOL, atol=1e-12)


def test_shared_subexpressions_are_differentiated_once_and_the_graph_is_linear():
    def backward_size(steps):
        v = rt.vector("v")
        h = v
        for _ in range(steps):
            h = rt.tanh(h * 1.01 + rt.sin(h))
        g = rk.grad(rt.sum(h), v)
        return len(rk.toposort(g)) - len(rk.toposort(h))

    small, large = backward_size(30), backward_size(300)
    assert large <= 10.5 * small  # linear, not exponential or quadratic
    v = rt.vector("v")
    h = v
    for _ in range(300):
        h = rt.tanh(h * 1.01 + rt.sin(h))
    with shallow_recursion():
        g = rk.grad(rt.sum(h), v)
    point = np.array([0.1, -0.2])

    def reference(a):
        for _ in range(300):
            a = jnp.tanh(a * 1.01 + jnp.sin(a))
        return jnp.sum(a)

    np.testing.assert_allclose(
        run([v], g, point), jax64(jax.grad(reference), point), rtol=1e-7, atol=1e-12
    )


def test_softmax_regression_and_mlp_losses_against_jax():
    rng = np.random.default_rng(0)
    X, Y = rt.matrix("X"), rt.matrix("Y")
    W, b = rt.matrix("W"), rt.vector("b")
    logits = X @ W + b
    loss = -rt.mean(rt.sum(Y * rt.log_softmax(logits, axis=1), axis=1))
    data = [rng.normal(size=(8, 5)), np.eye(3)[rng.integers(0, 3, 8)]]
    params = [rng.normal(size=(5, 3)), rng.normal(size=3)]

    def jloss(w, bb, xx, yy):
        return -jnp.mean(jnp.sum(yy * jax.nn.log_softmax(xx @ w + bb, axis=1), axis=1))

    expected = [jax64(jax.grad(jloss, argnums=i), *params, *data) for i in range(2)]
    got = run([W, b, X, Y], rk.grad(loss, [W, b]), *params, *data)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=RTOL, atol=1e-12)

    Ws = [rt.matrix(f"W{i}") for i in range(3)]
    bs = [rt.vector(f"b{i}") for i in range(3)]
    h = X
    for i, (w_, b_) in enumerate(zip(Ws, bs, strict=True)):
        h = h @ w_ + b_
        if i < 2:
            h = rt.tanh(h)
    mlp = -rt.mean(rt.sum(Y * rt.log_softmax(h, axis=1), axis=1))
    sizes = [5, 7, 6, 3]
    mparams = [rng.normal(size=(sizes[i], sizes[i + 1])) for i in range(3)]
    mparams += [rng.normal(size=sizes[i + 1]) for i in range(3)]

    def jmlp(w0, w1, w2, b0, b1, b2, xx, yy):
        hh = xx
        for i, (w_, b_) in enumerate([(w0, b0), (w1, b1), (w2, b2)]):
            hh = hh @ w_ + b_
            if i < 2:
                hh = jnp.tanh(hh)
        return -jnp.mean(jnp.sum(yy * jax.nn.log_softmax(hh, axis=1), axis=1))

    wrt = [*Ws, *bs]
    grads = rk.grad(mlp, wrt)
    for backend in ["numpy", "jax"]:
        got = run([*wrt, X, Y], grads, *mparams, *data, backend=backend)
        for i, g in enumerate(got):
            e = jax64(jax.grad(jmlp, argnums=i), *mparams, *data)
            np.testing.assert_allclose(np.asarray(g), e, rtol=RTOL, atol=1e-12)


def test_verify_grad_reports_the_culprit():
    verify_grad(lambda a, b: rt.sin(a) * b, [np.array([0.1, 0.5]), np.array([2.0, -1.0])])

    class WrongSquare(rk.Op):
        def infer_types(self, t):
            return (t,)

        def vjp(self, inputs, outputs, cotangents):
            return [cotangents[0] * inputs[0]]  # should be 2 * x

    from rewritekit.backends.numpy import numpy_funcify

    @numpy_funcify.register(WrongSquare)
    def _(op, node):
        return lambda a: a * a

    with pytest.raises(
        GradientMismatch,
        match=r"input 0 \(shape \(3,\)\), element \(0,\): the symbolic gradient is",
    ):
        verify_grad(lambda a: WrongSquare()(a), [np.array([1.0, 2.0, 3.0])])


def test_gradient_graphs_compose_with_rewriting():
    from rewritekit.rules import lvar, rule

    a = lvar("a")
    v = rt.vector("v")
    cost = rt.sum(rt.log(1 + rt.exp(v)))
    g = rk.grad(cost, v)
    jac = rk.jacobian(g, v)
    stable = rule(rt.log(1 + rt.exp(a)), rt.softplus(a), name="softplus")
    f = rk.function([v], [cost, g, jac], rules=[stable])
    assert [e.rule for e in f.trace] == ["softplus"]
    point = np.array([0.5, -2.0])
    value, grad_value, jac_value = f(point)
    sig = 1 / (1 + np.exp(-point))
    np.testing.assert_allclose(np.asarray(grad_value), sig, rtol=RTOL)
    np.testing.assert_allclose(np.asarray(jac_value), np.diag(sig * (1 - sig)), rtol=RTOL)
    assert float(value) == pytest.approx(np.logaddexp(0, point).sum(), rel=1e-12)
