"""The names a graph file may give its Ops, and the format's constants.

The concrete Ops of ``rewritekit.tensor`` are registered when this module is imported, as
``"tensor.<module>.<Class>"``; a user's Op classes are added with ``register_op``. Loading
looks names up here and nowhere else: a name that is not in the table is an error, never
an import.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import rewritekit.tensor
from rewritekit.errors import GraphFileError, GraphTypeError
from rewritekit.ir import Op, Var

__all__ = [
    "CLASSES",
    "FORMAT",
    "MAX_GRAPH_DEPTH",
    "MAX_NESTING",
    "NAMES",
    "VERSION",
    "LoadedGraph",
    "register_op",
]

FORMAT = "rewritekit.graph"
VERSION = 1
#: tuples inside a parameter nest at most this deep (an index is 2)
MAX_NESTING = 32
#: inner graphs (loop bodies, branches) nest at most this deep
MAX_GRAPH_DEPTH = 64


class LoadedGraph(NamedTuple):
    """What ``load`` gives back: the input Vars by position and the outputs, in the structure
    that was saved (a Var, a list or a tuple of Vars)."""

    inputs: list[Var]
    outputs: Any


# --- the registry of Op classes ---------------------------------------------------------

CLASSES: dict[str, type[Op]] = {}
NAMES: dict[type[Op], str] = {}


def register_op(cls: type[Op], name: str | None = None) -> type[Op]:
    """Let graph files hold ``cls`` under ``name`` (default: its module and class name).

    The concrete Ops of ``rewritekit.tensor`` are registered as ``"tensor.<module>.<Class>"``.
    A file can only name registered classes, so register a user Op before saving or loading
    a graph that uses it; its parameters must be of the kinds a file holds (see the module
    docstring). Usable as a class decorator.

    Raises:
        GraphTypeError: ``cls`` is not a concrete Op class.
        GraphFileError: ``name`` is taken by another class, or ``cls`` has another name.

    Example:
        >>> @register_op
        ... class Scale(rk.Op):
        ...     __props__ = ("factor",)
        ...     def infer_types(self, x):
        ...         return (x,)
    """
    if not (isinstance(cls, type) and issubclass(cls, Op)) or cls.abstract:
        raise GraphTypeError(f"register_op: expected a concrete Op class, got {cls!r}")
    name = f"{cls.__module__}.{cls.__qualname__}" if name is None else name
    if not isinstance(name, str) or not name:
        raise GraphTypeError(f"register_op: the name must be a non-empty str, got {name!r}")
    if CLASSES.get(name, cls) is not cls:
        raise GraphFileError(
            f"register_op: {name!r} already names {CLASSES[name].__qualname__}; pick another"
        )
    if NAMES.get(cls, name) != name:
        raise GraphFileError(f"register_op: {cls.__qualname__} is registered as {NAMES[cls]!r}")
    CLASSES[name] = cls
    NAMES[cls] = name
    return cls


def _register_tensor_ops() -> None:
    stack: list[type[Op]] = [Op]
    seen: set[type[Op]] = set()
    while stack:
        cls = stack.pop()
        stack.extend(c for c in cls.__subclasses__() if c not in seen)
        seen.add(cls)
        module = cls.__module__
        if module.startswith(f"{rewritekit.tensor.__name__}.") and not cls.abstract:
            register_op(cls, f"{module.removeprefix('rewritekit.')}.{cls.__qualname__}")


_register_tensor_ops()
