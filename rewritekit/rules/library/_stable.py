"""What the stabilize rules share: guards, computed right sides, pattern variables.

Guards take the ``Bindings`` of a match and answer a bool; their names show in traces.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import rewritekit.tensor as rt
from rewritekit.ir import TensorType, Var
from rewritekit.rules.library._support import same_type
from rewritekit.rules.patterns import lvar
from rewritekit.rules.rule import Bindings
from rewritekit.tensor.elemwise import float_dtype

__all__ = [
    "REAL",
    "Guard",
    "as_float",
    "ax",
    "computed",
    "guard",
    "kd",
    "m",
    "matrix_x",
    "negate",
    "real",
    "same_float",
    "unary_of",
]

Guard = Callable[[Bindings], bool]

ax, kd = lvar("ax"), lvar("kd")  # a reduction's axis and keepdims parameters
m = lvar("m")  # a matrix (or a stack of them)

REAL = {"x": "real"}


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


def computed(text: str, build: Callable[[Bindings], Var]) -> Callable[[Bindings], Var]:
    """A computed right side, described by ``text`` (its docstring, as a relation's)."""
    build.__doc__ = text
    return build


def negate(v: Var) -> Var:
    """``-v``, or ``u`` when ``v`` is ``-u`` (negation is an involution, also for ints)."""
    if v.owner is not None and v.owner.op == rt.negative:
        return v.owner.inputs[0]
    return -v


def as_float(v: Var) -> Var:
    """``v``, cast to float64 unless it is a float (what float functions compute in)."""
    return v if v.type.kind == "f" else rt.cast(v, "float64")
