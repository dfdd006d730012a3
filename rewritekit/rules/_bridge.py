"""The IR seen by etuples and unification: every registration in one place.

- ``rator``/``rands``: a node output ``v`` is the term ``e(v.owner.op, *v.owner.inputs)``
  (output ``i`` of a multi-output node: ``e(Nth(i), e(op, *inputs))``), read lazily, one
  level at a time; ``etuplize(v)`` gives the whole etuple. An etuple whose head is an Op
  evaluates back into the interned node (Ops are callable, so etuples' ``apply`` calls them).
- ``_unify``: a pattern term unifies with a node when its head matches the node's Op (an
  Op equal to it, a tensor function that builds it, or a logic variable) and its arguments
  unify with the node's inputs. Commutative Ops try the swapped inputs when the written
  order does not unify (unification gives one answer; rules that need every order get it
  from the engine, which tries each ordering). A number unifies with a constant whose
  elements all equal it, an array with an equal constant.
"""

from __future__ import annotations

import numbers
from collections.abc import Generator, Mapping
from typing import Any

import numpy as np
from cons.core import ConsError
from etuples import rands, rator
from etuples.core import ExpressionTuple
from unification.core import _unify, assoc, reify
from unification.utils import transitive_get as walk
from unification.variable import isvar

from rewritekit.errors import RewritekitError
from rewritekit.ir import Apply, Constant, Op, Var
from rewritekit.rules.patterns import (
    SKIP,
    Nth,
    analyse_call,
    constant_equals,
    same_node,
    split_term,
)

__all__: list[str] = []


# --- rator / rands ---------------------------------------------------------------------------


@rator.register(Var)
def _rator_var(var: Var) -> Any:
    node = var.owner
    if node is None:
        raise ConsError(f"{var!r} is a leaf, not a term")
    return node.op if node.nout == 1 else Nth(var.index)  # type: ignore[arg-type]


@rands.register(Var)
def _rands_var(var: Var) -> Any:
    node = var.owner
    if node is None:
        raise ConsError(f"{var!r} is a leaf, not a term")
    return node.inputs if node.nout == 1 else (node,)


@rator.register(Apply)
def _rator_apply(node: Apply) -> Any:
    return node.op


@rands.register(Apply)
def _rands_apply(node: Apply) -> Any:
    return node.inputs


# --- unification ----------------------------------------------------------------------------


def _unify_term_var(u: ExpressionTuple, v: Var, s: Mapping[Any, Any]) -> Generator[Any, Any, None]:
    node = v.owner
    if node is None:
        yield False
        return
    head, args, _ = split_term(u)
    head = walk(head, s)
    if isinstance(head, Nth):
        if v.index != head.index:
            yield False
            return
        yield _unify(args[0], node, s)
        return
    if node.nout != 1:
        yield False
        return
    yield _unify(u, node, s)


def _unify_term_apply(u: ExpressionTuple, node: Apply, s: Mapping[Any, Any]) -> Any:
    head, args, kwargs = split_term(u)
    head = walk(head, s)
    if isvar(head):
        if kwargs:
            yield False
            return
        s = assoc(s, head, node.op)
    elif isinstance(head, Op):
        if kwargs or head != node.op:
            yield False
            return
    elif callable(head) and hasattr(head, "pattern_signature"):
        yield _unify_call(head, args, kwargs, node, s)
        return
    else:
        yield False
        return
    inputs = node.inputs
    if len(args) != len(inputs):
        yield False
        return
    found = yield _unify(tuple(args), tuple(inputs), s)
    if found is False and getattr(node.op, "commutative", False) and len(inputs) == 2:
        found = yield _unify(tuple(args), (inputs[1], inputs[0]), s)
    yield found


def _unify_call(
    fn: Any, args: list[Any], kwargs: dict[str, Any], node: Apply, s: Mapping[Any, Any]
) -> Any:
    """Unify ``e(fn, *args, **kwargs)`` with ``node``; the match is confirmed by calling
    ``fn`` again on the node's inputs and the bound parameters (it must give the node)."""
    parts = analyse_call(fn, args, kwargs)
    inputs = node.inputs
    count = len(parts.inputs)
    if (
        type(node.op) not in parts.ops
        or len(inputs) < count
        or (parts.star and len(inputs) != count)
    ):
        yield False
        return
    for pattern, value in zip(parts.inputs, inputs[:count], strict=True):
        if pattern is SKIP:
            continue
        s = yield _unify(pattern, value, s)
        if s is False:
            yield False
            return
    for prop, pattern in parts.props.items():
        s = yield _unify(pattern, getattr(node.op, prop), s)
        if s is False:
            yield False
            return
    try:
        rebuilt = parts.rebuild(inputs, {p: reify(v, s) for p, v in parts.props.items()})
    except (RewritekitError, TypeError, ValueError):
        yield False
        return
    yield s if same_node(rebuilt, node.outputs[0]) else False


def _unify_var_term(u: Var, v: ExpressionTuple, s: Mapping[Any, Any]) -> Any:
    yield _unify_term_var(v, u, s)


def _unify_apply_term(u: Apply, v: ExpressionTuple, s: Mapping[Any, Any]) -> Any:
    yield _unify_term_apply(v, u, s)


def _unify_constant_value(u: Constant, v: Any, s: Mapping[Any, Any]) -> Any:
    return s if constant_equals(u, v) else False


def _unify_value_constant(u: Any, v: Constant, s: Mapping[Any, Any]) -> Any:
    return s if constant_equals(v, u) else False


def _unify_arrays(u: np.ndarray, v: np.ndarray, s: Mapping[Any, Any]) -> Any:
    return s if u.shape == v.shape and np.array_equal(u, v) else False


_unify.add((ExpressionTuple, Var, Mapping), _unify_term_var)
_unify.add((Var, ExpressionTuple, Mapping), _unify_var_term)
_unify.add((ExpressionTuple, Apply, Mapping), _unify_term_apply)
_unify.add((Apply, ExpressionTuple, Mapping), _unify_apply_term)
for _value_type in (numbers.Number, np.generic, np.ndarray):
    _unify.add((Constant, _value_type, Mapping), _unify_constant_value)
    _unify.add((_value_type, Constant, Mapping), _unify_value_constant)
_unify.add((np.ndarray, np.ndarray, Mapping), _unify_arrays)
