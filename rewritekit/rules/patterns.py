"""Patterns: logic variables and etuples, written with the tensor API.

``lvar("a")`` is a logic variable that the tensor API accepts: with ``a = lvar("a")``,
``rt.log(1 + a)`` returns the pattern ``e(log, e(add, 1, ~a))`` (an ``ExpressionTuple``
whose head is the Op or the tensor function), not a graph node. Patterns are what rules
are made of; they unify with graph nodes (see ``_bridge``) and evaluate back into nodes.
"""

from __future__ import annotations

import inspect
import itertools
import numbers
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from etuples.core import ExpressionTuple, KwdPair
from unification import Var as LogicVar

import rewritekit.tensor as rt
from rewritekit.errors import RuleError
from rewritekit.ir import Constant, Op, Var
from rewritekit.ir.patterns import PatternSignature, enable_patterns
from rewritekit.tensor.variable import install_operators

__all__ = ["Nth", "Pattern", "PatternVar", "lvar", "pattern_str"]


class PatternVar(LogicVar):
    """A pattern variable: a logic variable with the tensor API's operators.

    Made by ``lvar``; the same name gives the same variable. Pattern variables have their
    own table, apart from ``unification.var`` (a plain ``var("a")`` is another variable).
    """

    __slots__ = ()
    _refs: weakref.WeakValueDictionary[Any, PatternVar] = weakref.WeakValueDictionary()
    _id = 1

    @property
    def name(self) -> str:
        """The variable's name (``_3`` for the third unnamed one)."""
        token = self.token
        return f"_{token[1]}" if isinstance(token, tuple) else str(token)

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"lvar({self.name!r})"


_FRESH = itertools.count(1)


def lvar(name: str | None = None) -> PatternVar:
    """A pattern variable named ``name`` (a fresh, unnamed one without a name).

    In a rule, a pattern variable matches any subterm, and each use of the same variable
    must match the same node. Pass it to tensor functions to build patterns.

    Example:
        >>> a = lvar("a")
        >>> print(rt.log(1 + a))
        log(1 + a)
    """
    if name is None:  # unnamed variables have tuple tokens, apart from every name
        return PatternVar(("fresh", next(_FRESH)))
    if not isinstance(name, str) or not name:
        raise RuleError(f"lvar: the name must be a non-empty str, got {name!r}")
    return PatternVar(name)


class Pattern(ExpressionTuple):
    """A pattern term ``(head, *args, *keyword pairs)`` with the tensor API's operators.

    ``p + q`` builds the pattern of ``rt.add``, except where etuples and kanren concatenate
    terms: with a plain tuple, or from a one-item term (``cons`` makes ``e(head) + rest``;
    no tensor function gives a one-item pattern). ``p * q`` always multiplies. ``p[i]`` is
    the tuple's item (write ``rt.getitem(p, index)`` to index a pattern).
    """

    __slots__ = ()

    def __add__(self, other: Any) -> Any:
        if isinstance(other, tuple) or (isinstance(other, ExpressionTuple) and len(self) == 1):
            return super().__add__(other)
        return rt.add(self, other)

    def __radd__(self, other: Any) -> Any:
        if isinstance(other, tuple):
            return super().__radd__(other)
        return rt.add(other, self)

    def __mul__(self, other: Any) -> Any:
        return rt.multiply(self, other)

    def __rmul__(self, other: Any) -> Any:
        return rt.multiply(other, self)

    def __invert__(self) -> Any:
        return rt.logical_not(self)

    def __str__(self) -> str:
        return pattern_str(self)

    __repr__ = __str__


_TUPLE_NAMES = frozenset(["__getitem__", "__iter__", "__len__", "__contains__"])
install_operators(PatternVar, skip=frozenset())
install_operators(Pattern, skip=_TUPLE_NAMES | {"__add__", "__radd__", "__mul__", "__rmul__"})


@dataclass(frozen=True)
class Nth:
    """The head of ``e(Nth(i), e(op, ...))``: output ``i`` of a multi-output node."""

    index: int

    def __call__(self, outputs: Any) -> Any:
        return outputs[self.index]

    def __str__(self) -> str:
        return f"output{self.index}"


def _build(head: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The pattern of the call ``head(*args, **kwargs)`` (the hook of ``ir.patterns``)."""
    signature: PatternSignature | None = getattr(head, "pattern_signature", None)
    term = Pattern((head, *args), **kwargs)
    if signature is None or signature.outputs == 1:
        return term
    return tuple(Pattern((Nth(i), term)) for i in range(signature.outputs))


enable_patterns((PatternVar, ExpressionTuple), _build)


# --- reading a pattern term ---------------------------------------------------------------


def split_term(term: ExpressionTuple) -> tuple[Any, list[Any], dict[str, Any]]:
    """``(head, positional args, keyword args)`` of a pattern term."""
    items = tuple(term)
    if not items:
        raise RuleError("an empty etuple is not a pattern")
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    for item in items[1:]:
        if isinstance(item, KwdPair):
            kwargs[item.arg] = item.value
        else:
            args.append(item)
    return items[0], args, kwargs


def is_number(value: object) -> bool:
    """A Python or NumPy number (matches constants whose elements all equal it)."""
    return isinstance(value, numbers.Number | np.generic) and not isinstance(value, np.ndarray)


def constant_equals(var: Var, value: Any) -> bool:
    """True when ``var`` is a constant equal to the number or array ``value``.

    A number matches a constant of any dtype and shape whose elements all equal it; an
    array matches a constant of the same shape with equal elements.
    """
    if not isinstance(var, Constant):
        return False
    data = var.data
    if isinstance(value, np.ndarray):
        return data.shape == value.shape and bool(np.array_equal(data, value))
    if data.size == 1:
        return bool(data.item() == value)
    if data.size == 0:
        return False
    with np.errstate(invalid="ignore"):
        return bool(np.all(data == value))


def contains_pattern(value: Any) -> bool:
    """True when ``value`` is or holds (one level into lists/tuples) a pattern."""
    if isinstance(value, LogicVar | ExpressionTuple):
        return True
    if isinstance(value, list | tuple):
        return any(isinstance(v, LogicVar | ExpressionTuple) for v in value)
    return False


@dataclass(frozen=True)
class CallParts:
    """What a pattern headed by a tensor function says about the node it matches.

    Attributes:
        fn: the tensor function (wrapped by ``pattern_function``).
        ops: the Op classes the node may have.
        inputs: per node input position, the pattern it must match (``SKIP``: anything).
        rest: patterns for the node's remaining inputs (a ``name*`` parameter), or None.
        props: Op parameter name -> pattern variable bound to it.
        rebuild: ``rebuild(inputs, props)`` calls ``fn`` again with the node's inputs and
            the bound parameters; the match stands only if it returns the same node.
    """

    fn: Callable[..., Any]
    ops: tuple[type, ...]
    inputs: tuple[Any, ...]
    star: bool
    props: dict[str, LogicVar]
    rebuild: Callable[[tuple[Var, ...], dict[str, Any]], Any]


SKIP = object()


def analyse_call(fn: Callable[..., Any], args: list[Any], kwargs: dict[str, Any]) -> CallParts:
    """Read a pattern ``e(fn, *args, **kwargs)`` headed by a tensor function.

    Raises:
        RuleError: ``fn`` cannot be matched (it builds several nodes), the arguments do not
            fit its signature, or a pattern sits where it cannot be matched.
    """
    name = getattr(fn, "__name__", repr(fn))
    signature: PatternSignature | None = getattr(fn, "pattern_signature", None)
    if signature is None or not signature.ops:
        raise RuleError(
            f"rt.{name} cannot be matched on the left side of a rule: it does not build one "
            "node of a known Op; match the Ops it builds instead"
        )
    try:
        bound = inspect.signature(fn).bind(*args, **kwargs)
    except TypeError as exc:
        raise RuleError(f"rt.{name}: the pattern's arguments do not fit: {exc}") from None
    arguments = bound.arguments
    input_patterns: list[Any] = []
    star = False
    used: set[str] = set()
    for param in signature.inputs:
        if param == "":
            input_patterns.append(SKIP)
        elif param.endswith("*"):
            param = param[:-1]
            star = True
            input_patterns.extend(_input_pattern(v) for v in arguments.get(param, ()))
        else:
            input_patterns.append(_input_pattern(arguments.get(param, SKIP)))
        used.add(param)
    props: dict[str, LogicVar] = {}
    for param, value in arguments.items():
        if param in used or not contains_pattern(value):
            continue
        if not isinstance(value, LogicVar) or not all(
            param in op.__props__ for op in signature.ops
        ):
            raise RuleError(
                f"rt.{name}: parameter {param!r} holds {pattern_str(value)}, which cannot be "
                "matched; give it a concrete value or a pattern variable for an Op parameter "
                f"({', '.join(p for op in signature.ops for p in op.__props__) or 'none'})"
            )
        props[param] = value

    # Called for every candidate match: by keyword where every parameter takes one (a copy
    # of the bound arguments, no re-binding), else through the signature.
    by_keyword = all(
        p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
        for p in bound.signature.parameters.values()
    )
    base = dict(bound.arguments)

    def rebuild(inputs: tuple[Var, ...], prop_values: dict[str, Any]) -> Any:
        arguments = dict(base)
        for position, param in enumerate(signature.inputs):
            if param.endswith("*"):
                arguments[param[:-1]] = tuple(inputs[position:])
                break
            if param:
                arguments[param] = inputs[position]
        arguments.update(prop_values)
        if by_keyword:
            return fn(**arguments)
        new = bound.signature.bind_partial()
        new.arguments.update(arguments)
        return fn(*new.args, **new.kwargs)

    return CallParts(fn, signature.ops, tuple(input_patterns), star, props, rebuild)


def _input_pattern(value: Any) -> Any:
    # A concrete non-Var argument (a shape tuple, an axis) is checked by the rebuild.
    if isinstance(value, LogicVar | ExpressionTuple | Var) or is_number(value):
        return value
    if isinstance(value, np.ndarray):
        return value
    return SKIP


def same_node(rebuilt: Any, var: Var) -> bool:
    """True when a rebuilt call gives back ``var`` (or, for several outputs, its node)."""
    if isinstance(rebuilt, tuple):
        return bool(rebuilt) and isinstance(rebuilt[0], Var) and rebuilt[0].owner is var.owner
    return rebuilt is var


# --- display ---------------------------------------------------------------------------------

_INFIX = {"add": "+", "subtract": "-", "multiply": "*", "true_divide": "/", "power": "**"}


def pattern_str(term: Any, *, nested: bool = False) -> str:
    """A pattern as an expression: ``log(1 + a)``."""
    if isinstance(term, ExpressionTuple):
        head, args, kwargs = split_term(term)
        if isinstance(head, Nth) and len(args) == 1:
            return f"{pattern_str(args[0], nested=True)}[{head.index}]"
        name = head_name(head)
        if name in _INFIX and len(args) == 2 and not kwargs:
            text = f"{pattern_str(args[0], nested=True)} {_INFIX[name]} "
            text += pattern_str(args[1], nested=True)
            return f"({text})" if nested else text
        if name == "negative" and len(args) == 1 and not kwargs:
            return f"-{pattern_str(args[0], nested=True)}"
        shown = [pattern_str(a) for a in args]
        shown += [f"{k}={pattern_str(v)}" for k, v in kwargs.items()]
        return f"{name}({', '.join(shown)})"
    if isinstance(term, LogicVar):
        return str(term)
    if isinstance(term, Var):
        from rewritekit.rules.trace import term_str  # trace builds on this

        return term_str(term, depth=2)
    if isinstance(term, list | tuple):
        inner = ", ".join(pattern_str(v) for v in term)
        return (
            f"[{inner}]" if isinstance(term, list) else f"({inner}{',' if len(term) == 1 else ''})"
        )
    return repr(term)


def head_name(head: Any) -> str:
    """How a pattern's head is shown: the Op's user name, or the function's name."""
    if isinstance(head, Op):
        props = type(head).__props__
        if not props:
            return head.name
        return f"{head.name}{{{', '.join(f'{p}={getattr(head, p)!r}' for p in props)}}}"
    return getattr(head, "__name__", None) or str(head)
