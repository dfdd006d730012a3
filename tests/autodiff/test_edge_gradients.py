"""Gradients at the edges: Jacobians of scalars, log1mexp at 0, xlogy at 0.

Each is checked on both backends, with the default rules and with folding only
(``rules="fast_compile"``), so the results do not depend on rewriting; ``jax.jacobian`` and
``jax.grad`` are the oracles where their answer is right.
"""

import jax
import jax.numpy as jnp
import jax.scipy.special as jsp
import numpy as np
import pytest

import rewritekit as rk
import rewritekit.tensor as rt

BACKENDS = ("numpy", "jax")
RULES = ("default", "fast_compile")
TINY = float(np.nextafter(0.0, 1.0))  # the smallest subnormal


def _run(inputs, outputs, args, backend, rules):
    f = rk.function(inputs, outputs, backend=backend, rules=rules)
    with np.errstate(all="ignore"):
        result = f(*args)
    return [np.asarray(v) for v in result] if isinstance(result, list) else np.asarray(result)


def _jax(fn, *args):
    with jax.enable_x64(True):
        return np.asarray(fn(*[jnp.asarray(a, dtype=jnp.float64) for a in args]))


# --- rk.jacobian of every scalar/vector combination ---------------------------------------

MATRIX = np.array([[1.0, -2.0], [0.5, 3.0]])
POINTS = {"scalar": 0.3, "vector": np.array([0.3, -1.2, 2.0]), "matrix": MATRIX}
# (the variable's kind, y as rt, y as jax.numpy)
JACOBIANS = [
    ("scalar", lambda s: s * 2, lambda s: s * 2),
    ("scalar", lambda s: rt.sin(s) * s, lambda s: jnp.sin(s) * s),
    ("vector", lambda x: rt.sum(x**2), lambda x: jnp.sum(x**2)),
    ("matrix", lambda m: rt.sum(rt.exp(m)), lambda m: jnp.sum(jnp.exp(m))),
    ("scalar", lambda s: s * np.array([1.0, -2.0, 3.0]), lambda s: s * jnp.array([1.0, -2.0, 3.0])),
    ("scalar", lambda s: rt.sin(s * MATRIX), lambda s: jnp.sin(s * MATRIX)),
    ("vector", lambda x: rt.tanh(x) * rt.sum(x), lambda x: jnp.tanh(x) * jnp.sum(x)),
    ("matrix", lambda m: rt.sum(m * m, axis=0), lambda m: jnp.sum(m * m, axis=0)),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("rules", RULES)
@pytest.mark.parametrize(("kind", "build", "reference"), JACOBIANS)
def test_jacobian_shapes_and_values_match_jax(kind, build, reference, rules, backend):
    point = POINTS[kind]
    x = {"scalar": rt.scalar, "vector": rt.vector, "matrix": rt.matrix}[kind]("x")
    y = build(x)
    jac = rk.jacobian(y, x)
    got = _run([x], jac, [point], backend, rules)
    expected = _jax(jax.jacobian(reference), point)
    assert jac.ndim == y.ndim + x.ndim
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_jacobian_of_a_scalar_by_a_scalar_is_a_scalar(backend):
    s = rt.scalar("s")
    assert float(_run([s], rk.jacobian(s * 2, s), [0.3], backend, "fast_compile")) == 2.0
    hessian = rk.hessian(s**3, s)  # 6 s
    assert hessian.ndim == 0
    got = _run([s], hessian, [0.5], backend, "fast_compile")
    assert float(got) == float(_jax(jax.hessian(lambda v: v**3), 0.5))


# --- log1mexp: -1 / expm1(-x), -inf at 0 and -0.0 -----------------------------------------


def _log1mexp(x):
    """log(1 - exp(x)) in NumPy, each branch where it is accurate (Maechler, 2012)."""
    with np.errstate(all="ignore"):
        return np.where(x > -np.log(2.0), np.log(-np.expm1(x)), np.log1p(-np.exp(x)))


def _log1mexp_jax(x):
    near = x > -np.log(2.0)
    above, below = jnp.where(near, x, -1.0), jnp.where(near, -1.0, x)
    return jnp.where(near, jnp.log(-jnp.expm1(above)), jnp.log1p(-jnp.exp(below)))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("rules", RULES)
def test_log1mexp_gradient_is_minus_infinity_at_zero(backend, rules):
    # the limit from the left of -exp(x) / (1 - exp(x)); at the smallest subnormal the
    # exact -1 / 5e-324 overflows (and XLA on CPU reads it as 0)
    x = rt.scalar("x")
    g = rk.grad(rt.log1mexp(x), x)
    for point in (0.0, -0.0, -TINY):
        assert float(_run([x], g, [point], backend, rules)) == -np.inf
    v = rt.vector("v", dtype="float32")
    g32 = _run([v], rk.grad(rt.sum(rt.log1mexp(v)), v), [np.zeros(2, "float32")], backend, rules)
    assert g32.dtype == np.float32
    np.testing.assert_array_equal(g32, [-np.inf, -np.inf])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("rules", RULES)
def test_log1mexp_gradient_is_accurate_inside_the_domain(backend, rules):
    x = rt.vector("x")
    points = np.array([-1e-300, -1e-10, -1e-3, -0.5, -np.log(2.0), -1.0, -18.0, -50.0, -700.0])
    got = _run([x], rk.grad(rt.sum(rt.log1mexp(x)), x), [points], backend, rules)
    expected = _jax(jax.vmap(jax.grad(_log1mexp_jax)), points)
    np.testing.assert_allclose(got, expected, rtol=1e-14)
    # central differences of the NumPy reference, with a step relative to |x|
    step = 1e-6 * np.abs(points)
    central = (_log1mexp(points + step) - _log1mexp(points - step)) / (2 * step)
    np.testing.assert_allclose(got, central, rtol=1e-6)
    assert np.all(got < 0)


# --- xlogy: d/dx = log(y), d/dy = x / y and exactly 0 where x == 0 -----------------------


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("rules", RULES)
def test_xlogy_partials_at_the_origin(backend, rules):
    x, y = rt.vector("x"), rt.vector("y")
    grads = rk.grad(rt.sum(rt.xlogy(x, y)), [x, y])
    gx, gy = _run([x, y], grads, [np.array([0.0]), np.array([0.0])], backend, rules)
    np.testing.assert_array_equal(gx, [-np.inf])  # log(0), as PyTensor and JAX
    assert gy.tobytes() == np.array([0.0]).tobytes()  # xlogy(0, y) = 0 for every y


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("rules", RULES)
def test_xlogy_partials_against_jax(backend, rules):
    x, y = rt.vector("x"), rt.vector("y")
    grads = rk.grad(rt.sum(rt.xlogy(x, y)), [x, y])
    a = np.array([0.0, 0.0, 0.0, 0.0, 0.0, -0.0, 2.0, 2.0, -1.5, 0.5, 1.0])
    b = np.array([0.0, -0.0, TINY, 3.0, np.inf, 0.0, 0.0, 0.5, 4.0, -1.0, TINY])
    gx, gy = _run([x, y], grads, [a, b], backend, rules)
    with jax.enable_x64(True):
        jx, jy = (
            np.asarray(g) for g in jax.grad(lambda u, v: jnp.sum(jsp.xlogy(u, v)), (0, 1))(a, b)
        )
    if backend == "numpy":  # XLA on CPU reads the subnormal as 0
        with np.errstate(all="ignore"):
            np.testing.assert_array_equal(gx, np.log(b))
    np.testing.assert_array_equal(gx[b != TINY], jx[b != TINY])
    # exactly 0 where x == 0, also at y = 0, where JAX's 0 / 0 gives NaN
    x_zero = a == 0
    assert gy[x_zero].tobytes() == np.zeros(x_zero.sum()).tobytes()
    np.testing.assert_array_equal(gy[~x_zero], jy[~x_zero])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("rules", RULES)
def test_xlogy_of_x_and_x(backend, rules):
    # d/dx xlogy(x, x) = log(x) + 1: -inf at 0 (the d/dy part is 0 there, not NaN)
    x = rt.vector("x")
    points = np.array([0.0, -0.0, 0.5, 2.0])
    got = _run([x], rk.grad(rt.sum(rt.xlogy(x, x)), x), [points], backend, rules)
    np.testing.assert_array_equal(got[:2], [-np.inf, -np.inf])
    expected = _jax(jax.vmap(jax.grad(lambda u: jsp.xlogy(u, u))), points[2:])
    np.testing.assert_allclose(got[2:], expected, rtol=1e-15)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("rules", RULES)
def test_xlogy_zero_partial_masks_what_y_is_computed_from(backend, rules):
    # d/dy is a masked cotangent where x == 0, so sqrt'(0) = inf upstream of y gives an
    # exact 0 rather than 0 * inf; the second derivative in y is 0 there too
    x, y = rt.vector("x"), rt.vector("y")
    through_sqrt = rk.grad(rt.sum(rt.xlogy(x, rt.sqrt(y))), y)
    first = rk.grad(rt.sum(rt.xlogy(x, y)), y)
    second = rk.grad(rt.sum(first), y)
    a, b = np.array([0.0, 0.0, 2.0]), np.array([0.0, 4.0, 4.0])
    got = _run([x, y], [through_sqrt, second], [a, b], backend, rules)
    assert got[0][:2].tobytes() == np.zeros(2).tobytes()
    assert got[1][:2].tobytes() == np.zeros(2).tobytes()
    expected = _jax(jax.grad(lambda v: jsp.xlogy(2.0, jnp.sqrt(v))), 4.0)
    np.testing.assert_allclose(got[0][2], expected, rtol=1e-15)
    np.testing.assert_allclose(got[1][2], _jax(jax.grad(jax.grad(lambda v: 2.0 * jnp.log(v))), 4.0))
