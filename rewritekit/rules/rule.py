"""Rules: the ``Rule`` base and plain pattern rules, ``rule(lhs, rhs)`` (relations are in
``relation.py``).

A rule is a value: its name, tags and equation. ``rule.apply(var)`` answers the Var that
replaces ``var``, or None when the rule does not apply. A replacement must keep the type of
the node it replaces (dtype, rank and every known static length); a rule that breaks this
raises ``RuleTypeError`` naming the rule and both types.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, TypeVar

import numpy as np
from etuples.core import ExpressionTuple
from kanren import eq as kanren_eq
from unification import Var as LogicVar
from unification import reify

from rewritekit.errors import RewritekitError, RuleError, RuleTypeError
from rewritekit.ir import Var, as_var
from rewritekit.rules import _bridge  # noqa: F401 - registers the IR with etuples/unification
from rewritekit.rules.goals import commutative_variants
from rewritekit.rules.matcher import (
    UNSET,
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
    pattern_str,
)

__all__ = ["Bindings", "PatternRule", "Rule", "order_free", "rule"]

IndexKey = tuple[str, Any]
F = TypeVar("F", bound=Callable[..., Any])


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
        child_test: None, or a test on the Ops of a node's inputs (``None`` for a graph
            input, ``rules.matcher.CONSTANT`` for a constant) that a match needs (the
            second level of the index).
        domain: where the rule's inputs may be drawn to check it (``check_rule``): a map
            from a pattern variable's or example input's name to a sampler name
            (``"positive"``, ...) or function; None draws every input from ``"real"``.
        example: a function of no arguments returning a graph the rule rewrites, or None
            (then ``check_rule`` instantiates the left side).
    """

    child_test: Callable[[tuple[Any, ...]], bool] | None = None
    domain: Mapping[str, Any] | None = None
    example: Callable[[], Any] | None = None

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

    def _identify(
        self,
        name: Any,
        tags: Iterable[str],
        domain: Mapping[str, Any] | None,
        example: Callable[[], Any] | None,
    ) -> None:
        """Set what every rule has: its checked name, tags, domain and example."""
        self.name = checked_name(name)
        self.group = None
        self.tags = frozenset(tags)
        if domain is not None and not isinstance(domain, Mapping):
            raise RuleError(f"rule {name!r}: domain must be a dict of names to samplers")
        if example is not None and not callable(example):
            raise RuleError(f"rule {name!r}: example must be a function returning a graph")
        self.domain, self.example = domain, example

    def example_graph(self) -> Var:
        """A graph the rule rewrites: its ``example()``, else its left side instantiated
        with one float64 vector per pattern variable, named after it.

        Raises:
            RuleError: there is no example and the left side cannot be instantiated.
        """
        graph = self.example() if self.example is not None else self._instantiated()
        if not isinstance(graph, Var):
            raise RuleError(
                f"rule {self.qualname!r}: its example must return a Var, got {type(graph).__name__}"
            )
        return graph

    def _instantiated(self) -> Var:
        raise RuleError(
            f"rule {self.qualname!r} has no left side to instantiate; give it an example="
        )

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
        domain: Mapping[str, Any] | None = None,
        example: Callable[[], Any] | None = None,
    ) -> None:
        self._identify(name, tags, domain, example)
        if isinstance(lhs, LogicVar) and callable(rhs) and not _is_pattern_value(rhs):
            pass  # a bare variable: the rule is tried on every node (computed right side)
        elif isinstance(lhs, Var) and lhs.owner is not None and lhs.owner.nout == 1:
            lhs = Pattern((lhs.owner.op, *lhs.owner.inputs))  # exactly this node
        if not isinstance(lhs, ExpressionTuple | LogicVar) or (
            isinstance(lhs, LogicVar) and not callable(rhs)
        ):
            raise RuleError(
                f"rule {name!r}: the left side must be a term such as rt.log(1 + a) (or a "
                f"bare variable with a function as the right side), got {pattern_str(lhs)}"
            )
        self.lhs = lhs
        self.rhs = rhs
        self.when = when
        self._slots: dict[LogicVar, int] = {}
        swap = not (_is_order_free(rhs) and (when is None or _is_order_free(when)))
        guard = None if when is None else lambda env, term: when(self._bindings(env, term))
        self._match = compile_matcher(lhs, self._slots, swap=swap, guard=guard)
        self.variables = list(self._slots)
        self._names = [(_var_name(v), slot) for v, slot in self._slots.items()]
        self.keys = index_keys(head_key(lhs))
        self.child_test = child_test(lhs)
        if _is_pattern_value(rhs):
            unbound = [v for v in pattern_vars(rhs) if v not in self._slots]
            if unbound:
                raise RuleError(
                    f"rule {name!r}: the right side uses {', '.join(map(str, unbound))}, "
                    "which the left side does not bind"
                )
            build = compile_builder(rhs, self._slots)
            self._build: Callable[..., Any] = lambda env, term, bindings=None: build(env)
        elif callable(rhs):
            self._build = lambda env, term, bindings=None: rhs(
                self._bindings(env, term) if bindings is None else bindings
            )
        else:
            raise RuleError(
                f"rule {name!r}: the right side must be a pattern, a Var, a number or a "
                f"function of the bindings, got {type(rhs).__name__}"
            )
        self._variants: list[Any] | None = None

    def _instantiated(self) -> Var:
        from rewritekit.tensor import vector

        env = [vector(_var_name(v)) for v in self._slots]
        try:
            return compile_builder(self.lhs, self._slots)(env)  # type: ignore[no-any-return]
        except Exception as exc:
            raise RuleError(
                f"rule {self.qualname!r}: cannot instantiate its left side with float "
                f"vectors ({exc}); give it an example="
            ) from exc

    def _bindings(self, env: list[Any], term: Var) -> Bindings:
        return Bindings({name: env[slot] for name, slot in self._names}, term)

    def apply(self, var: Var, *, kanren: bool = False) -> Var | None:
        if kanren:
            return self._kanren_apply(var)
        env = [UNSET] * len(self._slots)
        return self._match(var, env, lambda env: self._replacement(env, var))  # type: ignore[no-any-return]

    def _replacement(self, env: list[Any], var: Var) -> Var | None:
        """The checked replacement for one match, or None (then the matcher backtracks: a
        commutative Op tries its other order, so ``when`` and a declining right side both
        see every ordering)."""
        bindings = None  # made once, for the guard and a computed right side
        if self.when is not None:
            bindings = self._bindings(env, var)
            if not self.when(bindings):
                return None
        try:
            new = self._build(env, var, bindings)
        except RewritekitError as exc:
            raise RuleError(
                f"rule {self.qualname!r} could not build its right side for {_brief(var)}: "
                f"{exc}; guard it with when="
            ) from exc
        return self._checked(var, new)

    def _kanren_apply(self, var: Var) -> Var | None:
        if self._variants is None:
            self._variants = commutative_variants(self.lhs)
        for variant in self._variants:
            for state in kanren_eq(var, variant)({}):
                new = self._replacement([reify(v, state) for v in self._slots], var)
                if new is not None:
                    return new
        return None

    def __str__(self) -> str:
        right = pattern_str(self.rhs) if _is_pattern_value(self.rhs) else _doc_line(self.rhs)
        text = f"{pattern_str(self.lhs)} -> {right}"
        return text if self.when is None else f"{text}  when {fn_name(self.when)}"


def rule(
    lhs: Any,
    rhs: Any,
    *,
    name: str,
    when: Callable[[Bindings], bool] | None = None,
    tags: Iterable[str] = (),
    domain: Mapping[str, Any] | None = None,
    example: Callable[[], Any] | None = None,
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
        domain: for ``rewritekit.testing.check_rule``: where each pattern variable's values
            are drawn, by name (``{"a": "positive"}``); sampler names are listed in
            ``rewritekit.testing.SAMPLERS``; a function ``(rng, shape, dtype) -> array``
            also works. Unnamed variables are drawn from ``"real"``.
        example: for ``check_rule`` and the docs: a function of no arguments returning a
            graph that the rule rewrites. By default the left side is instantiated with a
            float64 vector of length 3 per pattern variable.

    A bare pattern variable as the left side matches every node; the right side must then
    be a function of the bindings (constant folding is written this way).

    Raises:
        RuleError: the left side cannot be matched, or the right side uses variables the
            left side does not bind.

    Example:
        >>> a = lvar("a")
        >>> log1p = rule(rt.log(1 + a), rt.log1p(a), name="log1p")
        >>> str(log1p)
        'log(1 + a) -> log1p(a)'
    """
    return PatternRule(lhs, rhs, name, when, tags, domain, example)


def order_free(fn: F) -> F:
    """Mark ``fn``, a computed right side or a guard, as answering alike for both orders
    of the operands of a commutative left side ``x * y`` (it reads only ``b.term``, or
    ``x`` and ``y`` symmetrically). When the right side and the guard (if any) are both
    marked, a node the rule declines is not tried again with its operands swapped: the
    answer would be the same, at twice the cost.

    Example:
        >>> @order_free
        ... def folded(b): ...  # a function of b.term alone
    """
    fn.order_free = True  # type: ignore[attr-defined]
    return fn


def _is_order_free(fn: Any) -> bool:
    return getattr(fn, "order_free", False) is True


# --- helpers ------------------------------------------------------------------------------


def _is_pattern_value(value: Any) -> bool:
    return (
        isinstance(value, ExpressionTuple | LogicVar | Var | np.ndarray)
        or is_number(value)
        or (isinstance(value, list | tuple) and any(_is_pattern_value(v) for v in value))
    )


def index_keys(key: IndexKey) -> tuple[IndexKey, ...]:
    kind, value = key
    if kind == "class":
        return tuple(("class", cls) for cls in value)
    return (key,)


def checked_name(name: Any) -> str:
    if not isinstance(name, str) or not name:
        raise RuleError(f"a rule needs a non-empty str name, got {name!r}")
    return name


def _var_name(v: LogicVar) -> str:
    return v.name if isinstance(v, PatternVar) else str(v)


def _doc_line(fn: Any) -> str:
    """A computed right side as text: the first line of its docstring, or ``<function>``."""
    lines = (getattr(fn, "__doc__", None) or "").strip().splitlines()
    return lines[0] if lines else "<function>"


def fn_name(fn: Any) -> str:
    return getattr(fn, "__name__", None) or repr(fn)


def _brief(var: Var) -> str:
    from rewritekit.rules.trace import term_str

    return term_str(var, depth=3)
