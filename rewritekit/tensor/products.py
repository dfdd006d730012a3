"""Products: ``dot``, ``matmul``, ``outer``, ``tensordot`` and ``einsum``.

Every product follows NumPy's shape rules and NumPy's result dtype (``np.result_type`` of
the operands: bool and integer products stay bool and integer, as ``np.dot`` keeps them).
Non-Var arguments become constants with NumPy's default dtypes, as ``np.dot`` converts them
with ``np.asarray`` (so ``rt.dot(x32, 2.0)`` is float64, like ``np.dot``).

Contracted lengths are checked statically where both are known: a mismatch raises a
``ShapeError`` at construction naming the function, the axes and the shapes. ``einsum`` is
normalized to explicit form with letters renamed in order of first appearance, so
``rt.einsum("ij,jk", x, y) is rt.einsum("ab,bc->ac", x, y)``.
"""

from __future__ import annotations

import math
import string
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rewritekit.errors import GraphTypeError, ShapeError
from rewritekit.ir import Op, TensorType, Var, as_var, broadcast_shapes, result_dtype, short_name
from rewritekit.ir.patterns import pattern_function

__all__ = ["dot", "einsum", "matmul", "outer", "tensordot"]

Length = int | None


def _operands(name: str, *args: Any) -> list[Var]:
    return [as_var(a, context=f"{name}: input {i}") for i, a in enumerate(args)]


def _shape_str(shape: Sequence[Length]) -> str:
    entries = ["?" if d is None else str(d) for d in shape]
    return "(" + ", ".join(entries) + ("," if len(entries) == 1 else "") + ")"


def _contracted(name: str, a: TensorType, axis_a: int, b: TensorType, axis_b: int) -> None:
    """Raise unless axis ``axis_a`` of ``a`` and ``axis_b`` of ``b`` can have one length."""
    n, m = a.shape[axis_a], b.shape[axis_b]
    if n is not None and m is not None and n != m:
        raise ShapeError(
            f"{name}: shapes {_shape_str(a.shape)} and {_shape_str(b.shape)} are not aligned: "
            f"axis {axis_a} of input 0 has length {n} but axis {axis_b} of input 1 has "
            f"length {m}"
        )


def _grad_as(g: Var, x: Var) -> Var | None:
    """``g`` as the gradient of ``x`` when no broadcasting can have happened: cast to
    ``x``'s dtype, or None for an integer or bool ``x`` (no gradient)."""
    from rewritekit.tensor.elemwise import cast

    if x.type.kind not in "fc":
        return None
    return g if g.dtype == x.dtype else cast(g, x.dtype)


def _tensordot_vjp(
    g: Var, a: Var, b: Var, axes_a: Sequence[int], axes_b: Sequence[int]
) -> list[Var | None]:
    """The gradients of ``tensordot(a, b, (axes_a, axes_b))`` for the cotangent ``g``.

    ``g``'s axes are ``a``'s free axes then ``b``'s. Each operand's gradient contracts
    ``g`` with the other operand over that operand's free axes, then puts the axes back in
    the operand's order.
    """
    from rewritekit.tensor.shapes import transpose

    free_a = [i for i in range(a.ndim) if i not in axes_a]
    free_b = [i for i in range(b.ndim) if i not in axes_b]
    by_b = sorted(zip(axes_b, axes_a, strict=True))
    by_a = sorted(zip(axes_a, axes_b, strict=True))
    # ga's axes: a's free axes, then a's contracted ones in the order of their b partners
    ga = tensordot(g, b, axes=(list(range(len(free_a), g.ndim)), free_b))
    ga_axes = free_a + [i for _, i in by_b]
    # gb's axes: b's contracted axes in the order of their a partners, then b's free axes
    gb = tensordot(a, g, axes=(free_a, list(range(len(free_a)))))
    gb_axes = [j for _, j in by_a] + free_b
    return [
        _grad_as(transpose(ga, [ga_axes.index(i) for i in range(a.ndim)]), a),
        _grad_as(transpose(gb, [gb_axes.index(j) for j in range(b.ndim)]), b),
    ]


class Product(Op):
    """Shared by the products: the output dtype is NumPy's promotion of the inputs."""

    abstract = True

    def output_dtype(self, *types: TensorType) -> str:
        """``np.result_type`` of the inputs' dtypes."""
        return result_dtype(*(t.dtype for t in types))


# --- dot, matmul, outer ------------------------------------------------------------------


class Dot(Product):
    """NumPy's ``dot``: a scalar operand multiplies; otherwise the sum over the last axis of
    ``a`` and the second-to-last axis of ``b`` (its only axis if ``b`` is 1-d).

    ``dot(a, b)[i, j, k, m] = sum(a[i, j, :] * b[k, :, m])``.
    """

    def infer_types(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        a, b = input_types
        dtype = self.output_dtype(a, b)
        if a.ndim == 0 or b.ndim == 0:
            return (TensorType(dtype, b.shape if a.ndim == 0 else a.shape),)
        axis_b = b.ndim - 2 if b.ndim >= 2 else 0
        _contracted(self.name, a, a.ndim - 1, b, axis_b)
        shape = a.shape[:-1] + b.shape[:axis_b] + b.shape[axis_b + 1 :]
        return (TensorType(dtype, shape),)

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        from rewritekit.tensor.gradient import input_grad

        (a, b), (g,) = inputs, cotangents
        if a.ndim == 0 or b.ndim == 0:
            # a * b: a scalar operand collects sum(g * other)
            return [
                input_grad(g * b, a) if a.ndim == 0 else _grad_as(g * b, a),
                input_grad(g * a, b) if b.ndim == 0 else _grad_as(g * a, b),
            ]
        # tensordot over a's last axis and b's only or second-to-last axis
        return _tensordot_vjp(g, a, b, (a.ndim - 1,), (b.ndim - 2 if b.ndim >= 2 else 0,))


@pattern_function(Dot, inputs=("a", "b"))
def dot(a: Any, b: Any) -> Var:
    """NumPy's ``dot`` product of two tensors.

    Scalars multiply, two vectors give their inner product, two matrices their matrix
    product, and N-d ``a`` with M-d ``b`` sum over the last axis of ``a`` and the
    second-to-last of ``b`` (``b``'s only axis when it is 1-d).

    Raises:
        ShapeError: the contracted lengths are known and differ.

    Example:
        >>> rt.dot(rt.matrix("a", shape=(2, 3)), rt.vector("v")).type
        TensorType(dtype='float64', shape=(2,))
    """
    x, y = _operands("dot", a, b)
    return Dot()(x, y)


class MatMul(Product):
    """NumPy's ``matmul`` (the ``@`` operator): matrix products over the last two axes,
    with the leading (batch) axes broadcast. A 1-d ``a`` is a row vector and a 1-d ``b``
    a column vector; the added axis is removed from the result. Scalars are rejected."""

    name = "matmul"

    def infer_types(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        a, b = input_types
        for position, t in enumerate((a, b)):
            if t.ndim == 0:
                raise ShapeError(
                    f"matmul: input {position} is 0-d; matmul needs operands of at least one "
                    "dimension (use multiply to scale by a scalar)"
                )
        a2 = TensorType(a.dtype, a.shape if a.ndim >= 2 else (1, *a.shape))
        b2 = TensorType(b.dtype, b.shape if b.ndim >= 2 else (*b.shape, 1))
        if a2.shape[-1] is not None and b2.shape[-2] is not None and a2.shape[-1] != b2.shape[-2]:
            raise ShapeError(
                f"matmul: shapes {_shape_str(a.shape)} and {_shape_str(b.shape)} are not "
                f"aligned: the last axis of input 0 has length {a2.shape[-1]} but the "
                f"{'only' if b.ndim == 1 else 'second-to-last'} axis of input 1 has length "
                f"{b2.shape[-2]}"
            )
        batch = broadcast_shapes(a2.shape[:-2], b2.shape[:-2], op="matmul")
        rows = a2.shape[-2:-1] if a.ndim >= 2 else ()
        cols = b2.shape[-1:] if b.ndim >= 2 else ()
        return (TensorType(self.output_dtype(a, b), (*batch, *rows, *cols)),)

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        from rewritekit.tensor.gradient import input_grad
        from rewritekit.tensor.shapes import expand_dims, squeeze, swapaxes

        # d(a @ b) = da @ b + a @ db: ga = g @ b.T, gb = a.T @ g, summed over the batch
        # axes that broadcast. 1-d operands become a row (a) or a column (b) first.
        (a, b), (g,) = inputs, cotangents
        a2 = a if a.ndim >= 2 else expand_dims(a, 0)
        b2 = b if b.ndim >= 2 else expand_dims(b, 1)
        g2 = g if b.ndim >= 2 else expand_dims(g, -1)
        g2 = g2 if a.ndim >= 2 else expand_dims(g2, -2)
        ga = matmul(g2, swapaxes(b2, -1, -2))
        gb = matmul(swapaxes(a2, -1, -2), g2)
        return [
            input_grad(ga if a.ndim >= 2 else squeeze(ga, -2), a),
            input_grad(gb if b.ndim >= 2 else squeeze(gb, -1), b),
        ]


@pattern_function(MatMul, inputs=("a", "b"))
def matmul(a: Any, b: Any) -> Var:
    """NumPy's ``matmul``, also ``a @ b``: batched matrix products.

    Raises:
        ShapeError: an operand is 0-d, or the contracted lengths are known and differ.
        BroadcastError: the batch axes cannot be broadcast.

    Example:
        >>> (rt.tensor("a", shape=(5, 2, 3)) @ rt.matrix("b", shape=(3, 4))).type
        TensorType(dtype='float64', shape=(5, 2, 4))
    """
    x, y = _operands("matmul", a, b)
    return MatMul()(x, y)


def _size(shape: Sequence[Length]) -> Length:
    if 0 in shape:
        return 0
    if None in shape:
        return None
    return math.prod(shape)  # type: ignore[arg-type]


class Outer(Product):
    """NumPy's ``outer``: ``outer(a, b)[i, j] = a.ravel()[i] * b.ravel()[j]``."""

    def infer_types(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        a, b = input_types
        return (TensorType(self.output_dtype(a, b), (_size(a.shape), _size(b.shape))),)

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        from rewritekit.tensor.shapes import flatten, reshape, shape

        # g[i, j] multiplied a[i] b[j]: ga = g @ b, gb = a @ g, in the operands' shapes
        (a, b), (g,) = inputs, cotangents
        return [
            _grad_as(reshape(dot(g, flatten(b)), shape(a)), a),
            _grad_as(reshape(dot(flatten(a), g), shape(b)), b),
        ]


@pattern_function(Outer, inputs=("a", "b"))
def outer(a: Any, b: Any) -> Var:
    """The outer product of ``a`` and ``b``, flattened first (NumPy's ``outer``).

    Example:
        >>> rt.outer(rt.vector("a", shape=(2,)), rt.matrix("b", shape=(3, 4))).type
        TensorType(dtype='float64', shape=(2, 12))
    """
    x, y = _operands("outer", a, b)
    return Outer()(x, y)


# --- tensordot ----------------------------------------------------------------------------


def _is_int(value: object) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


class Tensordot(Product):
    """NumPy's ``tensordot``: the sum over the axis pairs ``axes[0][i]`` of ``a`` and
    ``axes[1][i]`` of ``b``; the result has ``a``'s free axes, then ``b``'s.

    ``axes`` is two tuples of non-negative ints, paired and sorted by ``a``'s axis (the
    order of the pairs does not change the result).
    """

    __props__ = ("axes",)

    axes: tuple[tuple[int, ...], tuple[int, ...]]

    def __init__(self, axes: tuple[Sequence[int], Sequence[int]]) -> None:
        try:
            left, right = (tuple(side) for side in axes)
        except (TypeError, ValueError):
            raise GraphTypeError(
                f"tensordot: axes must be a pair of sequences of ints, got {axes!r}"
            ) from None
        valid = all(_is_int(a) and a >= 0 for a in (*left, *right))
        if not valid or len(left) != len(right) or len(set(left)) != len(left):
            raise GraphTypeError(
                "tensordot: axes must be two equally long tuples of distinct non-negative "
                f"ints (rt.tensordot normalizes them), got {axes!r}"
            )
        pairs = sorted(zip((int(a) for a in left), (int(b) for b in right), strict=True))
        super().__init__((tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)))

    def infer_types(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        a, b = input_types
        for position, (t, side) in enumerate(zip((a, b), self.axes, strict=True)):
            for axis in side:
                if axis >= t.ndim:
                    raise ShapeError(
                        f"tensordot: axis {axis} is out of range for the {t.ndim}-d input "
                        f"{position}"
                    )
            if len(set(side)) != len(side):
                raise ShapeError(f"tensordot: axes {side} of input {position} repeat an axis")
        for axis_a, axis_b in zip(*self.axes, strict=True):
            _contracted(self.name, a, axis_a, b, axis_b)
        free_a = [n for i, n in enumerate(a.shape) if i not in self.axes[0]]
        free_b = [n for i, n in enumerate(b.shape) if i not in self.axes[1]]
        return (TensorType(self.output_dtype(a, b), (*free_a, *free_b)),)

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        # bilinear: each operand's gradient contracts g with the other operand
        (a, b), (g,) = inputs, cotangents
        return _tensordot_vjp(g, a, b, *self.axes)


def _tensordot_side(side: Any, x: Var, position: int) -> tuple[int, ...]:
    axes = [side] if _is_int(side) else side
    if not isinstance(axes, (list, tuple)) or not all(_is_int(a) for a in axes):
        raise GraphTypeError(
            f"tensordot: axes for input {position} must be an int or a sequence of ints, "
            f"got {side!r}"
        )
    out = []
    for axis in axes:
        if not -x.ndim <= axis < x.ndim:
            raise ShapeError(
                f"tensordot: axis {axis} is out of range for the {x.ndim}-d input {position} "
                f"({short_name(x)})"
            )
        out.append(int(axis) % x.ndim)
    if len(set(out)) != len(out):
        raise ShapeError(
            f"tensordot: axes {tuple(axes)} of input {position} ({short_name(x)}) repeat an axis"
        )
    return tuple(out)


@pattern_function(Tensordot, inputs=("a", "b"))
def tensordot(a: Any, b: Any, axes: Any = 2) -> Var:
    """NumPy's ``tensordot``: the sum of products over the given axes.

    Args:
        a, b: the operands.
        axes: an int ``n`` (the last ``n`` axes of ``a`` with the first ``n`` of ``b``, in
            order) or a pair ``(axes_a, axes_b)`` of ints or equally long sequences of ints
            (negative axes count from the end).

    Raises:
        GraphTypeError: ``axes`` is not an int or a pair of ints/sequences.
        ShapeError: an axis is out of range or repeated, the two sequences differ in length,
            or paired lengths are known and differ.

    Example:
        >>> a, b = rt.tensor("a", shape=(2, 3, 4)), rt.tensor("b", shape=(4, 3, 5))
        >>> rt.tensordot(a, b, axes=([1, 2], [1, 0])).type
        TensorType(dtype='float64', shape=(2, 5))
    """
    x, y = _operands("tensordot", a, b)
    if _is_int(axes):
        if not 0 <= axes <= min(x.ndim, y.ndim):
            raise ShapeError(
                f"tensordot: axes={axes} must be between 0 and the smaller rank "
                f"{min(x.ndim, y.ndim)} of the inputs ({short_name(x)}, {short_name(y)})"
            )
        pair = (tuple(range(x.ndim - axes, x.ndim)), tuple(range(axes)))
    elif isinstance(axes, (list, tuple)) and len(axes) == 2:
        pair = (_tensordot_side(axes[0], x, 0), _tensordot_side(axes[1], y, 1))
        if len(pair[0]) != len(pair[1]):
            raise ShapeError(
                f"tensordot: axes {axes!r} pair {len(pair[0])} axes of input 0 with "
                f"{len(pair[1])} of input 1; give as many of each"
            )
    else:
        raise GraphTypeError(f"tensordot: axes must be an int or a pair of sequences, got {axes!r}")
    return Tensordot(pair)(x, y)


# --- einsum -------------------------------------------------------------------------------

ELLIPSIS = "..."


@dataclass(frozen=True)
class EinsumSpec:
    """Parsed einsum subscripts: one term per operand and the output term.

    Each term is a tuple of single letters and ``"..."`` (at most one).
    """

    inputs: tuple[tuple[str, ...], ...]
    output: tuple[str, ...]

    def __str__(self) -> str:
        return ",".join("".join(t) for t in self.inputs) + "->" + "".join(self.output)

    def canonical(self) -> str:
        """The subscripts with letters renamed ``a, b, ...`` in order of first appearance."""
        names: dict[str, str] = {}
        for term in (*self.inputs, self.output):
            for token in term:
                if token != ELLIPSIS and token not in names:
                    names[token] = string.ascii_letters[len(names)]
        rename = lambda term: tuple(names.get(t, t) for t in term)  # noqa: E731
        return str(EinsumSpec(tuple(rename(t) for t in self.inputs), rename(self.output)))


def _einsum_term(term: str, subscripts: str) -> tuple[str, ...]:
    tokens: list[str] = []
    rest = term
    while rest:
        if rest.startswith(ELLIPSIS):
            if ELLIPSIS in tokens:
                raise ShapeError(f"einsum: term {term!r} of {subscripts!r} has two ellipses")
            tokens.append(ELLIPSIS)
            rest = rest[3:]
            continue
        char, rest = rest[0], rest[1:]
        if char not in string.ascii_letters:
            raise ShapeError(
                f"einsum: invalid character {char!r} in subscripts {subscripts!r} (use "
                "letters, ',', '->' and '...')"
            )
        tokens.append(char)
    return tuple(tokens)


def parse_einsum(subscripts: str, ndims: Sequence[int]) -> EinsumSpec:
    """Parse ``subscripts`` for operands of ranks ``ndims``, making the output explicit.

    In implicit mode (no ``->``) the output is ``...`` (if an operand has one) and then the
    letters used exactly once, in ASCII order, as in NumPy.

    Raises:
        GraphTypeError: ``subscripts`` is not a str.
        ShapeError: the subscripts are malformed, name a different number of operands, or a
            term does not fit its operand's rank.

    Example:
        >>> str(parse_einsum("ij,jk", [2, 2]))
        'ij,jk->ik'
    """
    if not isinstance(subscripts, str):
        raise GraphTypeError(f"einsum: subscripts must be a str, got {subscripts!r}")
    text = subscripts.replace(" ", "")
    if text.count("->") > 1:
        raise ShapeError(f"einsum: subscripts {subscripts!r} have more than one '->'")
    lhs, arrow, rhs = text.partition("->")
    terms = tuple(_einsum_term(t, subscripts) for t in lhs.split(","))
    if len(terms) != len(ndims):
        raise ShapeError(
            f"einsum: subscripts {subscripts!r} name {len(terms)} operand(s), got "
            f"{len(ndims)} operand(s)"
        )
    for position, (term, ndim) in enumerate(zip(terms, ndims, strict=True)):
        letters = len(term) - (ELLIPSIS in term)
        if letters > ndim or (ELLIPSIS not in term and letters != ndim):
            raise ShapeError(
                f"einsum: term {''.join(term)!r} of {subscripts!r} names {letters} axes but "
                f"operand {position} is {ndim}-d (add '...' to cover leading axes)"
            )
    used = [t for term in terms for t in term if t != ELLIPSIS]
    ellipsis = any(ELLIPSIS in term for term in terms)
    if not arrow:
        once = sorted(t for t in set(used) if used.count(t) == 1)
        return EinsumSpec(terms, ((ELLIPSIS,) if ellipsis else ()) + tuple(once))
    output = _einsum_term(rhs, subscripts)
    for token in output:
        if token != ELLIPSIS and token not in used:
            raise ShapeError(
                f"einsum: output letter {token!r} of {subscripts!r} is in no input term"
            )
        if output.count(token) > 1:
            raise ShapeError(f"einsum: output letter {token!r} repeats in {subscripts!r}")
    ellipsis_dims = max(
        (ndim - len(term) + 1 for term, ndim in zip(terms, ndims, strict=True) if ELLIPSIS in term),
        default=0,
    )
    if ellipsis_dims and ELLIPSIS not in output:
        raise ShapeError(
            f"einsum: the '...' of {subscripts!r} covers {ellipsis_dims} axes but the output "
            "has no '...' to hold them"
        )
    return EinsumSpec(terms, output)


def _merge(n: Length, m: Length) -> Length | bool:
    """One letter's lengths combined as NumPy broadcasts them; False if they conflict."""
    if n is None or n == 1:
        return m if n == 1 or m not in (None, 1) else n
    if m is None or m == 1 or m == n:
        return n
    return False


def _einsum_lengths(spec: EinsumSpec, shapes: Sequence[Sequence[Length]], where: str) -> Any:
    """The length of each letter and the broadcast ellipsis shape, checked."""
    lengths: dict[str, Length] = {}
    first: dict[str, int] = {}
    ellipses = []
    for position, (term, shape) in enumerate(zip(spec.inputs, shapes, strict=True)):
        cut = term.index(ELLIPSIS) if ELLIPSIS in term else len(term)
        span = len(shape) - len(term) + 1 if ELLIPSIS in term else 0
        if ELLIPSIS in term:
            ellipses.append(tuple(shape[cut : cut + span]))
        dims = [*shape[:cut], *shape[cut + span :]]
        own: dict[str, Length] = {}
        for letter, n in zip([t for t in term if t != ELLIPSIS], dims, strict=True):
            known = own.get(letter)
            if letter in own and None not in (known, n) and known != n:
                raise ShapeError(
                    f"einsum: letter {letter!r} repeats in operand {position} with lengths "
                    f"{known} and {n} (shape {_shape_str(shape)}); a diagonal needs equal "
                    f"lengths ({where})"
                )
            own[letter] = n if known is None else known
        for letter, n in own.items():
            if letter not in lengths:
                lengths[letter], first[letter] = n, position
                continue
            merged = _merge(lengths[letter], n)
            if merged is False:
                raise ShapeError(
                    f"einsum: letter {letter!r} has length {lengths[letter]} in operand "
                    f"{first[letter]} but {n} in operand {position} ({where})"
                )
            lengths[letter] = merged
    try:
        ellipsis = broadcast_shapes(*ellipses, op="einsum") if ellipses else ()
    except ValueError:
        shown = " and ".join(_shape_str(e) for e in ellipses)
        raise ShapeError(f"einsum: the '...' axes {shown} cannot be broadcast ({where})") from None
    return lengths, ellipsis


def einsum_type(spec: EinsumSpec, types: Sequence[TensorType], where: str) -> TensorType:
    """The output type of ``spec`` on inputs of ``types`` (``where`` names the call)."""
    lengths, ellipsis = _einsum_lengths(spec, [t.shape for t in types], where)
    shape: list[Length] = []
    for token in spec.output:
        shape.extend(ellipsis if token == ELLIPSIS else (lengths[token],))
    return TensorType(result_dtype(*(t.dtype for t in types)), shape)


class Einsum(Product):
    """Einstein summation (NumPy's ``einsum``) with explicit ``subscripts`` in canonical form
    (letters ``a, b, ...`` in order of first appearance; ``rt.einsum`` normalizes).

    Letters repeated within one operand take a diagonal; letters missing from the output
    are summed; length-1 axes broadcast against the other operands, as in NumPy.
    """

    __props__ = ("subscripts",)

    subscripts: str

    def __init__(self, subscripts: str) -> None:
        if not isinstance(subscripts, str) or "->" not in subscripts:
            raise GraphTypeError(
                f"einsum: the Op needs explicit subscripts 'in,...->out' (rt.einsum "
                f"normalizes them), got {subscripts!r}"
            )
        super().__init__(subscripts)

    def infer_types(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        spec = parse_einsum(self.subscripts, [t.ndim for t in input_types])
        return (einsum_type(spec, input_types, f"subscripts {self.subscripts!r}"),)

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        # linear in each operand: its gradient is the einsum of the other operands and g,
        # with the operand's subscripts as the output (see _einsum_operand_grad)
        ndims = [x.ndim for x in inputs]
        terms, output, spare = _spelled(parse_einsum(self.subscripts, ndims), ndims)
        return [
            _einsum_operand_grad(terms, output, spare, inputs, cotangents[0], position)
            for position in range(len(inputs))
        ]


def _spelled(spec: EinsumSpec, ndims: Sequence[int]) -> tuple[list[str], str, str]:
    """The terms and the output with ``...`` spelled as letters ``spec`` does not use
    (right-aligned, as NumPy broadcasts them), and the letters still unused."""
    used = {t for term in (*spec.inputs, spec.output) for t in term}
    fresh = "".join(c for c in string.ascii_letters if c not in used)
    ranks = [
        n - len(term) + 1 if ELLIPSIS in term else 0
        for term, n in zip(spec.inputs, ndims, strict=True)
    ]
    span = max(ranks, default=0)

    def spell(term: tuple[str, ...], rank: int) -> str:
        return "".join(fresh[span - rank : span] if t == ELLIPSIS else t for t in term)

    terms = [spell(term, rank) for term, rank in zip(spec.inputs, ranks, strict=True)]
    return terms, spell(spec.output, span), fresh[span:]


def _einsum_operand_grad(
    terms: list[str], output: str, spare: str, inputs: Sequence[Var], g: Var, position: int
) -> Var | None:
    """The gradient of operand ``position`` of ``einsum(",".join(terms) + "->" + output)``.

    It is the einsum of the other operands and ``g`` with the operand's letters as output.
    A letter repeated in the operand (a diagonal) is renamed and tied to its first
    occurrence by an identity matrix; a letter no other term has gets a vector of ones
    (``g`` is constant along it). Length-1 axes that broadcast are summed back.
    """
    from rewritekit.tensor.creation import eye, ones
    from rewritekit.tensor.gradient import input_grad
    from rewritekit.tensor.shapes import shape_i

    x = inputs[position]
    if x.type.kind not in "fc":
        return None
    subs = [t for i, t in enumerate(terms) if i != position] + [output]
    operands = [v for i, v in enumerate(inputs) if i != position] + [g]
    unused = iter(spare)
    target: list[str] = []
    for axis, letter in enumerate(terms[position]):
        if letter in target:
            first, letter = target.index(letter), next(unused)
            subs.append(terms[position][first] + letter)
            operands.append(eye(shape_i(x, first), shape_i(x, axis), dtype=g.dtype))
        target.append(letter)
    for axis, letter in enumerate(target):
        if not any(letter in term for term in subs):
            subs.append(letter)
            operands.append(ones((shape_i(x, axis),), dtype=g.dtype))
    grad = einsum(",".join(subs) + "->" + "".join(target), *operands)
    return input_grad(grad, x)


@pattern_function(Einsum, inputs=("operands*",))
def einsum(subscripts: str, *operands: Any) -> Var:
    """Einstein summation over ``operands``, as NumPy's ``einsum``.

    ``subscripts`` names each operand's axes with letters (``"ij,jk->ik"``); a letter in
    several operands is multiplied along, a letter repeated within one operand takes the
    diagonal, letters missing from the output are summed. Without ``->`` the output is
    ``...`` and the letters used once, in ASCII order. ``...`` stands for leading axes that
    broadcast. NumPy's interleaved ``(operand, sublist)`` form is not supported.

    Raises:
        GraphTypeError: ``subscripts`` is not a str.
        ShapeError: malformed subscripts, the wrong number of operands, a term that does
            not fit its operand, or one letter with different known lengths.

    Example:
        >>> a, b = rt.matrix("a", shape=(2, 3)), rt.matrix("b", shape=(3, 4))
        >>> rt.einsum("ij,jk", a, b) is rt.einsum("xy,yz->xz", a, b)
        True
    """
    xs = _operands("einsum", *operands)
    spec = parse_einsum(subscripts, [x.ndim for x in xs])
    shown = ", ".join(short_name(x) for x in xs)
    einsum_type(spec, [x.type for x in xs], f"subscripts {subscripts!r}, operands {shown}")
    return Einsum(spec.canonical())(*xs)
