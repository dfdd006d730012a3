"""kanren goals for relations: an ``eq`` that answers every commutative ordering, and
``guard``."""

from __future__ import annotations

import contextvars
import itertools
from collections.abc import Callable, Iterator
from typing import Any

from etuples.core import ExpressionTuple
from unification import reify, unify

from rewritekit.ir import Op
from rewritekit.rules.matcher import pattern_vars
from rewritekit.rules.patterns import split_term

__all__ = ["commutative_variants", "eq", "guard"]

# True while relation() runs a goal on an unbound term to find its heads
INFERRING: contextvars.ContextVar[bool] = contextvars.ContextVar("inferring", default=False)


def guard(predicate: Callable[..., bool], *terms: Any) -> Callable[[Any], Iterator[Any]]:
    """A kanren goal that succeeds when ``predicate(*terms)`` holds for the bound terms.

    It fails while a term is unbound, so put it after the goals that bind them (while
    ``relation`` infers the heads of a goal on an unbound term, it lets everything pass).

    Example:
        >>> guard(lambda x: x.dtype == "float64", a)  # doctest: +SKIP
    """

    def goal(state: Any) -> Iterator[Any]:
        values = [reify(t, state) for t in terms]
        if any(pattern_vars(v) for v in values):
            if INFERRING.get():
                yield state
            return
        if predicate(*values):
            yield state

    return goal


def eq(u: Any, v: Any) -> Callable[[Any], Iterator[Any]]:
    """kanren's ``eq`` that also answers every ordering of commutative Ops.

    ``kanren.eq`` unifies once: a pattern over a commutative Op matches the swapped inputs
    only when the written order does not unify. This goal yields one state per ordering
    that unifies, so a later goal (a ``guard``) that rejects one order gets the other.
    """
    pattern, term = (u, v) if isinstance(u, ExpressionTuple) else (v, u)

    def goal(state: Any) -> Iterator[Any]:
        if not isinstance(pattern, ExpressionTuple) or isinstance(term, ExpressionTuple):
            found = unify(u, v, state)
            if found is not False:
                yield found
            return
        seen: list[Any] = []
        for variant in commutative_variants(pattern):
            found = unify(term, variant, state)
            if found is not False and found not in seen:
                seen.append(found)
                yield found

    return goal


def commutative_variants(pattern: Any) -> list[Any]:
    """Every ordering of the arguments of commutative Ops in ``pattern``, the written one
    first (the order in which the compiled matcher tries them)."""
    if not isinstance(pattern, ExpressionTuple):
        return [pattern]
    head, args, kwargs = split_term(pattern)
    options = [commutative_variants(a) for a in args]
    combos = [list(c) for c in itertools.product(*options)]
    swap = isinstance(head, Op) and getattr(head, "commutative", False) and len(args) == 2
    out = []
    for swapped in [False, True] if swap else [False]:
        for combo in combos:
            # swapped: the node's second input is matched by the first written argument
            chosen = [combo[1], combo[0]] if swapped else combo
            out.append(type(pattern)((head, *chosen), **kwargs))
    return out
