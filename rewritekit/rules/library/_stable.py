"""What the stabilize rules share: guards, computed right sides, pattern variables.

Guards take the ``Bindings`` of a match and answer a bool; their names show in traces.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import rewritekit.tensor as rt
from rewritekit.ir import TensorType, Var
from rewritekit.rules.library._support import constant_value, same_type
from rewritekit.rules.patterns import lvar
from rewritekit.rules.rule import Bindings
from rewritekit.tensor.elemwise import float_dtype
from rewritekit.tensor.shapes import BroadcastTo, ExpandDims, Reshape, Squeeze, Transpose
from rewritekit.tensor.subtensor import Subtensor

__all__ = [
    "LAYOUT",
    "REAL",
    "Guard",
    "as_float",
    "ax",
    "computed",
    "guard",
    "in_dtype",
    "kd",
    "m",
    "matrix_x",
    "negate",
    "real",
    "same_float",
    "squared",
    "through_layout",
    "unary_of",
    "widening_unary_of",
]

Guard = Callable[[Bindings], bool]

ax, kd = lvar("ax"), lvar("kd")  # a reduction's axis and keepdims parameters
m = lvar("m")  # a matrix (or a stack of them)

REAL = {"x": "real"}


#: Ops that move, copy or select elements without changing them: for an elementwise ``f``,
#: ``f(S(u))`` is ``S(f(u))``, so a stable form is recognised through them.
LAYOUT = (Transpose, Reshape, ExpandDims, Squeeze, BroadcastTo, Subtensor)


def through_layout(v: Var) -> tuple[Var, Callable[[Var], Var]]:
    """``(u, rebuild)`` with ``v`` = ``rebuild(u)``: ``u`` is what is left of ``v`` after
    peeling its chain of ``LAYOUT`` Ops (none: ``u`` is ``v``), and ``rebuild(w)`` applies
    the same chain, with the same parameters, to ``w``."""
    chain = []
    while v.owner is not None and isinstance(v.owner.op, LAYOUT):
        chain.append(v.owner)
        v = v.owner.inputs[0]

    def rebuild(w: Var) -> Var:
        for node in reversed(chain):
            w = node.op(w, *node.inputs[1:])
        return w

    return v, rebuild


def matrix_x() -> Var:
    """A 2 x 3 matrix ``x``: the example input of the rules over an axis."""
    return rt.matrix("x", shape=(2, 3))


def guard(name: str, test: Callable[[Bindings], Any]) -> Guard:
    def check(bindings: Bindings) -> bool:
        return bool(test(bindings))

    check.__name__ = name
    return check


def real(*names: str) -> Guard:
    """The named inputs are bool, integer or float (not complex)."""
    return guard(
        f"real({', '.join(names)})", lambda b: all(b[n].type.kind in "biuf" for n in names)
    )


def same_float(name: str) -> Guard:
    """The named input is a real float of exactly the matched node's type: a constant in
    the pattern neither widened its dtype nor broadcast its shape."""
    return guard(f"same_float({name})", lambda b: b[name].type.kind == "f" and same_type(name)(b))


def unary_of(name: str) -> Guard:
    """The named input is real and a float function of it has the matched node's type: a
    constant in the pattern neither widened the dtype nor broadcast the shape."""

    def keeps(b: Bindings) -> bool:
        t = b[name].type
        return t.kind in "biuf" and TensorType(float_dtype(t.dtype), t.shape) == b.term.type

    return guard(f"unary_of({name})", keeps)


def widening_unary_of(name: str) -> Guard:
    """As ``unary_of``, but the matched node may hold the float function of the input in a
    wider float (``1.0 - sigmoid(x)`` with a float64 constant and a float32 ``x``); the
    right side is cast up with ``in_dtype``."""

    def keeps(b: Bindings) -> bool:
        t, term = b[name].type, b.term.type
        inner = float_dtype(t.dtype)
        return (
            t.kind in "biuf"
            and t.shape == term.shape
            and term.kind == "f"
            and np.can_cast(inner, term.dtype, "safe")
        )

    return guard(f"widening_unary_of({name})", keeps)


def in_dtype(v: Var, b: Bindings) -> Var:
    """``v`` cast to the matched node's dtype (nothing when it has it)."""
    return v if v.dtype == b.term.dtype else rt.cast(v, b.term.dtype)


def computed(text: str, build: Callable[[Bindings], Var]) -> Callable[[Bindings], Var]:
    """A computed right side, described by ``text`` (its docstring, as a relation's)."""
    build.__doc__ = text
    return build


def negate(v: Var) -> Var:
    """``-v``, or ``u`` when ``v`` is ``-u`` (negation is an involution, also for ints)."""
    if v.owner is not None and v.owner.op == rt.negative:
        return v.owner.inputs[0]
    return -v


def squared(v: Var) -> Var | None:
    """``u`` where ``v`` is ``u`` squared: ``square(u)`` (what canonicalize and specialize
    leave of ``u**2``), ``u * u`` or ``u ** 2``, for a float ``u`` (on integers the square
    could wrap); else None."""
    node = v.owner
    if node is None:
        return None
    u = node.inputs[0]
    squares = (
        node.op == rt.square
        or (node.op == rt.multiply and node.inputs[1] is u)
        or (node.op == rt.power and _is_two(node.inputs[1]))
    )
    return u if squares and u.type.kind == "f" else None


def _is_two(v: Var) -> bool:
    value = constant_value(v)
    return value is not None and value.ndim == 0 and bool(value == 2)


def as_float(v: Var) -> Var:
    """``v``, cast to float64 unless it is a float (what float functions compute in)."""
    return v if v.type.kind == "f" else rt.cast(v, "float64")
