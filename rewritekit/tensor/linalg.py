"""Linear algebra, the ``rt.linalg`` namespace, with NumPy's (``np.linalg``,
``scipy.linalg``) names, outputs and return conventions:

- solves and factorizations of square matrices: ``cholesky solve solve_triangular inv det
  slogdet`` (``rewritekit.tensor.lapack``);
- decompositions: ``svd eigh eigvalsh qr pinv expm`` (``rewritekit.tensor.decompositions``,
  with their gradients' caveats);
- built here from those Ops, so that their gradients and batching come with them:
  ``lstsq norm matrix_power kron``;
- ``trace`` and ``diag`` (``rewritekit.tensor.diagonals``).

Dtypes: the LAPACK functions keep float32 and float64 and compute bool and integer inputs
in float64; float16 and complex inputs are rejected. ``norm`` computes non-float inputs in
float64; ``matrix_power`` and ``kron`` keep NumPy's dtypes (integers stay integers).

Shapes: every function takes a matrix or a stack of them (``(..., m, n)``), and ``lstsq``
too (NumPy's takes a single matrix).

Example:
    >>> a = rt.matrix("a", shape=(3, 3))
    >>> rt.linalg.solve(a, rt.vector("b")).type
    TensorType(dtype='float64', shape=(3,))
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from rewritekit.errors import GraphTypeError, ShapeError
from rewritekit.ir import TensorType, Var
from rewritekit.tensor.arrangement import flip
from rewritekit.tensor.assembly import result_type, vecdot
from rewritekit.tensor.axes import axis_index, is_int, shape_str
from rewritekit.tensor.basic import as_tensor
from rewritekit.tensor.complex_parts import conj
from rewritekit.tensor.contractions import matmul
from rewritekit.tensor.creation import arange, eye, zeros
from rewritekit.tensor.decompositions import (  # noqa: F401 (the Ops, for rt.linalg.Svd)
    Eigh,
    Expm,
    Pinv,
    Qr,
    Svd,
    eigh,
    eigvalsh,
    expm,
    pinv,
    qr,
    svd,
)
from rewritekit.tensor.diagonals import AllocDiag, ExtractDiag, Trace, diag, trace  # noqa: F401

# rt.abs, named apart from jnp's `absolute`: docs' coverage table counts rt.linalg's names
from rewritekit.tensor.elemwise import abs as magnitude
from rewritekit.tensor.elemwise import (
    cast,
    equal,
    greater,
    maximum,
    not_equal,
    power,
    sqrt,
    where,
)
from rewritekit.tensor.lapack import (  # noqa: F401 (the Ops, for rt.linalg.Cholesky)
    Cholesky,
    Det,
    Inv,
    LapackOp,
    Slogdet,
    Solve,
    SolveTriangular,
    as_input,
    check_square,
    cholesky,
    det,
    inv,
    lapack_dtype,
    slogdet,
    solve,
    solve_triangular,
)
from rewritekit.tensor.reduction import max as reduce_max
from rewritekit.tensor.reduction import min as reduce_min
from rewritekit.tensor.reduction import sum as reduce_sum
from rewritekit.tensor.shapes import (
    broadcast_to,
    concatenate,
    expand_dims,
    flatten,
    moveaxis,
    reshape,
    shape,
    shape_i,
    squeeze,
)

__all__ = [
    "block_diag",
    "cho_factor",
    "cho_solve",
    "cholesky",
    "det",
    "diag",
    "eigh",
    "eigvalsh",
    "expm",
    "inv",
    "kron",
    "lstsq",
    "matrix_dot",
    "matrix_norm",
    "matrix_power",
    "matrix_transpose",
    "multi_dot",
    "norm",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "solve_triangular",
    "svd",
    "toeplitz",
    "trace",
    "triangular_solve",
    "vecdot",
    "vector_norm",
]


# --- lstsq -------------------------------------------------------------------------------


def lstsq(a: Any, b: Any, rcond: float | None = None) -> tuple[Var, Var, Var, Var]:
    """The least-squares solution of ``a @ x = b``: ``(x, residuals, rank, s)`` as
    ``np.linalg.lstsq``, x of minimal norm; singular values at most ``rcond`` times the
    largest count as zero (None: max(m, n) * eps; negative: eps).

    Differences from NumPy (JAX's ``lstsq`` makes the same choice): ``residuals``, the
    squared norms of the columns of ``b - a @ x`` (shape (k,), (1,) for a 1-d ``b``), are
    always computed, where NumPy returns an empty array unless ``rank == n < m``; ``rank``
    is an int32 tensor; ``a`` may be a stack (``b`` as in ``solve``: a vector only when
    1-d). x is ``pinv(a) @ b``, so its gradient is ``pinv``'s; s and rank cost a second SVD
    when used.

    Raises:
        ShapeError: ``a`` is not (a stack of) matrices, or ``b``'s length does not match.

    Example:
        >>> x, res, rank, s = rt.linalg.lstsq(rt.matrix("a", shape=(5, 3)), rt.vector("b"))
        >>> x.type, res.type
        (TensorType(dtype='float64', shape=(3,)), TensorType(dtype='float64', shape=(1,)))
    """
    a, b = as_input("lstsq", a), as_input("lstsq", b, 1)
    dtype = lapack_dtype("lstsq", a.type, b.type)
    _check_lstsq(a.type, b.type)
    a, b = cast(a, dtype), cast(b, dtype)
    vector = b.ndim == 1
    column = expand_dims(b, -1) if vector else b
    rtol = None if rcond is None else float(np.finfo(dtype).eps if rcond < 0 else rcond)
    x = pinv(a, rtol=rtol) @ column
    residuals = reduce_sum((column - a @ x) ** 2, axis=-2)
    s = svd(a, compute_uv=False)
    if rtol is None:
        rows, cols = shape_i(a, a.ndim - 2), shape_i(a, a.ndim - 1)
        cutoff = cast(maximum(rows, cols), dtype) * float(np.finfo(dtype).eps)
    else:
        cutoff = rtol
    large = greater(s, cutoff * reduce_max(s, axis=-1, keepdims=True))
    rank = cast(reduce_sum(large, axis=-1), "int32")  # LAPACK's int, as NumPy returns it
    return squeeze(x, -1) if vector else x, residuals, rank, s


def _check_lstsq(a: TensorType, b: TensorType) -> None:
    if a.ndim < 2:
        raise ShapeError(f"lstsq: input 0 (a) must be at least 2-d, got a {a.ndim}-d input")
    if b.ndim == 0:
        raise ShapeError("lstsq: input 1 (b) must be at least 1-d, got a 0-d input")
    m, rows = a.shape[-2], b.shape[0] if b.ndim == 1 else b.shape[-2]
    if m is not None and rows is not None and m != rows:
        axis = "its only axis" if b.ndim == 1 else "its second-to-last axis"
        raise ShapeError(
            f"lstsq: a has shape {shape_str(a.shape)} but b has shape {shape_str(b.shape)}: "
            f"{axis} must have length {m}"
        )


# --- matrix_power and kron ---------------------------------------------------------------


def matrix_power(a: Any, n: int) -> Var:
    """``a`` (each matrix of a stack) to the integer power ``n``, as
    ``np.linalg.matrix_power``: by repeated squaring (NumPy's order of products), the
    inverse first for negative ``n``, the identity (of ``a``'s dtype) for 0.

    Raises:
        GraphTypeError: ``n`` is not an int.
        ShapeError: ``a`` is not (a stack of) square matrices.

    Example:
        >>> rt.linalg.matrix_power(rt.matrix("a", dtype="int64"), 3).dtype
        'int64'
    """
    a = as_input("matrix_power", a)
    if not is_int(n):
        raise GraphTypeError(f"matrix_power: the exponent n must be an int, got {n!r}")
    check_square("matrix_power", a.type)
    n = int(n)
    if n == 0:
        return broadcast_to(eye(shape_i(a, a.ndim - 1), dtype=a.dtype), shape(a))
    if n < 0:
        a, n = inv(a), -n
    if n <= 3:
        result = a
        for _ in range(n - 1):
            result = result @ a
        return result
    square, result = None, None
    while n > 0:
        square = a if square is None else square @ square
        n, bit = divmod(n, 2)
        if bit:
            result = square if result is None else result @ square
    return result


def kron(a: Any, b: Any) -> Var:
    """The Kronecker product of ``a`` and ``b``, as ``np.kron``: the shorter shape is padded
    with leading 1s, and block ``i`` of the result is ``a[i] * b``; its shape is the
    product of the two shapes.

    Example:
        >>> rt.linalg.kron(rt.matrix("a", shape=(2, 3)), rt.vector("b", shape=(4,))).type
        TensorType(dtype='float64', shape=(2, 12))
    """
    a, b = as_input("kron", a), as_input("kron", b, 1)
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    nd = max(a.ndim, b.ndim)
    a = expand_dims(a, tuple(range(nd - a.ndim))) if a.ndim < nd else a
    b = expand_dims(b, tuple(range(nd - b.ndim))) if b.ndim < nd else b
    product = expand_dims(a, tuple(range(1, 2 * nd, 2))) * expand_dims(
        b, tuple(range(0, 2 * nd, 2))
    )
    lengths = [_length(a, i) * _length(b, i) for i in range(nd)]
    return reshape(product, tuple(lengths))


def _length(x: Var, axis: int) -> Any:
    """The static length of ``x``'s ``axis``, else its run-time one."""
    known = x.type.shape[axis]
    return known if known is not None else shape_i(x, axis)


# --- norm --------------------------------------------------------------------------------


def _sqrt(x: Var) -> Var:
    """sqrt(x) for x >= 0, with the subgradient 0 at 0 (rather than inf * 0 = NaN)."""
    zero = equal(x, 0)
    return where(zero, 0, sqrt(where(zero, 1, x)))


def _root(x: Var, p: float) -> Var:
    """x ** (1 / p) for x >= 0, with the subgradient 0 at 0 for p > 1."""
    if p <= 0:
        return power(x, 1 / p)
    zero = equal(x, 0)
    return where(zero, 0, power(where(zero, 1, x), 1 / p))


def _squares(x: Var) -> Var:
    return magnitude(x) * magnitude(x) if x.type.kind == "c" else x * x


def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Var:
    """A vector or matrix norm, as ``np.linalg.norm``.

    ``axis`` None: a 1-d ``x`` is a vector, a 2-d one a matrix, and with ``ord`` None any
    ``x`` is flattened to a vector; an int: vectors along that axis; a pair: matrices in
    those axes. Vector orders: None or 2 (Euclidean), inf (max |x|), -inf (min |x|), 0
    (count of nonzeros), other p (sum |x|^p)^(1/p). Matrix orders: None or "fro"
    (Frobenius), "nuc" (sum of singular values), 2 and -2 (largest and smallest singular
    value), 1 and -1 (max and min column sum of |x|), inf and -inf (the same over rows).

    Gradients: the Euclidean and Frobenius norms and p-norms (p > 1) get the subgradient 0
    at x = 0 (JAX gives NaN); ``max``/``min`` orders split ties; the singular-value orders
    are differentiable where the singular value taken (all of them, for "nuc") is simple
    and nonzero, a subgradient elsewhere.

    Raises:
        GraphTypeError: an invalid ``ord`` or ``axis``.
        ShapeError: ``axis`` out of range or repeated, or not 1 or 2 axes to take the norm
            over.

    Example:
        >>> rt.linalg.norm(rt.tensor("x", shape=(4, 2, 3)), axis=(1, 2), keepdims=True).type
        TensorType(dtype='float64', shape=(4, 1, 1))
    """
    x = as_input("norm", x)
    if x.type.kind not in "fc":
        x = cast(x, "float64")
    if axis is None:
        nd = x.ndim
        if ord is None or (ord in ("f", "fro") and nd == 2) or (ord == 2 and nd == 1):
            result = _sqrt(reduce_sum(_squares(x)))
            return reshape(result, (1,) * nd) if keepdims else result
        axis = tuple(range(nd))
    elif is_int(axis):
        axis = (axis,)
    elif not (isinstance(axis, tuple) and all(is_int(i) for i in axis)):
        raise GraphTypeError(f"norm: axis must be None, an int or a tuple of ints, got {axis!r}")
    axes = tuple(axis_index("norm", i, x.ndim, x) for i in axis)
    if len(axes) == 1:
        return _vector_norm(x, ord, axes[0], keepdims)
    if len(axes) == 2:
        if axes[0] == axes[1]:
            raise ShapeError(
                f"norm: duplicate axes {axis} (input of shape {shape_str(x.type.shape)})"
            )
        result = _matrix_norm(x, ord, *axes)
        return result if keepdims else squeeze(result, axes)
    raise ShapeError(
        f"norm: a norm is over 1 axis (a vector) or 2 (a matrix), got axis={axis} for a "
        f"{x.ndim}-d input"
    )


def _vector_norm(x: Var, ord: Any, axis: int, keepdims: bool) -> Var:
    if isinstance(ord, str):
        raise GraphTypeError(f"norm: invalid norm order {ord!r} for vectors")
    if ord is not None and not isinstance(ord, int | float | np.number):
        raise GraphTypeError(f"norm: ord must be a number, 'fro', 'nuc' or None, got {ord!r}")
    if ord == np.inf:
        return reduce_max(magnitude(x), axis=axis, keepdims=keepdims)
    if ord == -np.inf:
        return reduce_min(magnitude(x), axis=axis, keepdims=keepdims)
    if ord == 0:
        real = magnitude(x).dtype
        return reduce_sum(cast(not_equal(x, 0), real), axis=axis, keepdims=keepdims)
    if ord == 1:
        return reduce_sum(magnitude(x), axis=axis, keepdims=keepdims)
    if ord is None or ord == 2:
        return _sqrt(reduce_sum(_squares(x), axis=axis, keepdims=keepdims))
    return _root(reduce_sum(magnitude(x) ** float(ord), axis=axis, keepdims=keepdims), float(ord))


def _matrix_norm(x: Var, ord: Any, rows: int, cols: int) -> Var:
    """The norm over axes ``rows`` and ``cols``, which stay (length 1)."""
    if ord in (2, -2, "nuc"):
        s = svd(moveaxis(x, (rows, cols), (-2, -1)), compute_uv=False)
        reduce = reduce_sum if ord == "nuc" else reduce_max if ord == 2 else reduce_min
        return expand_dims(reduce(s, axis=-1), tuple(sorted((rows, cols))))
    if ord in (1, -1, np.inf, -np.inf):
        summed, across = (rows, cols) if ord in (1, -1) else (cols, rows)
        reduce = reduce_max if ord in (1, np.inf) else reduce_min
        return reduce(
            reduce_sum(magnitude(x), axis=summed, keepdims=True), axis=across, keepdims=True
        )
    if ord is None or ord in ("fro", "f"):
        return _sqrt(reduce_sum(_squares(x), axis=(rows, cols), keepdims=True))
    raise GraphTypeError(f"norm: invalid norm order {ord!r} for matrices")


# --- NumPy's, SciPy's and jax.lax's other spellings ---------------------------------------


def matrix_transpose(x: Any) -> Var:
    """``x`` with its last two axes swapped (the array API's ``matrix_transpose``)."""
    x = as_input("matrix_transpose", x)
    if x.ndim < 2:
        raise ShapeError(f"matrix_transpose: needs 2 or more dimensions, got {x.type}")
    return moveaxis(x, -1, -2)


def matrix_norm(x: Any, keepdims: bool = False, ord: Any = "fro") -> Var:
    """The norm of the matrices in the last two axes (``np.linalg.matrix_norm``)."""
    return norm(x, ord=ord, axis=(-2, -1), keepdims=keepdims)


def vector_norm(x: Any, axis: Any = None, keepdims: bool = False, ord: Any = 2) -> Var:
    """The vector norm over ``axis`` (None: all of ``x`` flattened; a tuple: those axes
    taken as one vector), as ``np.linalg.vector_norm``."""
    x = as_input("vector_norm", x)
    if axis is None:
        axis = tuple(range(x.ndim))
    axes = (axis,) if is_int(axis) else tuple(axis)
    axes = tuple(axis_index("vector_norm", a, x.ndim, x) for a in axes)
    if len(axes) == 1:
        return norm(x, ord=ord, axis=axes[0], keepdims=keepdims)
    rest = [a for a in range(x.ndim) if a not in axes]
    moved = moveaxis(x, axes, tuple(range(x.ndim - len(axes), x.ndim)))
    lengths = [x.type.shape[a] if x.type.shape[a] is not None else shape_i(x, a) for a in rest]
    flat = reshape(moved, (*lengths, -1))
    result = norm(flat, ord=ord, axis=-1)
    return expand_dims(result, axes) if keepdims else result


def multi_dot(arrays: Any) -> Var:
    """The product of the matrices in ``arrays``, left to right (a 1-d first one is a row,
    a 1-d last one a column), as ``np.linalg.multi_dot``."""
    xs = [as_input("multi_dot", a) for a in arrays]
    if len(xs) < 2:
        raise ShapeError(f"multi_dot: needs at least 2 arrays, got {len(xs)}")
    return functools.reduce(matmul, xs)


def matrix_dot(*args: Any) -> Var:
    """PyTensor's name for ``multi_dot`` of its arguments."""
    return multi_dot(args)


def block_diag(*arrs: Any) -> Var:
    """The block-diagonal matrix of the given blocks (0-d and 1-d blocks are 1-row
    matrices), as ``scipy.linalg.block_diag``, with the result dtype of all blocks."""
    if not arrs:
        return zeros((1, 0))
    blocks = []
    for position, a in enumerate(arrs):
        x = as_tensor(a) if not isinstance(a, Var) else a
        if x.ndim > 2:
            raise ShapeError(f"block_diag: block {position} has {x.ndim} dimensions (at most 2)")
        blocks.append(reshape(x, (1, -1)) if x.ndim < 2 else x)
    dtype = result_type(*blocks)
    lengths = [
        [b.type.shape[a] if b.type.shape[a] is not None else shape_i(b, a) for a in (0, 1)]
        for b in blocks
    ]
    rows = []
    for i, b in enumerate(blocks):
        pieces = [
            cast(b, dtype) if i == j else zeros((lengths[i][0], lengths[j][1]), dtype=dtype)
            for j in range(len(blocks))
        ]
        rows.append(concatenate(pieces, axis=1))
    return concatenate(rows, axis=0)


def cho_factor(a: Any, lower: bool = False) -> tuple[Var, bool]:
    """``(c, lower)``: the Cholesky factor of ``a`` (upper unless ``lower``) and the flag, as
    ``scipy.linalg.cho_factor`` (the other triangle of ``c`` is zero here)."""
    factor = cholesky(a)
    return (factor if lower else matrix_transpose(factor)), bool(lower)


def cho_solve(c_and_lower: tuple[Any, bool], b: Any) -> Var:
    """The solution x of ``a x = b`` from ``cho_factor(a)``'s ``(c, lower)``: two triangular
    solves (``scipy.linalg.cho_solve``)."""
    c, lower = c_and_lower
    c = as_input("cho_solve", c)
    ct = matrix_transpose(c)
    if lower:
        return solve_triangular(ct, solve_triangular(c, b, lower=True), lower=False)
    return solve_triangular(c, solve_triangular(ct, b, lower=True), lower=False)


def toeplitz(c: Any, r: Any = None) -> Var:
    """The Toeplitz matrix with first column ``c`` and first row ``r`` (``r[0]`` is
    ignored; ``r`` defaults to ``c``, conjugated), as ``scipy.linalg.toeplitz`` (inputs are
    flattened)."""
    c = flatten(as_input("toeplitz", c))
    r = conj(c) if r is None else flatten(as_input("toeplitz", r))
    n_r = r.type.shape[0] if r.type.shape[0] is not None else shape_i(r, 0)
    dtype = result_type(c, r)
    values = concatenate([cast(flip(r[1:]), dtype), cast(c, dtype)])
    i = expand_dims(arange(c.type.shape[0] if c.type.shape[0] is not None else shape_i(c, 0)), 1)
    j = expand_dims(arange(n_r), 0)
    return values[(n_r - 1) + i - j]


def triangular_solve(
    a: Any,
    b: Any,
    left_side: bool = False,
    lower: bool = False,
    transpose_a: bool = False,
    conjugate_a: bool = False,
    unit_diagonal: bool = False,
) -> Var:
    """``jax.lax.linalg.triangular_solve``: x with ``op(a) @ x = b`` (``left_side``) or
    ``x @ op(a) = b``, where ``op`` transposes and/or conjugates the triangular ``a``
    (``lower`` says which triangle it uses; ``unit_diagonal`` takes its diagonal as ones)."""
    a = as_input("triangular_solve", a)
    b = as_input("triangular_solve", b)
    if unit_diagonal:
        n = a.type.shape[-1] if a.type.shape[-1] is not None else shape_i(a, a.ndim - 1)
        identity = eye(n, dtype=a.dtype)
        a = a * (1 - identity) + identity
    if conjugate_a:
        a = conj(a)
    if transpose_a:
        a, lower = matrix_transpose(a), not lower
    if left_side:
        return solve_triangular(a, b, lower=lower)
    solved = solve_triangular(matrix_transpose(a), matrix_transpose(b), lower=not lower)
    return matrix_transpose(solved)
