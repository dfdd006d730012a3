"""``rk.from_jax`` and ``rk.optimize``: calls, control flow, custom derivatives, opaque
primitives, the errors, and the optimized function composing with jit, grad and vmap."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.special import expit

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.jaxpr import PRIMITIVES, OpaqueJax, UnmappedPrimitiveError, register_primitive


def bernoulli_logit_loglik(z, y):
    """NumPyro-style: the log-likelihood of y under Bernoulli(sigmoid(z))."""
    p = jax.nn.sigmoid(z)
    return jnp.sum(y * jnp.log(p) + (1 - y) * jnp.log(1 - p))


def _numpy(inputs, outputs, *values):
    return rk.function(list(inputs), outputs, backend="numpy", rules=None)(*values)


def test_pytrees_calls_and_control_flow_import():
    def fn(params, xs):
        def step(carry, x):
            return carry * params["decay"] + x, jnp.tanh(carry)

        final, ys = jax.lax.scan(step, 0.0, xs)
        count = jax.lax.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * 2.0), (0, 1.0))
        branch = jax.lax.cond(final > 0, jnp.exp, jnp.negative, final)
        return {"final": final, "ys": jax.jit(jnp.cumsum)(ys), "pair": (count[1], branch)}

    params, xs = {"decay": 0.5}, np.array([1.0, -2.0, 3.0])
    with jax.enable_x64(True):
        inputs, outputs = rk.from_jax(fn, params, xs)
        assert isinstance(inputs[0]["decay"], rk.Var) and isinstance(outputs["pair"], tuple)
        got = _numpy(inputs, outputs, params, xs)
        expected = fn(params, xs)
    for a, b in zip(jax.tree.leaves(got), jax.tree.leaves(expected), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-14)


def test_custom_jvp_functions_import_their_primal_and_rk_grad_differentiates_it():
    @jax.custom_jvp
    def clipped(x):
        return jnp.clip(x, -1.0, 1.0)

    @clipped.defjvp
    def _(primals, tangents):  # a straight-through derivative: 1 everywhere
        return clipped(*primals), tangents[0]

    with jax.enable_x64(True):
        (x,), y = rk.from_jax(lambda v: jnp.sum(clipped(v)), np.zeros(3))
        g = _numpy([x], rk.grad(y, x), np.array([-3.0, 0.5, 3.0]))
    np.testing.assert_array_equal(g, [0.0, 1.0, 0.0])  # the primal's, not the custom rule's


def test_unmapped_primitives_are_errors_naming_the_primitive_and_the_line():
    def fn(x):
        return jax.lax.reduce_window(x, -np.inf, jax.lax.max, (2,), (1,), "VALID")  # no mapping

    with pytest.raises(
        UnmappedPrimitiveError,
        match=r"'reduce_window_max'.*window_dimensions=\(2,\).*test_import\.py",
    ):
        rk.from_jax(fn, np.zeros(3))


def test_a_python_value_of_a_traced_value_is_jaxs_own_error():
    def fn(x):
        return x if x > 0 else -x

    with pytest.raises(jax.errors.ConcretizationTypeError):
        rk.from_jax(fn, np.float64(1.0))


def test_opaque_primitives_run_on_jax_refuse_numpy_and_bar_the_rules():
    def fn(key, z):
        noise = jax.random.normal(key, (3,))
        return jnp.log(1 + jnp.exp(z + noise))  # softplus around an opaque draw

    key, z = jax.random.key(7), np.array([800.0, 0.0, -800.0])
    with jax.enable_x64(True):
        (k, zv), y = rk.from_jax(fn, key, z, opaque=True)
        assert k.type.shape == (2,) and k.dtype == "uint32"  # a key is its raw data
        opaque = [n for n in rk.ancestors([y]) if n.owner and isinstance(n.owner.op, OpaqueJax)]
        assert opaque and "random_bits" in {n.owner.op.primitive_name for n in opaque}
        f = rk.function([k, zv], y, backend="jax")  # the rules rewrite softplus around it
        got = np.asarray(f(jax.random.key_data(key), z))
        noise = jax.random.normal(key, (3,))
    np.testing.assert_allclose(got, np.logaddexp(0, z + np.asarray(noise)), rtol=1e-12)
    assert np.isfinite(got).all()
    with pytest.raises(NotImplementedError, match=r"OpaqueJax\(random_bits\)"):
        rk.function([k, zv], y, backend="numpy")
    with pytest.raises(UnmappedPrimitiveError, match="random_bits"):
        rk.from_jax(fn, key, z)


def test_register_primitive_maps_a_new_primitive():
    original = PRIMITIVES.pop("cumlogsumexp", None)
    try:

        @register_primitive("cumlogsumexp")
        def _(params, x):
            return [rt.log(rt.lax.cumsum(rt.exp(x), params["axis"], params["reverse"]))]

        with jax.enable_x64(True):
            (x,), y = rk.from_jax(lambda v: jax.lax.cumlogsumexp(v), np.zeros(3))
        got = _numpy([x], y, np.array([0.0, 1.0, 2.0]))
        np.testing.assert_allclose(got, np.logaddexp.accumulate([0.0, 1.0, 2.0]), rtol=1e-14)
    finally:
        PRIMITIVES.pop("cumlogsumexp")
        if original is not None:
            PRIMITIVES["cumlogsumexp"] = original


def test_optimize_makes_the_bernoulli_logit_likelihood_exact_and_composes():
    z, y = np.array([800.0, -800.0, 0.5]), np.array([0.0, 1.0, 1.0])
    with jax.enable_x64(True):
        plain = bernoulli_logit_loglik(z, y)
        optimized = rk.optimize(bernoulli_logit_loglik)
        exact = -800.0 - 800.0 + np.log(1 / (1 + np.exp(-0.5)))
        assert not np.isfinite(plain)
        np.testing.assert_allclose(optimized(z, y), exact, rtol=1e-14)
        np.testing.assert_allclose(jax.jit(optimized)(z, y), exact, rtol=1e-14)
        grad = jax.grad(optimized)(z, y)  # y - sigmoid(z), finite at |z| = 800
        np.testing.assert_allclose(grad, y - expit(z), rtol=1e-14)
        batched = jax.vmap(optimized, in_axes=(0, None))(np.stack([z, -z]), y)
        np.testing.assert_allclose(batched[0], exact, rtol=1e-14)
        assert "softplus" in optimized.explain(z, y)
        optimized(z + 1.0, y)  # the same signature: no new import
        assert len(optimized._entries) == 1
        optimized(z[:2], y[:2])
        assert len(optimized._entries) == 2


def test_jaxs_own_custom_jvp_functions_keep_their_derivatives():
    def fn(x):
        return jnp.sum(jax.nn.relu(x) + jax.nn.relu6(6 * x) + jax.scipy.special.xlogy(x, 2.0))

    x = np.array([0.0, 1.0, -1.0])
    with jax.enable_x64(True):
        optimized = rk.optimize(fn)
        np.testing.assert_allclose(jax.grad(optimized)(x), jax.grad(fn)(x), rtol=1e-14)
        _, y = rk.from_jax(fn, x)
    ops = {type(n.owner.op).__name__ for n in rk.ancestors([y]) if n.owner is not None}
    assert "Xlogy" in ops  # our Op (with its derivative), not JAX's where-guarded primal
