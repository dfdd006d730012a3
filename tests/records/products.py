"""Op records for the products (``rewritekit.tensor.products``).

Shapes are drawn from templates: one string of letters per operand, where a lowercase
letter is one length shared by every operand that uses it and an uppercase letter is a
batch length that each operand may instead have as 1 (so batch axes broadcast). Floats
are drawn on a grid of eighths in [-4, 4]: every product is a multiple of 1/64 and every
sum of at most a few hundred of them is exact in float32, so the NumPy reference, the
NumPy backend and XLA agree to the last bit whatever their summation order.
"""

from __future__ import annotations

import functools

import numpy as np
from hypothesis import strategies as st

import rewritekit.tensor as rt
from rewritekit.tensor import products as pr
from tests.records import OpRecord, values

NUMBERS = ("float64", "float32", "int64", "int32")
ALL = (*NUMBERS, "bool")


def _grid(data, dtype, shape):
    x = values(data, dtype, shape, -4.0, 4.0)
    return (np.round(x * 8) / 8).astype(x.dtype) if x.dtype.kind == "f" else x


def _shapes(data, templates, min_side=0):
    lengths: dict[str, int] = {}
    shapes = []
    for template in templates:
        shape = []
        for letter in template:
            if letter.lower() not in lengths:
                lengths[letter.lower()] = data.draw(st.integers(min_side, 4), label=letter)
            n = lengths[letter.lower()]
            if letter.isupper() and data.draw(st.booleans(), label=f"{letter} is 1"):
                n = 1
            shape.append(n)
        shapes.append(tuple(shape))
    return shapes


def _draw(*choices, min_side=0):
    """Draws operands for one of ``choices`` (each a tuple of shape templates)."""

    def draw(data, dtype):
        templates = data.draw(st.sampled_from(choices), label="templates")
        return [_grid(data, dtype, s) for s in _shapes(data, templates, min_side)]

    return draw


# NumPy's dot: scalars multiply; the last axis of a meets b's only or second-to-last axis.
DOT = [("", "ab"), ("abc", ""), ("", ""), ("k", "k"), ("ak", "k"), ("k", "kb"), ("ak", "kb")]
DOT_ND = [("abk", "kc"), ("abk", "ckd"), ("k", "ckd"), ("ak", "bckd")]
# matmul: 1-d operands, matrices, and batch axes of different ranks that broadcast.
MATMUL = [("k", "k"), ("ak", "k"), ("k", "kb"), ("ak", "kb")]
MATMUL_BATCH = [("Bak", "kb"), ("k", "Bkb"), ("CBak", "Bkd"), ("Bak", "CBkd"), ("Bak", "k")]


def _call(fn, *args, **kwargs):
    return lambda *xs: fn(*xs, *args, **kwargs)


RECORDS = [
    OpRecord("dot", (pr.Dot,), rt.dot, np.dot, _draw(*DOT), ALL),
    OpRecord("dot_nd", (pr.Dot,), rt.dot, np.dot, _draw(*DOT_ND), NUMBERS),
    OpRecord(
        "dot_method_static",
        (pr.Dot,),
        lambda a, b: a.dot(b),
        np.dot,
        _draw(*DOT, *DOT_ND),
        NUMBERS,
        static_shapes=True,
    ),
    OpRecord("matmul", (pr.MatMul,), rt.matmul, np.matmul, _draw(*MATMUL), ALL),
    OpRecord("matmul_batch", (pr.MatMul,), rt.matmul, np.matmul, _draw(*MATMUL_BATCH), NUMBERS),
    OpRecord(
        "matmul_operator_static",
        (pr.MatMul,),
        lambda a, b: a @ b,
        np.matmul,
        _draw(*MATMUL, *MATMUL_BATCH),
        NUMBERS,
        static_shapes=True,
    ),
    OpRecord(
        "outer",
        (pr.Outer,),
        rt.outer,
        np.outer,
        _draw(("a", "b"), ("", "ab"), ("abc", "d"), ("ab", "")),
        ALL,
    ),
    OpRecord(
        "outer_static",
        (pr.Outer,),
        rt.outer,
        np.outer,
        _draw(("ab", "c"), ("", "")),
        NUMBERS,
        static_shapes=True,
    ),
    # axes=2 (the default): the last two axes of a with the first two of b.
    OpRecord(
        "tensordot_default",
        (pr.Tensordot,),
        rt.tensordot,
        np.tensordot,
        _draw(("ij", "ij"), ("aij", "ijb"), ("ij", "ijbc")),
        ALL,
    ),
    OpRecord(
        "tensordot_axes0",
        (pr.Tensordot,),
        _call(rt.tensordot, axes=0),
        _call(np.tensordot, axes=0),
        _draw(("a", "b"), ("ab", ""), ("", "")),
        NUMBERS,
    ),
    OpRecord(
        "tensordot_axes1_static",
        (pr.Tensordot,),
        _call(rt.tensordot, axes=1),
        _call(np.tensordot, axes=1),
        _draw(("ak", "kb"), ("abk", "k")),
        NUMBERS,
        static_shapes=True,
    ),
    # Pairs in any order, negative axes: a's axes 2 and 0 with b's axes 0 and 1.
    OpRecord(
        "tensordot_pairs",
        (pr.Tensordot,),
        _call(rt.tensordot, axes=([-1, 0], [0, -2])),
        _call(np.tensordot, axes=([-1, 0], [0, -2])),
        _draw(("ibj", "jic"), ("iaj", "jib")),
        NUMBERS,
    ),
    OpRecord(
        "tensordot_int_pair",
        (pr.Tensordot,),
        _call(rt.tensordot, axes=(1, 0)),
        _call(np.tensordot, axes=(1, 0)),
        _draw(("ak", "kb"), ("ak", "k")),
        NUMBERS,
    ),
]


def _einsum(name, subscripts, *choices, dtypes=NUMBERS, **kw):
    build = functools.partial(rt.einsum, subscripts)
    reference = functools.partial(np.einsum, subscripts)
    return OpRecord(f"einsum_{name}", (pr.Einsum,), build, reference, _draw(*choices), dtypes, **kw)


# Explicit and implicit output, transposes, traces and diagonals (a letter repeated within
# an operand), outer products, batch products with '...', broadcasting of length-1 axes
# (uppercase letters) and scalars.
RECORDS += [
    _einsum("matmul", "ij,jk->ik", ("ij", "jk"), dtypes=ALL),
    _einsum("implicit", "ij,jk", ("ij", "jk")),
    _einsum("implicit_transpose", "ba", ("ba",)),
    _einsum("transpose3", "ijk->kij", ("ijk",)),
    _einsum("trace", "ii", ("ii",)),
    _einsum("diagonal", "ii->i", ("ii",)),
    _einsum("diagonal3", "iji->ji", ("iji",)),
    _einsum("sum_all", "ij->", ("ij",)),
    _einsum("diagonal_product", "ii,i->i", ("ii", "I"), ("ii", "i")),
    _einsum("summed_alone", "ij,j->j", ("ij", "J"), ("iJ", "j")),
    _einsum("outer", "i,j->ij", ("i", "j"), dtypes=ALL),
    _einsum("inner_broadcast", "i,i->i", ("I", "I")),
    _einsum("three", "ij,jk,kl->il", ("ij", "jk", "kl")),
    _einsum("scalar", ",ij->ji", ("", "ij")),
    _einsum("ellipsis_batch", "...ij,...jk->...ik", ("Bij", "jk"), ("CBij", "Bjk"), ("ij", "jk")),
    _einsum("ellipsis_implicit", "i...,i", ("iab", "i"), ("i", "i")),
    _einsum("ellipsis_middle", "i...j->j...i", ("iabj",), ("ij",)),
    _einsum("static", "bij,bjk->bik", ("bij", "bjk"), static_shapes=True),
    _einsum("static_ellipsis", "...i,...i->...", ("Bi", "ABi"), static_shapes=True),
]
