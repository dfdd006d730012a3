"""The backend registry."""

from __future__ import annotations

import numpy as np
import pytest

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.backends import available_backends, get_backend, register
from rewritekit.backends.numpy import NUMPY_BACKEND, NumpyBackend


class Doubling:
    """A toy backend: the NumPy backend's results, doubled."""

    name = "doubling"

    def compile(self, inputs, outputs):
        run = NUMPY_BACKEND.compile(inputs, outputs)
        return lambda *args: [2 * v for v in run(*args)]


def test_a_registered_backend_is_used_by_name():
    register("doubling-test", Doubling())
    assert "doubling-test" in available_backends()
    x = rt.vector("x")
    f = rk.function([x], x + 1.0, backend="doubling-test")
    np.testing.assert_array_equal(f(np.ones(2)), [4.0, 4.0])
    assert f.backend == "doubling"


def test_backend_objects_can_be_passed_directly():
    x = rt.vector("x")
    f = rk.function([x], x * 3.0, backend=NumpyBackend(check_types=True))
    np.testing.assert_array_equal(f(np.ones(2)), [3.0, 3.0])


def test_registry_errors_name_the_backend():
    with pytest.raises(ValueError, match="a backend named 'numpy' is already registered"):
        register("numpy", Doubling())
    backend = Doubling()
    register("doubling-twice", backend)
    register("doubling-twice", backend)  # registering the same object again is harmless
    with pytest.raises(ValueError, match="'doubling-twice' is already registered"):
        register("doubling-twice", Doubling())
    with pytest.raises(TypeError, match="must have a `name` and a `compile"):
        register("broken", object())
    with pytest.raises(TypeError, match="backend must be a name or a Backend, got int"):
        get_backend(3)


def test_builtin_backends_load_lazily_by_name():
    assert get_backend("numpy") is NUMPY_BACKEND
    assert get_backend("jax").name == "jax"
    assert {"numpy", "jax"} <= set(available_backends())


def test_an_op_with_only_a_jax_implementation_compiles_with_jax():
    import jax.numpy as jnp

    from rewritekit.backends.jax import jax_funcify
    from rewritekit.ir import Op

    class JaxOnlySinc(Op):
        def infer_types(self, x):
            return (x,)

    jax_funcify.register(JaxOnlySinc)(lambda op, node: jnp.sinc)
    x = rt.vector("x")
    f = rk.function([x], JaxOnlySinc()(x) + JaxOnlySinc()(rt.constant([0.0])))
    np.testing.assert_allclose(np.asarray(f(np.array([0.5]))), np.sinc([0.5]) + 1.0)
