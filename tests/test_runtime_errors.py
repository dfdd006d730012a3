"""Errors at call time point at the graph (``GraphRuntimeError``), and the NaN hunter of
``rk.function(..., debug_nans=True)`` names the node that made a NaN (``NonFiniteError``)."""

from __future__ import annotations

import pickle

import jax
import numpy as np
import pytest

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.backends.jax import jax_funcify
from rewritekit.backends.numpy import numpy_funcify
from rewritekit.errors import ShapeError
from rewritekit.tensor.control.api import map as rk_map

BACKENDS = ["numpy", "jax"]
# what each backend raises where shapes do not broadcast
BROADCAST = {"numpy": ValueError, "jax": TypeError}
# the end of a message, less the note JAX adds to errors raised under jax.jit
END = r"(\n-{20}\n.*)?$"


def _causes(error: BaseException) -> list[BaseException]:
    """The chain of ``__cause__``s below ``error``."""
    chain = []
    while error.__cause__ is not None:
        error = error.__cause__
        chain.append(error)
    return chain


# --- GraphRuntimeError ----------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_shapes_that_do_not_broadcast_name_the_op_inputs_and_shapes(backend):
    x, y = rt.vector("x"), rt.vector("y")
    f = rk.function([x, y], x + y, backend=backend, rules=None)
    with pytest.raises(
        rk.GraphRuntimeError,
        match=r"^Add failed when the function ran: \w+Error: .*\n"
        r"  node:   Add\('x', 'y'\)\n  inputs: 'x': float64\[3\], 'y': float64\[4\]" + END,
    ) as caught:
        f(np.ones(3), np.ones(4))
    cause = caught.value.__cause__
    assert type(cause) is BROADCAST[backend]
    assert isinstance(caught.value, BROADCAST[backend])  # `except ValueError` still catches it
    assert caught.value.node.op == rt.add(x, y).owner.op
    # what JAX or NumPy said is kept, after the Op's name
    assert str(cause).strip() in str(caught.value)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_failed_reshape_and_a_failed_shape_check(backend):
    x = rt.vector("x")
    f = rk.function([x], rt.reshape(x, (2, 2)) * 2.0, backend=backend)
    with pytest.raises(
        rk.GraphRuntimeError, match=r"(?s)^Reshape\{shape=\(2, 2\)\} failed.*'x': float64\[3\]"
    ) as caught:
        f(np.ones(3))
    assert "reshape" in str(caught.value.__cause__)
    g = rk.function([x], rt.specify_shape(x, (3,)) + 1.0, backend=backend)
    with pytest.raises(
        rk.GraphRuntimeError,
        match=r"(?s)^SpecifyShape\{shape=\(3,\)\} failed when the function ran: ValueError: "
        r"specify_shape: .* has shape \(4,\) at run time, not \(3,\).*inputs: 'x': float64\[4\]",
    ) as caught:
        g(np.ones(4))
    assert type(caught.value.__cause__) is ValueError
    np.testing.assert_allclose(g(np.ones(3)), 2.0)  # the function still works


def test_a_singular_matrix_names_the_node_and_stays_a_linalg_error():
    a = rt.matrix("a")
    f = rk.function([a], rt.linalg.inv(a), backend="numpy")
    with pytest.raises(
        np.linalg.LinAlgError,  # what code around a call (a sampler) catches keeps working
        match=r"^Inv failed when the function ran: LinAlgError: Singular matrix\n  node:   "
        r"Inv\('a'\)\n  inputs: 'a': float64\[2,2\]$",
    ) as caught:
        f(np.zeros((2, 2)))
    assert isinstance(caught.value, rk.GraphRuntimeError)
    assert type(caught.value.__cause__) is np.linalg.LinAlgError
    # it pickles (to another process) as the plain GraphRuntimeError, message kept
    copy = pickle.loads(pickle.dumps(caught.value))
    assert type(copy) is rk.GraphRuntimeError and str(copy) == str(caught.value)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_node_made_by_a_rule_names_the_rule(backend):
    x, y = rt.vector("x"), rt.vector("y")
    out = rt.exp(x) * rt.exp(y)  # -> exp(x + y): the Add is the rule's
    rule = "specialize.exp_times_exp_to_exp_of_sum"
    for _ in range(2):  # compiled, then a cache hit (its callable runs over stand-in inputs)
        f = rk.function([x, y], out, backend=backend)
        assert rule in f.trace.fired()
        with pytest.raises(
            rk.GraphRuntimeError,
            match=rf"^Add failed.*\n  node:   Add\('x', 'y'\)\n  inputs: 'x': float64\[3\], "
            rf"'y': float64\[4\]\n  made by rule '{rule}'" + END,
        ) as caught:
            f(np.ones(3), np.ones(4))
        assert type(caught.value.__cause__) is BROADCAST[backend]
        assert caught.value.node is f.graph.owner.inputs[0].owner  # add(x, y) of f.graph
        assert caught.value.rule == rule


def test_a_singular_matrix_in_a_solve_made_by_a_rule():
    a, b = rt.matrix("a"), rt.vector("b")
    f = rk.function([a, b], rt.linalg.inv(a) @ b, backend="numpy")
    with pytest.raises(
        rk.GraphRuntimeError,
        match=r"(?s)^Solve failed.*Singular matrix.*'a': float64\[2,2\], 'b': float64\[2\]\n"
        r"  made by rule 'specialize.matmul_inv_to_solve'$",
    ):
        f(np.zeros((2, 2)), np.ones(2))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_node_inside_a_loop_body_names_the_loop(backend):
    m, v = rt.matrix("m"), rt.vector("v")
    f = rk.function([m, v], rk_map(lambda row: rt.sum(row * v), m), backend=backend)
    with pytest.raises(
        rk.GraphRuntimeError,
        match=r"^Dot failed when the function ran: .*\n  node:   Dot\('%0', '%1'\)\n"
        r"  inputs: '%0': float64\[3\], '%1': float64\[4\]\n"
        r"  inside: Scan\{.*\}\('m', 'v'\)\n  made by rule 'specialize\.\w+'" + END,
    ):
        f(np.ones((2, 3)), np.ones(4))


class _Failing(rk.Op):
    """A test Op whose implementations raise a rewritekit error of their own."""

    def infer_types(self, x):
        return (x,)


def _raise_shape_error(x):
    raise ShapeError("failing: a message that already names the culprit")


numpy_funcify.register(_Failing, lambda op, node: _raise_shape_error)
jax_funcify.register(_Failing, lambda op, node: _raise_shape_error)


@pytest.mark.parametrize("backend", BACKENDS)
def test_rewritekit_errors_and_argument_errors_are_left_as_they_are(backend):
    x, y = rt.vector("x"), rt.vector("y")
    f = rk.function([x], _Failing()(x) + 1.0, backend=backend)
    with pytest.raises(ShapeError, match=r"^failing: a message that already names") as caught:
        f(np.ones(3))
    assert not isinstance(caught.value, rk.GraphRuntimeError)
    g = rk.function([x, y], x + y, backend=backend)
    with pytest.raises(TypeError, match=r"^function takes 2 arguments \(x, y\), got 1$") as caught:
        g(np.ones(3))
    assert not isinstance(caught.value, rk.GraphRuntimeError)
    with pytest.raises(ValueError, match=r"^input 'x' \(position 0\): expected 1 dimensions"):
        g(np.ones((2, 2)), np.ones(2))


# --- the NaN hunter -------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_nan_born_deep_in_a_gradient_is_traced_to_its_node(backend):
    x = rt.vector("x")
    grad = rk.grad(rt.sqrt(rt.sum(x**2)), x)  # x / |x|: at x = 0, 0.5 / sqrt(0) = inf, * 0
    f = rk.function([x], grad, backend=backend, debug_nans=True)
    with pytest.raises(
        rk.NonFiniteError,
        match=r"^TrueDivide produced NaN or inf from finite inputs\n"
        r"  node:   0.5 / sqrt\(sum\(.*\)\)\n"
        r"  inputs: 0.5: float64\[\], min 0.5, max 0.5, 0 non-finite\n"
        r"          Sqrt\(...\): float64\[\], min 0, max 0, 0 non-finite\n"
        r"  output: float64\[\]: 1 \+inf\n"
        r"  made by rule 'canonicalize.cancel_in_true_divide'\n"
        r"\(debug_nans: output 0 \(float64\[2\]: 2 NaN\) from finite inputs; found by running "
        r"the graph again node by node with the NumPy reference\)$",
    ):
        f(np.zeros(2))
    np.testing.assert_allclose(f(np.array([3.0, 4.0])), [0.6, 0.8])  # finite: no hunt
    assert isinstance(rk.NonFiniteError("x"), FloatingPointError)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_hunter_names_the_rule_that_made_the_node(backend):
    x = rt.vector("x")
    f = rk.function([x], rt.log(1 + x), backend=backend, debug_nans=True)
    with pytest.raises(
        rk.NonFiniteError,
        match=r"(?s)^Log1p produced NaN.*  inputs: 'x': float64\[2\], min -2, max 1, 0 non-finite"
        r"\n  output: float64\[2\]: 1 NaN\n  made by rule 'stabilize.log1p_of_one_plus'\n",
    ):
        f(np.array([-2.0, 1.0]))


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_hunter_is_quiet_where_inputs_hold_nan_and_when_off(backend):
    x = rt.vector("x")
    f = rk.function([x], rt.log(1 + x), backend=backend, debug_nans=True)
    out = np.asarray(f(np.array([np.nan, -2.0])))  # a NaN in: NaN out is no news
    assert np.isnan(out).all()
    off = rk.function([x], rt.log(1 + x), backend=backend)
    assert not off.debug_nans
    assert np.isnan(np.asarray(off(np.array([-2.0, 1.0]))))[0]
    off.debug_nans = True  # a switch on the function, as check_rewrites
    with pytest.raises(rk.NonFiniteError, match=r"^Log1p produced NaN"):
        off(np.array([-2.0, 1.0]))


def test_a_singular_matrix_under_jax_is_traced_to_the_solve():
    a, b = rt.matrix("a"), rt.vector("b")
    f = rk.function([a, b], rt.linalg.inv(a) @ b, debug_nans=True)  # JAX: NaN, no exception
    with pytest.raises(
        rk.NonFiniteError,
        match=r"(?s)^Solve raised LinAlgError \(Singular matrix\) on finite inputs\n"
        r"  node:   solve\(a, b\).*made by rule 'specialize.matmul_inv_to_solve'",
    ):
        f(np.zeros((2, 2)), np.ones(2))


def test_a_constant_nan_has_no_node_to_blame():
    x = rt.vector("x")
    f = rk.function([x], x + np.nan, backend="numpy", debug_nans=True)
    with pytest.raises(rk.NonFiniteError, match=r"no node made a NaN.*a constant holds one"):
        f(np.ones(2))


class _Differs(rk.Op):
    """A test Op whose JAX implementation makes a NaN where the NumPy reference does not."""

    def infer_types(self, x):
        return (x,)


numpy_funcify.register(_Differs, lambda op, node: lambda x: x)
jax_funcify.register(_Differs, lambda op, node: lambda x: x * np.nan)


def test_the_jax_implementations_are_hunted_when_the_reference_finds_nothing():
    x = rt.vector("x")
    f = rk.function([x], _Differs()(x) + 1.0, debug_nans=True)
    with pytest.raises(
        rk.NonFiniteError,
        match=r"(?s)^_Differs produced NaN.*found by running the graph again node by node "
        r"with the JAX implementations, eagerly\)$",
    ):
        f(np.ones(2))


def test_jax_debug_nans_is_the_hunter_under_jax_fn():
    x = rt.vector("x")
    f = rk.function([x], rt.log(1 + x))
    fn = jax.jit(f.jax_fn)
    with jax.enable_x64(True):
        assert np.isnan(fn(np.array([-2.0, 1.0]))[0])  # off: JAX returns the NaN
        with jax.debug_nans(True), pytest.raises(FloatingPointError, match="Log1p"):
            fn(np.array([-2.0, 1.0]))
