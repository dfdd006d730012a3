"""rt.fft and the parts of complex numbers: values against NumPy on both backends,
gradients against ``jax.grad`` of ``jax.numpy``'s functions, batching, errors.

Compiles are the cost here, so each test puts all its cases in one graph and compiles it
once per backend."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.errors import DTypeError, GraphTypeError, ShapeError
from rewritekit.tensor import fft as ft
from rewritekit.vectorize import fallback_ops

RNG = np.random.default_rng(7)
X = RNG.normal(size=(3, 5))  # real input
Z = X + 1j * RNG.normal(size=(3, 5))  # complex input
NORMS = [None, "ortho", "forward"]

#: (name, function of a module with .fft (rt or np or jnp) and an input, input kind)
CASES = [
    *(
        case
        for norm in NORMS
        for case in [
            (f"fft {norm}", lambda m, a, norm=norm: m.fft.fft(a, norm=norm), "z"),
            (f"fft n=7 axis=0 {norm}", lambda m, a, norm=norm: m.fft.fft(a, 7, 0, norm), "z"),
            (f"ifft n=2 {norm}", lambda m, a, norm=norm: m.fft.ifft(a, n=2, norm=norm), "z"),
            (f"rfft {norm}", lambda m, a, norm=norm: m.fft.rfft(a, norm=norm), "x"),
            (f"rfft n=8 axis=0 {norm}", lambda m, a, norm=norm: m.fft.rfft(a, 8, 0, norm), "x"),
            (f"irfft {norm}", lambda m, a, norm=norm: m.fft.irfft(a, norm=norm), "z"),
            (f"irfft n=7 {norm}", lambda m, a, norm=norm: m.fft.irfft(a, 7, 0, norm), "z"),
            (
                f"fftn {norm}",
                lambda m, a, norm=norm: m.fft.fftn(a, s=(4, 2), axes=(1, 0), norm=norm),
                "z",
            ),
            (f"ifftn {norm}", lambda m, a, norm=norm: m.fft.ifftn(a, norm=norm), "z"),
            (
                f"rfftn {norm}",
                lambda m, a, norm=norm: m.fft.rfftn(a, s=(2, 6), axes=(0, 1), norm=norm),
                "x",
            ),
            (
                f"irfftn {norm}",
                lambda m, a, norm=norm: m.fft.irfftn(a, s=(5, 4), axes=(1, 0), norm=norm),
                "z",
            ),
        ]
    ),
    ("fft of a real input", lambda m, a: m.fft.fft(a, n=4), "x"),
    ("ifft of a real input", lambda m, a: m.fft.ifft(a, axis=0), "x"),
    ("irfft of a real input", lambda m, a: m.fft.irfft(a, n=5), "x"),
    ("fft2", lambda m, a: m.fft.fft2(a), "z"),
    ("ifft2", lambda m, a: m.fft.ifft2(a, s=(2, 3), norm="ortho"), "z"),
    ("rfft2", lambda m, a: m.fft.rfft2(a), "x"),
    ("irfft2", lambda m, a: m.fft.irfft2(a, norm="forward"), "z"),
    ("hfft", lambda m, a: m.fft.hfft(a, n=6, norm="ortho"), "z"),
    ("ihfft", lambda m, a: m.fft.ihfft(a), "x"),
]
SHIFTS = [
    ("fftshift", lambda m, a: m.fft.fftshift(a), "x"),
    ("fftshift axes=1", lambda m, a: m.fft.fftshift(a, axes=1), "z"),
    ("ifftshift", lambda m, a: m.fft.ifftshift(a), "x"),
    ("ifftshift axes=(0,)", lambda m, a: m.fft.ifftshift(a, axes=(0,)), "z"),
]


def _inputs(static: bool) -> tuple[rk.Var, rk.Var]:
    shape = X.shape if static else (None, None)
    return rt.tensor("x", shape, "float64"), rt.tensor("z", shape, "complex128")


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_values_match_numpy(backend):
    """Every function and norm, unknown lengths (one compile); the results' static types
    where the lengths are known."""
    x, z = _inputs(static=False)
    cases = CASES + SHIFTS
    outputs = [build(rt, x if kind == "x" else z) for _, build, kind in cases]
    results = rk.function([x, z], outputs, backend=backend)(X, Z)
    sx, sz = _inputs(static=True)
    for (name, build, kind), result in zip(cases, results, strict=True):
        expected = build(np, X if kind == "x" else Z)
        assert np.asarray(result).dtype == expected.dtype, name
        np.testing.assert_allclose(result, expected, rtol=1e-10, atol=1e-12, err_msg=name)
        static = build(rt, sx if kind == "x" else sz).type
        assert static.shape == expected.shape and static.dtype == expected.dtype, name


def test_float32_computes_in_complex64():
    x = rt.tensor("x", (None, None), "float32")
    outputs = [rt.fft.fft(x), rt.fft.rfft(x), rt.fft.irfft(rt.fft.rfft(x), n=5)]
    assert [o.dtype for o in outputs] == ["complex64", "complex64", "float32"]
    value = X.astype("float32")
    expected = [np.fft.fft(value), np.fft.rfft(value), value]
    for backend in ["numpy", "jax"]:
        results = rk.function([x], outputs, backend=backend)(value)
        for result, e in zip(results, expected, strict=True):
            assert np.asarray(result).dtype == e.dtype
            np.testing.assert_allclose(result, e, rtol=1e-5, atol=1e-5)
    assert rt.fft.fft(rt.vector("i", dtype="int32")).dtype == "complex128"  # as NumPy


def test_frequencies_match_numpy():
    for n in (1, 4, 5):
        np.testing.assert_array_equal(rt.fft.fftfreq(n, 0.5).data, np.fft.fftfreq(n, 0.5))
        np.testing.assert_array_equal(rt.fft.rfftfreq(n).data, np.fft.rfftfreq(n))
    assert rt.fft.fftfreq(4, dtype="float32").dtype == "float32"
    d = rt.scalar("d")
    f = rk.function([d], rt.fft.rfftfreq(5, d), backend="numpy")
    np.testing.assert_allclose(f(0.1), np.fft.rfftfreq(5, 0.1), rtol=1e-15)


# --- gradients ---------------------------------------------------------------------------


def _cost(m, y, w):
    if m.iscomplexobj(y):
        return m.sum(m.real(y) * w) + m.sum(m.imag(y) * w[::-1])
    return m.sum(y * w)


def _jax_grads(cases, *args):
    """``jax.grad`` of each ``(fn, argnums)`` of ``cases`` at ``args``, in one ``jax.jit``
    (one compile instead of an eager dispatch per primitive)."""

    def all_grads(*values):
        return [jax.grad(fn, argnums=argnums)(*values) for fn, argnums in cases]

    with jax.enable_x64(True):
        return jax.jit(all_grads)(*args)


def test_gradients_match_jax_grad():
    """rk.grad of a weighted sum of each result's parts, with respect to the real or complex
    input, against jax.grad through jax.numpy.fft (JAX's transpose rules and its convention
    for complex cotangents). Static and unknown lengths, one compile per backend."""
    weights = [RNG.normal(size=build(np, X if k == "x" else Z).shape) for _, build, k in CASES]
    graphs, inputs = [], []
    for static in (False, True):
        x, z = _inputs(static)
        inputs += [x, z]
        for (_, build, kind), w in zip(CASES, weights, strict=True):
            v = x if kind == "x" else z
            graphs.append(rk.grad(_cost(rt, build(rt, v), w), v))
    references = [
        (
            lambda a, b, build=build, w=w, kind=kind: _cost(
                jnp, build(jnp, a if kind == "x" else b), w
            ),
            (0 if kind == "x" else 1),
        )
        for (_, build, kind), w in zip(CASES, weights, strict=True)
    ]
    expected = [np.asarray(g) for g in _jax_grads(references, X, Z)] * 2
    names = [name for name, _, _ in CASES] * 2
    for backend in ["numpy", "jax"]:
        results = rk.function(inputs, graphs, backend=backend, rules=None)(X, Z, X, Z)
        for name, e, result in zip(names, expected, results, strict=True):
            assert np.asarray(result).dtype == e.dtype, name
            np.testing.assert_allclose(result, e, rtol=1e-9, atol=1e-11, err_msg=name)


def test_complex_parts_gradients_follow_jax():
    """JAX's conventions: real -> complex(g, 0), imag -> complex(0, -g), conj -> conj(g),
    complex(x, y) -> (real(g), -imag(g)); and rk.grad of |z| (the existing rule) agrees."""
    c = np.array([0.3 - 1j, 2 + 0.5j, -1 + 1j, 0.5j])
    cases = [
        ("real", lambda m, z, x, y: m.sum(m.real(z * c))),
        ("imag", lambda m, z, x, y: m.sum(m.imag(z * c) ** 2)),
        ("conj", lambda m, z, x, y: m.sum(m.abs(m.conj(z) * c + 1))),
        ("angle", lambda m, z, x, y: m.sum(m.angle(z * c))),
        ("abs", lambda m, z, x, y: m.sum(m.abs(z))),
        ("complex", lambda m, z, x, y: m.sum(m.abs(_complex(m)(x, y) * c))),
        ("complex squared", lambda m, z, x, y: m.sum(m.real(_complex(m)(x * y, y) ** 2))),
        ("angle of a real", lambda m, z, x, y: m.sum(m.angle(x - 0.5) * y)),
    ]
    z = rt.tensor("z", (None,), "complex128")
    x, y = rt.vector("x"), rt.vector("y")
    graphs = [g for _, f in cases for g in rk.grad(f(rt, z, x, y), [z, x, y], disconnected="zero")]
    values = (Z[0, :4], X[1, :4], X[2, :4])
    references = [(lambda *v, f=f: f(jnp, *v), (0, 1, 2)) for _, f in cases]
    expected = [np.asarray(g) for found in _jax_grads(references, *values) for g in found]
    names = [name for name, _ in cases for _ in range(3)]
    for backend in ["numpy", "jax"]:
        results = rk.function([z, x, y], graphs, backend=backend, rules=None)(*values)
        for name, e, result in zip(names, expected, results, strict=True):
            assert np.asarray(result).dtype == e.dtype, name
            np.testing.assert_allclose(result, e, rtol=1e-10, atol=1e-14, err_msg=name)


def _complex(m):
    return rt.complex if m is rt else jax.lax.complex


def test_forward_mode_and_second_derivatives():
    """rk.jvp (which transposes the vjps) and a Hessian through the complex path."""

    def signal(m, v):
        return m.fft.irfft(m.fft.rfft(v, n=8) * (1 + 2j), n=7)

    def energy(m, v):
        return m.sum(m.abs(m.fft.fft(v, n=6)) ** 3)

    v, t = rt.vector("v"), rt.vector("t")
    a, b = X[0], X[1]
    graphs = [rk.jvp(signal(rt, v), v, t), rk.hessian(energy(rt, v), v)]
    with jax.enable_x64(True):
        expected = jax.jit(
            lambda a, b: (
                jax.jvp(lambda u: signal(jnp, u), (a,), (b,))[1],
                jax.hessian(lambda u: energy(jnp, u))(a),
            )
        )(a, b)
    results = rk.function([v, t], graphs, backend="numpy", rules=None)(a, b)
    for result, e in zip(results, expected, strict=True):
        np.testing.assert_allclose(result, e, rtol=1e-9, atol=1e-11)


# --- the parts of complex numbers --------------------------------------------------------


def test_parts_match_numpy():
    z = rt.tensor("z", (None,), "complex64")
    x = rt.tensor("x", (None,), "float32")
    zv, xv = Z[0].astype("complex64"), X[0].astype("float32")
    cases = [
        (rt.real(z), np.real(zv)),
        (rt.imag(z), np.imag(zv)),
        (rt.conj(z), np.conj(zv)),
        (rt.conjugate(z), np.conjugate(zv)),
        (rt.angle(z), np.angle(zv)),
        (rt.angle(x, deg=True), np.angle(xv, deg=True)),
        (rt.imag(x), np.imag(xv)),
        (rt.complex(x, 2.0), xv + np.complex64(2j)),
        (rt.complex(x, np.inf), np.array([complex(v, np.inf) for v in xv], "complex64")),
    ]
    for backend in ["numpy", "jax"]:
        results = rk.function([z, x], [c[0] for c in cases], backend=backend)(zv, xv)
        for position, ((_, expected), result) in enumerate(zip(cases, results, strict=True)):
            assert np.asarray(result).dtype == expected.dtype, position
            np.testing.assert_allclose(result, expected, rtol=1e-6, err_msg=str(position))


def test_parts_of_real_inputs_need_no_node():
    x = rt.vector("x", dtype="int32")
    assert rt.real(x) is x and rt.conj(x) is x
    assert rt.imag(x).type == x.type
    assert rt.angle(x).dtype == "float64"
    assert rt.complex(rt.vector("a", dtype="float32"), 0).dtype == "complex64"
    assert rt.complex(1.0, 2.0).dtype == "complex128"
    z = rt.tensor("z", (3,), "complex128")
    assert rt.real(z).type == rt.vector("r", shape=(3,)).type
    assert (rt.iscomplexobj(z), rt.isrealobj(z)) == (True, False)
    assert (rt.iscomplexobj(x), rt.iscomplexobj(np.ones(2)), rt.iscomplexobj(1j)) == (
        False,
        False,
        True,
    )


# --- batching ----------------------------------------------------------------------------


def test_vectorize_matches_a_loop():
    """The batch axes move the transforms' axes; fftshift batches through its slices."""
    x = rt.matrix("x")
    y = [
        rt.fft.rfftn(x, s=(4, 3), axes=(1, 0), norm="ortho"),
        rt.fft.irfft(rt.fft.fft(x, axis=0), n=5),
        rt.fft.fftshift(x),
    ]
    xb = rt.tensor("xb", (None, None, None))
    batched = rk.vectorize(y, {x: xb})
    assert not fallback_ops(batched)
    values = RNG.normal(size=(2, 3, 4))
    results = rk.function([xb], batched, backend="numpy")(values)
    single = rk.function([x], y, backend="numpy")
    loop = [single(v) for v in values]
    for k, result in enumerate(results):
        np.testing.assert_allclose(result, np.stack([out[k] for out in loop]), rtol=1e-12)


# --- NumPyro's autocorrelation -----------------------------------------------------------


def _next_fast_len(target: int) -> int:
    """The smallest n >= target with no prime factor but 2, 3 and 5 (NumPyro's)."""
    while target > 2:
        m = target
        for p in (2, 3, 5):
            while m % p == 0:
                m //= p
        if m == 1:
            break
        target += 1
    return target


def _autocorrelation(m, x, n_samples):
    """numpyro.diagnostics.autocorrelation's core over the last axis, written with ``m``'s
    fft: rfft of the centred series zero-padded to twice a fast length, times its
    conjugate, irfft, truncated and normalised by the lag-0 term."""
    size = 2 * _next_fast_len(n_samples)
    centred = x - m.mean(x, axis=-1, keepdims=True)
    freq = m.fft.rfft(centred, n=size, axis=-1)
    autocov = m.fft.irfft(freq * m.conj(freq), n=size, axis=-1)[..., :n_samples]
    return autocov / autocov[..., :1]


def test_numpyro_autocorrelation():
    n = 7
    chains = RNG.normal(size=(2, n)).cumsum(axis=-1)
    x = rt.tensor("x", (None, n))
    y = _autocorrelation(rt, x, n)
    expected = _autocorrelation(np, chains, n)
    centred = chains - chains.mean(axis=-1, keepdims=True)
    direct = np.stack(
        [[(c[: n - k] * c[k:]).sum() for k in range(n)] for c in centred]
    )  # the definition, O(n^2)
    np.testing.assert_allclose(expected, direct / direct[:, :1], rtol=1e-12)
    for backend in ["numpy", "jax"]:
        np.testing.assert_allclose(
            rk.function([x], y, backend=backend)(chains), expected, rtol=1e-10, atol=1e-12
        )


# --- errors ------------------------------------------------------------------------------

V = rt.vector("v")
M = rt.matrix("m")
C = rt.tensor("c", (None,), "complex128")
ERRORS = [
    (
        lambda: rt.fft.fft(V, n=rt.scalar("n", dtype="int64")),
        GraphTypeError,
        "fft: n must be a static int",
    ),
    (
        lambda: rt.fft.fft(V, axis=rt.scalar("k", dtype="int64")),
        GraphTypeError,
        "fft: axis must be a static int",
    ),
    (
        lambda: rt.fft.rfft(V, n=0),
        ShapeError,
        r"rfft: n must be >= 1 \(the number of points\), got 0",
    ),
    (lambda: rt.fft.fft(M, axis=2), ShapeError, "fft: axis 2 is out of range for a 2-d input"),
    (
        lambda: rt.fft.rfft(C),
        DTypeError,
        "rfft: the input has dtype complex128; rfft takes a real input",
    ),
    (
        lambda: rt.fft.rfftn(M.astype("complex64")),
        DTypeError,
        "rfftn: the input has dtype complex64",
    ),
    (
        lambda: rt.fft.ifft(C, norm="both"),
        GraphTypeError,
        "ifft: norm must be one of 'backward', 'ortho', 'forward' or None, got 'both'",
    ),
    (lambda: rt.fft.fftn(M, axes=(0, -2)), ShapeError, r"fftn: axes \(0, -2\) repeat an axis"),
    (
        lambda: rt.fft.fftn(M, s=(2,), axes=(0, 1)),
        ShapeError,
        "fftn: s has 1 lengths but axes has 2 axes",
    ),
    (lambda: rt.fft.fftn(V, s=(2, 2)), ShapeError, "fftn: s has 2 lengths for a 1-d input"),
    (
        lambda: rt.fft.fftn(M, s=4),
        GraphTypeError,
        "fftn: s must be a sequence of static ints, got 4",
    ),
    (
        lambda: rt.fft.ifftn(M, axes="0"),
        GraphTypeError,
        "ifftn: axes must be a sequence of static ints",
    ),
    (
        lambda: rt.fft.fftn(rt.scalar("s")),
        ShapeError,
        r"fftn: no axis to transform \(axes=\(\), a 0-d input\)",
    ),
    (
        lambda: rt.fft.irfft(rt.tensor("c1", (1,), "complex128")),
        ShapeError,
        "irfft: the input's length 1 along axis 0 gives no points",
    ),
    (
        lambda: rt.fft.fftfreq(rt.scalar("n", dtype="int64")),
        GraphTypeError,
        "fftfreq: n must be a static int",
    ),
    (
        lambda: rt.fft.fftfreq(4, d="x"),
        GraphTypeError,
        "fftfreq: d must be a number or a scalar Var",
    ),
    (
        lambda: rt.fft.fftshift(V, axes=1.5),
        GraphTypeError,
        "fftshift: axes must be static ints or None",
    ),
    (
        lambda: ft.Fft((0, 0)),
        GraphTypeError,
        r"fft: axes must be distinct non-negative ints, got \(0, 0\)",
    ),
    (lambda: ft.Ifft((0,), (1, 2)), GraphTypeError, r"ifft: lengths must be 1 ints or None"),
    (lambda: ft.Rfft((1,))(V), ShapeError, r"rfft: axes \(1,\) are out of range for a 1-d input"),
    (
        lambda: ft.Fft((0,), (0,))(V),
        ShapeError,
        "fft: the transform length along axis 0 must be >= 1",
    ),
    (
        lambda: rt.complex(rt.vector("re", dtype="float32"), rt.vector("im")),
        DTypeError,
        r"complex: the real part \(input 0\) is float32 and the imaginary part \(input 1\) "
        r"is float64.*inputs 're', 'im'",
    ),
    (
        lambda: rt.complex(rt.vector("re", dtype="int64"), 1.0),
        DTypeError,
        r"complex: the real part \(input 0\) has dtype int64; complex takes float32 or "
        "float64 parts",
    ),
    (
        lambda: rt.complex(V, rt.vector("h", dtype="float16")),
        DTypeError,
        r"complex: the imaginary part \(input 1\) has dtype float16",
    ),
]


@pytest.mark.parametrize("make, error, match", ERRORS, ids=[e[2][:40] for e in ERRORS])
def test_errors_name_the_function_and_the_argument(make, error, match):
    with pytest.raises(error, match=match):
        make()
