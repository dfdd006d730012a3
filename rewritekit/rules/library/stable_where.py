"""Products and quotients of a ``where`` with a zero branch: the other factor moves inside.

``where(c, 0, a) * b`` is ``nan`` where ``c`` holds and ``b`` is ``inf`` or ``nan`` (``0 *
inf``), although the branch chosen there is an exact zero; ``where(c, 0, a * b)`` keeps it
zero. Gradients are full of these products: the cotangent of an untaken branch of a
``where`` is ``where(c, 0, g)``, multiplied by that branch's derivative, which is often
non-finite exactly where the branch is not taken (PyTensor's ``local_mul_switch_sink``).

Values differ from the original only where the zero branch is chosen and the other factor
is not finite: the original gives nan there, the rewrite 0.

Example:
    >>> x = rt.vector("x")
    >>> sunk = rk.rewrite(rt.where(x > 0, 0.0, x) * rt.log(x))
    >>> sunk.owner.op == rt.where
    True
"""

from __future__ import annotations

from collections.abc import Callable

import rewritekit.tensor as rt
from rewritekit.ir import Var
from rewritekit.rules.library._stable import real
from rewritekit.rules.library._support import a, c, y
from rewritekit.rules.rule import Bindings, Rule, rule

__all__ = ["rules"]


def _sunk(op: Callable[[Var, Var], Var], zero_first: bool) -> Callable[[Bindings], Var | None]:
    """A right side: ``op`` applied inside the nonzero branch, the zero branch kept (the
    matched Var, so the dtype promotes as before); declines if the type would change."""

    def build(b: Bindings) -> Var | None:
        where = next(v for v in b.term.owner.inputs if v is not b.y)
        zero = where.owner.inputs[1 if zero_first else 2]
        inner = op(b.a, b.y)
        new = rt.where(b.c, zero, inner) if zero_first else rt.where(b.c, inner, zero)
        return new if new.type == b.term.type else None

    shown = "where(c, 0, a {0} y)" if zero_first else "where(c, a {0} y, 0)"
    build.__doc__ = shown.format("*" if op is rt.multiply else "/")
    return build


def _example(zero_first: bool, op: Callable[[Var, Var], Var]) -> Callable[[], Var]:
    def example() -> Var:
        cond, branch = rt.vector("c") > 0, rt.vector("a")
        where = rt.where(cond, 0.0, branch) if zero_first else rt.where(cond, branch, 0.0)
        return op(where, rt.vector("y"))

    return example


def _sink(name: str, op: Callable[[Var, Var], Var], zero_first: bool) -> Rule:
    where = rt.where(c, 0, a) if zero_first else rt.where(c, a, 0)
    return rule(
        op(where, y),
        _sunk(op, zero_first),
        name=name,
        when=real("a", "y"),
        domain={"c": "real", "a": "real", "y": "real"},
        example=_example(zero_first, op),
    )


where_sink_mul_zero_first = _sink("where_sink_mul_zero_first", rt.multiply, True)
where_sink_mul_zero_second = _sink("where_sink_mul_zero_second", rt.multiply, False)
where_sink_div_zero_first = _sink("where_sink_div_zero_first", rt.true_divide, True)
where_sink_div_zero_second = _sink("where_sink_div_zero_second", rt.true_divide, False)

rules = [
    where_sink_mul_zero_first,
    where_sink_mul_zero_second,
    where_sink_div_zero_first,
    where_sink_div_zero_second,
]
