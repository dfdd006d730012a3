"""Pytrees in ``rk.function`` and ``rk.grad``, as ``jax.jit`` and ``jax.grad`` take them:
nested tuples, lists, dicts, named tuples and ``None`` of Vars in, the same structures out,
with argument checks that name the path."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.errors import GraphTypeError

BACKENDS = ["numpy", "jax"]
x = rt.vector("x", shape=(3,))


class Layer(NamedTuple):
    w: rk.Var
    b: rk.Var


def _params():
    return {
        "hidden": Layer(rt.matrix("W1", shape=(4, 3)), rt.vector("b1", shape=(4,))),
        "out": [rt.vector("w2", shape=(4,)), None],
    }


def _loss(p):
    h = rt.tanh(p["hidden"].w @ x + p["hidden"].b)
    return rt.sum(h * p["out"][0])


def _values(seed=0):
    rng = np.random.default_rng(seed)
    return {
        "hidden": Layer(rng.normal(size=(4, 3)), rng.normal(size=4)),
        "out": [rng.normal(size=4), None],
    }


def _jax_loss(p, xv):
    h = jnp.tanh(p["hidden"].w @ xv + p["hidden"].b)
    return jnp.sum(h * p["out"][0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_function_of_pytrees_takes_and_returns_them(backend):
    p = _params()
    loss = _loss(p)
    f = rk.function([x, p], {"loss": loss, "grads": rk.grad(loss, p)}, backend=backend)
    xv, pv = np.array([0.5, -1.0, 2.0]), _values()
    out = f(xv, pv)
    assert set(out) == {"grads", "loss"}
    assert isinstance(out["grads"]["hidden"], Layer) and out["grads"]["out"][1] is None
    with jax.enable_x64(True):
        expected_loss, expected = jax.value_and_grad(_jax_loss)(pv, xv)
    np.testing.assert_allclose(out["loss"], expected_loss, rtol=1e-12)
    for got, want in zip(jax.tree.leaves(out["grads"]), jax.tree.leaves(expected), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_grad_of_a_pytree_has_its_structure():
    p = _params()
    g = rk.grad(_loss(p), p)
    assert isinstance(g, dict) and isinstance(g["hidden"], Layer)
    assert g["out"][1] is None and g["hidden"].w.type == p["hidden"].w.type


def test_flat_outputs_are_still_a_list_and_nested_ones_keep_their_structure():
    f = rk.function([x], [x * 2, (x, None)], backend="numpy")
    doubled, (same, nothing) = f(np.ones(3))
    assert isinstance(f(np.ones(3)), list) and nothing is None
    np.testing.assert_array_equal(doubled, 2 * np.ones(3))
    np.testing.assert_array_equal(same, np.ones(3))
    assert isinstance(rk.function([x], (x, x * 2), backend="numpy")(np.ones(3)), list)


def test_a_leaf_takes_a_python_list():
    f = rk.function([{"v": x}], rt.sum(x), backend="numpy")
    assert float(f({"v": [1.0, 2.0, 3.0]})) == 6.0


def test_argument_errors_name_the_path():
    p = _params()
    f = rk.function([x, p], _loss(p), backend="numpy")
    xv, pv = np.ones(3), _values()
    with pytest.raises(TypeError, match=r"argument 1 must be a dict with keys \['hidden', 'out'\]"):
        f(xv, {"hidden": pv["hidden"]})
    with pytest.raises(TypeError, match=r"argument 1\['out'\] must be a list of 2 items, got 1"):
        f(xv, {**pv, "out": [np.ones(4)]})
    with pytest.raises(TypeError, match=r"argument 1\['out'\]\[1\] must be None, got ndarray"):
        f(xv, {**pv, "out": [np.ones(4), np.ones(4)]})
    bad = {**pv, "hidden": Layer(np.ones((4, 2)), np.ones(4))}
    with pytest.raises(
        ValueError, match=r"input 'W1' \(argument 1\['hidden'\]\.w\): expected shape"
    ):
        f(xv, bad)
    with pytest.raises(TypeError, match="takes 2 arguments, got 1"):
        f(xv)


def test_a_leaf_that_is_not_a_var_is_named_by_its_path():
    with pytest.raises(GraphTypeError, match=r"input 1\['w'\] must be a Var, got int"):
        rk.function([x, {"w": 3}], x)


@pytest.mark.filterwarnings("ignore:Some donated buffers were not usable")
def test_shardings_and_donation_follow_the_arguments():
    mesh = jax.make_mesh((1,), ("d",), axis_types=(jax.sharding.AxisType.Auto,))
    replicated = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec())
    p = _params()
    f = rk.function(
        [x, p],
        {"loss": _loss(p)},
        in_shardings=(replicated, {"hidden": replicated, "out": [replicated, None]}),
        out_shardings={"loss": replicated},
        donate_argnums=0,
    )
    pv = _values(1)
    with jax.enable_x64(True):
        expected = _jax_loss(pv, np.ones(3))
    np.testing.assert_allclose(f(np.ones(3), pv)["loss"], expected, rtol=1e-12)
    with pytest.raises(GraphTypeError, match=r"in_shardings has 3 entries for 2 in the structure"):
        rk.function([x, p], _loss(p), in_shardings=(None, None, None))
