"""The LAPACK Ops on (stacks of) square matrices: ``cholesky``, ``solve``,
``solve_triangular``, ``inv``, ``det``, ``slogdet``, and what the linear algebra Ops share
(``lapack_dtype``, ``LapackOp``). ``rt.linalg`` (``rewritekit.tensor.linalg``) holds them.

Dtypes: the LAPACK functions keep float32 and float64 and compute bool and integer inputs
in float64 (with several inputs, each non-float one counts as float64 before promotion, as
in NumPy); float16 and complex inputs are rejected.

Shapes: ``cholesky``, ``inv``, ``det`` and ``slogdet`` take a matrix or a stack of them
(``(..., n, n)``); ``solve`` broadcasts the stacks of its two operands (NumPy 2's rule:
``b`` is a vector only when it is 1-d). Square and matching lengths are checked when the
static lengths are known.

Domain: the matrices must be nonsingular (``cholesky``: symmetric positive definite). Out
of the domain the backends differ: NumPy raises ``LinAlgError``, JAX returns NaN or inf.

Example:
    >>> a = rt.matrix("a", shape=(3, 3))
    >>> rt.linalg.solve(a, rt.vector("b")).type
    TensorType(dtype='float64', shape=(3,))
"""

from __future__ import annotations

from typing import Any

from rewritekit.errors import DTypeError, ShapeError
from rewritekit.ir import (
    Grads,
    Op,
    TensorType,
    Var,
    Vars,
    as_var,
    broadcast_shapes,
    result_dtype,
)
from rewritekit.ir.patterns import pattern_function
from rewritekit.tensor.axes import shape_str
from rewritekit.tensor.contractions import grad_as, outer
from rewritekit.tensor.creation import arange
from rewritekit.tensor.elemwise import cast, greater, greater_equal
from rewritekit.tensor.gradient import input_grad
from rewritekit.tensor.shapes import expand_dims, shape_i, squeeze, swapaxes

__all__ = ["cholesky", "det", "inv", "slogdet", "solve", "solve_triangular"]

Length = int | None


def same_length(n: Length, m: Length) -> Length:
    """One length known from two places (None if neither knows it)."""
    return n if n is not None else m


def lapack_dtype(name: str, *types: TensorType) -> str:
    """The dtype a LAPACK function computes in: float32/float64 kept, bool/ints as float64,
    then promoted (so ``solve(int_a, float32_b)`` is float64, as in NumPy).

    Raises:
        DTypeError: an input is float16 or complex.

    Example:
        >>> lapack_dtype("inv", TensorType("int32", (2, 2)))
        'float64'
    """
    for position, t in enumerate(types):
        if t.kind == "c" or t.dtype == "float16":
            raise DTypeError(
                f"{name}: input {position} has dtype {t.dtype}, which {name} does not support "
                "(expected bool, int, uint, float32 or float64; cast it first)"
            )
    # NumPy's rule (np.linalg's common type): each non-float input counts as float64.
    return result_dtype(*(t.dtype if t.kind == "f" else "float64" for t in types))


def check_square(name: str, t: TensorType, position: int = 0) -> None:
    """Raise unless ``t`` is a (stack of) square matrices, as far as its lengths say."""
    if t.ndim < 2:
        raise ShapeError(
            f"{name}: input {position} must be a matrix or a stack of matrices (at least "
            f"2-d), got a {t.ndim}-d input"
        )
    n, m = t.shape[-2:]
    if n is not None and m is not None and n != m:
        raise ShapeError(
            f"{name}: input {position} must hold square matrices in its last two axes, got "
            f"shape {shape_str(t.shape)}"
        )


def matrix_transpose(x: Var) -> Var:
    """The matrices of ``x`` transposed (its last two axes swapped)."""
    return swapaxes(x, -1, -2)


def lower_mask(x: Var, dtype: str, strict: bool = False) -> Var:
    """The (n, n) mask of ones below the diagonal, and on it unless ``strict``; n is the
    length of ``x``'s last axis."""
    index = arange(shape_i(x, x.ndim - 1))
    compare = greater if strict else greater_equal
    return cast(compare(expand_dims(index, 1), index), dtype)


def _scale(g: Var, matrices: Var) -> Var:
    """Each matrix of the stack ``matrices`` times the matching scalar of ``g``."""
    return expand_dims(g, (-1, -2)) * matrices


class LapackOp(Op):
    """Base of the Ops on (stacks of) square matrices computed by LAPACK."""

    abstract = True

    def square(self, a: TensorType) -> TensorType:
        """Check ``a``; the type of a result of its dtype and shape (lengths filled in)."""
        dtype = lapack_dtype(self.name, a)
        check_square(self.name, a)
        n = same_length(*a.shape[-2:])
        return TensorType(dtype, (*a.shape[:-2], n, n))


class Cholesky(LapackOp):
    """The lower Cholesky factor L of a symmetric positive definite A: A = L @ L.T.

    Domain: A symmetric positive definite (only the lower triangle is read)."""

    def infer_types(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        return (self.square(*input_types),)

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        # Murray (2016), as JAX: dL = L phi(L^-1 dA L^-T), phi taking the lower triangle
        # with the diagonal halved. Transposed: A_bar = L^-T phi(L^T g) L^-1, symmetrized
        # because JAX's lowering symmetrizes A first (A[i, j] and A[j, i] count alike).
        (a,), (factor,), (g,) = inputs, outputs, cotangents
        half = (lower_mask(factor, g.dtype) + lower_mask(factor, g.dtype, strict=True)) * 0.5
        p = (matrix_transpose(factor) @ g) * half
        s = solve(
            matrix_transpose(factor), matrix_transpose(solve(matrix_transpose(factor), p))
        )  # (L^-T p L^-1).T
        return [grad_as((s + matrix_transpose(s)) * 0.5, a)]


class Inv(LapackOp):
    """The inverse of a nonsingular matrix (of each matrix of a stack)."""

    def infer_types(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        return (self.square(*input_types),)

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        # d(A^-1) = -A^-1 dA A^-1, so A_bar = -A^-T g A^-T
        (a,), (y,), (g,) = inputs, outputs, cotangents
        return [grad_as(-(matrix_transpose(y) @ g @ matrix_transpose(y)), a)]


class Det(LapackOp):
    """The determinant of each matrix (by LU factorization). Shape: the stack's."""

    def infer_types(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        a = self.square(*input_types)
        return (TensorType(a.dtype, a.shape[:-2]),)

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        # d det(A) = det(A) tr(A^-1 dA), so A_bar = g det(A) A^-T
        (a,), (d,), (g,) = inputs, outputs, cotangents
        return [grad_as(_scale(g * d, matrix_transpose(inv(a))), a)]


class Slogdet(LapackOp):
    """The sign and the natural log of the absolute value of the determinant:
    det(A) = sign * exp(logabsdet). A singular matrix gives sign 0 and logabsdet -inf."""

    def infer_types(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        a = self.square(*input_types)
        out = TensorType(a.dtype, a.shape[:-2])
        return (out, out)

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        # the sign is piecewise constant (no gradient); d log|det A| = tr(A^-1 dA)
        (a,), (_, g) = inputs, cotangents
        return [grad_as(_scale(g, matrix_transpose(inv(a))), a)]


class Solve(LapackOp):
    """x with A @ x = b, for nonsingular A of shape (..., n, n) and b of shape (n,) or
    (..., n, k) (NumPy 2: b is a vector only when it is 1-d); the stacks broadcast."""

    def infer_types(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        a, b = input_types
        dtype = lapack_dtype(self.name, a, b)
        check_square(self.name, a)
        if b.ndim == 0:
            raise ShapeError(f"{self.name}: input 1 (b) must be at least 1-d, got a 0-d input")
        n = same_length(*a.shape[-2:])
        rows = b.shape[0] if b.ndim == 1 else b.shape[-2]
        if n is not None and rows is not None and n != rows:
            axis = "its only axis" if b.ndim == 1 else "its second-to-last axis"
            raise ShapeError(
                f"{self.name}: a has shape {shape_str(a.shape)} but b has shape "
                f"{shape_str(b.shape)}: {axis} must have length {n}"
            )
        n = same_length(n, rows)
        if b.ndim == 1:
            return (TensorType(dtype, (*a.shape[:-2], n)),)
        batch = broadcast_shapes(a.shape[:-2], b.shape[:-2], op=self.name)
        return (TensorType(dtype, (*batch, n, b.shape[-1])),)

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        # x = A^-1 b: b_bar = A^-T g and A_bar = -b_bar x^T, summed over broadcast stacks.
        # A vector b is a one-column matrix here.
        (a, b), (x,), (g,) = inputs, outputs, cotangents
        if b.ndim == 1:
            x, g = expand_dims(x, -1), expand_dims(g, -1)
        gb = solve(matrix_transpose(a), g)
        ga = -(gb @ matrix_transpose(x))
        return [input_grad(ga, a), input_grad(squeeze(gb, -1) if b.ndim == 1 else gb, b)]


class SolveTriangular(LapackOp):
    """x with A @ x = b for a triangular A (SciPy's ``solve_triangular``): the ``lower``
    triangle of A is read (the upper one when ``lower`` is False). A is 2-d (n, n); b is
    (n,) or (n, k). Domain: a nonzero diagonal."""

    __props__ = ("lower",)

    lower: bool

    def __init__(self, lower: bool = False) -> None:
        super().__init__(bool(lower))

    def infer_types(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        a, b = input_types
        dtype = lapack_dtype(self.name, a, b)
        if a.ndim != 2:
            raise ShapeError(f"{self.name}: input 0 (a) must be 2-d, got a {a.ndim}-d input")
        check_square(self.name, a)
        if b.ndim not in (1, 2):
            raise ShapeError(f"{self.name}: input 1 (b) must be 1-d or 2-d, got {b.ndim}-d")
        n = same_length(*a.shape)
        if n is not None and b.shape[0] is not None and n != b.shape[0]:
            raise ShapeError(
                f"{self.name}: a has shape {shape_str(a.shape)} but b has shape "
                f"{shape_str(b.shape)}: b's first axis must have length {n}"
            )
        return (TensorType(dtype, (same_length(n, b.shape[0]), *b.shape[1:])),)

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        # x = T^-1 b, T the triangle of A that is read: b_bar = T^-T g, and A_bar =
        # -b_bar x^T on that triangle (the other one is not read: zero gradient)
        (a, b), (x,), (g,) = inputs, outputs, cotangents
        gb = solve_triangular(matrix_transpose(a), g, lower=not self.lower)
        ga = -(outer(gb, x) if b.ndim == 1 else gb @ matrix_transpose(x))
        mask = lower_mask(a, ga.dtype)
        return [grad_as(ga * (mask if self.lower else matrix_transpose(mask)), a), grad_as(gb, b)]


def as_input(name: str, a: Any, position: int = 0) -> Var:
    """``a`` as a Var; an error names the function and the input position."""
    return as_var(a, context=f"{name}: input {position}")


@pattern_function(Cholesky, inputs=("a",))
def cholesky(a: Any) -> Var:
    """The lower Cholesky factor L of ``a`` (``a = L @ L.T``), as ``np.linalg.cholesky``.

    Raises:
        ShapeError: ``a`` is not (a stack of) square matrices.
        DTypeError: ``a`` is float16 or complex.

    Example:
        >>> rt.linalg.cholesky(rt.tensor("a", shape=(5, 3, 3))).type
        TensorType(dtype='float64', shape=(5, 3, 3))
    """
    return Cholesky()(as_input("cholesky", a))


@pattern_function(Inv, inputs=("a",))
def inv(a: Any) -> Var:
    """The inverse of ``a`` (of each matrix in a stack), as ``np.linalg.inv``.

    Example:
        >>> rt.linalg.inv(rt.matrix("a", dtype="int32")).dtype
        'float64'
    """
    return Inv()(as_input("inv", a))


@pattern_function(Det, inputs=("a",))
def det(a: Any) -> Var:
    """The determinant of ``a`` (of each matrix in a stack), as ``np.linalg.det``.

    Example:
        >>> rt.linalg.det(rt.tensor("a", shape=(4, 2, 2))).type
        TensorType(dtype='float64', shape=(4,))
    """
    return Det()(as_input("det", a))


@pattern_function(Slogdet, inputs=("a",), outputs=2)
def slogdet(a: Any) -> tuple[Var, Var]:
    """``(sign, logabsdet)`` of ``a``'s determinant, as ``np.linalg.slogdet``.

    Example:
        >>> sign, logdet = rt.linalg.slogdet(rt.matrix("a"))
        >>> logdet.type
        TensorType(dtype='float64', shape=())
    """
    return Slogdet()(as_input("slogdet", a))


@pattern_function(Solve, inputs=("a", "b"))
def solve(a: Any, b: Any) -> Var:
    """The solution x of ``a @ x = b``, as ``np.linalg.solve`` (NumPy 2's shapes).

    Raises:
        ShapeError: ``a`` is not square, or ``b``'s length does not match.
        BroadcastError: the stacks of ``a`` and ``b`` cannot be broadcast.

    Example:
        >>> rt.linalg.solve(rt.tensor("a", shape=(5, 3, 3)), rt.matrix("b")).type
        TensorType(dtype='float64', shape=(5, 3, None))
    """
    return Solve()(as_input("solve", a), as_input("solve", b, 1))


@pattern_function(SolveTriangular, inputs=("a", "b"))
def solve_triangular(a: Any, b: Any, lower: bool = False) -> Var:
    """The solution x of ``a @ x = b`` for triangular ``a``, as SciPy's
    ``solve_triangular`` (only the ``lower`` or upper triangle of ``a`` is read).

    Example:
        >>> a = rt.matrix("a", shape=(3, 3))
        >>> rt.linalg.solve_triangular(a, rt.matrix("b"), lower=True).type
        TensorType(dtype='float64', shape=(3, None))
    """
    a, b = as_input("solve_triangular", a), as_input("solve_triangular", b, 1)
    return SolveTriangular(lower)(a, b)
