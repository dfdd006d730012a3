"""Rules stated as kanren relations: ``relation(fn, name=...)``."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from etuples.core import ExpressionTuple
from unification import reify
from unification.variable import isvar

from rewritekit.errors import RewritekitError, RuleError
from rewritekit.ir import Op, Var
from rewritekit.rules.goals import INFERRING
from rewritekit.rules.matcher import canonical_op, compile_builder, head_key, pattern_vars
from rewritekit.rules.patterns import lvar, pattern_str
from rewritekit.rules.rule import (
    IndexKey,
    Rule,
    fn_name,
    index_keys,
)

__all__ = ["Relation", "relation"]


class Relation(Rule):
    """A rule stated as a kanren goal: made by ``relation``."""

    def __init__(
        self,
        fn: Callable[[Any, Any], Any],
        name: str,
        ops: Any,
        tags: Iterable[str],
        domain: Mapping[str, Any] | None = None,
        example: Callable[[], Any] | None = None,
    ) -> None:
        self._identify(name, tags, domain, example)
        if not callable(fn):
            raise RuleError(f"relation {name!r}: expected a function (lhs, rhs) -> goal")
        self.fn = fn
        self.keys = _relation_keys(name, fn, ops)

    def apply(self, var: Var, *, kanren: bool = True) -> Var | None:
        rhs = lvar()
        goal = self.fn(var, rhs)
        for state in goal({}):
            answer = reify(rhs, state)
            if isvar(answer):
                raise RuleError(f"relation {self.qualname!r} left its answer unbound")
            unbound = pattern_vars(answer)
            if unbound:
                raise RuleError(
                    f"relation {self.qualname!r}: the answer {pattern_str(answer)} holds "
                    f"unbound variables {', '.join(map(str, unbound))}"
                )
            try:
                new = compile_builder(answer, {})([])
            except RewritekitError as exc:
                raise RuleError(
                    f"relation {self.qualname!r} could not build its answer "
                    f"{pattern_str(answer)}: {exc}"
                ) from exc
            return self._checked(var, new)
        return None

    def __str__(self) -> str:
        doc = (self.fn.__doc__ or "").strip().splitlines()
        return doc[0] if doc else f"relation {fn_name(self.fn)}"


def relation(
    fn: Callable[[Any, Any], Any],
    *,
    name: str,
    ops: Any = None,
    tags: Iterable[str] = (),
    domain: Mapping[str, Any] | None = None,
    example: Callable[[], Any] | None = None,
) -> Rule:
    """A rule stated as a kanren relation between a term and its replacement.

    ``fn(lhs, rhs)`` returns a goal; the engine calls it with ``lhs`` the node to rewrite
    and ``rhs`` a fresh logic variable, and uses the first answer for ``rhs``: a pattern
    term (evaluated into a node), a Var, or a number. Use kanren's ``eq``, ``conde``,
    ``lall`` and ``guard`` (below), and ``rewritekit.rules.eq``, which answers every
    ordering of commutative Ops (``kanren.eq`` answers one: the swapped inputs only when
    the written order does not unify).

    Args:
        fn: ``(lhs, rhs) -> goal``.
        name: the rule's name.
        ops: the Ops, Op classes or tensor functions at the head of the terms it rewrites,
            for indexing. By default they are inferred by running the goal once on an
            unbound term; a relation whose heads cannot be inferred is tried on every node.
        tags: labels for rule sets.
        domain: for ``rewritekit.testing.check_rule``, as for ``rule``.
        example: for ``rewritekit.testing.check_rule``, as for ``rule``; a relation has no
            left side to instantiate, so give it an ``example``.

    Example:
        >>> def exp_log(lhs, rhs):
        ...     '''exp(log(a)) -> a, log(exp(a)) -> a'''
        ...     a = lvar()
        ...     return conde([eq(lhs, rt.exp(rt.log(a))), eq(rhs, a)],
        ...                  [eq(lhs, rt.log(rt.exp(a))), eq(rhs, a)])
        >>> inverse = relation(exp_log, name="exp_log")
    """
    return Relation(fn, name, ops, tags, domain, example)


def _relation_keys(name: str, fn: Callable[[Any, Any], Any], ops: Any) -> tuple[IndexKey, ...]:
    if ops is not None:
        keys: list[IndexKey] = []
        for op in ops if isinstance(ops, list | tuple | set | frozenset) else [ops]:
            if isinstance(op, Op):
                keys.append(("op", canonical_op(op)))
            elif isinstance(op, type) and issubclass(op, Op):
                keys.append(("class", op))
            elif hasattr(op, "pattern_signature") and op.pattern_signature.ops:
                keys.extend(("class", cls) for cls in op.pattern_signature.ops)
            else:
                raise RuleError(
                    f"relation {name!r}: ops must be Ops, Op classes or tensor functions "
                    f"that build one Op, got {op!r}"
                )
        return tuple(keys)
    return _inferred_keys(fn)


def _inferred_keys(fn: Callable[[Any, Any], Any]) -> tuple[IndexKey, ...]:
    """Run the goal on an unbound term and read the heads of the answers; ``any`` when
    that does not give a head for every answer (up to 32 answers)."""
    lhs, rhs = lvar(), lvar()
    keys: list[IndexKey] = []
    token = INFERRING.set(True)
    try:
        answers = list(itertools.islice(fn(lhs, rhs)({}), 32))
        for state in answers:
            term = reify(lhs, state)
            key = head_key(term) if isinstance(term, ExpressionTuple) else ("any", None)
            if key[0] == "any":
                return (("any", None),)
            keys.extend(index_keys(key))
    except Exception:  # any failure only means "try it on every node"
        return (("any", None),)
    finally:
        INFERRING.reset(token)
    return tuple(dict.fromkeys(keys)) or (("any", None),)
