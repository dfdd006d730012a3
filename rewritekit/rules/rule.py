"""Rules: ``rule(lhs, rhs)`` for patterns, ``relation(fn)`` for kanren goals.

A rule is a value: its name, tags and equation. ``rule.apply(var)`` answers the Var that
replaces ``var``, or None when the rule does not apply. A replacement must keep the type of
the node it replaces (dtype, rank and every known static length); a rule that breaks this
raises ``RuleTypeError`` naming the rule and both types.
"""

from __future__ import annotations

import contextvars
import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import numpy as np
from etuples.core import ExpressionTuple
from kanren import eq as kanren_eq
from unification import Var as LogicVar
from unification import reify, unify
from unification.variable import isvar

from rewritekit.errors import RewritekitError, RuleError, RuleTypeError
from rewritekit.ir import Op, Var, as_var
from rewritekit.rules import _bridge  # noqa: F401 - registers the IR with etuples/unification
from rewritekit.rules.matcher import (
    UNSET,
    canonical_op,
    child_test,
    compile_builder,
    compile_matcher,
    head_key,
    pattern_vars,
)
from rewritekit.rules.patterns import (
    Pattern,
    PatternVar,
    is_number,
    lvar,
    pattern_str,
    split_term,
)

__all__ = ["Bindings", "Relation", "Rule", "eq", "guard", "relation", "rule"]

IndexKey = tuple[str, Any]

# True while relation() runs a goal on an unbound term to find its heads
_INFERRING: contextvars.ContextVar[bool] = contextvars.ContextVar("inferring", default=False)


class Bindings(Mapping[str, Any]):
    """What a rule's left side bound, by pattern-variable name; ``term`` is the matched Var.

    ``b["a"]`` and ``b.a`` give the value bound to ``lvar("a")`` (a Var, or an Op parameter
    such as an axis tuple).

    Example:
        >>> r = rule(rt.exp(a), rt.exp(a), name="same", when=lambda b: b.a.dtype == "float64")
    """

    __slots__ = ("_values", "term")

    def __init__(self, values: dict[str, Any], term: Var) -> None:
        self._values = values
        self.term = term

    def __getitem__(self, name: str) -> Any:
        return self._values[name]

    def __getattr__(self, name: str) -> Any:
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(f"no pattern variable {name!r} is bound") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"Bindings({self._values!r})"


class Rule:
    """Base of rules. Use ``rule(...)`` or ``relation(...)`` to make one.

    Attributes:
        name: the rule's name; ``qualname`` adds its set's name (``stabilize.log1p``).
        group: the name of the rule set that first took it in, or None.
        tags: labels such as ``"stabilize"`` that rule sets select by.
        keys: where the engine indexes the rule: ``("op", op)``, ``("class", classes)`` or
            ``("any", None)`` (tried on every node).
        child_test: None, or a test on the Ops of a node's inputs that a match needs (the
            second level of the index).
    """

    child_test: Callable[[tuple[Any, ...]], bool] | None = None

    name: str
    group: str | None
    tags: frozenset[str]
    keys: tuple[IndexKey, ...]

    @property
    def qualname(self) -> str:
        """``group.name``, or the bare name outside a rule set."""
        return f"{self.group}.{self.name}" if self.group else self.name

    def apply(self, var: Var, *, kanren: bool = False) -> Var | None:
        """The replacement of ``var``, or None when the rule does not apply.

        Args:
            var: a node output.
            kanren: match through kanren unification instead of the compiled matcher.
        """
        raise NotImplementedError

    def regrouped(self, group: str | None, tags: Iterable[str]) -> Rule:
        """A copy in rule set ``group`` (unless it has one) with ``tags`` added."""
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        new.group = self.group or group
        new.tags = self.tags | frozenset(tags)
        return new

    def _checked(self, old: Var, new: Any) -> Var | None:
        if new is None:
            return None
        if not isinstance(new, Var):
            if isinstance(new, ExpressionTuple | LogicVar):
                raise RuleError(
                    f"rule {self.qualname!r}: the replacement {pattern_str(new)} still holds "
                    "pattern variables"
                )
            try:
                new = as_var(new, dtype=old.dtype, context=f"rule {self.qualname!r}")
            except RewritekitError as exc:
                raise RuleError(f"rule {self.qualname!r}: bad replacement: {exc}") from None
        if new is old:
            return None
        old_type, new_type = old.type, new.type
        if new_type is not old_type and (
            new_type.dtype != old_type.dtype
            or new_type.ndim != old_type.ndim
            or any(
                a is not None and a != b
                for a, b in zip(old_type.shape, new_type.shape, strict=True)
            )
        ):
            raise RuleTypeError(
                f"rule {self.qualname!r} changes {old_type} to {new_type} (replacing "
                f"{_brief(old)}); guard the rule with when= so it keeps the type"
            )
        return new

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.qualname}: {self}>"


class PatternRule(Rule):
    """``lhs -> rhs``: made by ``rule``."""

    def __init__(
        self,
        lhs: Any,
        rhs: Any,
        name: str,
        when: Callable[[Bindings], bool] | None,
        tags: Iterable[str],
    ) -> None:
        self.name = _checked_name(name)
        self.group = None
        self.tags = frozenset(tags)
        if isinstance(lhs, Var) and lhs.owner is not None and lhs.owner.nout == 1:
            lhs = Pattern((lhs.owner.op, *lhs.owner.inputs))  # exactly this node
        if not isinstance(lhs, ExpressionTuple):
            raise RuleError(
                f"rule {name!r}: the left side must be a term such as rt.log(1 + a), got "
                f"{pattern_str(lhs)}"
            )
        self.lhs = lhs
        self.rhs = rhs
        self.when = when
        self._slots: dict[LogicVar, int] = {}
        self._match = compile_matcher(lhs, self._slots)
        self.variables = list(self._slots)
        self._names = [(_var_name(v), slot) for v, slot in self._slots.items()]
        self.keys = _index_keys(head_key(lhs))
        self.child_test = child_test(lhs)
        if _is_pattern_value(rhs):
            unbound = [v for v in pattern_vars(rhs) if v not in self._slots]
            if unbound:
                raise RuleError(
                    f"rule {name!r}: the right side uses {', '.join(map(str, unbound))}, "
                    "which the left side does not bind"
                )
            build = compile_builder(rhs, self._slots)
            self._build: Callable[[list[Any], Var], Any] = lambda env, term: build(env)
        elif callable(rhs):
            self._build = lambda env, term: rhs(self._bindings(env, term))
        else:
            raise RuleError(
                f"rule {name!r}: the right side must be a pattern, a Var, a number or a "
                f"function of the bindings, got {type(rhs).__name__}"
            )
        self._variants: list[Any] | None = None

    def _bindings(self, env: list[Any], term: Var) -> Bindings:
        return Bindings({name: env[slot] for name, slot in self._names}, term)

    def apply(self, var: Var, *, kanren: bool = False) -> Var | None:
        env = self._kanren_match(var) if kanren else self._compiled_match(var)
        if env is None:
            return None
        try:
            new = self._build(env, var)
        except RewritekitError as exc:
            raise RuleError(
                f"rule {self.qualname!r} could not build its right side for {_brief(var)}: "
                f"{exc}; guard it with when="
            ) from exc
        return self._checked(var, new)

    def _accept(self, env: list[Any], var: Var) -> bool:
        return self.when is None or bool(self.when(self._bindings(env, var)))

    def _compiled_match(self, var: Var) -> list[Any] | None:
        env = [UNSET] * len(self._slots)
        return self._match(var, env, lambda env: env if self._accept(env, var) else None)

    def _kanren_match(self, var: Var) -> list[Any] | None:
        if self._variants is None:
            self._variants = commutative_variants(self.lhs)
        for variant in self._variants:
            for state in kanren_eq(var, variant)({}):
                env = [reify(v, state) for v in self._slots]
                if self._accept(env, var):
                    return env
        return None

    def __str__(self) -> str:
        right = pattern_str(self.rhs) if _is_pattern_value(self.rhs) else "<function>"
        text = f"{pattern_str(self.lhs)} -> {right}"
        return text if self.when is None else f"{text}  when {_fn_name(self.when)}"


class Relation(Rule):
    """A rule stated as a kanren goal: made by ``relation``."""

    def __init__(
        self,
        fn: Callable[[Any, Any], Any],
        name: str,
        ops: Any,
        tags: Iterable[str],
    ) -> None:
        self.name = _checked_name(name)
        self.group = None
        self.tags = frozenset(tags)
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
        return doc[0] if doc else f"relation {_fn_name(self.fn)}"


def rule(
    lhs: Any,
    rhs: Any,
    *,
    name: str,
    when: Callable[[Bindings], bool] | None = None,
    tags: Iterable[str] = (),
) -> Rule:
    """A rewrite rule ``lhs -> rhs``.

    Args:
        lhs: a pattern term written with the tensor API and ``lvar``s, e.g.
            ``rt.log(1 + a)``. Numbers match constants whose elements all equal them;
            commutative Ops match either order; Op parameters can be pattern variables
            (``rt.sum(a, axis=lvar("ax"))``).
        rhs: a pattern over the same variables (``rt.log1p(a)``), a Var or number, or a
            function of the ``Bindings`` that returns the replacement (or None to decline).
        name: the rule's name (snake_case), shown in traces and errors.
        when: a predicate on the ``Bindings``; the rule applies only where it is true.
        tags: labels for rule sets (``"canonicalize"``, ``"stabilize"``, ...).

    Raises:
        RuleError: the left side cannot be matched, or the right side uses variables the
            left side does not bind.

    Example:
        >>> a = lvar("a")
        >>> log1p = rule(rt.log(1 + a), rt.log1p(a), name="log1p")
        >>> str(log1p)
        'log(1 + a) -> log1p(a)'
    """
    return PatternRule(lhs, rhs, name, when, tags)


def relation(
    fn: Callable[[Any, Any], Any],
    *,
    name: str,
    ops: Any = None,
    tags: Iterable[str] = (),
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

    Example:
        >>> def exp_log(lhs, rhs):
        ...     '''exp(log(a)) -> a, log(exp(a)) -> a'''
        ...     a = lvar()
        ...     return conde([eq(lhs, rt.exp(rt.log(a))), eq(rhs, a)],
        ...                  [eq(lhs, rt.log(rt.exp(a))), eq(rhs, a)])
        >>> inverse = relation(exp_log, name="exp_log")
    """
    return Relation(fn, name, ops, tags)


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
            if _INFERRING.get():
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


# --- helpers ------------------------------------------------------------------------------


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


def _is_pattern_value(value: Any) -> bool:
    return (
        isinstance(value, ExpressionTuple | LogicVar | Var | np.ndarray)
        or is_number(value)
        or (isinstance(value, list | tuple) and any(_is_pattern_value(v) for v in value))
    )


def _index_keys(key: IndexKey) -> tuple[IndexKey, ...]:
    kind, value = key
    if kind == "class":
        return tuple(("class", cls) for cls in value)
    return (key,)


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
    token = _INFERRING.set(True)
    try:
        answers = list(itertools.islice(fn(lhs, rhs)({}), 32))
        for state in answers:
            term = reify(lhs, state)
            key = head_key(term) if isinstance(term, ExpressionTuple) else ("any", None)
            if key[0] == "any":
                return (("any", None),)
            keys.extend(_index_keys(key))
    except Exception:  # any failure only means "try it on every node"
        return (("any", None),)
    finally:
        _INFERRING.reset(token)
    return tuple(dict.fromkeys(keys)) or (("any", None),)


def _checked_name(name: Any) -> str:
    if not isinstance(name, str) or not name:
        raise RuleError(f"a rule needs a non-empty str name, got {name!r}")
    return name


def _var_name(v: LogicVar) -> str:
    return v.name if isinstance(v, PatternVar) else str(v)


def _fn_name(fn: Any) -> str:
    return getattr(fn, "__name__", None) or repr(fn)


def _brief(var: Var) -> str:
    from rewritekit.rules.trace import term_str

    return term_str(var, depth=3)
