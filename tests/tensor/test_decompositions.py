"""rt.linalg's decompositions (svd, eigh, eigvalsh, qr, pinv, expm) and the functions built
from Ops (lstsq, norm, matrix_power, kron): static types, errors, NumPy's conventions, and
the gradients the op records cannot compare with jax.grad."""

import numpy as np
import pytest
import scipy.linalg

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.errors import DTypeError, GraphTypeError, ShapeError
from rewritekit.ir import TensorType
from rewritekit.testing import verify_grad

RNG = np.random.default_rng(0)


def T(*shape, dtype="float64"):
    return TensorType(dtype, shape)


def types(outputs):
    return tuple(o.type for o in outputs) if isinstance(outputs, tuple) else outputs.type


def run(outputs, *arrays, backend="numpy"):
    inputs = [
        rt.tensor(f"x{i}", shape=(None,) * a.ndim, dtype=a.dtype) for i, a in enumerate(arrays)
    ]
    return rk.function(inputs, outputs(*inputs), backend=backend, rules=None)(*arrays)


def concatenated(*outputs):
    return rt.concatenate([rt.reshape(o, (-1,)) for o in outputs])


# --- static types ------------------------------------------------------------------------


def test_svd_types():
    a = rt.tensor("a", shape=(4, 5, 3))
    assert types(rt.linalg.svd(a)) == (T(4, 5, 5), T(4, 3), T(4, 3, 3))
    assert types(rt.linalg.svd(a, full_matrices=False)) == (T(4, 5, 3), T(4, 3), T(4, 3, 3))
    assert rt.linalg.svd(a, compute_uv=False).type is T(4, 3)
    assert types(rt.linalg.svd(rt.matrix("m"))) == (T(None, None), T(None), T(None, None))
    assert rt.linalg.svd(rt.matrix("m", dtype="int8"), compute_uv=False).dtype == "float64"
    assert rt.linalg.svd(rt.matrix("m", dtype="float32"), compute_uv=False).dtype == "float32"


def test_qr_types():
    a = rt.matrix("a", shape=(5, 3))
    assert types(rt.linalg.qr(a)) == (T(5, 3), T(3, 3))
    assert types(rt.linalg.qr(a, mode="complete")) == (T(5, 5), T(5, 3))
    assert rt.linalg.qr(a, mode="r").type is T(3, 3)
    assert types(rt.linalg.qr(rt.tensor("b", shape=(2, 3, 5)))) == (T(2, 3, 3), T(2, 3, 5))


def test_eigh_pinv_expm_types():
    a = rt.tensor("a", shape=(2, None, 3))
    assert types(rt.linalg.eigh(a)) == (T(2, 3), T(2, 3, 3))
    assert rt.linalg.eigvalsh(a, UPLO="U").type is T(2, 3)
    assert rt.linalg.expm(a).type is T(2, 3, 3)
    assert rt.linalg.pinv(rt.matrix("b", shape=(5, 3))).type is T(3, 5)
    assert rt.linalg.pinv(a, hermitian=True).type is T(2, 3, 3)


def test_composed_function_types():
    x, res, rank, s = rt.linalg.lstsq(rt.matrix("a", shape=(5, 3)), rt.matrix("b", shape=(5, 2)))
    assert types((x, res, rank, s)) == (T(3, 2), T(2), T(dtype="int32"), T(3))
    x, res, _, _ = rt.linalg.lstsq(rt.matrix("a", dtype="int64"), rt.vector("b", dtype="float32"))
    assert (x.dtype, res.type) == ("float64", T(1))
    assert rt.linalg.norm(rt.matrix("x", dtype="int32")).type is T()
    assert rt.linalg.norm(rt.matrix("x", dtype="float32"), "nuc").dtype == "float32"
    assert rt.linalg.norm(rt.tensor("x", shape=(2, 3, 4)), keepdims=True).type is T(1, 1, 1)
    assert rt.linalg.norm(rt.tensor("x", shape=(2, 3, 4)), 1, axis=1).type is T(2, 4)
    assert rt.linalg.matrix_power(rt.matrix("a", dtype="int64"), 2).dtype == "int64"
    assert rt.linalg.matrix_power(rt.matrix("a", dtype="int64"), -1).dtype == "float64"
    assert rt.linalg.matrix_power(rt.tensor("a", shape=(4, 3, 3)), 0).type is T(4, 3, 3)
    assert rt.linalg.kron(rt.vector("a", shape=(2,)), rt.matrix("b", shape=(3, 4))).type is T(3, 8)


# --- errors ------------------------------------------------------------------------------


def test_decomposition_errors():
    with pytest.raises(ShapeError, match=r"svd: input 0 must be a matrix .* got a 1-d input"):
        rt.linalg.svd(rt.vector("v"))
    with pytest.raises(ShapeError, match=r"eigh: input 0 must hold square matrices .*\(2, 3\)"):
        rt.linalg.eigh(rt.matrix("a", shape=(2, 3)))
    with pytest.raises(ShapeError, match=r"expm: input 0 must hold square matrices"):
        rt.linalg.expm(rt.matrix("a", shape=(2, 3)))
    with pytest.raises(ShapeError, match=r"pinv: input 0 must hold square matrices"):
        rt.linalg.pinv(rt.matrix("a", shape=(2, 3)), hermitian=True)
    with pytest.raises(DTypeError, match=r"qr: input 0 has dtype float16"):
        rt.linalg.qr(rt.matrix("a", dtype="float16"))
    with pytest.raises(DTypeError, match=r"eigh: input 0 has dtype complex128"):
        rt.linalg.eigvalsh(rt.matrix("a", dtype="complex128"))
    with pytest.raises(GraphTypeError, match=r"eigh: UPLO must be 'L' or 'U', got 'X'"):
        rt.linalg.eigh(rt.matrix("a"), UPLO="X")
    with pytest.raises(GraphTypeError, match=r"qr: mode must be one of .*, got 'raw'"):
        rt.linalg.qr(rt.matrix("a"), mode="raw")
    with pytest.raises(GraphTypeError, match=r"pinv: rtol and rcond cannot both be set"):
        rt.linalg.pinv(rt.matrix("a"), 1e-3, rtol=1e-3)
    with pytest.raises(GraphTypeError, match=r"pinv: rtol must be a Python float or None"):
        rt.linalg.pinv(rt.matrix("a"), rtol="small")


def test_composed_function_errors():
    a = rt.matrix("a", shape=(3, 2))
    with pytest.raises(ShapeError, match=r"lstsq: a has shape \(3, 2\) but b has shape \(4,\)"):
        rt.linalg.lstsq(a, rt.vector("b", shape=(4,)))
    with pytest.raises(ShapeError, match=r"lstsq: input 0 \(a\) must be at least 2-d"):
        rt.linalg.lstsq(rt.vector("v"), rt.vector("b"))
    with pytest.raises(ShapeError, match=r"lstsq: input 1 \(b\) must be at least 1-d"):
        rt.linalg.lstsq(a, rt.scalar("b"))
    with pytest.raises(GraphTypeError, match=r"norm: invalid norm order 'nuc' for vectors"):
        rt.linalg.norm(rt.vector("v"), "nuc")
    with pytest.raises(GraphTypeError, match=r"norm: invalid norm order 3 for matrices"):
        rt.linalg.norm(a, 3)
    with pytest.raises(GraphTypeError, match=r"norm: ord must be a number"):
        rt.linalg.norm(rt.vector("v"), [1])
    with pytest.raises(GraphTypeError, match=r"norm: axis must be None, an int or a tuple"):
        rt.linalg.norm(a, axis=[0, 1])
    with pytest.raises(ShapeError, match=r"norm: duplicate axes \(0, -2\)"):
        rt.linalg.norm(a, axis=(0, -2))
    with pytest.raises(ShapeError, match=r"norm: a norm is over 1 axis .* got axis=\(0, 1, 2\)"):
        rt.linalg.norm(rt.tensor("x", shape=(2, 2, 2)), 2)
    with pytest.raises(ShapeError, match=r"norm: axis 2 is out of range for a 2-d input"):
        rt.linalg.norm(a, axis=2)
    with pytest.raises(GraphTypeError, match=r"matrix_power: the exponent n must be an int"):
        rt.linalg.matrix_power(rt.matrix("m"), 2.0)
    with pytest.raises(ShapeError, match=r"matrix_power: input 0 must hold square matrices"):
        rt.linalg.matrix_power(a, 2)


def test_gradients_that_do_not_exist_say_so():
    wide, b = rt.matrix("a", shape=(2, 3)), rt.matrix("b")
    with pytest.raises(GraphTypeError, match=r"svd: no gradient of U and Vh with full_matrices"):
        rk.grad(rt.sum(rt.linalg.svd(wide)[0]), wide)
    with pytest.raises(GraphTypeError, match=r"qr: no gradient of mode='complete'"):
        rk.grad(rt.sum(rt.linalg.qr(b, mode="complete")[0]), b)


def test_full_decompositions_differentiate_the_outputs_that_are_unique():
    """s of a full svd, and R of a complete qr, have the gradients of the reduced ones."""
    a = rt.matrix("a")
    s = rt.linalg.svd(a)[1]
    r = rt.linalg.qr(a, mode="complete")[1]
    costs = [rt.sum(rt.sin(s)), rt.sum(rt.sin(rt.linalg.svd(a, compute_uv=False)))]
    costs += [rt.sum(r * r * r), rt.sum(rt.linalg.qr(a)[1] ** 3)]
    f = rk.function([a], [rk.grad(c, a) for c in costs], backend="numpy")
    for value in [RNG.normal(size=(4, 2)), RNG.normal(size=(2, 3))]:
        full_s, reduced_s, complete_r, reduced_r = f(value)
        np.testing.assert_allclose(full_s, reduced_s, rtol=1e-10)
        np.testing.assert_allclose(complete_r, reduced_r, rtol=1e-10)


# --- NumPy's conventions, both backends --------------------------------------------------


@pytest.mark.parametrize("backend", ["numpy", "jax"])
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_reads_one_triangle(backend, uplo):
    a = RNG.standard_normal((2, 3, 3))  # not symmetric: only the triangle UPLO names counts
    w, v = (np.asarray(x) for x in run(lambda x: rt.linalg.eigh(x, UPLO=uplo), a, backend=backend))
    expected_w, expected_v = np.linalg.eigh(a, UPLO=uplo)
    np.testing.assert_allclose(w, expected_w, rtol=1e-10)
    np.testing.assert_allclose(np.abs(v), np.abs(expected_v), rtol=1e-8, atol=1e-10)
    values = run(lambda x: rt.linalg.eigvalsh(x, UPLO=uplo), a, backend=backend)
    np.testing.assert_allclose(np.asarray(values), expected_w, rtol=1e-10)


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_pinv_cutoffs_are_numpys(backend):
    rank_one = np.outer([1.0, 2.0, 3.0], [1.0, -1.0])
    tiny = np.diag([1.0, 1e-14])  # 1e-14 is above NumPy's default cutoff 1e-15, below 2 eps
    for a, kwargs in [(rank_one, {}), (tiny, {}), (tiny, {"rtol": None}), (tiny, {"rcond": 0.1})]:
        got = run(lambda x, kw=kwargs: rt.linalg.pinv(x, **kw), a, backend=backend)
        np.testing.assert_allclose(np.asarray(got), np.linalg.pinv(a, **kwargs), rtol=1e-10)


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_lstsq_of_a_rank_deficient_matrix(backend):
    a = np.outer([1.0, 2.0, 3.0, 4.0], [1.0, -1.0, 0.5])
    b = RNG.standard_normal((4, 2))
    x, residuals, rank, s = (np.asarray(v) for v in run(rt.linalg.lstsq, a, b, backend=backend))
    expected = np.linalg.lstsq(a, b)
    np.testing.assert_allclose(x, expected[0], rtol=1e-10)
    assert rank == expected[2] == 1 and rank.dtype == np.int32
    np.testing.assert_allclose(s, expected[3], rtol=1e-10, atol=1e-12)
    # NumPy leaves the residuals out when rank < n; they are computed here
    np.testing.assert_allclose(residuals, ((b - a @ x) ** 2).sum(axis=0), rtol=1e-10)


def test_one_by_one_and_integer_inputs():
    one = np.array([[-2.0]])
    u, s, vh = run(rt.linalg.svd, one)
    np.testing.assert_allclose(u @ np.diag(s) @ vh, one)
    np.testing.assert_allclose(run(rt.linalg.expm, one), np.exp(one))
    q, r = run(rt.linalg.qr, one)
    np.testing.assert_allclose(q @ r, one)
    ints = np.array([[2, 1], [1, 3]])
    np.testing.assert_allclose(run(rt.linalg.eigvalsh, ints), np.linalg.eigvalsh(ints))
    np.testing.assert_array_equal(
        run(lambda x: rt.linalg.matrix_power(x, 5), ints), np.linalg.matrix_power(ints, 5)
    )
    assert run(lambda x: rt.linalg.norm(x, 0), np.array([0, 3, -1])) == 2.0


def test_kron_matches_numpy():
    for a, b in [(np.arange(6).reshape(2, 3), np.array([1, -1])), (np.eye(2), np.ones((2, 1, 3)))]:
        np.testing.assert_array_equal(run(rt.linalg.kron, a, b), np.kron(a, b))


# --- gradients the records cannot compare with jax.grad -----------------------------------


def test_norm_gradients_at_zero_are_zero():
    x, m = rt.vector("x"), rt.matrix("m")
    grads = rk.grad(rt.linalg.norm(x) + rt.linalg.norm(m, "fro") + rt.linalg.norm(x, 3), [x, m])
    gx, gm = rk.function([x, m], grads, backend="numpy")(np.zeros(3), np.zeros((2, 2)))
    np.testing.assert_array_equal(gx, np.zeros(3))
    np.testing.assert_array_equal(gm, np.zeros((2, 2)))


def _positive_qr(mode):
    def fn(a):
        q, r = rt.linalg.qr(a, mode=mode)
        k = rt.minimum(rt.shape_i(r, r.ndim - 2), rt.shape_i(r, r.ndim - 1))
        signs = rt.sign(rt.einsum("...ii->...i", r[..., :k, :k]))
        return concatenated(q[..., :, :k] * signs[..., None, :], r[..., :k, :] * signs[..., None])

    return fn


def test_qr_gradient_of_wide_matrices():
    """JAX has no gradient of wide matrices' QR; finite differences check it."""
    wide = np.concatenate(
        [np.eye(2) * 2 + RNG.uniform(-0.5, 0.5, (2, 2)), RNG.normal(size=(2, 3))], 1
    )
    verify_grad(_positive_qr("reduced"), [wide], rtol=1e-5)
    verify_grad(lambda a: rt.sum(rt.linalg.qr(a, mode="r") ** 2), [np.stack([wide, -wide])])
    square = wide[:, :2]
    b = rt.matrix("b", shape=(2, 2))  # statically square: mode="complete" has the gradient
    complete, reduced = _positive_qr("complete")(b), _positive_qr("reduced")(b)
    grads = [rk.grad(rt.sum(rt.sin(o)), b) for o in (complete, reduced)]
    f = rk.function([b], grads, backend="numpy")
    np.testing.assert_allclose(*f(square), rtol=1e-12)


def test_svd_gradient_of_statically_square_full_matrices():
    a = RNG.normal(size=(3, 3)) + np.diag([3.0, 0.0, -2.0])

    def fn(x):
        u, s, vh = rt.linalg.svd(rt.reshape(x, (3, 3)))
        return concatenated(s, u * u, vh * vh)

    verify_grad(fn, [a], rtol=1e-5)


def test_expm_gradient_of_a_stack():
    verify_grad(rt.linalg.expm, [RNG.uniform(-1, 1, (2, 3, 3))], rtol=1e-5)


def test_matrix_exponential_of_a_block_matrix_is_scipys():
    # the identity behind expm's gradient: expm([[A, E], [0, A]])[:n, n:] = L(A, E)
    a, e = RNG.normal(size=(3, 3)), RNG.normal(size=(3, 3))
    big = np.block([[a, e], [np.zeros((3, 3)), a]])
    expected = scipy.linalg.expm_frechet(a, e, compute_expm=False)
    np.testing.assert_allclose(run(rt.linalg.expm, big)[:3, 3:], expected, rtol=1e-10)


def test_values_alone_have_finite_gradients_at_repeated_values():
    """Unused eigenvectors or singular vectors add no 1 / gap terms (JAX's symbolic zeros)."""
    a = rt.matrix("a")
    w, _ = rt.linalg.eigh(a)
    s = rt.linalg.svd(a, full_matrices=False)[1]
    f = rk.function([a], [rk.grad(rt.sum(w * w), a), rk.grad(rt.sum(s), a)], backend="numpy")
    by_eigh, by_svd = f(np.eye(3))
    np.testing.assert_array_equal(by_eigh, 2 * np.eye(3))
    np.testing.assert_array_equal(by_svd, np.eye(3))
