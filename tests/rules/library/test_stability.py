"""End to end: the default pipeline makes `rk.function` exact at the inputs where the graph
as written overflows or loses every digit, on both backends; `rk.grad` is as stable as the
forward; `check_rewrites` names a rule that changes a value."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.special as sp

import rewritekit as rk
import rewritekit.tensor as rt

x = rt.vector("x")
A = rt.matrix("A", shape=(3, 3))

# (name, input, graph as written, point, exact value at the point)
CASES = [
    ("log_one_plus", x, rt.log(1 + x), [1e-20, 1e-300], [1e-20, 1e-300]),
    ("log_one_minus", x, rt.log(1 - x), [1e-20], [-1e-20]),
    ("exp_minus_one", x, rt.exp(x) - 1, [1e-20, -1e-30], [1e-20, -1e-30]),
    ("log_one_plus_exp", x, rt.log(1 + rt.exp(x)), [1000.0, -800.0], [1000.0, 0.0]),
    ("log1p_exp", x, rt.log1p(rt.exp(x)), [1000.0], [1000.0]),
    ("log_sigmoid", x, rt.log(rt.sigmoid(x)), [-800.0, 800.0], [-800.0, 0.0]),
    ("log_one_minus_sigmoid", x, rt.log(1 - rt.sigmoid(x)), [40.0, 800.0], [-40.0, -800.0]),
    ("one_minus_sigmoid", x, 1 - rt.sigmoid(x), [40.0], [np.exp(-40.0) / (1 + np.exp(-40.0))]),
    ("logsumexp", x, rt.log(rt.sum(rt.exp(x))), [1000.0, 1000.0], 1000.0 + np.log(2.0)),
    (
        "logaddexp",
        x,
        rt.log(rt.exp(x) + rt.exp(x + 1)),
        [1000.0],
        [1001.0 + np.log1p(np.exp(-1.0))],
    ),
    ("log_softmax", x, rt.log(rt.softmax(x)), [1000.0, 0.0], [0.0, -1000.0]),
    ("log1mexp", x, rt.log1p(-rt.exp(x)), [-1e-20], [np.log(1e-20)]),
    ("log_one_minus_exp", x, rt.log(1 - rt.exp(x)), [-1e-20], [np.log(1e-20)]),
    ("erfc", x, 1 - rt.erf(x), [10.0], [sp.erfc(10.0)]),
    ("erfc_neg", x, 1 + rt.erf(x), [-10.0], [sp.erfc(10.0)]),
    ("log_erfc", x, rt.log(rt.erfc(x)), [30.0], [np.log(sp.erfcx(30.0)) - 900.0]),
    ("xlogy", x, x * rt.log(x), [0.0, 2.0], [0.0, 2.0 * np.log(2.0)]),
    ("log_det", A, rt.log(rt.linalg.det(A)), 1e200 * np.eye(3), 3 * np.log(1e200)),
    ("log_prod", x, rt.log(rt.prod(x)), [1e200, 1e200], 2 * np.log(1e200)),
]


def _run(inp, graph, point, backend, rules):
    f = rk.function([inp], graph, backend=backend, rules=rules)
    with np.errstate(all="ignore"):
        return np.asarray(f(np.asarray(point, dtype=np.float64)))


@pytest.mark.parametrize("backend", ["numpy", "jax"])
@pytest.mark.parametrize(
    ("name", "inp", "graph", "point", "exact"), CASES, ids=[c[0] for c in CASES]
)
def test_stabilized_graphs_are_exact_where_the_written_graph_is_not(
    name, inp, graph, point, exact, backend
):
    written = _run(inp, graph, point, backend, None)
    stable = _run(inp, graph, point, backend, "default")
    np.testing.assert_allclose(stable, exact, rtol=1e-12, atol=0)
    wrong = ~np.isclose(written, exact, rtol=1e-6, atol=0)
    assert wrong.any(), f"{name}: the graph as written is already exact: {written}"


def test_gradient_of_log_one_minus_sigmoid_at_40_is_minus_one():
    v = rt.scalar("v")
    cost = rt.log(1 - rt.sigmoid(v))
    g = rk.grad(cost, v)
    raw = rk.grad(cost, v, stabilize=False)
    for backend in ("numpy", "jax"):
        f = rk.function([v], [g, raw], backend=backend, rules=None)
        with np.errstate(all="ignore"):
            stable, written = (float(a) for a in f(40.0))
        assert stable == pytest.approx(-1.0, rel=1e-15), backend
        assert not np.isclose(written, -1.0), backend  # the literal chain rule: NaN or 0
    forward = rk.function([v], cost)
    with jax.enable_x64(True):
        assert float(jax.grad(forward.jax_fn)(jnp.float64(40.0))) == pytest.approx(-1.0)


@pytest.mark.parametrize(
    ("build", "point", "exact"),
    [
        (lambda v: rt.log(1 + rt.exp(v)), 1000.0, 1.0),  # softplus' = sigmoid
        (lambda v: rt.log(rt.sigmoid(v)), -800.0, 1.0),
        (lambda v: rt.log(1 + v), 1e-20, 1.0),
    ],
)
def test_gradients_are_as_stable_as_the_forward(build, point, exact):
    v = rt.scalar("v")
    g = rk.grad(build(v), v)
    for backend in ("numpy", "jax"):
        got = float(rk.function([v], g, backend=backend)(point))
        assert got == pytest.approx(exact, rel=1e-12), backend
    forward = rk.function([v], build(v))  # JAX differentiates the rewritten forward
    with jax.enable_x64(True):
        assert float(jax.grad(forward.jax_fn)(jnp.float64(point))) == pytest.approx(
            exact, rel=1e-12
        )


def test_grad_keeps_an_intermediate_wrt():
    v = rt.vector("v")
    h = rt.exp(v)
    cost = rt.sum(rt.log(1 + h))
    g = rk.grad(cost, h)
    point = np.array([0.5, 1.5])
    got = rk.function([v], g, backend="numpy")(point)
    np.testing.assert_allclose(got, 1 / (1 + np.exp(point)), rtol=1e-12)


def test_check_rewrites_names_the_rule_that_changes_a_value():
    a = rk.lvar("a")
    wrong = rk.rule(rt.log(1 + a), rt.log(a), name="wrong_log")
    f = rk.function([x], rt.log(1 + x), rules=[wrong], check_rewrites=True, backend="numpy")
    with pytest.raises(rk.RewriteMismatch, match="wrong_log"):
        f([1.0, 2.0])
    ok = rk.function([x], rt.log(1 + rt.exp(x)), check_rewrites=True)
    assert ok.trace.fired()
    np.testing.assert_allclose(np.asarray(ok([1000.0, 0.0])), [1000.0, np.log(2.0)])
