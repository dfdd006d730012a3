"""Patterns compiled into matcher closures (the fast path of plain rules).

A matcher is ``match(var, env, k)``: it checks ``var`` against its pattern, binding pattern
variables in the dict ``env``, and on success calls the continuation ``k(env)``; the first
non-None answer of ``k`` is returned, and ``None`` means no match (bindings made on the
failing branch are undone). Continuations give backtracking for free: a commutative Op
tries the swapped inputs when the written order, or anything after it (a later argument, a
``when`` guard), fails. The recursion is as deep as the pattern, never the graph.

The matcher states the same relation as unifying the pattern with the node through kanren
(``_bridge``); the tests run both on the same cases.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from etuples.core import ExpressionTuple, KwdPair
from unification import Var as LogicVar

from rewritekit.errors import RewritekitError, RuleError
from rewritekit.ir import Apply, Op, Var
from rewritekit.ir.intern import APPLIES
from rewritekit.rules.patterns import (
    SKIP,
    Nth,
    analyse_call,
    constant_equals,
    is_number,
    pattern_str,
    same_node,
    split_term,
)

__all__ = [
    "CONSTANT",
    "child_test",
    "compile_builder",
    "compile_matcher",
    "head_key",
    "pattern_vars",
]

Env = list[Any]  # one slot per pattern variable (see ``slots``)
Cont = Callable[[Env], Any]
Matcher = Callable[[Var, Env, Cont], Any]
NodeMatcher = Callable[[Apply, Env, Cont], Any]
Slots = dict[LogicVar, int]
Guard = Callable[[Env, Var], Any]

UNSET = object()


class _ConstantInput:
    """What a rule's ``child_test`` sees for an input that is a constant (a graph input
    is ``None``, a computed one its Op)."""

    def __repr__(self) -> str:
        return "CONSTANT"


CONSTANT = _ConstantInput()


def canonical_op(op: Op) -> Op:
    """The Op object that nodes equal to ``op`` hold (nodes compare Ops by identity)."""
    return APPLIES.bucket(op)[0]


def same_value(old: Any, new: Any) -> bool:
    """Two bound values agree: the same node, or equal parameters of the same type."""
    if old is new:
        return True
    if isinstance(old, Var) or isinstance(new, Var):
        return False
    return type(old) is type(new) and old == new


def compile_matcher(
    pattern: Any, slots: Slots, *, swap: bool = True, guard: Guard | None = None
) -> Matcher:
    """The matcher of ``pattern`` against a Var. Each pattern variable gets a slot of the
    environment list (added to ``slots`` as it is met).

    ``swap=False`` says that the continuation answers alike for both orders of a
    commutative top-level Op's two distinct bare variables (a right side that reads only
    the matched term): the swapped order, which could only bind the same two values the
    other way round, is then not tried after a decline.

    ``guard(env, term)``, the rule's ``when``, is asked before a top-level tensor-function
    head rebuilds the node to confirm the match (the rebuild costs more than most guards):
    where it says no, the match is dropped as the guard would drop it after the rebuild.

    Raises:
        RuleError: the pattern holds something that cannot be matched.
    """
    if isinstance(pattern, LogicVar):
        return _bind(slots.setdefault(pattern, len(slots)))
    if isinstance(pattern, Var):
        return lambda var, env, k: k(env) if var is pattern else None
    if is_number(pattern) or isinstance(pattern, np.ndarray):
        return lambda var, env, k: k(env) if constant_equals(var, pattern) else None
    if isinstance(pattern, ExpressionTuple):
        head, args, _ = split_term(pattern)
        if isinstance(head, Nth):
            if len(args) != 1:
                raise RuleError(f"{pattern_str(pattern)}: output{head.index} takes one term")
            inner = _node_matcher(args[0], slots)
            index = head.index

            def nth(var: Var, env: Env, k: Cont) -> Any:
                node = var.owner
                if node is None or var.index != index:
                    return None
                return inner(node, env, k)

            return nth
        whole = _node_matcher(pattern, slots, swap, guard)

        def term(var: Var, env: Env, k: Cont) -> Any:
            node = var.owner
            # a multi-output node (more than _out0) is matched through Nth
            if node is None or node._rest:
                return None
            return whole(node, env, k)

        return term
    raise RuleError(
        f"cannot match {type(pattern).__name__} {pattern!r}: a pattern is made of pattern "
        "variables, numbers, arrays, graph Vars and terms of Ops or tensor functions"
    )


def _bind(slot: int) -> Matcher:
    def bind(value: Any, env: Env, k: Cont) -> Any:
        old = env[slot]
        if old is UNSET:
            env[slot] = value
            found = k(env)
            if found is None:
                env[slot] = UNSET
            return found
        return k(env) if same_value(old, value) else None

    return bind


def _priority(pattern: Any) -> int:
    """Cheap, decisive checks first: constants and graph Vars, then terms, then variables
    (the order of a conjunction does not change its answers)."""
    if isinstance(pattern, LogicVar):
        return 2
    if isinstance(pattern, ExpressionTuple):
        return 1
    return 0


def _sequence(patterns: list[Any], slots: Slots) -> Callable[[tuple[Any, ...], Env, Cont], Any]:
    """Match values position by position against ``patterns`` (``SKIP`` accepts anything)."""
    order = sorted(
        (i for i, p in enumerate(patterns) if p is not SKIP), key=lambda i: _priority(patterns[i])
    )
    steps = [(i, compile_matcher(patterns[i], slots)) for i in order]
    if len(steps) == 1:
        ((i0, m0),) = steps
        return lambda values, env, k: m0(values[i0], env, k)
    if len(steps) == 2:
        (i0, m0), (i1, m1) = steps
        return lambda values, env, k: m0(values[i0], env, lambda e: m1(values[i1], e, k))

    def run(values: tuple[Any, ...], env: Env, k: Cont, start: int = 0) -> Any:
        if start == len(steps):
            return k(env)
        i, m = steps[start]
        return m(values[i], env, lambda e: run(values, e, k, start + 1))

    return run


def _node_matcher(
    pattern: Any, slots: Slots, swap: bool = True, guard: Guard | None = None
) -> NodeMatcher:
    if not isinstance(pattern, ExpressionTuple):
        raise RuleError(f"output selection needs a term, got {pattern_str(pattern)}")
    head, args, kwargs = split_term(pattern)
    if isinstance(head, Op):
        if kwargs:
            raise RuleError(f"{pattern_str(pattern)}: an Op takes no keyword arguments")
        return _op_matcher(canonical_op(head), args, slots, swap)
    if isinstance(head, LogicVar):
        if kwargs:
            raise RuleError(f"{pattern_str(pattern)}: a variable head takes no keywords")
        return _any_op_matcher(head, args, slots)
    if callable(head):
        return _call_matcher(head, args, kwargs, slots, guard)
    raise RuleError(f"{pattern_str(pattern)}: the head {head!r} is not an Op or a function")


def _op_matcher(op: Op, args: list[Any], slots: Slots, swap: bool = True) -> NodeMatcher:
    arity = len(args)
    commutative = bool(getattr(op, "commutative", False)) and arity == 2
    if _distinct_variables(args):  # op(x, y, ...), the commonest left side
        if not swap:
            commutative = False  # the swapped order binds the same values, k answers alike
        run = _bind_all([slots.setdefault(a, len(slots)) for a in args])
    else:
        run = _sequence(args, slots)

    def match(node: Apply, env: Env, k: Cont) -> Any:
        if node.op is not op:
            return None
        inputs = node.inputs
        if len(inputs) != arity:
            return None
        found = run(inputs, env, k)
        if found is None and commutative and inputs[0] is not inputs[1]:
            found = run((inputs[1], inputs[0]), env, k)
        return found

    return match


def _bind_all(slots: list[int]) -> Callable[[tuple[Any, ...], Env, Cont], Any]:
    """What ``_sequence`` does for distinct pattern variables: the values bound slot by
    slot in one loop instead of a chain of continuations."""
    positions = list(enumerate(slots))

    def bind_all(inputs: tuple[Var, ...], env: Env, k: Cont) -> Any:
        newly = []
        for position, slot in positions:
            old, value = env[slot], inputs[position]
            if old is UNSET:
                env[slot] = value
                newly.append(slot)
            elif not same_value(old, value):  # bound by an enclosing term to another value
                for done in newly:
                    env[done] = UNSET
                return None
        found = k(env)
        if found is None:
            for done in newly:
                env[done] = UNSET
        return found

    return bind_all


def _distinct_variables(args: list[Any]) -> bool:
    return all(isinstance(a, LogicVar) for a in args) and len(set(args)) == len(args)


def _any_op_matcher(head: LogicVar, args: list[Any], slots: Slots) -> NodeMatcher:
    arity = len(args)
    bind_op = _bind(slots.setdefault(head, len(slots)))
    run = _sequence(args, slots)

    def match(node: Apply, env: Env, k: Cont) -> Any:
        inputs = node.inputs
        if len(inputs) != arity:
            return None
        return bind_op(node.op, env, lambda e: run(inputs, e, k))

    return match


def _call_matcher(
    fn: Any, args: list[Any], kwargs: dict[str, Any], slots: Slots, guard: Guard | None = None
) -> NodeMatcher:
    parts = analyse_call(fn, args, kwargs)
    classes = parts.ops
    count = len(parts.inputs)
    run = _sequence(list(parts.inputs), slots) if count else (lambda values, env, k: k(env))
    props = [(prop, slots.setdefault(lv, len(slots))) for prop, lv in parts.props.items()]
    prop_binders = [(prop, _bind(slot)) for prop, slot in props]

    def match(node: Apply, env: Env, k: Cont) -> Any:
        if type(node.op) not in classes:
            return None
        inputs = node.inputs
        if len(inputs) < count or (parts.star and len(inputs) != count):
            return None

        rebuilds: dict[Any, bool] = {}  # by parameters: a swapped input order binds the same

        def confirm(e: Env) -> Any:
            if guard is not None and not _may_pass(guard, e, node):
                return None
            values = {prop: e[slot] for prop, slot in props}
            key = tuple([(type(v), v) for v in values.values()])
            try:
                same = rebuilds.get(key)
            except TypeError:  # an unhashable parameter: rebuilt every time
                key = same = None
            if same is None:
                try:
                    same = same_node(parts.rebuild(inputs, values), node.outputs[0])
                except (RewritekitError, TypeError, ValueError):
                    same = False
                if key is not None:
                    rebuilds[key] = same
            return k(e) if same else None

        def bind_props(e: Env, start: int = 0) -> Any:
            if start == len(prop_binders):
                return confirm(e)
            prop, binder = prop_binders[start]
            return binder(getattr(node.op, prop), e, lambda e2: bind_props(e2, start + 1))

        return run(inputs, env, bind_props)

    return match


def _may_pass(guard: Guard, env: Env, node: Apply) -> bool:
    """False where ``guard`` declines the bindings of a match not yet confirmed; True where
    it accepts them or raises (it is asked again once the match is confirmed)."""
    try:
        return bool(guard(env, node.outputs[0]))
    except Exception:
        return True


def child_test(pattern: Any) -> Callable[[tuple[Any, ...]], bool] | None:
    """A quick test on the Ops of a node's inputs (``None`` for a graph input,
    ``CONSTANT`` for a constant) that a match of ``pattern`` needs; None when the
    pattern's arguments ask nothing of them.

    This is the second level of the rule index: a node is tried against a rule only if
    its inputs' Ops could match the rule's arguments (in either order when commutative).
    """
    if not isinstance(pattern, ExpressionTuple):
        return None
    head, args, kwargs = split_term(pattern)
    if isinstance(head, Nth):
        return None
    if isinstance(head, Op) and not kwargs:
        wanted = [_child_want(a) for a in args]
        commutative = bool(getattr(head, "commutative", False)) and len(args) == 2
    elif callable(head) and hasattr(head, "pattern_signature"):
        parts = analyse_call(head, args, kwargs)
        wanted = [None if p is SKIP else _child_want(p) for p in parts.inputs]
        commutative = False
    else:
        return None
    if all(w is None for w in wanted):
        return None
    checks = [(i, w) for i, w in enumerate(wanted) if w is not None]

    def fits(ops: tuple[Any, ...], swapped: bool = False) -> bool:
        for i, want in checks:
            position = 1 - i if swapped else i
            if position >= len(ops) or not want(ops[position]):
                return False
        return True

    if commutative:
        return lambda ops: fits(ops) or fits(ops, swapped=True)
    return fits


def _child_want(pattern: Any) -> Callable[[Any], bool] | None:
    if isinstance(pattern, ExpressionTuple):
        head, _, kwargs = split_term(pattern)
        if isinstance(head, Op) and not kwargs:
            op = canonical_op(head)
            return lambda child: child is op
        if callable(head) and hasattr(head, "pattern_signature"):
            classes = head.pattern_signature.ops
            return lambda child: type(child) in classes
        return None
    if is_number(pattern) or isinstance(pattern, np.ndarray):
        return lambda child: child is CONSTANT
    return None


def head_key(pattern: Any) -> tuple[str, Any]:
    """How a left side is indexed: ``("op", canonical Op)``, ``("class", Op class)`` for
    each class a tensor function builds, or ``("any", None)``."""
    if isinstance(pattern, ExpressionTuple):
        head, args, kwargs = split_term(pattern)
        if isinstance(head, Nth) and args:
            return head_key(args[0])
        if isinstance(head, Op):
            return ("op", canonical_op(head))
        if callable(head) and hasattr(head, "pattern_signature"):
            return ("class", analyse_call(head, args, kwargs).ops)
    return ("any", None)


def pattern_vars(pattern: Any) -> list[LogicVar]:
    """The pattern variables of ``pattern``, in order of first appearance."""
    found: dict[LogicVar, None] = {}
    stack = [pattern]
    while stack:
        item = stack.pop()
        if isinstance(item, LogicVar):
            found.setdefault(item)
        elif isinstance(item, ExpressionTuple | list | tuple):
            stack.extend(reversed(list(item)))
        elif isinstance(item, KwdPair):
            stack.append(item.value)
    return list(found)


def compile_builder(pattern: Any, slots: Slots) -> Callable[[Env], Any]:
    """A function from the environment to the value of ``pattern`` (a rule's right side).

    Raises:
        RuleError: the pattern uses a variable that has no slot (the left side binds none).
    """
    if isinstance(pattern, LogicVar):
        if pattern not in slots:
            raise RuleError(f"{pattern} is not bound by the left side")
        slot = slots[pattern]
        return lambda env: env[slot]
    if isinstance(pattern, ExpressionTuple):
        head, args, kwargs = split_term(pattern)
        build_head = compile_builder(head, slots)
        build_args = [compile_builder(a, slots) for a in args]
        build_kwargs = [(key, compile_builder(v, slots)) for key, v in kwargs.items()]

        def call(env: Env) -> Any:
            fn = build_head(env)
            return fn(*[b(env) for b in build_args], **{key: b(env) for key, b in build_kwargs})

        return call
    if isinstance(pattern, list | tuple):
        builders = [compile_builder(p, slots) for p in pattern]
        kind = type(pattern)
        return lambda env: kind([b(env) for b in builders])
    return lambda env: pattern
