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
from rewritekit.tensor import linalg as la
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
    ``grad`` holds the float64 record's gradient settings."""
    kw = {"static_shapes": static}
    return [
        OpRecord(name, (op_class,), build, reference, draw, F64, **kw, **grad),
        OpRecord(f"{name}_float32", (op_class,), build, reference, draw, F32, **F32_TOL, **kw),
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
