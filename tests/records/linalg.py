"""Op records for ``rt.linalg`` (``rewritekit.tensor.linalg``).

Matrices are drawn well-conditioned, so that the NumPy reference, the NumPy backend and
JAX agree to a few ulps times the condition number:

- symmetric positive definite (``cholesky``): ``S = B @ B.T + n * I`` with ``B`` in
  [-2, 2]; its eigenvalues lie in [n, 17 n], so cond(S) <= 17.
- nonsingular (``inv``, ``det``, ``slogdet``, ``solve``): ``B`` plus a diagonal of random
  signs larger than each row's absolute sum (strictly diagonally dominant), so both signs
  of the determinant occur.
- triangular (``solve_triangular``): the same, with junk in the triangle that is not read.

Tolerances: float64 (and integer inputs, computed in float64) keep the defaults (rtol 1e-9,
atol 1e-12). float32 records use rtol 1e-4, atol 1e-5: LAPACK (NumPy, SciPy) and XLA's own
decompositions round differently, by up to cond * n * eps32 ~ 17 * 4 * 6e-8 ~ 4e-6 relative
to the largest entry, and small entries of an inverse or solution inherit that absolute
error.
"""

from __future__ import annotations

import functools

import numpy as np
import scipy.linalg
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import rewritekit.tensor as rt
from rewritekit.tensor import elemwise as el
from rewritekit.tensor import linalg as la
from rewritekit.tensor import products as pr
from rewritekit.tensor import reduction as rd
from rewritekit.tensor import shapes as sh
from tests.records import OpRecord, values

F64 = ("float64", "int64", "int32")  # integer inputs compute in float64
F32 = ("float32",)
F32_TOL = {"rtol": 1e-4, "atol": 1e-5}
ALL = ("float64", "float32", "int64", "int32", "bool")


def _batch(data, max_dims=2):
    return data.draw(hnp.array_shapes(min_dims=0, max_dims=max_dims, min_side=1, max_side=3))


def _base(data, dtype, shape):
    return values(data, dtype, shape, -2.0, 2.0)


def _spd(data, dtype, batch, n):
    b = _base(data, dtype, (*batch, n, n))
    s = b @ np.swapaxes(b, -1, -2) + n * np.eye(n, dtype=b.dtype)
    return ((s + np.swapaxes(s, -1, -2)) / 2).astype(dtype) if s.dtype.kind == "f" else s


def _dominant(data, dtype, batch, n):
    b = _base(data, dtype, (*batch, n, n))
    signs = data.draw(hnp.arrays(np.int8, (*batch, n), elements=st.sampled_from([-1, 1])))
    weight = np.abs(b).sum(axis=-1) + 1
    return (b + (signs * weight)[..., None] * np.eye(n, dtype=b.dtype)).astype(dtype)


def _draw_square(kind):
    """One (stack of) square matrices of ``kind`` (``_spd`` or ``_dominant``)."""

    def draw(data, dtype):
        n = data.draw(st.integers(1, 4), label="n")
        return [kind(data, dtype, _batch(data), n)]

    return draw


def _draw_solve(data, dtype):
    """a (..., n, n) and b: (n,), or (..., n, k) with stacks that broadcast."""
    n = data.draw(st.integers(1, 4), label="n")
    a_batch, b_batch = data.draw(
        hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=2, max_side=3)
    ).input_shapes
    a = _dominant(data, dtype, a_batch, n)
    if data.draw(st.booleans(), label="b is a vector"):
        return [a, _base(data, dtype, (n,))]
    k = data.draw(st.integers(1, 3), label="k")
    return [a, _base(data, dtype, (*b_batch, n, k))]


def _draw_triangular(data, dtype):
    """A dominant a (both triangles filled, one is junk) and b of shape (n,) or (n, k)."""
    n = data.draw(st.integers(1, 4), label="n")
    a = _dominant(data, dtype, (), n)
    shape = data.draw(st.sampled_from([(n,), (n, 1), (n, 3)]), label="b shape")
    return [a, _base(data, dtype, shape)]


def _pair(name, op_class, build, reference, draw, static=False, **grad):
    """A float64 record (integer inputs too) and a float32 one with looser tolerances;
    ``grad`` holds the float64 record's gradient settings. ``op_class`` may be a tuple."""
    ops = op_class if isinstance(op_class, tuple) else (op_class,)
    kw = {"static_shapes": static}
    return [
        OpRecord(name, ops, build, reference, draw, F64, **kw, **grad),
        OpRecord(f"{name}_float32", ops, build, reference, draw, F32, **F32_TOL, **kw),
    ]


def _solve_triangular(lower):
    return functools.partial(scipy.linalg.solve_triangular, lower=lower, check_finite=False)


# The gradient of cholesky is the symmetric one (that of JAX's lowering, which symmetrizes
# A), but NumPy reads only A's lower triangle: finite differences of single entries give
# twice the symmetric gradient below the diagonal and zero above it. ``cholesky_symmetric``
# builds cholesky((A + A.T) / 2), where both backends and finite differences agree.
CHOLESKY_FD = (
    "no finite differences: NumPy reads only the lower triangle, so entrywise differences "
    "measure the lower-triangle gradient, not the symmetric one of JAX and the vjp; "
    "cholesky_symmetric checks them"
)


def _symmetric(x, swapaxes):
    return (x + swapaxes(x, -1, -2)) / 2


RECORDS = [
    *_pair(
        "cholesky",
        la.Cholesky,
        rt.linalg.cholesky,
        np.linalg.cholesky,
        _draw_square(_spd),
        fd=False,
        notes=CHOLESKY_FD,
    ),
    OpRecord(
        "cholesky_symmetric",
        (la.Cholesky,),
        lambda a: rt.linalg.cholesky(_symmetric(a, rt.swapaxes)),
        lambda a: np.linalg.cholesky(_symmetric(a, np.swapaxes)),
        _draw_square(_spd),
        ("float64",),
    ),
    *_pair("inv", la.Inv, rt.linalg.inv, np.linalg.inv, _draw_square(_dominant)),
    *_pair("det", la.Det, rt.linalg.det, np.linalg.det, _draw_square(_dominant)),
    *_pair(
        "slogdet",
        la.Slogdet,
        rt.linalg.slogdet,
        lambda a: tuple(np.linalg.slogdet(a)),
        _draw_square(_dominant),
    ),
    *_pair("solve", la.Solve, rt.linalg.solve, np.linalg.solve, _draw_solve),
    *_pair(
        "solve_triangular_upper",
        la.SolveTriangular,
        rt.linalg.solve_triangular,
        _solve_triangular(False),
        _draw_triangular,
    ),
    *_pair(
        "solve_triangular_lower",
        la.SolveTriangular,
        functools.partial(rt.linalg.solve_triangular, lower=True),
        _solve_triangular(True),
        _draw_triangular,
    ),
    OpRecord(
        "cholesky_static",
        (la.Cholesky,),
        rt.linalg.cholesky,
        np.linalg.cholesky,
        _draw_square(_spd),
        F64,
        static_shapes=True,
        fd=False,
        notes=CHOLESKY_FD,
    ),
    OpRecord(
        "solve_static",
        (la.Solve,),
        rt.linalg.solve,
        np.linalg.solve,
        _draw_solve,
        F64,
        static_shapes=True,
    ),
    OpRecord(
        "slogdet_static",
        (la.Slogdet,),
        rt.linalg.slogdet,
        lambda a: tuple(np.linalg.slogdet(a)),
        _draw_square(_dominant),
        F64,
        static_shapes=True,
    ),
]


# --- trace and diag: exact (eighths in [-4, 4] sum exactly in float32) -------------------


def _grid(data, dtype, shape):
    x = values(data, dtype, shape, -4.0, 4.0)
    return (np.round(x * 8) / 8).astype(x.dtype) if x.dtype.kind == "f" else x


def _draw_rank(min_dims, max_dims):
    def draw(data, dtype):
        shape = data.draw(hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, max_side=4))
        return [_grid(data, dtype, shape)]

    return draw


def _with(fn, **kwargs):
    return lambda x: fn(x, **kwargs)


RECORDS += [
    OpRecord("trace", (la.Trace,), rt.linalg.trace, np.trace, _draw_rank(2, 4), ALL),
    OpRecord(
        "trace_offset1",
        (la.Trace,),
        _with(rt.linalg.trace, offset=1),
        _with(np.trace, offset=1),
        _draw_rank(2, 3),
        ALL,
    ),
    OpRecord(
        "trace_offset_neg2_static",
        (la.Trace,),
        _with(rt.linalg.trace, offset=-2),
        _with(np.trace, offset=-2),
        _draw_rank(2, 3),
        ALL,
        static_shapes=True,
    ),
    OpRecord("diag_vector", (la.AllocDiag,), rt.linalg.diag, np.diag, _draw_rank(1, 1), ALL),
    OpRecord(
        "diag_vector_k_neg2_static",
        (la.AllocDiag,),
        _with(rt.linalg.diag, k=-2),
        _with(np.diag, k=-2),
        _draw_rank(1, 1),
        ALL,
        static_shapes=True,
    ),
    OpRecord("diag_matrix", (la.ExtractDiag,), rt.linalg.diag, np.diag, _draw_rank(2, 2), ALL),
    OpRecord(
        "diag_matrix_k1",
        (la.ExtractDiag,),
        _with(rt.linalg.diag, k=1),
        _with(np.diag, k=1),
        _draw_rank(2, 2),
        ALL,
    ),
    OpRecord(
        "diag_matrix_k_neg3_static",
        (la.ExtractDiag,),
        _with(rt.linalg.diag, k=-3),
        _with(np.diag, k=-3),
        _draw_rank(2, 2),
        ALL,
        static_shapes=True,
    ),
]


# --- decompositions: svd, eigh, qr, pinv, expm -------------------------------------------
#
# A decomposition is unique only up to signs (a singular pair, an eigenvector, a row of R
# with its column of Q), so the records' graphs output invariant quantities: values, the
# squares of the vectors' entries, U f(s) Vh and v f(w) v.T, and Q and R with R's diagonal
# made positive. The draws keep the spectrum well separated: singular values
# k + [0, 0.5), ..., 1 + [0, 0.5) (cond <= 4.5, gaps >= 0.5) and eigenvalues spaced >= 0.5
# and >= 0.25 from 0, in random orthogonal bases (Q of the QR of a matrix of [-2, 2], which
# is orthogonal whatever the matrix). Integer draws (values only) are integer matrices.
#
# Each JAX compile costs most of these records' time, and jax.jit compiles once per shape:
# so each record draws from two shapes (float32 records and expm from one), a single
# matrix and a stack, tall, wide or square; float64 and float32 only (bool and integer
# inputs take the path of the LAPACK Ops above); and one record's graph holds several
# functions.

MATRICES = ((3, 2), (2, 2, 3))  # tall, and a stack of wide ones
TALL = ((3, 2), (2, 3, 3))  # for the gradients of qr that JAX has
SQUARE = ((3, 3), (2, 2, 2))
F32_MATRICES, F32_SQUARE = ((2, 3),), ((3, 3),)


def _shape(data, dtype, shapes, f32_shapes):
    return data.draw(st.sampled_from(f32_shapes if dtype == "float32" else shapes), label="shape")


def _orthogonal(data, batch, n):
    return np.linalg.qr(_base(data, "float64", (*batch, n, n)))[0]


def _spectral(data, dtype, shape):
    """Matrices of ``shape`` with distinct singular values in [1, k + 0.5)."""
    if np.dtype(dtype).kind != "f":
        return _base(data, dtype, shape)
    *batch, m, n = shape
    k = min(m, n)
    s = np.arange(k, 0, -1) + values(data, "float64", (*batch, k), 0.0, 0.49)
    u, v = _orthogonal(data, batch, m)[..., :k], _orthogonal(data, batch, n)[..., :k]
    return ((u * s[..., None, :]) @ np.swapaxes(v, -1, -2)).astype(dtype)


def _symmetric_spectral(data, dtype, shape):
    """Symmetric matrices of ``shape`` with eigenvalues spaced at least 0.5 apart and at
    least 0.25 from 0."""
    *batch, n, _ = shape
    w = np.arange(n) - n // 2 + 0.25 + values(data, "float64", (*batch, n), 0.0, 0.49)
    q = _orthogonal(data, batch, n)
    a = (q * w[..., None, :]) @ np.swapaxes(q, -1, -2)
    return ((a + np.swapaxes(a, -1, -2)) / 2).astype(dtype)


def _draw_matrices(data, dtype):
    return [_spectral(data, dtype, _shape(data, dtype, MATRICES, F32_MATRICES))]


def _draw_symmetric(data, dtype):
    return [_symmetric_spectral(data, dtype, _shape(data, dtype, SQUARE, F32_SQUARE))]


def _draw_qr(shapes):
    """Matrices whose first min(m, n) columns are well conditioned."""

    def draw(data, dtype):
        *batch, m, n = _shape(data, dtype, shapes, F32_MATRICES)
        if n <= m:
            return [_spectral(data, dtype, (*batch, m, n))]
        rest = _base(data, dtype, (*batch, m, n - m))
        return [np.concatenate([_spectral(data, dtype, (*batch, m, m)), rest], axis=-1)]

    return draw


def _symmetric_rt(a):
    return _symmetric(a, rt.swapaxes)


def _mT(a):
    return np.swapaxes(a, -1, -2)


def _svd_build(a):
    u, s, vh = rt.linalg.svd(a, full_matrices=False)
    values_only = rt.linalg.svd(a, compute_uv=False)
    return s, u * u, vh * vh, (u * rt.sin(s)[..., None, :]) @ vh, values_only


def _svd_reference(a):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    values_only = np.linalg.svd(a, compute_uv=False)
    return s, u * u, vh * vh, (u * np.sin(s)[..., None, :]) @ vh, values_only


def _svd_full_build(a):
    u, s, vh = rt.linalg.svd(a)
    k = rt.shape_i(s, s.ndim - 1)
    uk, vk = u[..., :, :k], vh[..., :k, :]
    return s, uk * uk, vk * vk, u @ rt.swapaxes(u, -1, -2), rt.swapaxes(vh, -1, -2) @ vh


def _svd_full_reference(a):
    u, s, vh = np.linalg.svd(a)
    k = s.shape[-1]
    uk, vk = u[..., :, :k], vh[..., :k, :]
    return s, uk * uk, vk * vk, u @ _mT(u), _mT(vh) @ vh


def _eigh_build(a):
    w, v = rt.linalg.eigh(_symmetric_rt(a))
    values_only = rt.linalg.eigvalsh(_symmetric_rt(a))
    return w, v * v, (v * rt.sin(w)[..., None, :]) @ rt.swapaxes(v, -1, -2), values_only


def _eigh_reference(a):
    w, v = np.linalg.eigh(_symmetric(a, np.swapaxes))
    values_only = np.linalg.eigvalsh(_symmetric(a, np.swapaxes))
    return w, v * v, (v * np.sin(w)[..., None, :]) @ _mT(v), values_only


def _positive_diagonal_rt(q, r):
    """Q's first k columns and R's first k rows, with R's diagonal made positive."""
    k = rt.minimum(rt.shape_i(r, r.ndim - 2), rt.shape_i(r, r.ndim - 1))
    signs = rt.sign(rt.einsum("...ii->...i", r[..., :k, :k]))
    return q[..., :, :k] * signs[..., None, :], r[..., :k, :] * signs[..., :, None]


def _positive_diagonal(q, r):
    k = min(r.shape[-2:])
    signs = np.sign(np.diagonal(r[..., :k, :k], axis1=-2, axis2=-1))
    return q[..., :, :k] * signs[..., None, :], r[..., :k, :] * signs[..., :, None]


def _qr_build(a):
    """mode "reduced", and "r" (its R made positive with reduced Q's signs)."""
    q, r = _positive_diagonal_rt(*rt.linalg.qr(a))
    _, r_only = _positive_diagonal_rt(q, rt.linalg.qr(a, mode="r"))
    return q, r, r_only


def _qr_reference(a):
    q, r = _positive_diagonal(*np.linalg.qr(a))
    _, r_only = _positive_diagonal(q, np.linalg.qr(a, mode="r"))
    return q, r, r_only


def _qr_complete_build(a):
    q, r = rt.linalg.qr(a, mode="complete")
    return (*_positive_diagonal_rt(q, r), q @ rt.swapaxes(q, -1, -2))


def _qr_complete_reference(a):
    q, r = np.linalg.qr(a, mode="complete")
    return (*_positive_diagonal(q, r), q @ _mT(q))


def _draw_expm(data, dtype):
    return [values(data, dtype, (3, 3), -1.0, 1.0)]


def _pair_f(name, ops, build, reference, draw, **grad):
    """``_pair`` of a float64 record (no integer draws) and a float32 one."""
    return [
        OpRecord(name, ops, build, reference, draw, ("float64",), **grad),
        OpRecord(f"{name}_float32", ops, build, reference, draw, F32, **F32_TOL),
    ]


RECORDS += [
    *_pair_f("svd", (la.Svd,), _svd_build, _svd_reference, _draw_matrices),
    OpRecord(
        "svd_values_int",
        (la.Svd,),
        lambda a: rt.linalg.svd(a, compute_uv=False),
        lambda a: np.linalg.svd(a, compute_uv=False),
        _draw_matrices,
        ("int64",),
    ),
    OpRecord(
        "svd_full_matrices",
        (la.Svd,),
        _svd_full_build,
        _svd_full_reference,
        _draw_matrices,
        ("float64",),
        grad=False,
        notes="no gradient of U and Vh with full_matrices=True (nor in JAX); the square "
        "static case is in tests/tensor/test_decompositions.py",
    ),
    *_pair_f("eigh", (la.Eigh,), _eigh_build, _eigh_reference, _draw_symmetric),
    *_pair_f(
        "qr", (la.Qr,), _qr_build, _qr_reference, _draw_qr(MATRICES), grad_draw=_draw_qr(TALL)
    ),
    OpRecord(
        "qr_complete",
        (la.Qr,),
        _qr_complete_build,
        _qr_complete_reference,
        _draw_qr(MATRICES),
        ("float64",),
        grad=False,
        notes="no gradient of mode='complete' for m > n (JAX has none for m != n); wide "
        "matrices' gradients (JAX has none) in tests/tensor/test_decompositions.py",
    ),
    *_pair_f("pinv", (la.Pinv,), rt.linalg.pinv, np.linalg.pinv, _draw_matrices),
    OpRecord(
        "pinv_hermitian_rtol",
        (la.Pinv,),
        lambda a: rt.linalg.pinv(_symmetric_rt(a), hermitian=True, rtol=1e-3),
        lambda a: np.linalg.pinv(_symmetric(a, np.swapaxes), hermitian=True, rtol=1e-3),
        _draw_symmetric,
        ("float64",),
    ),
    *_pair_f("expm", (la.Expm,), rt.linalg.expm, scipy.linalg.expm, _draw_expm),
]


# --- built from the Ops: lstsq, norm, matrix_power, kron ---------------------------------


def _draw_lstsq(data, dtype):
    """a tall (3, 2) and b (3,), or a wide (2, 3) and b (2, 2): distinct singular values."""
    (m, n), shape = data.draw(st.sampled_from([((3, 2), (3,)), ((2, 3), (2, 2))]))
    return [_spectral(data, dtype, (m, n)), _base(data, dtype, shape)]


def _lstsq_reference(a, b):
    """NumPy's lstsq, with the residuals NumPy leaves out (rank < n or m <= n) computed."""
    x, residuals, rank, s = np.linalg.lstsq(a, b)
    if residuals.size == 0:
        r = b.reshape(len(b), -1) - a @ x.reshape(a.shape[1], -1)
        residuals = (r * r).sum(axis=0)
    return x, residuals, np.asarray(rank, dtype=np.int32), s


def _draw_distinct(data, dtype):
    """Entries of distinct magnitudes in [0.5, ...), random signs: no ties for max and min,
    no zeros for the p-norms."""
    shape = data.draw(st.sampled_from([(4,), (2, 3)]), label="shape")
    size = int(np.prod(shape))
    order = np.array(data.draw(st.permutations(range(size)), label="order"), dtype=float)
    signs = data.draw(hnp.arrays(np.int8, (size,), elements=st.sampled_from([-1, 1])))
    return [(signs * (0.5 + 0.5 * order)).reshape(shape).astype(dtype)]


def _draw_powers_of_two(data, dtype):
    """Matrices whose entries are distinct powers of two with random signs: the sums of
    |entries| over different rows (or columns) differ, so max and min have no ties."""
    *batch, m, n = data.draw(st.sampled_from(MATRICES), label="shape")
    order = np.array(data.draw(st.permutations(range(m * n)), label="order"), dtype=float)
    signs = data.draw(hnp.arrays(np.int8, (*batch, m, n), elements=st.sampled_from([-1, 1])))
    return [(signs * 2.0 ** (order.reshape(m, n) - 4)).astype(dtype)]


def _draw_matrix_stacks(data, dtype):
    """Two (3, 2, 2) stacks: x of distinct powers of two with random signs, for the orders
    of sums of |x| (no zeros: the gradient of |x| at 0 is 0 here, 1 in JAX; no ties), and
    y of ``_spectral`` matrices in its axes (2, 0) (y[:, 0, :] is one too), for the
    orders of singular values."""
    order = np.array(data.draw(st.permutations(range(12)), label="order"), dtype=float)
    signs = data.draw(hnp.arrays(np.int8, (12,), elements=st.sampled_from([-1, 1])))
    x = (signs * 2.0 ** (order - 4)).reshape(3, 2, 2)
    y = np.moveaxis(_spectral(data, "float64", (2, 2, 3)), (-2, -1), (2, 0))
    return [x.astype(dtype), y.astype(dtype)]


VECTOR_ORDS = (None, 1, 2, np.inf, -np.inf, 0, 3, 0.5, -1.5)
SPECTRAL_ORDS = (None, "fro", "nuc", 2, -2)
SUM_ORDS = (1, -1, np.inf, -np.inf)
VECTOR_NORM_OPS = (el.Abs, el.Sqrt, rd.Sum, rd.Max, rd.Min)


def _vector_norms(norm):
    return lambda x: (
        norm(x),
        norm(x, keepdims=True),
        *(norm(x, o, axis=-1) for o in VECTOR_ORDS),
        norm(x, 2, axis=0, keepdims=True),
    )


def _matrix_norms(norm, ords, axis=(-2, -1), keepdims=False):
    return lambda x: tuple(norm(x, o, axis=axis, keepdims=keepdims) for o in ords)


def _norms_2d_and_stacked(norm):
    """Both kinds of orders of a matrix (axis None) and over axes (2, 0), keepdims."""
    return lambda x, y: (
        *(norm(x[0], o) for o in SUM_ORDS),
        *(norm(y[:, 0, :], o) for o in SPECTRAL_ORDS),
        *_matrix_norms(norm, SUM_ORDS, axis=(2, 0), keepdims=True)(x),
        *_matrix_norms(norm, SPECTRAL_ORDS, axis=(2, 0), keepdims=True)(y),
    )


MATRIX_POWERS = (0, 1, 2, 3, 5, -1, -2)


def _draw_dominant(data, dtype):
    *batch, n, _ = data.draw(st.sampled_from(SQUARE), label="shape")
    return [_dominant(data, dtype, tuple(batch), n)]


RECORDS += [
    OpRecord(
        "lstsq", (la.Pinv, la.Svd), rt.linalg.lstsq, _lstsq_reference, _draw_lstsq, ("float64",)
    ),
    OpRecord(
        "norm_vector",
        VECTOR_NORM_OPS,
        _vector_norms(rt.linalg.norm),
        _vector_norms(np.linalg.norm),
        _draw_distinct,
    ),
    OpRecord(
        "norm_matrix",
        (la.Svd, *VECTOR_NORM_OPS),
        _matrix_norms(rt.linalg.norm, SPECTRAL_ORDS),
        _matrix_norms(np.linalg.norm, SPECTRAL_ORDS),
        _draw_matrices,
        ("float64",),
    ),
    OpRecord(
        "norm_matrix_sums",
        VECTOR_NORM_OPS,
        _matrix_norms(rt.linalg.norm, SUM_ORDS),
        _matrix_norms(np.linalg.norm, SUM_ORDS),
        _draw_powers_of_two,
        ("float64",),
    ),
    OpRecord(
        "norm_matrix_axes",
        (la.Svd, *VECTOR_NORM_OPS),
        _norms_2d_and_stacked(rt.linalg.norm),
        _norms_2d_and_stacked(np.linalg.norm),
        _draw_matrix_stacks,
        ("float64",),
    ),
    OpRecord(
        "matrix_power",
        (pr.MatMul, la.Inv),
        lambda a: tuple(rt.linalg.matrix_power(a, n) for n in MATRIX_POWERS),
        lambda a: tuple(np.linalg.matrix_power(a, n) for n in MATRIX_POWERS),
        _draw_dominant,
        ("float64",),
    ),
    OpRecord(
        "kron",
        (el.Multiply, sh.ExpandDims, sh.Reshape),
        rt.linalg.kron,
        np.kron,
        lambda data, dtype: [
            values(data, dtype, shape)
            for shape in data.draw(st.sampled_from([((2, 3), (2,)), ((), (3, 1)), ((2,), (3,))]))
        ],
        ("float64", "int64", "bool"),
    ),
]
