"""rk.function: outputs, argument checking, backends, jax_fn, dtypes."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.errors import DTypeError, GraphTypeError

BACKENDS = ["numpy", "jax"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_one_output_gives_an_array_and_a_list_gives_a_list(backend):
    x, s = rt.vector("x"), rt.scalar("s")
    f = rk.function([x, s], rt.exp(x) * s, backend=backend)
    out = f(np.array([0.0, 1.0]), 2.0)
    np.testing.assert_allclose(out, 2.0 * np.exp([0.0, 1.0]))
    g = rk.function([x, s], [x * s, s], backend=backend)
    a, b = g(np.array([1.0, 2.0]), 3.0)
    np.testing.assert_allclose(a, [3.0, 6.0])
    assert float(b) == 3.0
    assert isinstance(g(np.ones(1), 1.0), list)


def test_backends_return_their_array_types():
    x = rt.vector("x")
    assert type(rk.function([x], x + 1.0, backend="numpy")(np.ones(2))) is np.ndarray
    assert isinstance(rk.function([x], x + 1.0)(np.ones(2)), jax.Array)


@pytest.mark.parametrize("backend", BACKENDS)
def test_outputs_may_be_inputs_or_constants_and_inputs_may_be_unused(backend):
    x, unused = rt.vector("x"), rt.scalar("unused")
    f = rk.function([x, unused], [x, rt.constant([1.0, 2.0]), 3.0], backend=backend)
    data = np.array([5.0, 6.0])
    a, b, c = f(data, 0.0)
    np.testing.assert_array_equal(a, data)
    np.testing.assert_array_equal(b, [1.0, 2.0])
    assert float(c) == 3.0
    if backend == "numpy":  # outputs never alias the caller's arrays or the graph's constants
        a[0] = 99.0
        b[0] = 99.0
        assert data[0] == 5.0 and rt.constant([1.0, 2.0]).data[0] == 1.0


@pytest.mark.parametrize("backend", BACKENDS)
def test_float32_graphs_stay_float32_and_float64_stay_float64(backend):
    x32, x64 = rt.vector("x32", dtype="float32"), rt.vector("x64")
    f = rk.function([x32, x64], [x32 * 5.0, x64 * 5.0, rt.log(5.0)], backend=backend)
    a, b, c = f(np.ones(2, "float32"), np.ones(2))
    assert np.asarray(a).dtype == np.float32
    assert np.asarray(b).dtype == np.float64
    assert np.asarray(c).dtype == np.float64
    assert float(c) == np.log(5.0)  # exact: 5.0 is a float64 constant, not float32


def test_jax_backend_keeps_float64_whatever_the_global_x64_setting():
    assert not jax.config.jax_enable_x64  # the test process leaves JAX at its default
    x = rt.vector("x")
    f = rk.function([x], x / 3.0)
    out = f(np.ones(2))
    assert out.dtype == jnp.float64
    np.testing.assert_array_equal(np.asarray(out), np.ones(2) / 3.0)
    assert not jax.config.jax_enable_x64


def test_argument_errors_name_the_input():
    x = rt.vector("x", dtype="float32")
    m = rt.matrix("m", shape=(None, 3))
    f = rk.function([x, m], x.sum(), backend="numpy")
    with pytest.raises(TypeError, match=r"function takes 2 arguments \(x, m\), got 1"):
        f(np.ones(2, "float32"))
    with pytest.raises(DTypeError, match=r"input 'x' \(position 0\): cannot safely cast float64"):
        f(np.ones(2), np.ones((1, 3)))
    with pytest.raises(ValueError, match=r"input 'x' \(position 0\): expected 1 dimensions"):
        f(np.ones((2, 2), "float32"), np.ones((1, 3)))
    with pytest.raises(ValueError, match=r"input 'm' \(position 1\): expected shape \(\?, 3\)"):
        f(np.ones(2, "float32"), np.ones((1, 4)))
    with pytest.raises(GraphTypeError, match=r"input 'x' \(position 0\): expected numbers"):
        f(["a"], np.ones((1, 3)))
    with pytest.raises(DTypeError, match=r"input 'i' \(position 0\): cannot safely cast float"):
        rk.function([i := rt.vector("i", dtype="int32")], i)(2.5)
    with pytest.raises(DTypeError, match=r"input 'i'.* out of bounds for int8"):
        rk.function([i := rt.scalar("i", dtype="int8")], i)(300)


@pytest.mark.parametrize("backend", BACKENDS)
def test_safe_casts_and_python_values_are_accepted(backend):
    x = rt.vector("x")
    f = rk.function([x], x * 2.0, backend=backend)
    np.testing.assert_array_equal(f(np.array([1, 2], dtype="int32")), [2.0, 4.0])
    np.testing.assert_array_equal(f([1, 2]), [2.0, 4.0])
    s32 = rt.scalar("s", dtype="float32")
    g = rk.function([s32], s32 + 1.0, backend=backend)
    assert np.asarray(g(2.5)).dtype == np.float32  # a Python float is weak
    assert np.asarray(g(2)).dtype == np.float32


def test_jax_arrays_are_accepted():
    x = rt.vector("x")
    f = rk.function([x], x + 1.0)
    with jax.enable_x64(True):
        data = jnp.arange(3.0)
    np.testing.assert_array_equal(np.asarray(f(data)), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(np.asarray(f(jnp.arange(3, dtype=jnp.int32))), [1.0, 2.0, 3.0])


def test_trust_input_skips_checks():
    x = rt.vector("x")
    f = rk.function([x], x + 1.0, backend="numpy", trust_input=True)
    np.testing.assert_array_equal(f(np.ones(2)), [2.0, 2.0])
    f.trust_input = False
    with pytest.raises(ValueError, match="expected 1 dimensions"):
        f(np.ones((2, 2)))


def test_bad_function_definitions_name_the_culprit():
    x, y = rt.vector("x"), rt.vector("y")
    with pytest.raises(GraphTypeError, match=r"outputs depend on <Var 'y' float64\[\?\]>"):
        rk.function([x], x + y)
    with pytest.raises(GraphTypeError, match=r"input 1 .* is computed by the graph"):
        rk.function([x, rt.exp(x)], x)
    with pytest.raises(GraphTypeError, match="input 1 must be a Var, got int"):
        rk.function([x, 3], x)
    with pytest.raises(GraphTypeError, match="listed twice"):
        rk.function([x, x], x)
    with pytest.raises(GraphTypeError, match="inputs must be a list of Vars"):
        rk.function(x, x)
    with pytest.raises(ValueError, match=r"unknown backend 'torch'; available: .*jax, numpy"):
        rk.function([x], x, backend="torch")
    with pytest.raises(ValueError, match="unknown rule set 'fancy'; known: canonicalize, default"):
        rk.function([x], x, rules="fancy")


def test_graph_trace_and_repr():
    x = rt.vector("x")
    y = rt.exp(x)
    f = rk.function([x], y, backend="numpy", rules=None)
    assert f.graph is y and f.trace == [] and f.backend == "numpy"
    g = rk.function([x], [y, x])
    assert g.graph == [y, x]
    assert repr(g) == "<CompiledFunction (x) backend='jax'>"
    with pytest.raises(AttributeError, match="jax_fn exists only for the jax backend"):
        f.jax_fn  # noqa: B018


def test_jax_fn_composes_with_grad_vmap_and_jit():
    x = rt.vector("x")
    f = rk.function([x], (rt.sin(x) * x).sum())
    fn = f.jax_fn
    data = np.linspace(-1.0, 1.0, 5)
    with jax.enable_x64(True):
        out = jax.jit(fn)(data)
        np.testing.assert_allclose(np.asarray(out), np.asarray(f(data)), rtol=1e-12)
        grad = jax.grad(fn)(data)
        np.testing.assert_allclose(grad, np.cos(data) * data + np.sin(data), rtol=1e-12)
        batched = jax.vmap(fn)(np.stack([data, 2 * data]))
        np.testing.assert_allclose(
            batched, [np.sum(np.sin(data) * data), np.sum(np.sin(2 * data) * 2 * data)]
        )


def test_importing_the_jax_backend_does_not_import_jax():
    import subprocess
    import sys

    code = "import sys, rewritekit.backends.jax, rewritekit.backends; print('jax' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"
