"""Spectral and orthogonal decompositions, the pseudo-inverse and the matrix exponential:
``svd``, ``eigh``, ``eigvalsh``, ``qr``, ``pinv`` and ``expm`` (``rt.linalg`` holds them).

Each Op takes a matrix or a stack of them (``(..., m, n)``; ``eigh``, ``eigvalsh`` and
``expm`` square ones) and follows NumPy's ``np.linalg`` (SciPy's ``expm``) in its outputs,
their order and their shapes. Dtypes as the other LAPACK Ops (``lapack_dtype``): float32
and float64 kept, bool and integers computed in float64, float16 and complex rejected.

Gradients (``vjp``), as JAX's:

- ``eigh``: the symmetric gradient (perturbations of A are symmetric). The eigenvector part
  divides by the gaps between eigenvalues: inf or NaN where two coincide (the eigenvectors
  of a repeated eigenvalue are not unique). The eigenvalues alone (``eigvalsh``, or
  ``eigh`` with unused eigenvectors) get v diag(g) v.T, finite there too.
- ``svd``: the same where singular values coincide (or one is zero, for the U and Vh of a
  non-square matrix); the singular values alone get U diag(g) Vh, finite everywhere. U and
  Vh of ``full_matrices=True`` have no gradient unless the matrix is square (statically):
  their extra columns or rows are not unique.
- ``qr``: where R's diagonal is nonzero (the first min(m, n) columns of A independent);
  ``mode="complete"``: R alone, or Q too when m <= n is known statically.
- ``pinv``: Golub and Pereyra's formula, exact where the rank does not change near A.
- ``expm``: exact: the Fréchet derivative at A.T, one ``expm`` of a 2n x 2n block matrix.

Example:
    >>> u, s, vh = rt.linalg.svd(rt.matrix("a", shape=(5, 3)), full_matrices=False)
    >>> u.type, s.type
    (TensorType(dtype='float64', shape=(5, 3)), TensorType(dtype='float64', shape=(3,)))
"""

from __future__ import annotations

from collections.abc import Callable
from numbers import Real
from typing import Any

from rewritekit.errors import GraphTypeError, ShapeError
from rewritekit.ir import Constant, Grads, TensorType, Var, Vars
from rewritekit.ir.patterns import pattern_function
from rewritekit.tensor.contractions import grad_as
from rewritekit.tensor.creation import Alloc, eye, zeros_like
from rewritekit.tensor.elemwise import greater, minimum, reciprocal, where
from rewritekit.tensor.lapack import (
    LapackOp,
    as_input,
    check_square,
    lapack_dtype,
    lower_mask,
    matrix_transpose,
    same_length,
    solve,
    solve_triangular,
)
from rewritekit.tensor.shapes import concatenate, expand_dims, shape_i

__all__ = ["eigh", "eigvalsh", "expm", "pinv", "qr", "svd"]

mT = matrix_transpose
Length = int | None


def _matrices(name: str, a: TensorType) -> str:
    """Check that ``a`` is (a stack of) matrices; the dtype the Op computes in."""
    dtype = lapack_dtype(name, a)
    if a.ndim < 2:
        raise ShapeError(
            f"{name}: input 0 must be a matrix or a stack of matrices (at least 2-d), got a "
            f"{a.ndim}-d input"
        )
    return dtype


def _shorter(m: Length, n: Length) -> Length:
    """min(m, n) as far as the static lengths say."""
    if m is not None and n is not None:
        return min(m, n)
    return 0 if 0 in (m, n) else None


def _inverse_gaps(gaps: Var) -> Var:
    """1 / gaps off the diagonal and 0 on it, without dividing by the zero diagonal."""
    ones = eye(shape_i(gaps, gaps.ndim - 1), dtype=gaps.dtype)
    return reciprocal(gaps + ones) - ones


def _on_diagonal(v: Var) -> Var:
    """The stack of diagonal matrices with the vectors ``v`` on their diagonals."""
    return eye(shape_i(v, v.ndim - 1), dtype=v.dtype) * expand_dims(v, -2)


def _if_longer(a: Var, axis: int, term: Callable[[], Var]) -> Var | None:
    """``term()`` where ``a``'s matrices have more rows (``axis`` -2) or more columns (-1)
    than the other way; None where the static shape says they do not, else masked."""
    m, n = a.type.shape[-2:]
    if m is not None and n is not None:
        return term() if (m > n if axis == -2 else n > m) else None
    rows, cols = shape_i(a, a.ndim - 2), shape_i(a, a.ndim - 1)
    return where(greater(rows, cols) if axis == -2 else greater(cols, rows), term(), 0)


def _unused(g: Var) -> bool:
    """True for the zeros the differentiator passes for an output the cost does not use."""
    node = g.owner
    if node is None or not isinstance(node.op, Alloc):
        return False
    fill = node.inputs[0]
    return isinstance(fill, Constant) and not fill.data.any()


def _plus(*terms: Var | None) -> Var:
    found = [t for t in terms if t is not None]
    total = found[0]
    for t in found[1:]:
        total = total + t
    return total


class Svd(LapackOp):
    """The singular value decomposition A = U @ diag(s) @ Vh (NumPy's ``svd``), s
    descending, of (a stack of) m x n matrices; k = min(m, n). Outputs (U, s, Vh): U of
    shape (..., m, k), s (..., k), Vh (..., k, n), or U (..., m, m) and Vh (..., n, n)
    with ``full_matrices``; s alone when ``compute_uv`` is False. Each singular pair
    (U[:, i], Vh[i]) is unique up to one sign where s[i] is a simple singular value."""

    __props__ = ("full_matrices", "compute_uv")

    full_matrices: bool
    compute_uv: bool

    def __init__(self, full_matrices: bool = True, compute_uv: bool = True) -> None:
        super().__init__(bool(full_matrices), bool(compute_uv))

    def infer_types(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        (a,) = input_types
        dtype = _matrices(self.name, a)
        *batch, m, n = a.shape
        k = _shorter(m, n)
        s = TensorType(dtype, (*batch, k))
        if not self.compute_uv:
            return (s,)
        cols, rows = (m, n) if self.full_matrices else (k, k)
        return (TensorType(dtype, (*batch, m, cols)), s, TensorType(dtype, (*batch, rows, n)))

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        (a,) = inputs
        if not self.compute_uv:  # ds = diag(U.T dA V): A_bar = U diag(g) Vh
            u, _, vh = svd(a, full_matrices=False)
            return [grad_as(u * expand_dims(cotangents[0], -2) @ vh, a)]
        (u, s, vh), (gu, gs, gvh) = outputs, cotangents
        if _unused(gu) and _unused(gvh):  # s alone: U diag(g) Vh over the first k columns
            k = shape_i(s, s.ndim - 1)
            return [grad_as(u[..., :, :k] * expand_dims(gs, -2) @ vh[..., :k, :], a)]
        m, n = a.type.shape[-2:]
        if self.full_matrices and (m is None or m != n):
            raise GraphTypeError(
                f"svd: no gradient of U and Vh with full_matrices=True for a matrix of shape "
                f"{a.type.shape[-2:]} (the extra columns of U or rows of Vh are not unique); "
                "use full_matrices=False, or compute_uv=False for the singular values"
            )
        return [grad_as(_svd_vjp(a, u, s, vh, gu, gs, gvh), a)]


def _svd_vjp(a: Var, u: Var, s: Var, vh: Var, gu: Var, gs: Var, gvh: Var) -> Var:
    """JAX's svd jvp transposed. With S = diag(s), F = 1 / (s_j^2 - s_i^2) off the diagonal,
    J = F * (U.T gU) and K = F * (V.T gV): A_bar = U (diag(gs) + (J + J.T) S + S (K + K.T))
    Vh, plus (I - U U.T) gU S^-1 Vh for more rows than columns and U S^-1 gV.T (I - V V.T)
    for more columns than rows."""
    v, gv = mT(vh), mT(gvh)
    row, col = expand_dims(s, -2), expand_dims(s, -1)  # s_j, s_i at (i, j)
    f = _inverse_gaps((row + col) * (row - col))
    j = f * (mT(u) @ gu)
    k = f * (vh @ gv)
    middle = (j + mT(j)) * row + col * (k + mT(k)) + _on_diagonal(gs)
    tall = _if_longer(a, -2, lambda: (gu - u @ (mT(u) @ gu)) / row @ vh)
    wide = _if_longer(a, -1, lambda: u @ mT((gv - v @ (vh @ gv)) / row))
    return _plus(u @ middle @ vh, tall, wide)


class Eigh(LapackOp):
    """The eigenvalues w, ascending, and eigenvectors v (the columns) of a symmetric matrix
    A = v @ diag(w) @ v.T (NumPy's ``eigh``; w alone, ``eigvalsh``, when ``vectors`` is
    False). Only the ``lower`` triangle of A is read (the upper one when False), by both
    backends. Each eigenvector is unique up to its sign where its eigenvalue is simple.

    Domain: A symmetric (the triangle read is taken as the whole matrix)."""

    __props__ = ("lower", "vectors")

    lower: bool
    vectors: bool

    def __init__(self, lower: bool = True, vectors: bool = True) -> None:
        super().__init__(bool(lower), bool(vectors))

    def infer_types(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        a = self.square(*input_types)
        w = TensorType(a.dtype, a.shape[:-1])
        return (w, a) if self.vectors else (w,)

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        # dw = diag(v.T dA v), dv = v (F * (v.T dA v)) with F = 1 / (w_j - w_i) off the
        # diagonal; transposed and symmetrized (JAX symmetrizes the perturbation of A)
        (a,) = inputs
        if not self.vectors:
            _, v = Eigh(self.lower)(a)
            return [grad_as(v * expand_dims(cotangents[0], -2) @ mT(v), a)]
        (w, v), (gw, gv) = outputs, cotangents
        if _unused(gv):  # w alone: no gaps to divide by (repeated eigenvalues are fine)
            return [grad_as(v * expand_dims(gw, -2) @ mT(v), a)]
        f = _inverse_gaps(expand_dims(w, -2) - expand_dims(w, -1))
        g = v @ (f * (mT(v) @ gv) + _on_diagonal(gw)) @ mT(v)
        return [grad_as((g + mT(g)) * 0.5, a)]


QR_MODES = ("reduced", "complete", "r")


class Qr(LapackOp):
    """The QR decomposition A = Q @ R (NumPy's ``qr``, by Householder reflections): Q has
    orthonormal columns, R is upper triangular; k = min(m, n). ``mode`` "reduced": Q of
    shape (..., m, k) and R (..., k, n); "complete": Q (..., m, m) and R (..., m, n); "r":
    R (..., k, n) alone. The signs of R's diagonal are LAPACK's (with those of Q's
    columns): unique up to them where A's first k columns are independent."""

    __props__ = ("mode",)

    mode: str

    def __init__(self, mode: str = "reduced") -> None:
        if mode not in QR_MODES:
            raise GraphTypeError(
                f"qr: mode must be one of {', '.join(map(repr, QR_MODES))}, got {mode!r}"
            )
        super().__init__(mode)

    def infer_types(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        (a,) = input_types
        dtype = _matrices(self.name, a)
        *batch, m, n = a.shape
        k = m if self.mode == "complete" else _shorter(m, n)
        r = TensorType(dtype, (*batch, k, n))
        return (r,) if self.mode == "r" else (TensorType(dtype, (*batch, m, k)), r)

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        (a,) = inputs
        m, n = a.type.shape[-2:]
        if self.mode == "complete" and _unused(cotangents[0]):  # R alone: its first k rows
            (q, r), (_, gr) = outputs, cotangents
            k = minimum(shape_i(a, a.ndim - 2), shape_i(a, a.ndim - 1))
            return [grad_as(_qr_vjp(a, q[..., :, :k], r[..., :k, :], None, gr[..., :k, :]), a)]
        if self.mode == "complete" and (m is None or n is None or m > n):
            raise GraphTypeError(
                f"qr: no gradient of mode='complete' for a matrix of shape "
                f"{a.type.shape[-2:]} unless it has no more rows than columns (the extra "
                "columns of Q are not unique); use mode='reduced'"
            )
        if self.mode == "r":
            (q, r), gq, (gr,) = qr(a), None, cotangents
        else:
            (q, r), (gq, gr) = outputs, cotangents
        return [grad_as(_qr_vjp(a, q, r, gq, gr), a)]


def _solve_upper(r: Var, b: Var) -> Var:
    """R^-1 b for upper triangular R (a general solve for stacks)."""
    if r.ndim == 2 and b.ndim == 2:
        return solve_triangular(r, b, lower=False)
    return solve(r, b)


def _qr_vjp(a: Var, q: Var, r: Var, gq: Var | None, gr: Var) -> Var:
    """JAX's qr jvp transposed (m >= n): with N = Q.T gQ - gR R.T, A_bar = (gQ + Q
    (tril(N - N.T, -1) - N)) R^-T. A wide A = [X, Y] (X its first m columns) has R = [U,
    Q.T Y] with X = Q U: Y_bar = Q gR[:, m:], and X's rule takes gQ + Y gR[:, m:].T."""
    m, n = a.type.shape[-2:]
    tall = m is not None and n is not None and m >= n
    if not tall:
        k = minimum(shape_i(a, a.ndim - 2), shape_i(a, a.ndim - 1))
        y, g_rest, r, gr = a[..., :, k:], gr[..., :, k:], r[..., :, :k], gr[..., :, :k]
        through_y = y @ mT(g_rest)
        gq = through_y if gq is None else gq + through_y
    inner = -(gr @ mT(r)) if gq is None else mT(q) @ gq - gr @ mT(r)
    skew = inner - mT(inner)
    dbar = skew * lower_mask(skew, skew.dtype, strict=True) - inner
    b = q @ dbar if gq is None else gq + q @ dbar
    gx = mT(_solve_upper(r, mT(b)))
    return gx if tall else concatenate([gx, q @ g_rest], axis=-1)


class Expm(LapackOp):
    """The matrix exponential exp(A) = sum_k A^k / k! of (a stack of) square matrices
    (SciPy's ``expm``: a Padé approximant with scaling and squaring)."""

    def infer_types(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        return (self.square(*input_types),)

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        # The Fréchet derivative L(A, E) is the top right block of expm([[A, E], [0, A]]),
        # and its adjoint is L(A.T, .): A_bar = expm([[A.T, g], [0, A.T]])[:n, n:].
        (a,), (g,) = inputs, cotangents
        at, n = mT(a), shape_i(a, a.ndim - 1)
        top = concatenate([at, g], axis=-1)
        bottom = concatenate([zeros_like(at), at], axis=-1)
        return [grad_as(expm(concatenate([top, bottom], axis=-2))[..., :n, n:], a)]


class Pinv(LapackOp):
    """The Moore-Penrose pseudo-inverse, (..., n, m), of (a stack of) m x n matrices (NumPy
    2's ``pinv``): from the SVD, singular values at most ``rtol`` times the largest count
    as zero; ``rtol`` None is max(m, n) * eps of the dtype. With ``hermitian`` A is taken
    as symmetric (NumPy reads its lower triangle, JAX symmetrizes it)."""

    __props__ = ("rtol", "hermitian")

    rtol: float | None
    hermitian: bool

    def __init__(self, rtol: float | None = None, hermitian: bool = False) -> None:
        if rtol is not None and (not isinstance(rtol, Real) or isinstance(rtol, bool)):
            raise GraphTypeError(f"pinv: rtol must be a Python float or None, got {rtol!r}")
        super().__init__(None if rtol is None else float(rtol), bool(hermitian))

    def infer_types(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        (a,) = input_types
        dtype = _matrices(self.name, a)
        if self.hermitian:
            check_square(self.name, a)
        *batch, m, n = a.shape
        if self.hermitian:
            m = n = same_length(m, n)
        return (TensorType(dtype, (*batch, n, m)),)

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        # Golub and Pereyra (1973): dP = -P dA P + P P.T dA.T (I - A P) + (I - P A) dA.T
        # P.T P, transposed: A_bar = -P.T g P.T + (I - A P) g.T P P.T + P.T P g.T (I - P A)
        (a,), (p,), (g,) = inputs, outputs, cotangents
        pt, gt = mT(p), mT(g)
        left = gt @ (p @ pt)
        right = (pt @ p) @ gt
        ga = -(pt @ g @ pt) + (left - a @ (p @ left)) + (right - (right @ p) @ a)
        return [grad_as((ga + mT(ga)) * 0.5 if self.hermitian else ga, a)]


def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True) -> Any:
    """The singular value decomposition ``(U, s, Vh)`` of ``a`` (of each matrix in a stack),
    ``a = U @ diag(s) @ Vh``, as ``np.linalg.svd``: s descending; U (..., m, m) and Vh
    (..., n, n) with ``full_matrices``, else (..., m, k) and (..., k, n), k = min(m, n);
    only s when ``compute_uv`` is False.

    Gradients: see the module docstring (singular values must be distinct for U and Vh;
    ``full_matrices=False`` for a non-square matrix).

    Example:
        >>> rt.linalg.svd(rt.tensor("a", shape=(4, 5, 3)), compute_uv=False).type
        TensorType(dtype='float64', shape=(4, 3))
    """
    return Svd(full_matrices, compute_uv)(as_input("svd", a))


def _lower(name: str, uplo: Any) -> bool:
    if uplo not in ("L", "U"):
        raise GraphTypeError(f"{name}: UPLO must be 'L' or 'U', got {uplo!r}")
    return uplo == "L"


@pattern_function(Eigh, inputs=("a",), outputs=2)
def eigh(a: Any, UPLO: str = "L") -> tuple[Var, Var]:
    """The eigenvalues ``w`` (ascending) and eigenvectors ``v`` (the columns) of the
    symmetric ``a``, as ``np.linalg.eigh``: ``a = v @ diag(w) @ v.T``. Only the lower
    (``UPLO="L"``) or upper (``"U"``) triangle of ``a`` is read.

    Gradients: symmetric; the eigenvectors' need distinct eigenvalues.

    Example:
        >>> w, v = rt.linalg.eigh(rt.tensor("a", shape=(2, 3, 3)))
        >>> w.type
        TensorType(dtype='float64', shape=(2, 3))
    """
    return Eigh(_lower("eigh", UPLO))(as_input("eigh", a))


@pattern_function(Eigh, inputs=("a",))
def eigvalsh(a: Any, UPLO: str = "L") -> Var:
    """The eigenvalues (ascending) of the symmetric ``a``, as ``np.linalg.eigvalsh``.

    Example:
        >>> rt.linalg.eigvalsh(rt.matrix("a", dtype="int32")).dtype
        'float64'
    """
    return Eigh(_lower("eigvalsh", UPLO), vectors=False)(as_input("eigvalsh", a))


def qr(a: Any, mode: str = "reduced") -> Any:
    """The QR decomposition ``(Q, R)`` of ``a`` (of each matrix in a stack), as
    ``np.linalg.qr``: ``mode`` "reduced" (Q (..., m, k), R (..., k, n), k = min(m, n)),
    "complete" (Q (..., m, m), R (..., m, n)) or "r" (R alone, (..., k, n)).

    Example:
        >>> q, r = rt.linalg.qr(rt.matrix("a", shape=(5, 3)))
        >>> q.type.shape, r.type.shape
        ((5, 3), (3, 3))
    """
    return Qr(mode)(as_input("qr", a))


@pattern_function(Expm, inputs=("a",))
def expm(a: Any) -> Var:
    """The matrix exponential of ``a`` (of each matrix in a stack), as
    ``scipy.linalg.expm``.

    Example:
        >>> rt.linalg.expm(rt.tensor("a", shape=(2, 3, 3))).type
        TensorType(dtype='float64', shape=(2, 3, 3))
    """
    return Expm()(as_input("expm", a))


_UNSET: Any = object()


def pinv(a: Any, rcond: float | None = None, hermitian: bool = False, *, rtol: Any = _UNSET) -> Var:
    """The Moore-Penrose pseudo-inverse of ``a`` (of each matrix in a stack), as NumPy 2's
    ``np.linalg.pinv``: singular values at most ``rtol`` (or ``rcond``) times the largest
    count as zero. Neither given: 1e-15 (NumPy's default); ``rtol=None``: max(m, n) * eps.

    Raises:
        GraphTypeError: both ``rcond`` and ``rtol`` are given, or one is not a float.

    Example:
        >>> rt.linalg.pinv(rt.matrix("a", shape=(5, 3))).type
        TensorType(dtype='float64', shape=(3, 5))
    """
    if rcond is not None and rtol is not _UNSET:
        raise GraphTypeError("pinv: rtol and rcond cannot both be set (rcond is NumPy's old name)")
    if rcond is None:
        rcond = 1e-15 if rtol is _UNSET else rtol
    return Pinv(rcond, hermitian)(as_input("pinv", a))
