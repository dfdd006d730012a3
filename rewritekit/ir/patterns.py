"""The hook through which the tensor API builds rule patterns.

``rewritekit.rules`` lets users write patterns with the tensor API: with ``a = lvar("a")``,
``rt.log(1 + a)`` is a pattern (an etuple), not a graph node. The IR knows nothing of
patterns; it only keeps the slot the rules package fills (``enable_patterns``):

- ``as_var`` raises ``PatternArgument`` when it meets a pattern, and ``Op.__call__`` answers
  with the pattern of the call instead of a node;
- tensor functions that are not Ops (``rt.sum``, ``rt.reshape``) are wrapped by
  ``pattern_function``, which declares the Op classes they build and the parameters that
  become the node's inputs, so a pattern using them can be matched against nodes.

Until ``rewritekit.rules`` is imported nothing is a pattern, and the checks cost one
``isinstance`` against an empty tuple.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rewritekit.errors import GraphTypeError

__all__ = [
    "PatternArgument",
    "PatternSignature",
    "build_pattern",
    "enable_patterns",
    "is_pattern",
    "pattern_function",
]

_TYPES: tuple[type, ...] = ()
_BUILD: Callable[[Any, tuple[Any, ...], dict[str, Any]], Any] | None = None


class PatternArgument(GraphTypeError):
    """A rule pattern was passed where a graph node is needed.

    Raised by ``as_var``; ``Op.__call__`` and ``pattern_function`` catch it and build the
    pattern of the call. Anywhere else it tells the user that patterns only go into rules.
    """


@dataclass(frozen=True)
class PatternSignature:
    """How a tensor function's call maps onto the node it builds.

    Attributes:
        ops: the Op classes of the node the function returns (empty: the function may only
            appear on the right side of a rule).
        inputs: the parameters whose values are the node's inputs, in order; a name ending
            in ``*`` is a sequence of inputs (``concatenate(xs)``). Other parameters given
            a pattern variable match the Op parameter of the same name.
        outputs: how many outputs the node has (``slogdet``: 2).
    """

    ops: tuple[type, ...]
    inputs: tuple[str, ...] = ("x",)
    outputs: int = 1


def enable_patterns(
    types: tuple[type, ...], build: Callable[[Any, tuple[Any, ...], dict[str, Any]], Any]
) -> None:
    """Declare the pattern types and the function building the pattern of a call.

    ``build(head, args, kwargs)`` gets the Op or wrapped function and the call's arguments.
    """
    global _TYPES, _BUILD
    _TYPES = types
    _BUILD = build
    _IS_PATTERN_TYPE.clear()


# type -> whether it is a pattern type: issubclass against the logic variables' ABC
# metaclass costs about 2 µs, and every call of a tensor function asks it per argument.
_IS_PATTERN_TYPE: dict[type, bool] = {}


def _pattern_type(kind: type) -> bool:
    found = _IS_PATTERN_TYPE.get(kind)
    if found is None:
        found = _IS_PATTERN_TYPE[kind] = issubclass(kind, _TYPES)
    return found


def is_pattern(value: object) -> bool:
    """True when ``value`` is a rule pattern (a pattern variable or a pattern term)."""
    # on the type: logic variables' metaclass has a slow Python __instancecheck__
    return _pattern_type(type(value))


def _holds_pattern(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    known = _IS_PATTERN_TYPE  # looked up here: this runs on every tensor function call
    for value in (*args, *kwargs.values()) if kwargs else args:
        kind = type(value)
        found = known.get(kind)
        if found if found is not None else _pattern_type(kind):
            return True
        if kind is list or kind is tuple:
            for item in value:
                if _pattern_type(type(item)):
                    return True
    return False


def build_pattern(head: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The pattern of the call ``head(*args, **kwargs)`` (some arguments are patterns)."""
    if _BUILD is None:  # pragma: no cover - only patterns reach here, and they enable this
        raise GraphTypeError(f"{head}: patterns need rewritekit.rules")
    return _BUILD(head, args, kwargs)


def pattern_function(
    *ops: type, inputs: tuple[str, ...] = ("x",), outputs: int = 1
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Let a tensor function build patterns: called with a pattern, it returns the pattern
    of the call; otherwise it runs as written.

    Args:
        ops: the Op classes of the node the function builds.
        inputs: the parameters that become the node's inputs (see ``PatternSignature``).
        outputs: the number of outputs of that node.

    Example:
        >>> @pattern_function(Sum)
        ... def sum(x, axis=None, keepdims=False): ...
    """
    signature = PatternSignature(tuple(ops), tuple(inputs), outputs)

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if _TYPES and _holds_pattern(args, kwargs):
                return build_pattern(wrapper, args, kwargs)
            return fn(*args, **kwargs)

        wrapper.pattern_signature = signature  # type: ignore[attr-defined]
        return wrapper

    return decorate
