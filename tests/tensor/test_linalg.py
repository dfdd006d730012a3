"""rt.linalg: dtypes, static shapes, hash-consing, errors, both backends."""

import numpy as np
import pytest
import scipy.linalg
from hypothesis import given
from hypothesis import strategies as st

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.errors import BroadcastError, DTypeError, GraphTypeError, ShapeError
from rewritekit.ir import SUPPORTED_DTYPES, TensorType
from rewritekit.tensor import linalg as la

DTYPES = sorted(SUPPORTED_DTYPES)
LAPACK = [d for d in DTYPES if np.dtype(d).kind != "c" and d != "float16"]
UNARY = [rt.linalg.cholesky, rt.linalg.inv, rt.linalg.det]


def T(*shape, dtype="float64"):
    return TensorType(dtype, shape)


# --- dtypes ------------------------------------------------------------------------------


@given(st.sampled_from(UNARY), st.sampled_from(LAPACK))
def test_lapack_functions_keep_floats_and_compute_the_rest_in_float64(fn, dtype):
    expected = dtype if dtype in ("float32", "float64") else "float64"
    assert fn(rt.matrix("a", dtype)).dtype == expected


@given(st.sampled_from(LAPACK), st.sampled_from(LAPACK))
def test_solve_dtype_matches_numpy(dtype_a, dtype_b):
    # np.linalg counts each non-float input as float64, then promotes.
    expected = np.linalg.solve(np.eye(2, dtype=dtype_a), np.ones(2, dtype=dtype_b)).dtype.name
    assert rt.linalg.solve(rt.matrix("a", dtype_a), rt.vector("b", dtype_b)).dtype == expected


def test_slogdet_dtypes():
    sign, logdet = rt.linalg.slogdet(rt.matrix("a", "float32"))
    assert sign.type is logdet.type is T(dtype="float32")
    sign, logdet = rt.linalg.slogdet(rt.matrix("a", "int8"))
    assert sign.type is logdet.type is T()


@given(st.sampled_from(DTYPES))
def test_trace_and_diag_dtypes_match_numpy(dtype):
    assert rt.linalg.trace(rt.matrix("a", dtype)).dtype == np.trace(np.ones((2, 2), dtype)).dtype
    assert rt.linalg.diag(rt.matrix("a", dtype)).dtype == dtype
    assert rt.linalg.diag(rt.vector("v", dtype)).dtype == dtype


# --- static shapes -----------------------------------------------------------------------


def test_square_shapes():
    assert rt.linalg.cholesky(rt.tensor("a", (5, 3, 3))).type is T(5, 3, 3)
    # A square matrix's one known length gives the other.
    assert rt.linalg.inv(rt.matrix("a", shape=(None, 3))).type is T(3, 3)
    assert rt.linalg.det(rt.tensor("a", (4, None, None))).type is T(4)
    assert rt.linalg.det(rt.matrix("a")).type is T()
    sign, logdet = rt.linalg.slogdet(rt.tensor("a", (2, 6, 3, 3)))
    assert sign.type is logdet.type is T(2, 6)


@pytest.mark.parametrize(
    ("shape_a", "shape_b", "expected"),
    [
        ((3, 3), (3,), (3,)),
        ((5, 3, 3), (None,), (5, 3)),
        ((None, None), (3, 2), (3, 2)),
        ((5, 1, 3, 3), (4, 3, 2), (5, 4, 3, 2)),
        ((3, 3), (7, None, 1), (7, 3, 1)),
    ],
)
def test_solve_shapes(shape_a, shape_b, expected):
    assert rt.linalg.solve(rt.tensor("a", shape_a), rt.tensor("b", shape_b)).type is T(*expected)


def test_solve_triangular_shapes():
    a = rt.matrix("a", shape=(None, 3))
    assert rt.linalg.solve_triangular(a, rt.vector("b")).type is T(3)
    assert rt.linalg.solve_triangular(rt.matrix("a"), rt.matrix("b", shape=(4, 2))).type is T(4, 2)


def test_trace_shapes():
    assert rt.linalg.trace(rt.matrix("a")).type is T()
    assert rt.linalg.trace(rt.tensor("a", (2, 3, None, 5)), offset=-4).type is T(None, 5)


@pytest.mark.parametrize(
    ("shape", "k", "expected"),
    [
        ((3,), 0, (3, 3)),
        ((3,), -2, (5, 5)),
        ((None,), 1, (None, None)),
        ((2, 3), 0, (2,)),
        ((2, 3), 1, (2,)),
        ((2, 3), 2, (1,)),
        ((2, 3), 3, (0,)),
        ((2, 3), -1, (1,)),
        ((2, 3), -5, (0,)),
        ((None, 3), 3, (0,)),  # misses every matrix with 3 columns
        ((2, None), -2, (0,)),
        ((None, 3), 1, (None,)),
        ((0, None), 0, (0,)),
    ],
)
def test_diag_shapes_match_numpy(shape, k, expected):
    out = rt.linalg.diag(rt.tensor("v", shape), k=k)
    assert out.type is T(*expected)
    if None not in shape:
        assert np.diag(np.zeros(shape), k=k).shape == expected


# --- hash-consing --------------------------------------------------------------------------


def test_parameterized_ops_are_hash_consed():
    a, b, v = rt.matrix("a"), rt.matrix("b"), rt.vector("v")
    solve = rt.linalg.solve_triangular
    assert solve(a, b) is solve(a, b, lower=False)
    assert solve(a, b, lower=1) is solve(a, b, lower=True)
    assert solve(a, b, lower=True) is not solve(a, b)
    assert rt.linalg.trace(a, offset=np.int64(1)) is rt.linalg.trace(a, 1)
    assert rt.linalg.diag(v, k=0) is rt.linalg.diag(v)
    assert rt.linalg.diag(a).owner.op == la.ExtractDiag(0)
    assert rt.linalg.diag(v, 2).owner.op == la.AllocDiag(2)
    assert rt.linalg.slogdet(a)[0].owner is rt.linalg.slogdet(a)[1].owner


# --- errors ----------------------------------------------------------------------------


@pytest.mark.parametrize("fn", [rt.linalg.cholesky, rt.linalg.inv, rt.linalg.det])
def test_square_errors(fn):
    name = fn.__name__
    with pytest.raises(
        ShapeError,
        match=rf"{name}: input 0 must be a matrix or a stack of matrices \(at least 2-d\), got "
        r"a 1-d input \(inputs 'v'\)",
    ):
        fn(rt.vector("v"))
    with pytest.raises(
        ShapeError,
        match=rf"{name}: input 0 must hold square matrices in its last two axes, got shape "
        r"\(5, 2, 3\) \(inputs 'a'\)",
    ):
        fn(rt.tensor("a", (5, 2, 3)))
    with pytest.raises(DTypeError, match=rf"{name}: input 0 has dtype complex128, which {name}"):
        fn(rt.matrix("c", "complex128"))
    with pytest.raises(DTypeError, match=rf"{name}: input 0 has dtype float16"):
        fn(rt.matrix("h", "float16"))


def test_slogdet_error():
    with pytest.raises(ShapeError, match=r"slogdet: input 0 must hold square matrices"):
        rt.linalg.slogdet(rt.matrix("a", shape=(2, 3)))


def test_solve_errors():
    a = rt.matrix("a", shape=(3, 3))
    with pytest.raises(ShapeError, match=r"solve: input 1 \(b\) must be at least 1-d"):
        rt.linalg.solve(a, 1.0)
    with pytest.raises(
        ShapeError,
        match=r"solve: a has shape \(3, 3\) but b has shape \(4,\): its only axis must have "
        r"length 3 \(inputs 'a', 'b'\)",
    ):
        rt.linalg.solve(a, rt.vector("b", shape=(4,)))
    with pytest.raises(ShapeError, match=r"its second-to-last axis must have length 3"):
        rt.linalg.solve(a, rt.matrix("b", shape=(2, 3)))
    with pytest.raises(BroadcastError, match=r"solve: cannot broadcast shapes \(2,\) and \(4,\)"):
        rt.linalg.solve(rt.tensor("a", (2, 3, 3)), rt.tensor("b", (4, 3, 1)))
    with pytest.raises(DTypeError, match=r"solve: input 1 has dtype complex64"):
        rt.linalg.solve(a, rt.vector("b", "complex64"))


def test_solve_triangular_errors():
    a, b = rt.matrix("a", shape=(3, 3)), rt.vector("b")
    with pytest.raises(ShapeError, match=r"solve_triangular: input 0 \(a\) must be 2-d, got a 3-d"):
        rt.linalg.solve_triangular(rt.tensor("s", (2, 3, 3)), b)
    with pytest.raises(ShapeError, match=r"solve_triangular: input 0 must hold square matrices"):
        rt.linalg.solve_triangular(rt.matrix("r", shape=(2, 3)), b)
    with pytest.raises(ShapeError, match=r"solve_triangular: input 1 \(b\) must be 1-d or 2-d"):
        rt.linalg.solve_triangular(a, rt.tensor("t", (3, 2, 2)))
    with pytest.raises(
        ShapeError,
        match=r"solve_triangular: a has shape \(3, 3\) but b has shape \(2, 5\): b's first "
        r"axis must have length 3",
    ):
        rt.linalg.solve_triangular(a, rt.matrix("m", shape=(2, 5)))


def test_trace_and_diag_errors():
    with pytest.raises(ShapeError, match=r"trace: input must be at least 2-d, got a 1-d input"):
        rt.linalg.trace(rt.vector("v"))
    with pytest.raises(GraphTypeError, match=r"trace: offset must be an int, got 1.5"):
        rt.linalg.trace(rt.matrix("a"), offset=1.5)
    with pytest.raises(ShapeError, match=r"diag: input must be 1-d or 2-d, got a 3-d input"):
        rt.linalg.diag(rt.tensor("t", (2, 2, 2)))
    with pytest.raises(GraphTypeError, match=r"diag: k must be an int, got '1'"):
        rt.linalg.diag(rt.vector("v"), k="1")
    with pytest.raises(ShapeError, match=r"diag: AllocDiag needs a 1-d input, got a 2-d"):
        la.AllocDiag(0)(rt.matrix("a"))
    with pytest.raises(ShapeError, match=r"diag: ExtractDiag needs a 2-d input, got a 1-d"):
        la.ExtractDiag(0)(rt.vector("v"))


# --- both backends -----------------------------------------------------------------------


def _spd(rng, *shape):
    b = rng.normal(size=shape)
    return b @ np.swapaxes(b, -1, -2) + shape[-1] * np.eye(shape[-1])


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_linalg_runs(backend):
    rng = np.random.default_rng(0)
    a, b = rt.tensor("a", (None, 3, 3)), rt.matrix("b")
    sign, logdet = rt.linalg.slogdet(a)
    outputs = [
        rt.linalg.cholesky(a),
        rt.linalg.inv(a),
        rt.linalg.det(a),
        sign,
        logdet,
        rt.linalg.solve(a, b),
        rt.linalg.trace(a, offset=1),
        rt.linalg.diag(b, k=-1),
        rt.linalg.diag(rt.linalg.diag(b)),
    ]
    f = rk.function([a, b], outputs, backend=backend)
    av, bv = _spd(rng, 2, 3, 3), rng.normal(size=(3, 4))
    expected = [
        np.linalg.cholesky(av),
        np.linalg.inv(av),
        np.linalg.det(av),
        *np.linalg.slogdet(av),
        np.linalg.solve(av, bv),
        np.trace(av, offset=1),
        np.diag(bv, k=-1),
        np.diag(np.diag(bv)),
    ]
    for got, want in zip(f(av, bv), expected, strict=True):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("backend", ["numpy", "jax"])
@pytest.mark.parametrize("lower", [False, True])
def test_solve_triangular_reads_one_triangle(backend, lower):
    rng = np.random.default_rng(1)
    a, b = rt.matrix("a"), rt.vector("b")
    f = rk.function([a, b], rt.linalg.solve_triangular(a, b, lower=lower), backend=backend)
    av = rng.normal(size=(4, 4)) + 5 * np.eye(4)  # the other triangle is junk, never read
    bv = rng.normal(size=4)
    expected = scipy.linalg.solve_triangular(av, bv, lower=lower)
    np.testing.assert_allclose(np.asarray(f(av, bv)), expected, rtol=1e-12)


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_integer_inputs_compute_in_float64(backend):
    a = rt.matrix("a", "int32")
    f = rk.function([a], [rt.linalg.inv(a), rt.linalg.trace(a)], backend=backend)
    av = np.array([[2, 1], [1, 3]], dtype=np.int32)
    inverse, trace = f(av)
    assert np.asarray(inverse).dtype == np.float64
    np.testing.assert_allclose(np.asarray(inverse), np.linalg.inv(av), rtol=1e-14)
    assert np.asarray(trace).dtype == np.int64 and int(trace) == 5  # 2 + 3
