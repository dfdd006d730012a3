"""Einstein summation: ``einsum``, its subscripts' parser and its static shapes.

``einsum`` is normalized to explicit form with letters renamed in order of first
appearance, so ``rt.einsum("ij,jk", x, y) is rt.einsum("ab,bc->ac", x, y)``. Shapes and
dtypes follow NumPy's ``einsum`` (see ``rewritekit.tensor.contractions``).
"""

from __future__ import annotations

import functools
import string
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rewritekit.errors import GraphTypeError, ShapeError
from rewritekit.ir import Grads, TensorType, Var, Vars, broadcast_shapes, result_dtype, short_name
from rewritekit.ir.patterns import pattern_function
from rewritekit.tensor.axes import shape_str
from rewritekit.tensor.contractions import Length, Product, as_operands
from rewritekit.tensor.creation import eye, ones
from rewritekit.tensor.gradient import input_grad
from rewritekit.tensor.shapes import shape_i

__all__ = ["einsum"]


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
                    f"{known} and {n} (shape {shape_str(shape)}); a diagonal needs equal "
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
        shown = " and ".join(shape_str(e) for e in ellipses)
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

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
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


@functools.lru_cache(maxsize=1024)
def _parsed(subscripts: str, ndims: tuple[int, ...]) -> tuple[EinsumSpec, str]:
    """``parse_einsum`` and the canonical subscripts, remembered: ``dot_general`` (every
    product of an imported jaxpr) spells its einsum anew each time."""
    spec = parse_einsum(subscripts, ndims)
    return spec, spec.canonical()


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
    xs = as_operands("einsum", *operands)
    ndims = tuple(x.ndim for x in xs)
    if isinstance(subscripts, str):
        spec, canonical = _parsed(subscripts, ndims)
    else:
        spec = parse_einsum(subscripts, ndims)  # raises, naming the subscripts
        canonical = spec.canonical()
    try:
        return Einsum(canonical)(*xs)
    except ShapeError:  # said again in the caller's letters, naming the operands
        shown = ", ".join(short_name(x) for x in xs)
        einsum_type(spec, [x.type for x in xs], f"subscripts {subscripts!r}, operands {shown}")
        raise
