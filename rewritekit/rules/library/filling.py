"""Standard library rules: arrays of one value (phase ``canonicalize``).

A constant written as an array (``ones_like(x)``, ``zeros(shape)``, ``full(shape, c)``, or
a constant array of one number, which constant folding makes of ``broadcast_to(c, shape)``)
is the number it holds: ``op(fill, x)`` becomes ``op(c, x)``, so every rule written with 1 or
0 (``log(1 + x)``, ``x * 0``, ``1 / (1 + exp(-x))``) sees it. The fill's shape still
counts: where it could broadcast the other operand at run time, the result is broadcast
to the node's shape. And an elementwise function of a ``broadcast_to`` is computed before
the broadcast, on the smaller array, so a stable form is recognised under it.

Example:
    >>> x = rt.vector("x")
    >>> rk.rewrite(rt.log(rt.ones_like(x) + x)) is rt.log1p(x)
    True
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import rewritekit.tensor as rt
from rewritekit.ir import Constant, Var
from rewritekit.rules.library._support import constant_value, fitted, operands, x
from rewritekit.rules.library.shape_inference import resolved_shape
from rewritekit.rules.library.structural import broadcast_to_node
from rewritekit.rules.matcher import CONSTANT
from rewritekit.rules.patterns import lvar
from rewritekit.rules.rule import Bindings, Rule, rule
from rewritekit.rules.ruleset import RuleSet

__all__ = ["rules"]


# --- fills: an array of one value is that value ------------------------------------------

fv, fs = lvar("fv"), lvar("fs")  # a fill's value and shape vector


def _constant_fill(b: Bindings) -> bool:
    """The fill value is a real constant (a number, or an array of one number, as a
    broadcast gradient seed ``broadcast_to([1.], shape(x))`` holds), so the fill is that
    number in every element."""
    value = constant_value(b.fv)
    return (
        value is not None
        and value.dtype.kind in "biuf"
        and value.size > 0
        and bool(np.all(value == value.flat[0]))
    )


def _uniform_array(b: Bindings) -> bool:
    """The operand is a constant array of more than one element, all one number: what
    constant folding makes of ``broadcast_to(c, shape)`` (a gradient's seed of a mean),
    which would otherwise reach XLA as a literal of every element."""
    return isinstance(b.fv, Constant) and b.fv.data.size > 1 and _constant_fill(b)


def _constant_array(v: Var) -> Var:
    return rt.constant(np.full(3, 2.0))


def _run_time_lengths(var: Var) -> list[Any]:
    """``var``'s lengths: ints where static, else what shape inference resolves, else
    ``shape_i(var, i)``."""
    resolved = resolved_shape(var) if var.owner is not None else None
    return [
        n
        if n is not None
        else resolved[i]
        if resolved and resolved[i] is not None
        else rt.shape_i(var, i)
        for i, n in enumerate(var.type.shape)
    ]


def _never_broadcasts(fill: Var, other: Var) -> bool:
    """Every length of ``fill`` is 1 or, at run time too, the length of ``other`` there:
    the fill cannot change the shape of ``op(fill, other)``."""
    if fill.ndim > other.ndim:
        return False
    theirs = _run_time_lengths(other)[other.ndim - fill.ndim :]
    for mine, length in zip(_run_time_lengths(fill), theirs, strict=True):
        if mine == 1 or mine is length:
            continue
        if not (isinstance(mine, int) and isinstance(length, int) and mine == length):
            return False
    return True


def _unfilled(op: Callable[[Var, Var], Var], fill_first: bool) -> Callable[[Bindings], Var]:
    """A right side: ``op`` with the fill replaced by its value (in the node's dtype); where
    the fill's shape could broadcast the other operand, broadcast to the node's shape."""

    def build(b: Bindings) -> Var:
        dtype = b.term.dtype
        value = rt.constant(np.asarray(constant_value(b.fv).flat[0], dtype=dtype))
        other = rt.cast(b.x, dtype)
        new = op(value, other) if fill_first else op(other, value)
        first, second = operands(b)
        fill = first if second is b.x else second
        if _never_broadcasts(fill, b.x) and new.type == b.term.type:
            return new
        return fitted(new, b.term, operands(b), source=b.x)

    build.__name__ = f"unfilled({getattr(op, '__name__', op)})"
    return build


def _fill_rules(name: str, op: Callable[[Var, Var], Var], commutative: bool) -> list[Rule]:
    orders = [True] if commutative else [True, False]
    fills = {
        "fill": (rt.full(fs, fv), rt.ones_like, _constant_fill),
        "broadcast": (_BROADCAST, _broadcast_one, _constant_fill),
        "constant": (fv, _constant_array, _uniform_array),
    }
    made = []
    for kind, (filled, like, when) in fills.items():
        for first in orders:
            made.append(
                rule(
                    op(filled, x) if first else op(x, filled),
                    _unfilled(op, first),
                    name=f"{name}_{kind}_{'first' if first else 'second'}",
                    when=when,
                    example=lambda first=first, like=like: (
                        op(like(rt.vector("x")), rt.vector("x"))
                        if first
                        else op(rt.vector("x"), like(rt.vector("x")))
                    ),
                )
            )
            if kind == "constant":  # fv is a Constant: tried only where an input is one
                made[-1].child_test = _some_constant
    return made


def _some_constant(child_ops: tuple[Any, ...]) -> bool:
    return any(op is CONSTANT for op in child_ops)


_BROADCAST = broadcast_to_node(fv, fs, shape=lvar("fst"))


def _broadcast_one(v: Var) -> Var:
    """``broadcast_to([1.], shape(v))``: the seed of a gradient of ``sum``."""
    return rt.broadcast_to(np.ones(1), rt.shape(v))


# Constants written as arrays (ones_like(x), zeros(shape), full(shape, c)) become the
# number they hold, so every rule written with 1 or 0 (log(1 + x), x * 0, ...) sees them.
_fills: list[Rule] = [
    *_fill_rules("add", rt.add, commutative=True),
    *_fill_rules("multiply", rt.multiply, commutative=True),
    *_fill_rules("subtract", rt.subtract, commutative=False),
    *_fill_rules("divide", rt.true_divide, commutative=False),
    *_fill_rules("power", rt.power, commutative=False),
]


# --- elementwise functions before a broadcast ---------------------------------------------

#: Float functions computed on the broadcast's input, then broadcast.
_UNARY = (
    rt.abs,
    rt.erf,
    rt.erfc,
    rt.erfcx,
    rt.exp,
    rt.expm1,
    rt.log,
    rt.log1p,
    rt.negative,
    rt.sigmoid,
    rt.softplus,
    rt.sqrt,
    rt.square,
)
s_vec, st = lvar("s"), lvar("st")


def _name(f: Any) -> str:
    return getattr(f, "__name__", None) or type(f).__name__.lower()


def _sunk(f: Callable[[Var], Var]) -> Callable[[Bindings], Var | None]:
    def build(b: Bindings) -> Var | None:
        new = rt.broadcast_to(f(b.x), b.s)
        return new if new.type == b.term.type else None

    build.__doc__ = f"broadcast_to({_name(f)}(x), s)"
    return build


_broadcasts: list[Rule] = [
    rule(
        f(broadcast_to_node(x, s_vec, shape=st)),
        _sunk(f),
        name=f"{_name(f)}_before_broadcast",
        example=lambda f=f: f(rt.broadcast_to(rt.vector("x", shape=(3,)), (2, 3))),
    )
    for f in _UNARY
]

rules = RuleSet([*_fills, *_broadcasts], name="canonicalize", tags={"canonicalize"})
